-- `wlrun trace` against the program's own timing in the same run, on PyTorch loops of every shape
-- the methodology meets (tests/trace/torch_loops.py; issue 34): the step's synchronisation inside
-- its range, just after it (the template), none at all, loss.item() every 10 steps; bf16
-- autocast; a loader slow enough to trip the data-bottleneck rule; no ranges at all (wlrun's
-- Python hook); batches made in the loop, on the GPU or on the CPU (a synchronisation before the
-- copy, which is not the step's end); a thread of the program's holding the interpreter's lock
-- (the loop resumes after its synchronisations later than the driver's calls return). Targets:
-- iter within 2 % of the template's, data within 5 % or 0.1 ms; where the loop never
-- synchronises, samples/s within 2 % of the program's own steady-state throughput; no phase or
-- outside time below zero, no phase-overlap on one stream.
-- Prints a table at the end (docs/trace.md, "Measured on the H200"). Pending by name where PyTorch
-- with CUDA is missing. The "probe" cases run loops of other shapes (tests/trace/torch_probe.py: a
-- transformer LM on batches made on the GPU, gradient accumulation, a GradScaler with clipping and
-- a scheduler, a training log, a side-stream prefetcher, a Trainer-style loop on dicts of padded
-- sequences), which open no range of their own.
local h = require "helper"

local python, torch_it, mean_from = h.python, h.torch_it, h.mean_from

local STEPS, WARMUP, BATCH = 60, 10, 64
local PROGRAM = h.source_dir .. "/tests/trace/torch_loops.py"
local PROBE = h.source_dir .. "/tests/trace/torch_probe.py" -- no ranges of its own: wlrun's hook


local function codes(c)
  local t = {}
  for _, w in ipairs(c.warnings or {}) do t[#t + 1] = w.code end
  return table.concat(t, ",")
end

local rows = {}

-- traces program (default torch_loops.py) with args and --batch batch (default BATCH); returns
-- wlrun's configuration and the program's own numbers
local function traced(args, program, batch)
  program, batch = program or PROGRAM, batch or BATCH
  local dir = h.tmpdir()
  -- the program's own ranges carry no payload: the batch size is given
  local ranged = program == PROGRAM and not args:find("no%-ranges")
  local r = h.run(
    ("trace --warmup %d --quiet %s -o %s -- %s %s --steps %d --warmup %d --batch %d "
    .. "--out %s %s"):format(
    WARMUP, ranged and ("--batch-size %d"):format(batch) or "",
      h.quote(dir .. "/trace.json"),
    h.quote(python), h.quote(program), STEPS, WARMUP, batch,
    h.quote(dir .. "/prog.json"), args),
    -- torch.compile's first compile takes minutes
    { prefix = args:find("compile", 1, true) and "timeout 300" or "timeout 90" })
  assert.equal(0, r.code, r.stdout .. r.stderr)
  local doc = require("wlrun.results").decode(h.read(dir .. "/trace.json"), "trace.json")
  assert.equal(1, #doc.configurations, r.stdout)
  local c = doc.configurations[1]
  assert.equal("ok", c.status, c.error)
  assert.equal("gpu", c.trace.timing, c.trace.cupti.reason)
  for _, w in ipairs(c.warnings or {}) do -- the library's errors, in the log: the table has codes
    if w.code == "trace-errors" then print(("\n    %s: %s"):format(args, w.message)) end
  end
  return c, require("wlrun.json").decode(h.read(dir .. "/prog.json"))
end

-- the program's own numbers, run untraced
local function untraced(args, program, batch)
  local dir = h.tmpdir()
  local ok = os.execute(
    ("timeout 90 %s %s --steps %d --warmup %d --batch %d --out %s %s >/dev/null 2>&1"):format(
    h.quote(python), h.quote(program or PROGRAM), STEPS, WARMUP, batch or BATCH,
      h.quote(dir .. "/prog.json"), args))
  assert.is_true(ok == true or ok == 0, "the untraced run failed")
  return require("wlrun.json").decode(h.read(dir .. "/prog.json"))
end

-- the checks every shape shares: nothing negative, no phase-overlap on one stream
local function honest(c)
  for _, ph in ipairs(c.loop.phases) do assert.is_true(ph.mean >= 0, ph.name) end
  assert.is_true(c.loop.outside.mean >= 0, "outside " .. c.loop.outside.mean)
  assert.is_nil(codes(c):find("phase-overlap", 1, true), codes(c))
end

-- program and batch: as traced's (default torch_loops.py, BATCH)
local function case(name, args, want, program, batch)
  torch_it(name, function()
    local c, prog = traced(args, program, batch)
    honest(c)
    local row = { name = name, iter = c.stats.mean, data = c.loop.data_stats.mean,
      sps = c.loop.throughput,
      p_sps = prog.samples_per_s, codes = codes(c), ranges = c.trace.ranges,
        lag = c.trace.run_ahead.lag_mean,
      ahead = c.trace.run_ahead.steps_max }
    rows[#rows + 1] = row
    io.stdout:flush()
    if #prog.iter > 0 then -- the template's own iter and data, over the same measured steps
      row.p_iter, row.p_data = mean_from(prog.iter, WARMUP + 1), mean_from(prog.data, WARMUP + 1)
      -- and the template of the same program run untraced (what tracing adds to the program's own
      -- synchronisations is in the traced template, not in the program as it runs untraced)
      local plain = untraced(args, program, batch)
      row.u_iter = mean_from(plain.iter, WARMUP + 1)
      print(
        ("\n    %s: iter %.3f ms (template %.3f, %+.2f%%; untraced %.3f, %+.2f%%), data %.3f ms "
        .. "(template %.3f), %.1f samples/s (program %.1f)"):format(
        name, row.iter * 1e3, row.p_iter * 1e3, 100 * (row.iter / row.p_iter - 1), row.u_iter * 1e3,
        100 * (row.iter / row.u_iter - 1), row.data * 1e3, row.p_data * 1e3, row.sps, row.p_sps))
      assert.is_true(math.abs(row.iter / row.p_iter - 1) <= 0.02
        or math.abs(row.iter / row.u_iter - 1) <= 0.02, "iter")
      assert.is_true(math.abs(row.data - row.p_data) <= math.max(0.05 * row.p_data, 1e-4), "data")
    else
      print(
        ("\n    %s: %.1f samples/s against the program's %.1f (%+.2f%%); iter %.3f ms, data "
        .. "%.3f ms; runs ahead %.2f ms, up to %d steps"):format(
        name, row.sps, row.p_sps, 100 * (row.sps / row.p_sps - 1), row.iter * 1e3, row.data * 1e3,
          row.lag * 1e3, row.ahead))
      assert.is_true(math.abs(row.sps / row.p_sps - 1) <= 0.02, "samples/s")
    end
    if want then want(c, prog) end
  end)
end

local function no_bottleneck(c) assert.is_nil(codes(c):find("data-bottleneck", 1, true),
  codes(c)) end

-- the loop's torch.cuda.synchronize() just after the step ends it (trace.waited_steps; a step or
-- so less where the machine held the loop up past the wait's bound)
local function waited(c)
  local n = c.trace.waited_steps or 0
  assert.is_true(n >= 0.9 * (STEPS - WARMUP), ("%d of %d steps ended by the loop's wait"):format(n,
    STEPS - WARMUP))
end

-- the loop's torch.cuda.synchronize() before the step (after the batch is in hand) begins it
-- (trace.began_steps: the template's t0 follows it), a step or so less as for waited
local function began(c)
  local n = c.trace.began_steps or 0
  assert.is_true(n >= 0.9 * (STEPS - WARMUP), ("%d of %d steps begun at the loop's wait"):format(n,
    STEPS - WARMUP))
end

-- each measured step's iter within 0.1 ms of the template's (the same step of the program's),
-- but for a tenth of them
local function step_by_step(c, prog)
  local off, worst = 0, 0
  for i, x in ipairs(c.samples) do
    local d = math.abs(x - prog.iter[WARMUP + i])
    if d > 1e-4 then off = off + 1 end
    worst = math.max(worst, d)
  end
  assert.is_true(off <= 0.1 * #c.samples, ("%d of %d steps more than 0.1 ms from the template's "
    .. "(the farthest %.3f ms)"):format(off, #c.samples, worst * 1e3))
end

-- the probe's loops (torch_probe.py), no range of the program's own: every optimizer step a
-- step of the hook's, and the template's iter and data, or the steady-state throughput, matched
local function probes()
  local function probe(shape, want, batch)
    case("probe " .. shape .. ", no ranges", "--shape " .. shape, function(c, prog)
      assert.equal("auto", c.trace.ranges)
      assert.equal(STEPS, c.trace.steps)
      if want then want(c, prog) end
    end, PROBE, batch)
  end
  -- a transformer LM (batch_first) on token batches made on the GPU (batch 32) under bf16
  -- autocast, zero_grad first, clip_grad_norm_ and a cosine scheduler's step after AdamW's: the
  -- loop's synchronisation after the scheduler ends the step; the batch is the model's input.
  -- lm-made-ema: the step's tail after the scheduler's step, torch's EMA of the weights and
  -- zero_grad(set_to_none) (the hook keeps the step open through them, as learnt, so the EMA's
  -- GPU work is the step's and the making of the next batch the data)
  for _, shape in ipairs { "lm-made", "lm-made-ema" } do
    probe(shape, function(c)
      assert.equal("input", c.trace.batch_source)
      assert.equal(32, c.loop.batch_size)
      waited(c)
      began(c)
    end, 32)
  end
  -- gradient accumulation, 4 micro-batches from a DataLoader per optimizer step: the data holds
  -- the fetch before the step only (the other three are the step's, as in the template), the
  -- samples all four (samples/s is not compared: the template's shape)
  probe("accum", function(c)
    assert.equal("loader", c.trace.batch_source)
    assert.equal(4 * BATCH, c.loop.batch_size)
    began(c)
  end)
  -- float16 under a GradScaler of the default growth: scale, unscale_, clip_grad_norm_, the
  -- scaler's step and update, a StepLR's step; a step the scaler skips still ends its iteration
  probe("scaler-loader", function(c)
    assert.equal(BATCH, c.loop.batch_size)
    began(c)
  end)
  -- no synchronisation but loss.item() and a line on stderr every 20 steps: samples/s against
  -- the program's steady-state throughput
  probe("log-every", function(c)
    no_bottleneck(c)
    assert.equal(BATCH, c.loop.batch_size)
  end)
  -- the classic prefetcher: each batch copied to the GPU on a side stream a step ahead (the
  -- step's stream waits on it; record_stream), the next fetch made as the batch is handed over;
  -- the last step fetches none and counts the others' mean batch
  probe("stream-prefetch", function(c)
    assert.equal(BATCH, c.loop.batch_size)
    waited(c) -- (before the prefetcher's next(): its wait_stream and record_stream are data)
  end)
  -- a Trainer-style loop: dicts of padded token sequences of random length from a DataLoader,
  -- the model called by keyword (model(**batch)["loss"]) under bf16 autocast, clip, AdamW, a
  -- scheduler and zero_grad after the step: the samples are the loader's batch (32)
  probe("hf-dict", function(c)
    assert.equal("loader", c.trace.batch_source)
    assert.equal(32, c.loop.batch_size)
    began(c)
  end, 32)
end

describe("wlrun trace against the program's own timing, by loop shape", function()
  case("after", "--shape after", function(c)
    no_bottleneck(c)
    waited(c)
    began(c)
  end)
  case("inside", "--shape inside", function(c)
    no_bottleneck(c)
    began(c)
  end)
  case("none", "--shape none", no_bottleneck)
  case("item10", "--shape item10", no_bottleneck)
  case("none bf16", "--shape none --amp bf16", no_bottleneck)
  case("after, slow loader", "--shape after --delay-ms 0.5", function(c)
    assert.matches("data%-bottleneck", codes(c))
  end)
  case("none, no ranges", "--shape none --no-ranges", function(c)
    assert.equal("auto", c.trace.ranges)
    assert.equal(BATCH, c.loop.batch_size)
    local names = {}
    for _, ph in ipairs(c.trace.phases) do names[ph.name] = true end
    assert.is_true(names.forward and names.backward and names.optimizer)
  end)
  case("after, no ranges", "--shape after --no-ranges", function(c)
    assert.equal("auto", c.trace.ranges)
    waited(c) -- (the hook's step ended by the library at the loop's wait after it)
    began(c)
  end)
  -- a thread of the program's own that holds the interpreter's lock a millisecond at a time: the
  -- loop resumes after its synchronisations up to that much after the driver's calls returned,
  -- where the template takes t0 and t1 (and where wlrun's hook tells the library, wrapping
  -- torch.cuda.synchronize); with the program's ranges and with the hook's, step by step
  case("after, busy thread", "--shape after --busy-thread", function(c, prog)
    began(c)
    step_by_step(c, prog)
  end)
  case("after, busy thread, no ranges", "--shape after --busy-thread --no-ranges", function(c, prog)
    assert.equal("auto", c.trace.ranges)
    waited(c)
    began(c)
    step_by_step(c, prog)
  end)
  -- a functional forward (no module called): the hook sees each step begin at backward, and the
  -- report begins it at the batch in hand
  for _, shape in ipairs { "after", "none" } do
    case(shape .. ", functional, no ranges", "--shape " .. shape .. " --functional --no-ranges",
      function(c)
        assert.equal("auto", c.trace.ranges)
        local names = {}
        for _, ph in ipairs(c.trace.phases) do names[ph.name] = ph end
        assert.is_true(names.forward and names.forward.gpu_mean > 0, "the forward's GPU work")
      end)
  end
  -- evaluation on the batch in hand before the training work (a frozen backbone in eval mode or
  -- under no_grad) is the step's; a validation pass every 5 steps is neither data nor step
  case("after, frozen eval, no ranges", "--shape after --frozen eval --no-ranges")
  case("none, frozen no_grad, no ranges", "--shape none --frozen nograd --no-ranges")
  case("after, validation, no ranges", "--shape after --val-every 5 --no-ranges")
  case("none, validation, no ranges", "--shape none --val-every 5 --no-ranges")
  -- torch.compile, and its CUDA graphs (reduce-overhead): the hook's module hooks, taken away and
  -- put back around each phase, make dynamo compile nothing again after the warmup
  case("none, compiled, no ranges", "--shape none --compile default --no-ranges", function(c, prog)
    assert.equal("auto", c.trace.ranges)
    assert.equal(0, prog.recompiles, "dynamo compiled again after the warmup")
  end)
  case("none, CUDA graphs, no ranges", "--shape none --compile reduce-overhead --no-ranges",
    function(c, prog)
      assert.equal("auto", c.trace.ranges)
      assert.equal(0, prog.recompiles, "dynamo compiled again after the warmup")
    end)
  -- float16 with a GradScaler that skips optimizer steps all along: each skipped step still ends
  -- its iteration (the hook wraps the scaler's step)
  case("none fp16, no ranges", "--shape none --amp fp16 --no-ranges", function(c, prog)
    assert.equal("auto", c.trace.ranges)
    assert.is_true(prog.skipped > 0, "the scaler skipped no step")
    assert.equal(STEPS, c.trace.steps, ("%d steps skipped"):format(prog.skipped))
    assert.equal(BATCH, c.loop.batch_size)
  end)

  -- no DataLoader: each batch made on the GPU in the loop (a synthetic benchmark); the hook's
  -- batch size is the model's input
  for _, shape in ipairs { "after", "none" } do
    case(shape .. ", GPU data, no ranges", "--shape " .. shape .. " --gpu-data --no-ranges",
      function(c)
        assert.equal("input", c.trace.batch_source)
        assert.equal(BATCH, c.loop.batch_size)
        if shape == "after" then
          waited(c)
          began(c)
        end
      end)
  end

  -- made on the GPU under autocast: float16 with its GradScaler, whose update() follows the
  -- optimizer's step in the template's step; bfloat16; and loss.item() every 10th step only
  case("after fp16, GPU data, no ranges", "--shape after --amp fp16 --gpu-data --no-ranges",
    function(c, prog)
      assert.is_true(prog.skipped > 0, "the scaler skipped no step")
      waited(c)
      began(c)
    end)
  case("after bf16, GPU data, no ranges", "--shape after --amp bf16 --gpu-data --no-ranges",
    function(c)
      waited(c)
      began(c)
    end)
  case("item10, GPU data, no ranges", "--shape item10 --gpu-data --no-ranges", no_bottleneck)

  -- each batch made on the CPU in the loop (10 ms, longer than the GPU's work of a step), the
  -- loop's only synchronisation after the making and before the copy, first thing in the step: no
  -- wait after the step, so the making is data (the hook's made batch; the program's data range),
  -- less the part of it the step's GPU work outlasted its range by (data follows the windows).
  -- The one wait: the program's synchronisation at its end, after the last step.
  for _, ranged in ipairs { true, false } do
    case("before, CPU data" .. (ranged and "" or ", no ranges"),
      "--shape before --cpu-data 10" .. (ranged and "" or " --no-ranges"), function(c, prog)
        local made = mean_from(prog.made, WARMUP + 1)
        local data, lag = c.loop.data_stats.mean, c.trace.run_ahead.lag_mean
        assert.is_true(data + lag >= 0.97 * made, ("data %.3f ms (the GPU's lag %.3f ms), the "
          .. "making %.3f ms"):format(data * 1e3, lag * 1e3, made * 1e3))
        assert.is_true((c.trace.waited_steps or 0) <= 1, tostring(c.trace.waited_steps))
      end)
  end

  probes()

  torch_it("the table", function()
    print(
      "\n\n    shape                 wlrun iter  data      samples/s  program    ratio    "
      .. "ranges  lag      ahead  warnings")
    for _, r in ipairs(rows) do
      print(("    %-20s %8.3f ms %7.3f ms %9.1f %9.1f %+7.2f%%  %-7s %6.2f ms %5d  %s"):format(
        r.name, r.iter * 1e3,
        r.data * 1e3, r.sps, r.p_sps, 100 * (r.sps / r.p_sps - 1), r.ranges, r.lag * 1e3, r.ahead,
          r.codes))
    end
  end)
end)
