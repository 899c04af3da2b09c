-- End-to-end: bad input named for what it is and where (docs/scenarios.md, docs/results.md):
-- a list of values without a name in params, wl.range given what is not a finite number, a
-- results file whose 'started' is not a real time stamp, whose times measured are negative or
-- disagree with its own stats, or whose loop phase has no share, and a journal without its header
-- line.
local h = require "helper"
local json = require "wlrun.json"
local results = require "wlrun.results"

local q = h.quote

local function dry(params)
  return h.run_script(([[
local wl = require "wlrun"
return wl.scenario { name = "m", params = { %s }, run = function() end }
]]):format(params), "--dry-run")
end

describe("a scenario's parameters", function()
  it("a list of values without a name is shown as what it is, not as an address", function()
    local r = dry("{ 1, 2 }")
    assert.equal(1, r.code)
    assert.matches("not a table at %[1%] %(a list of values needs a name: NAME = {...}%)", r.stderr)
    assert.is_nil(r.stderr:find("table: 0x", 1, true), r.stderr)
    r = dry('"s"')
    assert.matches('not the string "s" at %[1%]', r.stderr)
  end)

  it("wl.range names the argument that is not a finite number, or the order that is wrong",
    function()
    for _, x in ipairs {
      { "wl.range(0/0, 10)", "lo must be a finite number, got nan" },
      { "wl.range(1, 1/0)", "hi must be a finite number, got inf" },
      { "wl.range(1, 10, 0/0)", "step must be a finite number, got nan" },
      { 'wl.range("1", 10)', "lo must be a finite number, got a string" },
      { "wl.range(1, 10, -1)", "step must be > 0, got %-1" },
      { "wl.range(5, 1)", "hi %(1%) is below lo %(5%)" },
    } do
      local r = dry("a = " .. x[1])
      assert.equal(1, r.code, x[1])
      assert.matches("script.lua:2: wl.range%(lo, hi %[, step%]%): " .. x[2], r.stderr)
      assert.is_nil(r.stderr:find("has no values", 1, true), x[1])
    end
  end)
end)

describe("a declaration's mistakes", function()
  it(
    "name the script's line also in `return wl.X{...}`, a tail call that leaves no frame of "
    .. "the script", function()
    for _, x in ipairs {
      { "return wl.loop { setp = function() end }", "wl%.loop: unknown field 'setp'" },
      { "return wl.command { command = { 'true' }, stpe = 'x' }",
        "wl%.command: unknown field 'stpe'" },
      { "return wl.scenario { nme = 'x' }", "wl%.scenario: unknown field 'nme'" },
      { "local s = wl.loop { setp = 1 }\nreturn s", "wl%.loop: unknown field 'setp'" },
    } do
      local r = h.run_script("local wl = require 'wlrun'\n-- a comment\n" .. x[1] .. "\n",
        "--compile-only --arch sm_90")
      assert.equal(1, r.code, x[1])
      assert.matches("^wlrun: [^\n]*script%.lua:3: " .. x[2], r.stderr)
    end
  end)
end)

