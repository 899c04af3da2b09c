-- cupti mode from the command line, without a GPU (docs/measuring.md, "Kernel time through
-- CUPTI"): --mode cupti under --compile-only runs the work's checks and measures nothing, a bad
-- work is refused as in the other modes, and a results file with a hostile breakdown is
-- refused by every tool with exit 2, naming the path.
local h = require "helper"

local SCENARIO = [[
local wl = require "wlrun"
return wl.scenario {
  name = "cupti_co",
  params = { n = { 256, 512 } },
  setup = function(p)
    local k = wl.kernel { 'extern "C" __global__ void add(float* y, int n) { int i = threadIdx.x; if (i < n) y[i] += 1; }', name = "add" }
    local y = wl.tensor { p.n }
    local b = k:bind { grid = 1, block = 256, args = { y, p.n } }
    return { go = function() b() b() end, y = y }
  end,
  run = function(p, s) s.go() end,
}
]]

describe("cupti mode without a GPU", function()
  it("--mode cupti under --compile-only runs each configuration's checks", function()
    local dir = h.tmpdir()
    local r = h.run_script(SCENARIO, "--compile-only --arch sm_90 --mode cupti --no-progress -o "
      .. h.quote(dir .. "/r.json"), { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    local doc = require("wlrun.results.load").load(dir .. "/r.json")
    assert.equal(2, #doc.configurations)
    assert.equal("cupti", doc.settings.run.mode.value or doc.settings.run.mode)
  end)

  it("refuses a work that is none, as the other modes do", function()
    local r = h.run_script([[
local wl = require "wlrun"
wl.bench(42, { mode = "cupti" })
]], "--compile-only")
    assert.equal(1, r.code, r.stderr)
    assert.truthy(
      r.stderr:find(
      "wl.bench: the work must be a bound launch, a wl.graph or a function, got number", 1, true),
      r.stderr)
  end)

  it("raises the error of a function inside the samples, with its line", function()
    local r = h.run_script([[
local wl = require "wlrun"
wl.bench(function() error("boom") end, { mode = "cupti" })
]], "--compile-only")
    assert.equal(1, r.code, r.stderr)
    assert.truthy(r.stderr:find("script.lua:2: boom", 1, true), r.stderr)
  end)

  it("lists cupti among the modes of --mode", function()
    local r = h.run_script("", "--compile-only --mode kupti")
    assert.equal(2, r.code)
    assert.truthy(
      r.stderr:find("--mode: expected one of cold|batch|graph|host|auto|cupti, got 'kupti'", 1,
      true), r.stderr)
  end)

  it("a hostile kernel_times in a results file: exit 2 naming the path", function()
    local dir = h.tmpdir()
    h.write(dir .. "/bad.json",
      '{"schema": "wlrun-results", "version": 1, "complete": true, "configurations": '
      .. '[{"index": 1, "params": {}, "status": "ok", "mode": "cupti", "kernel_times": '
        .. '[{"name": "k", "count": -3, '
      .. '"median": 1e-6, "share": 1}]}]}')
    local r = h.run("export " .. h.quote(dir .. "/bad.json") .. " --format csv")
    assert.equal(2, r.code, r.stderr)
    assert.truthy(r.stderr:find("configurations[1].kernel_times[1].count", 1, true), r.stderr)
  end)
end)
