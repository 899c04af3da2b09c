-- Benchmark (not a test): what a sample costs in memory (issue 21): the process's resident size
-- before and after wl.bench of 100,000 cold samples of a 7 us spin kernel, per 100,000 samples;
-- and the median beside the raw C cold loop of the same kernel in the same run (evidence_raw),
-- so that the memory saved is not paid for in timing.
--   wlrun tests/bench/sample_memory.lua -- PATH/TO/evidence_raw
local wl = require "wlrun"

local raw = arg[1] or "build/evidence_raw"
local N = 100000

local function rss_mb()
  local f = assert(io.open("/proc/self/status"))
  local kb = f:read("a"):match("VmRSS:%s+(%d+) kB")
  f:close()
  return tonumber(kb) / 1024
end

local k = wl.kernel { wl.source "kernels/spin.cu", name = "spin" }
local b = k:bind { grid = 1, block = 1, args = { 7000 } }
wl.bench(b, { mode = "cold", warmup = 100, iters = 1000 }) -- the events and buffers of a small run
collectgarbage()
local before = rss_mb()
local r = wl.bench(b, { mode = "cold", warmup = 100, iters = N })
collectgarbage()
local after = rss_mb()
local p = assert(io.popen(("%s spin 7000 cold 2000 1"):format(raw)))
local c = assert(tonumber(p:read("a"):match("^(%S+)")))
p:close()
local grown = (after - before) * 100000 / N
print(
  ("%d cold samples of a 7 us kernel: RSS %.1f -> %.1f MB, %.1f MB per 100,000 samples (target "
  .. "<= 16): %s"):format(
  N, before, after, grown, grown <= 16 and "met" or "MISSED"))
print(
  ("median %.3f us, raw C cold loop %.3f us, diff %+.3f us (target within 1 %% or "
  .. "0.3 us): %s"):format(
  r.stats.median * 1e6, c * 1e6, (r.stats.median - c) * 1e6,
  math.abs(r.stats.median - c) <= math.max(0.01 * c, 0.3e-6) and "met" or "MISSED"))
