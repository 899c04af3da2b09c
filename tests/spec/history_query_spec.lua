-- What the history stores of a results document and how it reads it back
-- (lua/wlrun/history/record.lua, query.lua, select.lua): the canonical parameters, the run's
-- identity, the summary, the commit a document records; the series in the order of the runs'
-- times, by commit; the selection by -p and --filter; a corrupt row refused with the file.
local h = require "helper"
local F = require "history_fixtures"
local record = require "wlrun.history.record"
local query = require "wlrun.history.query"
local select = require "wlrun.history.select"
local store = require "wlrun.history.store"
local load = require "wlrun.results.load"

local function fails(kind, text, fn, ...)
  local ok, e = pcall(fn, ...)
  assert.is_false(ok, "expected an error containing: " .. text)
  assert.equal(kind, type(e) == "table" and e.kind or type(e), tostring(e))
  assert.truthy(tostring(e):find(text, 1, true), "expected «" .. text .. "» in: " .. tostring(e))
end

local function doc(o) return load.decode(F.document(o), "fixture") end

-- a database holding the runs given as {started, commit, dirty, medians = {n = median}}
local function history(runs)
  local path = h.tmpdir() .. "/h.db"
  local db = store.open_writer(path, "--db")
  for i, r in ipairs(runs) do
    local configs = {}
    for n, m in pairs(r.medians) do configs[#configs + 1] = { params = { n = n },
      samples = F.samples(m, 9, 0.01, i) } end
    table.sort(configs, function(a, b) return a.params.n < b.params.n end)
    local run = record.run(doc { started = r.started, configs = configs }, "r" .. i .. ".json")
    store.transaction(db, function() record.insert(db, run,
      { commit = r.commit, dirty = r.dirty or false, source = "option" }) end)
  end
  return db, path
end

