-- NVTX on a GPU (docs/nvtx.md): real scenarios run under the recorder (tests/nvtx/recorder.c)
-- show the automatic ranges scenario > configuration > setup, check, warmup, measurement,
-- teardown; wl.bench alone shows warmup and measurement; streams get their names.
-- The recorder comes from $WLRUN_NVTX_RECORDER, build-static/ or build/, or is compiled with cc
-- from tests/nvtx/recorder.c (tests/nvtx/record.lua).
local h = require "helper"
local record = require "nvtx.record"

local SRC = [[
extern "C" __global__ void scale(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
]]

local SCENARIO = ([[
local wl = require "wlrun"
local SRC = %q
return wl.scenario {
  name = "nvgpu",
  params = { n = { 1024, 4096 } },
  timing = { warmup = 3, iters = 7 },
  setup = function(p)
    local s = { x = wl.tensor { p.n, init = wl.arange() }, y = wl.tensor { p.n } }
    s.launch = wl.kernel { SRC, name = "scale" }:bind { grid = wl.cdiv(p.n, 256), block = 256,
                                                        args = { s.y, s.x, 2.0, p.n } }
    return s
  end,
  run = "launch",
  check = function(p, s) local y = s.y:to_host() return y[3] == 4, "y[3] = " .. y[3] end,
  teardown = function(p, s) end,
}
]]):format(SRC)

local COLOR = { scenario = "0xFF4E79A7", configuration = "0xFFF28E2B", setup = "0xFF59A14F",
  check = "0xFFB07AA1",
                warmup = "0xFFEDC948", measurement = "0xFFE15759", teardown = "0xFF9C755F" }

local function library()
  local lib, why = record.library()
  assert(lib, why)
end

describe("NVTX on a GPU", function()
  h.gpu_it(
    "a scenario shows scenario > configuration > setup, check, warmup, measurement, teardown",
    function()
    library()
    local r = record.run_script(SCENARIO, "--no-progress")
    assert.equal(0, r.code, r.stderr)
    local tree = record.tree(r, "wlrun")
    assert.equal("scenario nvgpu(config 1: n=1024(setup, check, warmup, measurement, teardown), "
      .. "config 2: n=4096(setup, check, warmup, measurement, teardown))", record.shape(tree))
    assert.equal(COLOR.scenario, tree[1].color)
    for i, c in ipairs(tree[1].children) do
      assert.equal(COLOR.configuration, c.color)
      assert.equal("int64:" .. i, c.payload)
      for _, phase in ipairs(c.children) do
        assert.equal(COLOR[phase.name], phase.color, phase.name)
        assert.equal(phase.name == "measurement" and "int64:7" or "none", phase.payload, phase.name)
      end
    end
    -- every kind's category is named once, before its first range
    local named, by_id = {}, {}
    for _, e in ipairs(r.events) do
      if e.domain == "wlrun" and e.kind == "name_category" then
        assert.is_nil(named[e.name], e.line)
        named[e.name], by_id[e.category] = e.category, e.name
      elseif e.domain == "wlrun" and e.kind == "push" then
        assert.is_not_nil(by_id[e.category], "a range before its category's name: " .. e.line)
      end
    end
    assert.same({ scenario = "1", configuration = "2", setup = "3", check = "4", warmup = "5",
      measurement = "6",
                  teardown = "7" }, named)
  end)

  h.gpu_it("the shipped bandwidth scenario shows its ranges under the recorder", function()
    library()
    local r = record.run("--no-progress -p op=copy,triad -p size_mib=256 --warmup 2 --iters 5 "
      .. h.quote(h.source_dir .. "/scenarios/bandwidth.lua"))
    assert.equal(0, r.code, r.stderr)
    assert.equal(
      "scenario bandwidth(config 1: size_mib=256, op=copy(setup, check, warmup, measurement), "
      .. "config 2: size_mib=256, op=triad(setup, check, warmup, measurement))",
        record.shape(record.tree(r, "wlrun")))
  end)

  h.gpu_it("--nvtx off leaves a real run without automatic ranges", function()
    library()
    local r = record.run_script(SCENARIO, "--no-progress --nvtx off -p n=1024")
    assert.equal(0, r.code, r.stderr)
    assert.same({}, record.lines(r, "wlrun"))
  end)

  h.gpu_it("wl.bench alone shows warmup and measurement; streams are named", function()
    library()
    local r = record.run_script(([[
local wl = require "wlrun"
local x, y = wl.tensor { 4096, init = 1 }, wl.tensor { 4096 }
local launch = wl.kernel { %q, name = "scale" }:bind { grid = 16, block = 256, args = { y, x, 2.0, 4096 } }
local s = wl.stream()
wl.nvtx.name_stream(s, "side stream")
wl.nvtx.name_stream(wl.current_stream(), "wlrun stream")
wl.nvtx.range("user", { color = "blue" }, function()
  local res = wl.bench(launch, { warmup = 2, iters = 5 })
  assert(res.stats.n == 5)
end)
]]):format(SRC))
    assert.equal(0, r.code, r.stderr)
    assert.equal("warmup, measurement", record.shape(record.tree(r, "wlrun")))
    assert.equal("user", record.shape(record.tree(r, "")))
    local streams = {}
    for _, e in ipairs(r.events) do
      if e.kind == "name_stream" then
        assert.is_true(e.handle ~= "(nil)" and e.handle ~= "0x0", e.line)
        streams[#streams + 1] = e.name
      end
    end
    assert.same({ "side stream", "wlrun stream" }, streams)
  end)
end)
