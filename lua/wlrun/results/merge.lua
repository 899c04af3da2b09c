-- Merging results documents (docs/cluster.md): the shards of one sweep into one document.
-- Refuses (usage) documents of different scenarios, scenario scripts (hash), settings or
-- parameter spaces; returns warnings for different devices, drivers, wlrun versions or commits, the
-- duplicated configurations (the first document's is kept) and the missing ones (when the
-- documents say how large the sweep is).
local core = require "wlrun.core"
local T = require "wlrun.report.table"
local printable = require "wlrun.text.printable"
local results = require "wlrun.results"

local M = {}

local TOOL = "merge"

-- one line: what it quotes from a document cannot fake another (tools/cli.lua)
local util = { fail = function(kind, _, msg) core.error(kind, TOOL .. ": " .. printable.whole(msg),
  0) end }
local function params_key(p) return results.key(p) end

-- Settings that say how or where a shard ran, not what it measured: they may differ between
-- the shards (a device per rank, a cache per node, --isolate for a rerun).
M.ignored_settings = {
  ["output"] = true, ["run.device"] = true, ["run.devices"] = true, ["run.isolate"] = true,
  ["run.config_timeout"] = true, ["run.nvtx"] = true, ["run.prepare"] = true,
    ["compile.cache"] = true,
  ["compile.cache_dir"] = true,
}

local function show(v)
  if v == nil then return "unset" end
  if type(v) == "string" then return ("'%s'"):format(v) end
  return T.value(v)
end

-- settings as {["section.name"] = value}, tables flattened, the ignored ones left out
local function flat_settings(set)
  local out = {}
  local function walk(v, path)
    if path and M.ignored_settings[path] then return end
    if type(v) == "table" then
      for k, x in pairs(v) do walk(x, path and (path .. "." .. tostring(k)) or tostring(k)) end
    elseif path then
      out[path] = v
    end
  end
  walk(type(set) == "table" and set or {}, nil)
  return out
end

