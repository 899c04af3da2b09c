-- Benchmark (not a test): cold samples with the L2 flushed before each, behind a blocking kernel
-- (docs/measuring.md), against a raw C graph replay of the same spin kernel (evidence_raw) and
-- against flushed cold samples without the blocking kernel and flushed cupti samples (the
-- kernel's own time from CUPTI's records); and how often NVML's energy counter
-- moves (docs/measuring.md, "energy").
--   wlrun tests/bench/cold_l2.lua -- PATH/TO/evidence_raw
local wl = require "wlrun"
local core = require "wlrun.core"

local raw = arg[1] or "build/evidence_raw"
local N = 400
local k = wl.kernel { wl.source "kernels/spin.cu", name = "spin" }

local function raw_graph(ns, per)
  local p = assert(io.popen(("%s spin %d graph %d %d"):format(raw, ns, N, per)))
  local out = p:read("a")
  p:close()
  return assert(tonumber(out:match("^(%S+)")), "evidence_raw printed: " .. out)
end

print(("cold samples with the L2 flushed, %s, %d samples each (us)"):format(wl.device().name, N))
print(("%-7s %10s %10s %10s %10s %10s %8s"):format("kernel", "blocked", "unblocked", "cupti",
  "raw graph", "cupti-raw", "target"))
local missed = 0
for _, us in ipairs { 3, 7, 20, 100 } do
  local b = k:bind { grid = 1, block = 1, args = { us * 1000 } }
  local blocked = wl.bench(b, { mode = "cold", flush_l2 = true, warmup = 50, iters = N })
  local plain = wl.bench(function() b:launch() end,
    { mode = "cold", flush_l2 = true, warmup = 50, iters = N })
  local cupti = wl.bench(b, { mode = "cupti", flush_l2 = true, warmup = 50, iters = N })
  local g = wl.bench(b, { mode = "graph", warmup = 50, iters = 20 })
  local ref = raw_graph(us * 1000, g.per)
  local diff = cupti.stats.median - ref -- what auto measures for a short kernel with the flush
  local ok = math.abs(diff) <= 0.5e-6
  if us == 7 and not ok then missed = missed + 1 end
  print(("%-7s %10.3f %10.3f %10.3f %10.3f %+10.3f %8s"):format(us .. " us",
    blocked.stats.median * 1e6,
    plain.stats.median * 1e6, cupti.stats.median * 1e6, ref * 1e6, diff * 1e6,
      us == 7 and (ok and "met" or "MISSED") or "-"))
  if blocked.blocked.gave_up > 0 then print(("  the blocking kernel gave up %d times"):format(
    blocked.blocked.gave_up)) end
end
print(
  ("target: a 7 us kernel, flushed, in cupti mode (auto's choice) within 0.5 us of a raw graph "
  .. "replay: %s"):format(
  missed == 0 and "met" or "MISSED"))

-- NVML's energy counter: how often it moves, read every 0.2 ms for 1 s under load
local s0 = core.gpu_sample(true)
if s0.energy_j then
  local b = k:bind { grid = 132, block = 32, args = { 1200 * 1000 * 1000 } } -- 1.2 s of spinning
  b:launch()
  local last, t_last, changes, gaps = s0.energy_j, core.clock(), 0, {}
  local t_end = core.clock() + 1
  while core.clock() < t_end do
    local e = core.gpu_sample(true).energy_j
    if e ~= last then
      changes = changes + 1
      gaps[#gaps + 1] = core.clock() - t_last
      last, t_last = e, core.clock()
    end
    core.sleep(0.0002)
  end
  wl.sync()
  table.sort(gaps)
  print(("NVML energy counter: %d changes in 1 s, median gap %.1f ms, max %.1f ms"):format(changes,
    (gaps[(#gaps + 1) // 2] or 0) * 1e3, (gaps[#gaps] or 0) * 1e3))
  local lock, why = core.lock_clocks("base")
  print(("--lock-clocks base: %s"):format(lock and ("locked at " .. lock .. " MHz")
    or ("refused: " .. tostring(why))))
else
  print("NVML energy counter: not available")
end
