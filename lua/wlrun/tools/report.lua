-- `wlrun report --html DIR [RESULTS.json...] [--db FILE]` (docs/history.md, "A report as a web
-- page"): one self-contained HTML page, DIR/index.html, of results files, their comparisons and a
-- history database (wlrun.html.report). Everything is read and the page made before DIR is
-- touched; DIR is made when missing, and an existing one is written into only when it is empty
-- or holds a previous report (its index.html says it was made by wlrun report), so that a
-- mistyped directory never loses files.
local process = require "wlrun.process"
local stdio = require "wlrun.text.stdio"
local store = require "wlrun.history.store"
local page = require "wlrun.html.page"
local html_report = require "wlrun.html.report"
local cli = require "wlrun.tools.cli"

local M = {}

local TOOL = "report"

M.usage = [[
Usage: wlrun report --html DIR [RESULTS.json...] [--db FILE] [options]

Writes one self-contained web page, DIR/index.html (docs/history.md, "A report
as a web page"): each results file's table, the distribution of each
configuration's samples, its warnings and provenance; each file after the
first compared with the first (as wlrun compare does); with --db, each
configuration's median by commit and the commits where it shifted (as wlrun
history blame does). The page loads nothing: its plots are inline SVG, its
tables read without JavaScript and sort on a click where it runs.

    --html DIR           where the page goes: made when missing; a directory
                         that holds anything but a previous report is refused
                         (- is refused: a page is a directory); a RESULTS file
                         - reads standard input
    --db FILE            a history database (wlrun history add makes it)
    --scenario NAME      the history of this scenario only
    --device NAME        the history of this device only
    --title TEXT         the page's title (default: the scenarios' names)
    -q, --quiet          print nothing (else the page's path and contents)
    -h, --help           this text
]]

local spec = {
  ["--html"] = { value = true }, ["--db"] = { value = true }, ["--scenario"] = { value = true },
  ["--device"] = { value = true }, ["--title"] = { value = true },
  ["-q"] = { key = "quiet" }, ["--quiet"] = {}, ["-h"] = { key = "help" }, ["--help"] = {},
}

local INDEX = "index.html"

local function fail(kind, msg) cli.fail(kind, TOOL, msg) end

-- whether the file at path begins as a page of wlrun report; only a regular file is opened (a
-- FIFO would block the read; a link is not a page this tool wrote)
local function is_report(path)
  if process.file_type(path) ~= "file" then return false end
  local f = io.open(path, "rb")
  local head = f and f:read(4096)
  if f then f:close() end
  local marker = ('<meta name="generator" content="%s'):format(page.GENERATOR)
  return type(head) == "string" and head:find(marker, 1, true) ~= nil
end

-- DIR made (with the directories above it) or checked: empty, or only a previous report
local function prepare(dir)
  local names, err = process.list_dir(dir)
  if not names then
    local kind = process.file_type(dir)
    if kind == "directory" then fail("io", ("--html '%s': cannot list it: %s"):format(dir, err)) end
    local words = { file = "a file", fifo = "a FIFO", link = "a symbolic link to nothing",
      other = "a special file" }
    if kind then fail("io", ("--html '%s' is %s, not a directory"):format(dir, words[kind])) end
    return cli.make_dirs(TOOL, dir)
  end
  local others = {}
  -- index.html, and what a killed writer of it left (wlrun.text.files)
  for _, name in ipairs(names) do
    if not (name == INDEX or name == INDEX .. ".tmp"
      or name:match("^index%.html%.%w%w%w%w%w%w%.tmp$")) then
      others[#others + 1] = name
    end
  end
  table.sort(others)
  if #others > 0 then
    fail("usage",
      ("--html '%s' holds other files (%s%s): give a new or empty directory, or one of an "
      .. "earlier report"):format(
      dir, table.concat(others, ", ", 1, math.min(#others, 5)), #others > 5 and ", ..." or ""))
  end
  for _, name in ipairs(names) do
    if name == INDEX and not is_report(dir .. "/" .. INDEX) then
      fail("usage",
        ("--html '%s': its %s was not made by wlrun report; it is left as it is"):format(dir,
        INDEX))
    end
  end
end

-- the history's errors name the report, not `wlrun history` ("report: database 'h.db': ...")
local function as_report(fn, ...)
  local ok, a, b = pcall(fn, ...)
  if ok then return a, b end
  if type(a) == "table" and type(a.message) == "string" then
    a.message = a.message:gsub("^history: ", TOOL .. ": ") end
  error(a, 0)
end

local function plural(n, word) return ("%d %s%s"):format(n, word, n == 1 and "" or "s") end

function M.main(args)
  local o, pos = cli.parse_args(TOOL, args or {}, spec)
  if o.help then
    stdio.write(M.usage)
    return
  end
  if not o.html then
    fail("usage",
    "--html DIR is needed: the directory the page goes into (wlrun report --help)") end
  if o.html == "" then fail("usage", "--html: expected a directory, got ''") end
  if o.html == "-" then
    fail("usage",
      "--html -: the report is a directory (index.html), which standard output cannot be: give "
      .. "a directory")
  end
  if #pos == 0 and not o.db then
    fail("usage", "expected results files, --db FILE, or both (wlrun report --help)")
  end
  if (o.scenario or o.device) and not o.db then
    fail("usage", "--scenario and --device select the history: they need --db") end
  local documents = {}
  for i, path in ipairs(pos) do
    local doc = cli.load(TOOL, path)
    documents[i] = { doc = doc, path = path }
  end
  local opts = { documents = documents, db_path = o.db, title = o.title,
    selection = { scenario = o.scenario, device = o.device } }
  local text, holds
  if o.db then
    local db <close> = as_report(store.open_reader, o.db)
    opts.db = db
    text, holds = as_report(html_report.render, opts)
  else
    text, holds = html_report.render(opts)
  end
  local dir = o.html:gsub("(.)/+$", "%1")
  prepare(dir)
  local path = cli.write(TOOL, dir .. "/" .. INDEX, text)
  if o.quiet then return end
  local parts = { plural(#documents, "results file") }
  if holds.comparisons > 0 then parts[#parts + 1] = plural(holds.comparisons, "comparison") end
  if holds.series then parts[#parts + 1] = ("the history of %s"):format(
    plural(holds.series, "configuration")) end
  stdio.write(("wrote '%s': %s\n"):format(path, table.concat(parts, ", ")))
end

return M
