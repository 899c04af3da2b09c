-- `wlrun merge A.json B.json ... [-o all.json]` (docs/cluster.md): combines the results files
-- of the shards of one sweep into one results document. Refuses (usage, exit 2) files of
-- different scenarios, scenario scripts (hash), settings or parameter spaces; warns about
-- different devices, drivers or wlrun versions; reports duplicated configurations (the first
-- file's is kept) and missing ones (when the files say how large the sweep is).
local C = require "wlrun.tools.compare"
local T = require "wlrun.report.table"
local util = C.util

local M = {}

local TOOL = "merge"

local function report() return require "wlrun.report" end
local function params_key(p) return require("wlrun.runner").params_key(p) end

-- Settings that say how or where a shard ran, not what it measured: they may differ between
-- the shards (a device per rank, a cache per node, --isolate for a rerun).
M.ignored_settings = {
  ["output"] = true, ["run.device"] = true, ["run.devices"] = true, ["run.isolate"] = true,
  ["run.config_timeout"] = true, ["run.nvtx"] = true, ["compile.cache"] = true, ["compile.cache_dir"] = true,
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

-- "#3, #5-#9, #12" (at most `max` ranges, then how many in all)
function M.ranges(list, max)
  max = max or 20
  local parts, i = {}, 1
  while i <= #list do
    local j = i
    while j < #list and list[j + 1] == list[j] + 1 do j = j + 1 end
    if #parts == max then
      parts[#parts + 1] = ("... (%d in all)"):format(#list)
      break
    end
    parts[#parts + 1] = i == j and ("#%d"):format(list[i]) or ("#%d-#%d"):format(list[i], list[j])
    i = j + 1
  end
  return table.concat(parts, ", ")
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
      util.fail("usage", TOOL, ("'%s' and '%s' are runs of different scenarios (%s and %s): only the shards of one sweep merge"):format(
        pa, pb, show(sa.name), show(sb.name)))
    end
    if sa.hash ~= sb.hash then
      util.fail("usage", TOOL, ("'%s' and '%s' were made by different versions of the scenario's script (hashes %s and %s): only the shards of one sweep merge"):format(
        pa, pb, show(sa.hash), show(sb.hash)))
    end
    local diffs = settings_diff(a.settings, b.settings)
    if #diffs > 0 then
      util.fail("usage", TOOL, ("'%s' and '%s' were run with different settings (%s): only the shards of one sweep merge"):format(
        pa, pb, table.concat(diffs, ", ")))
    end
    local ta, tb = total_of(a), total_of(b)
    if ta and tb and ta ~= tb then
      util.fail("usage", TOOL, ("'%s' and '%s' are of different parameter spaces (%d and %d configurations: other -p or --filter?): only the shards of one sweep merge"):format(
        pa, pb, ta, tb))
    end
    local da, db = device(a), device(b)
    if da.name ~= db.name then
      warn(("'%s' and '%s' come from different devices (%s and %s): the merged results mix them"):format(pa, pb,
        show(da.name), show(db.name)))
    elseif da.driver_version ~= db.driver_version then
      warn(("'%s' and '%s' come from different CUDA drivers (%s and %s)"):format(pa, pb, show(da.driver_version),
        show(db.driver_version)))
    elseif da.runtime_version ~= db.runtime_version then
      warn(("'%s' and '%s' used different CUDA runtimes (%s and %s)"):format(pa, pb, show(da.runtime_version),
        show(db.runtime_version)))
    end
    local va = type(a.wlrun) == "table" and a.wlrun.version or nil
    local vb = type(b.wlrun) == "table" and b.wlrun.version or nil
    if va ~= vb then
      warn(("'%s' and '%s' come from different versions of wlrun (%s and %s)"):format(pa, pb, show(va), show(vb)))
    end
  end
  for i, d in ipairs(docs) do
    if d.complete == false then
      warn(("'%s' is incomplete (its run was interrupted or is still going on)"):format(paths[i]))
    end
  end
  return warnings
end

local function copy(v)
  if type(v) ~= "table" then return v end
  local t = {}
  for k, x in pairs(v) do t[k] = copy(x) end
  return t
end

-- Merges documents (loaded results documents, in the order given) read from paths. Returns
-- the merged document and what was found: {warnings = {text...}, duplicates = {{index,
-- params, files}...}, missing = {indices} or nil (total unknown), missing_shards = {k...},
-- total = n or nil}.
function M.merge(docs, paths)
  assert(#docs >= 1)
  local found = { warnings = check(docs, paths), duplicates = {}, missing_shards = {} }
  local first = docs[1]
  local axes = T.axes(first)
  local total
  for _, d in ipairs(docs) do total = total or total_of(d) end
  found.total = total

  -- the union, by parameters; the first file's configuration is kept
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

  -- one index, one configuration: else the files come from different spaces
  local renumber = false
  do
    local at = {}
    for _, x in ipairs(list) do
      local idx = math.tointeger(x.config.index)
      if idx then
        local other = at[idx]
        if other then
          if total or shard_of(docs[x.doc]) or shard_of(docs[other.doc]) then
            util.fail("usage", TOOL, ("configuration #%d is %s in '%s' but %s in '%s': the files are shards of different parameter spaces (other -p or --filter?)"):format(
              idx, describe(other.config, axes):gsub("^#%d+ ", ""), paths[other.doc],
              describe(x.config, axes):gsub("^#%d+ ", ""), paths[x.doc]))
          end
          renumber = true
        end
        at[idx] = x
      end
    end
  end
  if renumber then
    found.warnings[#found.warnings + 1] = "the files number their configurations each from 1 (they are not shards of one run): "
      .. "the merged configurations are numbered anew, in the files' order"
    for i, x in ipairs(list) do x.config.index = i end
  else
    table.sort(list, function(x, y)
      local ix, iy = math.tointeger(x.config.index), math.tointeger(y.config.index)
      if ix and iy and ix ~= iy then return ix < iy end
      if (ix == nil) ~= (iy == nil) then return ix ~= nil end
      if x.doc ~= y.doc then return x.doc < y.doc end
      return x.pos < y.pos
    end)
  end

  for _, dup in ipairs(found.duplicates) do
    local c = dup.config
    local quoted = {}
    for i, f in ipairs(dup.files) do quoted[i] = "'" .. f .. "'" end
    local last = table.remove(quoted)
    found.warnings[#found.warnings + 1] = ("configuration %s is in %s and %s: kept the one in '%s'"):format(
      describe(c, axes), table.concat(quoted, ", "), last, dup.files[1])
  end

  -- what is missing
  local configs = {}
  for i, x in ipairs(list) do configs[i] = x.config end
  if total then
    local have = {}
    for _, c in ipairs(configs) do
      local idx = math.tointeger(c.index)
      if idx then have[idx] = true end
    end
    found.missing = {}
    for idx = 1, total do
      if not have[idx] then found.missing[#found.missing + 1] = idx end
    end
  end
  do -- shards K/N of one N that are not among the files
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

  -- the merged document
  local all_complete = true
  for _, d in ipairs(docs) do
    if d.complete ~= true then all_complete = false end
  end
  local doc = {}
  for k, v in pairs(first) do doc[k] = v end
  doc.shard = nil
  doc.scenario = copy(scenario(first))
  doc.scenario.total_configurations = total
  local started, finished
  for _, d in ipairs(docs) do
    if type(d.started) == "string" and (not started or d.started < started) then started = d.started end
    if type(d.finished) == "string" and (not finished or d.finished > finished) then finished = d.finished end
  end
  doc.started, doc.finished = started, finished
  doc.complete = all_complete and #found.missing_shards == 0 and (found.missing == nil or #found.missing == 0)
  doc.configurations = configs
  doc.missing = found.missing
  local shards = {}
  for i, d in ipairs(docs) do
    local n = 0
    for _, x in ipairs(list) do
      if x.doc == i then n = n + 1 end
    end
    shards[i] = { file = paths[i], shard = shard_of(d), device = d.device, started = d.started,
                  finished = d.finished, complete = d.complete, configurations = n }
  end
  doc.shards = shards
  return doc, found
end

-- the summary line: "3 files: 120 of 120 configurations, complete"
function M.summary(doc, found, nfiles)
  local n = #doc.configurations
  local s = ("%d file%s: "):format(nfiles, nfiles == 1 and "" or "s")
  if found.total then
    s = s .. ("%d of %d configurations"):format(n, found.total)
  else
    s = s .. ("%d configuration%s"):format(n, n == 1 and "" or "s")
  end
  if #found.duplicates > 0 then
    s = s .. (", %d duplicated"):format(#found.duplicates)
  end
  if doc.complete then
    if found.total then return s .. ", complete" end
    return s .. ", complete as far as the files tell (they do not say how many configurations the sweep has)"
  end
  local why = {}
  if found.missing and #found.missing > 0 then why[#why + 1] = "missing " .. M.ranges(found.missing) end
  if #found.missing_shards > 0 then
    local ks = {}
    for _, k in ipairs(found.missing_shards) do ks[#ks + 1] = ("%d/%d"):format(k, found.shard_count) end
    why[#why + 1] = "no file of shard" .. (#ks > 1 and "s " or " ") .. table.concat(ks, ", ")
  end
  if not found.total then
    why[#why + 1] = "the total is unknown (the files do not say how many configurations the sweep has)"
  end
  for _, sh in ipairs(doc.shards) do
    if sh.complete ~= true then
      why[#why + 1] = "some files are incomplete"
      break
    end
  end
  return s .. ", INCOMPLETE" .. (#why > 0 and (": " .. table.concat(why, "; ")) or "")
end

---------------------------------------------------------------------------------------------
-- the command

M.usage = [[
Usage: wlrun merge A.json B.json ... [-o ALL.json] [options]

Combines the results files of the shards of one sweep (--shard K/N, or one file per Slurm
array task or MPI rank) into one results document (docs/cluster.md). Files of different
scenarios, scenario scripts or settings are refused; different devices are a warning. A
configuration in two files is kept once (the first file's); the configurations missing from
the sweep are listed. The merged document works with every printer and with wlrun compare.

    -o, --output FILE    write the merged document; the extension gives the format: .json
                         .csv .md .txt (may be repeated)
    --format FMT         standard output: table, plain, csv, markdown, json (default: the
                         table when there is no -o, nothing otherwise)
    -q, --quiet          no summary and no warnings on standard error
    -h, --help           this text
]]

local spec = {
  ["-o"] = { value = true, multi = true, key = "output" }, ["--output"] = { value = true, multi = true, key = "output" },
  ["--format"] = { value = true },
  ["-q"] = { key = "quiet" }, ["--quiet"] = {},
  ["-h"] = { key = "help" }, ["--help"] = {},
}

function M.main(args)
  local o, pos = util.parse_args(TOOL, args or {}, spec)
  if o.help then
    io.stdout:write(M.usage)
    return
  end
  if #pos == 0 then util.fail("usage", TOOL, "expected results files to merge (wlrun merge --help)") end
  local formats = report().formats
  local known = {}
  for _, f in ipairs(formats) do known[f] = true end
  if o.format and not known[o.format] then
    util.fail("usage", TOOL, ("--format: expected %s, got '%s'"):format(table.concat(formats, ", "), o.format))
  end
  local files = {}
  for _, path in ipairs(o.output or {}) do
    local f = report().format_for_path(path)
    if not f then
      util.fail("usage", TOOL, ("cannot tell the output format of '%s' from its extension (.json .csv .md .txt)"):format(path))
    end
    files[#files + 1] = { path, f }
  end

  local docs = {}
  for i, path in ipairs(pos) do docs[i] = util.load(TOOL, path, { ["wlrun-results"] = 1 }) end
  local doc, found = M.merge(docs, pos)

  for _, f in ipairs(files) do util.write(TOOL, f[1], report().render(doc, f[2])) end
  if o.format or #files == 0 then
    io.stdout:write(report().render(doc, o.format or "table"))
    io.stdout:flush()
  end
  if not o.quiet then
    local max = 20
    for i, w in ipairs(found.warnings) do
      if i > max then
        util.warn(TOOL, ("... and %d more warnings"):format(#found.warnings - max))
        break
      end
      util.warn(TOOL, w)
    end
    io.stderr:write(("wlrun merge: %s\n"):format(M.summary(doc, found, #docs)))
  end
end

return M
