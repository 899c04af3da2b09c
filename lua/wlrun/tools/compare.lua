-- `wlrun compare BASE.json NEW.json [options]` (docs/compare.md): matches the configurations of
-- two results documents, compares each pair of sample sets (wlrun.compare.stats: ratio of medians,
-- bootstrap interval, Mann-Whitney U, verdict), summarises with a geometric mean, lists what is
-- in one file only, warns when the runs differ in device, driver, version or settings, and
-- gates: --fail-above PCT exits with code 7 when a configuration is slower by more than PCT.
-- The command: its options, the files read and written; the document is wlrun.compare.document's,
-- its printers wlrun.compare.render's.
local core = require "wlrun.core"
local process = require "wlrun.process"
local json = require "wlrun.json"
local printable = require "wlrun.text.printable"
local stdio = require "wlrun.text.stdio"
local T = require "wlrun.report.table"
local columns = require "wlrun.report.columns"
local document = require "wlrun.compare.document"
local render = require "wlrun.compare.render"
local cli = require "wlrun.tools.cli"

local M = {}

---------------------------------------------------------------------------------------------
-- the command

M.usage = [[
Usage: wlrun compare BASE.json NEW.json [options]
       wlrun compare BASE_DIR/ NEW_DIR/ [options]

Compares two results files configuration by configuration: the ratio of medians NEW/BASE
with a bootstrap interval, a Mann-Whitney U test, a verdict (faster, slower, same,
uncertain) and the geometric mean of the ratios (docs/compare.md). A file - is standard
input. Google Benchmark and nvbench JSON files are read too. Two folders: their .json
files are paired by scenario name (or file name), one report per pair, one gate.

    --noise PCT          changes within +-PCT are "same" (default 2%)
    --fail-above PCT     exit with code 7 when a configuration is significantly slower
                         by more than PCT
    --match P,Q          match configurations on these parameters only
    --ignore P,Q         match on every parameter but these
    --format FMT         standard output: table (default), markdown, json
    -o, --output FILE    also write FILE; its extension gives the format: .json .md .txt
                         (may be repeated); - is standard output, in --format's
                         format (default json) and alone there
    --alpha A            significance level of the test (default 0.01)
    --resamples N        bootstrap resamples (default 2000)
    --seed N             bootstrap seed (default 1)
    -q, --quiet          no warnings on standard error
    -h, --help           this text
]]

local spec = {
  ["--noise"] = { value = true }, ["--fail-above"] = { value = true },
  ["--match"] = { value = true }, ["--ignore"] = { value = true },
  ["--format"] = { value = true }, ["-o"] = { value = true, multi = true, key = "output" },
  ["--output"] = { value = true, multi = true, key = "output" },
  ["--alpha"] = { value = true }, ["--resamples"] = { value = true }, ["--seed"] = { value = true },
  ["-q"] = { key = "quiet" }, ["--quiet"] = {},
  ["-h"] = { key = "help" }, ["--help"] = {},
}

local out_formats = { json = "json", md = "markdown", txt = "table" }

-- the options of the statistics and the matching, checked: {noise, fail_above, alpha, ...}
-- the names of --match or --ignore: at least one, each once
local function param_names(tool, option, value)
  local list, count, twice = cli.names(value), {}, {}
  if #list == 0 then cli.fail("usage", tool, ("%s: expected parameter names, like M,N,K"):format(
    option)) end
  for _, n in ipairs(list) do
    count[n] = (count[n] or 0) + 1
    if count[n] == 2 then twice[#twice + 1] = "'" .. printable.text(n, 60) .. "'" end
  end
  if #twice > 0 then cli.fail("usage", tool, ("%s names %s more than once"):format(option,
    table.concat(twice, ", "))) end
  return list
end

local function options(tool, o, pos)
  local opts = { base_path = pos[1], new_path = pos[2] }
  local function pct_opt(name, key, min)
    if o[key] == nil then return end
    local v = cli.percent(o[key])
    if not v or v < min then
      cli.fail("usage", tool,
        ("--%s: expected a percentage >= %s, like 5 or 2.5%%, got '%s'"):format(name,
        T.value(min * 100), tostring(o[key])))
    end
    opts[key] = v
  end
  pct_opt("noise", "noise", 0)
  pct_opt("fail-above", "fail_above", 0)
  if o.alpha then
    local a = tonumber(o.alpha)
    if not (a and a > 0 and a < 1) then cli.fail("usage", tool,
      ("--alpha: expected a number between 0 and 1, got '%s'"):format(o.alpha)) end
    opts.alpha = a
  end
  if o.resamples then
    local n = math.tointeger(tonumber(o.resamples))
    if not (n and n >= 100 and n <= 1000000) then
      cli.fail("usage", tool,
        ("--resamples: expected a whole number from 100 to 1000000, got '%s'"):format(o.resamples))
    end
    opts.resamples = n
  end
  if o.seed then
    local n = math.tointeger(tonumber(o.seed))
    if not n then cli.fail("usage", tool, ("--seed: expected a whole number, got '%s'"):format(
      o.seed)) end
    opts.seed = n
  end
  if o.match and o.ignore then cli.fail("usage", tool,
    "--match and --ignore cannot be used together") end
  if o.match then opts.match = param_names(tool, "--match", o.match) end
  if o.ignore then opts.ignore = param_names(tool, "--ignore", o.ignore) end
  return opts
