-- GEMM, C = A * B (row-major): fp32 kernels (naive, shared-memory tiled, 4x4 register-tiled)
-- and a bf16 tensor-core kernel (mma.sync, kernels/gemm_bf16.cu), across square and non-square
-- shapes; each checked against a double-precision reference. Columns: FLOP/s, % peak (of the
-- dtype's dense peak, wl.peak_flops) and % of baseline. The recipe is in lib/gemm.lua;
-- scenarios/gemm_tc.lua runs it at 4096^3 and 8192^3.
--   wlrun scenarios/gemm_sweep.lua -o out/gemm.json -o out/gemm.csv
--   wlrun scenarios/gemm_sweep.lua -p variant=tiled -p K=4096 --mode graph
local wl = require "wlrun"
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or ""
local gemm = assert(loadfile(here .. "lib/gemm.lua"))(wl.source "kernels/gemm.cu",
  wl.source "kernels/gemm_bf16.cu",
  wl.source "kernels/gemm_check.cu")

return gemm.scenario {
  name = "gemm_sweep",
  description
    = "GEMM: fp32 naive vs shared-memory tiled vs 4x4 register-tiled, bf16 tensor-core mma.sync; "
    .. "square and non-square",
  params = {
    variant = gemm.variants,
    wl.zip { M = { 1024, 2048, 4096, 4096, 2048 }, N = { 1024, 2048, 4096, 1024, 8192 } },
    K = { 1024, 4096 },
  },
}
