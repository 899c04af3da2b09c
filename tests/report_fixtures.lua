-- Results documents for the HTML report's specs (wlrun report, wlrun.html.*): a small sweep,
-- and a hostile one whose scenario name, parameter values, kernel name, warning, failure and
-- device name are markup and script, as a results file from anywhere could hold. Both are
-- made as a run makes them (results.encode, stats from the samples) and read by the strict
-- loader as a run's are.
local F = require "history_fixtures"
local results = require "wlrun.results"

local R = {}

-- text that would run or load something if it reached the page as markup
R.HOSTILE = [[</script><img src=x onerror="console.error('pwned')"><svg onload=alert(1)>&amp;'"]]

-- a sweep over n (and variant) of `count` samples each; o.slow: a factor on every median
function R.sweep(o)
  o = o or {}
  local configs = {}
  for _, v in ipairs { "naive", "tiled" } do
    for _, n in ipairs { 1024, 4096 } do
      local median = (v == "naive" and 2e-4 or 1e-4) * n / 1024 * (o.slow or 1)
      configs[#configs + 1] = { params = { variant = v, n = n },
        samples = F.samples(median, o.count or 30, 0.01, #configs + 1 + (o.seed or 0)) }
    end
  end
  configs[#configs + 1] = { params = { variant = "naive", n = 65536 }, status = "failed" }
  return F.document { scenario = o.scenario or "gemm", started = o.started,
    axes = { "variant", "n" }, configs = configs }
end

-- the same shape with hostile text everywhere a file's text is shown
function R.hostile()
  local wl = require "wlrun"
  local xs = F.samples(1e-3, 20, 0.01, 7)
  local doc = {
    schema = results.SCHEMA, version = results.VERSION, wlrun = { version = R.HOSTILE },
    command_line = { "wlrun", R.HOSTILE }, started = "2026-01-01T00:00:00Z", complete = true,
    scenario = { name = R.HOSTILE, file = "x.lua", axes = { R.HOSTILE } },
    device = { name = R.HOSTILE, arch = "sm_90" },
    settings = { run = { mode = R.HOSTILE } },
    [R.HOSTILE] = { [R.HOSTILE] = R.HOSTILE }, -- a field no wlrun knows: shown in the provenance
    configurations = {
      { index = 1, params = { [R.HOSTILE] = R.HOSTILE }, status = "ok", mode = "cold", per = 1,
        samples = xs,
        stats = wl.stats.summary(xs), kernels = { { name = R.HOSTILE } },
        warnings = { { code = "noisy", message = R.HOSTILE, hint = R.HOSTILE } } },
      { index = 2, params = { [R.HOSTILE] = "b" }, status = "failed", kind = "cuda",
        error = R.HOSTILE },
      { index = 3, params = { [R.HOSTILE] = "c" }, status = "skipped", reason = R.HOSTILE },
    },
  }
  return results.encode(doc) .. "\n"
end

return R
