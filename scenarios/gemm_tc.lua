-- GEMM at the sizes where the tensor cores run flat out: 4096^3 and 8192^3, the recipe of
-- scenarios/gemm_sweep.lua (lib/gemm.lua) without the naive kernel (minutes at 8192^3), and
-- with the tensor-core kernel's wider tile (mma_bf16_n256: 128 x 256, 3 stages, 8 warps).
-- The numbers of docs/benchmarks.md, "Tensor-core GEMM":
--   wlrun scenarios/gemm_tc.lua -o out/gemm_tc.json
local wl = require "wlrun"
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or ""
local gemm = assert(loadfile(here .. "lib/gemm.lua"))(wl.source "kernels/gemm.cu",
  wl.source "kernels/gemm_bf16.cu",
  wl.source "kernels/gemm_check.cu")

local variants = {}
for _, v in ipairs(gemm.variants) do
  if v ~= "naive" then variants[#variants + 1] = v end
  if v == "mma_bf16" then variants[#variants + 1] = "mma_bf16_n256" end
end

return gemm.scenario {
  name = "gemm_tc",
  description
    = "GEMM at 4096^3 and 8192^3: fp32 tiled and 4x4 register-tiled, bf16 tensor-core mma.sync "
    .. "(128 x 128 and 128 x 256 tiles), cuBLAS fp32, tf32 and bf16",
  params = { variant = variants, wl.zip { M = { 4096, 8192 }, N = { 4096, 8192 },
    K = { 4096, 8192 } } },
}
