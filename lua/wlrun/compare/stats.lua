-- The statistics of comparing two runs (docs/compare.md): a seeded PRNG, the Mann-Whitney U
-- test, a bootstrap interval of the ratio of medians, the verdict rule and the geometric mean.
-- wlrun.compare.document matches configurations and compares them with these. The hot loops (the
-- bootstrap's resampling, the rank sum of the U test, the geometric mean's interval) run in C
-- (core.stats.bootstrap_ratio, rank_sum and geomean_interval, src/base/compare_stats.c), which
-- gives
-- the same numbers bit for bit as the Lua definitions kept below; those still serve samples C
-- leaves to them (not finite and positive for the bootstrap, NaN for the test), and
-- M.use_c = false selects them everywhere (tests/bench/compare_scale.lua and
-- tests/spec/compare_c_spec.lua run both).
local core = require "wlrun.core"
local units = require "wlrun.text.units"

local M = {}

local cstats = core.stats
M.use_c = true

M.defaults = {
  noise = 0.02,       -- a change within +-2 % is "same"
  alpha = 0.01,       -- Mann-Whitney U, two-sided
  confidence = 0.95,  -- percentile bootstrap interval
  resamples = 2000,
  seed = 1,
  min_samples = 3,    -- fewer samples on either side: "uncertain"
}

local finite = units.finite
M.finite = finite

---------------------------------------------------------------------------------------------
-- PRNG: splitmix64 on Lua's 64-bit integers (wrapping multiplication, logical shifts), so the
-- stream is the same on every platform for a given seed.

local Rng = {}
Rng.__index = Rng

local function mix64(z)
  z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9 -- (wraps to a negative integer)
  z = (z ~ (z >> 27)) * 0x94D049BB133111EB
  return z ~ (z >> 31)
end

function M.rng(seed)
  seed = math.tointeger(seed) or 0
  return setmetatable({ state = seed }, Rng)
end

-- the next 64 random bits (an integer, any sign)
function Rng:next()
  self.state = self.state + 0x9E3779B97F4A7C15
  return mix64(self.state)
end

-- a float in [0, 1) with 53 random bits
function Rng:uniform()
  return (self:next() >> 11) * 2.0 ^ -53
end

-- an integer in [1, n] (n < 2^31: the bias of the modulo is below 2^-22)
function Rng:index(n)
  return (self:next() >> 11) % n + 1
end

-- a seed derived from a seed and a text (FNV-1a 64 of the text, mixed): each configuration gets
-- its own stream, whatever the order or the other configurations of the comparison
function M.derive_seed(seed, text)
  local h = 0xcbf29ce484222325
  for i = 1, #text do
    h = (h ~ text:byte(i)) * 1099511628211
  end
  return mix64(h ~ mix64(math.tointeger(seed) or 0))
end

---------------------------------------------------------------------------------------------
-- order statistics