describe("the strict loader", function()
  local dir, base
  setup(function()
    dir = h.tmpdir()
    base = json.decode(h.read(h.source_dir .. "/tests/fixtures/compare/base.json"))
  end)
  teardown(function() os.execute("rm -rf " .. q(dir)) end)

  local function export(name, doc)
    local path = h.write(dir .. "/" .. name, results.encode(doc) .. "\n")
    return h.run("export " .. q(path) .. " --format table")
  end

  local function copy() return json.decode(results.encode(base)) end

  local function measured(doc)
    for i, c in ipairs(doc.configurations) do
      if c.samples and c.stats then return c, i end
    end
  end

  it("refuses a 'started' or 'finished' that is not a time stamp, naming the file and the field",
    function()
    local doc = copy()
    doc.started = "yesterday"
    local r = export("started.json", doc)
    assert.equal(2, r.code)
    assert.matches(
      "'[^']*started.json' is malformed: started is 'yesterday', not a time stamp like "
      .. "2026%-11%-29T22:31:07Z",
      r.stderr)
    doc = copy()
    doc.finished = 12
    r = export("finished.json", doc)
    assert.equal(2, r.code)
    assert.matches("finished is a number, not a time stamp", r.stderr)
  end)

  it("refuses a negative sample or median, naming the file and the configuration", function()
    local doc = copy()
    local c, i = measured(doc)
    c.samples[2] = -1e-3
    local r = export("sample.json", doc)
    assert.equal(2, r.code)
    assert.matches(
      ("sample.json' is malformed: configurations%%[%d%%].samples%%[2%%] is %%-0.001: a time "
      .. "measured is not negative"):format(i),
      r.stderr)
    doc = copy()
    c, i = measured(doc)
    c.stats.median = -2e-3
    r = export("median.json", doc)
    assert.equal(2, r.code)
    assert.matches(
      ("configurations%%[%d%%].stats.median is %%-0.002: a time measured is not negative"):format(
      i), r.stderr)
  end)

  it("refuses a time stamp that is no real date or time, and takes a leap day", function()
    for _, t in ipairs { "2026-02-31T10:00:00Z", "2026-11-29T99:99:99Z", "2025-02-29T00:00:00Z",
      "2026-13-01T00:00:00Z" } do
      local doc = copy()
      doc.started = t
      local r = export("date.json", doc)
      assert.equal(2, r.code, t)
      assert.matches("started is '" .. t:gsub("%-", "%%-") .. "', not a time stamp like", r.stderr)
    end
    local doc = copy()
    doc.started = "2024-02-29T23:59:60Z"
    assert.equal(0, export("leap.json", doc).code)
  end)

  it("refuses a sample that its own stats disagree with, and a loop phase with no share", function()
    local doc = copy()
    local c, i = measured(doc)
    c.samples[1] = c.samples[1] + 4
    local r = export("edited.json", doc)
    assert.equal(2, r.code)
    assert.matches(
      ("configurations%%[%d%%].stats.%%a+ is [%%d.e-]+ but its samples "
      .. "%%(configurations%%[%d%%].samples%%) give"):format(i, i),
      r.stderr)
    doc = copy()
    c, i = measured(doc)
    c.stats.n = c.stats.n + 1
    r = export("count.json", doc)
    assert.equal(2, r.code)
    assert.matches(
      ("configurations%%[%d%%].stats.n is %%d+ but configurations%%[%d%%].samples holds "
      .. "%%d+ samples"):format(i, i), r.stderr)
    doc = copy()
    c, i = measured(doc)
    c.loop = { batch_size = 8, throughput = 1.0, phases = { { name = "forward", mean = 1e-3 } },
      outside = { mean = 0, share = 0 } }
    r = export("share.json", doc)
    assert.equal(2, r.code)
    assert.matches(("configurations%%[%d%%].loop.phases%%[1%%] has no share"):format(i), r.stderr)
  end)

  it("says that a journal without its header line has none", function()
    local lines = {}
    for _, c in ipairs(base.configurations) do lines[#lines + 1] = results.encode(c, true) end
    local path = h.write(dir .. "/headless.json", table.concat(lines, "\n") .. "\n")
    local r = h.run("export " .. q(path) .. " --format table")
    assert.equal(2, r.code)
    assert.matches("'[^']*headless.json' is not a wlrun journal: it has no header line", r.stderr)
    assert.is_nil(r.stderr:find("end of file expected", 1, true), r.stderr)
    -- two JSON values that are not entries: still the JSON error, with its place
    path = h.write(dir .. "/two.json", '{"a":1}\n{"b":2}\n')
    r = h.run("export " .. q(path) .. " --format table")
    assert.matches("is not valid JSON: line 2, column 1", r.stderr)
  end)
end)
