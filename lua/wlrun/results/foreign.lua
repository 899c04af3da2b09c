-- Results of other tools read as wlrun results documents (docs/results.md, "Results of other
-- tools"): Google Benchmark's JSON output (--benchmark_out, with repetitions) and nvbench's
-- (--json). The format is told from the document's shape; the conversion is a wlrun-results
-- document of version 1 that the strict loader (wlrun.results.load) then checks like any
-- other, so what the tools print is what they print for a run of wlrun's.
--
--   foreign.load(path, opts)        -- like load.load: a results document, or one converted
--   foreign.convert(doc, name, dir) -- a decoded document -> results document, or nil (not foreign)
local core = require "wlrun.core"
local json = require "wlrun.json"
local printable = require "wlrun.text.printable"
local process = require "wlrun.process"
local loader = require "wlrun.results.load"
local schema = require "wlrun.results.schema"
local results = require "wlrun.results"

local foreign = {}

local function fail(opts, msg) core.error("usage", (opts.prefix or "") .. msg, 0) end

local function finite(v) return type(v) == "number" and v == v and v ~= math.huge
  and v ~= -math.huge end

-- the statistics block of a list of samples, non-finite parts (the cv of one sample) left out
local function stats_of(samples)
  local s = core.stats.summary(samples)
  for k, v in pairs(s) do
    if not finite(v) then s[k] = nil end
  end
  return s
end

-- "1024" -> 1024 (an integer), "0.5" -> 0.5, anything else the text itself
local function value_of(text)
  local n = tonumber(text)
  if n and text:match("^[%-+]?[%d.]+[eE]?[%-+]?%d*$") then return math.tointeger(n) or n end
  return text
end

local function basename(path) return type(path) == "string" and path:match("([^/\\]+)$") or nil end

local function entry(index, params)
  return { index = index, params = params, mode = "cold", per = 1, notes = {}, warnings = {} }
end

-- the scenario's axes: the parameters' names in the order they first appear ("name" first)
local function axes_of(out)
  local axes, seen = {}, {}
  local function add(k)
    if not seen[k] then axes[#axes + 1], seen[k] = k, true end
  end
  for _, c in ipairs(out.configurations) do
    if c.params.name ~= nil then add("name") end
    for _, k in ipairs(c.order or {}) do add(k) end
    c.order = nil
  end
  out.scenario.axes = axes
  return out
end

local function measured(e, samples)
  e.status, e.samples, e.stats = "ok", samples, stats_of(samples)
end

local function document(format, name, scenario)
  return {
    schema = schema.NAME, version = schema.VERSION, complete = true,
    scenario = { name = scenario or format }, -- the program's name, or the format's
    source = { format = format, file = name },
    configurations = {},
  }
end

---------------------------------------------------------------------------------------------
-- Google Benchmark

local UNITS = { ns = 1e9, us = 1e6, ms = 1e3, s = 1 } -- per second: 9 ns reads as 9e-9 s
local NOT_PARAMS = { repeats = true } -- how often it ran, not what ran

-- "BM_x/1024/8" -> {name = "BM_x", arg1 = 1024, arg2 = 8}; "BM_x/n:1024" -> {name = "BM_x", n =
-- 1024}
-- A name given twice ("BM_x/n:1/n:2", "BM_x/name:foo", "BM_x/5/arg1:7") keeps every value: the
-- later ones as NAME_2, NAME_3, ... (the first free), so that no part of the name is lost and two
-- benchmarks that differ in it stay two configurations.
function foreign.gbench_params(full)
  local params, n, order = {}, 0, {}
  local function put(k, v)
    local key, i = k, 1
    while params[key] ~= nil do
      i = i + 1
      key = ("%s_%d"):format(k, i)
    end
    params[key], order[#order + 1] = v, key
  end
  for part in (full .. "/"):gmatch("([^/]*)/") do
    if params.name == nil then
      params.name = part
    else
      local k, v = part:match("^([%a_][%w_]*):(.*)$")
      if k then
        if not NOT_PARAMS[k] then put(k, value_of(v)) end
      else
        n = n + 1
        put("arg" .. n, value_of(part))
      end
    end
  end
  return params, order
end

local function looks_gbench(doc)
  if type(doc.benchmarks) ~= "table" or doc.schema ~= nil then return false end
  if type(doc.context) == "table" then return true end
  local b = doc.benchmarks[1]
  return type(b) == "table" and type(b.name) == "string"
    and (b.run_type ~= nil or b.time_unit ~= nil)
end

local function gbench(doc, name, opts)
  local ctx = type(doc.context) == "table" and doc.context or {}
  local out = document("gbench", name, basename(ctx.executable))
  out.source.date, out.source.host = ctx.date, ctx.host_name
  out.source.library_version = ctx.library_version or ctx.libbenchmark_version
  local by, order = {}, {}
  for i, b in ipairs(doc.benchmarks) do
    if type(b) ~= "table" or type(b.name) ~= "string" or b.name == "" then
      fail(opts, ("'%s' is malformed Google Benchmark JSON: benchmarks[%d] has no name"):format(
        name, i))
    end
    -- a time that is there is a number of 0 or more: never replaced by the other one unsaid
    for _, field in ipairs { "real_time", "cpu_time" } do
      local v = b[field]
      if v ~= nil and not (finite(v) and v >= 0) then
        fail(opts, ("'%s' is malformed Google Benchmark JSON: benchmarks[%d] (%s) has %s %s (a "
          .. "number of 0 or more)"):format(name, i, printable.text(b.name, 60), field,
          printable.text(json.encode(v), 30)))
      end
    end
    local aggregate = b.run_type == "aggregate"
    -- a family's complexity fit
    if aggregate and (b.aggregate_name == "BigO" or b.aggregate_name == "RMS") then goto next end
    local run = type(b.run_name) == "string" and b.run_name or b.name
    if aggregate and b.run_name == nil and type(b.aggregate_name) == "string" then
      run = run:gsub("_" .. b.aggregate_name:gsub("%p", "%%%0") .. "$", "")
    end
    local bad_unit = b.time_unit ~= nil and not UNITS[b.time_unit]
    if bad_unit then
      fail(opts,
        ("'%s' is malformed Google Benchmark JSON: benchmarks[%d] (%s) has time_unit %s (ns, "
        .. "us, ms or s)"):format(
        name, i, printable.text(b.name, 60), printable.text(json.encode(b.time_unit), 20)))
    end
    local g = by[run]
    if not g then
      g = { name = run, samples = {}, aggregates = {} }
      by[run], order[#order + 1] = g, g
    end
    local unit = UNITS[b.time_unit or "ns"]
    local t = finite(b.real_time) and b.real_time or finite(b.cpu_time) and b.cpu_time or nil
    if b.error_occurred == true then
      g.error = type(b.error_message) == "string" and b.error_message or "error_occurred"
    elseif aggregate then
      if type(b.aggregate_name) == "string" and t
        and (b.aggregate_unit == nil or b.aggregate_unit == "time") then
        g.aggregates[b.aggregate_name] = { value = t / unit, n = b.repetitions }
      end
    elseif t and t >= 0 then
      g.samples[#g.samples + 1] = t / unit
      g.which = g.which or (finite(b.real_time) and "real_time" or "cpu_time")
    end
    ::next::
  end
  -- two names that split into the same parameters ("BM_x/5/arg1:7" and "BM_x/arg1:5/7") keep
  -- their whole names instead, so that they stay two configurations
  local split, seen = {}, {}
  for i, g in ipairs(order) do
    local params, param_order = foreign.gbench_params(g.name)
    local key = results.key(params)
    split[i], seen[key] = { params, param_order, key }, (seen[key] or 0) + 1
  end
  for i, g in ipairs(order) do
    local params, param_order, key = table.unpack(split[i])
    if seen[key] > 1 then params, param_order = { name = g.name }, { "name" } end
    local e = entry(#out.configurations + 1, params)
    e.order = param_order
    if g.error then
      e.status, e.error, e.kind = "failed", g.error, "benchmark"
    elseif #g.samples > 0 then
      measured(e, g.samples)
      e.notes[1] = ("samples: Google Benchmark's %s per iteration, one per repetition"):format(
        g.which)
    else
      local a = g.aggregates.median or g.aggregates.mean
      if a then
        measured(e, { a.value })
        e.notes[1] = (
          "samples: the summary, Google Benchmark's %s of %s repetitions (the file holds only "
          .. "aggregates)"):format(
          g.aggregates.median and "median" or "mean", tostring(a.n or "its"))
      else
        e.status, e.reason = "skipped", "no time per iteration recorded"
      end
    end
    out.configurations[#out.configurations + 1] = e
  end
  return axes_of(out)
end

---------------------------------------------------------------------------------------------
-- nvbench

local function looks_nvbench(doc)
  if type(doc.benchmarks) ~= "table" or doc.schema ~= nil then return false end
  if type(doc.meta) == "table" and type(doc.meta.version) == "table"
    and doc.meta.version.nvbench ~= nil then return true end
  local b = doc.benchmarks[1]
  return type(b) == "table" and type(b.states) == "table" and type(doc.devices) == "table"
end

-- the summaries of a state by tag: {tag = {name = value}}
local function summaries(state)
  local s = {}
  for _, x in ipairs(type(state.summaries) == "table" and state.summaries or {}) do
    if type(x) == "table" and type(x.tag) == "string" then
      local d = {}
      for _, v in ipairs(type(x.data) == "table" and x.data or {}) do
        if type(v) == "table" and type(v.name) == "string" then
          d[v.name] = (v.type == "int64" or v.type == "float64") and tonumber(v.value) or v.value
        end
      end
      s[x.tag] = d
    end
  end
  return s
end

-- the most sample times read from one nvbench file (float32), as a count is read (10^7)
local MAX_SAMPLES = 10000000
local KINDS = { directory = "a directory", fifo = "a FIFO", socket = "a socket",
  other = "a device" }

-- the sample file at path, opened, or nil and why not: a file the JSON names is read only where
-- it is a regular file (a FIFO would block the read, /dev/zero never end it) and not larger than
-- the samples it should hold
local function sample_file(path, count)
  local kind = process.file_type(path, true)
  if not kind then return nil end
  if kind ~= "file" then
    return nil, ("'%s' is %s, not a file"):format(path, KINDS[kind] or kind)
  end
  if count and (count < 0 or count > MAX_SAMPLES) then
    return nil, ("its size of %d samples is not from 0 to %d"):format(count, MAX_SAMPLES)
  end
  return io.open(path, "rb")
end

-- the float32 sample times of nvbench's binary file (--jsonbin), or nil and why not
local function sample_times(file, count, dir)
  if type(file) ~= "string" then return nil, "no file" end
  local tried = { file }
  if file:sub(1, 1) ~= "/" and dir then tried[2] = dir .. "/" .. file end
  for _, path in ipairs(tried) do
    local f, why = sample_file(path, count)
    if why then return nil, why end
    if f then
      local most = count or MAX_SAMPLES
      local bytes = f:read(4 * most + 1) or "" -- one more: a longer file is told
      f:close()
      if #bytes > 4 * most then
        return nil, ("'%s' holds more than %d float32 samples"):format(path, most)
      end
      if #bytes % 4 ~= 0 or (count and #bytes ~= 4 * count) then
        return nil, ("'%s' holds %d bytes, not %s float32 samples"):format(path, #bytes,
          tostring(count))
      end
      local list = {}
      for at = 1, #bytes, 4 do list[#list + 1] = (string.unpack("<f", bytes, at)) end
      return list
    end
  end
  return nil, ("its file '%s' is not there"):format(file)
end

local function nv_device(d)
  local arch = math.tointeger(tonumber(d.sm_version))
  return {
    name = type(d.name) == "string" and d.name or nil, index = math.tointeger(d.id),
    arch = arch and ("sm_%d"):format(arch // 10) or nil,
      sm_count = finite(d.number_of_sms) and d.number_of_sms or nil,
    memory_bytes = finite(d.global_memory_size) and d.global_memory_size or nil,
    l2_bytes = finite(d.l2_cache_size) and d.l2_cache_size or nil,
    peak_bandwidth = finite(d.global_memory_bus_bandwidth) and d.global_memory_bus_bandwidth or nil,
  }
end

local function nvbench(doc, name, dir, opts)
  local meta = type(doc.meta) == "table" and doc.meta or {}
  local out = document("nvbench", name, basename(type(meta.argv) == "table" and meta.argv[1]
    or nil))
  local v = type(meta.version) == "table" and type(meta.version.nvbench) == "table"
    and meta.version.nvbench or {}
  out.source.library_version = v.string
  local devices, used = {}, {}
  for _, d in ipairs(type(doc.devices) == "table" and doc.devices or {}) do
    if type(d) == "table" and math.tointeger(d.id) then devices[d.id] = d end
  end
  for _, b in ipairs(doc.benchmarks) do
    for _, s in ipairs(type(b) == "table" and type(b.states) == "table" and b.states or {}) do
      if type(s) == "table" and math.tointeger(s.device) then used[#used + 1] = s.device end
    end
  end
  local several = false
  for _, d in ipairs(used) do several = several or d ~= used[1] end
  if used[1] and devices[used[1]] then out.device = nv_device(devices[used[1]]) end
  for bi, b in ipairs(doc.benchmarks) do
    if type(b) ~= "table" or type(b.states) ~= "table" then
      fail(opts, ("'%s' is malformed nvbench JSON: benchmarks[%d] has no states"):format(name, bi))
    end
    for _, s in ipairs(b.states) do
      local params, order = { name = type(b.name) == "string" and b.name or ("benchmark " .. bi) },
        {}
      if several then params.device, order[1] = math.tointeger(s.device), "device" end
      for _, a in ipairs(type(s.axis_values) == "table" and s.axis_values or {}) do
        if type(a) == "table" and type(a.name) == "string" then
          local x = a.value
          if a.type == "int64" or a.type == "float64" then
            x = tonumber(x)
            x = a.type == "int64" and math.tointeger(x) or x
          end
          if params[a.name] == nil then params[a.name], order[#order + 1] = x, a.name end
        end
      end
      local e = entry(#out.configurations + 1, params)
      e.order = order
      local sum = summaries(s)
      local times = sum["nv/cold/sample_times"]
      local n = sum["nv/cold/sample_size"] and sum["nv/cold/sample_size"].value
      local list, why = nil, "nvbench recorded no sample times"
      if times then
        list, why = sample_times(times.filename, math.tointeger(times.size), dir)
        why = why and ("its sample times are not read: " .. why)
      end
      if s.is_skipped == true then
        e.status, e.reason = "skipped", type(s.skip_reason) == "string" and s.skip_reason
          or "skipped by nvbench"
      elseif list and #list > 0 then
        measured(e, list)
        e.notes[1] = "samples: nvbench's GPU times (cold), from its sample times file"
      else
        local median = sum["nv/cold/time/gpu/median"] and sum["nv/cold/time/gpu/median"].value
        local mean = sum["nv/cold/time/gpu/mean"] and sum["nv/cold/time/gpu/mean"].value
        local t = finite(median) and median or finite(mean) and mean or nil
        if t then
          measured(e, { t })
          e.notes[1] = (
            "samples: the summary, nvbench's %s GPU time (cold) of %s samples (%s)"):format(
            finite(median) and "median" or "mean", tostring(n or "its"), why)
        else
          e.status, e.reason = "skipped", "nvbench recorded no GPU time"
        end
      end
      out.configurations[#out.configurations + 1] = e
    end
  end
  return axes_of(out)
end

---------------------------------------------------------------------------------------------

-- The results document a decoded Google Benchmark or nvbench document stands for, or nil when
-- it is neither; name: the file's (for messages), dir: its folder (nvbench's sample files).
function foreign.convert(doc, name, dir, opts)
  if type(doc) ~= "table" then return nil end
  if looks_nvbench(doc) then return nvbench(doc, name, dir, opts or {}) end
  if looks_gbench(doc) then return gbench(doc, name, opts or {}) end
end

-- A results document from the file at path ("-": standard input), as wlrun.results.load.load
-- reads it, or a Google Benchmark or nvbench file converted; anything else keeps the loader's
-- error. opts: prefix, accept (as for the loader).
function foreign.load(path, opts)
  opts = opts or {}
  local text, name = loader.read(path, opts)
  if not loader.is_journal(text) and text:find('"benchmarks"', 1, true) then
    local doc = json.decode(text, { array_nulls = false })
    local dir = path ~= "-" and (path:match("^(.*)/[^/]*$") or ".") or nil
    local converted = foreign.convert(doc, name, dir, opts)
    if converted then
      local e = schema.check(converted)
      if e then fail(opts, ("'%s' could not be read as %s results: %s"):format(name,
        converted.source.format, e)) end
      return converted
    end
  end
  return loader.decode(text, name, opts)
end

return foreign
