-- The GEMM recipe that scenarios/gemm_sweep.lua and scenarios/gemm_tc.lua run over their shapes:
-- C = A * B, row-major; fp32 kernels (kernels/gemm.cu), the bf16 tensor-core kernel
-- (kernels/gemm_bf16.cu); setup, check and work by variant.
-- Loaded by loadfile(...)(f32_src, bf16_src, check_src): the wl.source of each kernel file
-- (kernels/gemm.cu, gemm_bf16.cu, gemm_check.cu), named by the scenario so that paths read as
-- the scenario's.
local wl = require "wlrun"

local f32_src, bf16_src, check_src = ...

-- the tensor-core kernel: block tile 128 x BN x 32, BN threads, STAGES k-tiles in flight
local function mma(bn, stages)
  return { name = ("gemm_bf16_mma<%d, %d>"):format(bn, stages), bn = bn,
           smem = stages * (128 * 32 + 32 * bn) * 2 } -- bytes of bf16
end

-- Each variant: the dtype of its arithmetic (f32: CUDA cores; tf32, bf16: tensor cores, f32
-- accumulation), the element type of its tensors, the check's bound on the scaled error, the
-- variant it is compared with (cuBLAS of the same dtype; none for cuBLAS itself) and how it is
-- launched: a kernel of ours, or `cublas` (the options of wl.cublas.gemm). Errors of f32
-- accumulation grow like sqrt(K) eps_f32; tf32 rounds the inputs to 10 bits (2^-11 relative)
-- and a bf16 output is rounded once more (2^-8 relative).
local variants = {
  naive = { dtype = "f32", tile = 32, block = { 32, 32 } },
  tiled = { dtype = "f32", tile = 32, block = { 32, 32 } },
  tiled4x4 = { dtype = "f32", tile = 64, block = { 16, 16 } },
  mma_bf16 = { dtype = "bf16", mma = mma(128, 4) },       -- 2 blocks of 4 warps per SM
  mma_bf16_n256 = { dtype = "bf16", mma = mma(256, 3) },  -- 1 block of 8 warps per SM
  cublas_f32 = { dtype = "f32", cublas = { compute = "fp32" } },
  cublas_tf32 = { dtype = "tf32", cublas = { compute = "tf32" } },
  cublas_bf16 = { dtype = "bf16", cublas = { compute = "fp32" } },
}
local by_dtype = { f32 = { tensor = "f32", tol = 1e-4 }, tf32 = { tensor = "f32", tol = 1e-2 },
                   bf16 = { tensor = "bf16", tol = 1e-2 } }
for name, v in pairs(variants) do
  v.tensor, v.tol = by_dtype[v.dtype].tensor, by_dtype[v.dtype].tol
  if not v.cublas then v.baseline = "cublas_" .. v.dtype end
  v.name = name
end

-- the wl.kernel table of a variant's own kernel (nil for cuBLAS), and of the check's kernel for
-- a tensor dtype
local function kernel_spec(v)
  if v.mma then return { bf16_src, name = v.mma.name } end
  if not v.cublas then return { f32_src, name = "gemm_" .. v.name, defines = { TILE = 32 } } end
end
local function check_spec(tensor)
  return { check_src, name = ("gemm_check_rows<%s>"):format(tensor == "bf16" and "__nv_bfloat16"
    or "float") }
end

local function bind(p, s, v)
  if v.cublas then
    return wl.cublas.gemm { a = s.A, b = s.B, c = s.C, m = p.M, n = p.N, k = p.K,
      compute = v.cublas.compute }
  elseif v.mma then
    if p.N % 8 ~= 0 or p.K % 8 ~= 0 then wl.skip(v.name
      .. " needs N and K multiples of 8 (16-byte rows)") end
    local k = wl.kernel(kernel_spec(v))
    return k:bind { grid = { wl.cdiv(p.N, v.mma.bn), wl.cdiv(p.M, 128) }, block = v.mma.bn,
      smem = v.mma.smem,
                    args = { s.A, s.B, s.C, p.M, p.N, p.K } }
  end
  local k = wl.kernel(kernel_spec(v))
  return k:bind { grid = { wl.cdiv(p.N, v.tile), wl.cdiv(p.M, v.tile) }, block = v.block,
                  args = { s.A, s.B, s.C, p.M, p.N, p.K } }
