-- GPU specs of tensors, kernels, launches, streams, events and graphs (docs/lua-api.md). They
-- run in-process on a CUDA device; elsewhere each is reported as pending by name. Nothing at
-- file level touches the device: kernels are compiled inside the specs.
local h = require "helper"
local wl = require "wlrun"

local SOURCES = {
  axpy = [[
template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
]],
  addone = [[
extern "C" __global__ void addone(float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1.0f;
}
]],
  matmul = [[
__global__ void matmul(const float* A, const float* B, float* C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n || col >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < n; k++) acc += A[row * n + k] * B[k * n + col];
  C[row * n + col] = acc;
}
]],
  -- spins one thread for ns nanoseconds of the GPU's global timer
  spin = [[
__global__ void spin(long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while ((long long)(t - t0) < ns);
}
]],
  -- copies n floats through dynamic shared memory, reversed
  reverse = [[
extern "C" __global__ void reverse(const float* in, float* out, int n) {
  extern __shared__ float buf[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = in[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = buf[n - 1 - i];
}
]],
  bounded = [[
__global__ void __launch_bounds__(128) bounded(float* p) { p[threadIdx.x] = 1.0f; }
]],
}

local NAMES = { axpy = "axpy<float>" }
local compiled = {}

-- The kernel of SOURCES[key], compiled once per spec run.
local function kernel(key)
  compiled[key] = compiled[key] or wl.kernel { SOURCES[key], name = NAMES[key] or key }
  return compiled[key]
end

local function mean_std(v)
  local n, sum = #v, 0
  for i = 1, n do sum = sum + v[i] end
  local mean, ss = sum / n, 0
  for i = 1, n do ss = ss + (v[i] - mean) ^ 2 end
  return mean, math.sqrt(ss / (n - 1))
end

local function all_equal(values, expected, what)
  for i = 1, #values do
    if values[i] ~= expected then
      error(("%s: element %d is %s, expected %s"):format(what or "tensor", i, values[i], expected),
        2)
    end
  end
end

local function live_device_bytes()
  collectgarbage()
  collectgarbage()
  return wl.memory()
end

describe("device tensors", function()
  h.gpu_it("wl.normal() on 4M f32 elements has mean 0 and std 1", function()
    local t = wl.tensor { 4 * 1024 * 1024, init = wl.normal() }
    local m, s = mean_std(t:to_host():totable())
    assert.is_true(math.abs(m) < 0.01, "mean " .. m)
    assert.is_true(math.abs(s - 1) < 0.01, "std " .. s)
    local st = wl.stats.summary(wl.tensor { 100000, init = wl.normal(3, 2) }:to_host():totable())
    assert.is_true(math.abs(st.mean - 3) < 0.05 and math.abs(st.std - 2) < 0.05,
      ("mean %g std %g"):format(st.mean, st.std))
  end)

  h.gpu_it("wl.normal() never makes a non-finite value, even over 256M f32 elements", function()
    -- float Box-Muller takes log(1 - u): a u that rounds up to 1 would give -inf
    local n = 1 << 28
    local t = wl.tensor { n, dtype = "f32", init = wl.normal() }
    local count = wl.tensor { 1, dtype = "i32" }
    wl.kernel { [[extern "C" __global__ void nonfinite(const float* x, long n, int* c) {
      for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        if (!isfinite(x[i])) atomicAdd(c, 1);
    }]], name = "nonfinite" }:bind { grid = 4096, block = 256, args = { t, n, count } }()
    assert.equal(0, count:to_host()[1])
  end)

  h.gpu_it("wl.uniform(lo, hi) stays within its range", function()
    local v = wl.tensor { 1024 * 1024, init = wl.uniform(-3, 5) }:to_host():totable()
    local lo, hi = math.huge, -math.huge
    for i = 1, #v do lo, hi = math.min(lo, v[i]), math.max(hi, v[i]) end
    assert.is_true(lo >= -3 and hi <= 5, ("range [%g, %g]"):format(lo, hi))
    assert.is_true(lo < -2.99 and hi > 4.99, ("range [%g, %g]"):format(lo, hi))
    local m = mean_std(v)
    assert.is_true(math.abs(m - 1) < 0.02, "mean " .. m)
  end)

  h.gpu_it("random inits are reproducible and do not depend on the tensor's size", function()
    local a = wl.tensor { 1000, init = wl.uniform(0, 1, { seed = 5 }) }:to_host():totable()
    local b = wl.tensor { 1000, init = wl.uniform(0, 1, { seed = 5 }) }:to_host():totable()
    local big = wl.tensor { 1 << 20, init = wl.uniform(0, 1, { seed = 5 }) }:to_host()
    assert.same(a, b)
    for i = 1, 1000 do assert.equal(a[i], big[i]) end
    local c = wl.tensor { 1000, init = wl.uniform() }:to_host():totable()
    local d = wl.tensor { 1000, init = wl.uniform() }:to_host():totable()
    assert.are_not.same(c, d)
  end)

  h.gpu_it("wl.arange gives exact values for f32, i32 and bf16", function()
    local f = wl.tensor { 1000, init = wl.arange() }:to_host()
    for i = 1, 1000 do assert.equal(i - 1, f[i]) end
    local n = wl.tensor { 1000, dtype = "i32", init = wl.arange(5, 3) }:to_host()
    for i = 1, 1000 do assert.equal(5 + 3 * (i - 1), n[i]) end
    local b = wl.tensor { 256, dtype = "bf16", init = wl.arange(-128) }:to_host()
    for i = 1, 256 do assert.equal(i - 129, b[i]) end
  end)

  h.gpu_it("device inits round like host ones (f16, bf16 to nearest even; integers saturate)",
    function()
    for _, dtype in ipairs { "f16", "bf16", "i8", "u8" } do
      local d = wl.tensor { 4096, dtype = dtype, init = wl.arange(-300.25, 0.75) }:to_host(
        ):totable()
      local r = wl.host_tensor { 4096, dtype = dtype, init = wl.arange(-300.25, 0.75) }:totable()
      assert.same(r, d, dtype)
    end
  end)

  h.gpu_it("fill, zeros and t:init work on the device", function()
    local t = wl.tensor { 333, dtype = "i16", init = 7 }
    all_equal(t:to_host():totable(), 7)
    t:fill(0)
    all_equal(t:to_host():totable(), 0)
    t:init(wl.fill(-2))
    all_equal(t:to_host():totable(), -2)
    assert.equal("device", t.memory)
  end)

  h.gpu_it("refuse element access on the device", function()
    local t = wl.tensor { 4 }
    local ok, e = pcall(function() return t[1] end)
    assert.is_false(ok)
    assert.matches("element access needs a host tensor", tostring(e))
    assert.has_error(function() t:totable() end)
  end)

  h.gpu_it("an allocation larger than the device is an out-of-memory error of kind cuda", function()
    local ok, e = pcall(wl.tensor, { 2 ^ 40 })
    assert.is_false(ok)
    assert.equal("cuda", e.kind)
    assert.matches(
      "out of device memory: tensor f32%[1099511627776%] needs 4%.0 TiB, .* free of .*wlrun holds",
      tostring(e))
    local t = wl.tensor { 1024, init = 1 } -- and the device is still usable
    all_equal(t:to_host():totable(), 1)
  end)

  h.gpu_it("wl.memory() accounts for device tensors", function()
    local before = live_device_bytes()
    local t = wl.tensor { 1 << 20, dtype = "f64" }
    local during = wl.memory()
    assert.equal(before.device_bytes + t.nbytes, during.device_bytes)
    assert.equal(before.device_tensors + 1, during.device_tensors)
    assert.equal(before.device_allocations + 1, during.device_allocations)
    assert.is_true(during.device_peak_bytes >= during.device_bytes)
    t:free()
    assert.is_true(t.freed)
    local after = wl.memory()
    assert.equal(before.device_bytes, after.device_bytes)
    assert.equal(before.device_tensors, after.device_tensors)
    wl.reset_memory_peak()
    assert.equal(after.device_bytes, wl.memory().device_peak_bytes)
  end)

  h.gpu_it("<close> frees a device tensor at the end of the block", function()
    local before = live_device_bytes().device_bytes
    do
      local _t <close> = wl.tensor { 4096 }
      assert.equal(before + 16384, wl.memory().device_bytes)
    end
    assert.equal(before, wl.memory().device_bytes)
  end)
end)

describe("copies", function()
  h.gpu_it("round-trip pageable host -> device -> host", function()
    local src = wl.host_tensor { 3, 1000, dtype = "i32", init = wl.arange(-5) }
    local d = src:to_device()
    assert.equal("device", d.memory)
    assert.same(src.shape, d.shape)
    local back = d:to_host()
    assert.equal("host", back.memory)
    assert.same(src:totable(), back:totable())
  end)

  h.gpu_it("round-trip pinned host -> device -> pinned host with copy_from", function()
    local before = live_device_bytes().pinned_bytes
    local src = wl.host_tensor { 4096, dtype = "f64", pinned = true, init = wl.arange(0.5) }
    assert.equal("pinned", src.memory)
    assert.equal(before + src.nbytes, wl.memory().pinned_bytes)
    local d = wl.tensor { 4096, dtype = "f64", init = "none" }
    d:copy_from(src)
    local back = d:to_host(true)
    assert.equal("pinned", back.memory)
    assert.same(src:totable(), back:totable())
    src:free()
    back:free()
    assert.equal(before, wl.memory().pinned_bytes)
  end)

  h.gpu_it("copies asynchronously on a stream, complete after s:sync()", function()
    local s = wl.stream()
    local src = wl.host_tensor { 1 << 20, pinned = true, init = wl.arange() }
    local d = wl.tensor { 1 << 20, init = "none" }
    local back = wl.host_tensor { 1 << 20, pinned = true, init = -1 }
    d:copy_from(src, s)
    back:copy_from(d, s)
    s:sync()
    assert.is_true(s:query())
    assert.equal(0, back[1])
    assert.equal((1 << 20) - 1, back[1 << 20])
    assert.same(src:totable(), back:totable())
  end)

  h.gpu_it("device -> device copies and mismatches", function()
    local a = wl.tensor { 64, 2, init = wl.arange() }
    local b = wl.tensor { 128, init = "none" }
    b:copy_from(a)
    assert.same(a:to_host():totable(), b:to_host():totable())
    assert.has_error(function() b:copy_from(wl.tensor { 128, dtype = "f16" }) end)
    assert.has_error(function() b:copy_from(wl.tensor { 127 }) end)
  end)
end)

describe("kernels on the device", function()
  h.gpu_it("are compiled for the device's architecture", function()
    assert.equal(wl.device().arch, kernel("axpy").arch)
  end)

  h.gpu_it("axpy<float> matches the host's result", function()
    local n = 1000 -- not a multiple of the block: the bounds check matters
    local x = wl.tensor { n, init = wl.arange() }
    local y = wl.tensor { n, init = 1 }
    local launch = kernel("axpy"):bind { grid = wl.cdiv(n, 256), block = 256,
      args = { 2.0, x, y, n } }
    launch()
    local got = y:to_host()
    for i = 1, n do assert.equal(1 + 2 * (i - 1), got[i]) end
  end)

  h.gpu_it("a 64x64 matrix multiply matches one computed in Lua", function()
    local n = 64
    local A = wl.tensor { n, n, init = wl.uniform(-1, 1) }
    local B = wl.tensor { n, n, init = wl.uniform(-1, 1) }
    local C = wl.tensor { n, n, init = "none" }
    kernel("matmul"):bind { grid = { n // 16, n // 16 }, block = { 16, 16 },
      args = { A, B, C, n } }()
    local a, b, c = A:to_host(), B:to_host(), C:to_host()
    local worst = 0
    for r = 0, n - 1 do
      for col = 0, n - 1 do
        local acc = 0
        for k = 0, n - 1 do acc = acc + a[r * n + k + 1] * b[k * n + col + 1] end
        worst = math.max(worst, math.abs(acc - c[r * n + col + 1]))
      end
    end
    assert.is_true(worst < 1e-4, "largest difference " .. worst)
  end)

  h.gpu_it("launch:launch(n) queues n launches", function()
    local p = wl.tensor { 1000 }
    kernel("addone"):bind { grid = 4, block = 256, args = { p, 1000 } }:launch(25)
    all_equal(p:to_host():totable(), 25)
  end)

  h.gpu_it("use more than 48 KiB of dynamic shared memory when smem asks for it", function()
    local n = 100 * 1024 // 4
    local input = wl.tensor { n, init = wl.arange() }
    local out = wl.tensor { n, init = -1 }
    local launch = kernel("reverse"):bind { grid = 1, block = 256, smem = 100 * 1024,
      args = { input, out, n } }
    assert.equal(100 * 1024, launch.smem)
    launch()
    local got = out:to_host()
    for i = 1, n do
      if got[i] ~= n - i then error(("element %d is %s, expected %d"):format(i, got[i], n - i)) end
    end
  end)

  h.gpu_it("report attributes and occupancy", function()
    local k = kernel("matmul")
    local a = k.attributes
    assert.is_true(a.registers > 0)
    assert.is_true(a.max_threads_per_block > 0 and a.max_threads_per_block <= 1024)
    assert.is_true(a.binary_version >= 90 and a.ptx_version > 0)
    local o = k:occupancy(256)
    assert.is_true(o.blocks_per_sm >= 1)
    assert.equal(o.blocks_per_sm * 8, o.warps_per_sm)
    assert.is_true(o.occupancy > 0 and o.occupancy <= 1)
  end)

  h.gpu_it("check arguments at bind against the compiled kernel", function()
    local k = kernel("axpy")
    local x, y = wl.tensor { 16 }, wl.tensor { 16 }
    local function refused(args, message)
      local ok, e = pcall(k.bind, k, { grid = 1, block = 16, args = args })
      assert.is_false(ok)
      assert.equal("script", e.kind)
      assert.truthy(tostring(e):find(message, 1, true), tostring(e))
    end
    refused({ 2.0, x, wl.tensor { 16, dtype = "f16" }, 16 },
      "kernel 'axpy<float>' argument 3 (float*, PTX .u64): expected a f32 tensor, got a f16 "
        .. "tensor (device)")
    refused({ 2.0, x, y, 2.5 },
      "argument 4 (int, PTX .u32): expected an integer from -2147483648 to 2147483647, got "
      .. "float 2.5")
    refused({ 2.0, 0, y, 16 },
      "argument 2 (const float*, PTX .u64): expected a tensor, got integer 0")
    refused({ y, x, y, 16 },
      "argument 1 (float, PTX .f32): expected a number, got a f32 tensor (device)")
    refused({ 2.0, wl.host_tensor { 16 }, y, 16 },
      "argument 2 (const float*, PTX .u64): expected device memory")
    refused({ 2.0, x, y }, "kernel 'axpy<float>' takes 4 arguments, bind gave 3")
  end)

  h.gpu_it("accept a pinned host tensor for a pointer", function()
    local p = wl.host_tensor { 256, pinned = true, init = 1 }
    kernel("addone"):bind { grid = 1, block = 256, args = { p, 256 } }()
    wl.sync()
    all_equal(p:totable(), 2)
  end)

  h.gpu_it("refuse a grid too large in y at bind", function()
    local p = wl.tensor { 16 }
    local ok, e = pcall(kernel("addone").bind, kernel("addone"),
      { grid = { 1, 70000 }, block = 16, args = { p, 16 } })
    assert.is_false(ok)
    assert.equal("script", e.kind)
    assert.matches("grid%.y must be a whole number from 1 to 65535, got 70000", tostring(e))
  end)

  h.gpu_it("refuse a launch after a bound tensor was freed", function()
    local p = wl.tensor { 16 }
    local launch = kernel("addone"):bind { grid = 1, block = 16, args = { p, 16 } }
    p:free()
    local ok, e = pcall(launch)
    assert.is_false(ok)
    assert.matches("addone", tostring(e))
    assert.matches("the tensor bound to argument 1 used after free", tostring(e))
  end)

  h.gpu_it("a block above the kernel's __launch_bounds__ is a launch error of kind cuda", function()
    local p = wl.tensor { 256 }
    local launch = kernel("bounded"):bind { grid = 1, block = 256, args = { p } }
    local ok, e = pcall(launch)
    assert.is_false(ok)
    assert.matches("bounded", tostring(e))
    assert.matches("256", tostring(e))
    assert.equal("cuda", e.kind)
  end)

  h.gpu_it("dynamic shared memory above the device's opt-in maximum is a launch error of kind cuda",
    function()
    local n = 16
    local input, out = wl.tensor { n }, wl.tensor { n }
    local launch = kernel("reverse"):bind { grid = 1, block = 32, smem = 300 * 1024,
      args = { input, out, n } }
    local ok, e = pcall(launch)
    assert.is_false(ok)
    assert.matches("reverse", tostring(e))
    assert.equal("cuda", e.kind)
  end)
end)

describe("streams, events and graphs", function()
  h.gpu_it("events time a 2 ms kernel at 2 ms", function()
    local launch = kernel("spin"):bind { grid = 1, block = 1, args = { 2000000 } }
    launch() -- loads the kernel, outside the timed region
    wl.sync()
    local start, stop = wl.event(), wl.event()
    start:record()
    launch()
    stop:record()
    local dt = wl.elapsed(start, stop)
    assert.is_true(dt >= 1.9e-3 and dt <= 3e-3, ("elapsed %.3f ms"):format(dt * 1e3))
    assert.equal(dt, start:elapsed(stop))
    assert.is_true(stop:query())
  end)

  h.gpu_it("a launch bound to a user stream runs there; results after s:sync()", function()
    local s = wl.stream()
    local n = 4096
    local x = wl.tensor { n, init = wl.arange() } -- initialised on wlrun's stream
    local y = wl.tensor { n, init = 10 }
    local ready = wl.event { timing = false }
    ready:record()
    s:wait(ready)
    local launch = kernel("axpy"):bind { grid = wl.cdiv(n, 256), block = 256, stream = s,
      args = { 0.5, x, y, n } }
    launch()
    s:sync()
    local got = y:to_host()
    for i = 1, n do assert.equal(10 + 0.5 * (i - 1), got[i]) end
  end)

  h.gpu_it("a graph of 10 launches replayed once equals 10 eager launches", function()
    local n = 1000
    local eager, graphed = wl.tensor { n }, wl.tensor { n }
    local add_eager = kernel("addone"):bind { grid = 4, block = 256, args = { eager, n } }
    local add_graphed = kernel("addone"):bind { grid = 4, block = 256, args = { graphed, n } }
    for _ = 1, 10 do add_eager() end
    local g = wl.graph(function()
      for _ = 1, 10 do add_graphed() end
    end)
    assert.equal(10, g.nodes)
    all_equal(graphed:to_host():totable(), 0, "before replay")
    g()
    assert.same(eager:to_host():totable(), graphed:to_host():totable())
    all_equal(graphed:to_host():totable(), 10)
    g:launch()
    all_equal(graphed:to_host():totable(), 20)
  end)

  h.gpu_it("a graph refuses allocations and synchronisation inside its function", function()
    local ok, e = pcall(wl.graph, function() wl.tensor { 16 } end)
    assert.is_false(ok)
    assert.matches("inside wl.graph%(%) capture", tostring(e))
    ok, e = pcall(wl.graph, function() wl.sync() end)
    assert.is_false(ok)
    assert.matches("inside wl.graph%(%) capture", tostring(e))
    local t = wl.tensor { 16, init = 3 } -- the device is still usable after a failed capture
    all_equal(t:to_host():totable(), 3)
  end)
end)
