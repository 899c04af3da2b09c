-- Sum of n floats, n from 2^20 to 2^28 (4 MiB to 1 GiB): a two-pass reduction by a
-- shared-memory tree, a single pass with warp shuffles and one atomicAdd per block, and a
-- float4 single launch whose last block finishes the sum; in GB/s and % of the device's peak
-- bandwidth (bytes = 4 n: the input, read once). Each sum is checked against a double-precision
-- sum computed on the device (and, at n <= 2^20, that one against a sum on the host).
--   wlrun scenarios/reduction.lua -o out/reduction.json
--   wlrun scenarios/reduction.lua -p variant=vec4 -p n=16777216,268435456
-- What a sample holds: "tree" is two launches (the pass over x, then one block over the
-- partial sums) and "atomic" two (a one-thread kernel that zeroes the output, then the pass),
-- both called from a Lua function; "vec4" is one bound launch, looped in C. The extra launch
-- adds a microsecond or two to a sample: it shows at the small sizes only, where a cold
-- sample is mostly launch overhead anyway (the short-sample warning, up to about 2^25 floats).
-- `--mode graph` times them back to back instead, but without the L2 flush: up to about 2^23
-- floats x then stays in the L2, and the "bandwidth" can exceed the DRAM peak.
local wl = require "wlrun"

local src = wl.source "kernels/reduce.cu"

local BLOCK = 256  -- threads per block of the passes over x
local GRID = 1024  -- at most this many blocks: about one wave of 256-thread blocks on an H200

return wl.scenario {
  name = "reduction",
  description
    = "fp32 sum: two-pass tree vs warp-shuffle atomics vs float4 last-block, 2^20..2^28 floats",
  params = {
    variant = { "tree", "atomic", "vec4" },
    n = wl.pow2(20, 28),
  },
  order = { "n", "variant" },
  timing = { mode = "cold", flush_l2 = true, warmup = 10, iters = 50 },

  -- the kernels of the run's variants and the check's, compiled ahead (docs/kernels.md,
  -- "Compiled ahead")
  prepare = function(configs)
    local names = { tree = { "reduce_tree" }, atomic = { "zero_scalar", "reduce_atomic" },
                    vec4 = { "reduce_vec4" } }
    local kernels = { { src, name = "reduce_reference" } }
    for _, p in ipairs(configs) do
      for _, name in ipairs(names[p.variant] or {}) do
        kernels[#kernels + 1] = { src, name = name }
      end
    end
    wl.prepare_kernels(kernels)
  end,

  setup = function(p)
    local n = p.n
    local s = {}
    -- uniform on [0, 1): no cancellation, so the fp32 sum's relative error stays near 1e-6
    s.x = wl.tensor { n, dtype = "f32", init = wl.uniform(0, 1) }
    s.out = wl.tensor { 1, dtype = "f32" }
    s.reference = wl.kernel { src, name = "reduce_reference" } -- bound and run by the check
    if p.variant == "tree" then
      local grid = math.min(GRID, wl.cdiv(n, BLOCK * 4))
      s.partials = wl.tensor { grid, dtype = "f32" }
      local k = wl.kernel { src, name = "reduce_tree" }
      s.pass1 = k:bind { grid = grid, block = BLOCK, args = { s.x, s.partials, n } }
      s.pass2 = k:bind { grid = 1, block = 1024, args = { s.partials, s.out, grid } }
      s.run = function() s.pass1() s.pass2() end
    elseif p.variant == "atomic" then
      local grid = math.min(GRID, wl.cdiv(n, BLOCK * 4))
      s.zero = wl.kernel { src, name = "zero_scalar" }:bind { grid = 1, block = 32,
        args = { s.out } }
      s.pass = wl.kernel { src, name = "reduce_atomic" }:bind { grid = grid, block = BLOCK,
                                                                args = { s.x, s.out, n } }
      s.run = function() s.zero() s.pass() end
    else
      if n % 4 ~= 0 then wl.skip("vec4 reads float4s: n must be a multiple of 4") end
      local n4 = n // 4
      local grid = math.min(GRID, wl.cdiv(n4, BLOCK * 2))
      s.partials = wl.tensor { grid, dtype = "f32" }
      s.counter = wl.tensor { 1, dtype = "u32" } -- zero; the kernel leaves it at zero
      s.run = wl.kernel { src, name = "reduce_vec4" }:bind { grid = grid, block = BLOCK,
        args = { s.x, s.partials, s.counter, s.out, n4 } }
    end
    return s
  end,

  run = "run",

  check = function(p, s)
    local ref = wl.tensor { 1, dtype = "f64" }
    s.reference:bind { grid = GRID, block = BLOCK, args = { s.x, ref, p.n } }()
    local want, got = ref:to_host()[1], s.out:to_host()[1]
    ref:free()
    if p.n <= 1 << 20 then -- the reference itself, against a plain sum on the host
      local x, host = s.x:to_host(), 0.0
      for i = 1, p.n do host = host + x[i] end
      x:free()
      if math.abs(host - want) > 1e-9 * math.abs(host) then
        return false, ("device reference %.9g, host sum %.9g"):format(want, host)
      end
    end
    -- fp32 partial sums of positive numbers: relative error about 1e-6 at 2^28, bound 1e-5
    local err = math.abs(got - want) / math.abs(want)
    return err <= 1e-5, ("sum %.9g, reference %.9g, relative error %.2e"):format(got, want, err)
  end,

  work = function(p) return { bytes = 4 * p.n } end,
}
