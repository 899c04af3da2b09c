-- cupti mode without a GPU (docs/measuring.md, "Kernel time through CUPTI"): the per-kernel
-- breakdown from gathered launches, the mode among the settings, and the results loader on the
-- breakdown of an entry (a hostile one refused, naming the path).
local kernel_times = require "wlrun.measure.kernel_times"
local results = require "wlrun.results"
local load = require "wlrun.results.load"
local core = require "wlrun.core"

describe("the per-kernel breakdown", function()
  it("gives each kernel, in the order of first launch, its launches per sample, median and share",
    function()
    local list = kernel_times.breakdown {
      samples = 4, order = { "b", "a" },
      durations = { a = { 1e-6, 3e-6, 2e-6, 2e-6 },
        b = { 4e-6, 4e-6, 5e-6, 4e-6, 6e-6, 4e-6, 4e-6, 5e-6 } },
    }
    assert.equal(2, #list)
    assert.equal("b", list[1].name)
    assert.equal(2, list[1].count)
    assert.near(4e-6, list[1].median, 1e-15)
    assert.near(36 / 44, list[1].share, 1e-12)
    assert.equal("a", list[2].name)
    assert.equal(1, list[2].count)
    assert.near(2e-6, list[2].median, 1e-15)
    assert.near(8 / 44, list[2].share, 1e-12)
  end)

  it("leaves a result without cupti chunks as it was", function()
    local r = { notes = {} }
    assert.equal(r, kernel_times.finish(r))
    assert.is_nil(r.kernel_times)
  end)
end)

describe("the cupti mode setting", function()
  it("is one of the modes, and a wrong word lists it", function()
    assert.equal("cupti", (core.setting_value("run", "mode", "cupti")))
    local _, err = core.setting_value("run", "mode", "kupti")
    assert.truthy(err:find("cold|batch|graph|host|auto|cupti", 1, true), err)
  end)
end)

describe("an entry's kernel_times", function()
  local function text(kt)
    return (
      '{"schema": "wlrun-results", "version": 1, "configurations": [{"index": 1, "params": {}, '
      .. '"mode": "cupti", '
      .. '"kernel_times": %s, "span_stats": {"median": 2e-6}}]}'):format(kt)
  end

  it("reads back through the strict loader as it was written", function()
    local doc = { schema = "wlrun-results", version = 1, complete = true, configurations = { {
      index = 1, params = { n = 1 }, status = "ok", mode = "cupti", span_stats = { median = 3e-6 },
      kernel_times = { { name = "void k<float>(float*, int)", count = 2, median = 1e-6,
        share = 0.75 },
        { name = "spin", count = 0.5, median = 2e-6, share = 0.25 } },
    } } }
    local back = load.decode(results.encode(doc), "r.json")
    assert.same(doc.configurations[1], back.configurations[1])
  end)

  it("is refused by the loader where it is hostile, naming the path", function()
    for _, case in ipairs {
      { '{"name": "k"}', "configurations[1].kernel_times is an object, not an array" },
      { '[{"name": 3, "count": 1, "median": 1e-6, "share": 1}]',
        "configurations[1].kernel_times[1].name is a number, not a string" },
      { '[{"name": "k", "count": -1, "median": 1e-6, "share": 1}]',
        "configurations[1].kernel_times[1].count is a number, not a finite number >= 0" },
      { '[{"name": "k", "count": 1, "median": "fast", "share": 1}]',
        "configurations[1].kernel_times[1].median is not a finite number" },
      { '[{"name": "k", "count": 1, "median": 1e-6, "share": [1]}]',
        "configurations[1].kernel_times[1].share is a JSON object or array, not a finite "
        .. "number >= 0" },
      { '["k"]', "configurations[1].kernel_times[1] is a string, not an object" },
    } do
      local ok, e = pcall(load.decode, text(case[1]), "r.json")
      assert.is_false(ok, case[1])
      assert.truthy(tostring(e.message or e):find(case[2], 1, true),
        ("expected «%s» in: %s"):format(case[2], tostring(e.message or e)))
    end
  end)

  it("refuses a hostile span_stats, naming the path", function()
    local bad = text('[]'):gsub('"median": 2e%-6', '"median": "x"')
    local ok, e = pcall(load.decode, bad, "r.json")
    assert.is_false(ok)
    assert.truthy(tostring(e.message or e):find("configurations[1].span_stats.median", 1, true),
      tostring(e.message or e))
  end)
end)
