-- Parameter spaces (docs/scenarios.md, "Parameters"): axes of values, zipped groups, ranges,
-- a where filter, command-line overrides (-p) and --filter. The order of configurations is
-- deterministic: axes in the scenario's `order`, else sorted by name (a zipped group sorts by
-- its first name); the last axis varies fastest.
local core = require "wlrun.core"
local fields = require "wlrun.fields"
local printable = require "wlrun.text.printable"
local results = require "wlrun.results"

local sweep = {}

local zip_mt = { __name = "wlrun.zip" }

-- wl.zip{M = {...}, N = {...}}: axes that advance together
function sweep.zip(axes)
  if type(axes) ~= "table" then core.error("script", "wl.zip expects a table of axes", 2) end
  local n, first
  for _, name in ipairs(fields.sorted_keys(axes)) do
    local values = axes[name]
    if type(name) ~= "string" or type(values) ~= "table" or #values == 0 then
      core.error("script", "wl.zip: each axis is NAME = {values...}", 2)
    end
    if n and #values ~= n then
      core.error("script",
        ("wl.zip: axes must have the same number of values (%s has %d, %s %d)"):format(name,
        #values, first, n), 2)
    end
    n, first = #values, first or name
  end
  if not n then core.error("script", "wl.zip: no axes", 2) end
  return setmetatable({ axes = axes }, zip_mt)
end

-- wl.pow2(lo, hi): 2^lo, 2^(lo+1), ..., 2^hi
function sweep.pow2(lo, hi)
  if math.type(lo) ~= "integer" or math.type(hi) ~= "integer" or hi < lo or lo < 0 or hi > 62 then
    core.error("script", "wl.pow2(lo, hi): whole exponents with 0 <= lo <= hi <= 62", 2)
  end
  local t = {}
  for e = lo, hi do t[#t + 1] = 1 << e end
  return t
end

-- wl.range(lo, hi [, step]): lo, lo+step, ..., up to hi inclusive
function sweep.range(lo, hi, step)
  step = step or 1
  for _, a in ipairs { { "lo", lo }, { "hi", hi }, { "step", step } } do
    local v = a[2]
    if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge then
      core.error("script", ("wl.range(lo, hi [, step]): %s must be a finite number, got %s"):format(
        a[1],
        v ~= v and "nan" or type(v) == "number" and tostring(v) or ("a " .. type(v))), 2)
    end
  end
  if step <= 0 then
    core.error("script", ("wl.range(lo, hi [, step]): step must be > 0, got %s"):format(step),
    2) end
  if hi < lo then
    core.error("script", ("wl.range(lo, hi [, step]): hi (%s) is below lo (%s)"):format(hi, lo),
    2) end
  local t = {}
  local count = math.floor((hi - lo) / step + 1e-9)
  if count > 1e6 then core.error("script", "wl.range: more than a million values", 2) end
  for i = 0, count do t[#t + 1] = lo + i * step end
  return t
end

-- "M, N, variant" or "none"
local function sorted_names(set)
  local names = {}
  for n in pairs(set) do names[#names + 1] = n end
  table.sort(names)
  return #names > 0 and table.concat(names, ", ") or "none"
end

local function valid_value(v)
  local t = type(v)
  return t == "number" or t == "string" or t == "boolean"
end

local function finite(v) return v == v and v ~= math.huge and v ~= -math.huge end

-- numbers by value (1 and 1.0 alike), strings and booleans apart
local function tuple_key(tuple)
  local parts = {}
  for j, v in ipairs(tuple) do
    local i = type(v) == "number" and math.tointeger(v)
    parts[j] = i and ("n%d"):format(i) or type(v) == "number" and ("n%.17g"):format(v)
      or type(v):sub(1, 1) .. tostring(v)
  end
  return table.concat(parts, "\0")
end

-- a configuration given twice is measured twice under one key: refused. what: the message's
-- start ("FILE:LINE: parameter 'M'" or "-p M")
local function check_distinct(g, what, kind)
  local first = {}
  for i, tuple in ipairs(g.values) do
    local k = tuple_key(tuple)
    if first[k] then
      local shown = {}
      for j, name in ipairs(g.names) do shown[j] = name .. "=" .. tostring(tuple[j]) end
      core.error(kind, ("%s: value %d repeats value %d (%s); give each value once"):format(what, i,
        first[k],
        table.concat(shown, ", ")), 0)
    end
    first[k] = i
  end
end

-- Reads a scenario's params table into groups: {{names = {...}, values = {{...}, ...}}, ...}
-- where values[i] is the i-th tuple of the group.
local function read_groups(params, where_defined)
  local groups, seen = {}, {}
  local function add(names, columns)
    for _, name in ipairs(names) do
      if seen[name] then core.error("script", ("%s: parameter '%s' is given twice"):format(
        where_defined, name), 0) end
      if not name:match("^[%a_][%w_]*$") then
        core.error("script", ("%s: parameter name '%s' must be an identifier"):format(where_defined,
          name), 0)
      end
      seen[name] = true
    end
    local n = #columns[1]
    local tuples = {}
    for i = 1, n do
      local tuple = {}
      for j, col in ipairs(columns) do
        if not valid_value(col[i]) then
          core.error("script",
            ("%s: value %d of parameter '%s' is a %s (numbers, strings, booleans)"):format(
            where_defined, i, names[j], type(col[i])), 0)
        end
        if type(col[i]) == "number" and not finite(col[i]) then
          core.error("script",
            ("%s: value %d of parameter '%s' is %s (numbers must be finite)"):format(
            where_defined, i, names[j], col[i] ~= col[i] and "nan" or tostring(col[i])), 0)
        end
        tuple[j] = col[i]
      end
      tuples[i] = tuple
    end
    local g = { names = names, values = tuples }
    check_distinct(g, ("%s: parameter%s '%s'"):format(where_defined, #names > 1 and "s" or "",
      table.concat(names, "', '")), "script")
    groups[#groups + 1] = g
  end
  for _, k in ipairs(fields.sorted_keys(params)) do
    local v = params[k]
    if type(k) == "string" then
      if type(v) == "table" and getmetatable(v) == nil then
        if #v == 0 then core.error("script", ("%s: parameter '%s' has no values"):format(
          where_defined, k), 0) end
        for _, i in ipairs(fields.sorted_keys(v)) do
          if math.type(i) ~= "integer" or i < 1 or i > #v then
            core.error("script",
              ("%s: parameter '%s' is a list of values; it has the field '%s'"):format(
              where_defined, k,
              tostring(i)), 0)
          end
        end
        add({ k }, { v })
      elseif valid_value(v) then
        add({ k }, { { v } })
      else
        core.error("script", ("%s: parameter '%s' must be a value or a list of values"):format(
          where_defined, k), 0)
      end
    elseif math.type(k) == "integer" and getmetatable(v) == zip_mt then
      local names = {}
      for name in pairs(v.axes) do names[#names + 1] = name end
      table.sort(names)
      local cols = {}
      for i, name in ipairs(names) do cols[i] = v.axes[name] end
      add(names, cols)
    else
      local what = type(v) == "table"
        and ("a table at [%s] (a list of values needs a name: NAME = {...})"):format(
        tostring(k)) or ("%s at [%s]"):format(
        type(v) == "string" and ("the string %q"):format(v)
          or ("the " .. type(v) .. " " .. tostring(v)), tostring(k))
      core.error("script",
        ("%s: params holds NAME = values pairs and wl.zip{...} groups, not %s"):format(
        where_defined, what), 0)
    end
  end
  return groups, seen
end

local function convert(text, like, name)
  if type(like) == "number" then
    local n = not text:find("^%s*[-+]?0[xX]") and tonumber(text) -- hexadecimal integers wrap around
    if not n then core.error("usage", ("-p %s: '%s' is not a number"):format(name, text), 0) end
    if not finite(n) then core.error("usage", ("-p %s: '%s' is not a finite number"):format(name,
      text), 0) end
    if math.type(like) == "integer" and n == math.floor(n) then
      n = math.tointeger(n)
      if not n then
        core.error("usage",
          ("-p %s: '%s' does not fit in an integer (%s's values are integers, from "
          .. "%d to %d)"):format(
          name, text, name, math.mininteger, math.maxinteger), 0)
      end
    end
    return n
  elseif type(like) == "boolean" then
    if text == "true" then return true elseif text == "false" then return false end
    core.error("usage", ("-p %s: '%s' is not true or false"):format(name, text), 0)
  end
  return text
end

-- applies -p overrides ({{name =, values = {text...}}}) to the groups
local function apply_overrides(groups, known, overrides)
  for _, o in ipairs(overrides or {}) do
    if not known[o.name] then
      core.error("usage", ("-p %s: the scenario has no parameter '%s' (it has: %s)"):format(o.name,
        o.name,
        sorted_names(known)), 0)
    end
    for _, g in ipairs(groups) do
      for j, name in ipairs(g.names) do
        if name == o.name then
          local like = g.values[1][j]
          if #g.names == 1 then
            local tuples = {}
            for i, text in ipairs(o.values) do tuples[i] = { convert(text, like, name) } end
            g.values = tuples
          else
            if #o.values ~= #g.values then
              core.error("usage",
                ("-p %s: '%s' is zipped with %s and has %d values; give %d"):format(name, name,
                table.concat(g.names, ", "), #g.values, #g.values), 0)
            end
            for i, text in ipairs(o.values) do g.values[i][j] = convert(text, like, name) end
          end
          check_distinct(g, "-p " .. name, "usage")
        end
      end
    end
  end
end

local function order_groups(groups, order, where_defined, known)
  local rank = {}
  for i, name in ipairs(order or {}) do rank[name] = rank[name] or i end
  for _, g in ipairs(groups) do
    g.key = math.huge
    for _, name in ipairs(g.names) do
      if order and not rank[name] then
        core.error("script", ("%s: 'order' does not name parameter '%s'"):format(where_defined,
          name), 0)
      end
      g.key = math.min(g.key, order and rank[name] or 0)
    end
    g.sortname = g.names[1]
  end
  local seen = {}
  for _, name in ipairs(order or {}) do
    if seen[name] then core.error("script", ("%s: 'order' names parameter '%s' twice"):format(
      where_defined, name), 0) end
    if not known[name] then
      core.error("script",
        ("%s: 'order' names '%s', which is not a parameter (parameters: %s)"):format(where_defined,
        name, sorted_names(known)), 0)
    end
    seen[name] = true
  end
  table.sort(groups, function(a, b)
    if a.key ~= b.key then return a.key < b.key end
    return a.sortname < b.sortname
  end)
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

-- "the number 1", "the string 'x'", "nil", "a table"
local function value_named(v)
  if type(v) == "string" then return "the string '" .. printable.text(v, 40) .. "'" end
  if type(v) == "number" then return "the number " .. tostring(v) end
  if v == nil then return "nil" end
  return "a " .. type(v)
end

-- EXPR as one Lua expression: compiled both bare and in parentheses, so that a text which
-- closes the parentheses itself ("M > 1) or (true") is no expression, nor is a list ("M, N")
local function one_expression(expr, env)
  if not expr:find("%S") then core.error("usage", "--filter is empty: give a Lua expression", 0) end
  local fn, err = load("return (" .. expr .. "\n)", "=--filter", "t", env)
  if fn then
    local _, bare = load("return " .. expr .. "\n", "=--filter", "t", env)
    if bare then err, fn = bare, nil end
  end
  if not fn then core.error("usage", ("--filter '%s': %s"):format(expr, err), 0) end
  return fn
end

-- the top level's --config-timeout (wlrun.host) stopped the filter itself: named as such, not
-- as the script
local function ran_past(expr)
  core.error("timeout", ("--filter '%s' ran past --config-timeout (%.3g s) and was stopped"):format(
    expr, core.settings.run.config_timeout), 0)
end

-- compiles --filter EXPR into a predicate over a configuration's parameters: EXPR gives true or
-- false (a number is not false in Lua: `M % 2` keeps every M; write `M % 2 == 1`)
function sweep.compile_filter(expr)
  local current
  local safe = { math = math, string = string, tostring = tostring, tonumber = tonumber }
  local env = setmetatable({}, { __index = function(_, k)
    if current[k] == nil and safe[k] then return safe[k] end
    if current[k] == nil then core.error("usage",
      ("--filter '%s': no parameter '%s'"):format(expr, tostring(k)), 0) end
    return current[k]
  end })
  local fn = one_expression(expr, env)
  return function(p)
    current = p
    local ok, v = pcall(fn)
    if not ok then
      if type(v) == "table" and v.kind == "timeout" then ran_past(expr) end
      if type(v) == "table" then error(v, 0) end
      core.error("usage", ("--filter '%s': %s"):format(expr, tostring(v)), 0)
    end
    if type(v) ~= "boolean" then
      core.error("usage", ("--filter '%s' gives %s for %s: it must give true or false (a "
        .. "comparison, like M %% 2 == 1)"):format(expr, value_named(v),
        sweep.describe(p, sorted_keys(p))), 0)
    end
    return v
  end
end

-- The configurations of a scenario: {axes = {names in order}, list = {{index=, params=}...},
-- pruned = n (by where), filtered = n (by --filter)}. The space of the parameters (every
-- combination, each seen by where and --filter) holds at most MAX_SPACE; each configuration kept
-- is held in memory with its parameters (about 1 KB) until the run ends, a shard's too
sweep.MAX_SPACE = 1e7

local function short(n) return (("%.0e"):format(n):gsub("e%+0*", "e")) end

-- a configuration's parameters (numbers, strings, booleans), copied for code that could change them
local function copy(p) return results.copy(p) end

function sweep.expand(scenario, overrides, filter)
  local where_defined = scenario.defined_at or scenario.name
  local groups, known = read_groups(scenario.params or {}, where_defined)
  local own = 1.0 -- the script's own space, before -p
  for _, g in ipairs(groups) do own = own * #g.values end
  apply_overrides(groups, known, overrides)
  order_groups(groups, scenario.order, where_defined, known)
  local axes = {}
  for _, g in ipairs(groups) do for _, n in ipairs(g.names) do axes[#axes + 1] = n end end
  local keep = filter and sweep.compile_filter(filter)
  local list, pruned, filtered = {}, 0, 0
  local idx = {}
  for i = 1, #groups do idx[i] = 1 end
  -- the space's size, counted in floating point (a product of axes can pass 2^63)
  local space = 1.0
  for _, g in ipairs(groups) do space = space * #g.values end
  if space > sweep.MAX_SPACE then
    -- where the -p values made it so, the command line is at fault, not the script
    local given = {}
    for _, o in ipairs(own <= sweep.MAX_SPACE and overrides or {}) do
      given[#given + 1] = "-p " .. o.name
    end
    core.error(#given > 0 and "usage" or "script",
      ("%s: %.4g configurations in the space of its parameters%s; at most %s"):format(where_defined,
      space, #given > 0 and (" with " .. table.concat(given, ", ")) or "",
      short(sweep.MAX_SPACE)), 0)
  end
  local total = math.tointeger(space)
  for _ = 1, total do
    local p = {}
    for gi, g in ipairs(groups) do
      for j, name in ipairs(g.names) do p[name] = g.values[idx[gi]][j] end
    end
    local ok = true
    if scenario.where then -- on a copy: a where that changes its argument changes no configuration
      ok = scenario.where(copy(p))
      if not ok then pruned = pruned + 1 end
    end
    if ok and keep and not keep(copy(p)) then ok, filtered = false, filtered + 1 end
    if ok then list[#list + 1] = { index = #list + 1, params = p } end
    for gi = #groups, 1, -1 do -- advance, the last group fastest
      idx[gi] = idx[gi] + 1
      if idx[gi] <= #groups[gi].values then break end
      idx[gi] = 1
    end
  end
  return { axes = axes, list = list, pruned = pruned, filtered = filtered, total = total }
end

-- "M=1024, N=2048, variant=tiled" in axes order, printable (printable.whole: no control
-- character of a name or value reaches a terminal or fakes a line)
function sweep.describe(params, axes)
  local whole, parts = printable.whole, {}
  for _, name in ipairs(axes) do parts[#parts + 1] = whole(name) .. "="
    .. whole(tostring(params[name])) end
  return table.concat(parts, ", ")
end

return sweep
