-- Benchmark scenario (not a test), for config_overhead.lua (issue 39, goal 4): 400 tiny
-- configurations, each a 64-thread kernel timed by 100 cold samples, so that a configuration's
-- time is nearly all the harness's own around the timed loop.
--   WLRUN_BIN=build-static/wlrun wlrun tests/bench/config_overhead.lua -- tests/bench/tiny_cold.lua
local wl = require "wlrun"
local k = wl.kernel { [[
extern "C" __global__ void add(float* x, int n) { if (threadIdx.x < n) x[threadIdx.x] += 1.0f; }
]], name = "add" }
return wl.scenario {
  name = "tiny_cold",
  params = { n = wl.range(1, 400) },
  timing = { mode = "cold", iters = 100 },
  setup = function(p)
    local x = wl.tensor { 64 }
    return { x = x, launch = k:bind { grid = 1, block = 64, args = { x, p.n % 64 + 1 } } }
  end,
  run = "launch",
}
