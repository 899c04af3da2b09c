-- Warnings on a measurement (docs/measuring.md, "Warnings"): each has a stable code, a one-line
-- message and a hint. evaluate() looks at a result the engine made and returns the warnings
-- that apply; a clean, well-behaved benchmark gets none.
local core = require "wlrun.core"
local units = require "wlrun.text.units"
local T = units.time

local checks = {}

-- thresholds, documented in docs/measuring.md
checks.limits = {
  floor_factor = 10,      -- a sample within 10x of the device's timing floor is too short
  noise_iqr = 0.05,       -- IQR / median above 5 %: high noise
  far_outliers = 0.01,    -- more than 1 % of samples beyond the 3-IQR fences,
  outlier_distance = 0.05, -- that are also more than 5 % away from the median
  bimodal_gap = 0.03,     -- two modes at least 3 % of the median apart
  trend_rho = -0.3,       -- Spearman's rho of value against sample index below this,
  trend_z = -3,           -- significant (z below this),
  trend_change = 0.02,    -- and the first 20 % slower than the last 50 % by more than 2 %
  clock_drop = 0.05,      -- the SM clock fell by more than 5 % during the measurement
  launch_bound = 0.8,     -- enqueue time at least 80 % of the GPU time: the GPU waits for the CPU
}

local defs = {
  ["alloc-in-measure"] = "allocations inside the timed body",
  ["sync-in-measure"] = "synchronisation inside the timed body",
  ["short-sample"] = "samples too short for the timer",
  ["high-noise"] = "noisy samples",
  ["outliers"] = "outliers",
  ["bimodal"] = "two populations of samples",
  ["warmup-trend"] = "samples still getting faster",
  ["cache-hot"] = "working set fits in L2 and is not flushed",
  ["zero-inputs"] = "inputs are all zero",
  ["launch-bound"] = "launch-bound",
  ["throttled"] = "the GPU clock throttled",
  ["adaptive-timeout"] = "adaptive stopping hit its time limit",
  ["adaptive-plateau"] = "the noise stopped improving above the target",
  ["blocking-timeout"] = "samples taken after the blocking kernel gave up",
}
checks.codes = defs

