-- `wlrun merge A.json B.json ... [-o all.json]` (docs/cluster.md): combines the results files
-- of the shards of one sweep into one results document. Refuses (usage, exit 2) files of
-- different scenarios, scenario scripts (hash), settings or parameter spaces; warns about
-- different devices, drivers or wlrun versions; reports duplicated configurations (the first
-- file's is kept) and missing ones (when the files say how large the sweep is).
local stdio = require "wlrun.text.stdio"
local report = require "wlrun.report"
local merge = require "wlrun.results.merge"
local cli = require "wlrun.tools.cli"

local M = {}

local TOOL = "merge"

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
    return s
      .. ", complete as far as the files tell (they do not say how many configurations the "
      .. "sweep has)"
  end
  local why = {}
  if found.missing and #found.missing > 0 then why[#why + 1] = "missing "
    .. M.ranges(found.missing) end
  if #found.missing_shards > 0 then
    local ks = {}
    for _, k in ipairs(found.missing_shards) do ks[#ks + 1] = ("%d/%d"):format(k,
      found.shard_count) end
    why[#why + 1] = "no file of shard" .. (#ks > 1 and "s " or " ") .. table.concat(ks, ", ")
  end
  if not found.total then
    why[#why + 1]
      = "the total is unknown (the files do not say how many configurations the sweep has)"
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
A file - is standard input.

    -o, --output FILE    write the merged document; the extension gives the format: .json
                         .csv .md .txt (may be repeated); - is standard output, in
                         --format's format (default json) and alone there
    --format FMT         standard output: table, plain, csv, markdown, json (default: the
                         table when there is no -o, nothing otherwise)
    -q, --quiet          no summary and no warnings on standard error
    -h, --help           this text
]]

local spec = {
  ["-o"] = { value = true, multi = true, key = "output" },
    ["--output"] = { value = true, multi = true, key = "output" },
  ["--format"] = { value = true },
  ["-q"] = { key = "quiet" }, ["--quiet"] = {},
  ["-h"] = { key = "help" }, ["--help"] = {},
}

function M.main(args)
  local o, pos = cli.parse_args(TOOL, args or {}, spec)
  if o.help then
    stdio.write(M.usage)
    return
  end
  if #pos == 0 then
    cli.fail("usage", TOOL, "expected results files to merge (wlrun merge --help)") end
  local formats = report.formats
  local known = {}
  for _, f in ipairs(formats) do known[f] = true end
  if o.format and not known[o.format] then
    cli.fail("usage", TOOL, ("--format: expected %s, got '%s'"):format(table.concat(formats, ", "),
      o.format))
  end
  local files, to_stdout = {}, false
  for _, path in ipairs(o.output or {}) do
    local f = path == "-" and (o.format or "json") or report.format_for_path(path)
    to_stdout = to_stdout or path == "-"
    if not f then
      cli.fail("usage", TOOL,
        ("cannot tell the output format of '%s' from its extension (.json .csv .md .txt)"):format(
        path))
    end
    files[#files + 1] = { path, f }
  end

  local docs = {}
  for i, path in ipairs(pos) do docs[i] = cli.load(TOOL, path) end
  local doc, found = merge.merge(docs, pos)

  local texts = {}
  for i, f in ipairs(files) do texts[i] = { f[1], report.render(doc, f[2]) } end
  cli.write_all(TOOL, texts, true)
  if (o.format or #files == 0) and not to_stdout then -- -o - is standard output's alone
    stdio.write(report.render(doc, o.format or "table"))
    io.stdout:flush()
  end
  if not o.quiet then
    local max = 20
    for i, w in ipairs(found.warnings) do
      if i > max then
        cli.warn(TOOL, ("... and %d more warnings"):format(#found.warnings - max))
        break
      end
      cli.warn(TOOL, w)
    end
    io.stderr:write(("wlrun merge: %s\n"):format(M.summary(doc, found, #docs)))
  end
end

return M
