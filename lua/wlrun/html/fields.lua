-- Any JSON value of a document as nested definition lists, for the provenance of wlrun report's
-- page: every field shown as the file has it (names and values escaped), so that a field a newer
-- wlrun adds shows up without a change here. Objects' keys sorted (a decoded object keeps no
-- order) after those listed in `first`; arrays of plain values on one line.
local esc = require "wlrun.html.escape"
local T = require "wlrun.report.table"

local M = {}

local MAX_DEPTH = 8

local function is_array(v)
  local n = 0
  for k in pairs(v) do
    if math.type(k) ~= "integer" then return false end
    n = n + 1
  end
  return n == #v
end

local function scalar(v)
  if type(v) == "number" then return esc.text(T.value(v)) end
  return esc.text(tostring(v))
end

local function value(v, depth)
  if type(v) ~= "table" then return scalar(v) end
  if depth >= MAX_DEPTH then return '<span class="muted">(nested deeper than shown)</span>' end
  if is_array(v) then
    if #v == 0 then return '<span class="muted">(none)</span>' end
    local plain = true
    for _, x in ipairs(v) do plain = plain and type(x) ~= "table" end
    local parts = {}
    if plain then
      for i, x in ipairs(v) do parts[i] = "<code>" .. scalar(x) .. "</code>" end
      return table.concat(parts, " ")
    end
    for i, x in ipairs(v) do parts[i] = "<li>" .. value(x, depth + 1) .. "</li>" end
    return "<ol>" .. table.concat(parts) .. "</ol>"
  end
  return M.list(v, nil, {}, depth + 1)
end

-- <dl class="fields"> of an object's fields, those in `first` first, leaving out `skip`'s
function M.list(obj, first, skip, depth)
  skip = skip or {}
  local names, seen = {}, {}
  for _, k in ipairs(first or {}) do
    if obj[k] ~= nil and not skip[k] then names[#names + 1], seen[k] = k, true end
  end
  local rest = {}
  for k in pairs(obj) do
    if not seen[k] and not skip[k] then rest[#rest + 1] = k end
  end
  table.sort(rest, function(a, b) return tostring(a) < tostring(b) end)
  table.move(rest, 1, #rest, #names + 1, names)
  if #names == 0 then return '<span class="muted">(none)</span>' end
  local out = { '<dl class="fields">' }
  for _, k in ipairs(names) do
    out[#out + 1] = ("<dt>%s</dt><dd>%s</dd>"):format(esc.text(k), value(obj[k], depth or 0))
  end
  out[#out + 1] = "</dl>"
  return table.concat(out)
end

return M