end

-- the files of -o: {{path, format}...}, and whether one is standard output (-)
local function output_files(tool, o)
  local files, to_stdout = {}, false
  for _, path in ipairs(o.output or {}) do
    local ext = path:match("%.([^./\\]+)$")
    local f = path == "-" and (o.format or "json") or ext and out_formats[ext:lower()]
    to_stdout = to_stdout or path == "-"
    if not f then
      cli.fail("usage", tool,
        ("cannot tell the output format of '%s' from its extension (.json .md .txt)"):format(path))
    end
    files[#files + 1] = { path, f }
  end
  return files, to_stdout
end

-- standard output in --format's format (unless -o - has it), then each -o file in its own;
-- text(fmt) renders
local function write_all(tool, text, format, files, to_stdout)
  if not to_stdout then -- -o - is standard output's alone
    stdio.write(text(format))
    io.stdout:flush()
  end
  local texts = {}
  for i, f in ipairs(files) do texts[i] = { f[1], text(f[2]) } end
  cli.write_all(tool, texts)
end

-- the error of a failed gate: list names the configurations
local function regression(list, fail_above)
  core.error("regression",
    ("compare: %d configuration%s significantly slower by more than %s: %s"):format(#list,
    #list == 1 and "" or "s", columns.pct(fail_above), table.concat(list, "; ")), 0)
end

-- the gate of --fail-above over one comparison: an error when it tested nothing or failed
local function gate(doc)
  if doc.gate and doc.gate.compared == 0 then
    core.error("usage",
      ("compare: --fail-above %s: no configuration was compared (none is in both files with "
      .. "samples on both sides): a gate over nothing never passes; compare the files a recipe "
      .. "wrote with its own baseline"):format(
      columns.pct(doc.gate.fail_above)), 0)
  end
  if doc.gate and doc.gate.failed then
    local list = {}
    for _, x in ipairs(doc.gate.configurations) do
      list[#list + 1] = ("%s (%s)"):format(T.describe(x.params, doc.parameters),
        render.change_text(x.change))
    end
    regression(list, doc.gate.fail_above)
  end
end

function M.main(args)
  local tool = "compare"
  local o, pos = cli.parse_args(tool, args or {}, spec)
  if o.help then
    stdio.write(M.usage)
    return
  end
  if #pos ~= 2 then
    cli.fail("usage", tool,
      ("expected BASE.json and NEW.json, got %d file%s (wlrun compare --help)"):format(#pos,
      #pos == 1 and "" or "s"))
  end
  local opts = options(tool, o, pos)
  local format = o.format or "table"
  if format ~= "table" and format ~= "markdown" and format ~= "json" then
    cli.fail("usage", tool, ("--format: expected table, markdown or json, got '%s'"):format(format))
  end
  local files, to_stdout = output_files(tool, o)

  if process.file_type(pos[1]) == "directory" and process.file_type(pos[2]) == "directory" then
    return M.folders(tool, pos[1], pos[2], opts, o, format, files, to_stdout)
  end -- a folder against a file: the loader's error (cannot read it: a directory, exit 9)
  local base = cli.load(tool, pos[1])
  local new = cli.load(tool, pos[2])
  local doc = document.compare(base, new, opts)

  write_all(tool, function(fmt) return render.render(doc, fmt) end, format, files, to_stdout)
  if not o.quiet then
    for _, w in ipairs(doc.warnings) do cli.warn(tool, w.message) end
  end
  gate(doc)
end

---------------------------------------------------------------------------------------------
-- two folders: their .json files paired by scenario name (by file name where a file has none,
-- or where another file of either folder has the same), one comparison per pair, one gate

local function folder_files(tool, dir)
  local names, err = process.list_dir(dir)
  if not names then cli.fail("io", tool, ("cannot list the folder '%s': %s"):format(
    printable.text(dir), tostring(err))) end
  local list, count = {}, {}
  table.sort(names)
  for _, name in ipairs(names) do
    local path = dir:gsub("/+$", "") .. "/" .. name
    if name:match("%.json$") and process.file_type(path) == "file" then
      local doc = cli.load(tool, path)
      local sc = type(doc.scenario) == "table" and type(doc.scenario.name) == "string"
        and doc.scenario.name or nil
      list[#list + 1] = { name = name, path = path, doc = doc, scenario = sc }
      if sc then count[sc] = (count[sc] or 0) + 1 end
    end
  end
  return list, count
end

-- a file's key: its scenario where no other file of either folder has that scenario, else its name
local function keys(list, count, other)
  for _, f in ipairs(list) do
    f.key = f.scenario and count[f.scenario] == 1 and (other[f.scenario] or 0) <= 1
      and ("scenario " .. f.scenario)
      or ("file " .. f.name)
  end
end

-- the files of both folders paired by key: {pairs = {{base, new}...}, only_base = {path...},
-- only_new}
local function pair_files(tool, base_dir, new_dir)
  local base, base_count = folder_files(tool, base_dir)
  local new, new_count = folder_files(tool, new_dir)
  keys(base, base_count, new_count)
  keys(new, new_count, base_count)
  local by_key = {}
  for _, f in ipairs(new) do by_key[f.key] = f end
  local p = { pairs = {}, only_base = {}, only_new = {}, base_dir = base_dir, new_dir = new_dir }
  local used = {}
  for _, f in ipairs(base) do
    local g = by_key[f.key]
    if g then
      p.pairs[#p.pairs + 1] = { base = f, new = g }
      used[g] = true
    else
      p.only_base[#p.only_base + 1] = f.path
    end
  end
  for _, g in ipairs(new) do if not used[g] then p.only_new[#p.only_new + 1] = g.path end end
  return p
end

-- the files in one folder only, and a line when no pair is there, as text of the format
local function listing(p, fmt)
  local lines = {}
  local function list(title, l)
    if #l == 0 then return end
    lines[#lines + 1] = ("%s%s (%d):"):format(fmt == "markdown" and "**" or "", title, #l)
      .. (fmt == "markdown" and "**" or "")
    for _, path in ipairs(l) do lines[#lines + 1] = (fmt == "markdown" and "- " or "  ")
      .. printable.text(path) end
  end
  list("Only in BASE folder " .. p.base_dir, p.only_base)
  list("Only in NEW folder " .. p.new_dir, p.only_new)
  if #p.pairs == 0 then
    lines[#lines + 1]
    = "No pair of files to compare: no scenario or file name is in both folders" end
  return #lines > 0 and (table.concat(lines, "\n") .. "\n") or ""
end

-- every comparison in one text of the format; json: one document of them all
local function render_all(p, docs, fmt)
  if fmt == "json" then
    local parts = {}
    for i, d in ipairs(docs) do parts[i] = render.render(d, "json") end
    local function names(l)
      local q = {}
      for i, x in ipairs(l) do q[i] = json.encode(x) end
      return "[" .. table.concat(q, ", ") .. "]"
    end
    return (
      '{\n  "schema": "wlrun-compare-folders",\n  "version": 1,\n  "only_in_base": %s,\n  '
      .. '"only_in_new": %s,\n  "comparisons": [\n%s\n  ]\n}\n'):format(
      names(p.only_base), names(p.only_new), table.concat(parts, ",\n"))
  end
  local parts = {}
  for i, d in ipairs(docs) do parts[i] = render.render(d, fmt) end
  return table.concat(parts, "\n") .. (#parts > 0 and "\n" or "") .. listing(p, fmt)
end

-- one gate over all the pairs: an error when a configuration is slower by more than the limit,
-- or when the gate tested nothing (no pair, or a pair with nothing compared)
local function folders_gate(p, docs, fail_above)
  local failed, empty = {}, {}
  for i, d in ipairs(docs) do
    if d.gate and d.gate.compared == 0 then
      empty[#empty + 1] = p.pairs[i].base.name
    elseif d.gate and d.gate.failed then
      for _, x in ipairs(d.gate.configurations) do
        failed[#failed + 1] = ("%s: %s (%s)"):format(p.pairs[i].base.name,
          T.describe(x.params, d.parameters),
          render.change_text(x.change))
      end
    end
  end
  if #failed > 0 then regression(failed, fail_above) end
  if #p.pairs == 0 or #empty > 0 then
    core.error("usage", ("compare: --fail-above %s: %s: a gate over nothing never passes"):format(
      columns.pct(fail_above),
      #p.pairs == 0 and "no pair of files to compare (no scenario or file name is in both folders)"
        or ("no configuration was compared in %s"):format(table.concat(empty, ", "))), 0)
  end
end

function M.folders(tool, base_dir, new_dir, opts, o, format, files, to_stdout)
  local p = pair_files(tool, base_dir, new_dir)
  local docs = {}
  for i, pair in ipairs(p.pairs) do
    local po = {}
    for k, v in pairs(opts) do po[k] = v end
    po.base_path, po.new_path = pair.base.path, pair.new.path
    docs[i] = document.compare(pair.base.doc, pair.new.doc, po)
  end
  write_all(tool, function(fmt) return render_all(p, docs, fmt) end, format, files, to_stdout)
  if not o.quiet then
    for i, d in ipairs(docs) do
      for _, w in ipairs(d.warnings) do cli.warn(tool,
        ("%s: %s"):format(p.pairs[i].base.name, w.message)) end
    end
  end
  if opts.fail_above ~= nil then folders_gate(p, docs, opts.fail_above) end
end

return M
