-- wlrun trace's Python start-up hook (src/trace/python/sitecustomize.py; docs/trace.md, "No
-- annotation needed") on a PyTorch program with no NVTX range at all (tests/trace/torch_auto.py),
-- on the CPU: the steps are the optimizer's, the data ranges the DataLoader's, the batch size the
-- loader's; a closure (Lightning), two optimizers (a GAN), gradient accumulation, the program's
-- own step ranges, a sitecustomize of the program's own, --no-auto-ranges and wl.command.
-- Pending by name where no Python can import torch (Debian: python3-torch; WLRUN_PYTHON names
-- one) or where ctest does not name the trace library.
local h = require "helper"

local function torch_python()
  for _, py in ipairs { os.getenv("WLRUN_PYTHON") or "", "/usr/bin/python3", "python3" } do
    if py ~= "" then
      local p = io.popen(h.quote(py) .. " -c 'import torch; print(torch.__version__)' 2>/dev/null")
      local out = p and p:read("a") or ""
      if p then p:close() end
      if out:match("%d") then return py end
    end
  end
end

local python = torch_python()
local push_lib = os.getenv("WLRUN_TRACE_NVTX_PUSH")

-- a trace library built with AddressSanitizer cannot be loaded into Python, which is not
local sanitized = os.getenv("WLRUN_TEST_SANITIZED") == "1"

local function auto_it(name, fn)
  if python and h.trace_lib and not sanitized then return it(name, fn) end
  pending(name .. " -- skipped: " .. (sanitized
    and "the trace library is built with AddressSanitizer, which a Python process cannot load "
    .. "(the plain build runs this)"
    or python and "WLRUN_TRACE_LIB not set (ctest sets it)"
    or "no Python that imports torch (apt-get install python3-torch, or WLRUN_PYTHON)"))
end

local PROGRAM = h.source_dir .. "/tests/trace/torch_auto.py"

local function env(extra)
  return ("WLRUN_TRACE_LIB=%s WLRUN_TRACE_NVTX_PUSH=%s %s"):format(h.quote(h.trace_lib),
    h.quote(push_lib or ""),
    extra or "")
end

-- traces torch_auto.py with args; returns the run and its only configuration
local function trace(args, opts)
  local dir = h.tmpdir()
  local r = h.run(("trace --warmup 2 %s -o %s -- %s %s %s"):format(opts and opts.trace or "",
    h.quote(dir .. "/r.json"),
    h.quote(python), h.quote(opts and opts.program or PROGRAM), args),
    -- a program that hangs (a worker process stuck at a fork) fails its case, not the suite
    { env = env(opts and opts.env), prefix = "timeout -k 10 180" })
  local doc = r.code == 0 and require("wlrun.results.load").load(dir .. "/r.json") or nil
  return r, doc and doc.configurations[1], doc
end

-- traces torch_shapes.py (several epochs) with args: the run and its only configuration
local function shapes(args)
  return trace(args, { program = h.source_dir .. "/tests/trace/torch_shapes.py" })
end

local function most(list)
  local m = -math.huge
  for _, x in ipairs(list) do m = math.max(m, x) end
  return m
end

