-- A value a script hands to wlrun (an error it raised, check()'s message) read without letting
-- the script's own code stop the sweep: its __index and __tostring run protected, and what
-- they raise or return that is not text becomes a sentence saying the value could not be
-- shown. One bad configuration fails alone (docs/reliability.md).
--
--   error_value.field(v, k) -> v[k], or nil where v is not a table or its __index raised
--   error_value.text(v) -> text             tostring(v), or why it could not be shown
--   error_value.of(e) -> e                   an error as configuration.run keeps it: e itself
--                                            where it is a table without a metatable and with
--                                            a message (wlrun's own errors) or a wl.skip, else a
--                                            plain table of its message (a string), kind, exit
--                                            and reason
local scenario = require "wlrun.run.scenario"

local error_value = {}

function error_value.field(v, k)
  if type(v) ~= "table" then return nil end
  local x = rawget(v, k)
  if x ~= nil or getmetatable(v) == nil then return x end
  local ok, y = pcall(function() return v[k] end)
  if ok then return y end
  return nil
end

-- what a failed conversion raised, as text, without converting it (it may be as bad)
local function what(e) return type(e) == "string" and e
  or ("an error value of type " .. type(e)) end

function error_value.text(v)
  if type(v) == "string" then return v end
  local ok, s = pcall(tostring, v)
  if ok and type(s) == "string" then return s end
  return ("(an error value of type %s that could not be shown: %s)"):format(type(v), what(s))
end

function error_value.of(e)
  if type(e) ~= "table" then return { message = error_value.text(e), kind = "script" } end
  if getmetatable(e) == nil and type(e.message) == "string" then return e end
  if scenario.is_skip(e) then return e end
  local f = error_value.field
  local message = f(e, "message")
  -- an error value of the script's own: as text, whatever it holds
  if type(message) ~= "string" then
    local mt = getmetatable(e)
    local shows = type(mt) == "table" and rawget(mt, "__tostring") ~= nil
    message = shows and error_value.text(e) or ("an error value: "
      .. error_value.text(message or e))
  end
  local kind, reason = f(e, "kind"), f(e, "reason")
  return { message = message, kind = type(kind) == "string" and kind or nil, exit = f(e, "exit"),
    reason = type(reason) == "string" and reason or nil }
end

return error_value
