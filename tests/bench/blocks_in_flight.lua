-- Benchmark (not a test): flushed cold samples behind the blocking kernel with two blocks in
-- flight (the next queued on a second stream while the GPU runs the one before; wlrun's way)
-- against one block at a time (the host waits for each block before it queues the next), in one
-- process, interleaved: 16 rounds of 160 samples each way, the order turned every round, so that
-- a drift of the GPU's timings between runs (0.25 us on the H200) falls on both alike. Prints the
-- medians, their difference, and the wall time a sample took each way (docs/measuring.md), for
-- spin kernels, cuBLAS GEMMs and a copy.
-- The raw C counterpart: build-static/pipeline_raw.
--   wlrun tests/bench/blocks_in_flight.lua
local wl = require "wlrun"
local core = require "wlrun.core"
local engine = require "wlrun.engine"

local ROUNDS, N = 16, 160
local k = wl.kernel { wl.source "kernels/spin.cu", name = "spin" }
local function median(t)
  table.sort(t)
  return t[#t // 2 + 1]
end

print(
  ("flushed cold samples behind the blocking kernel, %s: two blocks in flight against one, %d x "
  .. "%d samples each"):format(
  wl.device().name, ROUNDS, N))
print(("%-22s %12s %12s %10s %9s %14s %14s"):format("work", "one (us)", "two (us)", "two-one", "",
  "wall one (us)", "wall two (us)"))
local worst = 0
-- rounds of n samples each way of the work b, interleaved; prints a row
local function compare(name, b, rounds, n)
  engine.time_cold(b, 20, false, false) -- warm
  local got, wall = { {}, {} }, { 0, 0 }
  for round = 1, rounds do
    for _, in_flight in ipairs(round % 2 == 1 and { 1, 2 } or { 2, 1 }) do
      local t0 = core.clock()
      local r = engine.time_cold(b, n, true, true, in_flight)
      wall[in_flight] = wall[in_flight] + core.clock() - t0
      assert(r.blocked.gave_up == 0, "the blocking kernel gave up")
      for _, s in ipairs(r.gpu) do table.insert(got[in_flight], s) end
    end
  end
  local one, two = median(got[1]), median(got[2])
  worst = math.max(worst, math.abs(two - one) / one)
  print(("%-22s %12.3f %12.3f %+10.3f %+8.2f%% %14.2f %14.2f"):format(name, one * 1e6, two * 1e6,
    (two - one) * 1e6,
    100 * (two - one) / one, wall[1] / (rounds * n) * 1e6, wall[2] / (rounds * n) * 1e6))
end
for _, us in ipairs { 3, 7, 20, 100 } do
  compare(("spin %d us"):format(us), k:bind { grid = 1, block = 1, args = { us * 1000 } }, ROUNDS,
    N)
end
-- work that reads and writes memory: cuBLAS GEMMs (where the library is there) and a copy
local function gemm(dtype, compute, m, n, kk, rounds, count)
  local t = dtype == "bf16" and "bf16" or "f32"
  local a = wl.tensor { m, kk, dtype = t, init = wl.normal() }
  local bt = wl.tensor { kk, n, dtype = t, init = wl.normal() }
  local c = wl.tensor { m, n, dtype = t }
  compare(("cublas %s %dx%dx%d"):format(dtype, m, n, kk),
    wl.cublas.gemm { a = a, b = bt, c = c, m = m, n = n, k = kk,
    compute = compute }, rounds, count)
  a:free(); bt:free(); c:free()
end
if pcall(function() return wl.cublas.gemm end) then
  gemm("bf16", "fp32", 1024, 1024, 1024, ROUNDS, N)
  gemm("f32", "fp32", 2048, 2048, 4096, 8, 32)
end
local n = 4 * 1024 * 1024 -- 16 MB each way: fits the L2, which the flush empties
local x, y = wl.tensor { n, dtype = "f32", init = wl.normal() }, wl.tensor { n, dtype = "f32" }
compare("copy 16 MB", wl.ops.memcpy { dst = y, src = x }, ROUNDS, N)
print(
  ("largest difference of the medians: %.2f %% (the event's clock ticks every 0.032 us)"):format(
  worst * 100))
