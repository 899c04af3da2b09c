-- The shape of a results document (docs/results.md), as the strict loader checks it: every
-- part that wlrun or a printer reads has its type, so that a document the loader accepts can
-- be printed, compared, merged, plotted and exported without an error of wlrun's own. Parts it
-- does not know are let through (a newer wlrun may add some).
--
--   schema.check(doc) -> nil, or "what is wrong" naming the path (configurations[3].samples[2])
local core = require "wlrun.core"
local json = require "wlrun.json"
local printable = require "wlrun.text.printable"
local names = require "wlrun.fields" -- field names (as "names": "fields" is a shape's here)
local work = require "wlrun.results.work"

local schema = {}

schema.NAME = "wlrun-results" -- a document's "schema" field, and the version of that schema
schema.VERSION = 1

local function finite(v) return type(v) == "number" and v == v and v ~= math.huge
  and v ~= -math.huge end

-- a sequence (keys 1..n, no holes): n, or nil and the first key out of place
local function sequence(t)
  local n, max = 0, 0
  for k in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 then return nil, k end
    n = n + 1
    if k > max then max = k end
  end
  if max ~= n then
    for i = 1, max do
      if t[i] == nil then return nil, i end
    end
  end
  return n
end

-- A shape is a function(v, path) -> nil or the message.

local function kind(want, test, what)
  return function(v, path)
    if not test(v) then return ("%s is %s, not %s"):format(path,
      type(v) == "table" and "a JSON object or array"
      or ("a " .. type(v)), what or want) end
  end
end

local string_ = kind("string", function(v) return type(v) == "string" end, "a string")
local boolean = kind("boolean", function(v) return type(v) == "boolean" end, "true or false")
local number = kind("number", finite, "a finite number")
local scalar = kind("scalar", function(v) return type(v) ~= "table" end,
  "a number, a string or a boolean")
local any = function() end

local function integer(min, max)
  if max then
    return kind("integer", function(v) return math.type(v) == "integer" and v >= min
      and v <= max end,
      ("a whole number from %d to %d"):format(min, max))
  end
  return kind("integer", function(v) return math.type(v) == "integer" and v >= min end,
    ("a whole number >= %d"):format(min))
end
-- the most configurations a sweep has (wlrun.run.sweep's MAX_SPACE): a count read from a file is
-- looped over (merge), so it is bounded by what a run can make
local MAX_COUNT = 10000000

local function array(of)
  return function(v, path)
    if type(v) ~= "table" then return ("%s is a %s, not an array"):format(path, type(v)) end
    local n, bad = sequence(v)
    if not n then
      if math.type(bad) == "integer" then return ("%s[%d] is null"):format(path, bad) end
      return path .. " is an object, not an array"
    end
    for i = 1, n do
      local e = of(v[i], ("%s[%d]"):format(path, i))
      if e then return e end
    end
  end
end

-- the first error of v's fields (a key that is no string, or a field its shape refuses), the keys
-- taken in the order given (nil: in pairs' order)
local function field_error(v, path, fields, others, keys)
  local function at(k, x)
    if type(k) ~= "string" then return path .. " is an array, not an object" end
    local shape = fields[k] or others
    return shape and shape(x, path .. "." .. k)
  end
  if keys then
    for _, k in ipairs(keys) do
      local e = at(k, v[k])
      if e then return e end
    end
    return nil
  end
  for k, x in pairs(v) do
    local e = at(k, x)
    if e then return e end
  end
end

-- fields: the known keys and their shapes; others: the shape of every other key (nil: any);
-- required: the keys that must be there (what a printer reads without a fallback). Of several
-- fields refused, the first in the keys' order is named, the same on every run (pairs' order is
-- not: Lua seeds its string hashes at random)
local function object(fields, others, required)
  return function(v, path)
    if type(v) ~= "table" then return ("%s is a %s, not an object"):format(path, type(v)) end
    for _, k in ipairs(required or {}) do
      if v[k] == nil then return ("%s has no %s"):format(path, k) end
    end
    if not field_error(v, path, fields, others) then return nil end
    return field_error(v, path, fields, others, names.sorted_keys(v))
  end
end

local numbers = array(function(v, path) -- samples: finite numbers, a null named as such
  if not finite(v) then return ("%s is not a finite number"):format(path) end
end)

-- times measured (samples, their statistics): never negative, and at most a year (a sum, a
-- mean or a variance of them stays finite: 1e308 would overflow the statistics and a history)
local MAX_SECONDS = 365 * 86400
local function duration(v, path)
  if not finite(v) then return ("%s is not a finite number"):format(path) end
  if v < 0 then return ("%s is %s: a time measured is not negative"):format(path, json.encode(v))
  end
  if v > MAX_SECONDS then
    return ("%s is %s: a time measured is at most a year (%d s)"):format(path, json.encode(v),
      MAX_SECONDS)
  end
end
local durations = array(duration)
-- whether v is a time measured as the loader takes one (a history's rows are checked by it too)
function schema.is_duration(v) return duration(v, "") == nil end
local time_stats = object({ n = duration, mean = duration, std = duration, median = duration,
  min = duration,
  max = duration, p10 = duration, p25 = duration, p75 = duration, p90 = duration, p99 = duration,
    iqr = duration,
  cv = duration }, number)

-- "2026-11-29T22:31:07Z", as wlrun writes the time a run started and finished (UTC): a real date
-- (February 29th in leap years only) and time (a leap second's :60 allowed)
local DAYS = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 }
local function real_date(v)
  local y, mo, d, h, mi, sec = v:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)T(%d%d):(%d%d):(%d%d)Z$")
  if not y then return false end
  y, mo, d, h, mi, sec = tonumber(y), tonumber(mo), tonumber(d), tonumber(h), tonumber(mi),
    tonumber(sec)
  if mo < 1 or mo > 12 or d < 1 or h > 23 or mi > 59 or sec > 60 then return false end
  local leap = y % 4 == 0 and (y % 100 ~= 0 or y % 400 == 0)
  return d <= DAYS[mo] + ((mo == 2 and leap) and 1 or 0)
end
local function timestamp(v, path)
  if type(v) ~= "string" or not real_date(v) then
    return (
      "%s is %s, not a time stamp like 2026-11-29T22:31:07Z (a real date and time, UTC)"):format(
      path,
      type(v) == "string" and ("'" .. printable.text(v, 40) .. "'") or ("a " .. type(v)))
  end
end

local params = object({}, function(v, path)
  if type(v) == "table" then
    return ("%s is a table (parameters are numbers, strings or booleans)"):format(path) end
end)

local warning = object { code = string_, title = string_, message = string_, hint = string_ }

-- a count, a rate, a share or a ratio (a phase's share of a step may pass 1: phases on several
-- streams at once), FLOP
local amount = kind("number", function(v) return finite(v) and v >= 0 end, "a finite number >= 0")

-- cupti mode: the per-kernel breakdown
local kernel_times = array(object { name = string_, count = amount, median = duration,
  share = amount })

-- the statuses wlrun writes: a run's (ok, skipped, failed), --compile-only's and --dry-run's
local STATUSES = { ok = true, skipped = true, failed = true, compiled = true, planned = true }
local function status(v, path)
  if type(v) ~= "string" then return string_(v, path) end
  if not STATUSES[v] then
    return ("%s is '%s', not a status wlrun writes (ok, skipped, failed, compiled or planned)")
      :format(path, printable.text(v, 40))
  end
end

-- wl.loop's summary (docs/loops.md): its times are times measured, its counts and shares amounts
local loop = object {
  batch_size = amount, data = durations, data_stats = time_stats, throughput = amount,
    data_ratio = amount,
  total_time = duration, outside = object({ mean = duration, share = amount }, number,
    { "mean", "share" }), flops_per_sample = amount,
    achieved_flops = amount,
  peak_flops = amount, mfu = amount, dtype = string_,
  phases = array(object({ name = string_, mean = duration, median = duration, share = amount,
    top = boolean }, nil,
    { "name", "mean", "share" })),
}

-- wlrun trace (docs/trace.md): a configuration's process, and the run that traced it
local trace_kernels = array(object { name = string_, count = integer(0), time = duration })

local trace = object {
  step = string_, data = string_, timing = string_, steps = integer(0), data_source = string_,
    data_threads = string_,
  batch_source = string_,
  process = object { pid = integer(0), ppid = integer(0), command = string_, thread = string_,
    exited = boolean,
    truncated = boolean },
  cupti = object { state = string_, reason = string_ },
  phases = array(object { name = string_, top = boolean, cpu = durations, cpu_mean = duration,
    gpu = durations,
    gpu_mean = duration, kernels = trace_kernels }),
  gpu_busy = durations, gpu_busy_mean = duration, gpu_outside = durations,
    gpu_outside_mean = duration,
  gpu_unattributed = durations, gpu_unattributed_mean = duration, data_gpu = durations,
    data_gpu_mean = duration,
  data_kernels = trace_kernels, ranges = string_, device = integer(0), between = durations,
    between_mean = duration,
  run_ahead = object({ lag_mean = duration, lag_max = duration }, amount),
    ranks = object({}, number),
  gpu_steps = array(integer(1)), waited_steps = integer(1), began_steps = integer(1),
}

local trace_run = object {
  command = array(string_), program = string_, library = string_, time = duration, dir = string_,
  exit = object { how = string_, code = integer(0), signal = integer(1) }, interrupted = integer(1),
  sync_steps = boolean, processes = integer(0), ranks = object({}, number),
}

local entry = object {
  index = integer(1, MAX_COUNT), params = params, status = status, reason = string_,
    error = string_, kind = string_,
  mode = string_, per = amount, blocked = object { gave_up = integer(0), kept = integer(0) },
    warmup = amount,
  samples = durations, enqueue = durations,
  stats = time_stats, enqueue_stats = time_stats, shape = object({ modes_at = numbers }, scalar),
  adaptive = object({}, scalar), work = object({ dtype = string_ }, number),
    metrics = object({}, number),
  custom_metrics = work.shape,
  baseline = params,
  kernels = array(object({ name = string_, source = string_, arch = string_, compiler = string_,
                           compiler_version = string_ }, scalar)),
  check = object { ok = boolean, message = string_ },
  warnings = array(warning), notes = array(string_), kernel_times = kernel_times,
    span_stats = object({}, number),
  clock = object({ before = object({}, any), after = object({}, any), chunks = numbers }),
  throttle = object { discarded_chunks = integer(0), discarded_samples = integer(0),
    kept_chunks = integer(0),
    reasons = array(string_) },
  energy = object({}, number), memory = object({}, number), wall = object({}, number),
  time = duration, loop = loop, device_index = integer(0), resumed = boolean, isolated = boolean,
    trace = trace,
}

-- where the run's numbers come from (wlrun.results.provenance); the older form {commit =, dirty =}
-- of
-- the history's fixtures and a newer wlrun's parts are let through
local commit = kind("commit", function(v) return type(v) == "string" and #v >= 7 and #v <= 64
  and v:match("^%x+$") end,
  "a commit (7 to 64 hex digits)")
local provenance_fields = {
  git = object({ commit = commit, dirty = boolean, branch = string_ }, scalar), host = string_,
  cpu = object({ model = string_, count = integer(1) }, scalar),
  os = object({ name = string_, release = string_, arch = string_ }, scalar),
  driver = object({ cuda = string_, nvidia = string_ }, scalar),
  toolkit = object({ runtime = string_, nvrtc = string_ }, scalar),
  wlrun = string_, command_line = array(string_),
}
local provenance = object(provenance_fields, any)
-- a resumed run's: the provenance of the file it resumed
provenance_fields.resumed_from = provenance

local document = object {
  schema = string_, version = integer(1),
  wlrun = object({ version = string_, lua = string_, nvrtc = string_ }, scalar),
  command_line = array(string_), cwd = string_, started = timestamp, finished = timestamp,
  complete = boolean, compile_only = boolean, truncated = boolean, journal = boolean,
  provenance = provenance,
  scenario = object({ name = string_, description = string_, file = string_, hash = string_,
    axes = array(string_),
    total_configurations = integer(0, MAX_COUNT) }),
  settings = object({}, object({}, scalar)), sources = object({}, string_),
  device = object({ name = string_, arch = string_, index = integer(0), sm_count = number,
    memory_bytes = number,
    l2_bytes = number, peak_bandwidth = number, peak_fp32_flops = number, driver_version = number,
    runtime_version = number, pci_bus_id = string_,
    clocks = object { locked = boolean, mhz = integer(0), requested = string_,
      refused = string_ } }, any),
  floor = object({}, number), shard = object { k = integer(1, MAX_COUNT), n = integer(1, MAX_COUNT),
    source = string_ },
  devices = array(integer(0)), missing = array(integer(1)), trace = trace_run,
    wall = object({}, number),
  configurations = array(entry),
}

-- A statistics block against the samples it summarises (wlrun writes both from the same list,
-- by core.stats.summary, and the JSON keeps every bit of a sample): each of its fields that is
-- there, recomputed from the samples by that function. A field agrees within rounding: 10^-9 of
-- its value, or of the largest sample (a spread, std or iqr, is a difference of numbers that
-- large), or for cv of the largest sample over the mean. A block without its samples cannot be
-- checked, and is refused. nil, or what disagrees.
local FIELDS = { "median", "mean", "min", "max", "std", "p10", "p25", "p75", "p90", "p99", "iqr",
  "cv" }
local ROUNDING = 1e-9
local shortest = json.encode -- the shortest text that reads back as the same number
local function agrees(list, stats, path, of)
  if type(stats) ~= "table" then return nil end
  if type(list) ~= "table" or #list == 0 then
    return ("%s has no samples to be checked against (%s is %s): statistics are kept with the "
      .. "samples they summarise"):format(path, of, type(list) == "table" and "empty"
        or "missing")
  end
  if stats.n ~= nil and stats.n ~= #list then
    return ("%s.n is %s but %s holds %d samples"):format(path, tostring(stats.n), of, #list)
  end
  local s = core.stats.summary(list)
  local scale = math.max(math.abs(s.min), math.abs(s.max))
  for _, k in ipairs(FIELDS) do
    local want, got = s[k], stats[k]
    if got ~= nil then
      if want ~= want then -- the cv of samples whose mean is 0: none
        return ("%s.%s is %s but its samples (%s) have a mean of 0: they give none"):format(
          path, k, shortest(got), of)
      end
      local within = math.max(math.abs(want), math.abs(got),
        k == "cv" and scale / math.abs(s.mean) or scale)
      if math.abs(got - want) > ROUNDING * within + 1e-300 then
        return ("%s.%s is %s but its samples (%s) give %s"):format(path, k, shortest(got), of,
          shortest(want))
      end
    end
  end
end

-- A mean of wlrun trace's (NAME_mean) against its list NAME (trace/report.lua writes both from
-- the iterations measured; an empty list's mean is 0), within the same rounding.
local function mean_agrees(t, name, path)
  local m, list = t[name .. "_mean"], t[name]
  if m == nil then return nil end
  path = path .. "." .. name
  if type(list) ~= "table" then
    return ("%s_mean has no list to be checked against (%s is missing): means are kept with the "
      .. "lists they summarise"):format(path, path)
  end
  local sum, scale = 0, 0
  for _, x in ipairs(list) do sum, scale = sum + x, math.max(scale, math.abs(x)) end
  local want = #list > 0 and sum / #list or 0
  if math.abs(m - want) > ROUNDING * math.max(math.abs(want), math.abs(m), scale) + 1e-300 then
    return ("%s_mean is %s but its list (%s) gives %s"):format(path, shortest(m), path,
      shortest(want))
  end
end

local TRACE_MEANS = { "between", "gpu_busy", "gpu_outside", "gpu_unattributed", "data_gpu" }
local function trace_agrees(t, at)
  if type(t) ~= "table" then return nil end
  for _, name in ipairs(TRACE_MEANS) do
    local e = mean_agrees(t, name, at)
    if e then return e end
  end
  for j, ph in ipairs(t.phases or {}) do
    local e = mean_agrees(ph, "cpu", ("%s.phases[%d]"):format(at, j))
      or mean_agrees(ph, "gpu", ("%s.phases[%d]"):format(at, j))
    if e then return e end
  end
end

local function consistent(i, c)
  local at = ("configurations[%d]"):format(i)
  return agrees(c.samples, c.stats, at .. ".stats", at .. ".samples")
    or agrees(c.enqueue, c.enqueue_stats, at .. ".enqueue_stats", at .. ".enqueue")
    or (type(c.loop) == "table" and agrees(c.loop.data, c.loop.data_stats, at .. ".loop.data_stats",
      at .. ".loop.data"))
    or trace_agrees(c.trace, at .. ".trace")
end

-- What a document says of its own size agrees with what it holds: a shard K of N has K <= N, and
-- a sweep of scenario.total_configurations has no more configurations than that, none numbered
-- past it (merge would call such a file complete). nil, or what disagrees.
local function sized(doc)
  local s = doc.shard
  if type(s) == "table" and s.k and s.n and s.k > s.n then
    return ("shard.k is %d but shard.n is %d: shard K of N has K <= N"):format(s.k, s.n)
  end
  local total = type(doc.scenario) == "table" and doc.scenario.total_configurations
  if not total then return nil end
  if #doc.configurations > total then
    return ("configurations holds %d entries but scenario.total_configurations is %d"):format(
      #doc.configurations, total)
  end
  for i, c in ipairs(doc.configurations) do
    if c.index and c.index > total then
      return ("configurations[%d].index is %d but scenario.total_configurations is %d: an index "
        .. "is a position in the sweep"):format(i, c.index, total)
    end
  end
end

function schema.check(doc)
  if doc.configurations == nil then return "no configurations array" end
  local e = document(doc, "")
  if e then return (e:gsub("^%.", "")) end -- "configurations[3]...", not ".configurations[3]..."
  e = sized(doc)
  if e then return e end
  -- every configuration is of some parameters ({} for none)
  for i, c in ipairs(doc.configurations) do
    if c.params == nil then return ("configurations[%d] has no params"):format(i) end
    e = consistent(i, c)
    if e then return e end
  end
end

return schema