local function sorted_copy(xs)
  local s = table.move(xs, 1, #xs, 1, {})
  table.sort(s)
  return s
end
M.sorted = sorted_copy

function M.median(xs)
  local n = #xs
  if n == 0 then return 0 / 0 end
  local s = sorted_copy(xs)
  if n % 2 == 1 then return s[(n + 1) // 2] end
  return (s[n // 2] + s[n // 2 + 1]) / 2
end

-- the p-quantile of a sorted array, linear interpolation between order statistics (type 7)
function M.quantile(sorted, p)
  local n = #sorted
  if n == 0 then return 0 / 0 end
  local h = (n - 1) * p + 1
  local lo = math.floor(h)
  if lo >= n then return sorted[n] end
  if lo < 1 then return sorted[1] end
  return sorted[lo] + (h - lo) * (sorted[lo + 1] - sorted[lo])
end

---------------------------------------------------------------------------------------------
-- the normal distribution

-- erfc(x) for x >= 0: the series of erf below 0.5, the continued fraction of erfc above
-- (relative error about 1e-15)
local function erfc_pos(x)
  if x < 0.5 then
    -- erfc = 1 - erf, erf by its series (converges fast for small x)
    local sum, term, x2 = x, x, x * x
    for n = 1, 60 do
      term = -term * x2 / n
      local add = term / (2 * n + 1)
      sum = sum + add
      if math.abs(add) < 1e-17 * math.abs(sum) then break end
    end
    return 1 - 2 / math.sqrt(math.pi) * sum
  end
  -- continued fraction (Lentz), good for x >= 0.5
  local tiny = 1e-300
  local b = 2 * x * x + 1
  local f = b
  local C, D = f, 0
  for n = 1, 500 do
    local a = -(2 * n - 1) * (2 * n)
    b = b + 4
    D = b + a * D
    if math.abs(D) < tiny then D = tiny end
    C = b + a / C
    if math.abs(C) < tiny then C = tiny end
    D = 1 / D
    local delta = C * D
    f = f * delta
    if math.abs(delta - 1) < 1e-16 then break end
  end
  return 2 * x / math.sqrt(math.pi) * math.exp(-x * x) / f
end

function M.erfc(x)
  if x ~= x then return x end
  if x >= 0 then return erfc_pos(x) end
  return 2 - erfc_pos(-x)
end

-- P(Z > z) for a standard normal Z
function M.normal_sf(z) return 0.5 * M.erfc(z / math.sqrt(2)) end

---------------------------------------------------------------------------------------------
-- Mann-Whitney U (Wilcoxon rank-sum), two-sided, normal approximation with the tie correction
-- of the variance and a continuity correction of 0.5.
--   returns { u = U of `a` (pairs (x in a, y in b) with x > y, ties counting 1/2), n1, n2,
--             mean = n1 n2 / 2, sd, z, p }
-- With `a` the base and `b` the new samples, u < mean means the new samples tend to be larger.

-- the rank sum of `a` among a and b together (average ranks for ties) and the tie term, the sum
-- of t^3 - t over the tied groups: the Lua definition
local function rank_sum_lua(a, b)
  local n1, n2 = #a, #b
  local all = {}
  for i = 1, n1 do all[#all + 1] = { a[i], 1 } end
  for i = 1, n2 do all[#all + 1] = { b[i], 2 } end
  table.sort(all, function(x, y) return x[1] < y[1] end)
  local N = n1 + n2
  local r1, ties = 0, 0
  local i = 1
  while i <= N do
    local j = i
    while j < N and all[j + 1][1] == all[i][1] do j = j + 1 end
    local rank = (i + j) / 2 -- average rank of the tied group
    local t = j - i + 1
    if t > 1 then ties = ties + (t * t * t - t) end
    for k = i, j do
      if all[k][2] == 1 then r1 = r1 + rank end
    end
    i = j + 1
  end
  return r1, ties
end

function M.mann_whitney(a, b)
  local n1, n2 = #a, #b
  local r1, ties
  if M.use_c then r1, ties = cstats.rank_sum(a, b) end
  if not r1 then r1, ties = rank_sum_lua(a, b) end
  local N = n1 + n2
  local u = r1 - n1 * (n1 + 1) / 2
  local mean = n1 * n2 / 2
  local var = 0
  if N > 1 then var = n1 * n2 / 12 * ((N + 1) - ties / (N * (N - 1))) end
  local sd = math.sqrt(math.max(var, 0))
  local z, p
  if n1 == 0 or n2 == 0 or sd == 0 then
    z, p = 0, 1
  else
    local d = math.abs(u - mean) - 0.5
    if d < 0 then d = 0 end
    z = d / sd
    if u < mean then z = -z end
    p = math.min(1, 2 * M.normal_sf(math.abs(z)))
  end
  return { u = u, n1 = n1, n2 = n2, mean = mean, sd = sd, z = z, p = p }
end

---------------------------------------------------------------------------------------------
-- Bootstrap of the ratio of medians median(new) / median(base): each resample draws both sets
-- with replacement (independently) and takes the ratio of their medians; the interval is the
-- percentile interval of the resampled ratios.
--   opts: resamples (2000), confidence (0.95), seed (1)
--   returns { ratio, lo, hi, log_replicates = { log ratio of each resample } }

local bootstrap_lua

function M.bootstrap_ratio(base, new, opts)
  opts = opts or {}
  local B = opts.resamples or M.defaults.resamples
  local conf = opts.confidence or M.defaults.confidence
  local seed = math.tointeger(opts.seed or M.defaults.seed) or 0 -- as M.rng takes it
  local n1, n2 = #base, #new
  local mb, mn = M.median(base), M.median(new)
  local result = { ratio = mn / mb, median_base = mb, median_new = mn, resamples = B,
    confidence = conf }
  if n1 == 0 or n2 == 0 or not (mb > 0) then
    result.lo, result.hi = 0 / 0, 0 / 0
    return result
  end
  local lo, hi, logs
  local whole = math.tointeger(B)
  if M.use_c and whole and whole >= 0 then lo, hi,
    logs = cstats.bootstrap_ratio(base, new, whole, conf, seed) end
  if not lo then lo, hi, logs = bootstrap_lua(base, new, B, conf, seed) end
  result.lo, result.hi, result.log_replicates = lo, hi, logs
  return result
end

-- the bootstrap's interval and log replicates: the Lua definition
function bootstrap_lua(base, new, B, conf, seed)
  local n1, n2 = #base, #new
  -- A resample draws n indices into the sorted set: its median is the value at the k-th
  -- smallest index drawn, found by counting the draws per index (no values are copied or
  -- sorted). The generator is Rng:next inlined: the same stream.
  local sb, sn = sorted_copy(base), sorted_copy(new)
  local cb, cn = {}, {}
  local st = seed
  local function resample_median(sorted, n, counts)
    for i = 1, n do counts[i] = 0 end
    for _ = 1, n do
      st = st + 0x9E3779B97F4A7C15
      local z = st
      z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
      z = (z ~ (z >> 27)) * 0x94D049BB133111EB
      z = z ~ (z >> 31)
      local j = (z >> 11) % n + 1
      counts[j] = counts[j] + 1
    end
    local k = (n + 1) // 2
    local c, j = 0, 0
    repeat
      j = j + 1
      c = c + counts[j]
    until c >= k
    -- odd n: the k-th; even n: the mean of the k-th and the (k+1)-th, the same index when
    -- more than k draws reach it
    if n % 2 == 1 or c > k then return sorted[j] end
    local lo = sorted[j]
    repeat
      j = j + 1
    until counts[j] > 0
    return (lo + sorted[j]) / 2
  end
  local ratios, logs = {}, {}
  for r = 1, B do
    local m1 = resample_median(sb, n1, cb)
    local q = resample_median(sn, n2, cn) / m1
    ratios[r] = q
    logs[r] = math.log(q)
  end
  table.sort(ratios)
  local tail = (1 - conf) / 2
  return M.quantile(ratios, tail), M.quantile(ratios, 1 - tail), logs
end

---------------------------------------------------------------------------------------------
-- The verdict. With t the noise threshold, [lo, hi] the interval of the ratio r = NEW/BASE
-- (times: above 1 is slower) and p the Mann-Whitney p-value, in this order:
--   1. fewer than min_samples samples on either side, or no finite ratio: uncertain
--   2. the interval lies within [1 - t, 1 + t]: same (even when the test is significant)
--   3. p <= alpha, lo > 1 + t and the test's direction agrees: slower
--   4. p <= alpha, hi < 1 - t and the test's direction agrees: faster
--   5. anything else: uncertain (the interval crosses 1 - t or 1 + t, or the test is not
--      significant while the interval reaches beyond the threshold, or they disagree)
-- Returns the verdict and a short reason.

function M.verdict(x, opts)
  opts = opts or {}
  local t = opts.noise or M.defaults.noise
  local alpha = opts.alpha or M.defaults.alpha
  local min_n = opts.min_samples or M.defaults.min_samples
  if (x.n1 or 0) < min_n or (x.n2 or 0) < min_n then
    return "uncertain", ("too few samples (fewer than %d)"):format(min_n)
  end
  if not (finite(x.ratio) and finite(x.lo) and finite(x.hi)) then
    return "uncertain", "no finite ratio of medians"
  end
  if x.lo >= 1 - t and x.hi <= 1 + t then
    if x.p <= alpha then return "same", "significant, but within the noise threshold" end
    return "same", "within the noise threshold"
  end
  -- the level itself counts (a test at alpha = 0.01 that gives 0.01 is significant)
  local sig = x.p <= alpha
  local new_larger = x.u < x.mean -- u counts base > new
  if sig and x.lo > 1 + t then
    if new_larger then return "slower", "significant, beyond the noise threshold" end
    return "uncertain", "the test and the interval disagree"
  end
  if sig and x.hi < 1 - t then
    if not new_larger then return "faster", "significant, beyond the noise threshold" end
    return "uncertain", "the test and the interval disagree"
  end
  if sig then return "uncertain", "significant, but the interval crosses the noise threshold" end
  return "uncertain", "not significant, and the interval reaches beyond the noise threshold"
end

-- Everything about one pair of sample sets: {n1, n2, median_base, median_new, ratio, lo, hi,
-- change = ratio - 1, u, z, p, verdict, reason, log_replicates}
function M.compare_samples(base, new, opts)
  opts = opts or {}
  local b = M.bootstrap_ratio(base, new, opts)
  local mw = M.mann_whitney(base, new)
  local x = {
    n1 = #base, n2 = #new, median_base = b.median_base, median_new = b.median_new,
    ratio = b.ratio, lo = b.lo, hi = b.hi, change = b.ratio - 1,
    u = mw.u, mean = mw.mean, z = mw.z, p = mw.p, log_replicates = b.log_replicates,
  }
  x.verdict, x.reason = M.verdict(x, opts)
  return x
end

---------------------------------------------------------------------------------------------
-- geometric mean

function M.geomean(xs)
  local s, n = 0, 0
  for _, v in ipairs(xs) do
    if finite(v) and v > 0 then s, n = s + math.log(v), n + 1 end
  end
  if n == 0 then return 0 / 0 end
  return math.exp(s / n)
end

-- The interval of the geometric mean of several ratios from their bootstrap replicates: the
-- r-th replicate of the geometric mean is that of the r-th replicates (the configurations'
-- resamples are independent). `lists`: arrays of log replicates of equal length.
function M.geomean_interval(lists, confidence)
  confidence = confidence or M.defaults.confidence
  if #lists == 0 then return 0 / 0, 0 / 0 end
  local B = #lists[1]
  for _, l in ipairs(lists) do B = math.min(B, #l) end
  if B == 0 then return 0 / 0, 0 / 0 end
  if M.use_c then
    local lo, hi = cstats.geomean_interval(lists, confidence)
    if lo then return lo, hi end
  end
  local reps = {}
  for r = 1, B do
    local s = 0
    for _, l in ipairs(lists) do s = s + l[r] end
    reps[r] = math.exp(s / #lists)
  end
  table.sort(reps)
  local tail = (1 - confidence) / 2
  return M.quantile(reps, tail), M.quantile(reps, 1 - tail)
end

return M
