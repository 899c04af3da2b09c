-- fp32 GEMM, C = A * B: a naive kernel, a shared-memory tiled one and a register-tiled one,
-- across square and non-square shapes; each checked against a double-precision reference.
--   wlrun scenarios/gemm_sweep.lua -o out/gemm.json -o out/gemm.csv
--   wlrun scenarios/gemm_sweep.lua -p variant=tiled -p K=4096 --mode graph
local wl = require "wlrun"

local src = wl.source "kernels/gemm.cu"

local shapes = { -- variant x block geometry
  naive = { tile = 32, block = { 32, 32 } },
  tiled = { tile = 32, block = { 32, 32 } },
  tiled4x4 = { tile = 64, block = { 16, 16 } },
}

return wl.scenario {
  name = "gemm_sweep",
  description = "fp32 GEMM: naive vs shared-memory tiled vs 4x4 register-tiled, square and non-square",
  params = {
    variant = { "naive", "tiled", "tiled4x4" },
    wl.zip { M = { 1024, 2048, 4096, 4096, 2048 }, N = { 1024, 2048, 4096, 1024, 8192 } },
    K = { 1024, 4096 },
  },
  order = { "variant", "M", "N", "K" },
  -- cold L2 for every sample: the smaller shapes fit in the H200's 60 MiB L2
  timing = { flush_l2 = true, adaptive = true, warmup = 5, min_samples = 10, max_time = 3 },

  setup = function(p)
    local s = {}
    s.A = wl.tensor { p.M, p.K, dtype = "f32", init = wl.normal() }
    s.B = wl.tensor { p.K, p.N, dtype = "f32", init = wl.normal() }
    s.C = wl.tensor { p.M, p.N, dtype = "f32" }
    local g = shapes[p.variant]
    local k = wl.kernel { src, name = "gemm_" .. p.variant, defines = { TILE = 32 } }
    s.launch = k:bind { grid = { wl.cdiv(p.N, g.tile), wl.cdiv(p.M, g.tile) }, block = g.block,
                        args = { s.A, s.B, s.C, p.M, p.N, p.K } }
    return s
  end,

  run = "launch",

  -- 8 rows of C against a double-precision reference computed on the device
  check = function(p, s)
    local rows = wl.host_tensor { 8, dtype = "i32" }
    for i = 1, 8 do rows[i] = (i - 1) * (p.M // 8) + (i * 37) % (p.M // 8) end
    local drows = rows:to_device()
    local R = wl.tensor { 8, p.N, dtype = "f64" }
    local ref = wl.kernel { src, name = "gemm_reference_rows" }
    ref:bind { grid = { wl.cdiv(p.N, 128), 8 }, block = 128, args = { s.A, s.B, R, drows, 8, p.N, p.K } }()
    local c, r = s.C:to_host(), R:to_host()
    local worst = 0
    for i = 1, 8 do
      local row = rows[i]
      for col = 1, p.N do
        local want = r[(i - 1) * p.N + col]
        local got = c[row * p.N + col]
        -- fp32 accumulation of K products: error grows like sqrt(K) * eps * |terms|
        local err = math.abs(got - want) / (math.sqrt(p.K) + math.abs(want))
        if err > worst then worst = err end
      end
    end
    return worst < 1e-4, ("max scaled error %.2e over 8 rows"):format(worst)
  end,

  work = function(p)
    return { flops = 2 * p.M * p.N * p.K, bytes = 4 * (p.M * p.K + p.K * p.N + p.M * p.N) }
  end,
}
