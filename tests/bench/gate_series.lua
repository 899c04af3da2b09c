-- The history gate on made-up series (tests/gate_series.lua), the table of docs/history.md:
-- for each series, the gate's verdict at each commit (F: failed) over SEEDS seeds, the commits
-- that had to fail and those missed, and the false alarms.
--   wlrun tests/bench/gate_series.lua [SEEDS]
local root = debug.getinfo(1, "S").source:match("^@(.*)/tests/bench/") or "."
package.path = root .. "/tests/?.lua;" .. package.path
local gs = require "gate_series"

local seeds = tonumber(arg and arg[1]) or 8
print(
  ("--fail-on %d %%, %d samples a commit, 24 commits a series, seeds 1-%d; the line: seed 1's "
  .. "verdicts from commit 2"):format(
  gs.FAIL_ON * 100, gs.SAMPLES, seeds))
print(("%-52s %-24s %9s %7s %12s"):format("series", "gate at commits 2..24", "must fail", "missed",
  "false alarms"))
local tq, ta, te, tm = 0, 0, 0, 0
for _, case in ipairs(gs.cases()) do
  local line, must, missed, alarms = {}, 0, 0, 0
  for seed = 1, seeds do
    local r = gs.run(case, gs.FAIL_ON, seed)
    if seed == 1 then for k = 2, case.n do line[#line + 1] = r.failed[k] and "F" or "." end end
    must, missed, alarms = must + r.expected, missed + r.misses, alarms + r.false_alarms
    for k = 2, case.n do
      if not case.should_fail(k) and not (case.may_fail and case.may_fail(k)) then tq = tq + 1 end
    end
  end
  ta, te, tm = ta + alarms, te + must, tm + missed
  print(("%-52s %-24s %9d %7d %12d"):format(case.name, table.concat(line), must, missed, alarms))
end
print(
  ("all: %d commits had to fail, %d missed; %d false alarms in %d commits with no change (%.2f "
  .. "%%; target: at most 1 %%)"):format(
  te, tm, ta, tq, 100 * ta / tq))
