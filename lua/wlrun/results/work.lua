-- What a scenario's work(p) returns (docs/scenarios.md, "Work, peaks and a baseline") and what
-- an entry keeps of it (docs/results.md): the amounts of one run of the measured work (flops,
-- bytes, or reads and writes, items), the dtype of its arithmetic, and custom metrics; checked
-- strictly, then turned into the entry's work, metrics and custom_metrics. Also the shape the
-- strict loader checks custom_metrics against.
--
--   work.check(w, where) -> w          raises a script error naming `where` (file:line)
--   work.record(entry, w, device, where)
--   work.shape(v, path) -> nil or "what is wrong"
local core = require "wlrun.core"
local fields = require "wlrun.fields"
local peaks = require "wlrun.measure.peaks"

local M = {}

M.MAX_NAME = 32    -- characters of a custom metric's name
M.MAX_UNIT = 16    -- characters of its unit
M.MAX_METRICS = 16 -- custom metrics of one configuration

local AMOUNTS = { flops = true, bytes = true, reads = true, writes = true, items = true }
local FIELDS = "flops, bytes, reads, writes, items, dtype, metrics"
local METRIC_FIELDS = { value = true, unit = true, rate = true }

local function finite(v) return type(v) == "number" and v == v and v ~= math.huge
  and v ~= -math.huge end

-- nil, or what is wrong with a name: identifier-like, so that it is a CSV column and a title as is
local function bad_name(k)
  if type(k) ~= "string" then return ("a name must be a string, got the %s %s"):format(type(k),
    tostring(k)) end
  if #k > M.MAX_NAME then return ("the name '%s...' is longer than %d characters"):format(
    k:sub(1, M.MAX_NAME), M.MAX_NAME) end
  if not k:find("^[%a_][%w_]*$") then
    return (
      "the name '%s' is not a name (letters, digits and _, not starting with a digit)"):format(k)
  end
end

-- nil, or what is wrong with a unit: printable ASCII, short
local function bad_unit(u)
  if type(u) ~= "string" then return ("a unit must be a string, got a %s"):format(type(u)) end
  if u == "" or #u > M.MAX_UNIT then return ("a unit has 1 to %d characters, got %d"):format(
    M.MAX_UNIT, #u) end
  if u:find("[^\32-\126]") then return "a unit is printable ASCII text (no control characters)" end
end

local function fail(where, msg)
  core.error("script", (where and (where .. ": ") or "") .. msg, 0)
end

local function check_metrics(ms, where)
  if type(ms) ~= "table" or getmetatable(ms) ~= nil then
    fail(where,
      ("work(p).metrics must be a table {name = {value =, unit =}, ...}, got a %s"):format(
      type(ms)))
  end
  local n = 0
  for _, k in ipairs(fields.sorted_keys(ms)) do
    local m = ms[k]
    n = n + 1
    local bad = bad_name(k)
    if bad then fail(where, "work(p).metrics: " .. bad) end
    local at = "work(p).metrics." .. k
    if type(m) ~= "table" then
      fail(where, ("%s must be a table {value =, unit =, rate =}, got a %s"):format(at,
      type(m))) end
    for _, f in ipairs(fields.sorted_keys(m)) do
      if not METRIC_FIELDS[f] then
        fail(where, ("%s has an unknown field '%s' (fields: value, unit, rate)"):format(at,
          tostring(f)))
      end
    end
    if m.rate ~= nil and type(m.rate) ~= "boolean" then
      fail(where, ("%s.rate must be true or false, got a %s"):format(at, type(m.rate)))
    end
    if not finite(m.value) then fail(where, ("%s.value must be a finite number, got %s"):format(at,
      tostring(m.value))) end
    if m.rate ~= false and m.value < 0 then
      fail(where,
        ("%s.value is an amount per run of the work (reported per second): >= 0, got %s; rate = "
        .. "false for a value as it is"):format(
        at, tostring(m.value)))
    end
    if m.unit ~= nil then
      bad = bad_unit(m.unit)
      if bad then fail(where, ("%s.unit: %s"):format(at, bad)) end
    end
  end
  if n > M.MAX_METRICS then fail(where, ("work(p).metrics has %d metrics; at most %d"):format(n,
    M.MAX_METRICS)) end
