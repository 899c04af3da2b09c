-- The statistics of `wlrun compare` (lua/wlrun/compare/stats.lua, docs/compare.md): the PRNG, the
-- Mann-Whitney U test against hand-computed values, the bootstrap interval and its seed, the
-- verdict rule on synthetic sample sets whose answer is known, the geometric mean; and the
-- matching of configurations (lua/wlrun/compare/document.lua) on documents built here; the
-- tools' parsing of percentages and name lists (lua/wlrun/tools/cli.lua).
local S = require "wlrun.compare.stats"
local document = require "wlrun.compare.document"
local cli = require "wlrun.tools.cli"

local function near(want, got, tol, what)
  assert(math.abs(want - got) <= tol, ("%s: want %.10g, got %.10g"):format(what or "value", want,
    got))
end

-- n samples around `center` with relative spread `sd` (a sum of 12 uniforms: close to normal),
-- deterministic for a seed
local function draw(seed, n, center, sd)
  local rng = S.rng(seed)
  local xs = {}
  for i = 1, n do
    local u = -6
    for _ = 1, 12 do u = u + rng:uniform() end
    xs[i] = center * (1 + sd * u)
  end
  return xs
end

describe("the PRNG", function()
  it("is splitmix64: known outputs for seed 0", function()
    local r = S.rng(0)
    assert.equal(0xE220A8397B1DCDAF, r:next())
    assert.equal(0x6E789E6AA1B965F4, r:next())
    assert.equal(0x06C45D188009454F, r:next())
  end)

  it("gives uniforms in [0, 1) and indices in [1, n], the same for the same seed", function()
    local a, b = S.rng(42), S.rng(42)
    local lo, hi, seen = 1, 0, {}
    for _ = 1, 10000 do
      local u = a:uniform()
      assert.equal(u, b:uniform())
      lo, hi = math.min(lo, u), math.max(hi, u)
      local k = a:index(7)
      b:index(7)
      assert.is_true(k >= 1 and k <= 7 and math.type(k) == "integer")
      seen[k] = true
    end
    assert.is_true(lo >= 0 and lo < 0.01 and hi < 1 and hi > 0.99)
    for k = 1, 7 do assert.is_true(seen[k]) end
  end)

  it("derives a seed per configuration from a text", function()
    assert.equal(S.derive_seed(1, "a"), S.derive_seed(1, "a"))
    assert.are_not.equal(S.derive_seed(1, "a"), S.derive_seed(1, "b"))
    assert.are_not.equal(S.derive_seed(1, "a"), S.derive_seed(2, "a"))
  end)
end)

describe("order statistics and the normal distribution", function()
  it("median and type-7 quantiles", function()
    assert.equal(3, S.median { 5, 1, 3 })
    assert.equal(2.5, S.median { 4, 1, 3, 2 })
    assert.is_true(S.median {} ~= S.median {})
    local s = { 1, 2, 3, 4, 5 }
    assert.equal(1, S.quantile(s, 0))
    assert.equal(5, S.quantile(s, 1))
    assert.equal(2, S.quantile(s, 0.25))
    near(1.4, S.quantile(s, 0.1), 1e-12)
  end)

  it("erfc and the normal tail against tabulated values", function()
    near(1, S.erfc(0), 1e-15)
    near(0.6713732405408726, S.erfc(0.3), 1e-14)
    near(0.4795001221869535, S.erfc(0.5), 1e-13)
    near(0.15729920705028513, S.erfc(1), 1e-15)
    near(2.209049699858544e-05, S.erfc(3), 1e-18)
    near(1.842700792949715, S.erfc(-1), 1e-14)
    near(0.025, S.normal_sf(1.959963984540054), 1e-12)
    near(0.5, S.normal_sf(0), 1e-15)
  end)
end)

