-- `wlrun export RESULTS.json [--format gbench] [-o FILE]` (docs/compare.md): a results document
-- in another format. gbench: Google Benchmark's JSON output ({"context": {...}, "benchmarks":
-- [...]}), so that tools that read it (its tools/compare.py, CI trackers of benchmark results)
-- read wlrun results. The printers' formats (table, plain, csv, markdown, json) re-render a
-- recorded run.
local stdio = require "wlrun.text.stdio"
local units = require "wlrun.text.units"
local report = require "wlrun.report"
local T = require "wlrun.report.table"
local json_out = require "wlrun.report.json"
local cli = require "wlrun.tools.cli"

local M = {}
local TOOL = "export"

local finite = units.finite

local function fail(kind, msg) cli.fail(kind, TOOL, msg) end

M.time_units = {} -- Google Benchmark's time units: name -> units per second
for _, u in ipairs(units.TIME) do M.time_units[u[2]] = math.floor(1 / u[1] + 0.5) end

-- "gemm_sweep/variant:tiled/M:1024/N:1024" (Google Benchmark's named arguments)
function M.benchmark_name(doc, c)
  local parts = { T.scenario_name(doc) }
  local axes, seen = {}, {}
  for _, a in ipairs(T.axes(doc)) do
    if not seen[a] then seen[a], axes[#axes + 1] = true, a end
  end
  local extra = {}
  for k in pairs(c.params or {}) do
    if not seen[k] then extra[#extra + 1] = k end
  end
  table.sort(extra, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(extra) do axes[#axes + 1] = k end
  for _, a in ipairs(axes) do
    local v = c.params and c.params[a]
    if v ~= nil then parts[#parts + 1] = ("%s:%s"):format(a, T.value(v)) end
  end
  return table.concat(parts, "/")
end

local counter_names = { flop_per_s = "flop_per_second", bytes_per_s = "bytes_per_second",
  items_per_s = "items_per_second" }

-- Google Benchmark's own keys describe the host CPU, which a results document does not
-- record: only those wlrun knows are written (with empty caches and load_avg lists)
local function context(doc)
  local ctx = json_out.object()
  ctx.date = doc.started or doc.finished or ""
  ctx.host_name = type(doc.host) == "string" and doc.host or nil
  ctx.executable = type(doc.command_line) == "table" and table.concat(doc.command_line, " ")
    or "wlrun"
  ctx.caches = json_out.array()
  ctx.load_avg = json_out.array()
  ctx.library_build_type = "release"
  ctx.library = "wlrun"
  ctx.wlrun_version = type(doc.wlrun) == "table" and doc.wlrun.version or nil
  ctx.scenario = T.scenario_name(doc)
  ctx.scenario_file = type(doc.scenario) == "table" and doc.scenario.file or nil
  local d = type(doc.device) == "table" and doc.device or {}
  ctx.device = d.name
  ctx.device_arch = d.arch
  ctx.driver_version = d.driver_version
  ctx.runtime_version = d.runtime_version
  local run = type(doc.settings) == "table" and type(doc.settings.run) == "table"
    and doc.settings.run or {}
  ctx.mode = run.mode
  ctx.flush_l2 = run.flush_l2
  ctx.complete = doc.complete
  return ctx
end

-- an entry's head; b: the benchmark (name, instance)
local function entry(b, name, run_type, reps)
  local e = json_out.object()
  e.name = name
  e.family_index = 0
  e.per_family_instance_index = b.instance
  e.run_name = b.name
  e.run_type = run_type
  e.repetitions = reps
  return e
end

-- the times of an entry, in the document's unit
local function times(e, b, iterations, seconds)
  e.iterations = iterations
  e.real_time = seconds * b.scale
  e.cpu_time = seconds * b.scale
  e.time_unit = b.unit
end

-- the configuration's metrics as Google Benchmark's counters
local function counters(e, c)
  local keys = {}
  for key in pairs(c.metrics or {}) do keys[#keys + 1] = key end
  table.sort(keys)
  for _, key in ipairs(keys) do
    local v = c.metrics[key]
    if finite(v) then e[counter_names[key] or key] = v + 0.0 end
  end
end

-- a configuration that was not measured: an entry with error_occurred
local function error_entry(b, c)
  local e = entry(b, b.name, "iteration", 1)
  e.repetition_index = 0
  e.threads = 1
  e.error_occurred = true
  e.error_message = c.status == "skipped" and ("skipped: " .. tostring(c.reason or ""))
    or c.status == "failed" and ("[" .. tostring(c.kind or "?") .. "] "
      .. tostring(c.error or "failed"))
    or ("no measurement (status " .. tostring(c.status) .. ")")
  e.iterations = 0
  e.real_time = 0.0
  e.cpu_time = 0.0
  e.time_unit = b.unit
  return e
end

-- the iteration entries: one per sample (opts.samples), else one of the median
local function iterations(list, b, c, samples, n, per_sample)
  if per_sample then
    for j, x in ipairs(samples) do
      local e = entry(b, b.name, "iteration", #samples)
      e.repetition_index = j - 1
      e.threads = 1
      times(e, b, math.tointeger(c.per) or 1, x)
      if b.label then e.label = b.label end
      list[#list + 1] = e
    end
    return
  end
  local e = entry(b, b.name, "iteration", 1)
  e.repetition_index = 0
  e.threads = 1
  times(e, b, n, c.stats.median)
  counters(e, c)
  if b.label then e.label = b.label end
  list[#list + 1] = e
end

-- the aggregate entries: mean, median, stddev, cv (those that are finite)
local function aggregates(list, b, c, n, reps)
  local s = c.stats
  for _, agg in ipairs { { "mean", s.mean, "time" }, { "median", s.median, "time" },
    { "stddev", s.std, "time" },
                        { "cv", s.cv, "percentage" } } do
    if finite(agg[2]) then
      local e = entry(b, b.name .. "_" .. agg[1], "aggregate", reps)
      e.threads = 1
      e.aggregate_name = agg[1]
      e.aggregate_unit = agg[3]
      e.iterations = n
      local v = agg[3] == "time" and agg[2] * b.scale or agg[2]
      e.real_time = v + 0.0
      e.cpu_time = v + 0.0
      e.time_unit = b.unit
      if agg[1] == "median" then counters(e, c) end
      if b.label then e.label = b.label end
      list[#list + 1] = e
    end
  end
end

-- the Google Benchmark document. opts: time_unit (ns), samples (one iteration entry per sample)
function M.gbench(doc, opts)
  opts = opts or {}
  local unit = opts.time_unit or "ns"
  local out = json_out.object()
  out.context = context(doc)
  local list = json_out.array()
  for i, c in ipairs(doc.configurations) do
    local k = type(c.kernels) == "table" and c.kernels[1] or nil
    local b = { name = M.benchmark_name(doc, c), instance = i - 1, label = k and k.name or nil,
      unit = unit,
                scale = M.time_units[unit] }
    local s = c.stats
    if c.status ~= "ok" or not (s and finite(s.median)) then
      list[#list + 1] = error_entry(b, c)
    else
      local samples = type(c.samples) == "table" and c.samples or {}
      local n = math.tointeger(s.n) or #samples
      local per_sample = opts.samples and #samples > 0
      iterations(list, b, c, samples, n, per_sample)
      aggregates(list, b, c, n, per_sample and #samples or n)
    end
  end
  out.benchmarks = list
  return out
end

M.usage = [[
Usage: wlrun export RESULTS.json [--format FMT] [-o FILE]

Writes a results file in another format (docs/compare.md), to FILE or standard output.

    --format FMT         gbench (default): Google Benchmark's JSON, read by its
                         tools/compare.py and by trackers of benchmark results;
                         or a printer's format: table, plain, csv, markdown, json
    --time-unit U        gbench: ns (default), us, ms or s
    --samples            gbench: one iteration entry per sample (repetitions), so
                         that compare.py's U test has the samples
    -o, --output FILE    write FILE (atomically) instead of standard output (- is
                         standard output); its extension gives the format: .json
                         gbench (or json with --format json), .csv .md .txt; a
                         --format that does not match it is refused; one file in
                         one format, so -o given twice is refused
    -h, --help           this text
]]

local spec = {
  ["--format"] = { value = true }, ["--time-unit"] = { value = true }, ["--samples"] = {},
  ["-o"] = { value = true, key = "output" }, ["--output"] = { value = true },
  ["-h"] = { key = "help" }, ["--help"] = {},
}

function M.main(args)
  local o, pos = cli.parse_args(TOOL, args or {}, spec)
  if o.help then
    stdio.write(M.usage)
    return
  end
  if #pos ~= 1 then
    fail("usage", ("expected one results file, got %d (wlrun export --help)"):format(#pos)) end
  if o.output == "-" then o.output = nil end -- standard output, as without -o
  -- -o's extension gives the format, as for run, merge and compare: .json is gbench's (or, with
  -- --format json, the results document), .csv .md .txt a printer's; a mismatch is refused
  local by_ext = o.output and ({ json = { gbench = true, json = true }, csv = { csv = true },
    md = { markdown = true }, txt = { plain = true, table = true } })[o.output:match("%.(%w+)$")
      or ""]
  if o.output and not by_ext and not o.format then
    fail("usage",
      ("cannot tell the format of '%s' from its extension (.json .csv .md .txt): give "
      .. "--format"):format(o.output))
  end
  if by_ext and o.format and not by_ext[o.format] then
    fail("usage", ("--format %s does not match the extension of '%s'"):format(o.format, o.output))
  end
  local format = o.format or (by_ext and (by_ext.gbench and "gbench" or next(by_ext))) or "gbench"
  local printer = false
  for _, f in ipairs(report.formats) do
    if f == format then printer = true end
  end
  if format ~= "gbench" and not printer then
    fail("usage", ("--format: expected gbench, %s; got '%s'"):format(
      table.concat(report.formats, ", "), format))
  end
  if o.time_unit and not M.time_units[o.time_unit] then
    fail("usage", ("--time-unit: expected ns, us, ms or s, got '%s'"):format(o.time_unit))
  end
  if format ~= "gbench" and (o.time_unit or o.samples) then
    fail("usage", "--time-unit and --samples apply to --format gbench") end
  local doc = cli.load(TOOL, pos[1])
  local text
  if format == "gbench" then
    text = json_out.text(M.gbench(doc, { time_unit = o.time_unit, samples = o.samples }))
  else
    text = report.render(doc, format)
  end
  if o.output then
    cli.write(TOOL, o.output, text)
  else
    stdio.write(text)
  end
end

return M
