-- Aligned text tables, as the tools' printers write them (compare, history, trace), and the
-- text of their cells: a percentage, a parameter's value, a document's parameter names.
--   columns.align(cols, rows [, sep]) -> lines     cols = { {title=, right=bool} }, rows = {
-- {cell...} }
--   columns.pct(f) -> "4.9%"                        no trailing zeros ("2%", "0.5%")
--   columns.param_text(v), columns.param_names(doc)
local trim = require "wlrun.text.trim"
local T = require "wlrun.report.table"

local columns = {}

-- a table of rows: cols = { {title=, right=bool} }, rows = { {cell, ...} } -> aligned lines
function columns.align(cols, rows, sep)
  sep = sep or "  "
  local w = {}
  for j, c in ipairs(cols) do w[j] = T.width(c.title) end
  for _, r in ipairs(rows) do
    for j = 1, #cols do w[j] = math.max(w[j], T.width(r[j] or "")) end
  end
  local function line(cells)
    local parts = {}
    for j, c in ipairs(cols) do
      local s = cells[j] or ""
      local pad = string.rep(" ", w[j] - T.width(s))
      parts[j] = c.right and (pad .. s) or (s .. pad)
    end
    return trim.right(table.concat(parts, sep))
  end
  local out = {}
  local titles, rule = {}, {}
  for j, c in ipairs(cols) do titles[j], rule[j] = c.title, string.rep("-", w[j]) end
  out[1] = line(titles)
  out[2] = line(rule)
  for _, r in ipairs(rows) do out[#out + 1] = line(r) end
  return out
end

-- "4.9%" without trailing zeros ("2%", "0.5%")
function columns.pct(f)
  local s = ("%.2f"):format(100 * f):gsub("0+$", ""):gsub("%.$", "")
  return s .. "%"
end

-- a parameter's value as text
function columns.param_text(v)
  if type(v) == "boolean" then return tostring(v) end
  return T.value(v)
end

-- the parameter names of a document, in its axes' order, then any others sorted
function columns.param_names(doc)
  local names, seen = {}, {}
  for _, a in ipairs(T.axes(doc)) do
    if not seen[a] then seen[a], names[#names + 1] = true, a end
  end
  local extra = {}
  for _, c in ipairs(doc.configurations or {}) do
    for k in pairs(c.params or {}) do
      if not seen[k] then seen[k], extra[#extra + 1] = true, k end
    end
  end
  table.sort(extra, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(extra) do names[#names + 1] = k end
  return names
end

return columns
