-- Scenario declaration and validation (docs/scenarios.md).
local core = require "wlrun.core"

local scenario = {}

local mt = { __name = "wlrun.scenario" }

local fields = {
  name = "string", description = "string", params = "table", order = "table", where = "function",
  timing = "table", setup = "function", run = "function|string", check = "function",
  work = "function", baseline = "function", teardown = "function", loop = "table", command = "table",
  prepare = "function",
}

local function fail(where, msg) core.error("script", where .. ": " .. msg, 0) end

-- wl.scenario{...}: checks the declaration and returns it marked as a scenario
function scenario.declare(spec, level)
  level = (level or 1) + 1
  -- `return wl.scenario{...}` is a tail call: the script's frame is gone, name the file alone
  local tail = debug.getinfo(level - 1, "t")
  local info = not (tail and tail.istailcall) and debug.getinfo(level, "Sl") or nil
  local where = info and (info.what == "main" or info.what == "Lua") and (info.short_src .. ":" .. info.currentline)
      or core.cli.script
  if type(spec) ~= "table" then core.error("script", "wl.scenario expects a table, got " .. type(spec), level) end
  local at = where or "wl.scenario"
  local check = require("wlrun.fields").check
  check(spec, fields, at .. ": wl.scenario", 0)
  for k, v in pairs(spec) do
    local want = fields[k]
    if not want:find(type(v), 1, true) then
      fail(at, ("field '%s' must be a %s, got a %s"):format(k, want:gsub("|", " or "), type(v)))
    end
  end
  if type(spec.name) ~= "string" or spec.name == "" then fail(at, "'name' (a non-empty string) is required") end
  if spec.run == nil and not spec.loop and not spec.command then fail(at, "'run' is required: a function(p, state), or the name of a bound launch that setup returns") end
  if type(spec.run) == "string" and not spec.setup then
    fail(at, ("run = '%s' names a field of setup's result, but there is no setup"):format(spec.run))
  end
  if spec.timing then require("wlrun.bench").check_options(spec.timing, at .. ": wl.scenario: timing", 0) end
  if spec.order then
    for k in pairs(spec.order) do
      if math.type(k) ~= "integer" or k < 1 or k > #spec.order then
        fail(at, ("'order' is a list of parameter names; it has the field '%s'"):format(tostring(k)))
      end
    end
    for i, n in ipairs(spec.order) do
      if type(n) ~= "string" then fail(at, ("order[%d] must be a parameter name"):format(i)) end
    end
  end
  spec.defined_at = where
  return setmetatable(spec, mt)
end

function scenario.is(v) return getmetatable(v) == mt end

-- wl.skip(reason): from setup, marks the configuration skipped
local skip_mt = { __name = "wlrun.skip", __tostring = function(s) return "skipped: " .. s.reason end }
function scenario.skip(reason)
  error(setmetatable({ skip = true, reason = tostring(reason or "skipped") }, skip_mt), 0)
end
function scenario.is_skip(e) return getmetatable(e) == skip_mt end

return scenario
