-- Change points of a series of values, one per commit (docs/history.md, "How blame decides"):
-- the first commit of a lasting shift, not a single noisy run, and a slow drift told from a
-- step. Pure Lua, deterministic for a seed.
--
-- Binary segmentation with a rank test: over a stretch of the series, every split point with at
-- least `min_segment` values on each side is scored by the Mann-Whitney rank-sum statistic of
-- the two sides, standardised (|z|); the stretch has a shift when
--   1. a permutation test of the largest score (the stretch's values shuffled `permutations`
--      times, the largest over all splits each time) gives p <= alpha: the score is not one
--      that the many splits tried would give to noise alone;
-- the shift is where two flat levels fit the stretch best (least squares on the logarithms,
-- the same minimum of values each side), and it is kept when
--   2. the medians of the two sides differ by at least min_effect;
-- and then it is a step when those two levels fit better than a straight line, a drift
-- otherwise. A step splits the stretch and both sides are
-- searched again; a drift is reported over its stretch and ends the search there. One outlier
-- moves a rank sum by at most the length of a side, which the permutation test absorbs, and
-- can never be a segment of its own.
local stats = require "wlrun.compare.stats"

local M = {}

M.defaults = { min_segment = 3, min_effect = 0.02, alpha = 0.01, permutations = 999, seed = 1 }

local median = stats.median

