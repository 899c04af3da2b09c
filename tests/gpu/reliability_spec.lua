-- GPU specs of reliability: a faulting and a hanging configuration do not cost the others;
-- --resume skips what a results file already holds.
local h = require "helper"

local SCENARIO = [[
local wl = require "wlrun"
local src = [=[
extern "C" __global__ void good(float* p) { p[threadIdx.x] = 1.0f; }
extern "C" __global__ void fault(float* p) { float* bad = (float*)0x10; bad[threadIdx.x] = 1.0f; p[0] = 0; }
// spins until p[1] becomes nonzero, which nothing does: an infinite loop with no UB to remove it
extern "C" __global__ void hang(float* p) { while (((volatile float*)p)[1] == 0.0f) { } p[0] = 0; }
]=]
return wl.scenario {
  name = "reliability",
  params = { case = CASES },
  timing = { warmup = 2, iters = 5 },
  setup = function(p)
    local s = { t = wl.tensor { 32 } }
    local name = p.case:match("^ok") and "good" or p.case
    s.launch = wl.kernel { src, name = name }:bind { grid = 1, block = 32, args = { s.t } }
    return s
  end,
  run = "launch",
}
]]

local function run(cases, args, dir)
  dir = dir or h.tmpdir()
  local script = ("CASES = { %s }\n"):format(cases) .. SCENARIO
  local r = h.run_script(script, "--no-progress -o " .. dir .. "/out.json " .. (args or ""),
    { cwd = dir })
  local f = io.open(dir .. "/out.json")
  local doc = f and require("wlrun.results").decode(f:read("a"), "out.json")
  if f then f:close() end
  return r, doc, dir
end

local function statuses(doc)
  local t = {}
  for _, c in ipairs(doc.configurations) do t[#t + 1] = c.params.case .. "=" .. c.status end
  return table.concat(t, " ")
end

describe("reliability", function()
  h.gpu_it("a faulting and a hanging configuration fail alone under --config-timeout", function()
    local r, doc = run('"ok1", "fault", "ok2", "hang", "ok3"', "--config-timeout 5s")
    assert.equal(5, r.code, r.stderr)
    assert.equal("ok1=ok fault=failed ok2=ok hang=failed ok3=ok", statuses(doc))
    local fault, hang = doc.configurations[2], doc.configurations[4]
    print("\n    fault: " .. fault.error:gsub("\n", " ") .. "\n    hang: "
      .. hang.error:gsub("\n", " "))
    assert.equal("cuda", fault.kind)
    assert.matches("cudaErrorIllegalAddress", fault.error)
    assert.matches("fault", fault.error)
    assert.equal("timeout", hang.kind)
    assert.matches("config%-timeout", hang.error)
    assert.matches("2 of 5 configurations failed", r.stderr)
  end)

  h.gpu_it("after a fault in-process, the rest of the sweep runs in child processes", function()
    local r, doc = run('"ok1", "fault", "ok2", "ok3"')
    assert.equal(5, r.code, r.stderr)
    assert.matches("the CUDA context is lost after configuration 2", r.stderr)
    assert.equal("ok1=ok fault=failed ok2=ok ok3=ok", statuses(doc))
    assert.is_true(doc.configurations[3].isolated)
  end)

  h.gpu_it("--resume skips the configurations a results file finished", function()
    local r, doc, dir = run('"ok1", "ok2", "ok3"')
    assert.equal(0, r.code, r.stderr)
    -- keep the first two only, as an interrupted run would have
    doc.configurations[3] = nil
    doc.complete = false
    local f = assert(io.open(dir .. "/partial.json", "w"))
    f:write(require("wlrun.results").render(doc))
    f:close()
    local r2, doc2 = run('"ok1", "ok2", "ok3"', "--resume " .. dir .. "/partial.json", dir)
    assert.equal(0, r2.code, r2.stderr)
    assert.equal("ok1=ok ok2=ok ok3=ok", statuses(doc2))
    assert.is_true(doc2.configurations[1].resumed)
    assert.is_true(doc2.configurations[2].resumed)
    assert.is_nil(doc2.configurations[3].resumed)
  end)
end)
