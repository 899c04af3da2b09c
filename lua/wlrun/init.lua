-- wlrun: the Lua API that scripts `require "wlrun"` (docs/lua-api.md).
local core = require "wlrun.core"

local wl = {}

wl.version = core.version

-- host clocks
wl.clock = core.clock       -- monotonic seconds (float)
wl.clock_ns = core.clock_ns -- monotonic nanoseconds (integer)
wl.sleep = core.sleep

-- statistics on sample arrays
wl.stats = core.stats

-- devices
wl.device_count = core.device_count
wl.select_device = core.select_device
wl.device = core.device

-- errors with a kind (an exit code): wl.error("usage", "message" [, level])
wl.error = core.error

-- effective settings (built-in < wlrun.ini < command line) and the parsed command line
wl.settings = core.settings
wl.cli = core.cli

-- The value of setting section.name for a scenario that asks for scenario_value:
-- built-in < wlrun.ini < scenario < command line. Returns the value and where it came from.
function wl.setting(section, name, scenario_value)
  local origins = core.settings_origin[section]
  local origin = origins and origins[name]
  if not origin then
    error(("unknown setting %s.%s"):format(tostring(section), tostring(name)), 2)
  end
  if origin.source == "cli" or scenario_value == nil then
    return core.settings[section][name], origin.source
  end
  return scenario_value, "scenario"
end

function wl.setting_origin(section, name)
  local origins = core.settings_origin[section]
  return origins and origins[name]
end

local scenario_mt = { __name = "wlrun.scenario" }

-- wl.scenario{...}: declares a scenario; a script returns it and wlrun runs it.
function wl.scenario(spec)
  if type(spec) ~= "table" then
    wl.error("script", "wl.scenario expects a table, got " .. type(spec), 2)
  end
  if type(spec.name) ~= "string" or spec.name == "" then
    wl.error("script", "wl.scenario: 'name' must be a non-empty string", 2)
  end
  local info = debug.getinfo(2, "Sl") -- absent when the script tail-calls wl.scenario
  if info and info.what ~= "C" then spec.defined_at = info.short_src .. ":" .. info.currentline end
  return setmetatable(spec, scenario_mt)
end

function wl.is_scenario(v)
  return getmetatable(v) == scenario_mt
end

-- called by the host when a script returns a scenario
function wl.run_scenario(scenario, script)
  return require("wlrun.runner").run(scenario, script)
end

return wl
