-- Loop workloads: the summary and the bottleneck rule on recorded timings (no GPU needed).
local wl = require "wlrun"
local loop = require "wlrun.measure.loop"
local loop_summary = require "wlrun.report.loop_summary"

local function near(a, b, tol) return math.abs(a - b) <= (tol or 1e-9) * math.max(1,
  math.abs(b)) end

local function record(iter, data, phases)
  local r = { batch_size = 256, iter = {}, data = {}, phases = {} }
  for i = 1, #iter do
    r.iter[i], r.data[i] = iter[i], data[i]
    r.phases[i] = phases and phases(i) or {}
  end
  return r
end

describe("loop summary", function()
  it("computes throughput from the steady-state total time, not a mean of rates", function()
    -- two iterations: 10 ms and 30 ms, no data time; rates 25600/s and 8533/s average 17067/s,
    -- but 512 samples in 40 ms is 12800/s
    local s = loop.summarize(record({ 0.010, 0.030 }, { 0, 0 }))
    assert.is_true(near(s.throughput, 512 / 0.040))
    assert.equal(2, s.iters)
    assert.is_true(near(s.iter.mean, 0.020))
    assert.is_true(near(s.total_time, 0.040))
  end)

  it("counts data time in the total and reports the data / iter ratio", function()
    local s = loop.summarize(record({ 0.010, 0.010, 0.010, 0.010 }, { 0.001, 0.001, 0.001, 0.001 }))
    assert.is_true(near(s.data_ratio, 0.1))
    assert.is_true(near(s.throughput, 4 * 256 / 0.044))
    assert.is_true(near(s.data.median, 0.001))
    assert.equal(0, #s.warnings)
  end)

  it("says data loading is the bottleneck above 20 %, with a code", function()
    local s = loop.summarize(record({ 0.010, 0.010 }, { 0.003, 0.003 }))
    assert.equal(1, #s.warnings)
    assert.equal("data-bottleneck", s.warnings[1].code)
    assert.matches("data loading takes 30%% of the step time", s.warnings[1].message)
    -- exactly 20 % is not above the rule
    assert.equal(0, #loop.summarize(record({ 0.010 }, { 0.002 })).warnings)
  end)

  it("breaks the step down by phase and shows what is outside them", function()
    local s = loop.summarize(record({ 0.010, 0.012 }, { 0, 0 }, function(i)
      return { { name = "forward", time = 0.004, top = true },
        { name = "backward", time = 0.005, top = true },
               { name = "inner", time = 0.001, top = false } }
    end))
    assert.equal(3, #s.phases)
    assert.equal("forward", s.phases[1].name)
    assert.is_true(near(s.phases[1].mean, 0.004))
    assert.is_true(near(s.phases[2].share, 0.005 / 0.011))
    assert.is_true(near(s.outside.mean, 0.011 - 0.009))
    assert.is_true(s.phases_consistent)
  end)

  it("flags phases that add up to more than the step (overlap)", function()
    local s = loop.summarize(record({ 0.010 }, { 0 }, function()
      return { { name = "a", time = 0.008, top = true }, { name = "b", time = 0.008, top = true } }
    end))
    assert.is_false(s.phases_consistent)
    assert.equal("phase-overlap", s.warnings[1].code)
  end)

  it("prints per-iteration lines in the methodology's form", function()
    -- the methodology's example: 128 samples in a 12.31 ms step
    assert.equal("[0007]: iter 12.31 ms, data 1.20 ms, fps 10398.1",
      loop.format_line(7, 0.01231, 0.0012, 128))
  end)

  it("prints a summary with iter and data statistics and the phases", function()
    local s = loop.summarize(record({ 0.010, 0.012 }, { 0.004, 0.004 }, function()
      return { { name = "forward", time = 0.006, top = true } }
    end))
    local text = loop_summary.render(s, "mlp")
    assert.matches("^mlp: 2 iterations of 256 samples: [%d.]+ samples/s", text)
    assert.matches("\n  iter  mean 11 ms  median 11 ms  p90 [%d.]+ ms  p99 [%d.]+ ms", text)
    assert.matches("\n  data  mean 4 ms", text)
    assert.matches("forward", text)
    assert.matches("%(outside%)", text)
    assert.matches("warning %[data%-bottleneck%]", text)
  end)
end)

describe("loop MFU", function()
  it("achieved FLOP/s is FLOP per sample times samples/s; MFU is that over the dense peak",
    function()
    local entry = { status = "ok", metrics = {} }
    loop.record(entry, record({ 0.010, 0.010 }, { 0, 0 }), 0) -- 256 samples per 10 ms
    -- a device whose dense bf16 peak is 1e15 FLOP/s: 4096 FLOP per clock on one SM at 2.44e11 Hz
    loop.add_mfu(entry, 2e9, "bf16", { arch = "sm_90", sm_count = 1, sm_clock_khz = 244140625 })
    assert.is_true(near(entry.loop.achieved_flops, 2e9 * 25600))
    assert.is_true(near(entry.loop.mfu, 2e9 * 25600 / 1e15))
    assert.is_true(near(entry.metrics.mfu, entry.loop.mfu))
    assert.equal("bf16", entry.loop.dtype)
    local text = require("wlrun.report.loop_summary").render(
      require("wlrun.report.loop_summary").of_entry(entry), "m")
    assert.matches(
      "51%.2 TFLOP/s %(2e%+09 FLOP per sample%); MFU 5%.1%% of the dense bf16 peak, 1 PFLOP/s",
      text)
    -- without a peak: the achieved FLOP/s, no MFU, and a note that says why
    local bare = { status = "ok", metrics = {} }
    loop.record(bare, record({ 0.010 }, { 0 }), 0)
    loop.add_mfu(bare, 1e9, "f32", nil, "no device")
    assert.is_nil(bare.loop.mfu)
    assert.matches("no MFU: no device", bare.notes[1])
  end)

  it("refuses a flops_per_sample that is not a positive number, and an unknown dtype", function()
    local function declare(extra)
      local spec = { name = "m", batch_size = 1, data = function() end, step = function() end }
      for k, v in pairs(extra) do spec[k] = v end
      return pcall(wl.loop, spec)
    end
    local ok, e = declare { flops_per_sample = -1 }
    assert.is_false(ok)
    assert.matches("flops_per_sample must be a number > 0", e.message)
    ok, e = declare { flops_per_sample = 1e9, dtype = "f64" }
    assert.is_false(ok)
    assert.matches("dtype must be one of f32, tf32, bf16, f16", e.message)
    assert.is_true((declare { flops_per_sample = function(p) return 1 end, dtype = "tf32" }))
  end)
end)

describe("wl.loop and wl.phase", function()
  it("declares a loop scenario and validates it", function()
    local s = wl.loop { name = "l", batch_size = 8, data = function() end, step = function() end }
    assert.is_true(wl.is_scenario(s))
    -- the loop's defaults, where nothing else sets them
    assert.equal(5, (loop.count(s.loop, "warmup")))
    assert.equal(30, (loop.count(s.loop, "iters")))
    assert.has_error(function() wl.loop { name = "l", batch_size = 8, data = function() end } end)
    assert.has_error(function() wl.loop { name = "l", batch_size = 0, data = function() end,
      step = function() end } end)
    assert.has_error(function() wl.loop { name = "l", batch_size = 8, data = function() end,
      step = function() end, itres = 3 } end,
      nil)
  end)

  it("wl.phase outside a loop just calls the function", function()
    assert.equal(7, select(2, wl.phase("x", function(a) return a, 7 end, 1)))
    assert.has_error(function() wl.phase(3) end)
  end)
end)
