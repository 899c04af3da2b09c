-- The history database's schema (docs/history.md, "The database") and its migrations: the
-- version is PRAGMA user_version, each migration takes a database from the version before it
-- to its own, and a file is marked as a wlrun history by PRAGMA application_id.
--
--   schema.VERSION                   the version this wlrun writes
--   schema.migrate(db, label)        brings db up to VERSION inside the caller's transaction;
--                                    returns the version it had (0: a new file)
--   schema.check(db, label)          what a reader needs: raises unless db is a wlrun history at
--                                    VERSION; returns "migrate" when it is an older one
local core = require "wlrun.core"
local printable = require "wlrun.text.printable"

local schema = {}

schema.APPLICATION_ID = 0x776C7268 -- "wlrh"

-- MIGRATIONS[v]: the statements that take a database from version v - 1 to v. A migration is
-- never edited once released: a change of the schema is a new one at the end.
local MIGRATIONS = {
  -- 1: runs and their configurations' results
  [[
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  scenario TEXT NOT NULL,      -- the scenario's name
  device TEXT NOT NULL,        -- the device's name; '' for none
  commit_sha TEXT NOT NULL,    -- the commit of the scenario's repository; '' when unknown
  dirty INTEGER NOT NULL,      -- 1: the work tree had changes
  time TEXT NOT NULL,          -- when the run started, UTC (2026-11-29T22:31:07Z)
  added TEXT NOT NULL,         -- when it was added
  file TEXT NOT NULL           -- the results file it was added from
);
CREATE TABLE results (
  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  params TEXT NOT NULL,        -- the parameters as canonical JSON (keys sorted)
  unit TEXT NOT NULL,          -- of the summary and the samples: 's'
  n INTEGER NOT NULL,
  median REAL NOT NULL,
  mean REAL NOT NULL,
  min REAL NOT NULL,
  max REAL NOT NULL,
  stddev REAL NOT NULL,
  samples TEXT NOT NULL,       -- a JSON array of numbers
  PRIMARY KEY (run, params)
) WITHOUT ROWID;
]],
  -- 2: a run's identity, so that adding it again changes nothing (rows of version 1 have
  -- none); where its commit came from; the index of the series
  [[
ALTER TABLE runs ADD COLUMN identity TEXT;
ALTER TABLE runs ADD COLUMN commit_source TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX runs_identity ON runs(identity);
CREATE INDEX runs_series ON runs(scenario, device, time);
]],
  -- 3: the branch of a run and its merge base with the main line ('' when unknown: the runs of
  -- version 2 and before are the main line's, docs/history.md "Branches"); the accepts of
  -- `wlrun history accept`, which a wlrun of version 2 made at its first accept (IF NOT EXISTS:
  -- kept as they are)
  [[
ALTER TABLE runs ADD COLUMN branch TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN merge_base TEXT NOT NULL DEFAULT '';
CREATE TABLE IF NOT EXISTS accepted (
  scenario TEXT NOT NULL, device TEXT NOT NULL, params TEXT NOT NULL, -- the configuration's series
  commit_sha TEXT NOT NULL,    -- the commit whose level is the new normal
  time TEXT NOT NULL           -- when it was accepted, UTC
);
]],
}

schema.VERSION = #MIGRATIONS

-- the statements of migration v (for the tests, which build a database of an older version)
function schema.migration(v) return MIGRATIONS[v] end

local function fail(label, msg)
  core.error("io", ("%s: %s"):format(label, printable.whole(msg)), 0)
end

local function pragma(db, name) return db:rows("PRAGMA " .. name)[1][name] end

-- the names of the tables in db, sorted
local function tables(db)
  local names = {}
  for _,
    r in ipairs(db:rows("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")) do
    names[#names + 1] = printable.text(r.name, 60) -- another program's names
  end
  return names
end

-- Raises unless the history's tables are tables (runs and results; accepted from version 3 on):
-- a view of the same name (a file made to look like a history) could make every query of it
-- run for ever.
local function check_tables(db, label, v)
  local names = v >= 3 and { "runs", "results", "accepted" } or { "runs", "results" }
  local kind = {}
  for _,
    r in ipairs(
    db:rows(
    "SELECT name, type FROM sqlite_schema WHERE name IN ('runs', 'results', 'accepted')")) do
    kind[r.name] = r.type
  end
  for _, name in ipairs(names) do
    if kind[name] ~= "table" then
      fail(label, ("not a wlrun history: its '%s' is %s"):format(name,
        kind[name] and ("a " .. kind[name] .. ", not a table") or "missing"))
    end
  end
end

-- The version of db, or raises when db is not a wlrun history, or one newer than this wlrun.
local function version_of(db, label)
  local id, v = pragma(db, "application_id"), pragma(db, "user_version")
  if id ~= schema.APPLICATION_ID then
    local names = tables(db)
    if id ~= 0 or v ~= 0 or #names > 0 then
      fail(label, ("an SQLite database, but not a wlrun history (%s)"):format(#names > 0 and
        ("its tables: " .. table.concat(names, ", ")) or ("application id " .. id)))
    end
    return 0
  end
  if math.type(v) ~= "integer" or v < 0 then
    fail(label, ("not a wlrun history: its schema version (user_version) is %s"):format(
      tostring(v)))
  end
  if v > schema.VERSION then
    fail(label,
      ("a history of schema version %d, newer than this wlrun's (%d): use a newer wlrun"):format(v,
      schema.VERSION))
  end
  if v > 0 then check_tables(db, label, v) end
  return v
end

function schema.migrate(db, label)
  local from = version_of(db, label)
  for v = from + 1, schema.VERSION do
    db:exec(MIGRATIONS[v])
    db:exec(("PRAGMA user_version = %d"):format(v)) -- a number of ours, never data
  end
  if from == 0 then db:exec(("PRAGMA application_id = %d"):format(schema.APPLICATION_ID)) end
  return from
end

function schema.check(db, label)
  -- one read transaction: its reads see one state of the file (a writer making the database
  -- commits its tables and its id at once; read one by one, a reader could see the tables
  -- without the id and call it another program's)
  db:exec("BEGIN")
  local ok, v = pcall(version_of, db, label)
  pcall(db.exec, db, "COMMIT")
  if not ok then error(v, 0) end
  if v == 0 then fail(label, "an empty database: no run was added to it (wlrun history add)") end
  if v < schema.VERSION then return "migrate" end
end

return schema
