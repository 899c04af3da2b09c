-- GPU specs of host work (docs/libraries.md): a user's own library (tests/fixtures/userlib,
-- built by CMake: WLRUN_USERLIB) and the runtime operations of wl.ops give the right numbers
-- and are timed in every mode, against the same work done another way in the same run; a
-- function that fails is reported with the work's name and exit code 5. Elsewhere each is
-- reported as pending by name. Nothing at file level touches the device.
local h = require "helper"
local wl = require "wlrun"

local LIB = os.getenv("WLRUN_USERLIB")
local MODES = { "cold", "batch", "graph", "host" }

local SAXPY_SOURCE = [[
extern "C" __global__ void saxpy(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
]]

local lib_cache
local function lib()
  assert(LIB, "WLRUN_USERLIB: the path of libwlrun_userlib.so (ctest and run-on-gpu.sh set it)")
  lib_cache = lib_cache or wl.library { file = LIB }
  return lib_cache
end

local function saxpy()
  return lib():func { name = "saxpy", params = "float* y, const float* x, float a, int n" }
end

describe("host work on a GPU", function()
  h.gpu_it("saxpy from a user's library gives a x + y", function()
    local n = 1000
    local x = wl.tensor { n, init = wl.arange() }
    local y = wl.tensor { n, init = 1 }
    saxpy():bind { args = { y, x, 2.0, n } }()
    local got = y:to_host():totable()
    for i = 1, n do assert.equal(2 * (i - 1) + 1, got[i]) end
    lib():func { name = "scale" }:bind { args = { y, 0.5, n } }() -- params from wlrun_params_scale
    got = y:to_host():totable()
    assert.equal(0.5, got[1])
    assert.equal((2 * (n - 1) + 1) * 0.5, got[n])
  end)

  h.gpu_it("saxpy from a user's library is timed in every mode like the same kernel from NVRTC",
    function()
    local n = 16 * 1024 * 1024
    local x, y = wl.tensor { n, init = 1 }, wl.tensor { n, init = 0 }
    local host = saxpy():bind { args = { y, x, 1.0, n } }
    local kernel = wl.kernel { SAXPY_SOURCE, name = "saxpy" }:bind {
      grid = wl.cdiv(n, 256), block = 256, args = { y, x, 1.0, n } }
    for _, mode in ipairs(MODES) do
      local a = wl.bench(host, { mode = mode, warmup = 10, iters = 50 })
      local b = wl.bench(kernel, { mode = mode, warmup = 10, iters = 50 })
      assert.equal(mode, a.mode)
      print(
        ("\n    saxpy 16M floats, %s: library %.2f us, NVRTC kernel %.2f us (%.1f GB/s)"):format(
        mode, a.stats.median * 1e6, b.stats.median * 1e6, 12 * n / a.stats.median / 1e9))
      -- the same machine code launched from another place: GPU times agree (host mode adds the
      -- function call to a round trip)
      assert.is_true(math.abs(a.stats.median - b.stats.median) <= 0.1 * b.stats.median, mode)
    end
  end)

  h.gpu_it("memcpy of 1 GiB device to device is timed in every mode, graph included", function()
    local bytes = 1 << 30
    local x = wl.tensor { bytes // 4, init = 1 }
    local y = wl.tensor { bytes // 4, init = "none" }
    local copy = wl.ops.memcpy { dst = y, src = x }
    local s = wl.current_stream() -- where the events of a function's samples go
    local raw = function() y:copy_from(x, s) end -- the same copy, from Lua: batch mode
    local rates = {}
    for _, mode in ipairs(MODES) do
      local r = wl.bench(copy, { mode = mode, warmup = 3, iters = 20 })
      assert.equal(mode, r.mode)
      rates[mode] = bytes / r.stats.median / 1e9
      print(
        ("\n    memcpy 1 GiB device to device, %s: %.1f us, %.1f GB/s copied (%.1f GB/s of "
        .. "traffic)"):format(
        mode, r.stats.median * 1e6, rates[mode], 2 * rates[mode]))
    end
    local r = wl.bench(raw, { mode = "batch", warmup = 3, iters = 20, batch = 1 })
    print(("\n    t:copy_from of the same 1 GiB, batch: %.1f GB/s"):format(
      bytes / r.stats.median / 1e9))
    assert.is_true(rates.batch > 300, "an H200 copies far faster than 300 GB/s")
    -- a device-to-device copy captured in a graph is a memcpy node, which the driver runs its own
    -- way: 1.38 TB/s against 2.13 TB/s queued on a stream, on an H200 (docs/libraries.md); it is
    -- timed, not held to the stream's rate
    assert.is_true(rates.graph > 300, "graph mode copies far faster than 300 GB/s too")
    assert.is_true(math.abs(rates.cold - rates.batch) <= 0.05 * rates.batch)
    assert.is_true(math.abs(bytes / r.stats.median / 1e9 - rates.batch) <= 0.05 * rates.batch)
  end)

  h.gpu_it("wl.ops copy and set the right bytes, between device and pinned host memory too",
    function()
    local x = wl.tensor { 256, init = wl.arange() }
    local p = wl.host_tensor { 256, pinned = true }
    local y = wl.tensor { 256, init = 0 }
    wl.ops.memcpy { dst = p, src = x }()
    wl.ops.memcpy { dst = y, src = p, bytes = 64 }() -- the first 16 floats
    wl.sync()
    assert.equal(255, p[256])
    local got = y:to_host():totable()
    assert.equal(15, got[16])
    assert.equal(0, got[17])
    local b = wl.tensor { 64, dtype = "u8", init = 0 }
    wl.ops.memset { dst = b, value = 7, bytes = 32 }()
    -- rows of 4 bytes, 16 apart: bytes 0-3, 16-19, 32-35, 48-51 of the first 64
    wl.ops.memset2d { dst = b, pitch = 16, value = 9, width = 4, height = 4 }()
    got = b:to_host():totable()
    assert.same({ 9, 9, 9, 9, 7 }, { got[1], got[2], got[3], got[4], got[5] })
    assert.same({ 9, 7, 0, 9 }, { got[17], got[21], got[37], got[49] })
    -- columns 2-3 of a 4x4 f32 matrix (rows 16 bytes apart, a strided view) into a dense 4x2
    local m = wl.tensor { 4, 4, init = wl.arange() }
    local c = wl.tensor { 4, 2, init = 0 }
    local cols = m:view { offset = 2, shape = { 4, 2 }, strides = { 4, 1 } }
    wl.ops.memcpy2d { dst = c, dpitch = 8, src = cols, spitch = 16, width = 8, height = 4 }()
    assert.same({ 2, 3, 6, 7, 10, 11, 14, 15 }, c:to_host():totable())
    -- a contiguous view as a copy's destination: rows 2-3 of m from c
    wl.ops.memcpy { dst = m:rows(2, 3), src = c }()
    assert.same({ 2, 3, 6, 7, 10, 11, 14, 15 }, m:rows(2, 3):to_host():totable())
  end)

  h.gpu_it("host work that may not be captured is timed in batch mode when graph is asked",
    function()
    local y = wl.tensor { 1024, init = 1 }
    local w = lib():func { name = "scale_and_wait",
      capturable = false }:bind { args = { y, 1.0, 1024 } }
    local r = wl.bench(w, { mode = "graph", warmup = 3, iters = 10 })
    assert.equal("batch", r.mode)
    assert.matches("may not be captured in a CUDA graph: batch mode", table.concat(r.notes, "\n"))
    local a = wl.bench(w, { mode = "auto", warmup = 3, iters = 10 })
    assert.is_not.equal("graph", a.mode)
  end)

  h.gpu_it("a function that returns nonzero is a clear error, exit code 5", function()
    local f = lib():func { name = "fails" }:bind { args = { 42 } }
    local ok, err = pcall(f)
    assert.is_false(ok)
    assert.equal("cuda", err.kind)
    assert.matches("host work 'fails in libwlrun_userlib.so' %(library%) failed: it returned 42",
      err.message)
    local bad = lib():func { name = "bad_launch" }:bind { args = { wl.tensor { 4 } } }
    ok, err = pcall(bad)
    assert.is_false(ok)
    -- what the runtime answers for a block of 2048 threads (cudaErrorInvalidValue on an H200
    -- with CUDA 13.0), named after the number the function returned
    assert.matches("it returned %d+ %(cudaError%a+: ", err.message)
    local r = h.run_script(([[
local wl = require "wlrun"
local lib = wl.library { file = %q }
wl.bench(lib:func { name = "fails" }:bind { args = { 3 } }, { mode = "batch" })
]]):format(LIB))
    print("\n    " .. r.stderr:match("^[^\n]*"))
    assert.equal(5, r.code)
    assert.matches("host work 'fails in libwlrun_userlib.so' %(library%) failed: it returned 3",
      r.stderr)
  end)

  -- docs/measuring.md: an error in the middle of blocked cold samples, with a block on the second
  -- stream, releases the blocks held and orders the work's stream after them
  h.gpu_it(
    "a function that fails in the second block of blocked samples leaves nothing held or unordered",
    function()
    local stamp = wl.kernel { [[
extern "C" __global__ void stamp(long long *log, unsigned int *count, int item) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < 5000);
  unsigned int i = atomicAdd(count, 1u);
  log[3 * i] = t0, log[3 * i + 1] = t, log[3 * i + 2] = item;
}]], name = "stamp" }
    local log, count = wl.tensor { 3 * 128, dtype = "i64" }, wl.tensor { 1, dtype = "u32" }
    local function item(i) return stamp:bind { grid = 1, block = 1, args = { log, count, i } } end
    -- the first block: 16 launches of item 1; the second, on the second stream: 3 of item 2, then
    -- host work that fails
    local list = {}
    for i = 1, 16 do list[i] = item(1) end
    for i = 17, 19 do list[i] = item(2) end
    list[20] = lib():func { name = "fails" }:bind { args = { 7 } }
    local engine = require "wlrun.engine"
    local ok, err = pcall(engine.time_cold, list, 20, true, true)
    assert.is_false(ok)
    assert.matches("it returned 7", err.message)
    item(9)() -- on the work's stream, after the failed measurement
    wl.sync()
    local n, t = count:to_host()[1], log:to_host()
    assert.equal(20, n) -- 16, 3, and the one after
    local after
    for i = 0, n - 1 do if t[3 * i + 3] == 9 then after = t[3 * i + 1] end end
    for i = 0, n - 1 do
      if t[3 * i + 3] == 2 then
        -- released with the error, not 100 ms later when its blocking kernel gives up, and before
        -- what the work's stream runs next
        assert.is_true(t[3 * i + 2] <= after,
          ("a sample of the failed block ended %.1f us after the launch that followed "
          .. "it began"):format((t[3 * i + 2] - after) / 1e3))
      end
    end
    -- the next measurement counts no blocking kernel that gave up
    local r = engine.time_cold(item(1), 48, true, true)
    assert.same({ gave_up = 0, kept = 0 }, r.blocked)
    log:free(); count:free()
  end)
end)
