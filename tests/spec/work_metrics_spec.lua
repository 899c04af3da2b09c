-- What work(p) may return beyond flops and bytes (docs/scenarios.md, "Work, peaks and a
-- baseline"): reads and writes, items, custom metrics; checked strictly (wlrun.results.work),
-- kept in the entry, checked again by the loader, shown by the printers and compared
-- (wlrun.compare.metrics) — on the fixtures tests/fixtures/results/metrics-*.json.
local h = require "helper"
local results = require "wlrun.results"
local load = require "wlrun.results.load"
local work = require "wlrun.results.work"

local report
do -- the host's searcher may not map a package to its init.lua: then load it by its file name
  local ok, r = pcall(require, "wlrun.report")
  report = ok and r or require "wlrun.report.init"
end

local fixtures = h.source_dir .. "/tests/fixtures/results/"
local device = { name = "NVIDIA H200", arch = "sm_90", sm_count = 132, peak_bandwidth = 4.8e12,
  peak_fp32_flops = 6.7e13 }

local function entry_of(w, median)
  local e = results.entry { index = 1, params = { n = 1 } }
  -- a stats block is kept with the samples it summarises (the strict loader checks them)
  e.status, e.stats, e.samples = "ok", { median = median or 1e-3 }, { median or 1e-3 }
  results.record_work(e, w, device, "s.lua:7")
  return e
end

local function refused(w, text)
  local ok, e = pcall(work.check, w, "scenarios/x.lua:12")
  assert.is_false(ok, "accepted: " .. text)
  assert.equal("script", e.kind)
  assert.truthy(e.message:find("scenarios/x.lua:12: ", 1, true), e.message)
  assert.truthy(e.message:find(text, 1, true), ("expected «%s» in: %s"):format(text, e.message))
end

describe("work(p): reads, writes and items", function()
  it("makes bytes the sum of reads and writes, and keeps both", function()
    local e = entry_of { reads = 8e6, writes = 4e6, items = 1024 }
    assert.same({ bytes = 12e6, reads = 8e6, writes = 4e6, items = 1024 }, e.work)
    assert.equal(12e9, e.metrics.bytes_per_s)
    assert.near(12e9 / 4.8e12, e.metrics.peak_bandwidth_fraction, 1e-15)
    assert.equal(1024e3, e.metrics.items_per_s)
    assert.is_nil(e.custom_metrics)
  end)

  it("takes bytes given with reads and writes when it is their sum", function()
    local e = entry_of { bytes = 12, reads = 8, writes = 4, flops = 2 }
    assert.equal(12, e.work.bytes)
    assert.equal(2e3, e.metrics.flop_per_s)
    entry_of { bytes = 0.3, reads = 0.1, writes = 0.2 } -- within rounding
  end)

  it("refuses bytes that are not reads + writes, and reads without writes", function()
    refused({ bytes = 13, reads = 8, writes = 4 },
      "work(p).bytes (13) is not reads + writes (8 + 4 = 12)")
    refused({ reads = 8 }, "work(p) gives reads without writes: give both (0 where none)")
    refused({ writes = 8, bytes = 8 }, "work(p) gives writes without reads")
  end)

  it("refuses amounts that are not finite numbers >= 0, and fields it does not know", function()
    for _, k in ipairs { "reads", "writes", "items" } do
      for _, bad in ipairs { -1, 0 / 0, math.huge, "4", true } do
        local w = { reads = 1, writes = 1 }
        w[k] = bad
        refused(w, ("work(p).%s must be a finite number >= 0, got %s"):format(k, tostring(bad)))
      end
    end
    refused({ flops = 1, item = 3 },
      "work(p) returned an unknown field 'item' (fields: flops, bytes, reads, writes, items, "
      .. "dtype, metrics)")
    refused({ [1] = 3 }, "unknown field '1'")
    refused("x", "work(p) must return a table")
  end)
end)

describe("work(p): custom metrics", function()
  it("reports a rate per second and the value per run, or the value alone with rate = false",
    function()
    local e = entry_of({ items = 2, metrics = { tokens = { value = 4096, unit = "tok" },
      acc = { value = -0.5, rate = false },
      steps = { value = 3, rate = true } } }, 2e-3)
    assert.same({ tokens = { value = 4096, unit = "tok", per_s = 2048e3 }, acc = { value = -0.5 },
      steps = { value = 3, per_s = 1500 } }, e.custom_metrics)
    assert.equal(1e3, e.metrics.items_per_s)
  end)

  it("refuses names, values, units and fields that are wrong, naming the metric", function()
    refused({ metrics = 3 },
      "work(p).metrics must be a table {name = {value =, unit =}, ...}, got a number")
    refused({ metrics = { { value = 1 } } },
      "work(p).metrics: a name must be a string, got the number 1")
    refused({ metrics = { ["tok/s"] = { value = 1 } } }, "the name 'tok/s' is not a name")
    refused({ metrics = { ["1x"] = { value = 1 } } }, "the name '1x' is not a name")
    refused({ metrics = { [("a"):rep(33)] = { value = 1 } } }, "is longer than 32 characters")
    refused({ metrics = { t = 5 } },
      "work(p).metrics.t must be a table {value =, unit =, rate =}, got a number")
    refused({ metrics = { t = { value = 1, units = "x" } } },
      "work(p).metrics.t has an unknown field 'units' (fields: value, unit, rate)")
    refused({ metrics = { t = {} } }, "work(p).metrics.t.value must be a finite number, got nil")
    refused({ metrics = { t = { value = 0 / 0 } } },
      "work(p).metrics.t.value must be a finite number")
    refused({ metrics = { t = { value = math.huge, rate = false } } },
      "work(p).metrics.t.value must be a finite number, got inf")
    refused({ metrics = { t = { value = -1 } } },
      "work(p).metrics.t.value is an amount per run of the work (reported per second): >= 0")
    refused({ metrics = { t = { value = 1, rate = "yes" } } },
      "work(p).metrics.t.rate must be true or false, got a string")
    refused({ metrics = { t = { value = 1, unit = "" } } },
      "work(p).metrics.t.unit: a unit has 1 to 16 characters, got 0")
    refused({ metrics = { t = { value = 1, unit = ("u"):rep(17) } } },
      "a unit has 1 to 16 characters, got 17")
    refused({ metrics = { t = { value = 1, unit = "a\27[2J" } } },
      "a unit is printable ASCII text (no control characters)")
    refused({ metrics = { t = { value = 1, unit = 3 } } }, "a unit must be a string, got a number")
    local many = {}
    for i = 1, 17 do many["m" .. i] = { value = i } end
    refused({ metrics = many }, "work(p).metrics has 17 metrics; at most 16")
  end)
end)

describe("an entry with the new work and metrics", function()
  local function doc_of(entry)
    return { schema = "wlrun-results", version = 1, complete = true, configurations = { entry } }
  end

  it("reads back through the strict loader as it was written", function()
    local e = entry_of({ reads = 8, writes = 4, items = 3,
      metrics = { tokens = { value = 4096, unit = "tok" },
      acc = { value = 0.99, rate = false } } })
    local back = load.decode(results.encode(doc_of(e)), "r.json")
    assert.same(e, back.configurations[1])
  end)

  it("is refused by the loader where custom_metrics is hostile, naming the path", function()
    for _, case in ipairs {
      { '[1, 2]', "configurations[1].custom_metrics: a name must be a string" },
      { '{"t": 3}', "configurations[1].custom_metrics.t is a number, not an object" },
      { '{"t": {"unit": "x"}}', "configurations[1].custom_metrics.t.value is not a finite number" },
      { '{"t": {"value": "1"}}',
        "configurations[1].custom_metrics.t.value is not a finite number" },
      { '{"t": {"value": 1, "per_s": "fast"}}',
        "configurations[1].custom_metrics.t.per_s is not a finite number" },
      { '{"t": {"value": 1, "unit": "\\u001b[2J"}}',
        "configurations[1].custom_metrics.t.unit: a unit is printable ASCII" },
      { '{"a b": {"value": 1}}', "configurations[1].custom_metrics: the name 'a b' is not a name" },
      { '"x"', "configurations[1].custom_metrics is a string, not an object" },
    } do
      local text = (
        '{"schema": "wlrun-results", "version": 1, "configurations": [{"index": 1, "params": '
        .. '{}, "custom_metrics": %s}]}')
        :format(case[1])
      local ok, e = pcall(load.decode, text, "r.json")
      assert.is_false(ok, case[1])
      assert.truthy(tostring(e.message or e):find(case[2], 1, true),
        ("expected «%s» in: %s"):format(case[2], tostring(e.message or e)))
    end
  end)
end)

describe("the printers of a document with the new metrics", function()
  local doc = load.load(fixtures .. "metrics-base.json")

  it("table and Markdown: a column for items/s and for each custom metric", function()
    local t = report.render(doc, "table")
    assert.matches("items/s +%% peak BW +accuracy +tokens/s", t)
    assert.matches("1%.024 M/s +0%.25%% +99%.1 %% +4%.096 Mtok/s", t)
    local md = report.render(doc, "markdown")
    assert.truthy(md:find("|   items/s | % peak BW | accuracy |     tokens/s |", 1, true), md)
  end)

  it("CSV: reads, writes, items, items_per_s and three columns per custom metric", function()
    local lines = {}
    for l in report.render(doc, "csv"):gmatch("[^\r\n]+") do lines[#lines + 1] = l end
    assert.matches(
      ",samples_per_s,reads,writes,items,items_per_s,metric%.accuracy,metric%.accuracy%.unit,"
        .. "metric%.accuracy%.per_s,metric%.tokens,metric%.tokens%.unit,metric%.tokens%.per_s,"
        .. "registers,", lines[1])
    assert.matches(",8000000,4000000,1024,1024000,99%.1,%%,,4096,tok,4096000,", lines[2])
  end)

  it("CSV: a parameter named like a new column is headed param.NAME", function()
    local d = load.load(fixtures .. "metrics-base.json")
    d.scenario.axes = { "items" }
    for _, c in ipairs(d.configurations) do c.params = { items = c.params.n } end
    assert.matches("^index,param%.items,status,", report.render(d, "csv"))
  end)

  it("plain: a line for items and one per custom metric", function()
    local p = report.render(doc, "plain")
    assert.matches("Items: 1%.024 M/s\nMetric accuracy: 99%.1 %%\nMetric tokens: 4%.096 Mtok/s", p)
  end)

  it("a document without them prints as before", function()
    local sample = dofile(h.source_dir .. "/tests/fixtures/results/sample.lua")
    assert.is_nil(report.render(sample, "csv"):find("items_per_s", 1, true))
  end)
end)

describe("wlrun.compare.metrics", function()
  local cm = require "wlrun.compare.metrics"

  it("gives NEW/BASE of items/s and of each custom metric both have, with the same unit", function()
    local b = { metrics = { items_per_s = 100, flop_per_s = 1 },
      custom_metrics = { tok = { value = 4, unit = "t", per_s = 40 },
      acc = { value = 0.5 }, only = { value = 1, per_s = 1 },
        u = { value = 1, unit = "a", per_s = 1 } } }
    local n = { metrics = { items_per_s = 150 },
      custom_metrics = { tok = { value = 8, unit = "t", per_s = 80 },
      acc = { value = 0.25 }, u = { value = 1, unit = "b", per_s = 1 } } }
    local list = cm.of(b, n)
    assert.equal(3, #list)
    assert.same({ "acc", "items/s", "tok/s" }, { list[1].name, list[2].name, list[3].name })
    assert.same({ 0.5, 0.25, 0.5, "" }, { list[1].base, list[1].new, list[1].ratio, list[1].unit })
    assert.same({ 100, 150, 1.5, "/s" }, { list[2].base, list[2].new, list[2].ratio, list[2].unit })
    assert.same({ 40, 80, 2, "t/s" }, { list[3].base, list[3].new, list[3].ratio, list[3].unit })
    assert.is_nil(cm.of({ metrics = { flop_per_s = 1 } }, { metrics = { flop_per_s = 2 } }))
  end)
end)
