-- Benchmark (not a test): the same kernels compiled by wlrun's NVRTC (wl.kernel from source)
-- and by nvcc (cubins built by CMake, target wlrun_modules, loaded with wl.kernel{file = ...}),
-- timed in one run on the GPU (docs/kernels.md, "NVRTC and nvcc"):
--   sgemm_warptile  a register-heavy warp-tiled fp32 GEMM (tests/bench/kernels/sgemm_warptile.cu)
--   copy_f32        a bandwidth-bound copy of 2^28 floats (same file)
-- NVRTC and nvcc run in alternating rounds (nvrtc, nvcc, nvrtc, ...); each round is one
-- wl.bench; the verdict is the median over rounds of the paired ratio nvcc/nvrtc, with the
-- spread of those ratios as the noise. Both results are checked against each other first.
--   wlrun tests/bench/nvrtc_vs_nvcc.lua -- PATH/TO/build/modules
local wl = require "wlrun"

local modules = arg[1] or "build/modules"
-- file = is script-relative
if modules:sub(1, 1) ~= "/" then modules = os.getenv("PWD") .. "/" .. modules end
local ROUNDS = 7
local source = wl.source "kernels/sgemm_warptile.cu"

-- NVRTC's kernel, CMake's nvcc cubin, and wl.kernel's own nvcc build (compiler = "nvcc")
local function both(name)
  return wl.kernel { source, name = name }, wl.kernel { file = modules .. "/sgemm_warptile.cubin",
    name = name },
    wl.kernel { source, name = name, compiler = "nvcc" }
end

local cases = {}
do -- GEMM: M = N = K = 4096, 128x128 block tiles of 128 threads
  local n = 4096
  local A = wl.tensor { n, n, dtype = "f32", init = wl.uniform(-1, 1, { seed = 1 }) }
  local B = wl.tensor { n, n, dtype = "f32", init = wl.uniform(-1, 1, { seed = 2 }) }
  local C1, C2 = wl.tensor { n, n, dtype = "f32", init = 0 },
    wl.tensor { n, n, dtype = "f32", init = 0 }
  local rtc, cc, nv = both("sgemm_warptile")
  local function bind(k, C)
    return k:bind { grid = { n // 128, n // 128 }, block = 128,
      args = { n, n, n, 1.0, A, B, 0.0, C } }
  end
  -- a few elements of C against a double-precision dot product on the host
  local function check()
    local a, b, c = A:to_host(), B:to_host(), C1:to_host()
    for _, ij in ipairs { { 0, 0 }, { 1, 4095 }, { 127, 128 }, { 2048, 77 }, { 4095, 4095 },
      { 1000, 3000 } } do
      local i, j, want = ij[1], ij[2], 0.0
      for k = 0, n - 1 do want = want + a[i * n + k + 1] * b[k * n + j + 1] end
      local got = c[i * n + j + 1]
      assert(math.abs(got - want) <= 1e-3 * (1 + math.abs(want)),
        ("sgemm_warptile: C[%d][%d] = %.6g, expected %.6g"):format(i, j, got, want))
    end
  end
  cases[#cases + 1] = { name = "sgemm_warptile 4096^3", rtc = rtc, cc = cc, nv = nv,
    a = bind(rtc, C1), b = bind(cc, C2),
                        n = bind(nv, C2),
                        out = { C1, C2 }, check = check, unit = 2.0 * n * n * n / 1e12,
                          unit_name = "TFLOP/s" }
end
do -- copy: 2^28 floats (1 GiB each way)
  local n = 1 << 28
  local x = wl.tensor { n, dtype = "f32", init = wl.uniform(0, 1, { seed = 3 }) }
  local y1, y2 = wl.tensor { n, dtype = "f32", init = 0 }, wl.tensor { n, dtype = "f32", init = 0 }
  local rtc, cc, nv = both("copy_f32")
  local grid = 132 * 16
  cases[#cases + 1] = { name = "copy_f32 2^28", rtc = rtc, cc = cc, nv = nv,
                        n = nv:bind { grid = grid, block = 256, args = { y2, x, n } },
                        a = rtc:bind { grid = grid, block = 256, args = { y1, x, n } },
                        b = cc:bind { grid = grid, block = 256, args = { y2, x, n } },
                        out = { y1, y2 }, unit = 2.0 * 4 * n / 1e12, unit_name = "TB/s" }
end

-- both compilers' kernels must compute the same thing (the same order of operations)
for _, c in ipairs(cases) do
  c.a()
  c.b()
  wl.sync()
  local u, v = c.out[1]:to_host(), c.out[2]:to_host()
  local worst = 0
  for i = 1, #u, 9973 do worst = math.max(worst, math.abs(u[i] - v[i])) end
  assert(worst <= 1e-3, ("%s: NVRTC and nvcc results differ by %g"):format(c.name, worst))
  if c.check and not wl.compile_only() then c.check() end
end

if wl.compile_only() then -- nothing runs: the kernels compiled, loaded and bound
  for _, c in ipairs(cases) do print(c.name, c.rtc.arch, c.cc.arch, c.a, c.b) end
  return
end
local opts = { warmup = 10, iters = 30 }
print(("%-24s %12s %12s %9s %9s %8s %10s"):format("kernel", "nvrtc", "nvcc", "nvcc/rtc", "spread",
  "regs", "unit"))
for _, c in ipairs(cases) do
  local rt, ct, ratios, own = {}, {}, {}, {}
  for r = 1, ROUNDS do
    rt[r] = wl.bench(c.a, opts).stats.median
    ct[r] = wl.bench(c.b, opts).stats.median
    own[r] = wl.bench(c.n, opts).stats.median / ct[r]
    ratios[r] = ct[r] / rt[r]
  end
  c.own = wl.stats.summary(own).median
  local mr, mc, q = wl.stats.summary(rt).median, wl.stats.summary(ct).median,
    wl.stats.summary(ratios)
  print(("%-24s %9.3f ms %9.3f ms %9.4f %8.2f%% %4d/%-3d %5.2f/%.2f %s"):format(c.name, mr * 1e3,
    mc * 1e3, q.median,
    100 * (q.max - q.min) / q.median, c.rtc.attributes.registers, c.cc.attributes.registers,
      c.unit / mr, c.unit / mc,
    c.unit_name))
end
for _, c in ipairs(cases) do
  print(
    ("%-24s wl.kernel{compiler = \"nvcc\"} (nvcc %s): %d registers, %.4f of the CMake "
    .. "cubin's time"):format(c.name,
    c.nv.compiler_version, c.nv.attributes.registers, c.own))
end
print(
  ("NVRTC %s, arch %s; nvcc cubins from %s; %d alternating rounds of wl.bench{warmup = %d, "
  .. "iters = %d}"):format(
  wl.nvrtc_version(), cases[1].rtc.arch, modules, ROUNDS, opts.warmup, opts.iters))
