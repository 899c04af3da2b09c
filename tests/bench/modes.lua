-- Benchmark (not a test): wlrun's timing modes against raw C event loops of the same mode
-- (tests/bench/evidence_raw.c) on spin kernels of known duration, and the GPU time adaptive
-- stopping takes to reach 0.5 % noise of the median.
--   wlrun tests/bench/modes.lua -- PATH/TO/evidence_raw
local wl = require "wlrun"

local raw = arg[1] or "build/evidence_raw"
local N = 200
local k = wl.kernel { wl.source "kernels/spin.cu", name = "spin" }

local function raw_median(ns, mode, per)
  local p = assert(io.popen(("%s spin %d %s %d %d"):format(raw, ns, mode, N, per)))
  local out = p:read("a")
  p:close()
  return assert(tonumber(out:match("^(%S+)")), "evidence_raw printed: " .. out)
end

local d = wl.device()
print(("timing modes against raw C event loops, %s, %d samples each"):format(d.name, N))
print(("%-9s %-6s %5s %12s %12s %10s %8s"):format("kernel", "mode", "per", "wlrun (us)",
  "raw C (us)", "diff (us)", "target"))
local misses = 0
for _, us in ipairs { 5, 10, 100, 1000 } do
  local b = k:bind { grid = 1, block = 1, args = { us * 1000 } }
  for _, mode in ipairs { "cold", "batch", "graph" } do
    local r = wl.bench(b, { mode = mode, warmup = N // 5 + 5, iters = N })
    local c = raw_median(us * 1000, mode, r.per)
    local diff = r.stats.median - c
    local ok = math.abs(diff) <= math.max(0.01 * c, 0.3e-6)
    if not ok then misses = misses + 1 end
    print(("%-9s %-6s %5d %12.3f %12.3f %+10.3f %8s"):format(us .. " us", mode, r.per,
      r.stats.median * 1e6,
      c * 1e6, diff * 1e6, ok and "met" or "MISSED"))
  end
end
print(("target: each mode within 1 %% or 0.3 us of the raw C loop of the same mode: %s"):format(
  misses == 0 and "met" or (misses .. " missed")))

print("\nadaptive stopping to 0.5 % noise of the median (distribution-free 95 % interval):")
for _, us in ipairs { 10, 100, 1000 } do
  local b = k:bind { grid = 1, block = 1, args = { us * 1000 } }
  local r = wl.bench(b, { mode = "auto", adaptive = true, warmup = 10 })
  print(("  %5d us spin (%s): %5d samples, noise %.3f%%, GPU time %.4f s, wall %.3f s"):format(us,
    r.mode,
    r.stats.n, 100 * r.adaptive.noise, r.adaptive.gpu_time, r.adaptive.elapsed))
end
print(
  "  (nvbench's defaults: at least 0.5 s of GPU time, up to 15 s, until the samples' own "
  .. "relative std is below 0.5 %)")
