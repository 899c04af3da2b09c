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
  local out = { el("line", { "class", "axis", "x1", left + 0.0, "y1", y + 0.0, "x2", right + 0.0,
    "y2", y + 0.0 }) }
  for _, t in ipairs(ticks) do
    local px = x(t)
    out[#out + 1] = el("line", { "class", "axis", "x1", px, "y1", y + 0.0, "x2", px, "y2",
      y + 3.0 })
    out[#out + 1] = text({ "class", "tick", "x", px, "y", y + 13.0, "text-anchor", "middle" },
      label(t))
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
  local label = ("%d samples%s"):format(#xs, finite(s.median)
    and (", median " .. units.time(s.median)) or "")
  local out = { svg.open(W, H, label, "dist") }
  if finite(s.p10) and finite(s.p90) then
    local mid = top + band / 2
    out[#out + 1] = el("line", { "class", "whisker", "x1", x(s.p10), "y1", mid, "x2", x(s.p90),
      "y2", mid })
    for _, k in ipairs { "p10", "p90" } do
      out[#out + 1] = el("line", { "class", "whisker", "x1", x(s[k]), "y1", mid - 5.0, "x2",
        x(s[k]), "y2", mid + 5.0 })
    end
  end
  if finite(s.p25) and finite(s.p75) then
    out[#out + 1] = el("rect", { "class", "box", "x", x(s.p25), "y", top + 2.0, "width",
      math.max(1.0, x(s.p75) - x(s.p25)),
      "height", band - 4.0 }, svg.title(("p25..p75 %s..%s"):format(units.time(s.p25),
        units.time(s.p75))))
  end
  local shown = math.min(#xs, M.MAX_POINTS)
  local dots = {}
  -- evenly through the samples; jitter from the golden ratio: the same page every time
  for k = 1, shown do
    local i = (k - 1) * #xs // shown + 1
    local y = top + band / 2 + ((k * 0.6180339887) % 1 - 0.5) * (band - 6)
    dots[k] = el("circle", { "cx", x(xs[i]), "cy", y, "r", 1.6 })
  end
  out[#out + 1] = el("g", { "class", "samples" }, table.concat(dots))
  if finite(s.median) then
    out[#out + 1] = el("line", { "class", "median", "x1", x(s.median), "y1", top + 0.0, "x2",
      x(s.median),
      "y2", top + band + 0.0 }, svg.title("median " .. units.time(s.median)))
  end
  out[#out + 1] = axis(x, lo, hi, top + band + 4, left, right, 5)
  return table.concat(out) .. "</svg>"
end

-- a commit on the x axis: a SHA's first 7 hex digits, a name of more than 10 characters its head
-- and tail ("rele…te-07"), '+' when its work tree had changes; the whole name is its tooltip
local function short(p)
  local c = p.commit
  if c == "" then return "-" end
  local n = utf8.len(c)
  if c:match("^%x+$") then
    c = c:sub(1, 7)
  elseif n and n > 10 then
    c = c:sub(1, utf8.offset(c, 5) - 1) .. "…" .. c:sub(utf8.offset(c, -5))
  elseif not n and #c > 10 then
    c = c:sub(1, 4) .. "…" .. c:sub(-5)
  end
  return c .. (p.dirty and "+" or "")
end

M.short = short

-- The width a label of the plots' 10-unit font takes, at most: 6.6 units a character (DejaVu
-- Sans' digits take 6.4), an ellipsis two. Labels are kept this far apart, plus LABEL_GAP; the
-- SVG is scaled as a whole, so labels apart in its units are apart on any screen.
M.CHAR_WIDTH, M.LABEL_GAP = 6.6, 8
local function width_of(s)
  local n = utf8.len(s) or #s
  local _, ellipses = s:gsub("…", "")
  return (n + ellipses) * M.CHAR_WIDTH
end

-- the commits whose labels are drawn: every k-th from the first, k the least that keeps them
-- apart, and the last, for which the one before it gives way when they would touch
local function labelled(labels, x)
  local n = #labels
  local widest = 0
  for _, l in ipairs(labels) do widest = math.max(widest, width_of(l)) end
  local need = widest + M.LABEL_GAP
  local shown = {}
  if n == 1 then return { true } end
  local every = math.max(1, math.ceil(need / (x(2) - x(1))))
  local last = nil
  for i = 1, n, every do shown[i], last = true, i end
  if last ~= n then
    if x(n) - x(last) < need then shown[last] = nil end
    shown[n] = true
  end
  return shown
end

-- The steps' labels ("725a47c +11.8%"), in a band of their own above the plot, where no data,
-- level or step line is: each on the first row where it touches no other label; right of its
-- step's line, or left of it where it would leave the plot. Returns the labels' places
-- {x, anchor, row, text} and the number of rows.
local function place_step_labels(steps, x, right)
  local rows, placed = {}, {}
  for _, st in ipairs(steps) do
    local px = (x(st.index - 1) + x(st.index)) / 2
    local s = ("%s %+.1f%%"):format(short(st.first), 100 * st.change)
    local w = width_of(s)
    local x0, anchor = px + 4, "start"
    if x0 + w > right then x0, anchor = px - 4 - w, "end" end
    local row = 1
    while true do
      local free = true
      for _, span in ipairs(rows[row] or {}) do
        if x0 < span[2] + M.LABEL_GAP and span[1] < x0 + w + M.LABEL_GAP then free = false break end
      end
      if free then break end
      row = row + 1
    end
    rows[row] = rows[row] or {}
    table.insert(rows[row], { x0, x0 + w })
    placed[#placed + 1] = { x = anchor == "start" and x0 or px - 4, anchor = anchor, row = row,
      text = s }
  end
  return placed, #rows
end

M.STEP_ROW = 12 -- the height of a row of step labels

local function step_labels(placed, band_top)
  local out = {}
  for _, l in ipairs(placed) do
    out[#out + 1] = text({ "class", "step-label", "x", l.x, "y", band_top + 10.0
      + M.STEP_ROW * (l.row - 1), "text-anchor", l.anchor ~= "start" and l.anchor or nil }, l.text)
  end
  return table.concat(out)
end

-- a series by commit: points = {commit, dirty, time, median, rows} (wlrun.history.query.commits),
-- found = analysis.blame's {steps, drifts, segments}. As wide as the page (a fluid SVG); the
-- commits' labels thinned out so that none touches another.
function M.trend(points, found, label)
  local n = #points
  if n == 0 then return nil end
  local lo, hi = math.huge, -math.huge
  for _, p in ipairs(points) do lo, hi = math.min(lo, p.median), math.max(hi, p.median) end
  -- at least 10 % of the level: noise of a fraction of a percent must not look like a shift
  local least = M.TREND_SPAN * math.max(math.abs(lo), math.abs(hi))
  if hi - lo < least then lo, hi = (lo + hi - least) / 2, (lo + hi + least) / 2 end
  lo, hi = svg.span(lo, hi, 0.12)
  local W, left, right = 1000, 64, 960
  local x = function(i) return n == 1 and (left + right) / 2
    or left + (i - 1) / (n - 1) * (right - left) end
  local steps = found and found.steps or {}
  local placed, label_rows = place_step_labels(steps, x, right)
  -- the plot below the band of the steps' labels, as tall as without them
  local band = label_rows > 0 and M.STEP_ROW * label_rows + 4 or 0
  local H, top, bottom = 260 + band, 22 + band, 216 + band
  local y = svg.scale(lo, hi, bottom, top)
  local out = { svg.open(W, H, label, "trend", true) }
  for _, d in ipairs(found and found.drifts or {}) do
    out[#out + 1] = el("rect", { "class", "drift", "x", x(d.first), "y", top + 0.0, "width",
      x(d.last) - x(d.first),
      "height", bottom - top + 0.0 }, svg.title(("drift %s..%s, %+.1f%%"):format(short(d.from),
        short(d.to), 100 * d.change)))
  end
  local ticks, step = svg.ticks(lo, hi, 5)
  local _, unit, tick_label = svg.time_axis(math.max(math.abs(lo), math.abs(hi)), step)
  for _, t in ipairs(ticks) do
    out[#out + 1] = el("line", { "class", "grid", "x1", left + 0.0, "y1", y(t), "x2", right + 0.0,
      "y2", y(t) })
    out[#out + 1] = text({ "class", "tick", "x", left - 6.0, "y", y(t) + 3.5, "text-anchor",
      "end" }, tick_label(t))
  end
  out[#out + 1] = text({ "class", "tick", "x", 4.0, "y", 14.0 }, "median (" .. unit .. ")")
  for _, s in ipairs(found and found.segments or {}) do
    out[#out + 1] = el("line", { "class", "level", "x1", x(s.first), "y1", y(s.median), "x2",
      x(s.last), "y2", y(s.median) })
  end
  for _, st in ipairs(steps) do
    local px = (x(st.index - 1) + x(st.index)) / 2
    out[#out + 1] = el("line", { "class", "step", "x1", px, "y1", top + 0.0, "x2", px, "y2",
      bottom + 0.0 },
      svg.title(("step at %s: %+.1f%%, p = %.2g"):format(st.first.commit, 100 * st.change, st.p)))
  end
  out[#out + 1] = step_labels(placed, top - band)
  local path = {}
  for i, p in ipairs(points) do path[i] = num(x(i)) .. "," .. num(y(p.median)) end
  out[#out + 1] = el("polyline", { "class", "series", "points", table.concat(path, " ") })
  local labels = {}
  for i, p in ipairs(points) do labels[i] = short(p) end
  local shown = labelled(labels, x)
  for i, p in ipairs(points) do
    local whole = p.commit ~= "" and (p.commit .. (p.dirty and "+" or "")) or "-"
    out[#out + 1] = el("circle", { "class", "point", "cx", x(i), "cy", y(p.median), "r", 3.0 },
      svg.title(("%s %s: median %s (%d run%s)"):format(whole, p.time, units.time(p.median), #p.rows,
        #p.rows == 1 and "" or "s")))
    if shown[i] then
      out[#out + 1] = el("text", { "class", "tick commit", "x", x(i), "y", bottom + 16.0,
        "text-anchor", "middle" },
        svg.title(whole) .. esc.text(labels[i]))
    end
  end
  out[#out + 1] = text({ "class", "tick", "x", (left + right) / 2, "y", H - 6.0, "text-anchor",
    "middle" },
    "commits, in the order their runs started")
  return table.concat(out) .. "</svg>"
end

return M
