-- GPU specs of the one-way pipeline (docs/results.md): a 1,000-configuration sweep writes
-- every output for little more than it costs to run it, and a loop's standard output parses in
-- every machine format.
local h = require "helper"
local load = require "wlrun.results.load"

local SWEEP = [[
local wl = require "wlrun"
return wl.scenario {
  name = "many",
  params = { n = wl.range(1, 1000) },
  timing = { mode = "host", warmup = 0, iters = 20 },
  run = function() end,
  work = function(p) return { flops = p.n } end,
}
]]

local LOOP = [[
local wl = require "wlrun"
local k = wl.kernel { 'extern "C" __global__ void k(float* x) { x[threadIdx.x] += 1.0f; }', name = "k" }
return wl.loop {
  name = "tiny_loop", params = { b = { 1, 2 } }, batch_size = 8, iters = 6, warmup = 1,
  setup = function(p) local x = wl.tensor { 32 } return { x = x, go = k:bind { grid = 1, block = 32, args = { x } } } end,
  data = function(i, s) return i end,
  step = function(batch, s) wl.phase("forward", function() s.go() end) end,
}
]]

local function timed(source, args, dir)
  local t0 = require("wlrun").clock()
  local r = h.run_script(source, "--no-progress " .. args, { cwd = dir })
  return r, require("wlrun").clock() - t0
end

describe("the results pipeline", function()
  h.gpu_it("writes a 1,000-configuration sweep's JSON and CSV in under 2 s more than the run alone",
    function()
    local dir = h.tmpdir()
    local bare, t_bare = timed(SWEEP, "-q", dir)
    assert.equal(0, bare.code, bare.stderr)
    local r, t_out = timed(SWEEP, "-q -o " .. h.quote(dir .. "/m.json") .. " -o "
      .. h.quote(dir .. "/m.csv"), dir)
    assert.equal(0, r.code, r.stderr)
    print(
      ("\n    1,000 configurations: %.2f s without outputs, %.2f s with -o m.json -o m.csv "
      .. "(+%.2f s)"):format(
      t_bare, t_out, t_out - t_bare))
    assert.is_true(t_out - t_bare < 2.0, ("outputs cost %.2f s"):format(t_out - t_bare))
    local doc = load.load(dir .. "/m.json")
    assert.equal(1000, #doc.configurations)
    assert.is_true(doc.complete)
    assert.equal(1000, doc.configurations[1000].params.n)
    assert.equal(20, #doc.configurations[1000].samples)
    local _, rows = h.read(dir .. "/m.csv"):gsub("\r\n", "")
    assert.equal(1001, rows)
    assert.is_nil(io.open(dir .. "/m.json.journal"))
  end)

  h.gpu_it("prints a loop's report alone on stdout for json and csv, its iteration lines on stderr",
    function()
    local dir = h.tmpdir()
    local r = h.run_script(LOOP, "--no-progress --format json", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    local doc = load.decode(r.stdout, "stdout")
    assert.equal(2, #doc.configurations)
    assert.equal("loop", doc.configurations[1].mode)
    assert.equal(6, #doc.configurations[1].samples)
    assert.matches("%[0006%]: iter ", r.stderr)
    r = h.run_script(LOOP, "--no-progress --format csv --iters 4", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    assert.matches("^index,b,status", r.stdout)
    assert.not_matches("%[0001%]", r.stdout)
    local _, rows = r.stdout:gsub("\r\n", "")
    assert.equal(3, rows)
    assert.matches("%[0004%]: iter ", r.stderr)
    assert.not_matches("%[0005%]", r.stderr) -- --iters 4 applied
  end)

  h.gpu_it("shows the loop's summary in the table report, the iteration lines before it", function()
    local r = h.run_script(LOOP, "--no-progress", { cwd = h.tmpdir() })
    assert.equal(0, r.code, r.stderr)
    assert.matches("%[0006%]: iter .*#1 tiny_loop: 6 iterations of 8 samples", r.stdout)
    assert.matches("phases %(GPU time per iteration%):\n    forward ", r.stdout)
  end)
end)
