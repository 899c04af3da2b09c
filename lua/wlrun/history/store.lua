-- Where the history database is and opening it (docs/history.md, "The database"): --db, else
-- [history] db in wlrun.ini, else .wlrun/history.db at the root of the git repository holding
-- the current directory (the current directory outside one). Writers open it in WAL mode with
-- a busy timeout, so that parallel CI jobs adding at once wait for each other instead of
-- failing, and migrate it in the transaction that writes; readers open it read-only (a file
-- without write access can be read) and migrate an older one only where they may write.
local core = require "wlrun.core"
local process = require "wlrun.process"
local sqlite = require "wlrun.sqlite"
local printable = require "wlrun.text.printable"
local git = require "wlrun.results.git"
local schema = require "wlrun.history.schema"

local store = {}

store.TIMEOUT = 60 -- seconds a writer waits for another one

local function fail(kind, msg) core.error(kind, "history: " .. printable.whole(msg), 0) end

local function dir_of(path) return path:match("^(.*)/[^/]*$") or "." end

local function is_dir(path)
  local f = io.open(path .. "/", "rb") -- opens a directory, never a file
  if f then f:close() end
  return f ~= nil
end

-- the database's path and where it came from: "--db", "wlrun.ini" or "default" (shown from
-- the current directory when it is below it)
function store.locate(option)
  if option then return option, "--db" end
  local setting = core.settings.history and core.settings.history.db
  if setting then return setting, "wlrun.ini" end
  local cwd = process.cwd() or "."
  local root = git.toplevel(cwd) or cwd
  local path = root .. "/.wlrun/history.db"
  if path:sub(1, #cwd + 1) == cwd .. "/" then path = path:sub(#cwd + 2) end
  return path, "default"
end

function store.label(path) return ("history: database '%s'"):format(path) end

-- BEGIN IMMEDIATE (the write lock, waited for), fn(db), COMMIT; ROLLBACK when fn raises
function store.transaction(db, fn)
  db:exec("BEGIN IMMEDIATE")
  local ok, e = pcall(fn, db)
  if not ok then
    pcall(db.exec, db, "ROLLBACK") -- the error raised is fn's
    error(e, 0)
  end
  db:exec("COMMIT")
end

local function says(e, text) return tostring(e):find(text, 1, true) ~= nil end

local WHAT = { directory = "a directory", fifo = "a FIFO", socket = "a device or a socket",
  other = "a device or a socket" }

-- Raises unless path can name a database file: standard input and output cannot hold one, and
-- a directory, a FIFO (opening it would wait for a writer) or a device is not one. Returns
-- whether something is there (a symbolic link is left to wlrun.sqlite, which looks at what it
-- points to).
local function check_path(path)
  if path == "" then
    fail("usage", "the database's name is empty (--db FILE, or [history] db in wlrun.ini)") end
  if path == "-" then
    fail("usage",
      "the database cannot be standard input or output ('-'): give a file (./- for a file "
      .. "named '-')")
  end
  local kind = process.file_type(path)
  if WHAT[kind] then fail("io", ("the database '%s' is %s, not a file"):format(path,
    WHAT[kind])) end
  return kind ~= nil
end

-- Raises (kind io) unless SQLite's quick check finds the database whole: runs are never added
-- to a damaged file, where they could be lost with it.
function store.intact(db, path)
  local ok, rows = pcall(db.rows, db, "PRAGMA quick_check(5)")
  local first = ok and rows[1] and rows[1].quick_check
  if first == "ok" then return end
  -- SQLite's own error (not a database, its log not made beside it) is left to the steps that
  -- say it as they do for a reader
  if not ok then return end
  local why = tostring(first)
  fail("io",
    ("the database '%s' is damaged (SQLite's quick_check: %s): nothing is added to it; restore "
    .. "it from a copy, or give another --db"):format(
    path, printable.text(why, 200)))
end

-- The database for writing, made when missing (its directory too when it is the default one),
-- at the current schema version.
function store.open_writer(path, source)
  local existed = check_path(path)
  local dir = dir_of(path)
  if source == "default" and not is_dir(dir) then
    local ok, err = process.make_dir(dir)
    if not ok then fail("io", ("cannot make the directory '%s' of the database: %s"):format(dir,
      err)) end
  elseif not is_dir(dir) then
    fail("io", ("cannot make the database '%s': the directory '%s' does not exist"):format(path,
      dir))
  end
  local label = store.label(path)
  local db = sqlite.open(path, { create = true, timeout = store.TIMEOUT, label = label })
  if db:readonly() then
    fail("io", ("the database '%s' is read-only: adding needs write access"):format(path)) end
  if existed then store.intact(db, path) end
  local ok, e = pcall(function()
    db:rows("PRAGMA journal_mode = WAL") -- kept in the file: set once, by the first writer
    db:exec("PRAGMA foreign_keys = ON")
    store.transaction(db, function() schema.migrate(db, label) end)
  end)
  local os_reason = not ok and tostring(type(e) == "table" and e.message or e):match(
    "unable to open database file %(([^)]*)%)")
  if os_reason and os_reason ~= "Permission denied" and os_reason ~= "Read-only file system" then
    fail("io", ("cannot write the database '%s': %s"):format(path, os_reason))
  end
  if not ok and (says(e, "attempt to write a readonly database")
    or says(e, "unable to open database file")) then
    -- the file may be written, what SQLite makes beside it may not
    fail("io",
      ("cannot write the database '%s': SQLite keeps its log in '%s-wal' and '%s-shm' beside "
      .. "it, and the directory '%s' (or those files) cannot be written"):format(
      path, path, path, dir))
  end
  if not ok then error(e, 0) end
  return db
end

-- The database for reading; it must exist and hold a history.
function store.open_reader(path)
  if not check_path(path) then
    fail("io", ("no history database at '%s' (wlrun history add RESULTS.json makes it)"):format(
      path))
  end
  local label = store.label(path)
  local db = sqlite.open(path, { readonly = true, timeout = store.TIMEOUT, label = label })
  local ok, state = pcall(schema.check, db, label)
  if not ok and says(state, "attempt to write a readonly database") then
    -- a WAL database where its -shm file cannot be made (a read-only directory): read as is
    db:close()
    db = sqlite.open(path, { immutable = true, label = label })
    ok, state = pcall(schema.check, db, label)
  end
  if not ok and says(state, "unable to open database file") and process.file_type(path .. "-wal")
    and not process.file_type(path .. "-shm") then
    fail("io",
      ("cannot read the database '%s': its log '%s-wal' holds changes not yet in it, and SQLite "
      .. "cannot make '%s-shm' to read them in the directory '%s': read it where a directory "
      .. "can be written (copy '%s' and '%s-wal' there together)"):format(
      path, path, path, dir_of(path), path, path))
  end
  if not ok then error(state, 0) end
  if state == "migrate" then
    db:close()
    local opened, writer = pcall(sqlite.open, path, { timeout = store.TIMEOUT, label = label })
    if not opened or writer:readonly() then
      fail("io",
        ("the database '%s' has an older schema and is read-only: open it once with write "
        .. "access (wlrun history add) to update it"):format(path))
    end
    store.transaction(writer, function() schema.migrate(writer, label) end)
    return writer
  end
  return db
end

return store
