-- The warning logic on synthetic results (no GPU): each warning fires on its planted case,
-- and a clean result gets none.
local checks = require "wlrun.measure.checks"

local function result(over)
  local r = {
    mode = "cold", per = 1, flush_l2 = false,
    floor = { event_pair = 1.7e-6, empty_kernel = 5.7e-6 },
    stats = { n = 100, median = 1e-3, mean = 1e-3, std = 5e-6, cv = 0.005, iqr = 6e-6 },
    enqueue_stats = { median = 4e-6 },
    shape = { far_outliers = 0, bimodal = false, trend_rho = 0.01, trend_z = 0.1,
      trend_change = 0 },
    watch = { syncs = 0, allocs = 0 },
    clock = { before = { sm_mhz = 1980, reasons = {} }, after = { sm_mhz = 1980, reasons = {} } },
  }
  for k, v in pairs(over or {}) do r[k] = v end
  return r
end

local device = { l2_bytes = 60 * 2 ^ 20 }

local function codes(r, ctx)
  local c = {}
  for _, w in ipairs(checks.evaluate(r, ctx or { device = device })) do
    assert.is_string(w.message)
    assert.is_string(w.hint)
    c[#c + 1] = w.code
  end
  table.sort(c)
  return table.concat(c, ",")
end

describe("checks", function()
  it("finds nothing wrong with a clean result", function()
    assert.equal("", codes(result(), { device = device, working_set = 2 ^ 31, zero_inputs = {} }))
  end)

  it("warns on each planted anti-pattern", function()
    assert.equal("alloc-in-measure", codes(result { watch = { syncs = 0, allocs = 3 } }))
    assert.equal("sync-in-measure", codes(result { watch = { syncs = 1, allocs = 0 } }))
    local short = result()
    short.stats = { n = 100, median = 20e-6, mean = 20e-6, std = 1e-7, cv = 0.005, iqr = 1e-7 }
    assert.equal("short-sample", codes(short))
    local noisy = result()
    noisy.stats = { n = 100, median = 1e-3, mean = 1.1e-3, std = 1e-4, cv = 0.1, iqr = 1e-4 }
    assert.equal("high-noise", codes(noisy))
    assert.equal("outliers", codes(result { shape = { far_outliers = 5, bimodal = false,
      trend_rho = 0, trend_z = 0, trend_change = 0 } }))
    -- with the samples at hand only outliers far from the median count
    local samples = {}
    for i = 1, 100 do samples[i] = 1e-3 end
    samples[7], samples[50], samples[90] = 1.002e-3, 1.003e-3, 1.004e-3
    local steady = result { samples = samples, shape = { far_outliers = 3, far_fence_low = 0.999e-3,
      far_fence_high = 1.001e-3,
      bimodal = false, trend_rho = 0, trend_z = 0, trend_change = 0 } }
    assert.equal("", codes(steady))
    samples[7], samples[50], samples[90] = 2e-3, 1.5e-3, 1.3e-3
    assert.equal("outliers", codes(steady))
    assert.equal("bimodal", codes(result { shape = { far_outliers = 0, bimodal = true,
      mode_low = 1e-3, mode_high = 1.2e-3, trend_rho = 0, trend_z = 0, trend_change = 0 } }))
    assert.equal("", codes(result { shape = { far_outliers = 0, bimodal = true, mode_low = 1e-3,
      mode_high = 1.02e-3, trend_rho = 0, trend_z = 0, trend_change = 0 } }))
    assert.equal("warmup-trend", codes(result { shape = { far_outliers = 0, bimodal = false,
      trend_rho = -0.5, trend_z = -8, trend_change = 0.1 } }))
    assert.equal("cache-hot", codes(result(), { device = device, working_set = 8 * 2 ^ 20 }))
    assert.equal("", codes(result { flush_l2 = true },
      { device = device, working_set = 8 * 2 ^ 20 }))
    assert.equal("zero-inputs", codes(result(), { device = device,
      zero_inputs = { "argument 2 of scale" } }))
    assert.equal("launch-bound", codes(result { enqueue_stats = { median = 2e-3 } }))
    assert.equal("launch-bound", codes(result { enqueue_stats = { median = 0.9e-3 } }))
    assert.equal("", codes(result { enqueue_stats = { median = 0.5e-3 } }))
    assert.equal("throttled", codes(result { clock = { before = { sm_mhz = 1980, reasons = {} },
      after = { sm_mhz = 1500, reasons = {} } } }))
    assert.equal("throttled", codes(result { clock = { before = { sm_mhz = 1980, reasons = {} },
      after = { sm_mhz = 1980, reasons = { "sw_power_cap" } } } }))
    assert.equal("adaptive-timeout", codes(result {
      adaptive = { converged = false, noise = 0.02, target = 0.005, elapsed = 15 } }))
  end)

  it(
    "warns of throttled chunks kept past the discard limit, even when the clock recovered "
    .. "by the end", function()
    local throttle = { discarded_chunks = 10, discarded_samples = 500, kept_chunks = 3,
      reasons = { "hw_slowdown" } }
    local w = checks.evaluate(result { throttle = throttle }, {})
    assert.equal(1, #w)
    assert.equal("throttled", w[1].code)
    assert.matches("; 3 chunks taken while the GPU throttled kept after 10 discarded$",
      w[1].message)
    throttle.kept_chunks = 0 -- all discarded: the samples kept are clean
    assert.equal("", codes(result { throttle = throttle }))
  end)

  it("does not flag a mild trend or a graph-mode result that is long enough", function()
    assert.equal("", codes(result { shape = { far_outliers = 0, bimodal = false, trend_rho = -0.5,
      trend_z = -8, trend_change = 0.005 } }))
    local g = result { mode = "graph", per = 20 }
    g.stats = { n = 100, median = 5e-6, mean = 5e-6, std = 1e-8, cv = 0.002, iqr = 2e-8 }
    assert.equal("", codes(g))
  end)

  it("every code has a title", function()
    for code, title in pairs(checks.codes) do
      assert.matches("^[a-z%-]+$", code)
      assert.is_string(title)
    end
  end)
end)

describe("median noise", function()
  local bench = require "wlrun.measure.bench"
  it("is the relative half-width of the median's 95 % interval", function()
    local same = {}
    for i = 1, 100 do same[i] = 1.0 end
    assert.equal(0, bench.median_noise(same))
    local spread = {}
    for i = 1, 100 do spread[i] = 1 + (i % 10) / 100 end
    local n = bench.median_noise(spread)
    assert.is_true(n > 0 and n < 0.05, n)
    assert.equal(math.huge, bench.median_noise { 1, 2, 3 })
    -- nothing to say of a NaN
    assert.equal(math.huge, bench.median_noise { 1, 2, 3, 0 / 0, 5, 6, 7 })
    assert.equal(math.huge, bench.median_noise { 1, 2, 3, "4", 5, 6, 7 }) -- nor of a string
  end)

  it("is, in C, the order statistics of the sorted samples, on random and tied samples", function()
    local function lua_noise(samples) -- the definition, as it was written in Lua
      local n = #samples
      if n < 6 then return math.huge end
      local c = table.move(samples, 1, n, 1, {})
      table.sort(c)
      local h = 1.96 * math.sqrt(n) / 2
      local j, k = math.max(1, math.floor(n / 2 - h)), math.min(n, math.ceil(n / 2 + h + 1))
      local m = n % 2 == 1 and c[(n + 1) // 2] or (c[n // 2] + c[n // 2 + 1]) / 2
      return m > 0 and (c[k] - c[j]) / 2 / m or math.huge
    end
    local rng = require("wlrun.compare.stats").rng(7) -- its seeded PRNG
    for trial = 1, 500 do
      local n, s = trial % 97, {}
      for i = 1, n do s[i] = trial % 3 == 0 and (1 + rng:uniform() * 5 // 1) * 32e-9
        or rng:uniform() * 1e-5 end
      assert.equal(lua_noise(s), bench.median_noise(s))
    end
  end)
end)

describe("why adaptive stopping reached a plateau", function()
  local function chunks(medians)
    local list = {}
    for i, m in ipairs(medians) do list[i] = { n = 500, median = m, noise = 0.01 } end
    return list
  end

  it("names a drift of the chunks' medians, with the SM clock before and after", function()
    local cause = checks.plateau_cause {
      adaptive = { target = 0.005 }, adaptive_chunks = chunks { 100e-6, 100.1e-6, 102e-6,
        102.1e-6 },
      clock = { chunks = { 1980, 1980, 1755, 1755 } }, stats = { median = 101e-6 }, shape = {},
    }
    assert.matches(
      "a drift: the chunks' medians moved by +2.00% from the first half of the measurement to "
      .. "the second", cause, 1, true)
    assert.matches("the SM clock 1980 to 1755 MHz", cause, 1, true)
  end)

  it("names two groups of samples when the chunks agree", function()
    local cause = checks.plateau_cause {
      adaptive = { target = 0.005 }, adaptive_chunks = chunks { 76.6e-6, 76.61e-6, 76.6e-6,
        76.6e-6 },
      stats = { median = 76.6e-6 }, shape = { mode_low = 76.2e-6, mode_high = 76.9e-6 },
    }
    assert.matches("two groups of samples (about 76.2 us and 76.9 us) with the median between them",
      cause, 1, true)
  end)

  it("says the chunks scatter otherwise", function()
    local cause = checks.plateau_cause {
      adaptive = { target = 0.005 }, adaptive_chunks = chunks { 76.6e-6, 76.9e-6, 76.5e-6,
        76.7e-6 },
      stats = { median = 76.6e-6 }, shape = { mode_low = 76.6e-6, mode_high = 76.6e-6 },
    }
    assert.matches("the chunks' medians scatter over 0.52% (76.5 us to 76.9 us) with no drift",
      cause, 1, true)
  end)
end)
