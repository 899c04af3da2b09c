-- End-to-end, no device needed: work(p)'s reads, writes, items and custom metrics
-- (docs/scenarios.md) checked under --compile-only, naming the work function's file:line; the
-- recorded fixtures tests/fixtures/results/metrics-{base,new}.json printed, compared (NEW/BASE
-- of each metric, docs/compare.md), put on the HTML page; a hostile document refused (exit 2).
local h = require "helper"
local json = require "wlrun.json"

local F = h.source_dir .. "/tests/fixtures/results/"
local base, new = h.quote(F .. "metrics-base.json"), h.quote(F .. "metrics-new.json")

local function scenario(work)
  return ([[
local wl = require "wlrun"
return wl.scenario {
  name = "w", params = { n = { 1, 2 } },
  run = function() end,
  work = function(p)
    return %s
  end,
}
]]):format(work)
end

describe("work(p) under --compile-only", function()
  it("takes reads, writes, items and custom metrics", function()
    local r = h.run_script(scenario([[{ reads = 8 * p.n, writes = 4 * p.n, bytes = 12 * p.n, items = p.n,
      metrics = { tokens = { value = 128, unit = "tok" }, acc = { value = 0.5, rate = false } } }]]), -- luacheck: ignore 631
      "--compile-only --arch sm_90 --format json")
    assert.equal(0, r.code, r.stderr)
    local doc = json.decode(r.stdout)
    assert.equal("compiled", doc.configurations[2].status)
  end)

  it("fails each configuration with what is wrong and where work is written (exit 1)", function()
    for _, case in ipairs {
      { "{ reads = 8, writes = 4, bytes = 13 }",
        "work(p).bytes (13) is not reads + writes (8 + 4 = 12)" },
      { "{ items = -1 }", "work(p).items must be a finite number >= 0, got -1" },
      { "{ metrics = { tokens = { value = 1, units = 'tok' } } }",
        "work(p).metrics.tokens has an unknown field 'units'" },
      { "{ metrics = { ['tok/s'] = { value = 1 } } }",
        "work(p).metrics: the name 'tok/s' is not a name" },
      { "{ item = 1 }", "work(p) returned an unknown field 'item'" },
    } do
      local r, path = h.run_script(scenario(case[1]), "--compile-only --arch sm_90")
      assert.equal(1, r.code, case[1] .. ": " .. r.stderr)
      assert.truthy(r.stderr:find(path .. ":5: " .. case[2], 1, true),
        ("expected «%s:5: %s» in: %s"):format(path, case[2], r.stderr))
      assert.matches("2 of 2 configurations failed", r.stderr)
    end
  end)
end)

describe("a document with the new metrics", function()
  it("prints them in every format", function()
    local r = h.run("merge " .. base .. " --format table -q")
    assert.equal(0, r.code, r.stderr)
    assert.matches("items/s +%% peak BW +accuracy +tokens/s", r.stdout)
    r = h.run("merge " .. base .. " --format csv -q")
    assert.equal(0, r.code, r.stderr)
    assert.matches("reads,writes,items,items_per_s,metric%.accuracy,", r.stdout)
    r = h.run("merge " .. base .. " --format json -q")
    assert.equal(0, r.code, r.stderr)
    local c = json.decode(r.stdout).configurations[1]
    assert.same({ value = 4096, unit = "tok", per_s = 4096000 }, c.custom_metrics.tokens)
    assert.equal(1024000, c.metrics.items_per_s)
  end)

  it("is compared metric by metric: NEW/BASE in the table, Markdown and JSON", function()
    local r = h.run("compare " .. base .. " " .. new)
    assert.equal(0, r.code, r.stderr)
    assert.matches(
      "Work metrics %(NEW/BASE%):\n  n=1: accuracy 99%.1 %% %-> 99%.3 %% %(NEW/BASE 1%.002%)\n"
      .. "  n=1: items/s 1%.024 M/s %-> 1%.28 M/s %(NEW/BASE 1%.250%)\n", r.stdout)
    assert.matches("  n=2: tokens/s 4%.096 Mtok/s %-> 8%.192 Mtok/s %(NEW/BASE 2%.000%)\n",
      r.stdout)
    r = h.run("compare " .. base .. " " .. new .. " --format markdown")
    assert.matches("### Work metrics %(NEW/BASE%)\n\n%- n=1: accuracy", r.stdout)
    r = h.run("compare " .. base .. " " .. new .. " --format json")
    local doc = json.decode(r.stdout)
    local m = doc.configurations[2].metrics
    assert.same({ "accuracy", "items/s", "tokens/s" }, { m[1].name, m[2].name, m[3].name })
    assert.equal(2, m[3].ratio)
    assert.equal("tok/s", m[3].unit)
  end)

  it("leaves compare's output of documents without them as it was", function()
    local sample = h.quote(F .. "h200-bandwidth.json")
    local r = h.run("compare " .. sample .. " " .. sample)
    assert.equal(0, r.code, r.stderr)
    assert.is_nil(r.stdout:find("Work metrics", 1, true))
  end)

  it("exports items/s as Google Benchmark's items_per_second", function()
    local r = h.run("export " .. base .. " --format gbench")
    assert.equal(0, r.code, r.stderr)
    local b = json.decode(r.stdout).benchmarks[1]
    assert.equal(1024000, b.items_per_second)
    assert.is_nil(b.items_per_s)
  end)

  it("shows them on the HTML page", function()
    local dir = h.tmpdir()
    local r = h.run("report --html " .. h.quote(dir .. "/page") .. " " .. base .. " " .. new)
    assert.equal(0, r.code, r.stderr)
    local page = h.read(dir .. "/page/index.html")
    assert.truthy(page:find("tokens/s", 1, true))
    assert.truthy(page:find("4.096 Mtok/s", 1, true))
  end)

  it("is refused, naming the path, where its custom metrics are hostile (exit 2)", function()
    local dir = h.tmpdir()
    local text = h.read(F .. "metrics-new.json"):gsub('"unit": "tok"', '"unit": "\\u001b[2J"', 1)
    h.write(dir .. "/bad.json", text)
    local r = h.run("compare " .. base .. " " .. h.quote(dir .. "/bad.json"))
    assert.equal(2, r.code, r.stderr)
    assert.matches(
      "configurations%[1%]%.custom_metrics%.tokens%.unit: a unit is printable ASCII text", r.stderr)
  end)
end)