end

-- what work(p) returned: amounts (finite numbers >= 0), a dtype of wlrun.measure.peaks.DTYPES,
-- custom
-- metrics; bytes is reads + writes when those are given
function M.check(w, where)
  if type(w) ~= "table" then fail(where, "work(p) must return a table {flops =, bytes =}, got a "
    .. type(w)) end
  for k, v in pairs(w) do
    if k == "dtype" then
      if not peaks.is_dtype(v) then
        fail(where, ("work(p).dtype must be one of %s, got %s"):format(
          table.concat(peaks.DTYPES, ", "), tostring(v)))
      end
    elseif k == "metrics" then
      check_metrics(v, where)
    elseif not AMOUNTS[k] then
      fail(where, ("work(p) returned an unknown field '%s' (fields: %s)"):format(tostring(k),
        FIELDS))
    elseif not (finite(v) and v >= 0) then
      fail(where, ("work(p).%s must be a finite number >= 0, got %s"):format(k, tostring(v)))
    end
  end
  if (w.reads == nil) ~= (w.writes == nil) then
    fail(where,
      ("work(p) gives %s without %s: give both (0 where none), bytes is their sum"):format(
      w.reads and "reads" or "writes", w.reads and "writes" or "reads"))
  end
  if w.reads and w.bytes then
    local sum = w.reads + w.writes
    if math.abs(w.bytes - sum) > 1e-9 * math.max(math.abs(sum), 1) then
      fail(where,
        ("work(p).bytes (%.17g) is not reads + writes (%.17g + %.17g = %.17g): give bytes or "
        .. "reads and writes"):format(
        w.bytes, w.reads, w.writes, sum))
    end
  end
  return w
end

-- the entry's work, metrics and custom_metrics from what work(p) returned and the median time
function M.record(entry, w, device, where)
  M.check(w, where)
  local bytes = w.reads and (w.reads + w.writes) or w.bytes
  entry.work = { flops = w.flops, bytes = bytes, reads = w.reads, writes = w.writes,
    items = w.items, dtype = w.dtype }
  local median, m = entry.stats.median, {}
  if w.flops then
    m.flop_per_s = w.flops / median
    if w.dtype then -- against the peak of the work's own dtype, where the architecture's is known
      local peak = peaks.flops(device, w.dtype)
      m.peak_fraction = peak and m.flop_per_s / peak or nil
    else
      m.peak_fp32_fraction = device and m.flop_per_s / device.peak_fp32_flops or nil
    end
  end
  if bytes then
    m.bytes_per_s = bytes / median
    m.peak_bandwidth_fraction = device and m.bytes_per_s / device.peak_bandwidth or nil
  end
  if w.items then m.items_per_s = w.items / median end
  entry.metrics = m
  if w.metrics and next(w.metrics) then
    local custom = {}
    for k, x in pairs(w.metrics) do
      custom[k] = { value = x.value, unit = x.unit,
        per_s = x.rate ~= false and x.value / median or nil }
    end
    entry.custom_metrics = custom
  end
end

-- the loader's check of an entry's custom_metrics: {name = {value = number, unit = text, per_s =
-- number}}
function M.shape(v, path)
  if type(v) ~= "table" then return ("%s is a %s, not an object"):format(path, type(v)) end
  for k, x in pairs(v) do
    local bad = bad_name(k)
    if bad then return ("%s: %s"):format(path, bad) end
    local at = path .. "." .. k
    if type(x) ~= "table" then return ("%s is a %s, not an object"):format(at, type(x)) end
    if not finite(x.value) then return ("%s.value is not a finite number"):format(at) end
    if x.per_s ~= nil and not finite(x.per_s) then
      return ("%s.per_s is not a finite number"):format(at) end
    if x.unit ~= nil then
      bad = bad_unit(x.unit)
      if bad then return ("%s.unit: %s"):format(at, bad) end
    end
  end
end

return M
