-- The history gate (`blame --fail-on`, docs/history.md "The gate") on made-up series, run at
-- every commit on the commits up to it as CI runs it (tests/gate_series.lua): every commit after
-- a step above --fail-on fails until the level goes back, a drift fails once it is more than
-- --fail-on past its start, an outlier fails its own commit alone, and commits with no change
-- fail at most once in 100 (issue 38). Three seeds each.
local gs = require "gate_series"

describe("the history gate on made-up series", function()
  local quiet, alarms = 0, 0
  for _, case in ipairs(gs.cases()) do
    it(case.name .. ": every commit that must fail does", function()
      for seed = 1, 3 do
        local r = gs.run(case, gs.FAIL_ON, seed)
        assert.equal(0, r.misses, ("seed %d: %d of the %d commits that must fail passed"):format(
          seed, r.misses, r.expected))
        alarms = alarms + r.false_alarms
        for k = 2, case.n do
          if not case.should_fail(k) and not (case.may_fail and case.may_fail(k)) then
            quiet = quiet + 1 end
        end
      end
    end)
  end
  it("fails at most 1 in 100 commits that have no change", function()
    assert.is_true(quiet > 500, quiet)
    assert.is_true(alarms <= quiet / 100, ("%d false alarms in %d commits"):format(alarms, quiet))
  end)
end)
