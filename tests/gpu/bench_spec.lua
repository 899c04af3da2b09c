-- GPU specs of the measurement engine: known-duration spin kernels, modes, planted
-- anti-patterns (docs/measuring.md). Tolerances hold on a shared machine.
local h = require "helper"
local wl = require "wlrun"

local SPIN = [[
extern "C" __global__ void spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
extern "C" __global__ void copy(float* __restrict__ y, const float* __restrict__ x, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) y[i] = x[i];
}
template <typename T> __global__ void scale(T* y, const T* x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
]]

local function spin_launch(us)
  local k = wl.kernel { SPIN, name = "spin" }
  return k:bind { grid = 1, block = 1, args = { math.floor(us * 1000) } }
end

local function codes(r)
  local c = {}
  for _, w in ipairs(r.warnings) do c[#c + 1] = w.code end
  table.sort(c)
  return table.concat(c, ",")
end

local function has(r, code)
  for _, w in ipairs(r.warnings) do if w.code == code then return true end end
  return false
end

describe("measurement engine", function()
  h.gpu_it("measures the timing floor of the device", function()
    local f = wl.timing_floor()
    print(("\n    floor: event pair %.2f us, empty kernel %.2f us"):format(f.event_pair * 1e6,
      f.empty_kernel * 1e6))
    assert.is_true(f.event_pair > 0 and f.event_pair < 20e-6)
    assert.is_true(f.empty_kernel >= f.event_pair * 0.5 and f.empty_kernel < 50e-6)
  end)

  h.gpu_it("cold mode: a 1 ms spin kernel reads within 2 % of 1 ms, with no warning", function()
    local r = wl.bench(spin_launch(1000), { mode = "cold", warmup = 5, iters = 50 })
    print("\n    " .. tostring(r):gsub("\n", "\n    "))
    assert.is_true(math.abs(r.stats.median - 1e-3) <= 0.02e-3, r.stats.median)
    assert.is_true(r.stats.median >= 1e-3 - 0.5e-6)
    assert.equal("", codes(r))
  end)

  h.gpu_it("graph mode: a 10 us spin kernel reads within 1.5 us of 10 us", function()
    local b = spin_launch(10)
    local g = wl.bench(b, { mode = "graph", warmup = 20, iters = 100 })
    local bt = wl.bench(b, { mode = "batch", warmup = 20, iters = 100 })
    local c = wl.bench(b, { mode = "cold", warmup = 20, iters = 100 })
    print(("\n    10 us spin: graph %.2f us (%d per sample), batch %.2f us, cold %.2f us"):format(
      g.stats.median * 1e6, g.per, bt.stats.median * 1e6, c.stats.median * 1e6))
    assert.is_true(math.abs(g.stats.median - 10e-6) <= 1.5e-6, g.stats.median)
    assert.is_true(g.stats.median >= 10e-6 - 0.5e-6)
    assert.is_true(bt.stats.median >= 10e-6 - 0.5e-6 and c.stats.median >= 10e-6 - 0.5e-6)
    assert.is_true(c.stats.median >= g.stats.median - 0.2e-6, "cold below graph")
    assert.is_true(bt.stats.median >= g.stats.median - 0.2e-6, "batch below graph")
    assert.is_true(has(c, "short-sample"), "cold 10 us should warn short-sample: " .. codes(c))
    assert.is_false(has(g, "short-sample"))
  end)

  h.gpu_it("100 us spin: no median below the true duration by more than 0.5 us", function()
    local b = spin_launch(100)
    for _, mode in ipairs { "cold", "batch", "graph", "host" } do
      local r = wl.bench(b, { mode = mode, warmup = 5, iters = 30 })
      print(("\n    100 us spin, %s: %.2f us"):format(mode, r.stats.median * 1e6))
      assert.is_true(r.stats.median >= 100e-6 - 0.5e-6, mode)
      -- host mode adds a synchronize round trip (about 10 us) on top of the kernel
      assert.is_true(r.stats.median < (mode == "host" and 140e-6 or 110e-6), mode)
    end
  end)

  h.gpu_it(
    "auto times a bound kernel in cupti mode, short or long; a function as graphs or cold, "
    .. "and says so", function()
    local r = wl.bench(spin_launch(3), { mode = "auto", warmup = 10, iters = 50 })
    assert.equal("cupti", r.mode)
    assert.matches("auto: every sample is one kernel and CUPTI is free", r.notes[1], 1, true)
    local r2 = wl.bench(spin_launch(200), { mode = "auto", warmup = 3, iters = 10 })
    assert.equal("cupti", r2.mode)
    local short, long = spin_launch(3), spin_launch(200)
    local f = wl.bench(function() short() end, { mode = "auto", warmup = 10, iters = 50 })
    assert.equal("batch", f.mode) -- a function: no capture
    assert.matches("the work is not one bound kernel a sample", f.notes[1], 1, true)
    local c = wl.bench(function() long() end, { mode = "auto", warmup = 3, iters = 10 })
    assert.equal("cold", c.mode)
    assert.matches("cold: each sample holds the GPU's own cost of one launch",
      table.concat(c.notes, "\n"), 1, true)
  end)

  h.gpu_it("adaptive stopping reaches 0.5 % noise of the median quickly on a steady kernel",
    function()
    local r = wl.bench(spin_launch(50), { mode = "cold", adaptive = true, warmup = 10 })
    print(("\n    adaptive: %d samples, noise %.3f%%, %.3f s wall, %.3f s GPU"):format(r.stats.n,
      100 * r.adaptive.noise, r.adaptive.elapsed, r.adaptive.gpu_time))
    assert.is_true(r.adaptive.converged)
    assert.is_true(r.adaptive.noise <= 0.005)
    assert.is_true(r.adaptive.gpu_time < 0.5) -- nvbench's default minimum alone is 0.5 s
  end)

  h.gpu_it("records the host enqueue time beside the GPU time, and the SM clock", function()
    local r = wl.bench(spin_launch(20), { mode = "cold", warmup = 5, iters = 20 })
    assert.equal(20, #r.enqueue)
    assert.is_true(r.enqueue_stats.median > 0 and r.enqueue_stats.median < 1e-3)
    assert.is_true(r.clock.before.sm_mhz > 100 and r.clock.after.sm_mhz > 100)
    print(("\n    SM clock %.0f -> %.0f MHz (max %.0f, nvml %s)"):format(r.clock.before.sm_mhz,
      r.clock.after.sm_mhz, r.clock.before.max_sm_mhz, tostring(r.clock.before.nvml)))
  end)

  h.gpu_it("a clean, large copy gets no warning; the same copy small and unflushed is cache-hot",
    function()
    local n = 1 << 28 -- 1 GiB
    local x = wl.tensor { n, init = wl.normal() }
    local y = wl.tensor { n }
    local k = wl.kernel { SPIN, name = "copy" }
    local big = k:bind { grid = 132 * 8, block = 256, args = { y, x, n } }
    local r = wl.bench(big, { mode = "cold", warmup = 5, iters = 30 })
    print(("\n    1 GiB copy: %.1f us, %.0f GB/s"):format(r.stats.median * 1e6,
      2 * 4 * n / r.stats.median / 1e9))
    assert.equal("", codes(r))
    local m = 1 << 20
    local xs, ys = wl.tensor { m, init = wl.normal() }, wl.tensor { m }
    local small = k:bind { grid = 512, block = 256, args = { ys, xs, m } }
    local hot = wl.bench(small, { mode = "graph", warmup = 20, iters = 50 })
    assert.is_true(has(hot, "cache-hot"), codes(hot))
    local flushed = wl.bench(small, { mode = "cold", flush_l2 = true, warmup = 20, iters = 50 })
    assert.is_false(has(flushed, "cache-hot"))
  end)

  h.gpu_it("planted anti-patterns produce their warnings", function()
    local n = 1 << 22
    local x = wl.tensor { n } -- zeros
    local y = wl.tensor { n }
    local k = wl.kernel { SPIN, name = "scale<float>" }
    local b = k:bind { grid = wl.cdiv(n, 256), block = 256, args = { y, x, 2.0, n } }
    local r = wl.bench(b, { mode = "graph", warmup = 5, iters = 20 })
    assert.is_true(has(r, "zero-inputs"), codes(r))
    local s = wl.bench(function() b() wl.sync() end, { mode = "cold", warmup = 2, iters = 10 })
    assert.is_true(has(s, "sync-in-measure"), codes(s))
    local a = wl.bench(function() local t = wl.tensor { 16 } b() t:free() end,
      { mode = "cold", warmup = 2, iters = 10 })
    assert.is_true(has(a, "alloc-in-measure"), codes(a))
  end)

  h.gpu_it("rotates among copies of the inputs", function()
    local k = wl.kernel { SPIN, name = "copy" }
    local list = {}
    for i = 1, 3 do
      local x, y = wl.tensor { 1 << 20, init = wl.normal() }, wl.tensor { 1 << 20 }
      list[i] = k:bind { grid = 512, block = 256, args = { y, x, 1 << 20 } }
    end
    local r = wl.bench(list, { mode = "cold", warmup = 3, iters = 12 })
    assert.equal(12, r.stats.n)
  end)
end)

describe("planted anti-patterns on the GPU", function()
  -- one kernel whose duration follows a pattern over successive launches (a device counter)
  local SHAPED = [[
extern "C" __global__ void shaped(unsigned long long* counter, int pattern, unsigned long long base) {
  unsigned long long k = atomicAdd(counter, 1ULL), ns = base;
  if (pattern == 1) ns = base + (k < 60 ? (60 - k) * base / 40 : 0);          // slow start: warmup trend
  if (pattern == 2) ns = k % 2 ? base * 3 / 2 : base;                          // two populations
  if (pattern == 3) ns = k % 20 == 7 ? base * 3 : base;                        // 5 % outliers
  if (pattern == 4) ns = base + (((k * 2654435761ULL) >> 7) % 1000) * base / 2500;  // noise up to 40 %
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
extern "C" __global__ void tiny(float* p) { p[threadIdx.x] += 1.0f; }
]]
  local function shaped(pattern)
    local counter = wl.tensor { 1, dtype = "i64" }
    return wl.kernel { SHAPED, name = "shaped" }:bind { grid = 1, block = 1,
      args = { counter, pattern, 100000 } }
  end

  h.gpu_it("a slow start without warmup: warmup-trend", function()
    local r = wl.bench(shaped(1), { mode = "cold", warmup = 0, iters = 200 })
    assert.is_true(has(r, "warmup-trend"), codes(r))
  end)

  h.gpu_it("alternating durations: bimodal", function()
    local r = wl.bench(shaped(2), { mode = "cold", warmup = 2, iters = 100 })
    assert.is_true(has(r, "bimodal"), codes(r))
  end)

  h.gpu_it("every 20th launch three times longer: outliers", function()
    local r = wl.bench(shaped(3), { mode = "cold", warmup = 2, iters = 200 })
    assert.is_true(has(r, "outliers"), codes(r))
  end)

  h.gpu_it("durations spread by up to 40 %: high-noise", function()
    local r = wl.bench(shaped(4), { mode = "cold", warmup = 2, iters = 100 })
    assert.is_true(has(r, "high-noise"), codes(r))
  end)

  h.gpu_it("a tiny kernel batched: launch-bound", function()
    local p = wl.tensor { 32, init = 1 }
    local b = wl.kernel { SHAPED, name = "tiny" }:bind { grid = 1, block = 32, args = { p } }
    local r = wl.bench(b, { mode = "batch", batch = 100, warmup = 10, iters = 50 })
    assert.is_true(has(r, "launch-bound"), codes(r))
  end)
end)

describe("scenarios on the GPU", function()
  local SCENARIO = [[
local wl = require "wlrun"
local src = [=[extern "C" __global__ void fill(float* p, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) p[i] = 1.0f;
}]=]
return wl.scenario {
  name = "memory", params = { i = wl.range(1, N or 6) },
  timing = { warmup = 2, iters = 5 },
  setup = function(p)
    io.stderr:write(("held %d\n"):format(wl.memory().device_bytes))
    local s = { t = wl.tensor { 1 << 26, init = wl.normal() } } -- 256 MiB a configuration
    if SLOW then wl.sleep(0.6) end
    s.launch = wl.kernel { src, name = "fill" }:bind { grid = 256, block = 256, args = { s.t, 1 << 26 } }
    return s
  end,
  run = "launch",
}
]]

  h.gpu_it("free each configuration's tensors: no device memory growth across a sweep", function()
    local r = h.run_script(SCENARIO, "--no-progress")
    assert.equal(0, r.code, r.stderr)
    local held = {}
    for n in r.stderr:gmatch("held (%d+)") do held[#held + 1] = tonumber(n) end
    assert.equal(6, #held)
    assert.equal(held[2], held[6])
  end)

  h.gpu_it("keep finished configurations in the outputs when interrupted", function()
    local dir = h.tmpdir()
    local r = h.run_script("SLOW, N = true, 10\n" .. SCENARIO,
      "-o " .. dir .. "/out.json --no-progress",
      { cwd = dir, prefix = "timeout --preserve-status -s INT 2.5" })
    assert.equal(130, r.code, r.stderr)
    assert.matches("interrupted %(Ctrl%-C%) during configuration %d+ of 10", r.stderr)
    local doc = require("wlrun.results").decode(h.read(dir .. "/out.json"), "out.json")
    assert.is_false(doc.complete)
    assert.is_true(#doc.configurations >= 2, #doc.configurations)
    assert.equal("ok", doc.configurations[1].status)
  end)
end)
