-- The settings in force (docs/config.md), as wl.settings, wl.setting and wl.setting_origin give
-- them: a leaf module (it requires wlrun.core alone), so that the library's own modules read the
-- settings without requiring "wlrun", which requires them.
local core = require "wlrun.core"

local settings = {}

-- settings.view: the effective settings (built-in < wlrun.ini < command line), a read-only view
-- of wlrun's own (core.settings: a script that assigns to it is told so at its line, and never
-- takes a section away from the code that reads it)
local function read_only(t, name)
  local view = {}
  for k, v in pairs(t) do
    if type(v) == "table" then view[k] = read_only(v, name .. "." .. k) end
  end
  return setmetatable({}, {
    __index = function(_, k)
      if view[k] ~= nil then return view[k] end
      return t[k]
    end,
    __newindex = function(_, k)
      error(
        ("%s.%s cannot be set: a setting comes from wlrun.ini, the command line, a scenario's "
        .. "fields or "
        .. "wl.setting(section, name, value)"):format(name, tostring(k)), 2)
    end,
    __pairs = function()
      return function(_, k)
        local nk, v = next(t, k)
        if nk ~= nil and view[nk] ~= nil then v = view[nk] end
        return nk, v
      end, t, nil
    end,
  })
end
settings.view = read_only(core.settings, "wl.settings")

-- The value of setting section.name for a scenario that asks for scenario_value:
-- built-in < wlrun.ini < scenario < command line. Returns the value and where it came from.
-- scenario_value is checked by the setting's own rule (as on the command line and in wlrun.ini)
-- and returned as wl.settings holds it (a percentage as a fraction, a duration in seconds).
function settings.value(section, name, scenario_value)
  local origins = core.settings_origin[section]
  local origin = origins and origins[name]
  if not origin then
    error(("unknown setting %s.%s"):format(tostring(section), tostring(name)), 2)
  end
  if scenario_value ~= nil then
    local v, err = core.setting_value(section, name, scenario_value)
    if err then core.error("script", ("wl.setting: %s.%s: %s"):format(section, name, err), 2) end
    scenario_value = v
  end
  if origin.source == "cli" or scenario_value == nil then
    return core.settings[section][name], origin.source
  end
  return scenario_value, "scenario"
end

function settings.origin(section, name)
  local origins = core.settings_origin[section]
  return origins and origins[name]
end

return settings
