-- wlrun.sqlite (src/laux/lsqlite.c): connections and statements, values only through bound
-- parameters, every value type there and back, the close paths of liolib.c, errors that name
-- the database (kind io) and misuse (kind script).
local h = require "helper"
local sqlite = require "wlrun.sqlite"
local wl = require "wlrun"

local function fails(kind, text, fn, ...)
  local ok, e = pcall(fn, ...)
  assert.is_false(ok, "expected an error containing: " .. text)
  assert.equal(kind, type(e) == "table" and e.kind or type(e), tostring(e))
  assert.truthy(tostring(e):find(text, 1, true), "expected «" .. text .. "» in: " .. tostring(e))
end

local function fresh()
  local path = h.tmpdir() .. "/t.db"
  local db = sqlite.open(path, { create = true })
  db:exec("CREATE TABLE t (a, b)")
  return db, path
end

describe("wlrun.sqlite", function()
  it("stores every value as it was given, through bound parameters only", function()
    local db <close> = fresh()
    local hostile = "x'); DROP TABLE t; --"
    assert.equal(1, db:run("INSERT INTO t VALUES (?1, ?2)", 1, hostile))
    db:run("INSERT INTO t VALUES (?1, ?2)", 2.5, "a\0b")
    db:run("INSERT INTO t VALUES (?1, ?2)", true, nil)
    db:run("INSERT INTO t VALUES (?1, ?2)", math.maxinteger, 1e-300)
    local rows = db:rows("SELECT a, b FROM t ORDER BY rowid")
    assert.equal(4, #rows)
    assert.equal(1, rows[1].a)
    assert.equal("integer", math.type(rows[1].a))
    assert.equal(hostile, rows[1].b)
    assert.equal(2.5, rows[2].a)
    assert.equal("a\0b", rows[2].b)
    assert.equal(1, rows[3].a) -- a boolean is stored as 0 or 1
    assert.is_nil(rows[3].b)
    assert.equal(math.maxinteger, rows[4].a)
    assert.equal(1e-300, rows[4].b)
    assert.equal(1, db:rows("SELECT count(*) AS n FROM t WHERE b = ?1", hostile)[1].n)
  end)

  it("runs a prepared statement again and again with other values", function()
    local db <close> = fresh()
    local st <close> = db:prepare("INSERT INTO t VALUES (?1, ?2)")
    for i = 1, 100 do assert.equal(1, st:run(i, i * i)) end
    local q = db:prepare("SELECT sum(b) AS s FROM t WHERE a <= ?1")
    assert.equal(385, q:rows(10)[1].s)
    assert.equal(338350, q:rows(100)[1].s)
    q:close()
    assert.equal(100, db:changes() >= 0 and #db:rows("SELECT a FROM t") or 0)
    assert.equal(100, db:last_insert_rowid())
  end)

  it("refuses a value of another type, a wrong count of values and more than one statement",
    function()
    local db <close> = fresh()
    fails("script", "value 2 is a table", db.run, db, "INSERT INTO t VALUES (?1, ?2)", 1, {})
    fails("script", "the statement takes 2 values, got 1", db.run, db,
      "INSERT INTO t VALUES (?1, ?2)", 1)
    fails("script", "one statement expected", db.prepare, db, "SELECT 1; SELECT 2")
    assert.equal(0, #db:rows("SELECT a FROM t"))
  end)

  it("closes once through its method, and any number of times through __gc and __close", function()
    local db, path = fresh()
    local st = db:prepare("SELECT a FROM t")
    db:close()
    fails("script", "db:close: database used after close", db.close, db)
    fails("script", "db:rows: database used after close", db.rows, db, "SELECT 1")
    fails("script", "statement used after its database was closed", st.rows, st)
    local mt = getmetatable(db)
    mt.__gc(db)
    mt.__close(db)
    st:close() -- finalising it lets SQLite free the connection closed before it
    fails("script", "statement used after close", st.rows, st)
    getmetatable(st).__gc(st)
    assert.matches("%(closed%)$", tostring(db))
    local again <close> = sqlite.open(path)
    assert.equal(0, #again:rows("SELECT a FROM t"))
  end)

  it("names the database and gives SQLite's message, kind io", function()
    local dir = h.tmpdir()
    h.write(dir .. "/junk.db", ("not a database "):rep(100))
    local db <close> = sqlite.open(dir .. "/junk.db",
      { label = "my history '" .. dir .. "/junk.db'" })
    fails("io", "my history '" .. dir .. "/junk.db': file is not a database", db.rows, db,
      "PRAGMA user_version")
    fails("io",
      "SQLite database '" .. dir .. "/nowhere/x.db': cannot open: unable to open database file",
      sqlite.open,
      dir .. "/nowhere/x.db", { create = true })
    fails("io", "cannot open", sqlite.open, dir .. "/missing.db") -- not made without create
    local good <close> = fresh()
    fails("io", "no such table: nope", good.rows, good, "SELECT * FROM nope")
  end)

  it("opens read-only, and as immutable", function()
    local db, path = fresh()
    db:run("INSERT INTO t VALUES (1, 2)")
    db:close()
    local ro <close> = sqlite.open(path, { readonly = true })
    assert.is_true(ro:readonly())
    fails("io", "attempt to write a readonly database", ro.run, ro, "INSERT INTO t VALUES (3, 4)")
    local im <close> = sqlite.open(path, { immutable = true })
    assert.equal(1, #im:rows("SELECT a FROM t"))
    local rw <close> = sqlite.open(path)
    assert.is_false(rw:readonly())
  end)

  -- SQLite answers SQLITE_BUSY at once, without the busy handler, to a statement that upgrades
  -- its own read transaction while another connection writes: PRAGMA journal_mode = WAL on a
  -- rollback-journal database is one (parallel `history add` into a new database failed so)
  it("waits, up to its timeout, for a writer before a statement that upgrades its own read",
    function()
    local _, path = fresh()
    local writer <close> = sqlite.open(path)
    writer:exec("BEGIN IMMEDIATE")
    local waiting <close> = sqlite.open(path, { timeout = 0.3 })
    local t0 = wl.clock()
    fails("io", "database is locked", waiting.rows, waiting, "PRAGMA journal_mode = WAL")
    assert.is_true(wl.clock() - t0 >= 0.29, "gave up after " .. (wl.clock() - t0)
      .. " s, not the timeout")
    -- the writer finishes in another process while this one waits
    writer:exec("ROLLBACK")
    writer:close()
    local dir = path:match("^(.*)/")
    h.write(dir .. "/hold.lua", [[
local db = require("wlrun.sqlite").open("t.db")
db:exec("BEGIN IMMEDIATE")
io.open("held", "w"):close()
require("wlrun").sleep(0.5)
db:exec("ROLLBACK")
]])
    assert(os.execute(("cd %s && %s hold.lua >/dev/null 2>&1 &"):format(h.quote(dir),
      h.quote(h.bin))))
    for _ = 1, 500 do
      if io.open(dir .. "/held") then break end
      wl.sleep(0.01)
    end
    local patient <close> = sqlite.open(path, { timeout = 30 })
    assert.equal("wal", patient:rows("PRAGMA journal_mode = WAL")[1].journal_mode)
  end)

  it("does not load extensions nor trust the functions in a file's schema", function()
    local db <close> = fresh()
    fails("io", "not authorized", db.rows, db, "SELECT load_extension('/nonexistent')")
  end)

  it("checks its options", function()
    assert.has_error(function() sqlite.open("x.db", { timeout = "long" }) end)
    assert.has_error(function() sqlite.open("x.db", { label = {} }) end)
    assert.has_error(function() sqlite.open("a\0b") end)
    assert.matches("^3%.", sqlite.version)
  end)
end)
