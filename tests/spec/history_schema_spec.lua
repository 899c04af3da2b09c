-- The history database's schema and its migrations (lua/wlrun/history/schema.lua, store.lua):
-- a new file is made at the current version; a file of version 1 (made here from migration 1's
-- own statements, with rows) is migrated and keeps its rows; a newer version, another
-- program's database and an empty one are refused with the file's name.
local h = require "helper"
local sqlite = require "wlrun.sqlite"
local schema = require "wlrun.history.schema"
local store = require "wlrun.history.store"

local function fails(kind, text, fn, ...)
  local ok, e = pcall(fn, ...)
  assert.is_false(ok, "expected an error containing: " .. text)
  assert.equal(kind, type(e) == "table" and e.kind or type(e), tostring(e))
  assert.truthy(tostring(e):find(text, 1, true), "expected «" .. text .. "» in: " .. tostring(e))
end

local function pragma(db, name) return db:rows("PRAGMA " .. name)[1][name] end

-- a database of version 1, as a wlrun of that version left it: one run, two results
local function version1(path)
  local db = sqlite.open(path, { create = true })
  db:exec(schema.migration(1))
  db:exec("PRAGMA user_version = 1")
  db:exec(("PRAGMA application_id = %d"):format(schema.APPLICATION_ID))
  db:run(
    "INSERT INTO runs (scenario, device, commit_sha, dirty, time, added, file) VALUES (?1, ?2, "
    .. "?3, ?4, ?5, ?6, ?7)",
    "spin", "NVIDIA H200", "abc1234", 0, "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", "r.json")
  for _, n in ipairs { 1, 2 } do
    db:run("INSERT INTO results VALUES (1, ?1, 's', 3, ?2, ?2, ?2, ?2, 0.0, '[1,2,3]')",
      ('{"n":%d}'):format(n), n * 1.0)
  end
  db:close()
end