-- ranks of xs[lo..hi] as 1..n (ties share their average rank) and the tie term sum(t^3 - t)
local function ranks(xs, lo, hi)
  local idx = {}
  for i = lo, hi do idx[#idx + 1] = i end
  table.sort(idx, function(a, b) return xs[a] < xs[b] end)
  local r, ties, n, i = {}, 0, #idx, 1
  while i <= n do
    local j = i
    while j < n and xs[idx[j + 1]] == xs[idx[i]] do j = j + 1 end
    local t = j - i + 1
    ties = ties + t * t * t - t
    for k = i, j do r[idx[k] - lo + 1] = (i + j) / 2 end
    i = j + 1
  end
  return r, ties
end

-- the largest |z| of the rank sum over the splits with at least m values on each side, and
-- where the right side starts (1-based in r); the first of equal maxima
local function max_split(r, n, m, ties)
  local best, at, sum = -1, nil, 0
  local spread = (n + 1) - ties / (n * (n - 1))
  for k = 1, n - m do
    sum = sum + r[k]
    if k >= m then
      local nr = n - k
      local var = k * nr / 12 * spread
      if var > 0 then
        local z = math.abs(sum - k * (k + 1) / 2 - k * nr / 2) / math.sqrt(var)
        if z > best + 1e-12 then best, at = z, k + 1 end
      end
    end
  end
  return best, at
end

-- p of the permutation test of the maximum: the share of shuffles scoring at least as high.
-- It stops as soon as p cannot end at or below alpha (most stretches hold no change),
-- returning what it has then, a p above alpha.
local function permutation_p(r, n, m, ties, observed, count, alpha, rng)
  local perm = table.move(r, 1, n, 1, {})
  local hits = 0
  for _ = 1, count do
    for i = n, 2, -1 do
      local j = rng:index(i)
      perm[i], perm[j] = perm[j], perm[i]
    end
    if max_split(perm, n, m, ties) >= observed - 1e-9 then
      hits = hits + 1
      if (hits + 1) / (count + 1) > alpha then return (hits + 1) / (count + 1) end
    end
  end
  return (hits + 1) / (count + 1)
end

-- the values fitted: logarithms where all are positive (a ratio is a ratio at every level)
local function scale(xs, lo, hi)
  local y, positive = {}, true
  for i = lo, hi do positive = positive and xs[i] > 0 end
  for i = lo, hi do y[#y + 1] = positive and math.log(xs[i]) or xs[i] end
  return y, positive
end

-- residual sums of squares of two levels split before k (1-based in y) and of a line
local function rss_step(y, k)
  local rss = 0
  for _, part in ipairs { { 1, k - 1 }, { k, #y } } do
    local s = 0
    for i = part[1], part[2] do s = s + y[i] end
    local mean = s / (part[2] - part[1] + 1)
    for i = part[1], part[2] do rss = rss + (y[i] - mean) ^ 2 end
  end
  return rss
end

local function line(y)
  local n, sx, sy, sxx, sxy = #y, 0, 0, 0, 0
  for i = 1, n do sx, sy, sxx, sxy = sx + i, sy + y[i], sxx + i * i, sxy + i * y[i] end
  local slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
  local icpt = (sy - slope * sx) / n
  local rss = 0
  for i = 1, n do rss = rss + (y[i] - icpt - slope * i) ^ 2 end
  return rss, icpt + slope, icpt + slope * n
end

local function slice(xs, lo, hi) return table.move(xs, lo, hi, 1, {}) end

local function ratio(a, b) return b ~= 0 and a / b - 1 or 0 / 0 end

-- where two levels fit y best (least squares), with at least m values on each side: the
-- rank test says whether there is a shift, the levels say where (ranks alone cannot tell a
-- high value of the old level from the new one when both sides are separated anyway)
local function best_step(y, m)
  local best, at = math.huge, nil
  for k = m + 1, #y - m + 1 do
    local rss = rss_step(y, k)
    if rss < best - 1e-15 then best, at = rss, k end
  end
  return at, best
end

-- the best split of xs[lo..hi]: nil, or {kind = "step", at} or {kind = "drift"}, with p
local function search(xs, lo, hi, o, rng)
  local n, m = hi - lo + 1, o.min_segment
  if n < 2 * m then return nil end
  local r, ties = ranks(xs, lo, hi)
  local z = max_split(r, n, m, ties)
  if z < 0 then return nil end -- every value the same
  local p = permutation_p(r, n, m, ties, z, o.permutations, o.alpha, rng)
  if p > o.alpha then return nil end
  local y, positive = scale(xs, lo, hi)
  local k, rss = best_step(y, m)
  -- at the edge of where a shift may be, and fitting better one step further out: the shift
  -- has fewer than min_segment values on that side, it has not lasted yet
  if (k == n - m + 1 and k < n and rss_step(y, k + 1) < rss)
    or (k == m + 1 and k > 2 and rss_step(y, k - 1) < rss) then
    return nil
  end
  local at = lo + k - 1
  local effect = ratio(median(slice(xs, at, hi)), median(slice(xs, lo, at - 1)))
  if not (math.abs(effect) >= o.min_effect) then return nil end
  local rss_line, first, last = line(y)
  if rss_line <= rss then
    local change = positive and math.exp(last - first) - 1 or ratio(last, first)
    return { kind = "drift", first = lo, last = hi, change = change, p = p, z = z }
  end
  return { kind = "step", at = at, p = p, z = z }
end

-- The change points of xs (numbers, in order). opts: min_segment, min_effect (a fraction),
-- alpha, permutations, seed (defaults M.defaults). Returns
--   { steps = { {at = index of the first value after the shift, before, after (the medians of
--               the segments either side), change = after / before - 1, p, z} ... },
--     drifts = { {first, last, change (of the fitted line over the stretch), p, z} ... },
--     segments = { {first, last, median} ... } }
function M.analyse(xs, opts)
  local o = {}
  for k, v in pairs(M.defaults) do o[k] = (opts and opts[k] ~= nil) and opts[k] or v end
  local rng = stats.rng(o.seed)
  local cuts, drifts = {}, {}
  local stack = { { 1, #xs } }
  while #stack > 0 do
    local lo, hi = table.unpack(table.remove(stack))
    local found = search(xs, lo, hi, o, rng)
    if found and found.kind == "step" then
      cuts[#cuts + 1] = found
      stack[#stack + 1] = { found.at, hi } -- the right first: the left is searched next
      stack[#stack + 1] = { lo, found.at - 1 }
    elseif found then
      drifts[#drifts + 1] = found
    end
  end
  table.sort(cuts, function(a, b) return a.at < b.at end)
  table.sort(drifts, function(a, b) return a.first < b.first end)
  local segments, first = {}, 1
  for i = 1, #cuts + 1 do
    local last = cuts[i] and cuts[i].at - 1 or #xs
    if last >= first then segments[#segments + 1] = { first = first, last = last,
      median = median(slice(xs, first, last)) } end
    first = last + 1
  end
  for i, c in ipairs(cuts) do
    c.before, c.after = segments[i].median, segments[i + 1].median
    c.change = ratio(c.after, c.before)
    c.kind = nil
  end
  for _, d in ipairs(drifts) do d.kind = nil end
  return { steps = cuts, drifts = drifts, segments = segments }
end

return M
