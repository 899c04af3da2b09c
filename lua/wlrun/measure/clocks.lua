-- --lock-clocks (docs/measuring.md, "Clocks, throttling, energy and memory"): the SM clock locked
-- for the run through NVML where permitted, or why not; what the document's device.clocks says.
local core = require "wlrun.core"

local clocks = {}

-- the setting's value checked: "off", "base", "max" or a clock in MHz (an integer from 100 to
-- 10000); raises a usage error naming the value
function clocks.parse(value)
  if value == "off" or value == "base" or value == "max" then return value end
  local mhz = math.tointeger(tonumber(value))
  if not mhz or mhz < 100 or mhz > 10000 or not tostring(value):match("^%d+$") then
    core.error("usage",
      ("--lock-clocks: expected off, base, max or a clock in MHz (100 to 10000), got '%s'"):format(
      tostring(value)), 0)
  end
  return mhz
end

-- locks as the setting asks; say(text) tells the user. Returns device.clocks: {locked =,
-- mhz =, requested =, refused =}.
function clocks.apply(value, say)
  local what = clocks.parse(value)
  if what == "off" then return { locked = false } end
  local mhz, why = core.lock_clocks(what)
  if not mhz then
    say(("--lock-clocks %s refused: %s; the clocks are not locked"):format(tostring(value), why))
    return { locked = false, requested = tostring(value), refused = why }
  end
  return { locked = true, mhz = mhz, requested = tostring(value) }
end

-- "SM clock locked at 1980 MHz", "SM clock not locked", or nil (no record)
function clocks.describe(c)
  if type(c) ~= "table" then return nil end
  if c.locked == true and math.tointeger(c.mhz) then
    return ("SM clock locked at %d MHz"):format(c.mhz) end
  if c.locked == false then return "SM clock not locked"
    .. (c.refused and " (--lock-clocks refused)" or "") end
end

return clocks
