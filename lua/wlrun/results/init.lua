-- The results document (docs/results.md) and its one owner: the schema and its version, the
-- identity of a configuration across runs, creating documents and entries, recording a
-- measurement into an entry, and JSON in (wlrun.results.load) and out (the json printer,
-- wlrun.report.json). Loading is wlrun.results.load, the journal wlrun.results.journal, merging
-- wlrun.results.merge.
local core = require "wlrun.core"
local process = require "wlrun.process"
local json_printer = require "wlrun.report.json"
local schema = require "wlrun.results.schema"
local loader = require "wlrun.results.load"
local work = require "wlrun.results.work"
local provenance = require "wlrun.results.provenance"

local results = {}

results.SCHEMA = schema.NAME
results.VERSION = schema.VERSION

-- text with its length before it: no text, whatever it holds, reads as more or fewer parts of
-- an identity (results.key, compare's match)
function results.counted(s) return #s .. ":" .. s end
local counted = results.counted

-- a parameter's value as exact text: every float digit that tells it apart (0.3 and 0.1 + 0.2
-- differ), and its Lua type (1024 and 1024.0 are different values)
function results.value_key(v)
  local t = math.type(v)
  return (t or type(v)) .. ":" .. counted(t == "float" and ("%.17g"):format(v) or tostring(v))
end

-- a configuration's identity across runs: its parameters in name order, each value exact; each
-- name and value counted, so that a value holding what looks like other parameters ("1024\0N=")
-- is never another configuration's identity
function results.key(params)
  local names = {}
  for k in pairs(params) do names[#names + 1] = k end
  table.sort(names)
  local parts = {}
  for _, k in ipairs(names) do parts[#parts + 1] = counted(k) .. "="
    .. results.value_key(params[k]) end
  return table.concat(parts, ";")
end

---------------------------------------------------------------------------------------------
-- creating

-- the text of a file, or nil
function results.read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end
local read_file = results.read_file

-- whether a file is there (readable)
function results.exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- a deep copy of a part of a document (plain tables, no cycles)
function results.copy(v)
  if type(v) ~= "table" then return v end
  local t = {}
  for k, x in pairs(v) do t[k] = results.copy(x) end
  return t
end

-- A new document, incomplete until results.finish. o: {scenario, script, axes, device, floor,
-- settings, sources, shard, total, compile_only, resumed_from, git (provenance.collect's)}
function results.new_document(o)
  local sc = o.scenario
  local has_nvrtc, nvrtc = pcall(core.nvrtc_version) -- absent where NVRTC is not installed
  local doc = {
    schema = results.SCHEMA, version = results.VERSION,
    wlrun = { version = core.version, lua = _VERSION, nvrtc = has_nvrtc and nvrtc or nil },
    command_line = core.cli.argv, cwd = process.cwd(),
    started = process.utc_now(), complete = false,
    scenario = { name = sc.name, description = sc.description, file = o.script,
                 hash = process.hash(read_file(o.script) or ""), axes = o.axes,
                 total_configurations = o.total },
    settings = o.settings, sources = o.sources,
    device = o.device, floor = o.floor,
    shard = o.shard, compile_only = o.compile_only or nil,
    provenance = provenance.collect { dir = provenance.dir_of(o.script), git = o.git,
      device = o.device },
    configurations = {},
  }
  doc.provenance.resumed_from = o.resumed_from -- the provenance of --resume's file
  return doc
end

-- the entries in index order, the run marked finished
function results.finish(doc, complete)
  table.sort(doc.configurations, function(a, b) return a.index < b.index end)
  doc.finished = process.utc_now()
  doc.complete = complete and true or false
  results.relate_baselines(doc)
  return doc
end

-- metrics.baseline_fraction of every measured entry that names a measured baseline (entry.baseline:
-- the baseline configuration's parameters, from the scenario's baseline(p)): the baseline's
-- median over the entry's, 1.25 for a configuration 25 % faster. Derived from the document
-- alone, so that a merge of shards computes it again.
function results.relate_baselines(doc)
  local by_key = {}
  for _, c in ipairs(doc.configurations) do by_key[results.key(c.params)] = c end
  local function median(c) return c and c.status == "ok" and c.stats and c.stats.median end
  for _, c in ipairs(doc.configurations) do
    if c.metrics and c.baseline then
      local mine, theirs = median(c), median(by_key[results.key(c.baseline)])
      c.metrics.baseline_fraction = mine and theirs and mine > 0 and theirs / mine or nil
    end
  end
end

function results.entry(cfg) return { index = cfg.index, params = cfg.params } end

-- the fields of a wl.bench result that an entry keeps
local bench_fields = { "mode", "per", "blocked", "samples", "enqueue", "stats", "enqueue_stats",
  "shape", "clock",
  "throttle", "energy", "memory", "notes", "adaptive", "warnings" }

function results.record_bench(entry, r)
  entry.status = "ok"
  for _, k in ipairs(bench_fields) do entry[k] = r[k] end
  entry.warmup = r.warmup.n
  entry.kernel_times, entry.span_stats = r.kernel_times, r.span_stats -- cupti mode
end

-- what work(p) returned, checked (raises naming `where`, the work function's file:line), and the
-- entry's work and metrics made of it with the median time: wlrun.results.work
function results.check_work(w, where) return work.check(w, where) end
function results.record_work(entry, w, device, where) work.record(entry, w, device, where) end

function results.check_failed(check)
  return { code = "check-failed", title = "the check failed",
    message = "the check failed" .. (check.message and (": " .. check.message) or ""),
    hint = "the output is wrong: the timing does not measure the intended work" }
end

-- the result of check(p, state) into the entry
function results.record_check(entry, good, message)
  entry.check = { ok = good ~= false and good ~= nil,
    message = message ~= nil and tostring(message) or nil }
end

-- after the measurement: a failed check heads the warnings
function results.flag_check(entry)
  if entry.check and not entry.check.ok then
    entry.warnings = entry.warnings or {}
    table.insert(entry.warnings, 1, results.check_failed(entry.check))
  end
end

---------------------------------------------------------------------------------------------
-- JSON: the json printer's (wlrun.report.json), whose key order the document keeps

results.encode = json_printer.encode
results.render = json_printer.render

-- `require "wlrun.results.init"` (a searcher without the init.lua fallback) registers the
-- module under its proper name too
package.loaded["wlrun.results"] = package.loaded["wlrun.results"] or results

-- the one strict loader (wlrun.results.load), under this module's name too
results.load = loader.load
results.decode = loader.decode

return results
