-- Benchmark (not a test): wlrun's timing of wl.cublas.gemm side by side with the same cuBLAS
-- call timed by a raw C event loop (tests/bench/cublas_raw.c), in one run, in cold, batch and
-- graph modes. The target of issue 16: SGEMM at 4096^3 within 2 % of the raw C loop.
--   wlrun tests/bench/cublas.lua -- build-static/cublas_raw     (from the repository root)
-- More rows: wlrun tests/bench/cublas.lua -- build-static/cublas_raw all
local wl = require "wlrun"

local raw = arg[1] or "build/cublas_raw"
local cases = { { dtype = "f32", size = 4096 } }
if arg[2] == "all" then
  cases[#cases + 1] = { dtype = "tf32", size = 8192 }
  cases[#cases + 1] = { dtype = "bf16", size = 8192 }
  cases[#cases + 1] = { dtype = "f16", size = 8192 }
end
local N = 100

local library = assert(wl.cublas.library())

local function run_raw(c, mode, per)
  local p = assert(io.popen(("%s %s %d %s %d %d"):format(raw, c.dtype, c.size, mode, N, per)))
  local out = p:read("a")
  p:close()
  local m, p10, p90 = out:match("(%S+) (%S+) (%S+) %S+")
  assert(m, raw .. " printed: " .. out)
  return { median = tonumber(m), p10 = tonumber(p10), p90 = tonumber(p90) }
end

local d = wl.device()
print(
  ("cuBLAS GEMM, wlrun against a raw C event loop, %s, driver %d, cuBLAS %d (%s), "
  .. "%d samples"):format(
  d.name, d.driver_version, library.version, library.path, N))
print(("%-16s %-6s %12s %12s %8s %10s %10s"):format("gemm", "mode", "wlrun ms", "raw C ms", "ratio",
  "wlrun TF/s",
  "raw TF/s"))
local missed = {}
for _, c in ipairs(cases) do
  local dtype = c.dtype == "tf32" and "f32" or c.dtype
  local n = c.size
  local A = wl.tensor { n, n, dtype = dtype, init = wl.uniform(-1, 1) }
  local B = wl.tensor { n, n, dtype = dtype, init = wl.uniform(-1, 1) }
  local C = wl.tensor { n, n, dtype = dtype }
  local g = wl.cublas.gemm { a = A, b = B, c = C, m = n, n = n, k = n,
                             compute = c.dtype == "tf32" and "tf32" or nil }
  local flop = 2 * n ^ 3
  for _, mode in ipairs { "cold", "batch", "graph" } do
    local r = wl.bench(g, { mode = mode, warmup = N // 5 + 5, iters = N })
    local rr = run_raw(c, mode, r.per)
    local ratio = r.stats.median / rr.median
    local name = ("%s %d^3"):format(c.dtype, n)
    print(("%-16s %-6s %12.4f %12.4f %8.4f %10.1f %10.1f"):format(name,
      mode .. (r.per > 1 and ("x" .. r.per) or ""),
      r.stats.median * 1e3, rr.median * 1e3, ratio, flop / r.stats.median / 1e12,
        flop / rr.median / 1e12))
    if c.dtype == "f32" and n == 4096 and math.abs(ratio - 1) > 0.02 then
      missed[#missed + 1] = mode end
  end
  A:free(); B:free(); C:free()
end
print(
  ("\ntarget: SGEMM 4096^3 timed by wlrun within 2 %% of the raw C loop in every mode: %s"):format(
  #missed == 0 and "met" or ("MISSED (" .. table.concat(missed, ", ") .. ")")))
