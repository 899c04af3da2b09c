-- Which configurations of the history a command looks at: -p NAME=V1,V2 (a parameter equal to
-- one of the values: numbers by value, others by their text) and --filter EXPR (a Lua
-- expression over the parameters, as for a run). A configuration without a parameter that -p
-- names is left out; one without a name that --filter reads is left out too, unless no
-- configuration has it (then the name is misspelt, and the error says so).
local M = {}

local function fail(msg) require("wlrun.core").error("usage", "history: " .. msg, 0) end

-- {name, values = {text...}} of "-p NAME=V1,V2"
local function parse_param(text)
  local name, list = tostring(text):match("^%s*([^=%s]+)%s*=(.*)$")
  if not name then fail(("-p '%s': expected NAME=VALUE or NAME=V1,V2"):format(text)) end
  local values = {}
  for v in list:gmatch("[^,]+") do
    v = v:match("^%s*(.-)%s*$")
    if v ~= "" then values[#values + 1] = v end
  end
  if #values == 0 then fail(("-p '%s': no value after '='"):format(text)) end
  return { name = name, values = values }
end

local function matches(v, values)
  for _, want in ipairs(values) do
    if type(v) == "number" then
      if tonumber(want) == v then return true end
    elseif tostring(v) == want then
      return true
    end
  end
  return false
end

-- A predicate over a configuration's parameters, or nil when nothing is selected.
-- `finish()` must be called after the predicate has seen every configuration: it raises the
-- --filter error that every configuration gave, if any.
function M.selector(params, filter)
  local ps = {}
  for _, t in ipairs(params or {}) do ps[#ps + 1] = parse_param(t) end
  local keep = filter and require("wlrun.sweep").compile_filter(filter)
  if #ps == 0 and not keep then return nil, function() end end
  local tried, errors, first = 0, 0, nil
  local function predicate(p)
    for _, x in ipairs(ps) do
      if p[x.name] == nil or not matches(p[x.name], x.values) then return false end
    end
    if not keep then return true end
    tried = tried + 1
    local ok, v = pcall(keep, p)
    if ok then return v end
    errors, first = errors + 1, first or v
    return false
  end
  local function finish()
    if tried > 0 and errors == tried then error(first, 0) end
  end
  return predicate, finish
end

return M