-- the settings that differ: {"run.iters 20 vs 50", ...}, sorted
local function settings_diff(a, b)
  local fa, fb = flat_settings(a), flat_settings(b)
  local names, seen = {}, {}
  for _, f in ipairs { fa, fb } do
    for k in pairs(f) do
      if not seen[k] then seen[k], names[#names + 1] = true, k end
    end
  end
  table.sort(names)
  local diffs = {}
  for _, k in ipairs(names) do
    local x, y = fa[k], fb[k]
    if not (x == y or (type(x) == "number" and type(y) == "number" and x == y)) then
      diffs[#diffs + 1] = ("%s %s vs %s"):format(k, show(x), show(y))
    end
  end
  return diffs
end

local function scenario(doc) return type(doc.scenario) == "table" and doc.scenario or {} end
local function device(doc) return type(doc.device) == "table" and doc.device or {} end
local function total_of(doc)
  local t = scenario(doc).total_configurations
  return math.tointeger(t)
end
local function shard_of(doc)
  local s = doc.shard
  if type(s) == "table" and math.tointeger(s.k) and math.tointeger(s.n) then return s end
  return nil
end

-- the commit a document's provenance records, "(dirty)" after it when the work tree had changes
local function commit_of(doc)
  local g = type(doc.provenance) == "table" and type(doc.provenance.git) == "table"
    and doc.provenance.git or {}
  if type(g.commit) ~= "string" then return nil end
  return g.commit .. (g.dirty == true and " (dirty)" or "")
end

local function describe(c, axes)
  local d = T.describe(c.params or {}, axes)
  if d == "" then
    local names = {}
    for k in pairs(c.params or {}) do names[#names + 1] = k end
    table.sort(names)
    d = T.describe(c.params or {}, names)
  end
  return ("#%s%s"):format(T.value(c.index or "?"), d ~= "" and (" (" .. d .. ")") or "")
end

-- Checks that the documents are shards of one sweep: a usage error naming the two files
-- otherwise. Returns the warnings (different devices and the like).
local function check(docs, paths)
  local warnings = {}
  local function warn(msg) warnings[#warnings + 1] = msg end
  local a, pa = docs[1], paths[1]
  for i = 2, #docs do
    local b, pb = docs[i], paths[i]
    local sa, sb = scenario(a), scenario(b)
    if sa.name ~= sb.name then
      util.fail("usage", TOOL,
        ("'%s' and '%s' are runs of different scenarios (%s and %s): only the shards of one "
        .. "sweep merge"):format(
        pa, pb, show(sa.name), show(sb.name)))
    end
    if sa.hash ~= sb.hash then
      util.fail("usage", TOOL,
        ("'%s' and '%s' were made by different versions of the scenario's script (hashes %s and "
        .. "%s): only the shards of one sweep merge"):format(
        pa, pb, show(sa.hash), show(sb.hash)))
    end
    local diffs = settings_diff(a.settings, b.settings)
    if #diffs > 0 then
      util.fail("usage", TOOL,
        ("'%s' and '%s' were run with different settings (%s): only the shards of one "
        .. "sweep merge"):format(
        pa, pb, table.concat(diffs, ", ")))
    end
    local ta, tb = total_of(a), total_of(b)
    if ta and tb and ta ~= tb then
      util.fail("usage", TOOL,
        ("'%s' and '%s' are of different parameter spaces (%d and %d configurations: other -p "
        .. "or --filter?): only the shards of one sweep merge"):format(
        pa, pb, ta, tb))
    end
    local da, db = device(a), device(b)
    if da.name ~= db.name then
      warn(
        ("'%s' and '%s' come from different devices (%s and %s): the merged results "
        .. "mix them"):format(pa, pb,
        show(da.name), show(db.name)))
    elseif da.driver_version ~= db.driver_version then
      warn(("'%s' and '%s' come from different CUDA drivers (%s and %s)"):format(pa, pb,
        show(da.driver_version),
        show(db.driver_version)))
    elseif da.runtime_version ~= db.runtime_version then
      warn(("'%s' and '%s' used different CUDA runtimes (%s and %s)"):format(pa, pb,
        show(da.runtime_version),
        show(db.runtime_version)))
    end
    local va = type(a.wlrun) == "table" and a.wlrun.version or nil
    local vb = type(b.wlrun) == "table" and b.wlrun.version or nil
    if va ~= vb then
      warn(("'%s' and '%s' come from different versions of wlrun (%s and %s)"):format(pa, pb,
        show(va), show(vb)))
    end
    local ca, cb = commit_of(a), commit_of(b)
    if ca and cb and ca ~= cb then
      warn(
        ("'%s' and '%s' come from different commits of the scenario's repository "
        .. "(%s and %s)"):format(pa, pb, ca, cb))
    end
  end
  for i, d in ipairs(docs) do
    if d.complete == false then
      warn(("'%s' is incomplete (its run was interrupted or is still going on)"):format(paths[i]))
    end
  end
  return warnings
end

local copy = results.copy

-- the union, by parameters; the first file's configuration is kept, the others are duplicates
local function union(docs, paths, found)
  local by_key, list = {}, {}
  for i, d in ipairs(docs) do
    for pos, c in ipairs(d.configurations) do
      local key = params_key(type(c.params) == "table" and c.params or {})
      local seen = by_key[key]
      if seen then
        seen.files[#seen.files + 1] = paths[i]
        if #seen.files == 2 then found.duplicates[#found.duplicates + 1] = seen end
      else
        c.from = i
        seen = { config = c, files = { paths[i] }, doc = i, pos = pos }
        by_key[key] = seen
        list[#list + 1] = seen
      end
    end
  end
  return list
end

-- one index, one configuration: else the files come from different spaces (an error when they
-- say they are shards of one) or each numbers from 1 (true: number them anew)
local function renumbered(list, docs, paths, total, axes)
  local renumber = false
  local at = {}
  for _, x in ipairs(list) do
    local idx = math.tointeger(x.config.index)
    if idx then
      local other = at[idx]
      if other then
        if total or shard_of(docs[x.doc]) or shard_of(docs[other.doc]) then
          util.fail("usage", TOOL,
            ("configuration #%d is %s in '%s' but %s in '%s': the files are shards of different "
            .. "parameter spaces (other -p or --filter?)"):format(
            idx, describe(other.config, axes):gsub("^#%d+ ", ""), paths[other.doc],
            describe(x.config, axes):gsub("^#%d+ ", ""), paths[x.doc]))
        end
        renumber = true
      end
      at[idx] = x
    end
  end
  return renumber
end

-- the configurations numbered anew in the files' order, or sorted by their index
local function put_in_order(list, renumber, found)
  if renumber then
    found.warnings[#found.warnings + 1]
      = "the files number their configurations each from 1 (they are not shards of one run): "
      .. "the merged configurations are numbered anew, in the files' order"
    for i, x in ipairs(list) do x.config.index = i end
    return
  end
  table.sort(list, function(x, y)
    local ix, iy = math.tointeger(x.config.index), math.tointeger(y.config.index)
    if ix and iy and ix ~= iy then return ix < iy end
    if (ix == nil) ~= (iy == nil) then return ix ~= nil end
    if x.doc ~= y.doc then return x.doc < y.doc end
    return x.pos < y.pos
  end)
end

local function warn_duplicates(found, axes)
  for _, dup in ipairs(found.duplicates) do
    local c = dup.config
    local quoted = {}
    for i, f in ipairs(dup.files) do quoted[i] = "'" .. f .. "'" end
    local last = table.remove(quoted)
    found.warnings[#found.warnings + 1] = (
      "configuration %s is in %s and %s: kept the one in '%s'"):format(
      describe(c, axes), table.concat(quoted, ", "), last, dup.files[1])
  end
end

-- the indices 1..total that no configuration has; nil when the total is unknown
local function missing_indices(configs, total)
  if not total then return nil end
  local have = {}
  for _, c in ipairs(configs) do
    local idx = math.tointeger(c.index)
    if idx then have[idx] = true end
  end
  local missing = {}
  for idx = 1, total do
    if not have[idx] then missing[#missing + 1] = idx end
  end
  return missing
end

-- shards K/N of one N that are not among the files
local function missing_shards(docs, found)
  local n, ks, same = nil, {}, true
  for _, d in ipairs(docs) do
    local s = shard_of(d)
    if not s then same = false break end
    n = n or s.n
    if s.n ~= n then same = false break end
    ks[math.tointeger(s.k)] = true
  end
  if same and n then
    for k = 1, n do
      if not ks[k] then found.missing_shards[#found.missing_shards + 1] = k end
    end
    found.shard_count = n
  end
end

-- each file's account: its shard, device, times and how many configurations it gave
local function shard_entries(docs, paths, list)
  local shards = {}
  for i, d in ipairs(docs) do
    local n = 0
    for _, x in ipairs(list) do
      if x.doc == i then n = n + 1 end
    end
    shards[i] = { file = paths[i], shard = shard_of(d), device = d.device,
      provenance = d.provenance,
                  started = d.started, finished = d.finished, complete = d.complete,
                    configurations = n,
                  wall = d.wall }
  end
  return shards
end

-- the merged document: the first's, with the union's configurations and the files' span of time
local function merged_document(docs, paths, list, configs, found)
  local first = docs[1]
  local all_complete = true
  for _, d in ipairs(docs) do
    if d.complete ~= true then all_complete = false end
  end
  local doc = {}
  for k, v in pairs(first) do doc[k] = v end
  doc.shard = nil
  doc.wall = nil -- each run's own account (shards[i].wall): the merge is no run of its own
  doc.scenario = copy(scenario(first))
  doc.scenario.total_configurations = found.total
  local started, finished
  for _, d in ipairs(docs) do
    if type(d.started) == "string" and (not started or d.started < started) then
      started = d.started end
    if type(d.finished) == "string" and (not finished or d.finished > finished) then
      finished = d.finished end
  end
  doc.started, doc.finished = started, finished
  doc.complete = all_complete and #found.missing_shards == 0
    and (found.missing == nil or #found.missing == 0)
  doc.configurations = configs
  doc.missing = found.missing
  doc.shards = shard_entries(docs, paths, list)
  return doc
end

-- Merges documents (loaded results documents, in the order given) read from paths. Returns
-- the merged document and what was found: {warnings = {text...}, duplicates = {{index,
-- params, files}...}, missing = {indices} or nil (total unknown), missing_shards = {k...},
-- total = n or nil}.
function M.merge(docs, paths)
  assert(#docs >= 1)
  local found = { warnings = check(docs, paths), duplicates = {}, missing_shards = {} }
  local axes = T.axes(docs[1])
  local total
  for _, d in ipairs(docs) do total = total or total_of(d) end
  found.total = total

  local list = union(docs, paths, found)
  put_in_order(list, renumbered(list, docs, paths, total, axes), found)
  warn_duplicates(found, axes)
  local configs = {}
  for i, x in ipairs(list) do configs[i] = x.config end
  found.missing = missing_indices(configs, total)
  missing_shards(docs, found)

  local doc = merged_document(docs, paths, list, configs, found)
  results.relate_baselines(doc)
  return doc, found
end

return M
