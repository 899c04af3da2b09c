-- The plots of wlrun report's page, as inline SVG (wlrun.html.svg):
--   plots.distribution(c)              one configuration's samples as jittered points over a
--                                      box: p25..p75, the median, whiskers p10..p90 (the
--                                      document's stats); its own axis, so that each spread shows
--   plots.trend(points, found, label)  a history series: the median of each commit, the levels
--                                      blame found, its steps (the first commit marked) and drifts,
--                                      on an axis of at least 10 % of the level
-- Plots draw what the document or the history holds; they compute only positions.
local esc = require "wlrun.html.escape"
local svg = require "wlrun.html.svg"
local units = require "wlrun.text.units"

local M = {}

local finite, num, el = svg.finite, svg.num, svg.el

-- a <text> element: its text escaped (commits and labels come from files)
local function text(attrs, s) return el("text", attrs, esc.text(s)) end

M.MAX_POINTS = 2000 -- samples drawn at most per plot (every k-th beyond): the page stays small
M.TREND_SPAN = 0.1 -- the least span of a history's axis, relative to its level

local function axis(x, lo, hi, y, left, right, nticks)
  local ticks, step = svg.ticks(lo, hi, nticks)
  local _, unit, label = svg.time_axis(math.max(math.abs(lo), math.abs(hi)), step)
  local out = { el("line", { "class", "axis", "x1", left + 0.0, "y1", y + 0.0, "x2", right + 0.0, "y2", y + 0.0 }) }
  for _, t in ipairs(ticks) do
    local px = x(t)
    out[#out + 1] = el("line", { "class", "axis", "x1", px, "y1", y + 0.0, "x2", px, "y2", y + 3.0 })
    out[#out + 1] = text({ "class", "tick", "x", px, "y", y + 13.0, "text-anchor", "middle" }, label(t))
  end
  out[#out + 1] = text({ "class", "tick", "x", right + 14.0, "y", y + 13.0 }, unit)
  return table.concat(out)
end

-- one configuration: nil when it has neither samples nor a median
function M.distribution(c)
  local s = type(c.stats) == "table" and c.stats or {}
  local xs = type(c.samples) == "table" and c.samples or {}
  if #xs == 0 and not finite(s.median) then return nil end
  local lo, hi = math.huge, -math.huge
  for _, v in ipairs(xs) do lo, hi = math.min(lo, v), math.max(hi, v) end
  for _, k in ipairs { "min", "max", "p10", "p25", "median", "p75", "p90" } do
    if finite(s[k]) then lo, hi = math.min(lo, s[k]), math.max(hi, s[k]) end
  end
  lo, hi = svg.span(lo, hi, 0.04)
  local W, H, left, right, top, band = 420, 44, 6, 384, 4, 22
  local x = svg.scale(lo, hi, left, right)
  local label = ("%d samples%s"):format(#xs, finite(s.median) and (", median " .. units.time(s.median)) or "")
  local out = { svg.open(W, H, label, "dist") }
  if finite(s.p10) and finite(s.p90) then
    local mid = top + band / 2
    out[#out + 1] = el("line", { "class", "whisker", "x1", x(s.p10), "y1", mid, "x2", x(s.p90), "y2", mid })
    for _, k in ipairs { "p10", "p90" } do
      out[#out + 1] = el("line", { "class", "whisker", "x1", x(s[k]), "y1", mid - 5.0, "x2", x(s[k]), "y2", mid + 5.0 })
    end
  end
  if finite(s.p25) and finite(s.p75) then
    out[#out + 1] = el("rect", { "class", "box", "x", x(s.p25), "y", top + 2.0, "width", math.max(1.0, x(s.p75) - x(s.p25)),
      "height", band - 4.0 }, svg.title(("p25..p75 %s..%s"):format(units.time(s.p25), units.time(s.p75))))
  end
  local shown = math.min(#xs, M.MAX_POINTS)
  local dots = {}
  for k = 1, shown do -- evenly through the samples; jitter from the golden ratio: the same page every time
    local i = (k - 1) * #xs // shown + 1
    local y = top + band / 2 + ((k * 0.6180339887) % 1 - 0.5) * (band - 6)
    dots[k] = el("circle", { "cx", x(xs[i]), "cy", y, "r", 1.6 })
  end
  out[#out + 1] = el("g", { "class", "samples" }, table.concat(dots))
  if finite(s.median) then
    out[#out + 1] = el("line", { "class", "median", "x1", x(s.median), "y1", top + 0.0, "x2", x(s.median),
      "y2", top + band + 0.0 }, svg.title("median " .. units.time(s.median)))
  end
  out[#out + 1] = axis(x, lo, hi, top + band + 4, left, right, 5)
  return table.concat(out) .. "</svg>"
end

local function short(p) return p.commit ~= "" and (p.commit:sub(1, 7) .. (p.dirty and "+" or "")) or "-" end

-- a series by commit: points = {commit, dirty, time, median, rows} (wlrun.history.query.commits),
-- found = analysis.blame's {steps, drifts, segments}
function M.trend(points, found, label)
  local n = #points
  if n == 0 then return nil end
  local lo, hi = math.huge, -math.huge
  for _, p in ipairs(points) do lo, hi = math.min(lo, p.median), math.max(hi, p.median) end
  -- at least 10 % of the level: noise of a fraction of a percent must not look like a shift
  local least = M.TREND_SPAN * math.max(math.abs(lo), math.abs(hi))
  if hi - lo < least then lo, hi = (lo + hi - least) / 2, (lo + hi + least) / 2 end
  lo, hi = svg.span(lo, hi, 0.12)
  local W, H, left, right, top, bottom = 720, 220, 64, 700, 22, 186
  local x = function(i) return n == 1 and (left + right) / 2 or left + (i - 1) / (n - 1) * (right - left) end
  local y = svg.scale(lo, hi, bottom, top)
  local out = { svg.open(W, H, label, "trend") }
  for _, d in ipairs(found and found.drifts or {}) do
    out[#out + 1] = el("rect", { "class", "drift", "x", x(d.first), "y", top + 0.0, "width", x(d.last) - x(d.first),
      "height", bottom - top + 0.0 }, svg.title(("drift %s..%s, %+.1f%%"):format(short(d.from), short(d.to), 100 * d.change)))
  end
  local ticks, step = svg.ticks(lo, hi, 5)
  local _, unit, tick_label = svg.time_axis(math.max(math.abs(lo), math.abs(hi)), step)
  for _, t in ipairs(ticks) do
    out[#out + 1] = el("line", { "class", "grid", "x1", left + 0.0, "y1", y(t), "x2", right + 0.0, "y2", y(t) })
    out[#out + 1] = text({ "class", "tick", "x", left - 6.0, "y", y(t) + 3.5, "text-anchor", "end" }, tick_label(t))
  end
  out[#out + 1] = text({ "class", "tick", "x", 4.0, "y", top - 8.0 }, "median (" .. unit .. ")")
  for _, s in ipairs(found and found.segments or {}) do
    out[#out + 1] = el("line", { "class", "level", "x1", x(s.first), "y1", y(s.median), "x2", x(s.last), "y2", y(s.median) })
  end
  for _, st in ipairs(found and found.steps or {}) do
    local px = (x(st.index - 1) + x(st.index)) / 2
    out[#out + 1] = el("line", { "class", "step", "x1", px, "y1", top + 0.0, "x2", px, "y2", bottom + 0.0 },
      svg.title(("step at %s: %+.1f%%, p = %.2g"):format(short(st.first), 100 * st.change, st.p)))
    out[#out + 1] = text({ "class", "step-label", "x", px + 4, "y", top + 10.0 },
      ("%s %+.1f%%"):format(short(st.first), 100 * st.change))
  end
  local path = {}
  for i, p in ipairs(points) do path[i] = num(x(i)) .. "," .. num(y(p.median)) end
  out[#out + 1] = el("polyline", { "class", "series", "points", table.concat(path, " ") })
  local every = math.max(1, math.ceil(n / 12))
  for i, p in ipairs(points) do
    out[#out + 1] = el("circle", { "class", "point", "cx", x(i), "cy", y(p.median), "r", 3.0 },
      svg.title(("%s %s: median %s (%d run%s)"):format(short(p), p.time, units.time(p.median), #p.rows, #p.rows == 1 and "" or "s")))
    if (i - 1) % every == 0 or i == n then
      out[#out + 1] = text({ "class", "tick", "x", x(i), "y", bottom + 16.0, "text-anchor", "middle" }, short(p))
    end
  end
  out[#out + 1] = text({ "class", "tick", "x", (left + right) / 2, "y", H - 4.0, "text-anchor", "middle" },
    "commits, in the order their runs started")
  return table.concat(out) .. "</svg>"
end

return M
