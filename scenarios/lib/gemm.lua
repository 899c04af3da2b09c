-- The GEMM recipe that scenarios/gemm_sweep.lua and scenarios/gemm_tc.lua run over their shapes:
-- C = A * B, row-major; fp32 kernels (kernels/gemm.cu), the bf16 tensor-core kernel
-- (kernels/gemm_bf16.cu); setup, check and work by variant.
-- Loaded by loadfile(...)(f32_src, bf16_src): the wl.source of each kernel file, named by the
-- scenario so that paths read as the scenario's.
local wl = require "wlrun"

local f32_src, bf16_src = ...

-- the tensor-core kernel: block tile 128 x BN x 32, BN threads, STAGES k-tiles in flight
local MMA = { bn = 128, stages = 4 }
MMA.name = ("gemm_bf16_mma<%d, %d>"):format(MMA.bn, MMA.stages)
MMA.smem = MMA.stages * (128 * 32 + 32 * MMA.bn) * 2 -- bytes of bf16

-- Each variant: the dtype of its arithmetic (f32: CUDA cores; bf16: tensor cores, f32
-- accumulation) and its launch. `tol` bounds the check's scaled error (see check below).
local variants = {
  naive = { dtype = "f32", tile = 32, block = { 32, 32 } },
  tiled = { dtype = "f32", tile = 32, block = { 32, 32 } },
  tiled4x4 = { dtype = "f32", tile = 64, block = { 16, 16 } },
  mma_bf16 = { dtype = "bf16", tile_m = 128, tile_n = MMA.bn, block = MMA.bn },
}

-- the element type of the tensors and the check's bound, by dtype: f32 accumulation of K
-- products errs like sqrt(K) eps_f32; a bf16 output is rounded once more (2^-8 relative)
local tensors = { f32 = { dtype = "f32", tol = 1e-4 }, bf16 = { dtype = "bf16", tol = 1e-2 } }

local function bind(p, s, v)
  if v.dtype == "bf16" then
    if p.N % 8 ~= 0 or p.K % 8 ~= 0 then wl.skip("mma_bf16 needs N and K multiples of 8 (16-byte rows)") end
    local k = wl.kernel { bf16_src, name = MMA.name }
    return k:bind { grid = { wl.cdiv(p.N, v.tile_n), wl.cdiv(p.M, v.tile_m) }, block = v.block, smem = MMA.smem,
                    args = { s.A, s.B, s.C, p.M, p.N, p.K } }
  end
  local k = wl.kernel { f32_src, name = "gemm_" .. p.variant, defines = { TILE = 32 } }
  return k:bind { grid = { wl.cdiv(p.N, v.tile), wl.cdiv(p.M, v.tile) }, block = v.block,
                  args = { s.A, s.B, s.C, p.M, p.N, p.K } }
end

local gemm = {}

gemm.variants = { "naive", "tiled", "tiled4x4", "mma_bf16" }

function gemm.setup(p)
  local v = variants[p.variant]
  local t = tensors[v.dtype].dtype
  local s = { dtype = t }
  s.A = wl.tensor { p.M, p.K, dtype = t, init = wl.normal() }
  s.B = wl.tensor { p.K, p.N, dtype = t, init = wl.normal() }
  s.C = wl.tensor { p.M, p.N, dtype = t }
  s.launch = bind(p, s, v)
  return s
end

-- 8 rows of C against a double-precision reference computed on the device from the same inputs
function gemm.check(p, s)
  local rows = wl.host_tensor { 8, dtype = "i32" }
  for i = 1, 8 do rows[i] = (i - 1) * (p.M // 8) + (i * 37) % (p.M // 8) end
  local drows = rows:to_device()
  local R = wl.tensor { 8, p.N, dtype = "f64" }
  local ref = wl.kernel { s.dtype == "bf16" and bf16_src or f32_src,
                          name = s.dtype == "bf16" and "gemm_bf16_reference_rows" or "gemm_reference_rows" }
  ref:bind { grid = { wl.cdiv(p.N, 128), 8 }, block = 128, args = { s.A, s.B, R, drows, 8, p.N, p.K } }()
  local c, r = s.C:to_host(), R:to_host()
  local worst = 0
  for i = 1, 8 do
    local row = rows[i]
    for col = 1, p.N do
      local want = r[(i - 1) * p.N + col]
      local got = c[row * p.N + col]
      -- error relative to the size of the terms: the sum of K products of N(0, 1) values is about sqrt(K)
      local err = math.abs(got - want) / (math.sqrt(p.K) + math.abs(want))
      if err > worst or err ~= err then worst = err end
    end
  end
  local tol = tensors[s.dtype].tol
  return worst < tol, ("max scaled error %.2e over 8 rows (bound %.0e)"):format(worst, tol)
end

function gemm.work(p)
  local v = variants[p.variant]
  local size = v.dtype == "bf16" and 2 or 4
  return { flops = 2 * p.M * p.N * p.K, bytes = size * (p.M * p.K + p.K * p.N + p.M * p.N), dtype = v.dtype }
end

-- the scenario over a shape list
function gemm.scenario(o)
  return wl.scenario {
    name = o.name,
    description = o.description,
    params = o.params,
    order = { "variant", "M", "N", "K" },
    -- cold L2 for every sample: the smaller shapes fit in the H200's 60 MiB L2
    timing = { flush_l2 = true, adaptive = true, warmup = 5, min_samples = 10, max_time = 3 },
    setup = gemm.setup,
    run = "launch",
    check = gemm.check,
    work = gemm.work,
  }
end


return gemm
