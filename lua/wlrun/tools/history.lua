-- `wlrun history add|show|trend|blame` (docs/history.md): results documents kept in an SQLite
-- database across commits; the runs stored, each configuration's series over the commits, the
-- commits where a lasting shift began, and --fail-on for CI (exit 7, as compare's gate).
-- Reading and analysing live in wlrun.history.*, the printers in wlrun.history.render.
local core = require "wlrun.core"
local json = require "wlrun.json"
local stdio = require "wlrun.text.stdio"
local json_out = require "wlrun.report.json"
local cli = require "wlrun.tools.cli"
local query = require "wlrun.history.query"
local store = require "wlrun.history.store"
local process = require "wlrun.process"
local analysis = require "wlrun.history.analysis"
local changepoint = require "wlrun.history.changepoint"
local record = require "wlrun.history.record"
local branches = require "wlrun.history.branches"
local selection = require "wlrun.history.select"
local render = require "wlrun.history.render"
local history_csv = require "wlrun.history.csv"
local printable = require("wlrun.text.printable").text

local M = {}

local TOOL = "history"

M.usage = [[
Usage: wlrun history add RESULTS.json... [--db FILE] [--commit SHA] [--branch NAME] [-q]
       wlrun history show|trend|blame [--db FILE] [selection] [options] [-o FILE]...
       wlrun history accept [--db FILE] [--branch NAME] [selection] [--commit SHA] [-q]

Keeps results across commits in an SQLite database (docs/history.md): by default
.wlrun/history.db at the root of the git repository (or of the current directory),
or [history] db in wlrun.ini.

    add RESULTS.json...  store each run (the same run twice is stored once); the
                         commit is the document's, else git's HEAD (and whether the
                         work tree is dirty) of the current directory's repository;
                         the branch and its merge base with main are recorded too;
                         - reads standard input
    show                 the runs stored
    trend                per configuration, its median at each commit and the change
                         against the first commit and the one before
    blame                per configuration, the first commit of each lasting shift
                         (a step) and each slow drift
    accept               take the level of each selected configuration from its
                         latest commit (or --commit) on as the new normal: the gate's
                         baseline, pinned at a regression, starts there

    --db FILE            the database
    --commit SHA         add: the commit of the runs, whatever they or git say;
                         accept: the commit whose level is accepted (default: each
                         configuration's latest)
    --branch NAME        add: the branch of the runs, whatever the document or git
                         say; show, trend, blame, accept: the series of this branch
                         (main's runs up to the merge base, then its own), its gate
                         against main's level at the merge base (default: main)
    --scenario NAME      only this scenario;  --device NAME  only this device
    -p NAME=V1,V2        only configurations with one of these values (repeatable);
                         a name that the database does not hold is exit 2
    --filter EXPR        only configurations for which the Lua expression is true
    --fail-on PCT        trend, blame: exit with code 7 when the latest commit of a
                         configuration is significantly slower than its baseline by
                         more than PCT (exit 2 when the selection matches none); the
                         baseline stays pinned from the first commit that failed
                         until a new level is accepted
    --min-effect PCT     blame: the smallest shift reported (default 2%)
    --min-runs N         blame: commits on each side of a shift (default 3)
    --alpha A            blame: significance level (default 0.01)
    --format FMT         standard output as text (default), json, markdown (a pull
                         request's comment) or csv
    -o, --output FILE    also write FILE: .json, .md, .txt or .csv (may be repeated);
                         - is standard output, in JSON, and alone there
    -q, --quiet          add, accept: print nothing
    -h, --help           this text
]]

local spec = {
  ["--db"] = { value = true }, ["--commit"] = { value = true }, ["--branch"] = { value = true },
    ["--scenario"] = { value = true },
  ["--device"] = { value = true }, ["-p"] = { value = true, multi = true, key = "param" },
  ["--param"] = { value = true, multi = true, key = "param" }, ["--filter"] = { value = true },
  ["--fail-on"] = { value = true }, ["--format"] = { value = true },
    ["--min-effect"] = { value = true }, ["--min-runs"] = { value = true },
  ["--alpha"] = { value = true }, ["-o"] = { value = true, multi = true, key = "output" },
  ["--output"] = { value = true, multi = true, key = "output" }, ["-q"] = { key = "quiet" },
    ["--quiet"] = {},
  ["-h"] = { key = "help" }, ["--help"] = {},
}

-- the options each command takes (beyond --db and --help)
local takes = {
  add = { commit = true, branch = true, quiet = true, output = true, format = true },
  show = { branch = true, scenario = true, device = true, param = true, filter = true,
    output = true, format = true },
  trend = { branch = true, scenario = true, device = true, param = true, filter = true,
    output = true, fail_on = true, format = true },
  blame = { branch = true, scenario = true, device = true, param = true, filter = true,
    output = true, fail_on = true,
            min_effect = true, min_runs = true, alpha = true, format = true },
  accept = { branch = true, scenario = true, device = true, param = true, filter = true,
    commit = true, quiet = true, output = true, format = true },
}

local function fail(kind, msg) cli.fail(kind, TOOL, msg) end

local function percent(o, key, name)
  if o[key] == nil then return nil end
  local v = cli.percent(o[key])
  if not v
    or v < 0 then
    fail("usage", ("%s: expected a percentage >= 0, like 5 or 2.5%%, got '%s'"):format(name,
    o[key])) end
  return v
end

local function check_options(cmd, o)
  for key in pairs(o) do
    if key ~= "db" and key ~= "help" and not takes[cmd][key] then
      fail("usage", ("--%s does not apply to %s (wlrun history --help)"):format(key:gsub("_", "-"),
        cmd))
    end
  end
  local opts = { fail_on = percent(o, "fail_on", "--fail-on"),
    min_effect = percent(o, "min_effect", "--min-effect") }
  if o.min_runs then
    opts.min_segment = math.tointeger(tonumber(o.min_runs))
    if not (opts.min_segment and opts.min_segment >= 1 and opts.min_segment <= 1000) then
      fail("usage", ("--min-runs: expected a whole number from 1 to 1000, got '%s'"):format(
        o.min_runs))
    end
  end
  if o.alpha then
    opts.alpha = tonumber(o.alpha)
    if not (opts.alpha and opts.alpha > 0 and opts.alpha < 1) then
      fail("usage", ("--alpha: expected a number between 0 and 1, got '%s'"):format(o.alpha))
    end
  end
  if o.commit and #o.commit > 100 then
    fail("usage", ("--commit: at most 100 characters, got %d ('%s')"):format(#o.commit,
      printable(o.commit, 40)))
  elseif o.commit and not o.commit:match("^[%w][%w._/-]*$") then
    fail("usage",
      ("--commit: expected a commit (hex digits) or a name of letters, digits, '.', '_', '/' "
      .. "and '-', got '%s'"):format(printable(o.commit, 100)))
  end
  if o.branch and not (#o.branch <= 200 and o.branch:match("^[%w][%w._/-]*$")
    and not o.branch:find("..", 1, true)) then
    fail("usage",
      ("--branch: expected a branch's name of letters, digits, '.', '_', '/' and '-' (at most "
      .. "200), got '%s'"):format(
      printable(o.branch, 100)))
  end
  local FORMATS = { json = "json", txt = "text", md = "markdown", markdown = "markdown",
    csv = "csv" }
  opts.outputs = {}
  for _, path in ipairs(o.output or {}) do
    local ext = (path:match("%.([^./]+)$") or ""):lower()
    if path == "-" then ext, opts.to_stdout = "json", true end
    if not FORMATS[ext] then
      fail("usage",
        ("cannot tell the output format of '%s' from its extension (.json .md .txt .csv)"):format(
          path))
    end
    opts.outputs[#opts.outputs + 1] = { path = path, format = FORMATS[ext] }
  end
  opts.format = o.format or "text"
  if not ({ text = true, json = true, markdown = true, csv = true })[opts.format] then
    fail("usage", ("--format: expected text, json, markdown or csv, got '%s'"):format(
      printable(o.format, 40)))
  end
  return opts
end

---------------------------------------------------------------------------------------------
-- add

local function base_doc(cmd, path)
  local doc = json_out.object()
  doc.schema = "wlrun-history"
  doc.version = 1
  doc.command = cmd
  doc.database = path
  return doc
end

-- what add did with a run, in its document: added (or there already: the run that is), where
local function added_entry(run, done)
  local c = run.commit
  local r = json_out.object()
  r.file, r.run, r.added, r.scenario = run.file, done.id, done.added, run.scenario
  r.device = run.device or ""
  r.configurations, r.not_measured = #run.configurations, run.left
  r.commit, r.dirty, r.commit_source = c.commit, c.dirty, c.source
  r.branch, r.merge_base = run.branch or "", run.merge_base or ""
  if not done.added then r.existing = { time = done.time, commit = done.commit } end
  return r
end

local function add(o, files)
  if #files == 0 then
    fail("usage", "add: expected one or more results files (wlrun history add RESULTS.json...)") end
  local runs = {}
  for _, file in ipairs(files) do -- every file read and checked before the database is touched
    local doc = cli.load(TOOL, file)
    local path = file == "-" and stdio.NAME or file -- as the run's file and in messages
    local shown = printable(path) -- a file's name is data too (a glob's)
    if doc.journal then
      fail("usage",
        ("'%s' is the journal of a run that did not finish: make it a results file first (wlrun "
        .. "merge %s -o FILE.json)"):format(shown, shown))
    end
    local run, left = record.run(doc, path)
    if #run.configurations == 0 then
      cli.warn(TOOL, ("'%s' has no measured configuration: nothing to add"):format(shown))
    else
      if doc.complete == false then cli.warn(TOOL,
        ("'%s' is the result of a run that did not finish"):format(shown)) end
      run.commit, run.left = record.commit(doc, o.commit), left
      run.branch, run.merge_base = branches.of_run(run.commit.branch, o.branch, run.commit.commit)
      if run.commit.commit == "" then
        cli.warn(TOOL,
          ("no commit is known for '%s' (it records none, and the current directory is not in a "
          .. "git repository): give it with --commit"):format(shown))
      end
      runs[#runs + 1] = run
    end
  end
  if #runs == 0 then return nil end
  local path, source = store.locate(o.db)
  cli.input(path)
  local db <close> = store.open_writer(path, source)
  local done = {}
  store.transaction(db, function() -- all the files or none
    for i, run in ipairs(runs) do done[i] = record.insert(db, run, run.commit) end
  end)
  local doc = base_doc("add", path)
  doc.runs = json_out.array()
  for i, run in ipairs(runs) do doc.runs[i] = added_entry(run, done[i]) end
  return doc
end

---------------------------------------------------------------------------------------------
-- show, trend, blame

-- raises unless --scenario or --device (what) names one of the database's (a name it does not
-- hold is misspelt, or its runs were never added: a selection of nothing is not an answer)
local function check_known(db, path, what, name)
  if name == nil then return end
  local names = query.names(db, what)
  for _, n in ipairs(names) do
    if n == name then return end
  end
  for i, n in ipairs(names) do names[i] = ("'%s'"):format(printable(n, 60)) end
  if #names > 20 then names = { table.concat(names, ", ", 1, 20)
    .. (", and %d more"):format(#names - 20) } end
  fail("usage", ("--%s '%s': no run in '%s' has this %s (%s)"):format(what, printable(name, 60),
    printable(path),
    what, #names > 0 and ("its " .. what .. "s: " .. table.concat(names, ", "))
      or "it holds no run"))
end

local function select_series(db, path, o)
  check_known(db, path, "scenario", o.scenario)
  check_known(db, path, "device", o.device)
  local rows, info = branches.select(query.rows(db,
    { scenario = o.scenario, device = o.device, keep = o.keep }), o.branch)
  o.branch_info = info
  local where = {}
  if o.scenario then where[#where + 1] = ("of scenario '%s'"):format(printable(o.scenario, 60)) end
  if o.device then where[#where + 1] = ("on device '%s'"):format(printable(o.device, 60)) end
  o.finish(#where > 0 and (" " .. table.concat(where, " ")) or nil)
  return rows
end


-- the branch of the series read (select_series), in the document: its name, and for a branch
-- other than the main line its merge base with it
local function branch_of(doc, o)
  local info = o.branch_info
  doc.branch = info.branch
  if o.branch and not branches.is_main(o.branch) then
    doc.main = info.main
    doc.merge_base = info.merge_base or ""
  end
end

-- the index of the last point of the main line before a branch's own points, or nil when the
-- branch has no run of its own in this series
local function merge_base_index(points)
  for i, p in ipairs(points) do
    for _, row in ipairs(p.rows) do
      if row.own then return i - 1 end
    end
  end
end

local function series_entry(s)
  local e = json_out.object()
  e.scenario = s.scenario -- one by one: the order of a multiple assignment is not defined
  e.device = s.device
  e.params = json.object(s.params)
  return e
end

local function show(db, path, o)
  local doc = base_doc("show", path)
  local runs, by = json_out.array(), {}
  for _, row in ipairs(select_series(db, path, o)) do
    local r = by[row.run]
    if not r then
      r = { id = row.run, time = row.time, added = row.added, scenario = row.scenario,
        device = row.device,
        commit = row.commit, dirty = row.dirty, commit_source = row.commit_source,
          branch = row.branch,
        merge_base = row.merge_base, file = row.file, configurations = 0 }
      by[row.run] = r
      runs[#runs + 1] = r
    end
    r.configurations = r.configurations + 1
  end
  branch_of(doc, o)
  doc.runs = runs
  return doc
end

-- the newest of the series' last commits (by time): the commit that the gate judges
local function latest_of(all)
  local latest
  for _, x in ipairs(all) do
    local last = x.points[#x.points]
    if last and (not latest or last.time > latest.time) then latest = last end
  end
  return latest
end

local function same_commit(a, b)
  if a.commit ~= "" or b.commit ~= "" then return a.commit == b.commit and a.dirty == b.dirty end
  return a.time == b.time
end

-- The gate of one series (e.gate): judged where the series ran at the latest commit (a
-- configuration that did not, removed or left out of that run, is not); counted in gate.compared
-- where it has an earlier commit to be judged against (or a level accepted)
local function gate_series(db, s, points, e, gate, ctx)
  if not same_commit(points[#points], ctx.latest) then
    e.gate = { verdict = "not run at the latest commit", failed = false }
    return
  end
  local found_of = function(prefix) return analysis.blame(s, prefix, ctx.opts) end
  local g = { fail_on = ctx.opts.fail_on, alpha = ctx.opts.alpha,
    accepted = query.accepted(db, s, points), min_segment = ctx.opts.min_segment }
  if ctx.branch and not branches.is_main(ctx.branch) then -- against main's level at the merge base
    e.gate = analysis.branch_gate(points, merge_base_index(points), found_of, ctx.samples, g)
  else
    e.gate = analysis.pinned_gate(points, found_of, ctx.samples, g)
  end
  if #points >= 2 then gate.compared = gate.compared + 1 end
  if e.gate.failed then gate.failed, gate.failing = true, gate.failing + 1 end
end

-- a gate that looked at nothing would pass whatever the latest commit did: exit 2
local function refuse_empty_gate(gate, list, ctx, path)
  if #list == 0 then
    fail("usage",
      ("--fail-on: no configuration in '%s' matches the selection: the gate has nothing "
      .. "to check"):format(printable(path)))
  end
  if gate.compared == 0 then
    local c = ctx.latest.commit ~= "" and ctx.latest.commit:sub(1, 12) or ctx.latest.time
    fail("usage",
      ("--fail-on: nothing was compared: no configuration of the latest commit (%s) in '%s' "
      .. "has an earlier commit to be judged against (a first run, or parameters that changed): "
      .. "a gate over nothing never passes"):format(printable(c), printable(path)))
  end
end

local function analyse(db, path, o, opts, cmd)
  local doc = base_doc(cmd, path)
  if cmd == "blame" then
    local cp = changepoint.defaults
    doc.settings = { min_effect = opts.min_effect or cp.min_effect,
      min_runs = opts.min_segment or cp.min_segment,
      alpha = opts.alpha or cp.alpha, permutations = cp.permutations }
  end
  local list = json_out.array()
  local gate = opts.fail_on and { fail_on = opts.fail_on, failed = false, failing = 0,
    compared = 0 } or nil
  local all = {}
  for _, s in ipairs(query.series(select_series(db, path, o))) do
    all[#all + 1] = { s = s, points = query.commits(s) }
  end
  local ctx = { opts = opts, branch = o.branch, latest = latest_of(all),
    samples = function(row) return query.samples(db, row) end }
  for _, x in ipairs(all) do
    local e = series_entry(x.s)
    e.commits = #x.points
    local found = (cmd == "blame" or gate) and analysis.blame(x.s, x.points, opts)
    if cmd == "trend" then e.points = analysis.trend(x.points) else e.steps, e.drifts = found.steps,
      found.drifts end
    if gate then gate_series(db, x.s, x.points, e, gate, ctx) end
    list[#list + 1] = e
  end
  if gate then refuse_empty_gate(gate, list, ctx, path) end
  branch_of(doc, o)
  doc.configurations = list
  doc.gate = gate
  return doc
end

---------------------------------------------------------------------------------------------
-- accept

local function accept(o)
  local path, source = store.locate(o.db)
  cli.input(path)
  if source == "default" and not process.file_type(path) then
    fail("io", ("no history database at '%s' (wlrun history add RESULTS.json makes it)"):format(
      printable(path)))
  end
  local db <close> = store.open_writer(path, source)
  local chosen = {}
  for _, s in ipairs(query.series(select_series(db, path, o))) do
    local points = query.commits(s)
    local commit = points[#points].commit
    if o.commit then
      commit = nil
      for _, p in ipairs(points) do
        if p.commit == o.commit or p.commit:sub(1, #o.commit) == o.commit then commit = p.commit end
      end
    end
    if commit then chosen[#chosen + 1] = { s = s, commit = commit } end
  end
  if #chosen == 0 then
    fail("usage",
      o.commit and ("--commit %s: no selected configuration has a run of this commit"):format(
      printable(o.commit, 60))
      or "no configuration matches the selection: nothing to accept")
  end
  local now = os.date("!%Y-%m-%dT%H:%M:%SZ")
  store.transaction(db, function()
    for _, c in ipairs(chosen) do
      db:run(
        "INSERT INTO accepted (scenario, device, params, commit_sha, time) VALUES (?1, ?2, "
        .. "?3, ?4, ?5)",
        c.s.scenario, c.s.device, c.s.params_json, c.commit, now)
    end
  end)
  local doc = base_doc("accept", path)
  doc.accepted = json_out.array()
  for i, c in ipairs(chosen) do
    local a = json_out.object()
    a.scenario, a.device, a.params, a.commit = c.s.scenario, c.s.device, json.object(c.s.params),
      c.commit
    doc.accepted[i] = a
  end
  return doc
end

-- a command's document on standard output (in --format; nothing with --quiet, or where -o - has
-- it) and into each -o FILE, in the format of its extension; nil: nothing done, nothing said
local function write_doc(doc, opts, quiet)
  if not doc then return end
  local function as(format)
    if format == "json" then return json_out.text(doc) end
    if format == "csv" then return history_csv.render(doc) end
    return format == "markdown" and render.markdown(doc) or render.text(doc)
  end
  if not opts.to_stdout and not quiet then -- -o - is standard output's alone
    stdio.write(as(opts.format))
    io.stdout:flush()
  end
  local texts = {}
  for i, f in ipairs(opts.outputs) do texts[i] = { f.path, as(f.format) } end
  cli.write_all(TOOL, texts)
end

function M.main(args)
  local o, pos = cli.parse_args(TOOL, args or {}, spec)
  local cmd = table.remove(pos, 1)
  if o.help or cmd == nil then
    stdio.write(M.usage)
    if cmd == nil and not o.help then fail("usage",
      "expected a command: add, show, trend, blame or accept") end
    return
  end
  if not takes[cmd] then
    fail("usage", ("unknown command '%s' (add, show, trend, blame, accept)"):format(cmd)) end
  local opts = check_options(cmd, o)
  if cmd == "add" then return write_doc(add(o, pos), opts, o.quiet) end
  if cmd == "accept" then
    if #pos > 0 then
      fail("usage", ("accept takes no file: '%s' (the database is given with --db)"):format(
      pos[1])) end
    o.keep, o.finish = selection.selector(o.param, o.filter)
    return write_doc(accept(o), opts, o.quiet)
  end
  if #pos > 0 then
    fail("usage", ("%s takes no file: '%s' (the database is given with --db)"):format(cmd,
    pos[1])) end
  o.keep, o.finish = selection.selector(o.param, o.filter) -- its errors before the file's
  local path = cli.input(store.locate(o.db))
  local db <close> = store.open_reader(path)
  local doc = cmd == "show" and show(db, path, o) or analyse(db, path, o, opts, cmd)
  write_doc(doc, opts)
  if doc.gate and doc.gate.failed then core.error("regression", render.gate_message(doc), 0) end
end

return M
