-- The dtype peaks (wlrun.measure.peaks, wl.peak_flops), the metrics work(p) with a dtype gives, and
-- the speed against a baseline configuration (baseline(p), results.relate_baselines) that a
-- results document derives from its own medians.
local h = require "helper"
local wl = require "wlrun"
local peaks = require "wlrun.measure.peaks"
local results = require "wlrun.results"

-- an H200 as wl.device() describes it (132 SMs, 1980 MHz)
local h200 = { name = "NVIDIA H200", arch = "sm_90", sm_count = 132, sm_clock_khz = 1980000,
               peak_fp32_flops = 2 * 128 * 132 * 1980e6, peak_bandwidth = 4.8e12 }

describe("wlrun.measure.peaks", function()
  it("gives sm_90's dense peaks: 256, 2048 and 4096 FLOP per clock per SM", function()
    local p = peaks.of(h200)
    assert.near(66.9e12, p.f32, 0.1e12)
    assert.near(535.3e12, p.tf32, 0.1e12)
    assert.near(1070.5e12, p.bf16, 0.1e12)
    assert.equal(p.bf16, p.f16)
    assert.equal(h200.peak_fp32_flops, p.f32) -- the C side's FP32 lanes agree
    assert.equal(p.bf16, peaks.flops(h200, "bf16"))
  end)

  it("claims nothing for an architecture it does not list", function()
    assert.same({}, peaks.of { arch = "sm_75", sm_count = 40, sm_clock_khz = 1590000 })
    assert.is_nil(peaks.flops({ arch = "sm_100", sm_count = 148, sm_clock_khz = 1965000 }, "bf16"))
    assert.same({}, peaks.of(nil))
  end)

  it("wl.peak_flops refuses what is not a device table", function()
    local ok, e = pcall(wl.peak_flops, "sm_90")
    assert.is_false(ok)
    assert.matches("wl.peak_flops: expected a table from wl.device%(%), got a string",
      tostring(e.message or e))
    assert.same(peaks.of(h200), wl.peak_flops(h200))
  end)
end)

describe("work(p) with a dtype", function()
  local function entry_of(w, median)
    local e = results.entry { index = 1, params = { n = 1 } }
    e.status, e.stats = "ok", { median = median or 1e-3 }
    results.record_work(e, w, h200)
    return e
  end

  it("gives % of the dtype's peak instead of % of FP32 peak", function()
    local e = entry_of { flops = 1070.4e9 / 2, dtype = "bf16" }
    assert.near(0.5, e.metrics.peak_fraction, 1e-3)
    assert.is_nil(e.metrics.peak_fp32_fraction)
    assert.equal("bf16", e.work.dtype)
    e = entry_of { flops = 1e9 }
    assert.is_nil(e.metrics.peak_fraction)
    assert.near(1e12 / h200.peak_fp32_flops, e.metrics.peak_fp32_fraction, 1e-9)
  end)

  it("leaves the peak out where the architecture has none", function()
    local e = results.entry { index = 1, params = { n = 1 } }
    e.stats = { median = 1e-3 }
    results.record_work(e, { flops = 1e9, dtype = "tf32" },
      { arch = "sm_75", sm_count = 40, sm_clock_khz = 1590000 })
    assert.equal(1e12, e.metrics.flop_per_s)
    assert.is_nil(e.metrics.peak_fraction)
  end)

  it("refuses a dtype it does not know", function()
    for _, bad in ipairs { "fp8", 16, true } do
      local ok, e = pcall(results.check_work, { flops = 1, dtype = bad })
      assert.is_false(ok)
      assert.matches("work%(p%)%.dtype must be one of f32, tf32, bf16, f16, got " .. tostring(bad),
        e.message)
    end
  end)
end)

describe("results.relate_baselines", function()
  local function cfg(i, variant, median, status)
    return { index = i, params = { variant = variant, n = 4 }, status = status or "ok",
      stats = { median = median }, samples = { median },
             metrics = { flop_per_s = 1 / median }, baseline = { variant = "lib", n = 4 } }
  end

  it("is the baseline's median over the configuration's, in the document and after a load",
    function()
    local doc = { schema = "wlrun-results", version = 1, complete = true,
      scenario = { name = "s", axes = { "variant", "n" } },
                  configurations = { cfg(1, "mine", 4e-3), cfg(2, "lib", 1e-3),
                    cfg(3, "slow", 1e-2) } }
    results.relate_baselines(doc)
    assert.near(0.25, doc.configurations[1].metrics.baseline_fraction, 1e-12)
    assert.equal(1, doc.configurations[2].metrics.baseline_fraction)
    assert.near(0.1, doc.configurations[3].metrics.baseline_fraction, 1e-12)
    local back = results.decode(results.render(doc), "x.json")
    assert.same(doc.configurations, back.configurations)
  end)

  it("gives none where the baseline failed, was skipped or is not in the document", function()
    local lonely = cfg(1, "mine", 4e-3)
    lonely.baseline = { variant = "absent", n = 4 }
    local doc = { configurations = { cfg(2, "mine", 4e-3), cfg(3, "lib", 1e-3, "failed"), lonely } }
    doc.configurations[1].metrics.baseline_fraction = 7 -- stale: computed again
    results.relate_baselines(doc)
    for _, c in ipairs(doc.configurations) do assert.is_nil(c.metrics.baseline_fraction) end
  end)
end)

describe("the shipped GEMM scenarios under --compile-only", function()
  it("compare each kernel with cuBLAS of its dtype at the same shape, and cuBLAS with nothing",
    function()
    local dir = h.tmpdir()
    local r = h.run("scenarios/gemm_sweep.lua --compile-only --arch sm_90 -p K=1024 -o "
      .. h.quote(dir .. "/g.json"),
      { cwd = h.source_dir })
    assert.equal(0, r.code, r.stderr)
    local doc = results.load(dir .. "/g.json")
    local want = { naive = "cublas_f32", tiled = "cublas_f32", tiled4x4 = "cublas_f32",
      mma_bf16 = "cublas_bf16" }
    local seen = 0
    for _, c in ipairs(doc.configurations) do
      assert.equal("compiled", c.status)
      local p, b = c.params, c.baseline
      if want[p.variant] then
        assert.same({ variant = want[p.variant], M = p.M, N = p.N, K = p.K }, b)
        seen = seen + 1
      else
        assert.matches("^cublas_", p.variant)
        assert.is_nil(b)
      end
    end
    assert.equal(20, seen)
  end)
end)
