-- The three kinds of `wlrun plot` (wlrun.tools.plot, docs/compare.md), each a function
-- (doc, o, files) -> the gnuplot script, which writes its data into files (name -> text):
--   sweep  a metric against a swept parameter, one line per combination of the other
--          parameters (log2 x axis when the values are powers of two)
--   hist   the distribution of one configuration's samples
--   ratio  the ratios NEW/BASE of a comparison (wlrun compare ... -o cmp.json) with their
--          intervals
local units = require "wlrun.text.units"
local T = require "wlrun.report.table"
local columns = require "wlrun.report.columns"
local sweep = require "wlrun.run.sweep"
local stats = require "wlrun.compare.stats"
local cli = require "wlrun.tools.cli"
local gnuplot = require "wlrun.tools.gnuplot"
local plot_metrics = require "wlrun.tools.plot_metrics"
local kinds = {}
local TOOL = "plot"
local finite = units.finite

local function fail(kind, msg) cli.fail(kind, TOOL, msg) end

-- every text and number in the script goes through these two (wlrun.tools.gnuplot)
local gq, num = gnuplot.string, gnuplot.number

-- a time as the reports write it, with the micro sign
local function ptime(v) return (T.time(v):gsub(" us$", " µs")) end
local function ptime_range(lo, hi) return (T.time_range(lo, hi):gsub(" us$", " µs")) end

---------------------------------------------------------------------------------------------
-- units of the y axis (wlrun.tools.plot_metrics)

local time_unit, metric = plot_metrics.time_unit, plot_metrics.metric
local available_metrics = plot_metrics.available

local colors = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                 "#7f7f7f", "#bcbd22", "#17becf" }

---------------------------------------------------------------------------------------------
-- configurations selected by --filter