describe("Mann-Whitney U", function()
  it("separated sets: U = 0, z and p by hand", function()
    -- n1 = n2 = 5: mean 12.5, sd = sqrt(25 * 11 / 12) = 4.787135539,
    -- z = -(12.5 - 0.5) / 4.787135539 = -2.506718, p = 2 (1 - Phi(2.506718)) = 0.0121858
    local r = S.mann_whitney({ 1, 2, 3, 4, 5 }, { 6, 7, 8, 9, 10 })
    assert.equal(0, r.u)
    assert.equal(12.5, r.mean)
    near(4.787135539, r.sd, 1e-9, "sd")
    near(-2.506718, r.z, 1e-6, "z")
    near(0.0121858, r.p, 1e-7, "p")
    local s = S.mann_whitney({ 6, 7, 8, 9, 10 }, { 1, 2, 3, 4, 5 })
    assert.equal(25, s.u)
    near(r.p, s.p, 1e-15)
  end)

  it("with ties: average ranks and the tie-corrected variance, by hand", function()
    -- a = {1,2,2,3,5,7}, b = {2,4,6,6,8,9,10}: pairs a > b (ties 1/2): 0 + .5 + .5 + 1 + 2 + 4 = 8
    -- ties: three 2s (27 - 3 = 24), two 6s (8 - 2 = 6); N = 13
    -- var = 42/12 (14 - 30 / (13 * 12)) = 48.326923, sd = 6.951757
    -- z = -(21 - 8 - 0.5) / 6.951757 = -1.798107, p = 0.0721601
    local r = S.mann_whitney({ 1, 2, 2, 3, 5, 7 }, { 2, 4, 6, 6, 8, 9, 10 })
    assert.equal(8, r.u)
    assert.equal(21, r.mean)
    near(6.951757, r.sd, 1e-6, "sd")
    near(-1.798107, r.z, 1e-6, "z")
    near(0.0721601, r.p, 1e-7, "p")
  end)

  it("gives p = 1 when every value is the same, and on empty sets", function()
    assert.equal(1, S.mann_whitney({ 3, 3, 3 }, { 3, 3 }).p)
    assert.equal(1, S.mann_whitney({}, { 1, 2 }).p)
  end)
end)

