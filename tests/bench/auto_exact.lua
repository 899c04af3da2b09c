-- Benchmark (not a test): does auto leave any launch cost in its samples? Spin kernels of 7, 73
-- and 730 us (tests/bench/kernels/spin.cu), each timed by wlrun's default (auto), with and
-- without the L2 flush, and by cold mode, against a raw C graph of 100 launches of the same
-- kernel (tests/bench/evidence_raw.c, per-launch median of its replays), in one run. Then
-- adaptive stopping to 0.5 % noise of the median on each, in auto and in cold mode: the GPU
-- time it took, why it stopped, and each chunk's median (docs/measuring.md, docs/benchmarks.md).
--   wlrun tests/bench/auto_exact.lua -- PATH/TO/evidence_raw
local wl = require "wlrun"
local checks = require "wlrun.measure.checks"

local raw = arg[1] or "build/evidence_raw"
local N = 400
local k = wl.kernel { wl.source "kernels/spin.cu", name = "spin" }

local function raw_graph(ns)
  local p = assert(io.popen(("%s spin %d graph %d 100"):format(raw, ns, N // 4)))
  local out = p:read("a")
  p:close()
  return assert(tonumber(out:match("^(%S+)")), "evidence_raw printed: " .. out)
end

-- ROUNDS alternating rounds (raw graph, auto warm, auto flushed, cold warm, cold flushed): each
-- column's median over the rounds, and the raw graph's own spread across rounds (what the
-- reference itself moves by: the spin kernel ends on a coarse timer)
local ROUNDS = 3
local function middle(v)
  local c = table.move(v, 1, #v, 1, {})
  table.sort(c)
  return c[(#c + 1) // 2]
end
print(
  ("auto against a raw C graph of 100 launches, %s, %d samples each, %d alternating rounds"):format(
  wl.device().name, N, ROUNDS))
print(("%-8s %-6s %-6s %12s %12s %11s %9s %8s %12s"):format("kernel", "flush", "auto", "auto (us)",
  "graph (us)",
  "graph +/-", "auto/graph", "target", "cold (us)"))
local misses = 0
for _, us in ipairs { 7, 73, 730 } do
  local b = k:bind { grid = 1, block = 1, args = { us * 1000 } }
  local iters = us >= 730 and N // 4 or N
  local g, got = {}, { [false] = { auto = {}, cold = {} }, [true] = { auto = {}, cold = {} } }
  local mode = {}
  for r = 1, ROUNDS do
    g[r] = raw_graph(us * 1000)
    for _, flush in ipairs { false, true } do
      local a = wl.bench(b, { flush_l2 = flush, warmup = 20, iters = iters })
      mode[flush] = a.mode
      got[flush].auto[r] = a.stats.median
      got[flush].cold[r] = wl.bench(b, { mode = "cold", flush_l2 = flush, warmup = 20,
        iters = iters }).stats.median
    end
  end
  local gm, lo, hi = middle(g), math.min(table.unpack(g)), math.max(table.unpack(g))
  for _, flush in ipairs { false, true } do
    local am = middle(got[flush].auto)
    local ratio = am / gm
    local ok = math.abs(ratio - 1) <= 0.003
    if not ok then misses = misses + 1 end
    print(("%-8s %-6s %-6s %12.3f %12.3f %10.3f%% %9.4f %8s %12.3f"):format(us .. " us",
      tostring(flush), mode[flush],
      am * 1e6, gm * 1e6, 100 * (hi - lo) / 2 / gm, ratio, ok and "met" or "MISSED",
        middle(got[flush].cold) * 1e6))
  end
end
print(("target: auto within 0.3 %% of the raw C graph, with and without the flush: %s"):format(
  misses == 0 and "met" or (misses .. " missed")))

print(
  "\nadaptive stopping to 0.5 % noise of the median: GPU time, why it stopped, each chunk's "
  .. "median (us)")
local slow = 0
for _, us in ipairs { 7, 73, 730 } do
  local b = k:bind { grid = 1, block = 1, args = { us * 1000 } }
  for _, how in ipairs { { "auto", true }, { "cold", true }, { "cold", false } } do
    local mode, flush = how[1], how[2]
    local r = wl.bench(b, { mode = mode, flush_l2 = flush, adaptive = true, warmup = 20,
      max_time = 5 })
    local medians = {}
    for i, c in ipairs(r.adaptive_chunks or {}) do
      if i > 12 then medians[#medians + 1] = ("... %d chunks"):format(#r.adaptive_chunks) break end
      medians[#medians + 1] = ("%.3f"):format(c.median * 1e6)
    end
    local fast = r.adaptive.converged and r.adaptive.gpu_time <= 0.2
    if not fast then slow = slow + 1 end
    print(
      ("  %4d us %-5s %-9s (%s): %6d samples, noise %.3f%%, GPU %.3f s, wall %.3f s, %s%s"):format(
      us, mode,
      flush and "flushed" or "warm", r.mode,
      r.stats.n, 100 * r.adaptive.noise, r.adaptive.gpu_time, r.adaptive.elapsed,
        r.adaptive.stopped,
      fast and "" or " (over 0.2 s)"))
    print("      chunks: " .. table.concat(medians, " "))
    if r.adaptive.stopped ~= "target" then print("      cause: " .. checks.plateau_cause(r)) end
  end
end
print(("target: 0.5 %% within 0.2 s of GPU time, or a warning naming the cause: %d over"):format(
  slow))
