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
    assert.has_error(function() wl.stats.summary { 1, "x" } end, "sample 2 is string, expected a finite number")
    assert.has_error(function() wl.stats.summary { 1, 0 / 0 } end)
    assert.has_error(function() wl.stats.percentile({ 1 }, 101) end)
  end)
end)
