-- Series of commits made up to test `wlrun history blame --fail-on` (docs/history.md, "The
-- gate"): the gate is run at every commit on the commits up to it, as CI runs it after each
-- `history add`, through the same functions (wlrun.history.analysis's pinned_gate, blame's
-- change points, compare's test). Used by tests/spec/gate_series_spec.lua (what must hold) and
-- tests/bench/gate_series.lua (the table of docs/history.md).
--
--   gate_series.cases() -> list of {name, n, noise, level(i) (the true level of commit i, 1 =
--                          the start), should_fail(i) (whether the gate must fail at commit i)}
--   gate_series.run(case, fail_on, seed) -> {failed = {[i] = true}, expected, false_alarms, misses}
local analysis = require "wlrun.history.analysis"

local M = {}

M.FAIL_ON = 0.05 -- --fail-on 5
M.SAMPLES = 30 -- a commit's samples (one run of 30)

-- uniform in (0, 1) and normal draws from a 63-bit LCG (the same in every Lua)
local function rng(seed)
  local state = seed
  local function uniform()
    state = (state * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
    return ((state >> 11) + 0.5) / (1 << 52)
  end
  return function() return math.sqrt(-2 * math.log(uniform())) * math.cos(
    2 * math.pi * uniform()) end
end

local function step(at, size) return function(i) return i >= at and 1 + size or 1 end end

-- the cases: the flapping series of issue 38, steps of 2 to 50 % under noise of 0.1 to 5 %,
-- a drift, a single outlier, a regression fixed later, and series with no change at all
function M.cases()
  local F = M.FAIL_ON
  local function after(at) return function(i) return i >= at end end
  local never = function() return false end
  local function step_drift(i) return (i >= 6 and 0.04 or 0) + math.max(0, 0.01 * (i - 11)) end
  local list = {
    { name = "issue 38: +15 % from commit 5, noise 0.3 %", n = 24, noise = 0.003,
      level = step(5, 0.15), should_fail = after(5) },
    { name = "+50 % from commit 8, noise 1 %", n = 24, noise = 0.01, level = step(8, 0.50),
      should_fail = after(8) },
    { name = "+10 % from commit 12, noise 0.1 %", n = 24, noise = 0.001, level = step(12, 0.10),
      should_fail = after(12) },
    { name = "+10 % from commit 6, noise 2 %", n = 24, noise = 0.02, level = step(6, 0.10),
      should_fail = after(6) },
    { name = "+20 % from commit 10, noise 5 %", n = 24, noise = 0.05, level = step(10, 0.20),
      should_fail = after(10) },
    { name = "+2 % from commit 6 (under --fail-on), noise 0.5 %", n = 24, noise = 0.005,
      level = step(6, 0.02), should_fail = never },
    { name = "-10 % from commit 9 (faster), noise 1 %", n = 24, noise = 0.01,
      level = step(9, -0.10), should_fail = never },
    { name = "one outlier commit (+30 %) at 11, noise 0.5 %", n = 24, noise = 0.005,
      level = function(i) return i == 11 and 1.3 or 1 end,
        should_fail = function(i) return i == 11 end },
    { name = "+25 % at 6, fixed at 14, noise 0.5 %", n = 24, noise = 0.005,
      level = function(i) return (i >= 6 and i < 14) and 1.25 or 1 end,
        should_fail = function(i) return i >= 6 and i < 14 end },
    -- a drift of 1 % a commit from commit 5: the gate fails once the latest commit is more than
    -- --fail-on above the level before the drift, and from then on (a real, lasting regression)
    { name = "drift +1 %/commit from 5, noise 0.3 %", n = 24, noise = 0.003,
      level = function(i) return i >= 5 and 1 + 0.01 * (i - 4) or 1 end,
        should_fail = function(i) return 0.01 * (i - 4) > F + 0.02 end,
      may_fail = function(i) return 0.01 * (i - 4) > F - 0.02 end },
    -- a step under --fail-on, then a drift on top of it: the two together are the regression
    { name = "+4 % at 6, then +1 %/commit from 12, noise 0.3 %", n = 24, noise = 0.003,
      level = function(i) return 1 + step_drift(i) end,
      should_fail = function(i) return step_drift(i) > F + 0.02 end,
      may_fail = function(i) return step_drift(i) > F - 0.02 end },
    -- a step up, then a slow partial recovery: still slower than before the step all along
    { name = "+30 % at 6, then -1 %/commit from 12, noise 0.3 %", n = 24, noise = 0.003,
      level = function(i) return 1 + (i >= 6 and 0.30 or 0) - math.max(0, 0.01 * (i - 11)) end,
      should_fail = function(i) return i >= 6 end },
  }
  for k, noise in ipairs { 0.001, 0.003, 0.01, 0.02, 0.05 } do -- no change at all: 5 x 24 commits
    list[#list + 1] = { name = ("no change, noise %g %% (%d)"):format(noise * 100, k), n = 24,
      noise = noise,
      level = function() return 1 end, should_fail = never }
  end
  return list
end

-- the commits of a case: each a run of SAMPLES samples around base x level(i), with noise both
-- within the run and between runs (a commit's own level moves by half the noise)
local function commits(case, seed)
  local normal = rng(seed)
  local points = {}
  for i = 1, case.n do
    local level = 1e-3 * case.level(i) * (1 + 0.5 * case.noise * normal())
    local xs = {}
    for j = 1, M.SAMPLES do xs[j] = level * (1 + case.noise * normal()) end
    local sorted = table.move(xs, 1, #xs, 1, {})
    table.sort(sorted)
    points[i] = { commit = ("c%02d"):format(i), time = i, median = (sorted[15] + sorted[16]) / 2,
      rows = { { samples = xs } } }
  end
  return points
end

function M.run(case, fail_on, seed)
  local points = commits(case, seed)
  local series = { scenario = "gate", device = "sim", params_json = case.name }
  local samples = function(row) return row.samples end
  local out = { failed = {}, expected = 0, false_alarms = 0, misses = 0, commits = case.n }
  for k = 2, case.n do
    local prefix = table.move(points, 1, k, 1, {})
    local found_of = function(p) return analysis.blame(series, p, {}) end
    local g = analysis.pinned_gate(prefix, found_of, samples, { fail_on = fail_on })
    local must, may = case.should_fail(k), case.may_fail and case.may_fail(k)
    out.failed[k] = g.failed
    if must then out.expected = out.expected + 1 end
    if must and not g.failed then out.misses = out.misses + 1 end
    if g.failed and not must and not may then out.false_alarms = out.false_alarms + 1 end
  end
  return out
end

return M
