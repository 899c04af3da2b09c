-- Results documents for the history's specs and docs/history.md's example, made up with a
-- seeded generator: the strict loader reads them as it reads a run's (their stats are
-- computed from their samples as a run's are).
local results = require "wlrun.results"
local stats = require "wlrun.compare.stats"

local F = {}

-- n samples around median, spread by a relative noise (normal, by Box-Muller), from a seed
function F.samples(median, n, noise, seed)
  local rng = stats.rng(seed)
  local xs = {}
  for i = 1, n do
    local u1, u2 = rng:uniform(), rng:uniform()
    xs[i] = median * (1 + noise * math.sqrt(-2 * math.log(1 - u1)) * math.cos(2 * math.pi * u2))
  end
  return xs
end

-- the JSON text of a document: o = {scenario = name, file = script, device = name, started =
-- "2026-...Z", configs = { {params = {...}, samples = {...}} or {params, status = "failed"} },
-- provenance = {...}}
function F.document(o)
  local wl = require "wlrun"
  local configs = {}
  for i, c in ipairs(o.configs) do
    local e = { index = i, params = c.params, status = c.status or "ok" }
    if e.status == "ok" then
      e.mode, e.per, e.warmup, e.samples = "cold", 1, 5, c.samples
      e.stats = wl.stats.summary(c.samples)
    elseif e.status == "failed" then
      e.error, e.kind = "launching kernel: out of memory", "cuda"
    end
    configs[i] = e
  end
  local doc = {
    schema = results.SCHEMA, version = results.VERSION, wlrun = { version = "0.1.0" },
    started = o.started or "2026-01-01T00:00:00Z", finished = o.started or "2026-01-01T00:00:00Z",
      complete = true,
    cwd = o.cwd, scenario = { name = o.scenario or "spin", file = o.file or "spin.lua",
      axes = o.axes },
    device = o.device ~= false and { name = o.device or "NVIDIA H200", arch = "sm_90" } or nil,
    provenance = o.provenance, configurations = configs,
  }
  return results.encode(doc) .. "\n"
end

-- the time stamp of the i-th run of a series, an hour apart
function F.time(i) return ("2026-01-%02dT%02d:00:00Z"):format(1 + (i - 1) // 24, (i - 1) % 24) end

return F