local function warn(list, code, message, hint)
  assert(defs[code], code)
  list[#list + 1] = { code = code, title = defs[code], message = message, hint = hint }
end

-- what the timed body did that it should not: allocate, synchronise
local function body_checks(w, r)
  if r.watch.allocs > 0 then
    warn(w, "alloc-in-measure", ("%d tensor allocation%s while measuring"):format(r.watch.allocs,
      r.watch.allocs == 1 and "" or "s"), "allocate tensors in setup, before timing")
  end
  if r.watch.syncs > 0 then
    warn(w, "sync-in-measure",
      ("%d synchronising call%s (wl.sync, sync copies, event waits) while measuring"):format(
      r.watch.syncs, r.watch.syncs == 1 and "" or "s"),
      "the engine synchronises once after the loop; remove synchronisation from the timed body")
  end
end

-- samples too close to the device's timing floor of their mode
local function short_sample(w, r)
  local L, s = checks.limits, r.stats
  if r.mode == "cold" and not r.blocked and r.floor
    and s.median < L.floor_factor * r.floor.empty_kernel then
    warn(w, "short-sample",
      ("median %s is within %dx of this device's cold-launch floor (empty kernel %s)"):format(
      T(s.median), L.floor_factor, T(r.floor.empty_kernel)),
      "launch overhead is part of each sample: use --mode graph (or batch, or auto)")
  elseif (r.mode == "batch" or r.mode == "graph" or r.blocked) and r.floor
      and s.median * r.per < L.floor_factor * r.floor.event_pair then
    warn(w, "short-sample",
      ("a sample of %d launches lasts %s, within %dx of the event-pair floor (%s)"):format(
      r.per, T(s.median * r.per), L.floor_factor, T(r.floor.event_pair)),
        "raise the launches per sample (batch =)")
  end
end

-- outliers that matter: beyond the far fences and far from the median in relative terms
-- (a very steady kernel has a tiny IQR, and its 0.5 % blips are not worth a warning)
local function far_outliers(r)
  local L, s, shape = checks.limits, r.stats, r.shape
  local far = 0
  if shape and shape.far_outliers > 0 and r.samples then
    local lo = math.min(shape.far_fence_low or -math.huge, s.median * (1 - L.outlier_distance))
    local hi = math.max(shape.far_fence_high or math.huge, s.median * (1 + L.outlier_distance))
    for _, x in ipairs(r.samples) do
      if x < lo or x > hi then far = far + 1 end
    end
  elseif shape and not r.samples then
    far = shape.far_outliers
  end
  return far
end

-- the samples' spread and shape: noise, outliers, two modes, a trend
local function shape_checks(w, r)
  local L, s, shape = checks.limits, r.stats, r.shape
  if s.median > 0 and s.iqr / s.median > L.noise_iqr then
    warn(w, "high-noise", ("IQR is %.1f%% of the median (cv %.1f%%)"):format(100 * s.iqr / s.median,
      100 * s.cv),
      "something else runs on the GPU or host, or the work varies; check clocks and other "
        .. "processes")
  end
  local far = far_outliers(r)
  if far >= 2 and far / s.n > L.far_outliers then
    warn(w, "outliers",
      ("%d of %d samples beyond 3 IQR of the quartiles and %d%% from the median"):format(far,
      s.n, math.floor(100 * L.outlier_distance + 0.5)),
      "look at the samples (-o results.json); the median is robust to them, the mean is not")
  end
  if shape and shape.bimodal and s.median > 0
      and (shape.mode_high - shape.mode_low) / s.median >= L.bimodal_gap then
    warn(w, "bimodal", ("samples gather around %s and %s"):format(T(shape.mode_low),
      T(shape.mode_high)),
      "two behaviours alternate (clocks, caches, placement); report them separately")
  end
  if shape and shape.trend_rho < L.trend_rho and shape.trend_z < L.trend_z
    and shape.trend_change > L.trend_change then
    warn(w, "warmup-trend",
      ("samples get faster as the run goes on: the first 20%% are %.1f%% slower than the "
      .. "last half"):format(
      100 * shape.trend_change), "raise --warmup or --warmup-time")
  end
end

-- what the setup gave the body: a working set the L2 holds, inputs of zeros
local function setup_checks(w, r, ctx)
  if ctx.working_set and ctx.device and not r.flush_l2 and ctx.working_set > 0
    and ctx.working_set <= ctx.device.l2_bytes then
    warn(w, "cache-hot",
      ("the working set (%s) fits in the L2 cache (%s) and the cache is not flushed"):format(
      units.bytes(ctx.working_set), units.bytes(ctx.device.l2_bytes)),
      "use --flush-l2 (cold mode) for cold-cache numbers, or sizes larger than the L2")
  end
  if ctx.zero_inputs and #ctx.zero_inputs > 0 then
    warn(w, "zero-inputs", ("input%s %s hold only zeros"):format(#ctx.zero_inputs == 1 and ""
      or "s",
      table.concat(ctx.zero_inputs, ", ")),
        "initialise inputs with real data (init = wl.normal()): zeros run faster")
  end
end

-- a host too slow for the GPU: samples queued behind no blocking kernel, launches that the
-- GPU waits for
local function host_checks(w, r)
  local L, s = checks.limits, r.stats
  if r.blocked and r.blocked.kept > 0 then
    warn(w, "blocking-timeout",
      ("%d samples were queued while no blocking kernel held the stream (it gave up after 100 "
      .. "ms, %d times)"):format(
      r.blocked.kept, r.blocked.gave_up),
        "the host was too slow to queue 16 samples: a busy or descheduled CPU; run again")
  end
  -- a launch-bound GPU idles until each launch arrives, so its time stretches to the enqueue
  -- time: they come out about equal, and the test is a ratio
  if r.enqueue_stats and ((r.mode == "cold" and not r.blocked) or r.mode == "batch")
      and r.enqueue_stats.median >= L.launch_bound * s.median then
    warn(w, "launch-bound",
      ("host enqueue time (%s) is close to or above the GPU time (%s)"):format(
      T(r.enqueue_stats.median), T(s.median)), "the GPU waits for the CPU: use --mode graph")
  end
end

-- the SM clock before and after, and the throttled chunks kept
local function clock_checks(w, r)
  local L = checks.limits
  local b, a = r.clock and r.clock.before, r.clock and r.clock.after
  -- throttled chunks kept past the discard limit
  local kept = r.throttle and r.throttle.kept_chunks or 0
  if a and b then
    local reasons = a.reasons and #a.reasons > 0 and table.concat(a.reasons, ", ")
    if reasons or kept > 0 or (b.sm_mhz > 0 and a.sm_mhz < (1 - L.clock_drop) * b.sm_mhz) then
      warn(w, "throttled", ("SM clock %.0f MHz before, %.0f MHz after%s%s"):format(b.sm_mhz,
        a.sm_mhz,
        reasons and (" (" .. reasons .. ")") or "",
        kept > 0 and ("; %d chunk%s taken while the GPU throttled kept after %d discarded"):format(
          kept,
          kept == 1 and "" or "s", r.throttle.discarded_chunks) or ""),
        "cooling or power limits; shorter runs or pauses between configurations")
    end
  end
end

-- adaptive stopping that ended short of its target
local function adaptive_checks(w, r)
  if r.adaptive and r.adaptive.stopped == "plateau" then
    warn(w, "adaptive-plateau",
      ("noise of the median %.2f%% after %s, target %.2f%%: more samples stopped making it "
      .. "smaller; %s"):format(
      100 * r.adaptive.noise, T(r.adaptive.elapsed), 100 * r.adaptive.target,
        checks.plateau_cause(r)),
      "the median is as good as it gets here: a drift needs --lock-clocks or a longer warmup; "
        .. "groups are two behaviours of the work")
  elseif r.adaptive and not r.adaptive.converged then
    warn(w, "adaptive-timeout", ("noise of the median %.2f%% after %s, target %.2f%%"):format(
      100 * r.adaptive.noise,
      T(r.adaptive.elapsed), 100 * r.adaptive.target),
        "raise --max-time or accept a looser --target-noise")
  end
end

-- r: the result of bench.run; ctx: {device =, working_set =, zero_inputs = {names}}
function checks.evaluate(r, ctx)
  local w = {}
  body_checks(w, r)
  short_sample(w, r)
  shape_checks(w, r)
  setup_checks(w, r, ctx)
  host_checks(w, r)
  clock_checks(w, r)
  adaptive_checks(w, r)
  return w
end

-- Why the noise of the median stopped shrinking, from the chunks' own medians
-- (r.adaptive_chunks) and the SM clock read after each (r.clock.chunks): a drift (the first
-- half's chunks against the second half's), two groups of samples with the median between
-- them, or chunks that scatter more than the target.
local function middle(list) return core.stats.summary(list).median end

function checks.plateau_cause(r)
  local chunks = r.adaptive_chunks or {}
  if #chunks >= 4 then
    local medians = {}
    for i, c in ipairs(chunks) do medians[i] = c.median end
    local half = #medians // 2
    local a, b = middle(table.move(medians, 1, half, 1, {})),
      middle(table.move(medians, half + 1, #medians, 1, {}))
    if a > 0 and math.abs(b - a) / a > r.adaptive.target then
      local clocks = r.clock and r.clock.chunks or {}
      local c1, c2 = clocks[1], clocks[#clocks] -- the SM clock (MHz) after each chunk
      return (
        "a drift: the chunks' medians moved by %+.2f%% from the first half of the measurement "
        .. "to the second (%s to %s)%s"):format(
        100 * (b - a) / a, T(a), T(b), c1 and c2 and (", the SM clock %s to %s MHz"):format(c1, c2)
          or "")
    end
  end
  local shape = r.shape
  if shape and shape.mode_low and shape.mode_high and shape.mode_high > shape.mode_low
      and r.stats and (shape.mode_high - shape.mode_low) / r.stats.median > r.adaptive.target then
    return (
      "two groups of samples (about %s and %s) with the median between them: its interval spans "
      .. "their gap"):format(
      T(shape.mode_low), T(shape.mode_high))
  end
  if #chunks >= 2 then
    local lo, hi = math.huge, -math.huge
    for _, c in ipairs(chunks) do lo, hi = math.min(lo, c.median), math.max(hi, c.median) end
    return ("the chunks' medians scatter over %.2f%% (%s to %s) with no drift"):format(
      100 * (hi - lo) / lo, T(lo), T(hi))
  end
  return "too few chunks to say why"
end

return checks
