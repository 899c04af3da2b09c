-- Benchmark (not a test): the host cost of enqueueing one launch of an empty kernel through
--   (a) a raw C loop of cudaLaunchKernel (tests/bench/launch_raw.c, run as a subprocess),
--   (b) a wlrun bound launch looped in C (b:launch(n)),
--   (c) a wlrun bound launch called from a Lua loop (b()).
-- The three run in alternating rounds (a, b, c, a, b, c, ...): the enqueue cost of this machine
-- drifts by 10-20 % between rounds, so each round of (b) and (c) is compared with the round of
-- (a) next to it, and the verdict is the median of those paired ratios and differences. A round
-- is the median over 40 batches of 256 launches of the enqueue time per launch (host clock
-- around the enqueue only; a synchronize after each batch, outside the timing).
-- Before each batch a 3 ms spin kernel keeps the GPU busy, so that the launches of every path
-- queue behind it: enqueue cost in one driver state, not raced against execution.
--   wlrun tests/bench/launch_overhead.lua -- PATH/TO/launch_raw
local wl = require "wlrun"

local raw_bin = arg[1] or "build/launch_raw"
local BATCH, ROUNDS, REPEATS = 256, 40, 15

local src = [[
extern "C" __global__ void empty() {}
extern "C" __global__ void spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}]]
local k = wl.kernel { src, name = "empty" }
local s = wl.stream() -- like launch_raw.c: a stream of its own
local bs = k:bind { grid = 1, block = 1, stream = s }
local spin = wl.kernel { src, name = "spin" }:bind { grid = 1, block = 1, stream = s,
  args = { 3000000 } }

local function measure(enqueue)
  local per = {}
  for r = -ROUNDS // 4, ROUNDS - 1 do
    spin()
    local t0 = wl.clock_ns()
    enqueue()
    local t1 = wl.clock_ns()
    s:sync()
    if r >= 0 then per[#per + 1] = (t1 - t0) / BATCH end
  end
  local st = wl.stats.summary(per)
  return st.median, st.p10, st.p90
end

local function in_c() bs:launch(BATCH) end
local function from_lua() for _ = 1, BATCH do bs() end end

local function raw()
  local p = assert(io.popen(raw_bin .. " " .. BATCH .. " " .. ROUNDS))
  local out = p:read("a")
  p:close()
  local med, p10, p90 = out:match("raw_c_loop ([%d.]+) ([%d.]+) ([%d.]+)")
  assert(med, "launch_raw printed: " .. out)
  return tonumber(med), tonumber(p10), tonumber(p90)
end

local rounds = { a = {}, b = {}, c = {} }
for _ = 1, REPEATS do
  rounds.a[#rounds.a + 1] = { raw() }
  rounds.b[#rounds.b + 1] = { measure(in_c) }
  rounds.c[#rounds.c + 1] = { measure(from_lua) }
end
local function median_of(f)
  local col = {}
  for i = 1, REPEATS do col[i] = f(i) end
  return wl.stats.summary(col).median
end
local a_med = median_of(function(i) return rounds.a[i][1] end)
local b_med = median_of(function(i) return rounds.b[i][1] end)
local c_med = median_of(function(i) return rounds.c[i][1] end)
local b_ratio = median_of(function(i) return rounds.b[i][1] / rounds.a[i][1] end)
local c_diff = median_of(function(i) return rounds.c[i][1] - rounds.a[i][1] end)
local spread = {}
for _, key in ipairs { "a", "b", "c" } do
  local col = {}
  for i, r in ipairs(rounds[key]) do col[i] = r[1] end
  local st = wl.stats.summary(col)
  spread[key] = (st.max - st.min) / st.median
end

local d = wl.device()
print(
  ("launch overhead of an empty kernel, %s, driver %d, %d alternating rounds of %d x %d "
  .. "launches"):format(
  d.name, d.driver_version, REPEATS, ROUNDS, BATCH))
print(("round-to-round spread of the medians: (a) %.1f%%, (b) %.1f%%, (c) %.1f%%"):format(
  100 * spread.a,
  100 * spread.b, 100 * spread.c))
print(("%-34s %12s %22s"):format("path", "median ns", "paired with (a)"))
print(("%-34s %12.1f %22s"):format("(a) raw C loop of cudaLaunchKernel", a_med, ""))
print(("%-34s %12.1f %21.1f%%"):format("(b) bound launch looped in C", b_med, 100 * (b_ratio - 1)))
print(("%-34s %12.1f %+19.0f ns"):format("(c) bound launch from a Lua loop", c_med, c_diff))
print(
  ("targets: (b) within 5%% of (a): %s (%+.1f%%); (c) at most 500 ns above (a): %s "
  .. "(%+.0f ns)"):format(
  math.abs(b_ratio - 1) <= 0.05 and "met" or "MISSED", 100 * (b_ratio - 1),
  c_diff <= 500 and "met" or "MISSED", c_diff))
