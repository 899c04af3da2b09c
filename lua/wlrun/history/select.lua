-- Which configurations of the history a command looks at: -p NAME=V1,V2 (a parameter equal to
-- one of the values: numbers by value, others by their text) and --filter EXPR (a Lua
-- expression over the parameters, as for a run). A configuration without a parameter that -p
-- names is left out; one without a name that --filter reads is left out too. A name that no
-- configuration has is misspelt: the error says so (usage, exit 2), and lists the names there
-- are, so that a mistyped -p never looks like a selection of nothing.
local core = require "wlrun.core"
local printable = require "wlrun.text.printable"
local trim = require "wlrun.text.trim"
local sweep = require "wlrun.run.sweep"

local M = {}

local function fail(msg) core.error("usage", "history: " .. printable.whole(msg), 0) end

-- {name, values = {text...}} of "-p NAME=V1,V2"
local function parse_param(text)
  local name, list = tostring(text):match("^%s*([^=%s]+)%s*=(.*)$")
  if not name then fail(("-p '%s': expected NAME=VALUE or NAME=V1,V2"):format(text)) end
  local values = {}
  for v in list:gmatch("[^,]+") do
    v = trim.both(v)
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

-- the error of a -p whose name no configuration has: the names there are (printable: they
-- come from the database)
local function unknown_name(x, names, where)
  local list = {}
  for k in pairs(names) do list[#list + 1] = k end
  table.sort(list)
  local text = printable.text
  for i, k in ipairs(list) do list[i] = text(k, 60) end
  fail(("-p '%s=%s': no configuration%s has a parameter '%s' (%s)"):format(text(x.name, 60),
    text(table.concat(x.values, ","), 60), where or "", text(x.name, 60),
    #list > 0 and ("the parameters: " .. table.concat(list, ", "))
      or "no configuration has parameters"))
end

-- A predicate over a configuration's parameters, or nil when nothing is selected.
-- `finish(where)` must be called after the predicate has seen every configuration: it raises
-- the error of a -p name that none had, or the --filter error that every configuration gave;
-- where: how the message names the configurations seen (" of scenario 'x'"), or nil.
function M.selector(params, filter)
  local ps = {}
  for _, t in ipairs(params or {}) do ps[#ps + 1] = parse_param(t) end
  local keep = filter and sweep.compile_filter(filter)
  if #ps == 0 and not keep then return nil, function() end end
  local tried, errors, first, names = 0, 0, nil, {}
  local function predicate(p)
    for k in pairs(p) do names[k] = true end
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
  local function finish(where)
    for _, x in ipairs(ps) do
      if not names[x.name] then unknown_name(x, names, where) end
    end
    if tried > 0 and errors == tried then error(first, 0) end
  end
  return predicate, finish
end

return M
