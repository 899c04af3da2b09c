-- The plan of a run (wlrun.run.plan): a pure list of configurations from the sweep, the shard and
-- --resume; it runs nothing and touches no device.
local h = require "helper"
local wl = require "wlrun"
local plan = require "wlrun.run.plan"
local results = require "wlrun.results"

local function scenario()
  return wl.scenario { name = "p", params = { n = { 1, 2, 3, 4, 5, 6 }, v = { "a", "b" } },
    run = function() end }
end

local function cli(t)
  t = t or {}
  t.params = t.params or {}
  return t
end

describe("plan.build", function()
  it("lists the space in order, each configuration with its index and key", function()
    local p = plan.build(scenario(), "s.lua", cli())
    assert.equal(12, #p.list)
    assert.same(p.list, p.todo)
    assert.same({ "n", "v" }, p.axes)
    assert.same({ n = 1, v = "b" }, p.list[2].params)
    assert.equal(results.key { n = 1, v = "b" }, p.list[2].key)
    assert.is_nil(next(p.resumed))
  end)

  it("applies -p and --filter before the shard, keeping the space's indices", function()
    local p = plan.build(scenario(), "s.lua", cli { params = { { name = "v", values = { "a" } } },
      filter = "n > 2",
      shard = { k = 2, n = 2 } })
    assert.equal(4, #p.space)
    assert.equal(2, #p.list)
    assert.same({ 2, 4 }, { p.list[1].index, p.list[2].index })
    assert.equal(2, p.shard.k)
    assert.matches("shard 2/2 %(from %-%-shard%): 2 of 4", p.notes[1])
    assert.same(p.list[2], plan.find(p, 4))
  end)

  it("takes what --resume's file finished, and runs failed ones again", function()
    local dir = h.tmpdir()
    local script = h.write(dir .. "/s.lua", "return 1")
    local doc = { schema = "wlrun-results", version = 1, complete = false,
      scenario = { name = "p", hash = require("wlrun.process").hash("return 1") },
      configurations = {
        { index = 1, params = { n = 1, v = "a" }, status = "ok", samples = { 1.0 } },
        { index = 2, params = { n = 1, v = "b" }, status = "failed", error = "x" },
        { index = 7, params = { n = 4, v = "a" }, status = "skipped", reason = "y" },
      } }
    h.write(dir .. "/old.json", results.render(doc))
    local p = plan.build(scenario(), script, cli { resume = dir .. "/old.json" })
    assert.equal(10, #p.todo)
    assert.equal("ok", p.resumed[1].status)
    assert.equal("skipped", p.resumed[7].status)
    assert.is_nil(p.resumed[2])
    assert.same({}, p.notes) -- same script: no warning
  end)

  it("takes a compiled entry as finished under --compile-only alone", function()
    local dir = h.tmpdir()
    local script = h.write(dir .. "/s.lua", "return 1")
    local doc = { schema = "wlrun-results", version = 1, complete = false, compile_only = true,
      scenario = { name = "p", hash = require("wlrun.process").hash("return 1") },
      configurations = { { index = 1, params = { n = 1, v = "a" }, status = "compiled" } } }
    h.write(dir .. "/old.json", results.render(doc))
    local p = plan.build(scenario(), script, cli { resume = dir .. "/old.json",
      compile_only = true })
    assert.equal(11, #p.todo)
    assert.equal("compiled", p.resumed[1].status)
    -- a measuring run: compiling measured nothing, so the configuration runs
    p = plan.build(scenario(), script, cli { resume = dir .. "/old.json" })
    assert.equal(12, #p.todo)
    assert.is_nil(p.resumed[1])
    assert.equal(0, p.resume_outside)
  end)

  it("refuses a --resume file of another scenario or version before anything runs", function()
    local dir = h.tmpdir()
    h.write(dir .. "/old.json", results.render { schema = "wlrun-results", version = 1,
      scenario = { name = "q" },
      configurations = {} })
    local ok, e = pcall(plan.build, scenario(), "s.lua", cli { resume = dir .. "/old.json" })
    assert.is_false(ok)
    assert.matches("its scenario is 'q', this one is 'p'", e.message)
    h.write(dir .. "/v.json", '{"schema":"wlrun-results","version":99,"configurations":[]}')
    ok, e = pcall(plan.build, scenario(), "s.lua", cli { resume = dir .. "/v.json" })
    assert.is_false(ok)
    assert.matches("^%-%-resume: '.*v.json': wlrun%-results version 99 is not supported", e.message)
  end)
end)
