-- wlrun trace's report (lua/wlrun/trace/report.lua) on parsed fixtures (tests/fixtures/trace/)
-- and handwritten traces: iterations, data time, phases and their CPU and GPU times, the
-- attribution of GPU work by correlation, the warnings; and a traced run's document through the
-- strict loader, compare and export.
local h = require "helper"
local read = require "wlrun.trace.read"
local report = require "wlrun.trace.report"

local F = h.source_dir .. "/tests/fixtures/trace/"

local function near(a, b, tol) return math.abs(a - b) <= (tol or 1e-9) * math.max(1,
  math.abs(b)) end

local function entries_of(dir, opts) return report.entries(read.dir(F .. dir), opts) end

-- a parsed trace of one process from its lines (after the header)
local function trace_of(...)
  local text = table.concat({ "wltrace\t1\t7\t1\tprog", ... }, "\n") .. "\n"
  return { processes = { read.parse(text, "7.wltrace") } }
end

-- the entry of the one process of a handwritten trace
local function entry_of(opts, ...) return report.entries(trace_of(...), opts)[1] end

local function codes(e)
  local list = {}
  for _, w in ipairs(e.warnings or {}) do list[#list + 1] = w.code end
  return list
end

local function phase(e, name)
  for _, ph in ipairs(e.trace.phases) do
    if ph.name == name then return ph end
  end
end

local function fails(fn, text)
  local ok, err = pcall(fn)
  assert.is_false(ok, "expected an error: " .. text)
  assert.equal("usage", err.kind)
  assert.truthy(err.message:find(text, 1, true), "expected «" .. text .. "» in: " .. err.message)
  return err.message
end

describe("trace report", function()
  it("refuses step ranges of one thread that overlap, neither inside the other (exit 9)",
    function()
    -- the first step ends after the next one begins: no push/pop trace holds that, and its
    -- iterations would have no length
    local ok, err = pcall(entry_of, { warmup = 0 }, "S\t1\ttrain_step",
      "R\t1\t7\t0\t1\t0\t1000\t30000\t32", "R\t2\t7\t0\t1\t0\t2000\t3000\t32",
      "R\t3\t7\t0\t1\t0\t31000\t32000\t32", "X\texit")
    assert.is_false(ok)
    assert.equal("io", err.kind)
    assert.matches("7%.wltrace: step ranges 1 and 2 %('train_step', thread 7, one domain%) "
      .. "overlap %(1000%.%.30000 and 2000%.%.3000%), neither inside the other", err.message)
    -- the same steps one after another are read
    local e = entry_of({ warmup = 0 }, "S\t1\ttrain_step", "R\t1\t7\t0\t1\t0\t1000\t2000\t32",
      "R\t2\t7\t0\t1\t0\t2000\t3000\t32", "R\t3\t7\t0\t1\t0\t3000\t4000\t32", "X\texit")
    assert.equal(3, e.trace.steps)
    -- two domains' steps may cross (a pop ends its own domain's innermost range): read
    e = entry_of({ warmup = 0 }, "S\t1\ttrain_step", "S\t2\tmylib",
      "R\t1\t7\t0\t1\t2\t1000\t2500\t32", "R\t2\t7\t0\t1\t0\t2000\t3000\t32",
      "R\t3\t7\t0\t1\t2\t4000\t5500\t32", "R\t4\t7\t0\t1\t0\t5000\t6000\t32", "X\texit")
    assert.equal("ok", e.status)
  end)

  it("makes a loop configuration of a process's steps, with GPU time per phase by correlation",
    function()
    local es = entries_of("basic", { warmup = 1 })
    assert.equal(1, #es)
    local e = es[1]
    assert.equal("ok", e.status)
    assert.equal("loop", e.mode)
    assert.same({}, e.params)
    assert.equal(1, e.warmup)
    assert.equal(3, #e.samples)
    for j = 1, 3 do
      assert.is_true(near(e.samples[j], 0.010))
      assert.is_true(near(e.loop.data[j], 0.002))
    end
    assert.equal(64, e.loop.batch_size)
    assert.equal("payload", e.trace.batch_source)
    -- throughput over the whole period: the steps are 20 ms apart (10 ms step, 2 ms data, 8 ms
    -- between that is neither)
    assert.is_true(near(e.loop.throughput, 64 * 3 / 0.060))
    assert.is_true(near(e.trace.between_mean, 0.008))
    -- the phases hold GPU time: forward 2 + 0.5 ms, backward 4 ms, optimizer 0.5 ms
    assert.equal("gpu", e.trace.timing)
    local names = {}
    for i, ph in ipairs(e.loop.phases) do names[i] = ph.name end
    assert.same({ "forward", "backward", "optimizer" }, names)
    assert.is_true(near(e.loop.phases[1].mean, 0.0025))
    assert.is_true(near(e.loop.phases[2].mean, 0.004))
    assert.is_true(near(e.loop.phases[3].mean, 0.0005))
    assert.is_true(e.loop.phases[1].top)
    -- and their CPU times beside
    assert.is_true(near(phase(e, "forward").cpu_mean, 0.0029))
    assert.is_true(near(phase(e, "backward").cpu[2], 0.005))
    -- the step's GPU busy time is the union of its work (two adjacent kernels: 2.5 ms)
    assert.is_true(near(e.trace.gpu_busy_mean, 0.007))
    assert.is_true(near(e.trace.gpu_outside_mean, 0))
    -- the work with no correlation that ran during the third step (the second measured)
    assert.same({ 0, 0.0001, 0 }, e.trace.gpu_unattributed)
    assert.is_true(near(e.trace.data_gpu_mean, 0.0005))
    assert.equal("ranges", e.trace.data_source)
    assert.equal("step", e.trace.data_threads)
    assert.equal(100, e.trace.process.pid)
    assert.equal("MainThread", e.trace.process.thread)
    assert.is_true(e.trace.process.exited)
    assert.same({}, codes(e))
    assert.is_nil(phase(e, "forward").kernels) -- only with kernels = true
  end)

  it("lists the top kernels of each phase and of the data loading with kernels = true", function()
    local e = entries_of("basic", { warmup = 1, kernels = true })[1]
    local k = phase(e, "forward").kernels
    assert.equal(2, #k)
    assert.same({ name = "gemm_kernel", count = 3 }, { name = k[1].name, count = k[1].count })
    assert.is_true(near(k[1].time, 0.006))
    assert.equal("relu_kernel", k[2].name)
    assert.equal("memcpy HtoD", e.trace.data_kernels[1].name)
    local one = entries_of("basic", { warmup = 1, kernels = true, top_kernels = 1 })[1]
    assert.equal(1, #phase(one, "forward").kernels)
  end)

  it("takes --batch-size over the payload, and counts every step with warmup 0", function()
    local e = entries_of("basic", { warmup = 0, batch_size = 100 })[1]
    assert.equal(100, e.loop.batch_size)
    assert.equal("option", e.trace.batch_source)
    assert.equal(4, #e.samples)
    -- the first window: everything before the first step's end
    assert.is_true(near(e.loop.data[1], 0.002))
  end)

  it("reports CPU times when CUPTI was off, and the gap as data time without data ranges",
    function()
    local e = entries_of("cpu_only", { warmup = 1 })[1]
    assert.equal("cpu", e.trace.timing)
    assert.equal("gap", e.trace.data_source)
    assert.same({ 0.005, 0.005 }, e.loop.data) -- 15 ms apart, 10 ms long
    assert.is_true(near(e.loop.phases[1].mean, 0.003)) -- fwd's CPU time
    assert.is_nil(e.trace.gpu_busy)
    assert.equal(1, e.loop.batch_size)
    assert.equal("default", e.trace.batch_source)
    assert.same({ "data-bottleneck", "cpu-only", "open-ranges", "process-killed" }, codes(e))
    assert.matches(
      "CPU times only %(no GPU / CUPTI: libcupti%.so%.13: cannot open shared object file%)",
      e.warnings[2].message)
    assert.matches("'train_step' %(1%)", e.warnings[3].message)
    assert.equal(2, #e.notes)
    assert.matches("no 'data' ranges: the data time is the whole gap", e.notes[1])
    assert.matches("batch size 1", e.notes[2])
  end)

  it("sums up several processes with steps: the global batch, the slowest's pace, the spread",
    function()
    local es = entries_of("ranks", { warmup = 1 })
    local g = require("wlrun.trace.ranks").summary(es)
    assert.equal(2, g.processes)
    assert.equal(64, g.batch)
    local slow = es[g.slowest]
    for _, e in ipairs(es) do assert.is_true(e.loop.total_time <= slow.loop.total_time) end
    assert.is_true(near(g.samples_per_s, 64 / (slow.loop.total_time / #slow.samples)))
    local hi, lo = math.max(es[1].samples[1], es[2].samples[1]),
      math.min(es[1].samples[1], es[2].samples[1])
    assert.is_true(g.spread_max >= hi - lo - 1e-12)
    assert.is_nil(require("wlrun.trace.ranks").summary { es[1] }) -- one process: no line
  end)

  it("makes one configuration per process with steps (DDP ranks), none for the others", function()
    local es = entries_of("ranks", { warmup = 1 })
    assert.equal(2, #es)
    assert.same({ process = 1 }, es[1].params)
    assert.same({ process = 2 }, es[2].params)
    assert.equal(300, es[1].trace.process.pid)
    assert.equal(301, es[2].trace.process.pid)
    assert.is_true(near(es[1].samples[1], 0.007))
    assert.is_true(near(es[2].samples[1], 0.005))
    assert.is_true(near(es[2].loop.data[1], 0.001)) -- start/end data ranges
    assert.equal("none", es[1].trace.cupti.state)
  end)

  it("says which ranges it saw when none is the step, and suggests --step", function()
    local msg = fails(function() entries_of("basic", { step = "step" }) end,
      "no closed range named 'step' in the 1 process traced; the ranges seen (20 in all), "
        .. "by count: ")
    assert.matches(
      "'backward' %(4%), 'data' %(4%), 'forward' %(4%), 'optimizer' %(4%), 'train_step' %(4%); "
      .. "name the step's range with %-%-step NAME", msg)
    fails(function() report.entries({ processes = {} }, {}) end, "the program wrote no trace")
    fails(function() report.entries(trace_of("S\t1\tx"), {}) end,
      "no NVTX range was seen in the 1 process traced")
    -- at most 20 names, and names printed safely
    local lines = {}
    for i = 1, 30 do
      lines[#lines + 1] = ("S\t%d\tr%02d\\x1b"):format(i, i)
      lines[#lines + 1] = ("R\t%d\t7\t0\t%d\t0\t10\t20\t-"):format(i, i)
    end
    msg = fails(function() report.entries(trace_of(table.unpack(lines)), {}) end,
      "... (30 names in all)")
    assert.truthy(msg:find("'r01\\x1b' (1)", 1, true))
    assert.is_nil(msg:find("\27", 1, true))
  end)

  it("fails a process with no step beyond the warmup, saying so", function()
    local e = entries_of("basic", { warmup = 4 })[1]
    assert.equal("failed", e.status)
    assert.equal("usage", e.kind)
    assert.matches("process 100 has 4 closed 'train_step' ranges, not more than %-%-warmup 4",
      e.error)
    assert.equal(4, e.trace.steps)
  end)

  describe("on handwritten traces", function()
    -- a step [0, 10 ms] on thread 7 with a phase and a nested one, a second step [11, 21 ms]
    local base = {
      "S\t1\ttrain_step", "S\t2\tfwd", "S\t3\tlayer", "S\t4\tdata", "S\t5\tk1", "S\t6\tk2", "G\ton",
      "R\t1\t7\t0\t1\t0\t0\t10000000\t-",
      "R\t2\t7\t1\t2\t0\t1000000\t9000000\t-",
      "R\t3\t7\t2\t3\t0\t2000000\t4000000\t-",
      "R\t4\t7\t3\t3\t0\t2500000\t3000000\t-", -- a layer inside a layer: counted once
      "R\t5\t7\t0\t1\t0\t11000000\t21000000\t-", "X\texit",
    }
    local function with(...)
      local lines = table.move(base, 1, #base, 1, {})
      for _, l in ipairs { ... } do lines[#lines + 1] = l end
      return table.unpack(lines)
    end

    it("counts a nested phase's work in it and in its top phase, the step's own as in no phase",
      function()
      local e = entry_of({ warmup = 0 }, with(
        -- in layer (inner) -> layer and fwd
        "C\t1\t4", "K\t1\tkernel\t0\t0\t2000000\t3000000\t0\t5",
        "C\t2\t1", "K\t2\tkernel\t0\t0\t9500000\t9700000\t0\t6")) -- in the step itself
      assert.is_true(near(phase(e, "fwd").gpu[1], 0.001))
      assert.is_true(near(phase(e, "layer").gpu[1], 0.001))
      assert.is_true(phase(e, "fwd").top)
      assert.is_false(phase(e, "layer").top)
      assert.is_true(near(phase(e, "layer").cpu[1], 0.002)) -- the outer layer only
      assert.is_true(near(e.trace.gpu_outside[1], 0.0002))
      assert.is_true(near(e.trace.gpu_busy[1], 0.0012))
      assert.equal(0, phase(e, "fwd").gpu[2]) -- absent from the second step: no time
      -- the loop's summary: the nested phase is shown, not counted in the breakdown
      assert.is_false(e.loop.phases[2].top)
    end)

    it("prefers the data ranges of the step's thread, and takes any thread's when it has none",
      function()
      -- steps [0, 10] and [20, 30] ms: the gap before the second is [10, 20]
      local function two(...)
        return "S\t1\ttrain_step", "S\t4\tdata", "R\t1\t7\t0\t1\t0\t0\t10000000\t-",
          "R\t5\t7\t0\t1\t0\t20000000\t30000000\t-", "X\texit", ...
      end
      local own = entry_of({ warmup = 0 }, two("R\t10\t7\t0\t4\t0\t12000000\t15000000\t-",
        "R\t11\t8\t0\t4\t0\t12000000\t19000000\t-"))
      assert.equal("step", own.trace.data_threads)
      assert.is_true(near(own.loop.data[2], 0.003))
      assert.is_true(near(own.trace.between[2], 0.007)) -- the rest of the gap
      local other = entry_of({ warmup = 0 }, two("R\t11\t8\t0\t4\t0\t12000000\t19000000\t-",
        "R\t12\t8\t0\t4\t0\t19500000\t19600000\t-"))
      assert.equal("all", other.trace.data_threads)
      assert.is_true(near(other.loop.data[2], 0.0071))
      -- a data range after the last step's end belongs to no iteration; one inside a step is
      -- not data (the step's time holds it)
      local late = entry_of({ warmup = 0 }, two("R\t10\t7\t0\t4\t0\t32000000\t33000000\t-",
        "R\t11\t7\t0\t4\t0\t22000000\t23000000\t-"))
      assert.same({ 0, 0 }, late.loop.data)
      -- the part of a data range in the gap counts
      local across = entry_of({ warmup = 0 }, two("R\t10\t7\t0\t4\t0\t8000000\t12000000\t-"))
      assert.is_true(near(across.loop.data[2], 0.002))
    end)

    it("warns when much GPU work of the steps was launched outside every range", function()
      local e = entry_of({ warmup = 0 }, with("C\t1\t2",
        "K\t1\tkernel\t0\t0\t1000000\t2000000\t0\t5",
        "K\t9\tkernel\t0\t0\t3000000\t8000000\t0\t6")) -- no C: from a thread with no range open
      assert.same({ "gpu-unattributed" }, codes(e))
      assert.matches("83%% of the GPU work that ran during the steps", e.warnings[1].message)
    end)

    it("reads the batch size from payloads, their mean when they differ", function()
      local e = entry_of({ warmup = 0, step = "s" }, "S\t1\ts", "R\t1\t7\t0\t1\t0\t0\t10\t32",
        "R\t2\t7\t0\t1\t0\t20\t30\t64")
      assert.equal(48, e.loop.batch_size)
      assert.matches("payloads differ %(32 to 64%)", e.notes[2])
      assert.is_true(near(e.loop.throughput, 96 / 30e-9), tostring(e.loop.throughput))
    end)

    -- steps of 10 ns every 20 ns with the given payloads ("-": none)
    local function paid(payloads)
      local lines = { "S\t1\ts" }
      for i, p in ipairs(payloads) do
        lines[#lines + 1] = ("R\t%d\t7\t0\t1\t0\t%d\t%d\t%s"):format(i, 20 * (i - 1),
          20 * (i - 1) + 10, p)
      end
      return entry_of({ warmup = 0, step = "s" }, table.unpack(lines))
    end

    it("counts the batches fetched where steps between them fetched none (fetched ahead)",
      function()
      -- a batch trained on for two optimizer steps, and one fetched a step ahead
      local e = paid { 16, "-", 16, "-", 32, 16, "-", 16, "-" }
      assert.equal(11, e.loop.batch_size) -- 96 samples over 9 steps
      assert.is_true(near(e.loop.throughput, 96 / 170e-9), tostring(e.loop.throughput))
      assert.matches("4 of the 9 steps measured fetched no batch of their own", e.notes[2])
    end)

    it("counts the others' mean batch for the last step of a loader read one batch ahead",
      function()
      -- the hook's steps (domain wlrun.auto): the last one trained (a forward, its input counted)
      -- on a batch fetched a step before, as Lightning's and Accelerate's loaders read; an
      -- optimizer step alone at the end (what a gradient-accumulation loop leaves) adds none
      local function hook(last)
        local lines = { "S\t1\ttrain_step", "S\t9\twlrun.auto" }
        for i, p in ipairs { 16, 16, 16, 16, last } do
          lines[#lines + 1] = ("R\t%d\t7\t0\t1\t9\t%d\t%d\t%s"):format(i, 20 * (i - 1),
            20 * (i - 1) + 10, p)
        end
        return entry_of({ warmup = 0 }, table.unpack(lines))
      end
      local e = hook(tostring((1 << 40) + 16))
      assert.equal(16, e.loop.batch_size)
      assert.is_true(near(e.loop.throughput, 80 / 90e-9), tostring(e.loop.throughput))
      assert.matches("1 of the 5 steps measured fetched no batch through a DataLoader",
        table.concat(e.notes, "\n"))
      e = hook("-")
      assert.is_true(near(e.loop.throughput, 64 / 90e-9), tostring(e.loop.throughput))
    end)

    it("counts the others' mean batch for a long run of steps that fetched none (a cache)",
      function()
      local e = paid { 32, 32, 32, "-", "-", "-", "-", "-" }
      assert.equal(32, e.loop.batch_size)
      assert.is_true(near(e.loop.throughput, 256 / 150e-9), tostring(e.loop.throughput))
      assert.matches("5 of the 8 steps measured fetched no batch through a DataLoader", e.notes[2])
      -- none measured (warmup 3): the earlier steps' mean batch
      local lines = { "S\t1\ts" }
      for i, p in ipairs { 32, 32, 32, "-", "-", "-", "-", "-" } do
        lines[#lines + 1] = ("R\t%d\t7\t0\t1\t0\t%d\t%d\t%s"):format(i, 20 * (i - 1),
          20 * (i - 1) + 10, p)
      end
      e = entry_of({ warmup = 3, step = "s" }, table.unpack(lines))
      assert.equal(32, e.loop.batch_size)
      assert.matches("none of the 5 steps measured fetched a batch", e.notes[2])
    end)

    it("names the library's errors, lost records and open ranges", function()
      local e = entry_of({ warmup = 0 }, with("D\tcupti\t12", "E\tcuptiActivityFlushAll: error 7",
        "O\t20\t7\t0\t2\t0\t40000000\t-"))
      -- CUPTI on, but no GPU work in the process: CPU times, and a cpu-only warning that says so
      assert.same({ "cpu-only", "open-ranges", "records-lost", "trace-errors" }, codes(e))
      assert.matches("CUPTI was on, but the process ran no GPU work", e.warnings[1].message)
      assert.matches("'fwd' %(1%)", e.warnings[2].message)
      assert.matches("lost records %(12 GPU activity records CUPTI dropped%)",
        e.warnings[3].message)
      assert.matches("cuptiActivityFlushAll: error 7", e.warnings[4].message)
    end)
  end)
end)

describe("a traced run's results document", function()
  local trace_tool = require "wlrun.tools.trace"

  local function doc_of(dir)
    local o = { step = "train_step", data = "data", warmup = 1, kernels = true, sync_steps = false }
    local entries = entries_of(dir, o)
    local r = { how = "exit", code = 0, time = 0.5 }
    return trace_tool.document(o, { "python3", "train.py" }, "/usr/bin/python3",
      { started = "2026-11-30T00:00:00Z",
      info = { command = { "python3", "train.py" }, program = "/usr/bin/python3",
        library = "/x/libwlrun_trace.so",
        time = r.time, exit = { how = "exit", code = 0 }, sync_steps = false, processes = 3 },
          complete = true }, entries)
  end

  it("bounds every step by the marks' events where GPU activity was on for a sample of them",
    function()
    -- version 3: step 2 ran with GPU activity off (P at the end of the step before), its work
    -- known only by the mark at its end (an event, K kind event, its C record a nanosecond before
    -- the boundary)
    local text = table.concat({ "wltrace\t3\t7\t1\tprog", "G\ton", "S\t1\ttrain_step",
      "S\t2\tforward", "S\t3\tk", "S\t4\tevent",
      "R\t2\t7\t1\t2\t0\t11000\t15000\t-", "R\t1\t7\t0\t1\t0\t10000\t20000\t-",
      "C\t1\t2\t12000", "K\t1\tkernel\t0\t7\t13000\t25000\t0\t3",
      "C\t2\t0\t19999", "K\t2\tevent\t0\t7\t25100\t25100\t0\t4",
      "P\t20000\toff",
      "R\t4\t7\t3\t2\t0\t31000\t35000\t-", "R\t3\t7\t0\t1\t0\t30000\t40000\t-",
      "C\t3\t0\t39999", "K\t3\tevent\t0\t7\t47000\t47000\t0\t4",
      "P\t40000\ton",
      "R\t6\t7\t5\t2\t0\t51000\t55000\t-", "R\t5\t7\t0\t1\t0\t50000\t60000\t-",
      "C\t4\t6\t52000", "K\t4\tkernel\t0\t7\t53000\t58000\t0\t3",
      "C\t5\t0\t59999", "K\t5\tevent\t0\t7\t58100\t58100\t0\t4", "X\texit" }, "\n")
      .. "\n"
    local p = read.parse(text, "7.wltrace")
    assert.equal(2, #p.gpu)
    assert.equal(3, #p.marks)
    assert.same({ { at = 20000, on = false }, { at = 40000, on = true } }, p.samples)
    local e = report.entries({ processes = { p } }, { warmup = 0 })[1]
    assert.equal("ok", e.status)
    -- every step's iteration ends with its GPU work: step 2's at its mark
    local want = { 15100e-9, 17000e-9, 10000e-9 }
    for j = 1, 3 do assert.is_true(near(e.samples[j], want[j]), tostring(e.samples[j])) end
    -- the phases' GPU times are those of the steps recorded, 1 and 3
    assert.same({ 1, 3 }, e.trace.gpu_steps)
    local f = phase(e, "forward")
    assert.equal(2, #f.gpu)
    assert.is_true(near(f.gpu[1], 12000e-9) and near(f.gpu[2], 5000e-9))
    assert.equal(3, #f.cpu) -- the CPU times of every step measured
    assert.is_true(near(f.cpu[2], 4000e-9))
    assert.is_true(near(e.loop.phases[1].mean, 8500e-9))
    assert.equal(2, #e.trace.gpu_busy)
    local said = table.concat(e.notes or {}, "\n")
    assert.truthy(said:find("GPU work recorded on 2 of the 3 steps measured", 1, true), said)
  end)

  it("times a batch the loop made from the step before's end to the batch in hand", function()
    -- the hook's steps (domain wlrun.auto) with no DataLoader: the data range of the batch the
    -- loop made opens as the step before closes, its payload MADE + the time the batch was in
    -- hand (2800, before the range's end: the flag taken off, the data ends there)
    local made = tostring((1 << 61) + 2800)
    local text = table.concat({ "wltrace\t3\t7\t1\tprog", "G\ton", "S\t1\ttrain_step",
      "S\t2\tdata", "S\t3\tk", "S\t9\twlrun.auto",
      "R\t1\t7\t0\t1\t9\t1000\t2000\t16", "C\t2\t1\t1500",
      "K\t2\tkernel\t0\t7\t1600\t1900\t0\t3",
      "R\t2\t7\t0\t2\t9\t2100\t3000\t" .. made, "C\t1\t2\t2500",
      "K\t1\tkernel\t0\t7\t2600\t2700\t0\t3",
      "R\t3\t7\t0\t1\t9\t3000\t4000\t16", "X\texit" }, "\n") .. "\n"
    local e = report.entries({ processes = { read.parse(text, "7.wltrace") } }, { warmup = 0 })[1]
    assert.equal("ok", e.status)
    assert.equal("ranges", e.trace.data_source)
    assert.is_true(near(e.samples[1], 1000e-9), tostring(e.samples[1]))
    assert.is_true(near(e.loop.data[2], 700e-9), tostring(e.loop.data[2]))
    assert.equal(16, e.loop.batch_size)
  end)

  it("ends a step where the loop's own synchronisation after it returned", function()
    -- version 4: W records, the first synchronisation on the step's thread after its range closed
    -- with no GPU work started in between (src/trace/trace_waits.c); the template's step ends where
    -- its torch.cuda.synchronize() after the step returns, and so does the iteration
    local made = tostring((1 << 61) + 2800)
    -- wait: {entered, returned, the step's rid (default 1)}; between: a range of the program's
    -- opens at 2020 (hook: a DataLoader's fetch, of the hook's, in the program's own steps)
    local function entry(wait, between, domain, gpu_end, payload, other)
      local text = table.concat({ "wltrace\t4\t7\t1\tprog", "G\ton", "S\t1\ttrain_step",
        "S\t2\tdata", "S\t3\tk", "S\t4\tlog", "S\t9\twlrun.auto",
        ("R\t1\t7\t0\t1\t%d\t1000\t2000\t16"):format(domain), "C\t2\t1\t1500",
        ("K\t2\tkernel\t0\t7\t1600\t%d\t0\t3"):format(gpu_end or 1900),
        domain == 9 and "R\t2\t7\t0\t2\t9\t2000\t3000\t" .. (payload or made)
          or "R\t2\t7\t0\t2\t0\t2100\t2800\t-",
        between == "hook" and "R\t4\t7\t0\t2\t9\t2020\t2030\t-"
          or between and "R\t4\t7\t0\t4\t0\t2020\t2030\t-" or "S\t5\tunused",
        "C\t1\t2\t2500", "K\t1\tkernel\t0\t7\t2600\t2700\t0\t3",
        -- another thread's work, launched after the step's close, that the wait waits for too
        other and "C\t9\t0\t2030" or "S\t7\tunused",
        other and "K\t9\tkernel\t0\t8\t2040\t2140\t0\t3" or "S\t8\tunused",
        ("R\t3\t7\t0\t1\t%d\t3000\t4000\t16"):format(domain),
        wait and ("W\t7\t%d\t%d\t%d"):format(wait[3] or 1, wait[1], wait[2]) or "S\t6\tunused",
        "X\texit" }, "\n") .. "\n"
      return report.entries({ processes = { read.parse(text, "7.wltrace") } }, { warmup = 0 })[1]
    end
    for _, domain in ipairs { 9, 0 } do -- the hook's steps and a batch it made; the program's own
      local e = entry({ 2050, 2150 }, false, domain)
      assert.equal("ok", e.status)
      assert.is_true(near(e.samples[1], 1150e-9), tostring(e.samples[1]))
      -- the data: from the wait's return to the batch in hand (the made range's payload; the
      -- program's data range, its end)
      assert.is_true(near(e.loop.data[2], 650e-9), tostring(e.loop.data[2]))
      assert.equal(1, e.trace.waited_steps)
      -- the GPU's work ended before the range did: the wait is the CPU's, no run ahead
      assert.equal(0, e.trace.run_ahead.lag_mean)
      local said = table.concat(e.notes or {}, "\n")
      assert.truthy(said:find("1 of the 2 steps measured end where the loop's own "
        .. "synchronisation after them returned", 1, true), said)
      -- no wait; a range opened before it (the program's, or in the program's steps the hook's
      -- fetch); one entered after the next step began; another step's (the hook's step in the
      -- program's); one entered later than a tenth of the step after it, the GPU idle by then
      for k, x in ipairs { entry(nil, false, domain), entry({ 2050, 2150 }, true, domain),
        entry({ 2050, 2150 }, domain == 0 and "hook" or true, domain),
        entry({ 3500, 3600 }, false, domain), entry({ 2050, 2150, 5 }, false, domain),
        entry({ 2300, 2400 }, false, domain) } do
        assert.is_true(near(x.samples[1], 1000e-9), k .. ": " .. tostring(x.samples[1]))
        assert.is_nil(x.trace.waited_steps)
      end
    end
    -- entered that late while the step's GPU work still ran: it waited for the step (the hook's
    -- steps: no range of the program's opens before it)
    local e = entry({ 2300, 2400 }, false, 9, 2350)
    assert.is_true(near(e.samples[1], 1400e-9), tostring(e.samples[1]))
    assert.equal(1, e.trace.waited_steps)
    -- another thread's work launched after the step and before the wait, outlasting the step's:
    -- the wait waited for it, which is not the step's
    e = entry({ 2050, 2150 }, false, 9, nil, nil, true)
    assert.is_nil(e.trace.waited_steps)
    assert.is_true(near(e.samples[1], 1000e-9), tostring(e.samples[1]))
    -- the making closed as evaluated (a checkpoint or a validation after the wait): still the
    -- making's range, no range of other work
    e = entry({ 2050, 2150 }, false, 9, nil, tostring((1 << 61) + 1))
    assert.equal(1, e.trace.waited_steps)
    assert.is_true(near(e.samples[1], 1150e-9), tostring(e.samples[1]))
    -- the hook's step whose range the library ended at the wait's return (entered inside it):
    -- the step's end as its range's, said to be the wait's
    e = entry({ 1950, 2000 }, false, 9)
    assert.equal(1, e.trace.waited_steps)
    assert.is_true(near(e.samples[1], 1000e-9), tostring(e.samples[1]))
    -- and not where the step's GPU work outlasted it
    e = entry({ 1950, 2000 }, false, 9, 2050)
    assert.is_nil(e.trace.waited_steps)
    -- a wait that returns before the step's GPU work ends (a stream it did not wait for) ends no
    -- step
    e = entry({ 2010, 2020 }, false, 0, 2090)
    assert.is_nil(e.trace.waited_steps)
    assert.is_true(near(e.samples[1], 1090e-9), tostring(e.samples[1]))
    assert.is_true(near(e.trace.run_ahead.lag_mean, 45e-9), tostring(e.trace.run_ahead.lag_mean))
  end)

  it("begins a step where the loop's own synchronisation before it returned", function()
    -- version 5: B records, the last synchronisation on the step's thread before its range opened
    -- with no GPU work started after it; the template's t0 follows its torch.cuda.synchronize()
    -- before the step, its batch in hand before it: the step's window begins at its return (what
    -- the loop does before the step's first range, an autocast's entry, is the step's), the data
    -- ends at its entry
    local made = tostring((1 << 61) + 3000) -- the hook's made batch, in hand at the step's start
    -- wait: {entered, returned, the step's rid (default 3)}; between: a range of the program's
    -- opened at 2960
    local function entry(wait, domain, between)
      local text = table.concat({ "wltrace\t5\t7\t1\tprog", "G\ton", "S\t1\ttrain_step",
        "S\t2\tdata", "S\t3\tk", "S\t4\tlog", "S\t9\twlrun.auto",
        ("R\t1\t7\t0\t1\t%d\t1000\t2000\t16"):format(domain), "C\t2\t1\t1500",
        "K\t2\tkernel\t0\t7\t1600\t1900\t0\t3",
        domain == 9 and "R\t2\t7\t0\t2\t9\t2000\t3000\t" .. made
          or "R\t2\t7\t0\t2\t0\t2100\t2900\t-",
        between and "R\t4\t7\t0\t4\t0\t2960\t2970\t-" or "S\t5\tunused",
        wait and ("B\t7\t%d\t%d\t%d"):format(wait[3] or 3, wait[1], wait[2]) or "S\t6\tunused",
        ("R\t3\t7\t0\t1\t%d\t3000\t4000\t16"):format(domain), "C\t1\t3\t3500",
        "K\t1\tkernel\t0\t7\t3600\t3700\t0\t3", "X\texit" }, "\n") .. "\n"
      return report.entries({ processes = { read.parse(text, "7.wltrace") } }, { warmup = 0 })[1]
    end
    for _, domain in ipairs { 9, 0 } do -- the hook's steps and a batch it made; the program's own
      local e = entry({ 2850, 2950 }, domain)
      assert.equal("ok", e.status)
      assert.is_true(near(e.samples[2], 1050e-9), tostring(e.samples[2]))
      -- the data: from the step before's end to the wait's entry (the made range, or the
      -- program's data range, which it cuts: the batch is in hand before it)
      local want = domain == 9 and 850e-9 or 750e-9
      assert.is_true(near(e.loop.data[2], want), tostring(e.loop.data[2]))
      assert.equal(1, e.trace.began_steps)
      local said = table.concat(e.notes or {}, "\n")
      assert.truthy(said:find("1 of the 2 steps measured begin where the loop's own "
        .. "synchronisation before them returned", 1, true), said)
      -- no wait; one naming no step (another range's id); one with a range of the program's
      -- opened after it returned
      for k, x in ipairs { entry(nil, domain), entry({ 2850, 2950, 2 }, domain),
        entry({ 2850, 2950 }, domain, true) } do
        assert.is_true(near(x.samples[2], 1000e-9), k .. ": " .. tostring(x.samples[2]))
        assert.is_nil(x.trace.began_steps)
      end
      -- one that returned longer before the step than a tenth of it, or than windows.WAIT_MAX:
      -- the step begins at its range, the hook's too (what came between may be the loading, in
      -- no range: a batch taken from a producer thread's queue, a slice of a tensor already on
      -- the GPU, whose wait the template's data holds)
      e = entry({ 2700, 2800 }, domain)
      assert.is_true(near(e.samples[2], 1000e-9), tostring(e.samples[2]))
      assert.is_nil(e.trace.began_steps)
      local windows = require "wlrun.trace.windows"
      local max = windows.WAIT_MAX
      windows.WAIT_MAX = 30
      e = entry({ 2850, 2950 }, domain)
      windows.WAIT_MAX = max
      assert.is_nil(e.trace.began_steps)
    end
  end)

  it("begins a step not recorded at the synchronisation before it, where its idle mark is that",
    function()
    -- the library's idle mark at a step's start (correlation from 2^41, stream 0) where the loop
    -- synchronised the device before the boundary and launched nothing since: its time is the
    -- synchronisation's return, before the boundary (its C record); the step's end a set
    local idle = tostring(report.IDLE_MARKS)
    local function entry(wait, idle_at, start, stop)
      local text = table.concat({ "wltrace\t5\t7\t1\tprog", "G\ton", "S\t1\ttrain_step",
        "S\t3\tk", "S\t4\tevent",
        "R\t1\t7\t0\t1\t0\t1000\t2000\t-", "C\t1\t1\t1500",
        "K\t1\tkernel\t0\t7\t1600\t1900\t0\t3", "P\t2000\toff",
        ("B\t7\t3\t%d\t%d"):format(wait[1], wait[2]),
        ("R\t3\t7\t0\t1\t0\t%d\t%d\t-"):format(start, stop),
        ("C\t%s\t0\t%d"):format(idle, start - 1),
        ("K\t%s\tevent\t0\t0\t%d\t%d\t0\t4"):format(idle, idle_at, idle_at),
        ("C\t5\t0\t%d"):format(stop - 1),
        ("K\t5\tevent\t0\t7\t%d\t%d\t0\t4"):format(stop + 50, stop + 50), "X\texit" }, "\n")
        .. "\n"
      return report.entries({ processes = { read.parse(text, "7.wltrace") } }, { warmup = 0 })[1]
    end
    local e = entry({ 2850, 2950 }, 2950, 3000, 4000)
    assert.equal("ok", e.status)
    assert.equal(1, e.trace.began_steps)
    assert.is_true(near(e.samples[2], 1100e-9), tostring(e.samples[2])) -- 2950 to 4050
    -- an idle mark 3 ms before its boundary (the loop synchronised, then loaded its batch) is on
    -- the launches' clock all the same: the marks stay usable, the set ends the step
    e = entry({ 2500, 2600 }, 2600, 3000000, 4000000)
    assert.is_nil(e.trace.began_steps) -- (returned too long before the step)
    assert.is_true(near(e.samples[2], 1000050e-9), tostring(e.samples[2]))
    local said = table.concat(e.notes or {}, "\n")
    assert.is_nil(said:find("no usable mark", 1, true), said)
  end)

  it("says so where the steps not recorded have no usable mark, and ignores marks of another clock",
    function()
    local function entry(mark_time, warmup)
      local text = table.concat({ "wltrace\t3\t7\t1\tprog", "G\ton", "S\t1\ttrain_step",
        "S\t3\tk", "S\t4\tevent",
        "R\t1\t7\t0\t1\t0\t10000\t20000\t-", "C\t1\t1\t12000",
        "K\t1\tkernel\t0\t7\t13000\t25000\t0\t3", "P\t20000\toff",
        "R\t3\t7\t0\t1\t0\t30000\t40000\t-",
        mark_time and "C\t3\t0\t39999" or "C\t3\t1\t12000",
        mark_time and ("K\t3\tevent\t0\t7\t%d\t%d\t0\t4"):format(mark_time, mark_time)
          or "K\t3\tkernel\t0\t7\t13000\t14000\t0\t3", "X\texit" }, "\n") .. "\n"
      return report.entries({ processes = { read.parse(text, "7.wltrace") } },
        { warmup = warmup or 0 })[1]
    end
    for _, e in ipairs { entry(nil), entry(700000039999) } do -- none; one 700 s after its call
      assert.equal("ok", e.status)
      assert.is_true(near(e.samples[2], 10000e-9)) -- the range: nothing bounds it
      local said = table.concat(e.notes or {}, "\n")
      assert.truthy(said:find("no usable mark of where the others' GPU work ended", 1, true), said)
    end
    local e = entry(47000)
    assert.is_true(near(e.samples[2], 17000e-9))
    -- the one step measured was not recorded: CPU phases, and a note
    e = entry(47000, 1)
    assert.equal("ok", e.status)
    assert.is_nil(e.trace.gpu_steps)
    local said = table.concat(e.notes or {}, "\n")
    assert.truthy(said:find("no measured step had its GPU work recorded", 1, true), said)
  end)

  it("loads through the strict loader, compares and exports like a loop's", function()
    for _, dir in ipairs { "basic", "ranks", "cpu_only" } do
      local doc = doc_of(dir)
      assert.equal("python3 train.py", doc.scenario.name)
      local path = os.tmpname()
      require("wlrun.report").write(doc, path, "json")
      local back = require("wlrun.results.load").load(path)
      assert.same(doc.configurations[1].trace, back.configurations[1].trace)
      assert.same(doc.trace, back.trace)
      local cmp = require("wlrun.compare.document").compare(back, back, {})
      assert.truthy(cmp)
      local g = require("wlrun.tools.export").gbench(back)
      assert.equal(doc.configurations[1].stats.median * 1e9, g.benchmarks[1].real_time)
      for _, f in ipairs { "table", "plain", "csv", "markdown" } do
        assert.truthy(require("wlrun.report").render(back, f))
      end
      os.remove(path)
    end
  end)

  it("is refused by the loader when a trace field has the wrong type", function()
    local doc = doc_of("basic")
    doc.configurations[1].trace.phases[1].gpu[2] = "fast"
    local path = os.tmpname()
    require("wlrun.report").write(doc, path, "json")
    local ok, e = pcall(require("wlrun.results.load").load, path)
    assert.is_false(ok)
    assert.matches("configurations%[1%]%.trace%.phases%[1%]%.gpu%[2%] is not a finite number",
      e.message)
    os.remove(path)
  end)
end)