describe("the bootstrap interval of the ratio of medians", function()
  local base, new = draw(1, 40, 1.0, 0.01), draw(2, 40, 1.05, 0.01)

  it("is reproducible with its seed and changes with another", function()
    local a = S.bootstrap_ratio(base, new, { seed = 7 })
    local b = S.bootstrap_ratio(base, new, { seed = 7 })
    local c = S.bootstrap_ratio(base, new, { seed = 8 })
    assert.equal(a.lo, b.lo)
    assert.equal(a.hi, b.hi)
    assert.is_true(a.lo ~= c.lo or a.hi ~= c.hi)
    assert.equal(2000, #a.log_replicates)
  end)

  it("holds the ratio of medians, and narrows with more samples", function()
    local a = S.bootstrap_ratio(base, new)
    near(S.median(new) / S.median(base), a.ratio, 1e-15)
    assert.is_true(a.lo <= a.ratio and a.ratio <= a.hi)
    assert.is_true(a.lo > 1.03 and a.hi < 1.07)
    local big = S.bootstrap_ratio(draw(3, 400, 1.0, 0.01), draw(4, 400, 1.05, 0.01))
    assert.is_true(big.hi - big.lo < a.hi - a.lo)
  end)

  it("of a set against itself is tight around 1", function()
    local a = S.bootstrap_ratio(base, base)
    assert.equal(1, a.ratio)
    assert.is_true(a.lo > 0.99 and a.hi < 1.01)
  end)

  it("takes the number of resamples and the confidence", function()
    local a = S.bootstrap_ratio(base, new, { resamples = 500, confidence = 0.5 })
    local b = S.bootstrap_ratio(base, new, { resamples = 500, confidence = 0.99 })
    assert.equal(500, #a.log_replicates)
    assert.is_true(b.hi - b.lo > a.hi - a.lo)
  end)
end)

describe("verdicts on synthetic sample sets", function()
  local function verdict(base, new, opts)
    local x = S.compare_samples(base, new, opts)
    return x.verdict, x
  end

  it("identical distributions: same", function()
    for seed = 1, 5 do
      local v, x = verdict(draw(seed, 50, 1e-3, 0.01), draw(seed + 100, 50, 1e-3, 0.01))
      assert.equal("same", v, x.reason)
    end
  end)

  it("a 10 % shift: slower", function()
    local v, x = verdict(draw(1, 50, 1e-3, 0.02), draw(2, 50, 1.1e-3, 0.02))
    assert.equal("slower", v, x.reason)
    assert.is_true(x.p < 1e-6)
    assert.is_true(x.lo > 1.02 and math.abs(x.change - 0.10) < 0.02)
  end)

  it("10 % faster: faster", function()
    local v, x = verdict(draw(3, 50, 1e-3, 0.02), draw(4, 50, 0.9e-3, 0.02))
    assert.equal("faster", v, x.reason)
    assert.is_true(x.hi < 0.98)
  end)

  it("noisy, overlapping sets: uncertain", function()
    local v, x = verdict(draw(5, 15, 1e-3, 0.15), draw(6, 15, 1.05e-3, 0.15))
    assert.equal("uncertain", v)
    assert.is_true(x.hi - x.lo > 0.1)
  end)

  it("a tiny but significant shift below the noise threshold: same", function()
    local v, x = verdict(draw(7, 100, 1e-3, 0.002), draw(8, 100, 1.005e-3, 0.002))
    assert.is_true(x.p < 0.01, "the shift is significant")
    assert.equal("same", v)
    assert.equal("significant, but within the noise threshold", x.reason)
    -- with a threshold below the shift it is a slowdown
    assert.equal("slower", (verdict(draw(7, 100, 1e-3, 0.002), draw(8, 100, 1.005e-3, 0.002),
      { noise = 0.001 })))
  end)

  it("too few samples: uncertain", function()
    local v, x = verdict({ 1, 1.01 }, { 2, 2.02 })
    assert.equal("uncertain", v)
    assert.matches("too few samples", x.reason)
  end)
end)

describe("the verdict rule", function()
  local function v(lo, hi, p, new_larger, extra)
    local x = { n1 = 30, n2 = 30, ratio = (lo + hi) / 2, lo = lo, hi = hi, p = p, mean = 450,
                u = new_larger and 100 or 800 }
    for k, val in pairs(extra or {}) do x[k] = val end
    return (S.verdict(x, { noise = 0.02, alpha = 0.01 }))
  end

  it("same when the interval is within the threshold, significant or not", function()
    assert.equal("same", v(0.99, 1.01, 0.5, true))
    assert.equal("same", v(1.005, 1.015, 1e-9, true))
    assert.equal("same", v(0.98, 1.02, 0.5, true))
  end)

  it("slower and faster need significance and the whole interval beyond the threshold", function()
    assert.equal("slower", v(1.03, 1.08, 1e-5, true))
    assert.equal("faster", v(0.90, 0.97, 1e-5, false))
    assert.equal("uncertain", v(1.01, 1.05, 1e-5, true))  -- the interval straddles 1 + t
    assert.equal("uncertain", v(0.95, 0.99, 1e-5, false)) -- straddles 1 - t
    assert.equal("uncertain", v(1.03, 1.08, 0.02, true))  -- not significant
    assert.equal("uncertain", v(0.90, 1.10, 0.4, true))   -- not significant, wide
  end)

  it("counts a p-value at the level itself as significant (p <= alpha)", function()
    assert.equal("slower", v(1.03, 1.08, 0.01, true))
    assert.equal("faster", v(0.90, 0.97, 0.01, false))
    assert.equal("uncertain", v(1.03, 1.08, 0.0100001, true))
  end)

  it("uncertain when the test and the interval disagree, or nothing is finite", function()
    assert.equal("uncertain", v(1.03, 1.08, 1e-5, false))
    assert.equal("uncertain", v(0 / 0, 1.08, 1e-5, true))
  end)
end)

describe("the geometric mean", function()
  it("of ratios, ignoring what is not a positive number", function()
    near(4, S.geomean { 2, 8 }, 1e-12)
    near(1, S.geomean { 0.5, 2 }, 1e-12)
    near(3, S.geomean { 3, 0, -1, 0 / 0 }, 1e-12)
    assert.is_true(S.geomean {} ~= S.geomean {})
  end)

  it("has an interval from the configurations' replicates", function()
    local lo, hi = S.geomean_interval({ { math.log(2), math.log(2) },
      { math.log(8), math.log(8) } })
    near(4, lo, 1e-12)
    near(4, hi, 1e-12)
    local a = S.bootstrap_ratio(draw(1, 30, 1, 0.01), draw(2, 30, 1.1, 0.01))
    local b = S.bootstrap_ratio(draw(3, 30, 1, 0.01), draw(4, 30, 0.9, 0.01), { seed = 2 })
    lo, hi = S.geomean_interval({ a.log_replicates, b.log_replicates })
    local g = S.geomean { a.ratio, b.ratio }
    assert.is_true(lo < g and g < hi)
  end)
end)

describe("matching configurations", function()
  local function doc(name, configs, extra)
    local d = { schema = "wlrun-results", version = 1,
      scenario = { name = name, axes = { "variant", "M" } },
                device = { name = "GPU", driver_version = 1 },
                  settings = { run = { mode = "cold" } },
                configurations = configs }
    for k, v in pairs(extra or {}) do d[k] = v end
    return d
  end
  local function cfg(variant, m, center, seed)
    local xs = draw(seed, 30, center, 0.01)
    return { params = { variant = variant, M = m }, status = "ok", samples = xs,
      stats = { median = S.median(xs) } }
  end

  it("on every parameter by default; the others are listed as in one file only", function()
    local base = doc("g", { cfg("a", 1, 1, 1), cfg("a", 2, 1, 2), cfg("b", 1, 1, 3) })
    local new = doc("g", { cfg("a", 1, 1.2, 4), cfg("a", 2, 1, 5), cfg("c", 1, 1, 6) })
    local r = document.compare(base, new)
    assert.equal(2, #r.configurations)
    assert.equal("slower", r.configurations[1].verdict)
    assert.equal("same", r.configurations[2].verdict)
    assert.equal(1, #r.only_in_base)
    assert.equal("b", r.only_in_base[1].params.variant)
    assert.equal(1, #r.only_in_new)
    assert.equal("c", r.only_in_new[1].params.variant)
    assert.equal(0, #r.warnings)
    assert.same({ "variant", "M" }, { table.unpack(r.parameters) })
  end)

  it("on chosen parameters with match or ignore", function()
    local base = doc("g", { cfg("naive", 1, 1, 1), cfg("naive", 2, 2, 2) })
    local new = doc("g", { cfg("tiled", 1, 0.5, 3), cfg("tiled", 2, 1, 4) })
    assert.equal(0, #document.compare(base, new).configurations)
    for _, opts in ipairs { { match = { "M" } }, { ignore = { "variant" } } } do
      local r = document.compare(base, new, opts)
      assert.equal(2, #r.configurations)
      assert.equal("faster", r.configurations[1].verdict)
      assert.same({ "M" }, { table.unpack(r.parameters) })
      assert.equal("variant", r.ignored_parameters[1].name)
      near(0.5, r.summary.geomean, 0.01)
    end
  end)

  it("refuses configurations that the chosen parameters do not tell apart", function()
    local base = doc("g", { cfg("naive", 1, 1, 1), cfg("tiled", 1, 2, 2) })
    local ok, e = pcall(document.compare, base, base, { match = { "M" } })
    assert.is_false(ok)
    assert.equal("usage", e.kind)
    assert.matches("have the same parameters", tostring(e))
  end)

  it("warns about different devices, drivers, versions and settings", function()
    local base = doc("g", { cfg("a", 1, 1, 1) })
    local new = doc("g", { cfg("a", 1, 1, 2) }, { device = { name = "Other", driver_version = 2 },
      settings = { run = { mode = "graph" } }, wlrun = { version = "9" } })
    local codes = {}
    for _, w in ipairs(document.compare(base, new).warnings) do codes[#codes + 1] = w.code end
    assert.same({ "device-differs", "driver-differs", "wlrun-differs", "settings-differ" }, codes)
  end)

  it("sets the gate on configurations slower by more than the limit", function()
    local base = doc("g", { cfg("a", 1, 1, 1), cfg("a", 2, 1, 2) })
    local new = doc("g", { cfg("a", 1, 1.10, 3), cfg("a", 2, 1.03, 4) })
    local r = document.compare(base, new, { fail_above = 0.05 })
    assert.is_true(r.gate.failed)
    assert.equal(1, #r.gate.configurations)
    assert.equal(1, r.gate.configurations[1].params.M)
    assert.is_false(document.compare(base, new, { fail_above = 0.2 }).gate.failed)
    assert.is_nil(document.compare(base, new).gate)
  end)

  it("gives a ratio without an interval, uncertain, to a configuration without samples", function()
    local base = doc("g", { cfg("a", 1, 1, 1) })
    local new = doc("g", { { params = { variant = "a", M = 1 }, status = "ok",
      stats = { median = 2 } } })
    local r = document.compare(base, new)
    local c = r.configurations[1]
    near(2 / base.configurations[1].stats.median, c.ratio, 1e-12)
    assert.equal("uncertain", c.verdict)
    assert.equal("no samples in NEW", c.reason)
    assert.is_nil(r.summary.geomean_lo)
  end)

  it("parses percentages and name lists", function()
    assert.equal(0.05, cli.percent("5"))
    assert.equal(0.025, cli.percent("2.5%"))
    assert.is_nil(cli.percent("five"))
    assert.same({ "M", "N", "K" }, cli.names("M, N,,K"))
  end)
end)
