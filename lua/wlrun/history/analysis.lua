-- What trend, blame and the gate compute over a series (wlrun.history.query), by commit:
-- plain tables that the printers format and -o writes as JSON (docs/history.md).
--
--   analysis.trend(points)                      each commit's median, its change against the
--                                               first commit and the one before
--   analysis.blame(series, points, opts)        the steps and drifts of wlrun.history.changepoint
--                                               named by their commits
--   analysis.gate(points, found, samples, opts) whether the latest commit is slower than its
--                                               baseline by more than opts.fail_on
--   analysis.pinned_gate(points, found_of, samples, opts)  the same, the baseline pinned at the
--                                               first commit that failed since the accepted one
--   analysis.branch_gate(points, base, found_of, samples, opts)  a branch's latest commit against
--                                               the main line's level at the merge base
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
    steps[#steps + 1] = { index = s.at, first = commit_of(points[s.at]),
      last_before = commit_of(points[s.at - 1]),
      before = s.before, after = s.after, change = s.change, p = s.p }
  end
  for _, d in ipairs(found.drifts) do
    drifts[#drifts + 1] = { from = commit_of(points[d.first]), to = commit_of(points[d.last]),
      first = d.first,
      last = d.last, change = d.change, p = d.p }
  end
  return { steps = steps, drifts = drifts, segments = found.segments }
end

-- The gate of --fail-on: the latest commit's samples against its baseline, the segment before
-- the latest one (every earlier commit when no step was found), by compare's test
-- (wlrun.compare.stats:
-- slower = Mann-Whitney p <= alpha and the bootstrap interval of the ratio of medians above
-- 1 + fail_on). samples(row) gives a run's samples. opts: fail_on, alpha, resamples, seed,
-- baseline_commits (the most recent commits of the baseline that are pooled).
-- the latest commit of points against the commits first_b..last_b, by compare's test
local function judge(points, first_b, last_b, samples, opts)
  local n = #points
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
  return { baseline = { from = commit_of(points[first_b]), to = commit_of(points[last_b]),
    commits = last_b - first_b + 1 },
    latest = commit_of(points[n]), change = x.change, lo = x.lo, hi = x.hi, p = x.p,
      verdict = x.verdict,
    reason = x.reason, failed = x.verdict == "slower" and x.change > opts.fail_on }
end

-- the baseline of the latest commit of points: the segment before the latest one when a step was
-- found, else every earlier commit; the most recent baseline_commits of it. Where no step was
-- found but a slowing drift that reaches the latest commit, the baseline is the level where the
-- drift began (its first min_segment commits): else a slow regression, a percent a commit, is
-- always within --fail-on of its own recent past and never fails. (After a step, the segment
-- before the step stays the baseline: it is before the drift too.)
local function baseline_of(points, found, opts)
  local n, segs = #points, found.segments
  local first_b, last_b = 1, n - 1
  if segs[#segs].first > 1 then first_b, last_b = segs[#segs - 1].first, segs[#segs - 1].last end
  local drift = found.drifts and found.drifts[#found.drifts]
  if #segs == 1 and drift and drift.change > 0 and drift.last >= n - 1 and drift.first < n - 1 then
    return drift.first, math.min(n - 1, drift.first + (opts.min_segment
      or changepoint.defaults.min_segment) - 1)
  end
  return math.max(first_b, last_b - (opts.baseline_commits or 10) + 1), last_b
end

function analysis.gate(points, found, samples, opts)
  if #points < 2 then return { verdict = "no baseline", failed = false } end
  local first_b, last_b = baseline_of(points, found, opts)
  return judge(points, first_b, last_b, samples, opts)
end

local function slice(xs, from, to) return table.move(xs, from, to, 1, {}) end

-- The gate with its baseline pinned (issue 38: a gate that cannot flap): the commits from the
-- accepted one (opts.accepted: its index; 1 when none) are replayed as the gate saw them, commit
-- by commit; at the first commit whose gate failed, its baseline is pinned, and every later
-- commit is judged against that baseline, until someone accepts a new level (wlrun history
-- accept). So a regression stays a failure while it lasts, however long, even where the
-- change-point test cannot yet name its step. found_of(points) gives blame's segments of a
-- prefix. Only a commit whose median is above (1 + fail_on) times the lowest median before it
-- can fail (a pooled baseline's median is at least the lowest of its commits'): the others are
-- not replayed.
function analysis.pinned_gate(points, found_of, samples, opts)
  local view = slice(points, opts.accepted or 1, #points)
  local n = #view
  if n < 2 then return { verdict = "no baseline", failed = false,
    accepted = opts.accepted and commit_of(points[opts.accepted]) } end
  local lowest = view[1].median
  for k = 2, n - 1 do
    if view[k].median > (1 + opts.fail_on) * lowest then
      local prefix = slice(view, 1, k)
      local first_b, last_b = baseline_of(prefix, found_of(prefix), opts)
      local g = judge(prefix, first_b, last_b, samples, opts)
      if g.failed then
        local r = judge(slice(view, 1, n), first_b, last_b, samples, opts)
        -- the first commit that failed against this baseline
        r.pinned = { since = commit_of(view[k]) }
        r.accepted = opts.accepted and commit_of(points[opts.accepted])
        return r
      end
    end
    lowest = math.min(lowest, view[k].median)
  end
  local r = analysis.gate(view, found_of(view), samples, opts)
  r.accepted = opts.accepted and commit_of(points[opts.accepted])
  return r
end

-- The gate of a branch (docs/history.md, "Branches"): points are the main line's up to the merge
-- base (1..base) and then the branch's own; the branch's latest commit is judged against the
-- level of the main line at the merge base — the last segment that blame finds in 1..base, its
-- most recent baseline_commits — a baseline pinned there, so the gate cannot flap whatever the
-- branch's commits do. A level accepted on the branch (opts.accepted after base) is the baseline
-- from there, as on the main line. base: nil when the branch has no run of its own here.
function analysis.branch_gate(points, base, found_of, samples, opts)
  if base == nil then return { verdict = "no run on the branch", failed = false } end
  if opts.accepted and opts.accepted > base then
    return analysis.pinned_gate(points, found_of, samples, opts) end
  if base < 1 then return { verdict = "no baseline", failed = false } end
  local segs = found_of(slice(points, 1, base)).segments
  local first_b = math.max(segs[#segs].first, base - (opts.baseline_commits or 10) + 1)
  local r = judge(points, first_b, base, samples, opts)
  r.merge_base = commit_of(points[base])
  return r
end

return analysis
