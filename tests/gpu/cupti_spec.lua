-- GPU specs of cupti mode (docs/measuring.md, "Kernel time through CUPTI"): kernel-only time
-- from CUPTI's activity records against event timing, the per-kernel breakdown of a function,
-- of a wl.graph and in the -o JSON, and the errors when CUPTI is not wlrun's to use.
local h = require "helper"
local wl = require "wlrun"

local SPINS = [[
__device__ void spin_for(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
extern "C" __global__ void spin_a(unsigned long long ns) { spin_for(ns); }
extern "C" __global__ void spin_b(unsigned long long ns) { spin_for(ns); }
extern "C" __global__ void spin_c(unsigned long long ns) { spin_for(ns); }
]]

local function spin(name, us)
  local k = wl.kernel { SPINS, name = name }
  return k:bind { grid = 1, block = 1, args = { math.floor(us * 1000) } }
end

local function near(got, want, rel, what)
  assert.is_true(math.abs(got - want) <= rel * want,
    ("%s: %.3f us against %.3f us (more than %.1f %% apart)"):format(what, got * 1e6, want * 1e6,
      100 * rel))
end

local function by_name(r)
  local t = {}
  for _, k in ipairs(r.kernel_times) do t[k.name] = k end
  return t
end

local function show(r) print("\n    " .. tostring(r):gsub("\n", "\n    ")) end

describe("cupti mode", function()
  h.gpu_it("a single 1 ms spin kernel agrees with cold mode within 1 %", function()
    local b = spin("spin_a", 1000)
    local cold = wl.bench(b, { mode = "cold", warmup = 5, iters = 50 })
    local cupti = wl.bench(b, { mode = "cupti", warmup = 5, iters = 50 })
    show(cupti)
    print(("    cold %.3f us, cupti %.3f us"):format(cold.stats.median * 1e6,
      cupti.stats.median * 1e6))
    assert.equal("cupti", cupti.mode)
    near(cupti.stats.median, cold.stats.median, 0.01, "cupti against cold")
    assert.is_true(cupti.stats.median >= 1e-3 - 0.5e-6, cupti.stats.median)
    assert.equal(1, #cupti.kernel_times)
    assert.equal("spin_a", cupti.kernel_times[1].name)
    assert.equal(1, cupti.kernel_times[1].count)
    assert.equal(1, cupti.kernel_times[1].share)
    assert.equal(50, #cupti.samples)
    assert.equal(50, #cupti.spans)
  end)

  h.gpu_it("a Lua function of 3 kernels: a 3-kernel breakdown whose sum is the sample time",
    function()
    local a, b, c = spin("spin_a", 100), spin("spin_b", 200), spin("spin_c", 300)
    local r = wl.bench(function() a() b() c() end, { mode = "cupti", warmup = 5, iters = 40 })
    show(r)
    assert.equal(3, #r.kernel_times)
    assert.same({ "spin_a", "spin_b", "spin_c" },
      -- the order of first launch
      { r.kernel_times[1].name, r.kernel_times[2].name, r.kernel_times[3].name })
    local k, sum = by_name(r), 0
    for name, us in pairs { spin_a = 100, spin_b = 200, spin_c = 300 } do
      assert.equal(1, k[name].count)
      near(k[name].median, us * 1e-6, 0.02, name)
      near(k[name].share, us / 600, 0.02, name .. " share")
      sum = sum + k[name].median
    end
    near(sum, r.stats.median, 0.01, "the kernels' medians against the sample's")
    near(r.stats.median, 600e-6, 0.02, "the sample")
    -- the span holds the gaps between the kernels that the kernel-only time leaves out
    assert.is_true(r.span_stats.median >= r.stats.median, r.span_stats.median)
  end)

  h.gpu_it("a wl.graph of 2 kernels: both kernels, their sum at most the graph's cold time",
    function()
    local a, b = spin("spin_a", 200), spin("spin_b", 300)
    local g = wl.graph(function() a() b() end)
    local r = wl.bench(g, { mode = "cupti", warmup = 5, iters = 40 })
    local cold = wl.bench(g, { mode = "cold", warmup = 5, iters = 40 })
    show(r)
    assert.equal(2, #r.kernel_times)
    local k = by_name(r)
    assert.equal(1, k.spin_a.count)
    assert.equal(1, k.spin_b.count)
    near(k.spin_a.median, 200e-6, 0.02, "spin_a")
    near(k.spin_b.median, 300e-6, 0.02, "spin_b")
    near(r.stats.median, 500e-6, 0.02, "the graph's kernels")
    assert.is_true(r.stats.median <= cold.stats.median * 1.001,
      ("%g > %g"):format(r.stats.median, cold.stats.median))
    near(r.stats.median, cold.stats.median, 0.03, "cupti against cold")
  end)

  h.gpu_it("a rotation list: each sample holds its own item's kernel", function()
    local r = wl.bench({ spin("spin_a", 100), spin("spin_b", 300) },
      { mode = "cupti", warmup = 2, iters = 40 })
    local k = by_name(r)
    assert.equal(0.5, k.spin_a.count)
    assert.equal(0.5, k.spin_b.count)
    assert.is_true(r.stats.min < 150e-6 and r.stats.max > 250e-6, tostring(r))
  end)

  h.gpu_it("writes the breakdown into the -o JSON, which the strict loader reads back", function()
    local dir = h.tmpdir()
    local r = h.run_script([[
local wl = require "wlrun"
return wl.scenario {
  name = "cupti_two",
  params = { us = { 100, 200 } },
  timing = { mode = "cupti", warmup = 3, iters = 20 },
  setup = function(p)
    local src = 'extern "C" __global__ void busy(unsigned long long ns) { unsigned long long t0, t;'
      .. ' asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));'
      .. ' do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns); }'
    local k = wl.kernel { src, name = "busy" }
    local b = k:bind { grid = 1, block = 1, args = { p.us * 1000 } }
    return { go = function() b() b() end }
  end,
  run = function(p, s) s.go() end,
}
]], "--no-progress -o " .. h.quote(dir .. "/r.json"), { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    local doc = require("wlrun.results.load").load(dir .. "/r.json")
    for _, c in ipairs(doc.configurations) do
      assert.equal("cupti", c.mode)
      assert.equal(1, #c.kernel_times)
      assert.equal("busy", c.kernel_times[1].name)
      assert.equal(2, c.kernel_times[1].count)
      near(c.kernel_times[1].median, c.params.us * 1e-6, 0.03, "busy")
      near(c.stats.median, 2 * c.params.us * 1e-6, 0.03, "two launches")
      assert.is_true(c.span_stats.median >= c.stats.median)
    end
  end)

  h.gpu_it("says why where CUPTI does not load (WLRUN_CUPTI), exit 4, nothing crashes", function()
    local r = h.run_script([[
local wl = require "wlrun"
local k = wl.kernel { 'extern "C" __global__ void k() {}', name = "k" }
wl.bench(k:bind { grid = 1, block = 1, args = {} }, { mode = "cupti", warmup = 1, iters = 2 })
]], "", { env = "WLRUN_CUPTI=/nonexistent/libcupti.so.13" })
    assert.equal(4, r.code, r.stderr)
    assert.truthy(
      r.stderr:find("cupti mode: CUPTI: WLRUN_CUPTI=/nonexistent/libcupti.so.13 does not load", 1,
      true),
      r.stderr)
  end)

  local trace_lib = os.getenv("WLRUN_TRACE_LIB")
  local it_traced = trace_lib and h.gpu_it or function(name) pending(name
    .. " -- skipped: WLRUN_TRACE_LIB not set") end
  it_traced("under wlrun trace (CUPTI in use): a clear error, exit 4, and the trace itself goes on",
    function()
    local dir = h.tmpdir()
    local script = h.write(dir .. "/script.lua", [[
local wl = require "wlrun"
local k = wl.kernel { 'extern "C" __global__ void k() {}', name = "k" }
wl.bench(k:bind { grid = 1, block = 1, args = {} }, { mode = "cupti", warmup = 1, iters = 2 })
]])
    local bin = h.bin:sub(1, 1) == "/" and h.bin or (h.source_dir .. "/" .. h.bin)
    local r = h.run("trace -o " .. h.quote(dir .. "/t.json") .. " -- " .. h.quote(bin) .. " "
      .. h.quote(script),
      { cwd = dir, env = "WLRUN_TRACE_LIB=" .. h.quote(trace_lib) })
    assert.truthy(r.stderr:find("another tool is using CUPTI in this process", 1, true),
      r.stderr .. r.stdout)
  end)
end)