end

local gemm = {}

gemm.variants = { "naive", "tiled", "tiled4x4", "mma_bf16", "cublas_f32", "cublas_tf32",
  "cublas_bf16" }

function gemm.setup(p)
  local v = variants[p.variant]
  local t = v.tensor
  local s = { variant = v }
  s.A = wl.tensor { p.M, p.K, dtype = t, init = wl.normal() }
  s.B = wl.tensor { p.K, p.N, dtype = t, init = wl.normal() }
  s.C = wl.tensor { p.M, p.N, dtype = t }
  s.launch = bind(p, s, v)
  -- the check's: its kernel, and where its one number lands (state: freed with A, B and C)
  s.check = wl.kernel(check_spec(t))
  s.worst, s.worst_host = wl.tensor { 1, dtype = "f64" }, wl.host_tensor { 1, dtype = "f64" }
  return s
end

-- 8 rows of C (kernels/gemm_check.cu says which) against a double-precision reference computed
-- on the device from the same inputs; the kernel compares them there and gives back the largest
-- scaled error alone
function gemm.check(p, s)
  s.worst:fill(0) -- the bits of 0.0
  s.check:bind { grid = wl.cdiv(p.N, 32), block = 256,
    args = { s.A, s.B, s.C, p.M, p.N, p.K, s.worst } }()
  s.worst_host:copy_from(s.worst)
  local err, tol = s.worst_host[1], s.variant.tol
  return err < tol, ("max scaled error %.2e over 8 rows (bound %.0e)"):format(err, tol)
end

function gemm.work(p)
  local v = variants[p.variant]
  local size = v.tensor == "bf16" and 2 or 4
  return { flops = 2 * p.M * p.N * p.K, bytes = size * (p.M * p.K + p.K * p.N + p.M * p.N),
    dtype = v.dtype }
end

-- each variant against cuBLAS of its dtype, where the sweep has that variant
function gemm.baseline(p)
  local b = variants[p.variant].baseline
  return b and { variant = b } or nil
end

-- Asked ahead, while the context is made and the configurations before them run: cuBLAS's first
-- GEMM of each kind, which costs the host up to about 100 ms (its heuristics, docs/cublas.md),
-- on a thread of its own; the kernels, in processes of their own (docs/kernels.md, "Compiled
-- ahead": about 0.2 s each with an empty cache), in the order the configurations need them
function gemm.prepare(configs)
  local kinds, seen, kernels = {}, {}, {}
  for _, p in ipairs(configs) do
    local v = variants[p.variant] -- nil for a variant -p made up: its setup says so
    if v and v.cublas and not seen[v.name] then
      kinds[#kinds + 1] = { dtype = v.tensor, compute = v.cublas.compute }
    end
    if v and not seen[v.name] then
      kernels[#kernels + 1] = kernel_spec(v)
      kernels[#kernels + 1] = check_spec(v.tensor) -- wl.prepare_kernels takes each once
    end
    if v then seen[v.name] = true end
  end
  if #kinds > 0 then wl.cublas.prepare(kinds) end
  wl.prepare_kernels(kernels)
end

-- the scenario over a shape list
function gemm.scenario(o)
  return wl.scenario {
    name = o.name,
    description = o.description,
    params = o.params,
    order = { "variant", "M", "N", "K" },
    -- cold L2 for every sample: the smaller shapes fit in the H200's 60 MiB L2. One warmup
    -- launch, the one the check checks, and for a short kernel the one auto takes to decide its
    -- mode by (the first may hold one-time costs, docs/measuring.md): the GPU stays busy from one
    -- configuration to the next (docs/benchmarks.md: the medians with --warmup 5 against this)
    timing = { flush_l2 = true, adaptive = true, warmup = 1, min_samples = 10, max_time = 3 },
    prepare = gemm.prepare,
    setup = gemm.setup,
    run = "launch",
    check = gemm.check,
    work = gemm.work,
    baseline = gemm.baseline,
  }
end

return gemm
