-- CSV of a results document (RFC 4180: CRLF line ends; a field with a comma, a double quote,
-- CR or LF is quoted, its quotes doubled). One row per configuration; times in seconds
-- (%.9g), an empty field where the document has no value. Formats only. Text keeps every byte
-- of the data (a CSV is data, read back by programs: a carriage return in a name stays one,
-- inside its quoted field); nothing is prefixed to a cell that looks like a formula.
local T = require "wlrun.report.table"

local M = {}

local stat_keys = { "n", "mean", "std", "median", "min", "max", "p10", "p25", "p75", "p90", "p99",
  "iqr", "cv" }

function M.field(s)
  s = tostring(s)
  if s:find('[,"\r\n]') then return '"' .. s:gsub('"', '""') .. '"' end
  return s
end

-- numbers: integers as they are; whole floats below 2^53 without exponent or decimals; other
-- floats %.9g; NaN and infinities as nan, inf, -inf
function M.number(v)
  if v == nil then return "" end
  if type(v) ~= "number" then return tostring(v) end
  if math.type(v) == "integer" then return ("%d"):format(v) end
  if v ~= v then return "nan" end
  if v == math.huge then return "inf" end
  if v == -math.huge then return "-inf" end
  if v == math.floor(v) and math.abs(v) < 2 ^ 53 then return ("%.0f"):format(v) end
  return ("%.9g"):format(v)
end

local function bool(v)
  if v == nil then return "" end
  return v and "true" or "false"
end

local fixed_after = { "enqueue_median", "flops", "bytes", "flop_per_s", "bytes_per_s",
  "peak_bandwidth_fraction",
  "peak_fp32_fraction", "peak_fraction", "baseline_fraction", "samples_per_s", "registers",
    "local_bytes", "check_ok", "warnings", "reason_or_error" }

-- the names of wlrun's own columns: a parameter of the same name is headed "param.NAME"
local fixed = { index = true, status = true, mode = true, per = true }
for _, k in ipairs(stat_keys) do fixed[k] = true end
for _, k in ipairs(fixed_after) do fixed[k] = true end

-- columns of work(p)'s reads, writes, items and custom metrics, where any configuration has
-- them (after samples_per_s): {name, value = function(c)}
local function work_columns(doc)
  local has, cols = {}, {}
  for _, c in ipairs(doc.configurations or {}) do
    for _, k in ipairs { "reads", "writes", "items" } do has[k] = has[k]
      or (c.work and c.work[k]) ~= nil end
    has.items_per_s = has.items_per_s or (c.metrics and c.metrics.items_per_s) ~= nil
  end
  local function from(part, k) return function(c) return M.number(c[part] and c[part][k]) end end
  for _, k in ipairs { "reads", "writes", "items" } do
    if has[k] then cols[#cols + 1] = { name = k, value = from("work", k) } end
  end
  if has.items_per_s then cols[#cols + 1] = { name = "items_per_s",
    value = from("metrics", "items_per_s") } end
  for _, d in ipairs(T.custom_metrics_present(doc)) do
    local function field(k)
      return function(c)
        local x = type(c.custom_metrics) == "table" and c.custom_metrics[d.name]
        return type(x) == "table" and (k == "unit" and (x.unit or "") or M.number(x[k])) or ""
      end
    end
    local base = "metric." .. tostring(d.name)
    cols[#cols + 1] = { name = base, value = field("value") }
    cols[#cols + 1] = { name = base .. ".unit", value = field("unit") }
    cols[#cols + 1] = { name = base .. ".per_s", value = field("per_s") }
  end
  return cols
end

function M.render(doc)
  doc = T.shown(doc)
  local axes = T.axes(doc)
  local extra, taken = work_columns(doc), {}
  for _, x in ipairs(extra) do taken[x.name] = true end
  local header = { "index" }
  for _, a in ipairs(axes) do
    local name = tostring(a)
    header[#header + 1] = (fixed[name] or taken[name] or name:match("^param%."))
      and ("param." .. name) or name
  end
  for _, k in ipairs { "status", "mode", "per" } do header[#header + 1] = k end
  for _, k in ipairs(stat_keys) do header[#header + 1] = k end
  for _, k in ipairs(fixed_after) do
    header[#header + 1] = k
    if k == "samples_per_s" then
      for _, x in ipairs(extra) do header[#header + 1] = x.name end
    end
  end
  local lines = {}
  local function add(fields)
    for i, f in ipairs(fields) do fields[i] = M.field(f) end
    lines[#lines + 1] = table.concat(fields, ",")
  end
  add(header)
  for i, c in ipairs(doc.configurations or {}) do
    local f = { M.number(c.index or i) }
    for _, a in ipairs(axes) do
      local v = c.params and c.params[a]
      f[#f + 1] = type(v) == "number" and M.number(v) or (v == nil and "" or tostring(v))
    end
    f[#f + 1] = c.status or ""
    f[#f + 1] = c.mode or ""
    f[#f + 1] = M.number(c.per)
    local s = c.stats or {}
    for _, k in ipairs(stat_keys) do f[#f + 1] = M.number(s[k]) end
    f[#f + 1] = M.number(c.enqueue_stats and c.enqueue_stats.median)
    local w, m = c.work or {}, c.metrics or {}
    f[#f + 1] = M.number(w.flops)
    f[#f + 1] = M.number(w.bytes)
    f[#f + 1] = M.number(m.flop_per_s)
    f[#f + 1] = M.number(m.bytes_per_s)
    f[#f + 1] = M.number(m.peak_bandwidth_fraction)
    f[#f + 1] = M.number(m.peak_fp32_fraction)
    f[#f + 1] = M.number(m.peak_fraction)
    f[#f + 1] = M.number(m.baseline_fraction)
    f[#f + 1] = M.number(m.samples_per_s)
    for _, x in ipairs(extra) do f[#f + 1] = x.value(c) end
    local k = type(c.kernels) == "table" and c.kernels[1] or {}
    f[#f + 1] = M.number(k.registers)
    f[#f + 1] = M.number(k.local_bytes)
    f[#f + 1] = bool(c.check and c.check.ok)
    f[#f + 1] = T.warning_codes(c, ";")
    f[#f + 1] = (c.status == "failed" and c.error) or (c.status == "skipped" and c.reason)
      or c.error or c.reason or ""
    add(f)
  end
  return table.concat(lines, "\r\n") .. "\r\n"
end

return M
