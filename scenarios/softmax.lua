-- Row softmax over [rows, cols] in fp32 and bf16 (computed in fp32): one block per row, the row
-- kept in shared memory, block reductions (max, then sum) by warp shuffles, 16-byte loads and
-- stores. cols from 256 to 8192 with rows = 2^26 / cols, so every configuration moves the same
-- number of elements (256 MiB of fp32, 128 MiB of bf16, read once and written once): the sweep
-- shows the effect of the row length alone. In GB/s and % of the device's peak bandwidth
-- (bytes = 2 rows cols sizeof(dtype)). Checked on 4 rows against a softmax computed on the host
-- in double precision (from the same, possibly bf16, inputs), and each of those rows sums to 1.
--   wlrun scenarios/softmax.lua -o out/softmax.json
--   wlrun scenarios/softmax.lua -p dtype=bf16 --filter 'cols >= 2048'
local wl = require "wlrun"

local src = wl.source "kernels/softmax.cu"

local ELEMENTS = 1 << 26
local COLS = wl.pow2(8, 13)
local ROWS = {}
for i, c in ipairs(COLS) do ROWS[i] = ELEMENTS // c end

local types = { -- dtype -> kernel element type, bytes per element, check tolerance
  f32 = { ctype = "float", size = 4, tol = 1e-5 },
  -- 8 significant bits: rounding up to 2^-8
  bf16 = { ctype = "__nv_bfloat16", size = 2, tol = 1e-2 },
}

return wl.scenario {
  name = "softmax",
  description = "row softmax, one block per row, fp32 vs bf16, 2^26 elements at every row length",
  params = {
    dtype = { "f32", "bf16" },
    wl.zip { cols = COLS, rows = ROWS },
  },
  order = { "dtype", "cols", "rows" },
  timing = { mode = "cold", flush_l2 = true, warmup = 10, iters = 50 },

  -- the run's dtypes' kernels, compiled ahead (docs/kernels.md, "Compiled ahead")
  prepare = function(configs)
    local kernels = {}
    for _, p in ipairs(configs) do
      local t = types[p.dtype]
      if t then kernels[#kernels + 1] = { src, name = ("softmax<%s>"):format(t.ctype) } end
    end
    wl.prepare_kernels(kernels)
  end,

  setup = function(p)
    local t = types[p.dtype]
    if p.cols > 49152 then wl.skip("a row must fit in shared memory (at most 49152 columns)") end
    local s = {}
    s.x = wl.tensor { p.rows, p.cols, dtype = p.dtype, init = wl.normal(0, 1) }
    s.y = wl.tensor { p.rows, p.cols, dtype = p.dtype }
    -- about 4 loads of 16 bytes per thread where the row is a whole number of 16-byte vectors,
    -- else 4 elements (see the kernel); whole warps, 32 to 1024 threads
    local v = 16 // t.size
    local loads = p.cols % v == 0 and p.cols // v or p.cols
    local block = math.min(1024, math.max(32, wl.cdiv(wl.cdiv(loads, 4), 32) * 32))
    local k = wl.kernel { src, name = ("softmax<%s>"):format(t.ctype) }
    s.launch = k:bind { grid = p.rows, block = block, smem = 4 * p.cols,
                        args = { s.x, s.y, p.rows, p.cols } }
    return s
  end,

  run = "launch",

  check = function(p, s)
    local tol = types[p.dtype].tol
    local x, y = s.x:to_host(), s.y:to_host()
    local worst, worst_sum, where = 0, 0, nil
    for _, r in ipairs { 1, 2, p.rows // 2 + 1, p.rows } do -- rows, 1-based; the last one too
      local base = (r - 1) * p.cols
      local m = -math.huge
      for c = 1, p.cols do m = math.max(m, x[base + c]) end
      local sum = 0.0
      for c = 1, p.cols do sum = sum + math.exp(x[base + c] - m) end
      local total = 0.0
      for c = 1, p.cols do
        local want, got = math.exp(x[base + c] - m) / sum, y[base + c]
        total = total + got
        local err = math.abs(got - want) / want
        if err ~= err or err > worst then worst, where = err,
          ("row %d col %d: %.6g, expected %.6g"):format(r, c, got, want) end
        if err ~= err then break end -- NaN: reported as such
      end
      worst_sum = math.max(worst_sum, math.abs(total - 1))
    end
    x:free()
    y:free()
    local ok = worst <= tol and worst_sum <= tol -- a NaN fails both comparisons
    return ok, ("max relative error %.2e (%s), max |row sum - 1| %.2e, tolerance %g"):format(worst,
      where or "-", worst_sum, tol)
  end,

  work = function(p)
    return { bytes = 2 * p.rows * p.cols * types[p.dtype].size }
  end,
}