describe("the history's schema", function()
  it("is made at the current version in a new file, in WAL mode", function()
    local path = h.tmpdir() .. "/h.db"
    local db <close> = store.open_writer(path, "--db")
    assert.equal(schema.VERSION, pragma(db, "user_version"))
    assert.equal(schema.APPLICATION_ID, pragma(db, "application_id"))
    assert.equal("wal", pragma(db, "journal_mode"))
    assert.equal(3, schema.VERSION)
    local cols = {}
    for _, r in ipairs(db:rows("PRAGMA table_info(runs)")) do cols[r.name] = true end
    assert.is_true(cols.identity and cols.commit_source and cols.commit_sha and cols.branch
      and cols.merge_base and true)
    assert.equal(1,
      #db:rows("SELECT name FROM sqlite_schema WHERE type = 'table' AND name = 'accepted'"))
  end)

  it("migrates a database of version 1 and keeps its rows", function()
    local path = h.tmpdir() .. "/old.db"
    version1(path)
    local db <close> = store.open_writer(path, "--db")
    assert.equal(schema.VERSION, pragma(db, "user_version"))
    local runs = db:rows("SELECT * FROM runs")
    assert.equal(1, #runs)
    assert.equal("abc1234", runs[1].commit_sha)
    assert.is_nil(runs[1].identity) -- a run of version 1 has none
    assert.equal("", runs[1].commit_source)
    assert.equal(2, #db:rows("SELECT params FROM results WHERE run = 1"))
    assert.equal(1, #db:rows("SELECT name FROM sqlite_schema WHERE name = 'runs_series'"))
    assert.equal("ok", pragma(db, "integrity_check"))
  end)

  -- a database of version 2, as a wlrun of that version left it: one run, and the accepts table
  -- that its first `history accept` made outside the schema
  local function version2(path)
    version1(path)
    local db = sqlite.open(path)
    db:exec(schema.migration(2))
    db:exec("PRAGMA user_version = 2")
    db:exec(
      "CREATE TABLE IF NOT EXISTS accepted (scenario TEXT NOT NULL, device TEXT NOT NULL, "
      .. "params TEXT NOT NULL, commit_sha TEXT NOT NULL, time TEXT NOT NULL)")
    db:run(
      "INSERT INTO accepted VALUES ('spin', 'NVIDIA H200', '{\"n\":1}', 'abc1234', "
      .. "'2026-01-03T00:00:00Z')")
    db:close()
  end

  it(
    "migrates a database of version 2 in one transaction: no branch recorded (the main line's), "
    .. "its accepts kept", function()
    local path = h.tmpdir() .. "/v2.db"
    version2(path)
    local db <close> = store.open_writer(path, "--db")
    assert.equal(3, pragma(db, "user_version"))
    local run = db:rows("SELECT * FROM runs")[1]
    assert.same({ "abc1234", "", "" }, { run.commit_sha, run.branch, run.merge_base })
    assert.equal("abc1234", db:rows("SELECT commit_sha FROM accepted")[1].commit_sha)
    assert.equal("ok", pragma(db, "integrity_check"))
    -- and one without accepts gets the table; a failing migration leaves the file as it was
    local other = h.tmpdir() .. "/v2b.db"
    version1(other)
    local w = sqlite.open(other)
    w:exec(schema.migration(2))
    w:exec("PRAGMA user_version = 2")
    w:exec("ALTER TABLE runs ADD COLUMN branch TEXT") -- makes migration 3 fail half way
    w:close()
    fails("io", "duplicate column name: branch", store.open_writer, other, "--db")
    local r <close> = sqlite.open(other, { readonly = true })
    assert.equal(2, pragma(r, "user_version"))
    assert.equal(0, #r:rows("SELECT name FROM sqlite_schema WHERE name = 'accepted'"))
  end)

  it("refuses a history of version 3 whose accepted is not a table", function()
    local path = h.tmpdir() .. "/v.db"
    store.open_writer(path, "--db"):close()
    local db = sqlite.open(path)
    db:exec("DROP TABLE accepted; CREATE VIEW accepted AS SELECT 1")
    db:close()
    fails("io", "not a wlrun history: its 'accepted' is a view, not a table", store.open_reader,
      path)
  end)

  it("is migrated by a reader that may write, and by migrate() in the caller's transaction",
    function()
    local path = h.tmpdir() .. "/old.db"
    version1(path)
    local db = store.open_reader(path)
    assert.equal(schema.VERSION, pragma(db, "user_version"))
    db:close()
    -- migrate() itself on version 1, in a transaction of the caller's
    local other = h.tmpdir() .. "/old2.db"
    version1(other)
    local w <close> = sqlite.open(other)
    store.transaction(w, function() assert.equal(1, schema.migrate(w, "x")) end)
    assert.equal(schema.VERSION, pragma(w, "user_version"))
  end)

  it("refuses a newer version, another program's database and an empty one, naming the file",
    function()
    local dir = h.tmpdir()
    local newer = sqlite.open(dir .. "/newer.db", { create = true })
    newer:exec(("PRAGMA application_id = %d; PRAGMA user_version = 99"):format(
      schema.APPLICATION_ID))
    newer:close()
    fails("io",
      "history: database '" .. dir
      .. "/newer.db': a history of schema version 99, newer than this wlrun's (3)",
      store.open_reader, dir .. "/newer.db")
    fails("io", "newer than this wlrun's", store.open_writer, dir .. "/newer.db", "--db")
    local foreign = sqlite.open(dir .. "/foreign.db", { create = true })
    foreign:exec("CREATE TABLE customers (name)")
    foreign:close()
    fails("io", "an SQLite database, but not a wlrun history (its tables: customers)",
      store.open_writer,
      dir .. "/foreign.db", "--db")
    local other_app = sqlite.open(dir .. "/app.db", { create = true })
    other_app:exec("PRAGMA application_id = 1234")
    other_app:close()
    fails("io", "not a wlrun history (application id 1234)", store.open_reader, dir .. "/app.db")
    sqlite.open(dir .. "/empty.db", { create = true }):close()
    h.write(dir .. "/zero.db", "")
    fails("io", "an empty database: no run was added to it", store.open_reader, dir .. "/zero.db")
    fails("io", "no history database at '" .. dir .. "/none.db'", store.open_reader,
      dir .. "/none.db")
  end)

  it("makes the default directory, and no other", function()
    local dir = h.tmpdir()
    store.open_writer(dir .. "/.wlrun/history.db", "default"):close()
    assert.truthy(h.read(dir .. "/.wlrun/history.db"))
    fails("io", "history: cannot make the database '" .. dir .. "/no/h.db': the directory '" .. dir
      .. "/no' does not exist",
      store.open_writer, dir .. "/no/h.db", "--db")
  end)

  it("rolls back a transaction whose function fails", function()
    local db <close> = store.open_writer(h.tmpdir() .. "/h.db", "--db")
    local ok = pcall(store.transaction, db, function()
      db:run(
        "INSERT INTO runs (scenario, device, commit_sha, dirty, time, added, file) VALUES ('s', "
        .. "'', '', 0, 't', 't', 'f')")
      error("stop")
    end)
    assert.is_false(ok)
    assert.equal(0, #db:rows("SELECT id FROM runs"))
  end)
end)