local function filtered(doc, expr)
  local keep = expr and sweep.compile_filter(expr)
  local list = {}
  for i, c in ipairs(doc.configurations) do
    c.index = c.index or i
    if not keep or keep(c.params or {}) then list[#list + 1] = c end
  end
  return list
end

local function doc_title(doc)
  local t = T.scenario_name(doc)
  if type(doc.device) == "table" and doc.device.name then t = t .. " on "
    .. tostring(doc.device.name) end
  return t
end

---------------------------------------------------------------------------------------------
-- sweep

local function is_pow2(v)
  local i = math.tointeger(v)
  return i and i > 0 and (i & (i - 1)) == 0
end

-- the configurations measured with a value of the metric; none: a usage error that lists the
-- metrics there are
local function with_metric(doc, o, m)
  local configs = {}
  for _, c in ipairs(filtered(doc, o.filter)) do
    local v = c.status == "ok" and m.value(c)
    if finite(v) then configs[#configs + 1] = c end
  end
  if #configs == 0 then
    local avail = available_metrics(doc)
    fail("usage", ("no measured configuration has '%s'%s (available: %s)"):format(m.name,
      o.filter and " among those --filter keeps" or "",
        #avail > 0 and table.concat(avail, ", ") or "none"))
  end
  return configs
end

-- parameter names (the axes first), and per name its number of distinct values and whether
-- they are all numbers: {names =, seen =, distinct =, numeric =}
local function parameters(axes, configs)
  local names, seen = {}, {}
  for _, a in ipairs(axes) do
    if not seen[a] then seen[a], names[#names + 1] = true, a end
  end
  for _, c in ipairs(configs) do
    for k in pairs(c.params or {}) do
      if not seen[k] then seen[k], names[#names + 1] = true, k end
    end
  end
  local distinct, numeric = {}, {}
  for _, n in ipairs(names) do
    local set, count, allnum = {}, 0, true
    for _, c in ipairs(configs) do
      local v = c.params and c.params[n]
      if type(v) ~= "number" then allnum = false end
      local key = tostring(v)
      if not set[key] then set[key], count = true, count + 1 end
    end
    distinct[n], numeric[n] = count, allnum
  end
  return { names = names, seen = seen, distinct = distinct, numeric = numeric }
end

-- the parameter on the x axis: --x, checked, else the numeric one with the most values
local function x_axis(o, p)
  local x = o.x
  if x then
    if not p.seen[x] then
      fail("usage", ("--x: no configuration has a parameter '%s' (parameters: %s)"):format(x,
      table.concat(p.names, ", "))) end
    if not p.numeric[x] then fail("usage", ("--x %s: its values are not all numbers"):format(x)) end
    return x
  end
  for _, n in ipairs(p.names) do
    if p.numeric[n] and p.distinct[n] >= 2 and (not x or p.distinct[n] > p.distinct[x]) then
      x = n end
  end
  if not x then
    fail("usage",
      "no numeric parameter takes several values: nothing to sweep (try --kind hist --config N)")
  end
  return x
end

-- the other parameters: those that vary and are not a function of x form the lines (group
-- names); the others are fixed (one value) or tied to x ({name, equal to x})
local function other_parameters(p, x, configs)
  local group_names, fixed, tied = {}, {}, {}
  for _, n in ipairs(p.names) do
    if n ~= x then
      if p.distinct[n] <= 1 then
        fixed[#fixed + 1] = n
      else
        local of, func, same = {}, true, true
        for _, c in ipairs(configs) do
          local xv, v = tostring(c.params[x]), tostring(c.params[n])
          if of[xv] == nil then of[xv] = v elseif of[xv] ~= v then func = false end
          if c.params[n] ~= c.params[x] then same = false end
        end
        if func then tied[#tied + 1] = { n, same } else group_names[#group_names + 1] = n end
      end
    end
  end
  return group_names, fixed, tied
end

-- the configurations of each line by its label, and the labels in the order met
local function lines_of(configs, group_names, m)
  local groups, gorder = {}, {}
  for _, c in ipairs(configs) do
    local parts = {}
    for _, n in ipairs(group_names) do parts[#parts + 1] = ("%s=%s"):format(n,
      T.value(c.params[n])) end
    local label = #parts > 0 and table.concat(parts, ", ") or m.label
    if not groups[label] then
      groups[label] = {}
      gorder[#gorder + 1] = label
    end
    table.insert(groups[label], c)
  end
  return groups, gorder
end

-- the axes' extent: y's largest magnitude and smallest value, x's values sorted, and whether
-- they are all powers of two
local function extent(configs, m, x)
  local ymax, ymin, xs, xset, pow2 = 0, math.huge, {}, {}, true
  for _, c in ipairs(configs) do
    local v = m.value(c)
    ymax, ymin = math.max(ymax, math.abs(v)), math.min(ymin, v)
    local xv = c.params[x]
    if not xset[xv] then xset[xv], xs[#xs + 1] = true, xv end
    if not is_pow2(xv) then pow2 = false end
  end
  table.sort(xs)
  return ymax, ymin, xs, pow2
end

-- line gi's style: past ten lines the colours repeat with other points and dashes
local function line_style(gi)
  local color = colors[(gi - 1) % #colors + 1]
  local cycle = (gi - 1) // #colors
  return ("lw 2 pt %d ps 0.9 dt %d lc rgb %s"):format(({ 7, 5, 9, 11, 13 })[cycle % 5 + 1],
    cycle % 5 + 1,
    gq(color))
end

-- line gi's data file (x y [low high]) and its plot clause
local function line_plot(gi, label, list, m, x, scale, files)
  table.sort(list, function(a, b) return a.params[x] < b.params[x] end)
  local lines = {}
  local bars = m.bars
  for _, c in ipairs(list) do
    if not (c.stats and finite(c.stats.p10) and finite(c.stats.p90)) then bars = false end
  end
  for _, c in ipairs(list) do
    local v = m.value(c) / scale
    if bars then
      lines[#lines + 1] = ("%s %s %s %s"):format(num(c.params[x]), num(v), num(c.stats.p10 / scale),
        num(c.stats.p90 / scale))
    else
      lines[#lines + 1] = ("%s %s"):format(num(c.params[x]), num(v))
    end
  end
  local name = ("line%d.dat"):format(gi)
  files[name] = table.concat(lines, "\n") .. "\n"
  if bars then
    return ("%s using 1:2:3:4 with yerrorlines %s title %s"):format(gq(name), line_style(gi),
      gq(label))
  end
  return ("%s using 1:2 with linespoints %s title %s"):format(gq(name), line_style(gi), gq(label))
end

-- the x axis's label and the plot's title
local function sweep_labels(doc, m, x, tied, fixed, configs, log2)
  local xlabel = tostring(x)
  local same = {}
  for _, t in ipairs(tied) do
    if t[2] then same[#same + 1] = t[1] end
  end
  if #same > 0 then xlabel = xlabel .. " = " .. table.concat(same, " = ") end
  if log2 then xlabel = xlabel .. " (log2 scale)" end
  local fixed_parts = {}
  for _, n in ipairs(fixed) do fixed_parts[#fixed_parts + 1] = ("%s=%s"):format(n,
    T.value(configs[1].params[n])) end
  local title = ("%s: %s against %s"):format(doc_title(doc), m.label,
    xlabel:gsub(" %(log2 scale%)$", ""))
  if #fixed_parts > 0 then title = title .. " (" .. table.concat(fixed_parts, ", ") .. ")" end
  return xlabel, title
end

-- the axes' settings of the script: x's range and tics, y's scale
local function sweep_axes(s, xs, log2, logy)
  if log2 then
    s[#s + 1] = "set logscale x 2"
    s[#s + 1] = ("set xrange [%s:%s]"):format(num(xs[1] / 1.3), num(xs[#xs] * 1.3))
  else
    local span = xs[#xs] - xs[1]
    if span > 0 then s[#s + 1] = ("set xrange [%s:%s]"):format(num(xs[1] - 0.05 * span),
      num(xs[#xs] + 0.05 * span)) end
  end
  if #xs <= 16 then
    local tics = {}
    for _, v in ipairs(xs) do tics[#tics + 1] = ("%s %s"):format(gq(T.value(v), true), num(v)) end
    s[#s + 1] = "set xtics (" .. table.concat(tics, ", ") .. ")"
  end
  if logy then
    s[#s + 1] = "set logscale y 10"
    s[#s + 1] = "set format y '%g'"
  else
    s[#s + 1] = "set yrange [0:*]"
  end
end

function kinds.sweep(doc, o, files)
  local m = metric(o.y or "median")
  local axes = T.axes(doc)
  local configs = with_metric(doc, o, m)
  local p = parameters(axes, configs)
  local x = x_axis(o, p)
  local group_names, fixed, tied = other_parameters(p, x, configs)
  local groups, gorder = lines_of(configs, group_names, m)
  local ymax, ymin, xs, pow2 = extent(configs, m, x)
  local scale, unit = m.unit(ymax)
  local logy = ymin > 0 and ymax / ymin > 50
  local log2 = pow2 and #xs >= 2
  local plots = {}
  for gi, label in ipairs(gorder) do plots[#plots + 1] = line_plot(gi, label, groups[label], m, x,
    scale, files) end
  local xlabel, title = sweep_labels(doc, m, x, tied, fixed, configs, log2)
  local s = {}
  s[#s + 1] = ("set title %s"):format(gq(title))
  s[#s + 1] = ("set xlabel %s"):format(gq(xlabel))
  s[#s + 1] = ("set ylabel %s"):format(gq(m.label .. (unit ~= "" and (" (" .. unit .. ")") or "") ..
    (m.bars and " — bars: p10..p90" or "")))
  sweep_axes(s, xs, log2, logy)
  s[#s + 1] = "set key outside right top"
  s[#s + 1] = "plot " .. table.concat(plots, ", \\\n     ")
  return table.concat(s, "\n") .. "\n"
end

---------------------------------------------------------------------------------------------
-- hist

-- the configuration to plot: --config's, else the first measured one with samples (saying so
-- where there are others)
local function hist_config(doc, o)
  local configs = filtered(doc, o.filter)
  local c
  if o.config then
    for _, x in ipairs(doc.configurations) do
      if x.index == o.config then c = x end
    end
    if not c then fail("usage", ("--config %d: no configuration has this index"):format(
      o.config)) end
    return c
  end
  local ok = {}
  for _, x in ipairs(configs) do
    if x.status == "ok" and type(x.samples) == "table" and #x.samples > 0 then ok[#ok + 1] = x end
  end
  if #ok == 0 then fail("usage", "no configuration has samples to plot") end
  c = ok[1]
  if #ok > 1 then
    local idx = {}
    for _, x in ipairs(ok) do idx[#idx + 1] = "#" .. T.value(x.index) end
    io.stderr:write(
      ("wlrun plot: plotting configuration #%s; choose another with --config N (%s)\n"):format(
      T.value(c.index), table.concat(idx, ", ")))
  end
  return c
end

-- the bins over the sorted samples: Freedman-Diaconis, 5 to 80 of them; {n =, width =, start =}
-- and the span they cover (0: none)
local function bins(sorted)
  local n = #sorted
  local lo, hi = sorted[1], sorted[n]
  local iqr = stats.quantile(sorted, 0.75) - stats.quantile(sorted, 0.25)
  local span = hi - lo
  local nb
  if span <= 0 then
    nb = 1
  else
    local w = 2 * iqr * n ^ (-1 / 3)
    nb = w > 0 and math.ceil(span / w) or 10
    nb = math.max(5, math.min(80, nb))
  end
  -- a span too small to divide (subnormal samples: span / nb is 0) is plotted as no span
  local width = span > 0 and span / nb or 0
  if not (width > 0) then span, width = 0, math.max(math.abs(lo) * 1e-3, 1e-12) end
  local start = span > 0 and lo or lo - width / 2
  return { n = nb, width = width, start = start }, span
end

-- the samples per bin, written as hist.dat; returns the largest count
local function bin_counts(sorted, b, scale, files)
  local counts = {}
  for i = 1, b.n do counts[i] = 0 end
  local maxcount = 0
  for _, v in ipairs(sorted) do
    local i = math.floor((v - b.start) / b.width) + 1
    if i > b.n then i = b.n end
    if i < 1 then i = 1 end
    counts[i] = counts[i] + 1
    maxcount = math.max(maxcount, counts[i])
  end
  local lines = {}
  for i = 1, b.n do
    lines[#lines + 1] = ("%s %d"):format(num((b.start + (i - 0.5) * b.width) / scale), counts[i])
  end
  files["hist.dat"] = table.concat(lines, "\n") .. "\n"
  return maxcount
end

function kinds.hist(doc, o, files)
  local c = hist_config(doc, o)
  local xs = c.samples
  if c.status ~= "ok" or type(xs) ~= "table" or #xs == 0 then
    fail("usage", ("configuration #%s has no samples (%s)"):format(T.value(c.index),
      tostring(c.status)))
  end
  local sorted = stats.sorted(xs)
  local n = #sorted
  local lo, hi = sorted[1], sorted[n]
  local med = stats.quantile(sorted, 0.5)
  local p10, p90 = stats.quantile(sorted, 0.1), stats.quantile(sorted, 0.9)
  local u = time_unit(hi)
  local scale = u[1]
  local b, span = bins(sorted)
  local width = b.width
  local top = bin_counts(sorted, b, scale, files) * 1.15
  files["median.dat"] = ("%s 0\n%s %s\n"):format(num(med / scale), num(med / scale), num(top))
  files["p10p90.dat"] = ("%s 0\n%s %s\n\n\n%s 0\n%s %s\n"):format(num(p10 / scale),
    num(p10 / scale), num(top),
    num(p90 / scale), num(p90 / scale), num(top))
  local desc = T.describe(c.params or {}, T.axes(doc))
  local title = ("%s: #%s%s, %d samples"):format(doc_title(doc), T.value(c.index),
    desc ~= "" and (" (" .. desc .. ")") or "", n)
  local s = {}
  s[#s + 1] = ("set title %s"):format(gq(title))
  s[#s + 1] = ("set xlabel %s"):format(gq("time per launch (" .. u[2] .. ")"))
  s[#s + 1] = "set ylabel 'samples per bin'"
  s[#s + 1] = ("set yrange [0:%s]"):format(num(top))
  local pad = span > 0 and span * 0.05 or width
  s[#s + 1] = ("set xrange [%s:%s]"):format(num((lo - pad) / scale), num((hi + pad) / scale))
  s[#s + 1] = "set style fill solid 0.55 border rgb '#1f4e79'"
  s[#s + 1] = ("set boxwidth %s absolute"):format(num(width / scale * 0.92))
  s[#s + 1] = "set key top right"
  s[#s + 1] = "plot " .. table.concat({
    ("'hist.dat' using 1:2 with boxes lc rgb '#1f77b4' title %s"):format(
      gq(("samples (bin %s)"):format(ptime(width)))),
    ("'median.dat' using 1:2 with lines lw 2 lc rgb '#d62728' title %s"):format(
      gq("median " .. ptime(med))),
    ("'p10p90.dat' using 1:2 with lines lw 1.5 dt 2 lc rgb '#555555' title %s"):format(
      gq("p10..p90 " .. ptime_range(p10, p90))),
  }, ", \\\n     ")
  return table.concat(s, "\n") .. "\n"
end

---------------------------------------------------------------------------------------------
-- ratio (a comparison document)

local verdict_style = {
  { "slower", "#d62728", 7 }, { "faster", "#2ca02c", 7 }, { "same", "#1f77b4", 7 },
    { "uncertain", "#ff7f0e", 6 },
}

-- a comparison document's parts that the plot reads, of the shapes wlrun compare writes them
local function check_comparison(doc, file)
  local function bad(what) fail("usage", ("'%s': %s"):format(file, what)) end
  for _, side in ipairs { "base", "new" } do
    if doc[side] ~= nil and type(doc[side]) ~= "table" then
      bad(("its %s is a %s, not an object"):format(side, type(doc[side])))
    end
  end
  if doc.parameters ~= nil then
    if type(doc.parameters) ~= "table" then bad(
      ("its parameters are a %s, not a list"):format(type(doc.parameters))) end
    for i, name in ipairs(doc.parameters) do
      if type(name) ~= "string" then bad(("parameters[%d] is a %s, not a name"):format(i,
        type(name))) end
    end
  end
  for i, r in ipairs(type(doc.configurations) == "table" and doc.configurations or {}) do
    if type(r) ~= "table" or type(r.params or {}) ~= "table" or type(r.verdict) ~= "string" then
      bad(
        ("configurations[%d] is not a compared configuration (an object with params and a "
        .. "verdict)"):format(i))
    end
  end
end

-- the compared configurations as points: per verdict the lines of its data file (x ratio lo
-- hi), the range of y and the x tics (the configurations' descriptions)
local function ratio_points(rows, names, file)
  local per = {}
  local ymin, ymax = math.huge, 0
  local tics = {}
  for i, r in ipairs(rows) do
    if type(r) ~= "table" or type(r.params or {}) ~= "table" then
      fail("usage", ("'%s': configurations[%d] is not a compared configuration"):format(file, i))
    end
    local desc = T.describe(r.params or {}, names)
    tics[#tics + 1] = ("%s %d"):format(gq(desc ~= "" and desc or ("#" .. i), true), i)
    local lo, hi = r.lo, r.hi
    if not (finite(lo) and finite(hi)) then lo, hi = r.ratio, r.ratio end
    if finite(r.ratio) then
      per[r.verdict] = per[r.verdict] or {}
      table.insert(per[r.verdict], ("%d %s %s %s"):format(i, num(r.ratio), num(lo), num(hi)))
      ymin, ymax = math.min(ymin, lo), math.max(ymax, hi)
    end
  end
  return per, ymin, ymax, tics
end

-- the comparison's noise and confidence, checked, the defaults where it has none
local function ratio_settings(doc, file)
  local settings = type(doc.settings) == "table" and doc.settings or {}
  for _, kv in ipairs { { "noise", 0.02 }, { "confidence", 0.95 } } do
    local key, default = kv[1], kv[2]
    local v = settings[key]
    if v == nil then
      settings[key] = default
    elseif not (finite(v) and v > 0 and v < 1) then
      fail("usage", ("'%s': settings.%s is not a number between 0 and 1"):format(file, key))
    end
  end
  return settings
end

-- a data file and a plot clause per verdict that has points
local function verdict_plots(per, files)
  local plots = {}
  for _, v in ipairs(verdict_style) do
    if per[v[1]] then
      local name = v[1] .. ".dat"
      files[name] = table.concat(per[v[1]], "\n") .. "\n"
      plots[#plots + 1] = (
        "%s using 1:2:3:4 with yerrorbars lw 2 pt %d ps 1.2 lc rgb %s title %s"):format(gq(name),
        v[3], gq(v[2]), gq(("%s (%d)"):format(v[1], #per[v[1]])))
    end
  end
  return plots
end

-- the horizontal lines across the n points: no change, the noise threshold, the geometric mean
local function reference_lines(n, noise, sum, files)
  files["lines.dat"] = ("0.5 1\n%s 1\n\n\n0.5 %s\n%s %s\n\n\n0.5 %s\n%s %s\n"):format(num(n + 0.5),
    num(1 + noise), num(n + 0.5), num(1 + noise), num(1 - noise), num(n + 0.5), num(1 - noise))
  local extra = {
    ("'lines.dat' index 0 using 1:2 with lines lw 1.5 lc rgb '#333333' title 'no change'"),
    ("'lines.dat' index 1:2 using 1:2 with lines lw 1 dt 2 lc rgb '#888888' title %s"):format(gq(
      ("noise threshold ±%s"):format(columns.pct(noise)))),
  }
  if finite(sum.geomean) then
    files["geomean.dat"] = ("0.5 %s\n%s %s\n"):format(num(sum.geomean), num(n + 0.5),
      num(sum.geomean))
    extra[#extra + 1] = (
      "'geomean.dat' using 1:2 with lines lw 1.5 dt 4 lc rgb '#9467bd' title %s"):format(gq(
      ("geometric mean %.3f"):format(sum.geomean)))
  end
  return extra
end

local function ratio_title(doc)
  local b, nw = doc.base or {}, doc.new or {}
  local function side(x)
    local f = tostring(x.file or "?"):match("[^/]*$")
    return f .. (x.device and (" (" .. tostring(x.device) .. ")") or "")
  end
  return ("%s: NEW %s vs BASE %s"):format(tostring(b.scenario or "?"), side(nw), side(b))
end

function kinds.ratio(doc, o, files)
  check_comparison(doc, o.file)
  local rows = doc.configurations or {}
  if #rows == 0 then fail("usage", "the comparison has no compared configuration") end
  local per, ymin, ymax, tics = ratio_points(rows, doc.parameters or {}, o.file)
  local settings = ratio_settings(doc, o.file)
  local noise = settings.noise
  ymin, ymax = math.min(ymin, 1 - noise), math.max(ymax, 1 + noise)
  local logy = ymin > 0 and ymax / ymin > 10
  local plots = verdict_plots(per, files)
  local n = #rows
  local extra = reference_lines(n, noise, type(doc.summary) == "table" and doc.summary or {}, files)
  local s = {}
  s[#s + 1] = ("set title %s"):format(gq(ratio_title(doc)))
  s[#s + 1] = ("set ylabel %s"):format(
    gq(("time ratio NEW/BASE (< 1: faster), bars: %s interval"):format(
    columns.pct(settings.confidence))))
  s[#s + 1] = ("set xrange [0.5:%s]"):format(num(n + 0.5))
  s[#s + 1] = "set xtics (" .. table.concat(tics, ", ") .. ")"
  if n > 4 then s[#s + 1] = "set xtics rotate by -35 left" end
  s[#s + 1] = "set grid ytics"
  if logy then
    s[#s + 1] = "set logscale y 10"
    s[#s + 1] = "set format y '%g'"
  else
    local pad = (ymax - ymin) * 0.1
    s[#s + 1] = ("set yrange [%s:%s]"):format(num(math.max(0, ymin - pad)), num(ymax + pad))
  end
  s[#s + 1] = "set key outside right top"
  local all = {}
  for _, p in ipairs(plots) do all[#all + 1] = p end
  for _, p in ipairs(extra) do all[#all + 1] = p end
  s[#s + 1] = "plot " .. table.concat(all, ", \\\n     ")
  return table.concat(s, "\n") .. "\n"
end

return kinds
