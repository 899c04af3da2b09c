local wl = require "wlrun"

local function near(a, b, tol) return math.abs(a - b) <= (tol or 1e-12) end

describe("wl.stats", function()
  it("summarises an even number of samples", function()
    local s = wl.stats.summary { 4, 1, 3, 2 }
    assert.equal(4, s.n)
    assert.is_true(near(s.mean, 2.5))
    assert.is_true(near(s.median, 2.5))
    assert.is_true(near(s.std, math.sqrt(5 / 3)))
    assert.is_true(near(s.p25, 1.75) and near(s.p75, 3.25) and near(s.iqr, 1.5))
    assert.is_true(near(s.p10, 1.3) and near(s.p90, 3.7) and near(s.p99, 3.97))
    assert.equal(1, s.min)
    assert.equal(4, s.max)
  end)

  it("summarises one sample", function()
    local s = wl.stats.summary { 7.5 }
    assert.equal(1, s.n)
    assert.equal(7.5, s.median)
    assert.equal(0, s.std)
    assert.equal(0, s.cv)
  end)

  it("gives percentiles by linear interpolation", function()
    assert.is_true(near(wl.stats.percentile({ 1, 2, 3 }, 90), 2.8))
    assert.equal(1, wl.stats.percentile({ 3, 1, 2 }, 0))
    assert.equal(3, wl.stats.percentile({ 3, 1, 2 }, 100))
  end)

  it("refuses empty, non-numeric and non-finite samples", function()
    assert.has_error(function() wl.stats.summary {} end)
    assert.error_matches(function() wl.stats.summary { 1, "x" } end,
      "stats_spec%.lua:%d+: sample 2 is string, expected a finite number$")
    assert.has_error(function() wl.stats.summary { 1, 0 / 0 } end)
    assert.has_error(function() wl.stats.percentile({ 1 }, 101) end)
  end)

  -- deterministic normal samples (a small LCG and Box-Muller), so that the specs never flake
  local function normals(n, mean, sd, seed)
    local state, out = seed, {}
    local function uniform()
      state = (state * 1103515245 + 12345) % 2147483648
      return (state + 0.5) / 2147483648
    end
    for i = 1, n do
      out[i] = mean + sd * math.sqrt(-2 * math.log(uniform())) * math.cos(2 * math.pi * uniform())
    end
    return out
  end

  describe("shape", function()
    it("finds two populations", function()
      local x, y = normals(300, 100, 1, 1), normals(300, 110, 1, 2)
      local mixed = {}
      for i = 1, 300 do mixed[#mixed + 1], mixed[#mixed + 2] = x[i], y[i] end
      local s = wl.stats.shape(mixed)
      assert.is_true(s.bimodal)
      assert.equal(2, s.modes)
      assert.is_true(near(s.mode_low, 100, 1) and near(s.mode_high, 110, 1))
      assert.same({ s.mode_low, s.mode_high }, s.modes_at)
      assert.is_true(math.abs(s.trend_rho) < 0.15)
    end)

    it("passes clean samples", function()
      local s = wl.stats.shape(normals(1000, 100, 1, 3))
      assert.equal(1000, s.n)
      assert.is_false(s.bimodal)
      assert.equal(1, s.modes)
      assert.equal(1, #s.modes_at)
      assert.is_true(math.abs(s.trend_rho) < 0.1 and math.abs(s.trend_change) < 0.01)
      assert.is_true(s.outliers_low + s.outliers_high <= 20) -- a normal has 0.7 % beyond the fences
      assert.is_true(math.type(s.far_outliers) == "integer" and s.far_outliers <= 1)
      assert.is_true(s.fence_low < 99 and s.fence_high > 101 and s.bandwidth > 0)
    end)

    it("counts Tukey outliers and sees a trend", function()
      local s = wl.stats.shape { 1, 2, 3, 4, 5, 6, 7, 8, 9, 100 }
      assert.is_true(near(s.fence_high, 14.5) and near(s.far_fence_high, 21.25))
      assert.equal(0, s.outliers_low)
      assert.equal(1, s.outliers_high)
      assert.equal(1, s.far_outliers)
      assert.is_true(near(s.trend_rho, 1) and near(s.trend_z, 3))
      assert.is_true(near(s.trend_change, (1.5 - 8) / 5.5))
      assert.is_false(s.bimodal) -- fewer than 20 samples
    end)

    it("refuses empty, non-numeric and non-finite samples", function()
      assert.has_error(function() wl.stats.shape {} end)
      assert.has_error(function() wl.stats.shape() end)
      assert.error_matches(function() wl.stats.shape { 1, "x" } end,
        "stats_spec%.lua:%d+: sample 2 is string, expected a finite number$")
      assert.error_matches(function() wl.stats.shape { 1, math.huge } end,
        "stats_spec%.lua:%d+: sample 2 is not finite, expected a finite number$")
    end)
  end)
end)
