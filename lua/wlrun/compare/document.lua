-- The comparison document of `wlrun compare` (schema wlrun-compare, version 1; docs/compare.md):
-- the configurations of two results documents matched (on their parameters, or those --match
-- names, or all but those --ignore names), each pair of sample sets compared
-- (wlrun.compare.stats: ratio of medians, bootstrap interval, Mann-Whitney U, verdict), the
-- summary's geometric mean, what is in one file only or was not measured, the warnings when the
-- runs differ in device, driver, version or settings, and the gate of --fail-above.
--   document.compare(base, new, opts) -> the comparison document (its printers:
-- wlrun.compare.render)
local core = require "wlrun.core"
local units = require "wlrun.text.units"
local T = require "wlrun.report.table"
local printable = require "wlrun.text.printable"
local columns = require "wlrun.report.columns"
local json_out = require "wlrun.report.json"
local results = require "wlrun.results"
local stats = require "wlrun.compare.stats"
local metrics = require "wlrun.compare.metrics"
local provenance = require "wlrun.compare.provenance"

local document = {}

local finite = units.finite

-- an error of `wlrun compare` (the tool's name before the message)
-- one line: what it quotes from a document cannot fake another (tools/cli.lua)
local function fail(kind, tool, msg) core.error(kind, ("%s: %s"):format(tool,
  printable.whole(msg)), 0) end

---------------------------------------------------------------------------------------------
-- matching

local param_text, param_names = columns.param_text, columns.param_names

-- the names a configuration is matched on (sorted), given --match or --ignore
local function match_names(c, opts)
  local list = {}
  if opts.match then
    for _, n in ipairs(opts.match) do
      if c.params and c.params[n] ~= nil then list[#list + 1] = n end
    end
  else
    local ignore = {}
    for _, n in ipairs(opts.ignore or {}) do ignore[n] = true end
    for k in pairs(c.params or {}) do
      if not ignore[k] then list[#list + 1] = k end
    end
  end
  table.sort(list, function(a, b) return tostring(a) < tostring(b) end)
  return list
end

local function key_of(scenario, c, opts)
  local counted = results.counted -- no name or value reads as other parts
  local parts = { counted(tostring(scenario)) }
  local exact = results.value_key -- matching is exact; the tables show param_text
  for _, k in ipairs(match_names(c, opts)) do parts[#parts + 1] = counted(tostring(k)) .. "="
    .. exact(c.params[k]) end
  return table.concat(parts, ";")
end

local function scenario_of(doc) return type(doc.scenario) == "table" and doc.scenario.name
  or "?" end

-- the matched parameters of a configuration, as a plain table
local function matched_params(c, opts)
  local p = {}
  for _, k in ipairs(match_names(c, opts)) do p[k] = c.params[k] end
  return p
end

local function index_of(doc, path, opts, tool)
  local map, order = {}, {}
  local sc = scenario_of(doc)
  for i, c in ipairs(doc.configurations) do
    local key = key_of(sc, c, opts)
    if map[key] and #match_names(c, opts) == 0 then
      fail("usage", tool, ("configurations #%s and #%s of '%s' have no parameter left to match "
        .. "on (%s): name fewer with --ignore, or those that tell them apart with --match"):format(
        T.value(map[key].index or "?"), T.value(c.index or i), path, opts.match
          and "--match names none of theirs" or "--ignore leaves out every one of theirs"))
    end
    if map[key] then
      fail("usage", tool,
        ("configurations #%s and #%s of '%s' have the same parameters%s (%s): tell them apart "
        .. "with --match or --ignore"):format(
        T.value(map[key].index or "?"), T.value(c.index or i), path,
        (opts.match or opts.ignore) and " to match on" or "",
        T.describe(matched_params(c, opts), param_names(doc))))
    end
    map[key] = c
    c.index = c.index or i
    order[#order + 1] = key
  end
  return map, order
end

---------------------------------------------------------------------------------------------
-- differences between the runs

local compared_settings = {
  { "run", "mode" }, { "run", "flush_l2" }, { "run", "warmup" }, { "run", "warmup_time" },
    { "run", "seed" },
  { "adaptive", "enabled" },
}
document.compared_settings = compared_settings

local function show(v)
  if v == nil then return "unset" end
  if type(v) == "table" then return "(table)" end
  return param_text(v)
end

local function run_warnings(base, new)
  local w = {}
  local function add(code, message) w[#w + 1] = { code = code, message = message } end
  local sb, sn = scenario_of(base), scenario_of(new)
  if sb ~= sn then
    add("scenario-differs",
      ("the runs are of different scenarios: BASE %s, NEW %s (no configuration matches)"):format(sb,
      sn))
  end
  local db = type(base.device) == "table" and base.device or {}
  local dn = type(new.device) == "table" and new.device or {}
  if db.name ~= dn.name then
    add("device-differs", ("the runs come from different devices: BASE %s, NEW %s"):format(
      show(db.name), show(dn.name)))
  end
  if db.driver_version ~= dn.driver_version then
    add("driver-differs", ("the runs come from different CUDA drivers: BASE %s, NEW %s"):format(
      show(db.driver_version), show(dn.driver_version)))
  end
  if db.runtime_version ~= dn.runtime_version then
    add("runtime-differs", ("the runs used different CUDA runtimes: BASE %s, NEW %s"):format(
      show(db.runtime_version), show(dn.runtime_version)))
  end
  local vb = type(base.wlrun) == "table" and base.wlrun.version
  local vn = type(new.wlrun) == "table" and new.wlrun.version
  if vb ~= vn then
    add("wlrun-differs", ("the runs come from different versions of wlrun: BASE %s, NEW %s"):format(
      show(vb), show(vn)))
  end
  local diffs = {}
  local setb = type(base.settings) == "table" and base.settings or {}
  local setn = type(new.settings) == "table" and new.settings or {}
  local function get(set, section, key)
    if type(set[section]) ~= "table" then return nil end
    return set[section][key]
  end
  for _, s in ipairs(compared_settings) do
    local a, b = get(setb, s[1], s[2]), get(setn, s[1], s[2])
    if a ~= b then diffs[#diffs + 1] = ("%s.%s %s vs %s"):format(s[1], s[2], show(a), show(b)) end
  end
  if #diffs > 0 then
    add("settings-differ", "the runs used different settings: " .. table.concat(diffs, ", "))
  end
  if base.complete == false then add("incomplete",
    "BASE is incomplete (the run was interrupted or was still going on)") end
  if new.complete == false then add("incomplete",
    "NEW is incomplete (the run was interrupted or was still going on)") end
  return w
end

---------------------------------------------------------------------------------------------
-- the comparison document (schema wlrun-compare, version 1)

local function side_info(doc, path)
  local o = json_out.object()
  o.file = path
  o.scenario = scenario_of(doc)
  local d = type(doc.device) == "table" and doc.device or {}
  o.device = d.name
  o.driver_version = d.driver_version
  o.runtime_version = d.runtime_version
  o.wlrun_version = type(doc.wlrun) == "table" and doc.wlrun.version or nil
  o.started = doc.started
  o.complete = doc.complete
  o.provenance = doc.provenance
  return o
end

local function plain_params(p, names)
  local o = json_out.object()
  for _, k in ipairs(names) do
    if p[k] ~= nil then o[k] = p[k] end
  end
  for k, v in pairs(p) do
    if rawget(o, k) == nil then o[k] = v end
  end
  return o
end

local function why(c)
  if c.status == "ok" and not c.stats and not c.samples then return "no measurement" end
  if c.status == "skipped" then return "skipped: " .. tostring(c.reason or "") end
  if c.status == "failed" then return "failed [" .. tostring(c.kind or "?") .. "]: "
    .. tostring(c.error or "") end
  if c.status ~= "ok" then return tostring(c.status or "no status") end
  return nil
end

local function measured(c)
  return c.status == "ok" and ((type(c.samples) == "table" and #c.samples > 0)
    or (c.stats and finite(c.stats.median)))
end

-- the statistics' options: opts' or the defaults
local function stats_options(opts)
  return {
    noise = opts.noise or stats.defaults.noise, alpha = opts.alpha or stats.defaults.alpha,
    resamples = opts.resamples or stats.defaults.resamples, seed = opts.seed or stats.defaults.seed,
    confidence = opts.confidence or stats.defaults.confidence,
      min_samples = stats.defaults.min_samples,
  }
end

-- --match / --ignore name parameters that exist
local function check_names(base, new, opts, tool)
  local all = {}
  for _, n in ipairs(param_names(base)) do all[n] = true end
  for _, n in ipairs(param_names(new)) do all[n] = true end
  for _, which in ipairs { "match", "ignore" } do
    local unknown = {}
    for _, n in ipairs(opts[which] or {}) do
      if not all[n] then unknown[#unknown + 1] = "'" .. n .. "'" end
    end
    if #unknown > 0 then
      local known = {}
      for k in pairs(all) do known[#known + 1] = k end
      table.sort(known)
      fail("usage", tool, ("--%s: no configuration has a parameter %s (parameters: %s)"):format(
        which, table.concat(unknown, ", "), #known > 0 and table.concat(known, ", ") or "none"))
    end
  end
end

-- the columns: matched parameter names, base axes order first
local function column_names(base, new, opts)
  local names, seen = {}, {}
  for _, doc in ipairs { base, new } do
    local used = {} -- the names some configuration is matched on, each looked up once
    for _, c in ipairs(doc.configurations) do
      for _, k in ipairs(match_names(c, opts)) do used[k] = true end
    end
    for _, n in ipairs(param_names(doc)) do
      if used[n] and not seen[n] then seen[n], names[#names + 1] = true, n end
    end
  end
  return names
end

local function copy_array(list) return json_out.array(table.move(list, 1, #list, 1, {})) end

local function settings_of(sopts, opts)
  local st = json_out.object()
  st.noise = sopts.noise
  st.alpha = sopts.alpha
  st.confidence = sopts.confidence
  st.resamples = sopts.resamples
  st.seed = sopts.seed
  st.min_samples = sopts.min_samples
  st.match = opts.match and copy_array(opts.match) or nil
  st.ignore = opts.ignore and copy_array(opts.ignore) or nil
  st.fail_above = opts.fail_above
  return st
end

-- the document's head: schema, the two sides, the settings, the columns
local function head(base, new, paths, sopts, opts, names)
  local out = json_out.object()
  out.schema = "wlrun-compare"
  out.version = 1
  out.wlrun = json_out.object()
  out.wlrun.version = core.version
  out.base = side_info(base, paths[1])
  out.new = side_info(new, paths[2])
  out.provenance_differences = provenance.differences(base, new)
  out.settings = settings_of(sopts, opts)
  out.parameters = copy_array(names)
  return out
end

-- ignored parameters that differ: say what was compared with what
local function ignored_parameters(base, new, opts)
  local ignored, seen = {}, {}
  for _, pair in ipairs { { base, "BASE" }, { new, "NEW" } } do
    for _, c in ipairs(pair[1].configurations) do
      local used = {}
      for _, k in ipairs(match_names(c, opts)) do used[k] = true end
      for k, v in pairs(c.params or {}) do
        if not used[k] then
          ignored[k] = ignored[k] or { BASE = {}, NEW = {} }
          local text = param_text(v)
          local id = pair[2] .. "\0" .. tostring(k) .. "\0" .. text
          if not seen[id] then
            seen[id] = true
            table.insert(ignored[k][pair[2]], text)
          end
        end
      end
    end
  end
  local ign = {}
  for k, v in pairs(ignored) do ign[#ign + 1] = { k, v } end
  table.sort(ign, function(a, b) return tostring(a[1]) < tostring(b[1]) end)
  local list = json_out.array()
  for _, x in ipairs(ign) do
    local o = json_out.object()
    o.name = x[1]
    o.base = json_out.array(x[2].BASE)
    o.new = json_out.array(x[2].NEW)
    list[#list + 1] = o
  end
  return list
end

-- a configuration that is not compared: its index, parameters, status and why
local function brief(c, doc_names)
  local o = json_out.object()
  o.index = c.index
  o.params = plain_params(c.params or {}, doc_names)
  o.status = c.status
  o.why = why(c)
  return o
end

-- the statistics of a measured pair; medians only (no samples on a side): a ratio without an
-- interval
local function compare_pair(b, n, key, sopts)
  local bs = type(b.samples) == "table" and #b.samples > 0 and b.samples or nil
  local ns = type(n.samples) == "table" and #n.samples > 0 and n.samples or nil
  if bs and ns then
    local o = {}
    for k, v in pairs(sopts) do o[k] = v end
    o.seed = stats.derive_seed(sopts.seed, key)
    return stats.compare_samples(bs, ns, o)
  end
  local mb = bs and stats.median(bs) or b.stats.median
  local mn = ns and stats.median(ns) or n.stats.median
  local x = { n1 = bs and #bs or 0, n2 = ns and #ns or 0, median_base = mb, median_new = mn,
    ratio = mn / mb,
              change = mn / mb - 1, lo = 0 / 0, hi = 0 / 0, p = 0 / 0 }
  x.verdict, x.reason = "uncertain", "no samples in " .. (bs and "NEW" or "BASE")
  return x
end

local function side(c, median, count)
  local s = json_out.object()
  s.index = c.index
  s.median = median
  s.n = count
  s.mode = c.mode
  s.per = c.per
  return s
end

-- the row of a compared pair; its notes go to the tally's lists too (for the warnings)
local function compared_row(b, n, x, params, names, tally)
  local o = json_out.object()
  o.params = params
  o.base = side(b, x.median_base, x.n1)
  o.new = side(n, x.median_new, x.n2)
  o.ratio = x.ratio
  o.lo = x.lo
  o.hi = x.hi
  o.change = x.change
  o.p = x.p
  o.u = x.u
  o.z = x.z
  o.verdict = x.verdict
  o.reason = x.reason
  local notes = json_out.array()
  if b.mode ~= n.mode or (b.per or 1) ~= (n.per or 1) then
    notes[#notes + 1] = ("measured in different modes: BASE %s, NEW %s"):format(T.mode(b),
      T.mode(n))
    tally.mode_diffs[#tally.mode_diffs + 1] = T.describe(o.params, names)
  end
  if type(n.check) == "table" and n.check.ok == false then
    notes[#notes + 1] = "NEW's check failed: " .. tostring(n.check.message or "")
    tally.check_failed[#tally.check_failed + 1] = T.describe(o.params, names)
  end
  o.notes = notes
  o.metrics = metrics.of(b, n) -- nil when neither has any
  return o
end

-- each configuration of BASE, then those only in NEW: compared, not compared or in one file only
local function match_all(base, new, index, opts, sopts, names)
  local t = { rows = json_out.array(), not_compared = json_out.array(),
    only_base = json_out.array(),
              only_new = json_out.array(), logs = {},
                counts = { faster = 0, slower = 0, same = 0, uncertain = 0 },
              mode_diffs = {}, check_failed = {} }
  local bnames, nnames = param_names(base), param_names(new)
  local bmap, nmap = index.bmap, index.nmap
  for _, key in ipairs(index.border) do
    local b, n = bmap[key], nmap[key]
    if not n then
      t.only_base[#t.only_base + 1] = brief(b, bnames)
    elseif not (measured(b) and measured(n)) then
      local o = json_out.object()
      o.params = plain_params(matched_params(b, opts), names)
      o.base = brief(b, bnames)
      o.new = brief(n, nnames)
      t.not_compared[#t.not_compared + 1] = o
    else
      local x = compare_pair(b, n, key, sopts)
      t.counts[x.verdict] = t.counts[x.verdict] + 1
      if x.log_replicates then t.logs[#t.logs + 1] = x.log_replicates end
      t.rows[#t.rows + 1] = compared_row(b, n, x, plain_params(matched_params(b, opts), names),
        names, t)
    end
  end
  for _, key in ipairs(index.norder) do
    if not bmap[key] then t.only_new[#t.only_new + 1] = brief(nmap[key], nnames) end
  end
  return t
end

-- the runs' warnings, then those of the configurations (modes, checks), as JSON objects
local function warning_list(warnings, tally)
  if #tally.mode_diffs > 0 then
    warnings[#warnings + 1] = { code = "mode-differs",
      message = ("configurations measured in different modes: %s"):format(
        table.concat(tally.mode_diffs, "; ")) }
  end
  if #tally.check_failed > 0 then
    warnings[#warnings + 1] = { code = "check-failed",
      message = ("NEW's result check failed for: %s"):format(
        table.concat(tally.check_failed, "; ")) }
  end
  local wl = json_out.array()
  for _, w in ipairs(warnings) do
    local o = json_out.object()
    o.code = w.code
    o.message = w.message
    wl[#wl + 1] = o
  end
  return wl
end

local function summary(tally, sopts)
  local rows, counts = tally.rows, tally.counts
  local sum = json_out.object()
  local ratios = {}
  for _, r in ipairs(rows) do ratios[#ratios + 1] = r.ratio end
  sum.compared = #rows
  -- one by one: the order of a multiple assignment is not defined, and it is the keys' order
  sum.faster = counts.faster
  sum.slower = counts.slower
  sum.same = counts.same
  sum.uncertain = counts.uncertain
  sum.geomean = stats.geomean(ratios)
  if #tally.logs == #rows and #rows > 0 then
    local lo, hi = stats.geomean_interval(tally.logs, sopts.confidence)
    sum.geomean_lo = lo
    sum.geomean_hi = hi
  end
  return sum
end

-- the gate of --fail-above: the configurations significantly slower by more than it
local function gate(rows, fail_above)
  local g = json_out.object()
  g.fail_above = fail_above
  local list = json_out.array()
  for _, r in ipairs(rows) do
    if r.verdict == "slower" and r.change > fail_above then
      local o = json_out.object()
      o.params = r.params
      o.change = r.change
      o.lo = r.lo
      o.hi = r.hi
      list[#list + 1] = o
    end
  end
  -- a gate that tested nothing (compared 0) never passes: it failed, with no configuration
  g.failed = #list > 0 or #rows == 0
  g.configurations = list
  g.compared = #rows
  return g
end

-- Compares two documents. opts: noise, alpha, resamples, seed, confidence, match, ignore,
-- fail_above, base_path, new_path. Returns the comparison document.
function document.compare(base, new, opts)
  opts = opts or {}
  local tool = "compare"
  local sopts = stats_options(opts)
  local bpath, npath = opts.base_path or "BASE", opts.new_path or "NEW"
  check_names(base, new, opts, tool)
  local index = {}
  index.bmap, index.border = index_of(base, bpath, opts, tool)
  index.nmap, index.norder = index_of(new, npath, opts, tool)
  local names = column_names(base, new, opts)

  local out = head(base, new, { bpath, npath }, sopts, opts, names)
  local warnings = run_warnings(base, new)
  out.ignored_parameters = ignored_parameters(base, new, opts)
  local tally = match_all(base, new, index, opts, sopts, names)
  out.warnings = warning_list(warnings, tally)
  out.configurations = tally.rows
  out.not_compared = tally.not_compared
  out.only_in_base = tally.only_base
  out.only_in_new = tally.only_new
  out.summary = summary(tally, sopts)
  if opts.fail_above then out.gate = gate(tally.rows, opts.fail_above) end
  return out
end

return document
