-- The terminal table of a results document (docs/results.md): one row per configuration,
-- aligned columns, units scaled per cell; a footer with the device, the timing floor, each
-- configuration's warnings and the full text of failures. Formats only: every number shown is
-- in the document. The helpers below (M.axes, M.value, M.build, ...) serve the other printers.
local units = require "wlrun.text.units"
local printable = require "wlrun.text.printable"
local trim = require "wlrun.text.trim"
local clocks = require "wlrun.measure.clocks"
local loop_summary = require "wlrun.report.loop_summary"

local M = {}

local finite = units.finite
M.finite = finite

-- the parameter axes: doc.scenario.axes, else every configuration's parameter names, sorted
function M.axes(doc)
  local sc = doc.scenario
  if type(sc) == "table" and type(sc.axes) == "table" and #sc.axes > 0 then return sc.axes end
  local seen, list = {}, {}
  for _, c in ipairs(doc.configurations or {}) do
    for k in pairs(c.params or {}) do
      if not seen[k] then seen[k], list[#list + 1] = true, k end
    end
  end
  table.sort(list, function(a, b) return tostring(a) < tostring(b) end)
  return list
end

-- a parameter value as text
function M.value(v)
  if math.type(v) == "integer" then return ("%d"):format(v) end
  if type(v) == "number" then return ("%.6g"):format(v) end
  if v == nil then return "" end
  return tostring(v)
end

-- "variant=tiled, M=4096"
function M.describe(params, axes)
  local parts = {}
  for _, a in ipairs(axes) do
    if params and params[a] ~= nil then parts[#parts + 1] = ("%s=%s"):format(a,
      M.value(params[a])) end
  end
  return table.concat(parts, ", ")
end

function M.scenario_name(doc)
  return type(doc.scenario) == "table" and doc.scenario.name or "wlrun"
end

-- the first line of a text, cut to at most `max` characters
function M.first_line(s, max)
  s = tostring(s or ""):match("[^\r\n]*")
  if max and M.width(s) > max then
    local cut = utf8.offset(s, max - 2)
    -- not in an escape
    local head = (cut and s:sub(1, cut - 1) or s:sub(1, max - 3)):gsub("\\x?%x?$", "")
    s = trim.right(head) .. "..."
  end
  return s
end

-- display width (characters of UTF-8 text; bytes where it is not UTF-8)
function M.width(s) return utf8.len(s) or #s end

local time_unit = units.time_unit

-- decimals that show `sig` significant digits of v (scaled) without exponent
local function decimals(v, sig)
  local a = math.abs(v)
  local int_digits = a >= 1 and math.floor(math.log(a, 10) + 1e-9) + 1 or 1
  return math.max(0, sig - int_digits)
end

-- two times in the unit of the larger: "430.2..433.0 us"
function M.time_range(lo, hi)
  if not (finite(lo) and finite(hi)) then return "-" end
  local u = time_unit(math.max(math.abs(lo), math.abs(hi)))
  local d = decimals(hi / u[1], 4)
  return ("%." .. d .. "f..%." .. d .. "f %s"):format(lo / u[1], hi / u[1], u[2])
end

-- mean and std in the unit of the mean, with fixed decimals: "1.234 +/- 0.012 ms"
function M.mean_std(mean, std)
  local u = time_unit(mean)
  local m, s = mean / u[1], std / u[1]
  local sf = (s ~= 0 and math.abs(s) < 0.001) and "%.2g" or "%.3f"
  return ("%.3f +/- " .. sf .. " %s"):format(m, s, u[2])
end

function M.time(v) return finite(v) and units.time(v) or "-" end

function M.percent(f) return finite(f) and units.percent(f) or "-" end

-- the metrics a printer shows, in this order, then any other metric by name
M.metric_defs = {
  { key = "flop_per_s", title = "FLOP/s", fmt = function(v) return units.rate(v, "FLOP/s") end },
  { key = "bytes_per_s", title = "bytes/s", fmt = function(v) return units.rate(v, "B/s") end },
  { key = "items_per_s", title = "items/s", fmt = function(v) return units.rate(v, "/s") end },
  { key = "peak_bandwidth_fraction", title = "% peak BW",
    fmt = function(v) return units.percent(v) end },
  { key = "peak_fp32_fraction", title = "% peak FP32",
    fmt = function(v) return units.percent(v) end },
  { key = "peak_fraction", title = "% peak", fmt = function(v) return units.percent(v) end },
  { key = "baseline_fraction", title = "% of baseline",
    fmt = function(v) return units.percent(v) end },
  { key = "samples_per_s", title = "samples/s", fmt = function(v) return ("%.1f"):format(v) end },
  { key = "mean_power_w", title = "power", fmt = function(v) return ("%.0f W"):format(v) end },
  { key = "joules_per_launch", title = "energy/launch",
    fmt = function(v) return units.energy(v) end },
  { key = "flop_per_joule", title = "FLOP/J", fmt = function(v) return units.rate(v,
    "FLOP/J") end },
  { key = "tensor_peak_bytes", title = "tensor mem", fmt = function(v) return units.bytes(v) end },
}

-- the metrics present in any configuration: list of {key, title, fmt}
function M.metrics_present(doc)
  local present, known = {}, {}
  for _, c in ipairs(doc.configurations or {}) do
    for k in pairs(c.metrics or {}) do present[k] = true end
  end
  local list = {}
  for _, d in ipairs(M.metric_defs) do
    known[d.key] = true
    if present[d.key] then list[#list + 1] = d end
  end
  local other = {}
  for k in pairs(present) do
    if not known[k] then other[#other + 1] = k end
  end
  table.sort(other, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(other) do
    list[#list + 1] = { key = k, title = tostring(k),
      fmt = function(v) return ("%.4g"):format(v) end }
  end
  return list
end

-- the custom metrics of work(p) (entry.custom_metrics) in any configuration, by name: list of
-- {name, title}; a metric that is a rate in some configuration is titled "NAME/s"
-- A parameter's column (c.axis) titled like another column of the table ("n", "median") is
-- retitled param.NAME, so that no two columns read the same: in every printer of a table.
function M.prefix_parameters(cols)
  local taken = {}
  for _, c in ipairs(cols) do
    if not c.axis then taken[c.title] = true end
  end
  for _, c in ipairs(cols) do
    if c.axis and taken[c.title] then c.title = "param." .. c.title end
  end
  return cols
end

function M.custom_metrics_present(doc)
  local rate, list = {}, {}
  for _, c in ipairs(doc.configurations or {}) do
    for k, x in pairs(type(c.custom_metrics) == "table" and c.custom_metrics or {}) do
      if rate[k] == nil then list[#list + 1] = k end
      rate[k] = rate[k] or (type(x) == "table" and x.per_s ~= nil)
    end
  end
  table.sort(list, function(a, b) return tostring(a) < tostring(b) end)
  for i, k in ipairs(list) do list[i] = { name = k,
    title = tostring(k) .. (rate[k] and "/s" or "") } end
  return list
end

-- a custom metric as text: its rate in UNIT/s, or its value in UNIT; nil without one
function M.custom_metric(x)
  if type(x) ~= "table" then return nil end
  local unit = x.unit and tostring(x.unit) or ""
  if finite(x.per_s) then return units.rate(x.per_s, unit .. "/s") end
  if finite(x.value) then return ("%.4g"):format(x.value)
    .. (unit ~= "" and (" " .. unit) or "") end
end

function M.metric(def, v)
  if v == nil then return "-" end
  if type(v) ~= "number" then return tostring(v) end
  return finite(v) and def.fmt(v) or "-"
end

function M.mode(c)
  if not c.mode then return "-" end
  if c.per and c.per > 1 then return ("%s x%s"):format(c.mode, M.value(c.per)) end
  return tostring(c.mode)
end

function M.warning_codes(c, sep)
  local codes = {}
  for _, w in ipairs(c.warnings or {}) do codes[#codes + 1] = tostring(w.code) end
  return table.concat(codes, sep or ",")
end

-- why a configuration has no measurement: "K > 2 M", "[cuda] launching ..."
function M.why(c)
  if c.status == "skipped" then return tostring(c.reason or "skipped") end
  if c.status == "failed" then
    return (c.kind and ("[" .. tostring(c.kind) .. "] ") or "") .. tostring(c.error or "failed")
  end
  return ""
end

-- The table of a document: columns {title, right = bool} and rows
-- {cells = {...}, keys = {...}, ok = bool, lead = number of leading cells, why = text}; `lead`
-- cells (index, parameters, status) are shown on every row; the others on rows with a
-- measurement. keys[j]: the number behind cells[j] where it has one (for sorting: the median
-- in seconds, the p10 of "p10..p90"), nil otherwise.
function M.build(doc)
  local axes = M.axes(doc)
  local metrics = M.metrics_present(doc)
  local cols = { { title = "#", right = true } }
  for _, a in ipairs(axes) do cols[#cols + 1] = { title = tostring(a), right = true, axis = a } end
  cols[#cols + 1] = { title = "status" }
  local lead = #cols
  for _, t in ipairs { { "median", true }, { "p10..p90", true }, { "cv", true }, { "n", true },
    { "mode", false } } do
    cols[#cols + 1] = { title = t[1], right = t[2] }
  end
  for _, d in ipairs(metrics) do cols[#cols + 1] = { title = d.title, right = true } end
  local custom = M.custom_metrics_present(doc)
  for _, d in ipairs(custom) do cols[#cols + 1] = { title = d.title, right = true } end
  cols[#cols + 1] = { title = "warnings" }
  M.prefix_parameters(cols)

  local rows = {}
  for i, c in ipairs(doc.configurations or {}) do
    local cells, keys = { M.value(c.index or i) }, { c.index or i }
    for _, a in ipairs(axes) do
      local v = c.params and c.params[a]
      cells[#cells + 1] = M.value(v)
      keys[#cells] = type(v) == "number" and v or nil
      -- a column is right-aligned when all its values are numbers
      if v ~= nil and type(v) ~= "number" then cols[#cells].right = false end
    end
    cells[#cells + 1] = tostring(c.status or "?")
    local ok = c.stats ~= nil
    if ok then
      local s = c.stats
      local function put(text, key)
        local j = #cells + 1
        cells[j], keys[j] = text, key
      end
      put(M.time(s.median), s.median)
      put(M.time_range(s.p10, s.p90), s.p10)
      put(M.percent(s.cv), s.cv)
      put(s.n and M.value(s.n) or "-", s.n)
      put(M.mode(c))
      for _, d in ipairs(metrics) do
        local v = c.metrics and c.metrics[d.key]
        put(M.metric(d, v), type(v) == "number" and v or nil)
      end
      for _, d in ipairs(custom) do
        local x = type(c.custom_metrics) == "table" and c.custom_metrics[d.name] or nil
        put(M.custom_metric(x) or "-", type(x) == "table" and (x.per_s or x.value) or nil)
      end
      put(M.warning_codes(c))
    end
    rows[#rows + 1] = { cells = cells, keys = keys, ok = ok, lead = lead, why = M.why(c),
      config = c }
  end
  return { columns = cols, rows = rows, lead = lead, axes = axes, metrics = metrics,
    custom_metrics = custom }
end

local function pad(s, w, right)
  local n = w - M.width(s)
  if n <= 0 then return s end
  return right and (string.rep(" ", n) .. s) or (s .. string.rep(" ", n))
end

-- "NVIDIA H200 (sm_90, 132 SMs, peak bandwidth 4.8 TB/s)"
function M.device_line(dev)
  if type(dev) ~= "table" then return nil end
  local extra = {}
  if dev.arch then extra[#extra + 1] = tostring(dev.arch) end
  if dev.sm_count then extra[#extra + 1] = M.value(dev.sm_count) .. " SMs" end
  if finite(dev.peak_bandwidth) then extra[#extra + 1] = "peak bandwidth "
    .. units.rate(dev.peak_bandwidth, "B/s") end
  extra[#extra + 1] = clocks.describe(dev.clocks)
  return tostring(dev.name or "unknown device")
    .. (#extra > 0 and (" (" .. table.concat(extra, ", ") .. ")") or "")
end

function M.floor_line(floor)
  if type(floor) ~= "table" then return nil end
  local parts = {}
  if finite(floor.event_pair) then parts[#parts + 1] = "event pair "
    .. units.time(floor.event_pair) end
  if finite(floor.empty_kernel) then parts[#parts + 1] = "empty kernel "
    .. units.time(floor.empty_kernel) end
  return #parts > 0 and table.concat(parts, ", ") or nil
end

-- "gemm_sweep on NVIDIA H200, started 2026-11-29T22:31:07Z"
function M.title(doc)
  local t = M.scenario_name(doc)
  if type(doc.device) == "table" and doc.device.name then t = t .. " on "
    .. tostring(doc.device.name) end
  if doc.started then t = t .. ", started " .. tostring(doc.started) end
  if doc.complete == false then t = t .. " (incomplete: interrupted or still running)" end
  return t
end

-- each configuration's warnings, once: list of {index, warning}
function M.warnings(doc)
  local list = {}
  for i, c in ipairs(doc.configurations or {}) do
    local seen = {}
    for _, w in ipairs(c.warnings or {}) do
      local key = tostring(w.code) .. "\0" .. tostring(w.message)
      if not seen[key] then
        seen[key] = true
        list[#list + 1] = { index = c.index or i, warning = w }
      end
    end
  end
  return list
end

-- a failure or skip reason on its row is cut to the table's width (at least this long)
local MIN_WHY = 48

-- The document as the text printers show it: every string from the data (names, parameter
-- values, messages) with its control characters as \xHH, so that none reaches a terminal and
-- every width is measured on what is shown; an error keeps its lines (wlrun.text.printable).
M.LINES = { error = true }
function M.printable(doc) return printable.data(M.shown(doc), M.LINES) end

-- The document without what no text printer shows: each configuration's samples and enqueue
-- times (kept where its stats have no count, which a loop's summary then takes from them), so
-- that making it printable walks the configurations, not every sample (400 configurations of
-- a thousand samples each: most of the time of writing each text output).
local HIDDEN = { samples = true, enqueue = true }
function M.shown(doc)
  if type(doc) ~= "table" or type(doc.configurations) ~= "table" then return doc end
  local shown, configs = {}, {}
  for k, v in pairs(doc) do shown[k] = v end
  for i, c in pairs(doc.configurations) do
    if type(c) == "table" and type(c.stats) == "table" and math.tointeger(c.stats.n) then
      local e = {}
      for k, v in pairs(c) do
        if not HIDDEN[k] then e[k] = v end
      end
      c = setmetatable(e, getmetatable(c))
    end
    configs[i] = c
  end
  shown.configurations = setmetatable(configs, getmetatable(doc.configurations))
  return setmetatable(shown, getmetatable(doc))
end

function M.render(doc)
  doc = M.printable(doc)
  local t = M.build(doc)
  local cols, out = t.columns, {}
  out[#out + 1] = M.title(doc)
  out[#out + 1] = ""
  if #t.rows == 0 then
    out[#out + 1] = "(no configurations)"
  else
    local w = {}
    for j, col in ipairs(cols) do w[j] = M.width(col.title) end
    for _, r in ipairs(t.rows) do
      if r.ok then
        for j, s in ipairs(r.cells) do w[j] = math.max(w[j], M.width(s)) end
      else
        for j = 1, r.lead do w[j] = math.max(w[j], M.width(r.cells[j])) end
      end
    end
    local function line(cells, upto, tail)
      local parts = {}
      for j = 1, upto do parts[j] = pad(cells[j], w[j], cols[j].right) end
      if tail then parts[#parts + 1] = tail end
      return trim.right(table.concat(parts, "  "))
    end
    local total = (#cols - 1) * 2
    for j = 1, #cols do total = total + w[j] end
    local titles, rule = {}, {}
    for j, col in ipairs(cols) do titles[j], rule[j] = col.title, string.rep("-", w[j]) end
    out[#out + 1] = line(titles, #cols)
    out[#out + 1] = line(rule, #cols)
    for _, r in ipairs(t.rows) do
      if r.ok then
        out[#out + 1] = line(r.cells, #cols)
      else
        local offset = 0
        for j = 1, r.lead do offset = offset + w[j] + 2 end
        out[#out + 1] = line(r.cells, r.lead, M.first_line(r.why,
          math.max(MIN_WHY, total - offset)))
      end
    end
  end
  out[#out + 1] = ""
  for i, c in ipairs(doc.configurations or {}) do
    local s = loop_summary.of_entry(c)
    if s then
      local name = ("#%s %s"):format(M.value(c.index or i), M.scenario_name(doc))
      out[#out + 1] = loop_summary.render(s, name)
      out[#out + 1] = ""
    end
  end
  local dev, floor = M.device_line(doc.device), M.floor_line(doc.floor)
  if dev then out[#out + 1] = "Device: " .. dev end
  if floor then out[#out + 1] = "Timing floor: " .. floor end
  local warnings = M.warnings(doc)
  if #warnings > 0 then
    out[#out + 1] = "Warnings:"
    for _, x in ipairs(warnings) do
      local head = ("  #%s "):format(M.value(x.index))
      out[#out + 1] = ("%s%s: %s"):format(head, tostring(x.warning.code),
        tostring(x.warning.message or ""))
      if x.warning.hint then
        out[#out + 1] = string.rep(" ", #head) .. "hint: " .. tostring(x.warning.hint)
      end
    end
  end
  local failures = {}
  for i, c in ipairs(doc.configurations or {}) do
    if c.status == "failed" then
      local text = tostring(c.error or "failed"):gsub("\n", "\n      ")
      failures[#failures + 1] = ("  #%s [%s] %s"):format(M.value(c.index or i),
        tostring(c.kind or "?"), text)
    end
  end
  if #failures > 0 then
    out[#out + 1] = "Failed:"
    for _, f in ipairs(failures) do out[#out + 1] = f end
  end
  return table.concat(out, "\n") .. "\n"
end

return M