describe("a run as the history records it", function()
  it("keys a configuration by its parameters as canonical JSON", function()
    assert.equal('{"M":1,"a":"x","k":2.0,"z":true}',
      record.params_json { z = true, k = 2.0, M = 1, a = "x" })
    assert.are_not.equal(record.params_json { n = 1024 }, record.params_json { n = 1024.0 })
    assert.equal("{}", record.params_json {})
  end)

  it("summarises each measured configuration from its samples and leaves out the others", function()
    local d = doc { started = "2026-02-03T04:05:06Z", configs = {
      { params = { n = 1 }, samples = { 3.0, 1.0, 2.0 } },
      { params = { n = 2 }, status = "failed" },
      { params = { n = 1 }, samples = { 9.0 } }, -- the same parameters again
    } }
    local run, left = record.run(d, "x.json")
    assert.equal(2, left)
    assert.equal(1, #run.configurations)
    local c = run.configurations[1]
    assert.same({ 3, 2.0, 2.0, 1.0, 3.0, 1.0 }, { c.n, c.median, c.mean, c.min, c.max, c.stddev })
    assert.equal("[3.0,1.0,2.0]", c.samples)
    assert.equal("s", c.unit)
    assert.equal("2026-02-03T04:05:06Z", run.time)
    assert.same({ "spin", "NVIDIA H200", "x.json" }, { run.scenario, run.device, run.file })
  end)

  it("gives the same run the same identity whatever the file's layout, and another run another",
    function()
    local text = F.document { configs = { { params = { n = 1 }, samples = { 1.0, 2.0 } } } }
    local a = record.run(load.decode(text, "a"), "a.json")
    local b = record.run(load.decode(text:gsub("\n%s*", ""), "b"), "b.json") -- one line
    assert.equal(a.identity, b.identity)
    local c = record.run(doc { configs = { { params = { n = 1 }, samples = { 1.0, 2.5 } } } },
      "c.json")
    assert.are_not.equal(a.identity, c.identity)
  end)

  it("takes a commit the document records, checked, and a time stamp only in its form", function()
    local d = doc { configs = {}, provenance = { commit = "ABCDEF1234", dirty = true } }
    assert.same({ commit = "abcdef1234", dirty = true, source = "document" },
      record.document_commit(d))
    assert.same({ commit = "abcdef1234567", dirty = false, source = "document" },
      record.document_commit(doc { configs = {}, provenance = {
        git = { commit = "abcdef1234567" } } }))
    for _, bad in ipairs { { commit = "not hex!" }, { commit = 12345678 }, { commit = "abc" } } do
      assert.is_nil(record.document_commit(doc { configs = {}, provenance = bad }))
    end
    -- the loader refuses it
    assert.is_nil(record.document_commit { provenance = "text", configurations = {} })
    -- what a run of wlrun writes
    assert.same({ commit = "abcdef1234567", dirty = true, source = "document", branch = "main" },
      record.document_commit(doc { configs = {}, provenance = {
        git = { commit = "abcdef1234567", dirty = true,
        branch = "main" }, host = "h" } }))
    assert.same({ commit = "v1.2", dirty = false, source = "option" }, record.commit(d, "v1.2"))
    fails("usage", "is 'yesterday', not a time stamp", doc, { started = "yesterday", configs = {} })
    -- the loader refuses it; a document that did not come through the loader gets the time of
    -- reading
    local odd = record.run(require("wlrun.json").decode(
      F.document { started = "yesterday", configs = {} }), "x")
    assert.matches("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ$", odd.time)
  end)

  it("stores a run once: the second insert finds the first", function()
    local db <close> = store.open_writer(h.tmpdir() .. "/h.db", "--db")
    local run = record.run(doc { configs = { { params = { n = 1 }, samples = { 1.0 } } } },
      "a.json")
    local first, second
    store.transaction(db, function() first = record.insert(db, run,
      { commit = "aaa", dirty = false, source = "git" }) end)
    store.transaction(db, function() second = record.insert(db, run,
      { commit = "bbb", dirty = false, source = "git" }) end)
    assert.is_true(first.added)
    assert.is_false(second.added)
    assert.equal(first.id, second.id)
    assert.equal("aaa", second.commit)
    assert.equal(1, #db:rows("SELECT id FROM runs"))
  end)
end)

describe("the series", function()
  it("are in the order of the runs' times, whatever the order they were added in", function()
    local db <close> = history {
      { started = F.time(3), commit = "c3", medians = { [1] = 3.0 } },
      { started = F.time(1), commit = "c1", medians = { [1] = 1.0, [2] = 10.0 } },
      { started = F.time(2), commit = "c2", medians = { [1] = 2.0, [2] = 20.0 } },
    }
    local list = query.series(query.rows(db))
    assert.equal(2, #list)
    assert.same({ n = 1 }, list[1].params)
    local commits = {}
    for i, row in ipairs(list[1].rows) do commits[i] = row.commit end
    assert.same({ "c1", "c2", "c3" }, commits)
    assert.equal(2, #list[2].rows)
    local xs = query.samples(db, list[1].rows[1])
    assert.equal(9, #xs)
  end)

  it("group the runs of one commit into one point, its median the median of theirs", function()
    local db <close> = history {
      { started = F.time(1), commit = "a", medians = { [1] = 1.0 } },
      { started = F.time(2), commit = "a", medians = { [1] = 3.0 } },
      { started = F.time(3), commit = "a", dirty = true, medians = { [1] = 5.0 } },
      { started = F.time(4), commit = "b", medians = { [1] = 7.0 } },
      { started = F.time(5), commit = "", medians = { [1] = 8.0 } },
      { started = F.time(6), commit = "", medians = { [1] = 9.0 } },
    }
    local points = query.commits(query.series(query.rows(db))[1])
    assert.equal(5, #points)
    assert.same({ "a", false, 2 }, { points[1].commit, points[1].dirty, #points[1].rows })
    assert.is_true(math.abs(points[1].median - 2.0) < 0.05)
    assert.same({ "a", true }, { points[2].commit, points[2].dirty })
    assert.same({ "", "" }, { points[4].commit, points[5].commit }) -- no commit known: a point each
  end)

  it("are selected by scenario, -p and --filter", function()
    local db <close> = history {
      { started = F.time(1), commit = "a", medians = { [1] = 1.0, [2] = 2.0, [3] = 3.0 } },
    }
    local function ns(sel)
      local out = {}
      for _, r in ipairs(query.rows(db, sel)) do out[#out + 1] = r.param_values.n end
      return out
    end
    assert.same({ 1, 2, 3 }, ns {})
    assert.same({}, ns { scenario = "other" })
    assert.same({ 1, 3 }, ns { keep = select.selector({ "n=1,3.0" }) })
    assert.same({ 2, 3 }, ns { keep = select.selector(nil, "n >= 2") })
    assert.same({}, ns { keep = select.selector({ "m=1" }) })
    local keep, finish = select.selector(nil, "m > 1")
    ns { keep = keep }
    fails("usage", "--filter 'm > 1': no parameter 'm'", finish)
    fails("usage", "-p 'n': expected NAME=VALUE", select.selector, { "n" })
    fails("usage", "-p 'n=': no value after '='", select.selector, { "n=" })
  end)

  it("refuse a row that is not what wlrun writes, naming the database", function()
    local db, path = history { { started = F.time(1), commit = "a", medians = { [1] = 1.0 } } }
    db:run("UPDATE results SET params = ?1", "[1,2]")
    fails("io",
      "history: database '" .. path .. "': run 1: parameters that are not a JSON object of values",
      query.rows, db)
    db:run("UPDATE results SET params = ?1, median = ?2", '{"n":1}', "text")
    fails("io", 'run 1 ({"n":1}): a median that is not a time of 0 to a year: text', query.rows,
      db)
    db:run("UPDATE results SET median = 1.0, samples = ?1", "[1,null]")
    local row = query.rows(db)[1]
    fails("io", 'run 1 ({"n":1}): samples that are not a JSON array of times of 0 to a year',
      query.samples, db, row)
    db:close()
  end)
end)
