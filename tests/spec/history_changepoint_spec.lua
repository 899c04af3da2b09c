-- The change-point test of `wlrun history blame` (lua/wlrun/history/changepoint.lua) on
-- synthetic series whose answer is known: a step is found at its first commit, one outlier is
-- not blamed, a slow drift is a drift, noise alone finds nothing; and the --fail-on gate
-- (lua/wlrun/history/analysis.lua) on synthetic commits.
local cp = require "wlrun.history.changepoint"
local analysis = require "wlrun.history.analysis"
local F = require "history_fixtures"

-- n values around 1 with a relative normal noise, from a seed
local function noise(seed, n, sd) return F.samples(1.0, n, sd, seed) end

local function series(n, seed, sd, shape)
  local e, xs = noise(seed, n, sd), {}
  for i = 1, n do xs[i] = shape(i) * e[i] end
  return xs
end

local function steps_at(r)
  local at = {}
  for _, s in ipairs(r.steps) do at[#at + 1] = s.at end
  return at
end

describe("the change-point test", function()
  it("finds a step at commit 12 of 20 at 12, with its size", function()
    for seed = 1, 20 do
      local xs = series(20, seed, 0.01, function(i) return i >= 12 and 1.10 or 1.0 end)
      local r = cp.analyse(xs)
      assert.same({ 12 }, steps_at(r), "seed " .. seed)
      assert.same({}, r.drifts)
      assert.is_true(math.abs(r.steps[1].change - 0.10) < 0.02, tostring(r.steps[1].change))
      assert.is_true(r.steps[1].p < 0.01)
      assert.equal(2, #r.segments)
      assert.same({ 1, 11 }, { r.segments[1].first, r.segments[1].last })
    end
  end)

  it("finds a step down (faster) as well, and two steps in one series", function()
    local down = cp.analyse(series(20, 3, 0.01, function(i) return i >= 8 and 0.8 or 1.0 end))
    assert.same({ 8 }, steps_at(down))
    assert.is_true(down.steps[1].change < -0.15)
    local two = cp.analyse(series(40, 5, 0.01, function(i) return (i >= 10 and 1.2 or 1) * (i >= 28
      and 0.9 or 1) end))
    assert.same({ 10, 28 }, steps_at(two))
    assert.equal(3, #two.segments)
  end)

  it("does not blame one outlier", function()
    for seed = 1, 10 do
      for _, at in ipairs { 2, 7, 19 } do
        local r = cp.analyse(series(20, seed, 0.01, function(i) return i == at and 1.5 or 1.0 end))
        assert.same({}, r.steps, ("seed %d, outlier at %d"):format(seed, at))
        assert.same({}, r.drifts)
      end
    end
  end)

  it("reports a slow drift as a drift, not a step", function()
    for seed = 1, 10 do
      local r = cp.analyse(series(20, seed, 0.003, function(i) return 1.01 ^ i end))
      assert.same({}, r.steps, "seed " .. seed)
      assert.equal(1, #r.drifts, "seed " .. seed)
      local d = r.drifts[1]
      assert.same({ 1, 20 }, { d.first, d.last })
      assert.is_true(math.abs(d.change - (1.01 ^ 19 - 1)) < 0.03, tostring(d.change))
    end
  end)

  it("finds nothing in noise alone", function()
    for seed = 1, 50 do
      local r = cp.analyse(series(30, seed, 0.02, function() return 1.0 end))
      assert.same({}, r.steps, "seed " .. seed)
      assert.same({}, r.drifts, "seed " .. seed)
    end
  end)

  it(
    "needs min_segment commits on each side, and enough for the test: a shift at the end is "
    .. "named once it lasted", function()
    for seed = 1, 10 do
      local two = series(20, seed, 0.01, function(i) return i >= 19 and 1.3 or 1.0 end)
      assert.same({}, cp.analyse(two).steps, "seed " .. seed)
      local five = series(20, seed, 0.01, function(i) return i >= 16 and 1.3 or 1.0 end)
      assert.same({ 16 }, steps_at(cp.analyse(five)), "seed " .. seed)
      assert.same({}, cp.analyse(five, { min_segment = 6 }).steps)
    end
  end)

  it("leaves out a shift smaller than min_effect", function()
    local xs = series(20, 4, 0.002, function(i) return i >= 10 and 1.01 or 1.0 end)
    assert.same({}, cp.analyse(xs).steps)
    assert.same({ 10 }, steps_at(cp.analyse(xs, { min_effect = 0.005 })))
  end)

  it("takes short, constant and tied series", function()
    assert.same({}, cp.analyse({}).steps)
    assert.same({}, cp.analyse({ 1, 2, 3 }).steps)
    local flat = {}
    for i = 1, 20 do flat[i] = 1.0 end
    assert.same({}, cp.analyse(flat).steps)
    local tied = {}
    for i = 1, 20 do tied[i] = i >= 11 and 2.0 or 1.0 end
    assert.same({ 11 }, steps_at(cp.analyse(tied)))
  end)

  it("gives the same answer for the same seed", function()
    local xs = series(30, 9, 0.02, function(i) return i >= 15 and 1.05 or 1.0 end)
    local a, b = cp.analyse(xs, { seed = 7 }), cp.analyse(xs, { seed = 7 })
    assert.same(a, b)
  end)
end)

-- points of a series by commit, as query.commits makes them: one run each, its samples
local function points(medians)
  local list = {}
  for i, m in ipairs(medians) do
    local row = { run = i, median = m, samples = F.samples(m, 30, 0.01, 1000 + i) }
    list[i] = { commit = ("c%02d"):format(i), dirty = false, time = F.time(i), rows = { row },
      median = m }
  end
  return list
end

local function gate(medians, pct)
  local ps = points(medians)
  local xs = {}
  for i, p in ipairs(ps) do xs[i] = p.median end
  return analysis.gate(ps, cp.analyse(xs), function(row) return row.samples end, { fail_on = pct })
end

describe("the --fail-on gate", function()
  local flat = {}
  for i = 1, 15 do flat[i] = 1e-3 end

  it("passes when the latest commit is as fast as the ones before", function()
    local g = gate(flat, 0.05)
    assert.is_false(g.failed)
    assert.equal(14, g.baseline.commits > 0 and 14 or 0)
    assert.equal("c15", g.latest.commit)
  end)

  it("fails on a latest commit slower by more than PCT, not on one slower by less", function()
    local m = table.move(flat, 1, 15, 1, {})
    m[15] = 1.2e-3
    local g = gate(m, 0.05)
    assert.is_true(g.failed)
    assert.equal("slower", g.verdict)
    assert.is_true(g.lo > 1.05)
    assert.is_false(gate(m, 0.30).failed)
  end)

  it("takes the segment before a lasting shift as the baseline", function()
    local m = {}
    for i = 1, 16 do m[i] = i >= 10 and 1.3e-3 or 1e-3 end
    local g = gate(m, 0.05)
    assert.is_true(g.failed)
    assert.equal("c09", g.baseline.to.commit)
    assert.equal("c01", g.baseline.from.commit)
    local faster = {}
    for i = 1, 16 do faster[i] = i >= 10 and 0.7e-3 or 1e-3 end
    assert.is_false(gate(faster, 0.05).failed)
  end)

  it("has no baseline for a series of one commit", function()
    local g = gate({ 1e-3 }, 0.05)
    assert.is_false(g.failed)
    assert.equal("no baseline", g.verdict)
  end)
end)
