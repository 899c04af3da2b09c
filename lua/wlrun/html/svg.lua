-- Inline SVG for wlrun report's page, drawn here so that the page needs nothing from the network
-- or from another project: elements with escaped attributes and text, linear scales with round
-- ticks, and a time axis in one unit. The plots themselves are in wlrun.html.plots.
local esc = require "wlrun.html.escape"
local units = require "wlrun.text.units"

local M = {}

local finite = units.finite

-- a coordinate: two decimals, no "-0.00"
function M.num(v)
  local s = ("%.2f"):format(v):gsub("%.?0+$", "")
  return s == "-0" and "0" or s
end

-- <name a="v" ...>content</name>; attrs is a list of name, value pairs (their order kept)
function M.el(name, attrs, content)
  local parts = { "<" .. name }
  for i = 1, #attrs, 2 do
    local v = attrs[i + 1]
    if v ~= nil then
      parts[#parts + 1] = (' %s="%s"'):format(attrs[i],
        math.type(v) == "float" and M.num(v) or esc.text(v))
    end
  end
  if content == nil then return table.concat(parts) .. "/>" end
  return table.concat(parts) .. ">" .. content .. "</" .. name .. ">"
end

-- <title> of an element: a tooltip in a browser, a description for a screen reader
function M.title(text) return M.el("title", {}, esc.text(text)) end

-- lo..hi widened so that no range is empty and the data does not touch the frame
function M.span(lo, hi, pad)
  if hi < lo then lo, hi = hi, lo end
  if hi == lo then
    local d = lo ~= 0 and math.abs(lo) * 0.01 or 1
    return lo - d, hi + d
  end
  local d = (hi - lo) * (pad or 0.05)
  return lo - d, hi + d
end

-- maps [lo, hi] onto [a, b]
function M.scale(lo, hi, a, b)
  return function(v) return a + (v - lo) / (hi - lo) * (b - a) end
end

-- round ticks in [lo, hi], about n of them: multiples of 1, 2 or 5 times a power of ten
function M.ticks(lo, hi, n)
  local raw = (hi - lo) / math.max(1, n or 5)
  local p = 10 ^ math.floor(math.log(raw, 10))
  local step = p
  for _, m in ipairs { 1, 2, 5, 10 } do
    step = m * p
    if step >= raw then break end
  end
  local list = {}
  for k = math.ceil(lo / step), math.floor(hi / step) do list[#list + 1] = k * step end
  return list, step
end

-- the unit of a time axis over values up to `largest` seconds: scale, name, and a tick label
-- ("1.25"), with the decimals the tick step needs
function M.time_axis(largest, step)
  local u = units.time_unit(largest)
  local d = step and math.max(0, -math.floor(math.log(step / u[1], 10) + 1e-9)) or 3
  return u[1], u[2], function(v) return ("%." .. d .. "f"):format(v / u[1]) end
end

-- the opening of an inline SVG of width x height with a title and a class; fluid: as wide as
-- its container (width 100 %, the height from the viewBox's ratio), its drawing scaled to it
function M.open(width, height, label, class, fluid)
  local size = fluid and 'width="100%"' or ('width="%d" height="%d"'):format(width, height)
  return (
    "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"%s\" %s viewBox=\"0 0 %d %d\" "
    .. "role=\"img\" aria-label=\"%s\">")
    :format(esc.text(class), size, width, height, esc.text(label)) .. M.title(label)
end

M.finite = finite

return M
