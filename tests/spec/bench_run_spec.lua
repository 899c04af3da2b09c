-- wl.bench's engine (lua/wlrun/measure/bench.lua, bench.run) on the CPU, through a simulated timing
-- engine and a virtual clock: the same module with `wlrun.engine` (src/engine/cuda_timing.c's timed
-- loops) and the device readings replaced by ones that give known samples and advance the clock
-- by what the samples would have cost. What runs is all of bench.run's own logic: the warmup,
-- auto's choice of mode, the chunks and their NVML readings, throttled chunks discarded, the
-- stopping rules, the result's fields and warnings. The timed loops themselves are the GPU
-- specs' (tests/gpu).
local core = require "wlrun.core"

-- a virtual clock; sample(i) -> the GPU seconds of the i-th sample taken; enqueue(i) -> the
-- host seconds its enqueue took (2 us unless given); flush: the wall seconds an L2 flush adds
-- to a cold sample; mhz(i) -> the SM clock after the i-th chunk
local function simulation(o)
  local sim = { t = 0, taken = 0, calls = {}, chunks = 0, flush = o.flush or 0 }
  local function samples(n, extra)
    local gpu, enqueue = {}, {}
    for i = 1, n do
      sim.taken = sim.taken + 1
      gpu[i] = o.sample(sim.taken)
      enqueue[i] = o.enqueue and o.enqueue(sim.taken) or 2e-6
      sim.t = sim.t + gpu[i] + (extra or 0) + 1e-6
    end
    return { gpu = gpu, enqueue = enqueue }
  end
  sim.engine = {
    time_cold = function(_, n, flush, blocked)
      sim.calls[#sim.calls + 1] = { "cold", n, flush, blocked }
      local c = samples(n, flush and sim.flush or 3e-6)
      if blocked then c.blocked = { gave_up = 0, kept = 0 } end
      return c
    end,
    time_batch = function(_, n, per)
      sim.calls[#sim.calls + 1] = { "batch", n, per }
      return samples(n)
    end,
    time_graph = function(_, n, per)
      sim.calls[#sim.calls + 1] = { "graph", n, per }
      return samples(n)
    end,
    time_host = function(_, n) return samples(n) end,
    timing_floor = function() return { event_pair = 2e-6, empty_kernel = 4e-6 } end,
    count_nonzero = function() return 1 end,
    set_measuring = function() end,
    watch = function() return { allocs = 0, syncs = 0 } end,
    cupti_ready = function() if o.cupti then return true end return false,
      "taken by a profiler" end,
    time_cupti = function(_, n, flush)
      sim.calls[#sim.calls + 1] = { "cupti", n, flush }
      local c = samples(n, flush and sim.flush or 0)
      c.span, c.unattributed, c.kernels = c.gpu, 0, { { name = "k", durations = c.gpu } }
      return c
    end,
  }
  sim.patch = {
    clock = function() return sim.t end,
    sleep = function(s) sim.t = sim.t + s end,
    gpu_sample = function()
      sim.chunks = sim.chunks + 1
      return { sm_mhz = o.mhz and o.mhz(sim.chunks) or 1980, throttle = {}, energy_j = sim.t * 300,
               used_bytes = 1 << 30 }
    end,
    gpu_clock = function() return { sm_mhz = 1980, max_sm_mhz = 1980, nvml = true,
      reasons = {} } end,
    compile_only = function() return false end,
    is_launch = function(w) return type(w) == "table" and w.simulated == true end,
    launch_capturable = function() return true end,
    device = function() return { l2_bytes = 60 << 20 } end,
  }
  return sim
end

-- runs fn(bench) with bench.run using simulation sim; everything patched is restored
local function with(sim, fn)
  local saved_core, saved = {}, {}
  for k, v in pairs(sim.patch) do saved_core[k], core[k] = core[k], v end
  for _, name in ipairs { "wlrun.engine", "wlrun.measure.bench", "wlrun.measure.kernel_times" } do
    saved[name] = package.loaded[name] end
  package.loaded["wlrun.engine"], package.loaded["wlrun.measure.bench"],
    package.loaded["wlrun.measure.kernel_times"] = sim.engine, nil, nil
  local ok, err = pcall(function() fn(require "wlrun.measure.bench") end)
  for k, v in pairs(saved_core) do core[k] = v end
  for name, v in pairs(saved) do package.loaded[name] = v end
  if not ok then error(err, 0) end
end

-- a bound launch of one kernel, as far as bench.run looks at it
local function launch()
  return setmetatable({ simulated = true, kernel = { name = "k", kind = "kernel" }, tensors = {} },
    {})
end

local function steady(seconds) return function(i) return seconds * (1 + 0.001 * (i % 7)) end end

describe("wl.bench's engine, simulated", function()
  it("takes fixed iterations in chunks of about 50 ms, with an NVML reading after each", function()
    local sim = simulation { sample = steady(200e-6) }
    with(sim, function(bench)
      local r = bench.run(launch(), { mode = "cold", warmup = 10, iters = 6000 })
      assert.equal(6000, #r.samples)
      assert.equal("cold", r.mode)
      assert.is_true(#r.clock.chunks >= 20 and #r.clock.chunks <= 30, "chunks: " .. #r.clock.chunks)
      assert.near(200e-6, r.stats.median, 1e-6)
      -- the phases' account (entry.wall): the timed loops are part of measure
      assert.is_true(r.wall.chunks > 6000 * 200e-6 and r.wall.chunks <= r.wall.measure + 1e-9)
      assert.is_true(r.wall.floor >= 0 and r.wall.warmup > 0 and r.wall.clocks >= 0,
        require("wlrun.json").encode(r.wall))
      assert.is_true(r.wall.inputs >= 0 and r.wall.summary >= 0,
        require("wlrun.json").encode(r.wall))
      assert.same({}, r.warnings)
    end)
  end)

  it("stops an adaptive measurement at the target and says so", function()
    local sim = simulation { sample = steady(100e-6) }
    with(sim, function(bench)
      local r = bench.run(launch(), { mode = "cold", warmup = 5, adaptive = true, min_samples = 10,
        max_time = 3 })
      assert.equal("target", r.adaptive.stopped)
      assert.is_true(r.adaptive.converged)
      assert.is_true(r.adaptive.noise <= r.adaptive.target)
    end)
  end)

  it("stops at max_time when the noise never meets the target, with the adaptive-timeout warning",
    function()
    local sim = simulation { sample = function(i) return 100e-6 * (
      1 + 0.5 * ((i * 7919) % 13) / 13 + 0.001 * i) end }
    with(sim, function(bench)
      local r = bench.run(launch(), { mode = "cold", warmup = 5, adaptive = true,
        target_noise = 0.0001, max_time = 1 })
      assert.is_true(r.adaptive.stopped == "max_time" or r.adaptive.stopped == "plateau",
        r.adaptive.stopped)
      local codes = {}
      for _, w in ipairs(r.warnings) do codes[#codes + 1] = w.code end
      assert.matches("adaptive%-", table.concat(codes, " "))
    end)
  end)

  it("discards the chunks taken while the SM clock was below 75 % of the highest, after a pause",
    function()
    -- readings: 1 before the first chunk, 3 after the second (throttled: discarded; a pause), 4
    -- after the second taken again (throttled; a pause), 5 after it is taken a third time
    local sim = simulation { sample = steady(200e-6),
      mhz = function(i) return (i == 3 or i == 4) and 1000 or 1980 end }
    with(sim, function(bench)
      local r = bench.run(launch(), { mode = "cold", warmup = 10, iters = 2000 })
      assert.equal(2000, #r.samples)
      assert.equal(2, r.throttle.discarded_chunks)
      assert.matches("throttle: 2 chunks", table.concat(r.notes, "\n"))
    end)
  end)

  it(
    "takes a rotation list's samples in chunks of whole rotations (each chunk begins again from "
    .. "the first item)", function()
    local sim = simulation { sample = steady(200e-6) }
    with(sim, function(bench)
      local r = bench.run({ launch(), launch() },
        { mode = "cold", warmup = 3, adaptive = true, min_samples = 11,
        target_noise = "0.0001%", max_time = 0.2 })
      assert.equal(3, sim.calls[1][2]) -- the warmup's
      assert.is_true(#sim.calls > 3, #sim.calls)
      for i = 2, #sim.calls do
        assert.equal(0, sim.calls[i][2] % 2, ("chunk %d: %d samples"):format(i, sim.calls[i][2]))
      end
      assert.equal(0, #r.samples % 2)
    end)
  end)

  it(
    "runs a scenario's check on the output of the warmup's first launch, outside the watch, and "
    .. "keeps that sample", function()
    local sim = simulation { sample = steady(200e-6) }
    local measuring, order = false, {}
    sim.engine.set_measuring = function(on) measuring = on end
    with(sim, function(bench)
      local r = bench.run(launch(), { mode = "cold", warmup = 3, iters = 50 }, function(run_once)
        order[#order + 1] = "check begins, measuring " .. tostring(measuring)
        run_once()
        order[#order + 1] = ("ran %d launch"):format(sim.taken)
      end)
      assert.same({ "check begins, measuring false", "ran 1 launch" }, order)
      assert.same({ "cold", 1, false }, { sim.calls[1][1], sim.calls[1][2], sim.calls[1][3] })
      -- the rest of the warmup
      assert.same({ "cold", 2, false }, { sim.calls[2][1], sim.calls[2][2], sim.calls[2][3] })
      assert.equal(3, r.warmup.n)
      assert.equal(50, #r.samples)
    end)
  end)

  it(
    "decides auto's mode by a launch after the configuration's first, which may hold "
    .. "one-time costs", function()
    -- the first launch takes 1 ms, spent in its enqueue (a module loaded, a library's first
    -- call) while the GPU waited; the others 5 us
    local one_time = { sample = function(i) return i == 1 and 1e-3 or 5e-6 end,
                       enqueue = function(i) return i == 1 and 0.997e-3 or 2e-6 end }
    local sim = simulation(one_time)
    with(sim, function(bench)
      local r = bench.run(launch(), { mode = "auto", warmup = 1, iters = 50 },
        function(run_once) run_once() end)
      assert.equal("graph", r.mode) -- 5 us is within 10x of the 4 us floor; 1 ms is not
      assert.equal(2, r.warmup.n) -- the check's launch, and one more to decide by
      assert.matches("about 5 us", table.concat(r.notes, "\n"))
    end)
    sim = simulation(one_time)
    with(sim, function(bench)
      local r = bench.run(launch(), { mode = "cold", warmup = 1, iters = 50 },
        function(run_once) run_once() end)
      assert.equal(1, r.warmup.n) -- cold decides nothing by it: no launch more
    end)
  end)

  it(
    "decides auto's mode by the first launch alone when, less its enqueue, it is long beyond doubt",
    function()
    -- 1 ms of GPU time for 2 us of enqueue: 4x auto's line (10x the 4 us floor) is 160 us
    local sim = simulation { sample = steady(1e-3) }
    with(sim, function(bench)
      local r = bench.run(launch(), { mode = "auto", warmup = 1, iters = 20 },
        function(run_once) run_once() end)
      assert.equal("cold", r.mode)
      assert.equal(1, r.warmup.n) -- the check's launch decided
      assert.equal(21, sim.taken)
      assert.matches("about 999 us", table.concat(r.notes, "\n")) -- 1.001 ms less its 2 us enqueue
    end)
    -- 150 us of GPU time is beyond the line (40 us) but not 4x beyond it: a launch more
    sim = simulation { sample = steady(150e-6) }
    with(sim, function(bench)
      local r = bench.run(launch(), { mode = "auto", warmup = 1, iters = 20 },
        function(run_once) run_once() end)
      assert.equal("cold", r.mode)
      assert.equal(2, r.warmup.n)
    end)
    -- graph and batch size their samples by the launch after the first, whatever the first says
    sim = simulation { sample = steady(1e-3) }
    with(sim, function(bench)
      local r = bench.run(launch(), { mode = "graph", warmup = 1, iters = 20 },
        function(run_once) run_once() end)
      assert.equal(2, r.warmup.n)
    end)
    -- a rotation list: every item's first launch must say it
    sim = simulation { sample = function(i) return i == 2 and 20e-6 or 1e-3 end }
    with(sim, function(bench)
      local r = bench.run({ launch(), launch() }, { mode = "auto", warmup = 1, iters = 20 },
        function(run_once) run_once() end)
      assert.equal(4, r.warmup.n)
    end)
    -- ... and every item must have had one: without a check, a warmup of 1 launched the first
    -- item only, whose 1 ms says nothing of the second's
    sim = simulation { sample = function(i) return i % 2 == 1 and 1e-3 or 5e-6 end }
    with(sim, function(bench)
      local r = bench.run({ launch(), launch() }, { mode = "auto", warmup = 1, iters = 20 })
      assert.equal(3, r.warmup.n) -- the first item, then a whole rotation
    end)
    -- a whole rotation, each long: no launch more
    sim = simulation { sample = steady(1e-3) }
    with(sim, function(bench)
      local r = bench.run({ launch(), launch() }, { mode = "auto", warmup = 2, iters = 20 })
      assert.equal(2, r.warmup.n)
      assert.equal("cold", r.mode)
    end)
  end)

  it("queues flushed cold samples behind the blocking kernel in auto mode", function()
    local sim = simulation { sample = steady(5e-6), flush = 40e-6 }
    with(sim, function(bench)
      local r = bench.run(launch(), { mode = "auto", flush_l2 = true, warmup = 5, iters = 500 })
      assert.equal("cold", r.mode)
      assert.truthy(r.blocked)
      assert.is_true(r.flush_l2)
      local last = sim.calls[#sim.calls]
      assert.same({ "cold", last[2], true, true }, last)
    end)
  end)

  it(
    "times a short kernel as graphs where CUPTI is not free, the event pair's floor 0.5 % of "
    .. "a sample", function()
    local sim = simulation { sample = steady(5e-6) }
    with(sim, function(bench)
      local r = bench.run(launch(), { mode = "auto", warmup = 5, iters = 100 })
      assert.equal("graph", r.mode)
      assert.equal(80, r.per) -- 2 us of event pair / (0.5 % of 5 us); 100 us alone would be 20
      assert.matches("auto: CUPTI is not free here (taken by a profiler); a launch takes about 5.0",
        table.concat(r.notes, "\n"), 1, true)
    end)
    sim = simulation { sample = steady(50e-6) }
    with(sim, function(bench)
      -- ceil(2 / 0.25)
      assert.equal(8, bench.run(launch(), { mode = "batch", warmup = 5, iters = 10 }).per)
      -- as asked
      assert.equal(3, bench.run(launch(), { mode = "batch", warmup = 5, iters = 10,
        batch = 3 }).per)
    end)
  end)

  it("times every kernel in cupti mode wherever CUPTI is free, warm or flushed, short or long",
    function()
    for _, case in ipairs { { 5e-6, false }, { 5e-6, true }, { 1e-3, false }, { 1e-3, true } } do
      local sim = simulation { sample = steady(case[1]), flush = 40e-6, cupti = true }
      with(sim, function(bench)
        local r = bench.run({ launch(), launch() },
          { mode = "auto", flush_l2 = case[2], warmup = 5, iters = 100 })
        assert.equal("cupti", r.mode)
        assert.equal(case[2], r.flush_l2)
        assert.equal(100, #r.samples)
        assert.same({ "cupti", case[2] }, { sim.calls[#sim.calls][1], sim.calls[#sim.calls][3] })
        assert.matches(case[2] and "the kernel's own time with the L2 flushed before each"
          or "the kernel's own time, warm",
          table.concat(r.notes, "\n"), 1, true)
        assert.near(case[1], r.stats.median, case[1] * 0.01)
      end)
    end
    -- work that is not one kernel a sample (a function) is timed with events
    local sim = simulation { sample = steady(1e-3), cupti = true }
    with(sim, function(bench)
      local r = bench.run(function() end, { mode = "auto", warmup = 5, iters = 20 })
      assert.equal("cold", r.mode)
      assert.matches("the work is not one bound kernel a sample", table.concat(r.notes, "\n"), 1,
        true)
      assert.matches(
        "cold: each sample holds the GPU's own cost of one launch between its events, up to the "
        .. "cold-launch floor (4 us, 0.4 % of the median)", table.concat(r.notes, "\n"), 1, true)
    end)
  end)

  it(
    "sizes chunks by what a sample really costs: a flushed 5 us kernel meets its target in a "
    .. "first chunk of 1000", function()
    local sim = simulation { sample = steady(5e-6), flush = 40e-6 }
    with(sim, function(bench)
      local r = bench.run(launch(), { mode = "cold", flush_l2 = true, warmup = 5, adaptive = true,
        min_samples = 10,
        max_time = 3 })
      assert.equal("target", r.adaptive.stopped)
      -- 5 ms by the estimate
      assert.is_true(#r.samples > 900 and #r.samples <= 1000, tostring(#r.samples))
      -- not the 10,000 samples of old
      assert.is_true(r.adaptive.elapsed < 0.06, tostring(r.adaptive.elapsed))
    end)
  end)
end)
