-- Runs a scenario returned by a script: configurations, setup, measurement, reporting.
local core = require "wlrun.core"

local runner = {}

function runner.run(scenario, script)
  core.error("unavailable", ("%s: returns scenario '%s'%s, but the scenario runner is not "
    .. "available in this version of wlrun yet"):format(script, scenario.name,
    scenario.defined_at and (" (declared at " .. scenario.defined_at .. ")") or ""), 0)
end

return runner