-- A bound on the time of each step on the CPU holds for all of list but one at most (from index
-- from): on a busy machine the scheduler, or the GIL handed between threads, may hold any one step
-- up by 10-15 ms (seen on an H100 machine's CPU, with every step recorded and with sampling alike),
-- while what these cases guard against moves every step. Returns whether it holds, and the steps
-- over it as what (a format of the index and the time in ms) says.
local function all_but_one(list, ok, what, from)
  local bad = {}
  for j = from or 1, #list do
    if not ok(list[j]) then bad[#bad + 1] = what:format(j, list[j] * 1e3) end
  end
  return #bad <= 1, table.concat(bad, "; ")
end

local function names(c)
  local list = {}
  for _, ph in ipairs(c.trace.phases) do list[#list + 1] = ph.name end
  return table.concat(list, " ")
end

-- the measured steps whose data holds a 60 ms start of the loader's sampler
local function slow_starts(c)
  local n = 0
  for _, d in ipairs(c.loop.data) do
    if d >= 0.060 then n = n + 1 end
  end
  return n
end

local function codes(c)
  local list = {}
  for _, w in ipairs(c.warnings or {}) do list[#list + 1] = w.code end
  return table.concat(list, " ")
end

describe("wlrun trace's Python hook", function()
  auto_it(
    "finds the steps of a loop with no range: one per optimizer step, the loader's batches as data",
    function()
    local r, c, doc = trace("--steps 12 --batch 16")
    assert.equal(0, r.code, r.stderr)
    assert.equal("auto", c.trace.ranges)
    assert.equal(12, c.trace.steps)
    assert.equal(10, #c.samples)
    assert.equal(16, c.loop.batch_size)
    assert.equal("loader", c.trace.batch_source)
    assert.equal("ranges", c.trace.data_source)
    assert.equal("forward backward optimizer", names(c))
    assert.matches("wlrun's automatic PyTorch ranges", r.stderr)
    assert.is_nil(codes(c):find("open-ranges", 1, true)) -- the hook's last data range is its own
    assert.is_true(doc.settings.trace.auto_ranges)
    for _, ph in ipairs(c.loop.phases) do assert.is_true(ph.mean > 0, ph.name) end
  end)

  auto_it("keeps a closure's forward and backward out of the optimizer (Lightning's step)",
    function()
    local r, c = trace("--steps 12 --closure")
    assert.equal(0, r.code, r.stderr)
    assert.equal(12, c.trace.steps)
    assert.equal("forward backward optimizer", names(c))
  end)

  auto_it("learns the order of two optimizers in one iteration (a GAN): a step ends at the last",
    function()
    local r, c = trace("--steps 12 --optimizers 2 --batch 16")
    assert.equal(0, r.code, r.stderr)
    -- the first iteration's two optimizer steps are two steps (the order is learned then)
    assert.equal(13, c.trace.steps)
    assert.equal(32, c.loop.batch_size) -- each step fetches two batches
  end)

  auto_it(
    "ends a step at the loop's next range: the work after the optimizer is the step's, what "
    .. "follows the loop is not", function()
    local r, c = trace("--steps 8 --after-ms 30 --tail-ms 400")
    assert.equal(0, r.code, r.stderr)
    assert.equal(8, c.trace.steps)
    for i, s in ipairs(c.samples) do -- the last step ends at its optimizer's end
      assert.is_true(i == #c.samples or s >= 0.030, ("step %d: %.4f s"):format(i, s))
    end
    assert.is_true(all_but_one(c.samples, function(s) return s < 0.3 end, "step %d: %.1f ms"))
    -- (the last step on its own: the 400 ms after the loop would be in it alone)
    assert.is_true(c.samples[#c.samples] < 0.3, "last step " .. c.samples[#c.samples])
  end)

  -- (a process with GPU work, or where CUPTI could not tell, ends it at the batch in hand
  -- instead: the time after it may be a sync, which the template's data leaves out;
  -- tests/gpu/trace_loops_spec.lua "after, no ranges")
  auto_it(
    "ends the data at the training work in a loop without GPU work: the batch's conversion is data",
    function()
    local r, c = trace("--steps 8 --gap-ms 40")
    assert.equal(0, r.code, r.stderr)
    assert.equal("auto", c.trace.ranges)
    local state = c.trace.cupti.state -- "none" (no CUDA) or "on" (no GPU work seen) here
    local blind = state ~= "none" and state ~= "on"
    for i, d in ipairs(c.loop.data) do -- the fetch and the 40 ms after it
      assert.is_true(d < 0.3 and (blind or d >= 0.040), ("data %d: %.4f s (CUPTI %s)"):format(i, d,
        state))
    end
    if blind then
      assert.is_true(all_but_one(c.loop.data, function(d) return d < 0.030 end,
        "data %d: %.1f ms (CUPTI " .. state .. ")"))
    end
  end)

  auto_it("begins a step at zero_grad() with the batch in hand (the loop's first line)",
    function()
    for _, whose in ipairs { "optimizer", "model" } do
      local r, c = trace("--steps 8 --gap-ms 40 --zero-first " .. whose)
      assert.equal(0, r.code, r.stderr)
      for i, s in ipairs(c.samples) do -- the wait after zero_grad is the step's
        assert.is_true(s >= 0.040, ("%s: step %d: %.4f s"):format(whose, i, s))
      end
      assert.is_true(all_but_one(c.loop.data, function(d) return d < 0.03 end,
        whose .. ": data %d: %.1f ms"))
      assert.equal(16, c.loop.batch_size)
    end
  end)

  auto_it("begins the step at the batch in hand where the forward calls no module (functional)",
    function()
    -- the forward (30 ms) is functional ops on the weights: the hook sees the step begin at
    -- backward, with the time the batch was in hand; torch.autograd.grad is a backward too
    for _, shape in ipairs { "", "--grad" } do
      local r, c = trace("--steps 8 --functional 30 " .. shape)
      assert.equal(0, r.code, r.stderr)
      assert.equal(8, c.trace.steps, shape)
      for i, s in ipairs(c.samples) do
        assert.is_true(s >= 0.030, ("%s: step %d: %.4f s"):format(shape, i, s))
      end
      assert.is_true(all_but_one(c.samples, function(s) return s < 0.3 end,
        shape .. ": step %d: %.1f ms"))
      assert.is_true(all_but_one(c.loop.data, function(d) return d < 0.025 end,
        shape .. ": data %d: %.1f ms"))
      assert.equal("forward backward optimizer", names(c), shape)
      for _, ph in ipairs(c.loop.phases) do
        if ph.name == "forward" then assert.is_true(ph.mean >= 0.030, shape) end
      end
      assert.equal(16, c.loop.batch_size)
    end
  end)

  auto_it("ends each step at backward where the program has no optimizer (it updates the weights)",
    function()
    local r, c = trace("--steps 12 --manual --after-ms 20")
    assert.equal(0, r.code, r.stderr)
    assert.equal("auto", c.trace.ranges)
    assert.equal(12, c.trace.steps)
    assert.equal(16, c.loop.batch_size)
    assert.equal("forward backward", names(c))
    for i, s in ipairs(c.samples) do -- the update and the 20 ms after it are the step's
      assert.is_true(i == #c.samples or s >= 0.020, ("step %d: %.4f s"):format(i, s))
    end
    assert.is_true(all_but_one(c.samples, function(s) return s < 0.3 end, "step %d: %.1f ms"))
    -- an optimizer made but never stepped: its steps would end there, so none is found
    r = trace("--steps 8 --manual made")
    assert.equal(2, r.code, r.stderr)
    assert.matches("wlrun's hook saw 8 backward passes and no optimizer step", r.stderr, 1, true)
  end)

  auto_it("ends an iteration at the next batch where its last optimizer skipped (a WGAN's)",
    function()
    -- the critic steps every iteration, the generator every 2nd, on one batch: the first two
    -- optimizer steps are steps of their own (the order learnt), then one step an iteration; the
    -- last (its generator skipped, no batch after it) stays open
    local r, c = trace("--steps 12 --optimizers 2 --every 2")
    assert.equal(0, r.code, r.stderr)
    assert.equal(12, c.trace.steps)
    assert.equal(16, c.loop.batch_size)
    assert.is_nil(table.concat(c.notes or {}, "\n"):find("differ", 1, true))
  end)

  auto_it("keeps a backward inside a backward in the phase (reentrant checkpointing)", function()
    -- two checkpointed blocks of 20 ms: 40 ms of forward, their recompute (40 ms) in backward
    local r, c = trace("--steps 8 --recompute 20")
    assert.equal(0, r.code, r.stderr)
    local by = {}
    for _, ph in ipairs(c.loop.phases) do by[ph.name] = ph end
    assert.is_true(by.forward.mean >= 0.040, tostring(by.forward.mean))
    assert.is_true(by.forward.median < 0.055, tostring(by.forward.median))
    assert.is_true(by.backward.mean >= 0.040, tostring(by.backward.mean))
  end)

  auto_it("ends an iteration at a GradScaler's step that skipped the optimizer's (overflow)",
    function()
    local r, c = trace("--steps 12 --scaler 3")
    assert.equal(0, r.code, r.stderr)
    assert.equal("auto", c.trace.ranges)
    assert.equal(12, c.trace.steps) -- every 3rd optimizer step skipped: still 12 iterations
    assert.equal(16, c.loop.batch_size) -- one batch each, none merged into the next
    assert.equal("forward backward optimizer", names(c))
    assert.is_nil(r.stderr:find("are off", 1, true), r.stderr) -- the hook stayed on
  end)

  auto_it("ends a step at its GradScaler's update where the loop makes its batches, the update "
    .. "the step's", function()
    -- the template's step holds `scaler.step(opt); scaler.update()`: 8 ms of update (a subclass's
    -- around its base's), 5 ms to make each batch; every 3rd optimizer step skipped
    local r, c = trace("--steps 12 --batch 16 --no-loader --make-ms 5 --scaler 3 --update-ms 8")
    assert.equal(0, r.code, r.stderr)
    assert.equal(12, c.trace.steps)
    for j, s in ipairs(c.samples) do
      assert.is_true(s >= 0.008, ("step %d: iter %.1f ms, without its update"):format(j, s * 1e3))
    end
    -- (below the making's 5 and the update's 8 together, with room for a loaded machine)
    for j, d in ipairs(c.loop.data) do
      assert.is_true(d >= 0.0045, ("step %d: data %.1f ms, the making's 5"):format(j, d * 1e3))
    end
    assert.is_true(all_but_one(c.loop.data, function(d) return d < 0.012 end,
      "step %d: data %.1f ms, the making's 5 and the update's 8"))
    assert.is_nil(r.stderr:find("are off", 1, true), r.stderr)
    -- where wlrun synchronises the steps (--sync-steps), a step ends at once as before: the update
    -- is the making's, no step merged with the next
    r, c = trace("--steps 12 --batch 16 --no-loader --make-ms 5 --scaler 3 --update-ms 8",
      { trace = "--sync-steps" })
    assert.equal(0, r.code, r.stderr)
    assert.equal(12, c.trace.steps)
    for j, d in ipairs(c.loop.data) do
      assert.is_true(d >= 0.012, ("step %d: data %.1f ms, the update's 8 and the making's 5")
        :format(j, d * 1e3))
    end
  end)

  auto_it("goes on after an optimizer step that raised (a loop skipping a batch on OOM)", function()
    -- steps 4, 8 and 12 raise: the first two's work goes on into the next step (it ends at the
    -- next optimizer step), the last's never ends; torch 2's step hooks run no post hook there,
    -- and the hook counts the steps running again
    local r, c = trace("--steps 12 --raise-every 4")
    assert.equal(0, r.code, r.stderr)
    assert.equal("auto", c.trace.ranges)
    assert.equal(9, c.trace.steps)
    -- the next batch's fetch lies inside the step that goes on
    assert.equal("forward backward optimizer data", names(c))
    assert.is_nil(r.stderr:find("are off", 1, true), r.stderr)
  end)

  auto_it("stops after --steps of the hook's steps, the program running on untraced", function()
    local r, c = trace("--steps 40 --hooks", { trace = "--steps 12" })
    assert.equal(0, r.code, r.stderr)
    assert.equal(12, c.trace.steps)
    assert.equal("auto", c.trace.ranges)
    assert.matches("the first 12 steps were traced", table.concat(c.notes, "\n"))
    -- the hook stopped too: no global module hook left (the model on torch's fast path), and
    -- torch's and Python's functions their own again (the program runs on as it does untraced)
    assert.matches("global forward pre%-hooks: 0\n", r.stdout)
    assert.matches("the hook's wrappers: none\n", r.stdout)
    r = trace("--steps 40 --hooks", { trace = "--steps 0" })
    assert.equal(0, r.code, r.stderr)
    assert.matches("global forward pre%-hooks: 1\n", r.stdout) -- waiting for a next forward
    assert.matches("the hook's wrappers: DataLoader%.__init__ DataLoader%.__next__ "
      .. "DataLoader%._next_index Queue%.get Module%.train Module%.zero_grad Optimizer%.zero_grad "
      .. "Optimizer%.__init__ ", r.stdout)
    -- (the loop's synchronisation: where its caller resumes, docs/trace.md "Iterations")
    assert.matches("the hook's wrappers: [^\n]* cuda%.synchronize", r.stdout)
  end)

  auto_it("finds the steps of a model whose parameters() gives a list", function()
    local r, c = trace("--steps 10 --list-params")
    assert.equal(0, r.code, r.stderr)
    assert.equal(10, c.trace.steps)
    assert.is_nil(r.stderr:find("ranges are off", 1, true), r.stderr)
  end)

  auto_it("counts every batch of a step with gradient accumulation", function()
    local r, c = trace("--steps 10 --accumulate 3 --batch 8")
    assert.equal(0, r.code, r.stderr)
    assert.equal(10, c.trace.steps)
    assert.equal(24, c.loop.batch_size)
    -- each batch from an iterator of its own (next(iter(loader))): a new iterator drops no batch
    -- its loader's last one gave
    local rf, cf = trace("--steps 10 --accumulate 2 --batch 8 --fresh-iter")
    assert.equal(0, rf.code, rf.stderr)
    assert.equal(16, cf.loop.batch_size)
  end)


  auto_it("ends a step at its optimizer's step where the loop makes its batches, the making data",
    function()
    -- the template's data: from the step's end to the batch in hand; 5 ms to make each batch
    local r, c = trace("--steps 12 --batch 16 --no-loader --make-ms 5")
    assert.equal(0, r.code, r.stderr)
    assert.equal("ranges", c.trace.data_source)
    -- (bounds with room for a loaded machine's late wake-ups: a step's data is its sleep or more)
    local dm = c.loop.data_stats
    assert.is_true(dm.mean >= 0.0045 and dm.median < 0.009, dm.mean .. " " .. dm.median)
    assert.is_true(c.stats.median < 0.004, "iter " .. c.stats.median)
    -- after a validation loader ran out, the next batch's making is data too: every step's
    local rv, cv = trace("--steps 12 --batch 16 --no-loader --make-ms 5 --val-every 3")
    assert.equal(0, rv.code, rv.stderr)
    for j, d in ipairs(cv.loop.data) do assert.is_true(d >= 0.004, ("data %d: %g"):format(j, d)) end
    assert.is_true(most(cv.trace.between) >= 0.015, "between " .. most(cv.trace.between))
    -- a validation on held batches (the model in eval mode, no DataLoader): neither data nor step
    local rh, ch = trace("--steps 12 --batch 16 --no-loader --make-ms 2 --val-held 3")
    assert.equal(0, rh.code, rh.stderr)
    assert.is_true(most(ch.trace.between) >= 0.015, "between " .. most(ch.trace.between))
    assert.is_true(all_but_one(ch.loop.data, function(d) return d < 0.015 end, "data %d: %.1f ms"))
    -- (the median for what every step would hold; the validation's 20 ms would be in every third
    -- step only, which the median leaves out: a bound on each step but one)
    assert.is_true(ch.stats.median < 0.004, "iter " .. ch.stats.median)
    assert.is_true(all_but_one(ch.samples, function(s) return s < 0.015 end, "step %d: %.1f ms"))
    -- the making of the batch after a validation is data too: from the model's train() after it
    for j, d in ipairs(ch.loop.data) do
      assert.is_true(d >= 0.0018, ("step %d: data %.1f ms, not the making's 2"):format(j, d * 1e3))
    end
    -- a frozen module evaluating each batch first (4 ms): the step's work, not data
    local rt, ct = trace("--steps 12 --batch 16 --no-loader --make-ms 2 --teacher 4")
    assert.equal(0, rt.code, rt.stderr)
    local tm = ct.loop.data_stats -- the teacher's 4 ms in the data would make it 6 or more
    assert.is_true(tm.mean >= 0.0018 and tm.median < 0.0045, tm.mean .. " " .. tm.median)
    assert.is_true(ct.stats.mean >= 0.004, "iter " .. ct.stats.mean)
    -- and a validation of the model trained, every third step, beside that teacher: between
    local rtv, ctv = trace("--steps 12 --batch 16 --no-loader --make-ms 2 --teacher 4 --val-held 3")
    assert.equal(0, rtv.code, rtv.stderr)
    assert.is_true(most(ctv.trace.between) >= 0.015, "between " .. most(ctv.trace.between))
    -- (each step but one: the validation would be in every third)
    assert.is_true(all_but_one(ctv.samples, function(s) return s < 0.012 end, "step %d: %.1f ms"))
    -- the teacher's work on the batch after a validation is that step's, the making its data
    for j, s in ipairs(ctv.samples) do
      assert.is_true(s >= 0.004, ("step %d: iter %.1f ms, not the teacher's 4"):format(j, s * 1e3))
      assert.is_true(ctv.loop.data[j] >= 0.0018, ("step %d: data %.1f ms, not the making's 2")
        :format(j, ctv.loop.data[j] * 1e3))
    end
    -- a forward the hook does not see (functional): the step begins at the step before's end, as
    -- the batch's making and its forward cannot be told apart; no phase named data in it
    local rf, cf = trace("--steps 12 --batch 16 --no-loader --make-ms 2 --functional 3")
    assert.equal(0, rf.code, rf.stderr)
    assert.equal(0, cf.loop.data_stats.mean)
    assert.is_true(cf.stats.mean >= 0.005, "iter " .. cf.stats.mean)
    for _, ph in ipairs(cf.loop.phases) do assert.is_true(ph.name ~= "data", ph.name) end
    -- a range of the program's own around the optimizer step, 3 ms of work in it: the step's
    if push_lib then
      local ro, co = trace("--steps 12 --batch 16 --no-loader --make-ms 2 --opt-range 3")
      assert.equal(0, ro.code, ro.stderr)
      assert.is_true(co.stats.mean >= 0.003, "iter " .. co.stats.mean)
      local names = {}
      for _, ph in ipairs(co.loop.phases) do names[ph.name] = true end
      assert.is_true(names.opt and names.forward, "phases")
    end
    -- no optimizer (the loop updates the weights after the backward that ends the step): no data
    local rm, cm = trace("--steps 12 --batch 16 --no-loader --make-ms 2 --manual")
    assert.equal(0, rm.code, rm.stderr)
    assert.equal(0, cm.loop.data_stats.mean)
  end)

  auto_it("keeps the calls after a made batch's optimizer step in its step, the making data",
    function()
    -- the template's step ends after the loop's last work on it (t1 after the scheduler's step,
    -- the averaged model's update, zero_grad()); its data is the next batch's making (5 ms): the
    -- hook learns the calls between the optimizer's step and the making, and keeps the step open
    -- through them (3 ms each, where timed) once it has seen the same tail twice: the data
    -- before the first step measured holds the tail of the step before (the checks from the
    -- second on)
    for _, kind in ipairs { "sched", "ema", "zero" } do
      local r, c = trace("--steps 12 --batch 16 --no-loader --make-ms 5 --step-tail " .. kind
        .. " --step-tail-ms 3")
      assert.equal(0, r.code, r.stderr)
      assert.equal(12, c.trace.steps)
      if kind ~= "zero" then
        assert.is_true(all_but_one(c.samples, function(x) return x >= 0.003 end,
          kind .. ": step %d: iter %.1f ms, without its tail's 3"))
      end
      assert.is_true(all_but_one(c.loop.data, function(d) return d >= 0.0045 and d < 0.0075 end,
        kind .. ": step %d: data %.1f ms, not the making's 5", 2))
    end
    -- zero_grad() as the step's first line, after the batch is made (3 ms before the forward):
    -- the step begins there, so the 3 ms are its and not the making's; then with a frozen
    -- module's 5 ms on the batch after it (a teacher, longer than the making's 3), which is no
    -- part of the making either
    local cases = { { "--make-ms 5 --gap-ms 3", 3, 5 }, { "--make-ms 3 --teacher 5", 5, 3 } }
    for _, case in ipairs(cases) do
      local args, work, making = case[1], case[2] / 1e3, case[3] / 1e3
      local r, c = trace("--steps 12 --batch 16 --no-loader --zero-first " .. args)
      assert.equal(0, r.code, r.stderr)
      assert.is_true(all_but_one(c.samples, function(x) return x >= work end,
        args .. ": step %d: iter %.1f ms, without the work after its zero_grad()"))
      assert.is_true(all_but_one(c.loop.data, function(d)
        return d >= 0.9 * making and d < making + 0.0025
      end, args .. ": step %d: data %.1f ms, not the making's", 2))
    end
    -- a tail on every other step only (an EMA every 2 steps), zero_grad() first: the steps with
    -- it hold its 3 ms, the others do not hold the making (whose next call is none of the tail's)
    local r, c = trace("--steps 12 --batch 16 --no-loader --make-ms 5 --zero-first --step-tail ema "
      .. "--step-tail-ms 3 --step-tail-every 2")
    assert.equal(0, r.code, r.stderr)
    local with = 0
    for _, x in ipairs(c.samples) do
      if x >= 0.003 then with = with + 1 end
    end
    assert.is_true(with >= 4 and with <= 6, with .. " steps of 10 with the EMA's 3 ms")
    assert.is_true(all_but_one(c.loop.data, function(d) return d >= 0.0045 end,
      "every other tail: step %d: data %.1f ms, not the making's 5"))
  end)

  auto_it("counts the model's input where no DataLoader gives the batches (data made in the loop)",
    function()
    -- each step's samples: the first dimension of the first tensor given to its first forward;
    -- each micro-batch's added; a second model's forward after the first optimizer's step not
    -- SAM's two passes on one batch, and a GAN-like second model, count once
    for _, case in ipairs { { "", 16 }, { "--accumulate 3", 48 }, { "--optimizers 2", 16 },
      { "--closure", 16 }, { "--passes 2", 16 } } do
      local r, c = trace("--steps 10 --batch 16 --no-loader " .. case[1])
      assert.equal(0, r.code, r.stderr)
      assert.equal(case[2], c.loop.batch_size, case[1])
      assert.equal("input", c.trace.batch_source, case[1])
      assert.matches("fetched no batch through a DataLoader", table.concat(c.notes or {}, "\n"),
        1, true)
      -- the making of each batch, from the optimizer's step to the next forward, is data
      assert.equal("ranges", c.trace.data_source, case[1])
    end
    -- a validation loader of its own every 3 steps (20 ms): between the steps, not data
    local rv, cv = trace("--steps 10 --batch 16 --no-loader --val-every 3")
    assert.equal(0, rv.code, rv.stderr)
    assert.equal("ranges", cv.trace.data_source)
    assert.is_true(most(cv.trace.between) >= 0.015, "between " .. most(cv.trace.between))
    -- (the making of these small batches alone is near a fifth of a step's time on the CPU: the
    -- data-bottleneck rule is no test of it)
    assert.is_true(all_but_one(cv.loop.data, function(d) return d < 0.005 end, "data %d: %.1f ms"))
    -- the program's own step ranges, with no payload: the same count, through the hook's steps
    if push_lib then
      local r, c = trace("--steps 10 --batch 16 --no-loader --ranges")
      assert.equal(0, r.code, r.stderr)
      assert.equal(16, c.loop.batch_size)
      assert.equal("input", c.trace.batch_source)
    end
    -- a loader's batch of 16 trained in two optimizer steps: the step that fetched it counts
    -- it, the other none (8 a step), not the other's input
    local rs, cs = trace("--steps 10 --batch 16 --split 2 --after-ms 2")
    assert.equal(0, rs.code, rs.stderr)
    assert.equal("loader", cs.trace.batch_source)
    assert.equal(8, cs.loop.batch_size)
    -- the loop's work after each optimizer step (2 ms) is no batch it made: the steps' own
    assert.is_true(cs.loop.data_stats.median < 0.001, "data " .. cs.loop.data_stats.median)
    -- a PackedSequence's batch (not its 3-9 steps a sequence), a list of per-sample tensors, a
    -- sequence-first LSTM as the model (the second dimension), the dataset read once through a
    -- DataLoader before the loop and sliced (not the loader's batch of 64)
    for _, args in ipairs { "--no-loader --input packed", "--no-loader --input list",
      "--no-loader --input seqfirst", "--preload" } do
      local ri, ci = trace("--steps 10 --batch 16 " .. args)
      assert.equal(0, ri.code, ri.stderr)
      assert.equal(16, ci.loop.batch_size, args)
      assert.equal("input", ci.trace.batch_source, args)
    end
    -- a model holding a sequence-first LSTM: its input's first dimension may be the sequence's
    -- length (5), so nothing is counted, and the hook says why; a model given its batch by
    -- keyword: nothing to count, said
    local ri, ci = trace("--steps 10 --batch 16 --no-loader --input inside")
    assert.equal(0, ri.code, ri.stderr)
    assert.equal("default", ci.trace.batch_source)
    assert.matches("holds a sequence-first LSTM (batch_first=False)", ri.stderr, 1, true)
    local rk, ck = trace("--steps 10 --batch 16 --no-loader --input keywords")
    assert.equal(0, rk.code, rk.stderr)
    assert.equal("default", ck.trace.batch_source)
    assert.matches("given no tensor by position", rk.stderr, 1, true)
  end)

  auto_it("leaves a loader's workers shut down by a break out of the loop out of the step",
    function()
    -- each epoch breaks after 4 steps; the iterator dropped joins its 2 worker processes (tens of
    -- ms): between the steps, as the template's step has ended before it
    local r, c = shapes("--epochs 3 --steps 6 --batch 16 --workers 2 --break-at 4")
    assert.equal(0, r.code, r.stderr)
    assert.equal(12, c.trace.steps)
    -- steps 4 and 8, the warmup's 2 left out: the shutdown would be in both
    local between = most(c.trace.between)
    assert.is_true(all_but_one({ c.samples[2], c.samples[6] }, function(s) return s < between end,
      "step %d of the two: iter %.1f ms, between at most " .. ("%.1f ms"):format(between * 1e3)))
  end)

  auto_it("ends the data loading when the loader is exhausted: the epoch's end is not data",
    function()
    local r, c = shapes("--epochs 3 --steps 6 --epoch-ms 60")
    assert.equal(0, r.code, r.stderr)
    assert.equal(18, c.trace.steps)
    assert.is_true(all_but_one(c.loop.data, function(d) return d < 0.03 end, "data %d: %.1f ms"))
  end)

  auto_it("leaves a validation loop out: its batches are not the steps' samples, nor its time data",
    function()
    for _, shape in ipairs { "--validate", "--grad-eval" } do -- under no_grad; in eval mode only
      local r, c = shapes("--epochs 3 --steps 6 --batch 16 --val-ms 10 " .. shape)
      assert.equal(0, r.code, r.stderr)
      assert.equal(18, c.trace.steps, shape)
      assert.equal(16, c.loop.batch_size, shape)
      assert.is_true(all_but_one(c.loop.data, function(d) return d < 0.03 end,
        shape .. ": data %d: %.1f ms"))
      assert.is_true(all_but_one(c.samples, function(s) return s < 0.03 end,
        shape .. ": step %d: %.1f ms"))
    end
  end)

  auto_it("keeps the forward of a model trained in eval mode in the step, or says it cannot",
    function()
    -- zero_grad() after the optimizer: the step's first training work the hook sees is backward;
    -- it begins at the batch in hand all the same, the forward in it
    local r, c = shapes("--epochs 2 --steps 6 --batch 16 --eval-train --zero-last")
    assert.equal(0, r.code, r.stderr)
    assert.equal(12, c.trace.steps)
    assert.is_nil(r.stderr:find("eval mode", 1, true), r.stderr)
    assert.equal("forward backward optimizer", names(c))
    -- zero_grad() as the loop's first line: the step begins there, the forward is in it
    r, c = shapes("--epochs 2 --steps 6 --batch 16 --eval-train")
    assert.equal(0, r.code, r.stderr)
    assert.equal(12, c.trace.steps)
    assert.is_nil(r.stderr:find("eval mode", 1, true), r.stderr)
    -- the batches fetched by another thread: no batch in hand to begin at, which it says once
    r, c = shapes("--epochs 2 --steps 6 --batch 16 --eval-train --zero-last --producer")
    assert.equal(0, r.code, r.stderr)
    assert.equal(12, c.trace.steps)
    local _, n = r.stderr:gsub(
      "process %d+: trains a model in eval mode %(model%.eval%(%), grad enabled%)", "")
    assert.equal(1, n, r.stderr)
  end)

  auto_it("keeps evaluation on the batch in hand before training in the step (a frozen backbone)",
    function()
    for _, how in ipairs { "eval", "nograd" } do -- 20 ms a call; zero_grad() after the optimizer
      local r, c = shapes("--epochs 2 --steps 6 --batch 16 --zero-last --frozen " .. how)
      assert.equal(0, r.code, r.stderr)
      assert.equal(12, c.trace.steps, how)
      for i, s in ipairs(c.samples) do
        assert.is_true(s >= 0.020, ("%s: step %d: %.4f s"):format(how, i, s))
      end
      assert.is_true(all_but_one(c.loop.data, function(d) return d < 0.015 end,
        how .. ": data %d: %.1f ms"))
    end
  end)

  auto_it("leaves a validation every N steps out of the step before it and of the data", function()
    -- 4 batches of 10 ms after every 2nd step, from a loader of its own or the training one
    for _, same in ipairs { "", "--val-same" } do
      local r, c = shapes("--epochs 2 --steps 6 --batch 16 --val-every 2 --val-ms 10 " .. same)
      assert.equal(0, r.code, r.stderr)
      assert.equal(12, c.trace.steps, same)
      assert.is_true(all_but_one(c.samples, function(s) return s < 0.03 end,
        same .. ": step %d: %.1f ms"))
      assert.is_true(all_but_one(c.loop.data, function(d) return d < 0.008 end,
        same .. ": data %d: %.1f ms"))
      assert.equal(16, c.loop.batch_size, same)
    end
    -- the loader's iterator takes 30 ms to start: the second epoch's start is data, the six
    -- validations' starts are not
    local r, c = shapes("--epochs 2 --steps 6 --batch 16 --val-every 2 --val-ms 10 --val-same "
      .. "--start-ms 30")
    assert.equal(0, r.code, r.stderr)
    local slow = 0
    for _, d in ipairs(c.loop.data) do
      if d >= 0.030 then slow = slow + 1 end
    end
    assert.equal(1, slow)
  end)

  auto_it("reads the batch size of a dataclass, and counts an iterator's start as data",
    function()
    local r, c = shapes("--epochs 2 --steps 6 --batch 16 --dataclass")
    assert.equal(0, r.code, r.stderr)
    assert.equal(16, c.loop.batch_size)
    assert.equal("loader", c.trace.batch_source)
    -- the sampler takes 60 ms as each epoch's iterator starts: the data of the epoch's first step
    r, c = shapes("--epochs 3 --steps 6 --batch 16 --start-ms 60")
    assert.equal(0, r.code, r.stderr)
    assert.equal(2, slow_starts(c)) -- the 2nd and 3rd epochs' (the 1st is in the warmup)
  end)

  auto_it("counts a batch's samples as the sampler gave them, whatever the collate's first "
    .. "tensor; a module called in the collate is the fetch's", function()
    -- a tuple of per-sample images (the first tensor is one sample's) and a sequence-first
    -- tensor (4, 16, 8): the first dimension of neither is the batch of 16
    for _, shape in ipairs { "tuples", "seq-first" } do
      local r, c = shapes("--epochs 2 --steps 6 --batch 16 --collate " .. shape)
      assert.equal(0, r.code, r.stderr)
      assert.equal(16, c.loop.batch_size, shape)
      assert.equal(10, #c.samples, shape)
    end
    -- a collate that drops two samples of each batch: 14, no part of the batch being 16 long
    local rd, cd = shapes("--epochs 2 --steps 6 --batch 16 --collate dropping")
    assert.equal(0, rd.code, rd.stderr)
    assert.equal(14, cd.loop.batch_size)
    -- every batch fetched before the loop (`list(loader)`) and replayed each epoch: the first
    -- step's payload holds them all, the steps measured none; each counts its model's input
    local r0, c0 = shapes("--epochs 2 --steps 6 --batch 16 --cached")
    assert.equal(0, r0.code, r0.stderr)
    assert.equal(16, c0.loop.batch_size)
    assert.equal("input", c0.trace.batch_source)
    -- a frozen encoder of 20 ms, with parameters, in training mode, called by the collate
    local r, c = shapes("--epochs 2 --steps 6 --batch 16 --collate encoded")
    assert.equal(0, r.code, r.stderr)
    assert.equal(10, #c.samples)
    for j, d in ipairs(c.loop.data) do
      assert.is_true(d >= 0.018, ("step %d: data %.1f ms, not the encoder's 20"):format(j, d * 1e3))
    end
    assert.is_true(all_but_one(c.samples, function(s) return s < 0.015 end,
      "step %d: iter %.1f ms, the encoder in it"))
  end)

  auto_it("counts the training thread's wait for a batch another thread fetched (a queue's get) "
    .. "as data", function()
    -- a prefetching thread fetches batches of 25 ms (a slow collate) into a queue.Queue of 4; the
    -- training thread's step takes a few ms, so it waits about 20 ms a step in get() once the
    -- batches queued while the first steps were slower (a GPU's start) are gone: in the second
    -- epoch (its own thread, from an empty queue: steps 9-16, measured 7-14) at the latest
    local r, c = shapes("--epochs 2 --steps 8 --batch 16 --producer --fetch-ms 25")
    assert.equal(0, r.code, r.stderr)
    assert.equal(16, c.loop.batch_size)
    -- (a step held up leaves the next one less to wait for)
    assert.is_true(all_but_one(c.loop.data, function(d) return d >= 0.012 end,
      "step %d: data %.1f ms, not the wait in get()", 7))
    assert.is_true(all_but_one(c.samples, function(s) return s < 0.012 end,
      "step %d: iter %.1f ms, the wait in it"))
    assert.matches("data%-bottleneck", codes(c))
  end)

  auto_it("ends a step at a checkpoint saved after its optimizer step: the save is between the "
    .. "steps", function()
    local r, c = shapes("--epochs 2 --steps 6 --batch 16 --save-every 3 --save-ms 30")
    assert.equal(0, r.code, r.stderr)
    assert.is_true(all_but_one(c.samples, function(s) return s < 0.025 end,
      "step %d: %.1f ms, the 30 ms save in it"))
    assert.is_true(c.trace.between_mean > 0.005, "the saves lie between the steps")
  end)

  auto_it("counts a reset iterator's start as data (persistent workers), and the samples of a "
    .. "batch with no tensor to count as the sampler gave them", function()
    -- the loader's worker is kept between epochs: each epoch resets its iterator, whose sampler
    -- takes 60 ms; the batches are an object of the program's own
    local r, c = shapes("--epochs 3 --steps 6 --batch 16 --start-ms 60 --persistent --object")
    assert.equal(0, r.code, r.stderr)
    assert.equal(2, slow_starts(c)) -- the 2nd and 3rd epochs' (the 1st is in the warmup)
    assert.equal(16, c.loop.batch_size)
    assert.equal("loader", c.trace.batch_source)
  end)

  auto_it("counts the samples of a step's batch, whoever fetches it and however many loaders",
    function()
    -- two DataLoaders zipped: one step's batch of 16; a teacher's no_grad forward before the
    -- student's; the batches fetched by another thread
    for _, shape in ipairs { "--zip", "--teacher", "--producer" } do
      local r, c = shapes("--epochs 2 --steps 8 --batch 16 " .. shape)
      assert.equal(0, r.code, r.stderr)
      assert.equal(16, c.trace.steps, shape)
      assert.equal(16, c.loop.batch_size, shape)
      assert.equal("loader", c.trace.batch_source, shape)
    end
  end)

  auto_it("finds the steps of a module run with -m, or of -c, and names the report by them",
    function()
    local dir = h.tmpdir()
    h.write(dir .. "/train_mod.py", h.read(PROGRAM))
    for _, args in ipairs { { "-u -m train_mod", "python3 -m train_mod" },
      { "-c " .. h.quote("import runpy; runpy.run_path('train_mod.py', run_name='__main__')"),
        "python3 -c" } } do
      local r = h.run(("trace --warmup 2 -o %s -- %s %s --steps 8"):format(
        h.quote(dir .. "/r.json"), h.quote(python), args[1]), { env = env(), cwd = dir })
      assert.equal(0, r.code, r.stderr)
      local doc = require("wlrun.results.load").load(dir .. "/r.json")
      assert.equal(8, doc.configurations[1].trace.steps)
      assert.equal(args[2], doc.scenario.name)
    end
  end)

  auto_it("takes the program's own step ranges when it has them, the hook's data ranges kept",
    function()
    if not push_lib then return pending("WLRUN_TRACE_NVTX_PUSH not set (ctest sets it)") end
    local r, c = trace("--steps 12 --ranges")
    assert.equal(0, r.code, r.stderr)
    assert.equal("program", c.trace.ranges)
    assert.equal(12, c.trace.steps)
    assert.equal("ranges", c.trace.data_source) -- the hook's, as the program has none
    assert.is_nil(names(c):find("forward", 1, true)) -- the hook's phases left out
    -- --steps counts the program's steps, not the hook's inside them, which close just before:
    -- the last traced is recorded whole, and no range is left open but by the stop
    r, c = trace("--steps 20 --ranges", { trace = "--steps 12" })
    assert.equal(0, r.code, r.stderr)
    assert.equal(12, c.trace.steps)
    assert.matches("the first 12 steps were traced", table.concat(c.notes, "\n"))
    for _, w in ipairs(c.warnings or {}) do assert.not_equal("open-ranges", w.code, w.message) end
  end)

  auto_it("keeps the program's own ranges after the optimizer in the hook's step (a 'log')",
    function()
    if not push_lib then return pending("WLRUN_TRACE_NVTX_PUSH not set (ctest sets it)") end
    -- "epoch" around each epoch, "load" around each fetch, "log" of 20 ms after each optimizer step
    local r, c = shapes("--epochs 2 --steps 6 --batch 16 --log-ms 20")
    assert.equal(0, r.code, r.stderr)
    assert.equal(12, c.trace.steps)
    assert.equal("auto", c.trace.ranges)
    assert.equal(16, c.loop.batch_size)
    assert.truthy(names(c):find("log", 1, true), names(c))
    for i, s in ipairs(c.samples) do -- each iteration holds its log: none ends at its start
      assert.is_true(s >= 0.02, ("iteration %d: %.4f s"):format(i, s))
    end
    assert.is_true(all_but_one(c.loop.data, function(d) return d < 0.015 end, "data %d: %.1f ms"))
  end)

  auto_it("leaves a range of the program's own after the last step out of it (a checkpoint)",
    function()
    if not push_lib then return pending("WLRUN_TRACE_NVTX_PUSH not set (ctest sets it)") end
    -- the loop stops one batch short, then a "checkpoint" of 60 ms: the last step ends at its
    -- optimizer's end, and nothing after it is one of its phases
    local r, c = shapes("--epochs 1 --steps 8 --batch 16 --checkpoint-ms 60")
    assert.equal(0, r.code, r.stderr)
    assert.equal(7, c.trace.steps)
    assert.equal("auto", c.trace.ranges)
    assert.is_nil(names(c):find("checkpoint", 1, true), names(c))
    assert.is_nil(codes(c):find("phase-overlap", 1, true), codes(c))
  end)

  auto_it("works with DataLoader worker processes", function()
    local r, c = trace("--steps 12 --workers 2")
    assert.equal(0, r.code, r.stderr)
    assert.equal("auto", c.trace.ranges)
    assert.equal(16, c.loop.batch_size)
  end)

  auto_it("says so, and runs without the hook, where the trace directory holds a ':'", function()
    local dir = h.tmpdir() .. "/a:b"
    local r = trace("--steps 8", { trace = "--trace-dir " .. h.quote(dir) })
    assert.equal(2, r.code, r.stderr)
    assert.matches("no Python hook: the trace directory '.*a:b' holds a ':'", r.stderr)
  end)

  auto_it("runs the program's own sitecustomize too", function()
    local dir = h.tmpdir()
    h.write(dir .. "/sitecustomize.py", ("open(%q, 'w').write('ran')\n"):format(dir .. "/mark"))
    local r, c = trace("--steps 8", { env = "PYTHONPATH=" .. h.quote(dir) })
    assert.equal(0, r.code, r.stderr)
    assert.equal("auto", c.trace.ranges)
    assert.equal("ran", h.read(dir .. "/mark"))
  end)

  auto_it("--no-auto-ranges: no hook, so a program without ranges has no steps (exit 2)", function()
    local r = trace("--steps 8", { trace = "--no-auto-ranges" })
    assert.equal(2, r.code, r.stderr)
    -- no NVTX: no file at all, or one without ranges where torch initialised CUDA (torch 2 does)
    assert.is_truthy(r.stderr:find("the program wrote no trace", 1, true)
      or r.stderr:find("no NVTX range was seen", 1, true))
    -- --step names the step's range: the hook's steps are never taken for it
    local named = trace("--steps 8", { trace = "--step train_step" })
    assert.equal(2, named.code, named.stderr)
    assert.matches("'train_step %[wlrun's hook%]' %(8%)", named.stderr)
  end)

  auto_it("wl.command: the hook's steps in a scenario, and auto_ranges = false", function()
    local function run(flag)
      local dir = h.tmpdir()
      local script = ([[
local wl = require "wlrun"
return wl.command {
  name = "auto", warmup = 2, auto_ranges = %s,
  command = { %q, %q, "--steps", 8 },
}
]]):format(flag, python, PROGRAM)
      local r = h.run_script(script, "--quiet -o " .. h.quote(dir .. "/r.json"), { env = env() })
      local doc = require("wlrun.results.load").load(dir .. "/r.json")
      return r, doc.configurations[1]
    end
    local r, c = run("true")
    assert.equal(0, r.code, r.stderr)
    assert.equal("ok", c.status, c.error)
    assert.equal("auto", c.trace.ranges)
    assert.equal(6, #c.samples)
    local off, failed = run("false")
    assert.is_true(off.code ~= 0)
    assert.equal("failed", failed.status)
    assert.is_truthy(failed.error:find("the program wrote no trace", 1, true)
      or failed.error:find("no NVTX range was seen", 1, true))
  end)
end)

describe("wlrun trace of several processes", function()
  auto_it("reports each rank and a line over all of them: the global batch, the pace, the spread",
    function()
    local dir = h.tmpdir()
    local r = h.run(("trace --warmup 2 -o %s -- %s %s --spawn 2 --steps 12 --batch 16"):format(
      h.quote(dir .. "/r.json"),
      h.quote(python), h.quote(h.source_dir .. "/tests/trace/torch_ddp.py")), { env = env() })
    assert.equal(0, r.code, r.stderr)
    local doc = require("wlrun.results.load").load(dir .. "/r.json")
    assert.equal(2, #doc.configurations)
    for k, c in ipairs(doc.configurations) do
      assert.same({ process = k }, c.params)
      assert.equal("auto", c.trace.ranges)
      assert.equal(16, c.loop.batch_size)
      assert.equal(10, #c.samples)
    end
    local g = doc.trace.ranks
    assert.equal(2, g.processes)
    assert.equal(32, g.batch)
    assert.equal(10, g.steps)
    assert.is_true(g.spread_max >= g.spread_mean and g.spread_mean >= 0)
    local slow = doc.configurations[g.slowest]
    assert.is_true(math.abs(g.samples_per_s - 32 / (slow.loop.total_time / 10)) < 1e-6
      * g.samples_per_s)
    assert.matches("all 2 processes: global batch 32, [%d.]+ samples/s %(the slowest, #%d",
      r.stdout)
  end)
end)
