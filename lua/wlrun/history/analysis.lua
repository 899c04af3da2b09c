-- What trend, blame and the gate compute over a series (wlrun.history.query), by commit:
-- plain tables that the printers format and -o writes as JSON (docs/history.md).
--
--   analysis.trend(points)                      each commit's median, its change against the
--                                               first commit and the one before
--   analysis.blame(series, points, opts)        the steps and drifts of wlrun.history.changepoint
--                                               named by their commits
--   analysis.gate(points, found, samples, opts) whether the latest commit is slower than its
--                                               baseline by more than opts.fail_on
local changepoint = require "wlrun.history.changepoint"
local stats = require "wlrun.compare.stats"

local analysis = {}

local function ratio(a, b) return b ~= 0 and a / b - 1 or 0 / 0 end

function analysis.trend(points)
  local out = {}
  for i, p in ipairs(points) do
    out[i] = { commit = p.commit, dirty = p.dirty, time = p.time, runs = #p.rows, median = p.median,
      change_first = i > 1 and ratio(p.median, points[1].median) or nil,
      change_previous = i > 1 and ratio(p.median, points[i - 1].median) or nil }
  end
  return out
end

local function commit_of(p) return { commit = p.commit, dirty = p.dirty, time = p.time } end

-- opts: min_segment, min_effect, alpha, permutations, seed (changepoint.defaults); each
-- configuration's test draws from its own stream (the seed and its identity), so a result does
-- not depend on the other configurations
function analysis.blame(series, points, opts)
  local xs = {}
  for i, p in ipairs(points) do xs[i] = p.median end
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  o.seed = stats.derive_seed(o.seed or changepoint.defaults.seed,
    series.scenario .. "\0" .. series.device .. "\0" .. series.params_json)
  local found = changepoint.analyse(xs, o)
  local steps, drifts = {}, {}
  for _, s in ipairs(found.steps) do
    steps[#steps + 1] = { index = s.at, first = commit_of(points[s.at]), last_before = commit_of(points[s.at - 1]),
      before = s.before, after = s.after, change = s.change, p = s.p }
  end
  for _, d in ipairs(found.drifts) do
    drifts[#drifts + 1] = { from = commit_of(points[d.first]), to = commit_of(points[d.last]), first = d.first,
      last = d.last, change = d.change, p = d.p }
  end
  return { steps = steps, drifts = drifts, segments = found.segments }
end

-- The gate of --fail-on: the latest commit's samples against its baseline, the segment before
-- the latest one (every earlier commit when no step was found), by compare's test (wlrun.compare.stats:
-- slower = Mann-Whitney p < alpha and the bootstrap interval of the ratio of medians above
-- 1 + fail_on). samples(row) gives a run's samples. opts: fail_on, alpha, resamples, seed,
-- baseline_commits (the most recent commits of the baseline that are pooled).
function analysis.gate(points, found, samples, opts)
  local n = #points
  if n < 2 then return { verdict = "no baseline", failed = false } end
  local segs = found.segments
  local last = segs[#segs]
  local first_b, last_b = 1, n - 1
  if last.first > 1 then first_b, last_b = segs[#segs - 1].first, segs[#segs - 1].last end
  first_b = math.max(first_b, last_b - (opts.baseline_commits or 10) + 1)
  local function pooled(from, to)
    local xs = {}
    for i = from, to do
      for _, row in ipairs(points[i].rows) do
        for _, v in ipairs(samples(row)) do xs[#xs + 1] = v end
      end
    end
    return xs
  end
  local x = stats.compare_samples(pooled(first_b, last_b), pooled(n, n),
    { noise = opts.fail_on, alpha = opts.alpha, resamples = opts.resamples, seed = opts.seed })
  return { baseline = { from = commit_of(points[first_b]), to = commit_of(points[last_b]), commits = last_b - first_b + 1 },
    latest = commit_of(points[n]), change = x.change, lo = x.lo, hi = x.hi, p = x.p, verdict = x.verdict,
    reason = x.reason, failed = x.verdict == "slower" and x.change > opts.fail_on }
end

return analysis
