-- Loop workloads (docs/loops.md): training-loop-like timing. Per iteration the step is timed
-- by the host clock between two device synchronisations; the data time is the time from the
-- end of one iteration to the start of the next; phases (wl.phase) get their GPU time from
-- event pairs read after the iteration's closing synchronisation, so they add none.
local core = require "wlrun.core"
local settings = require "wlrun.settings"
local units = require "wlrun.text.units"
local peaks = require "wlrun.measure.peaks"

local loop = {}

loop.DATA_BOTTLENECK = 0.2 -- data time / iteration time above this: data loading is the bottleneck
loop.PHASE_TOLERANCE = 0.10 -- phases plus the time outside them account for the step within 10 %

-- ---- phases ----

-- the iteration being recorded: {phases = {name = {starts, stops}}, order = {...}, depth}
local active
local pool = {} -- event pairs reused across iterations, by phase name and occurrence

local function event_pair(name, k)
  local list = pool[name]
  if not list then list = {}; pool[name] = list end
  local pair = list[k]
  if not pair then
    pair = { core.event(), core.event() }
    list[k] = pair
  end
  return pair
end

-- wl.phase(name, fn, ...): inside a loop's step, times fn's GPU work with an event pair on the
-- current stream (no synchronisation); elsewhere it just calls fn.
function loop.phase(name, fn, ...)
  if type(name) ~= "string" or type(fn) ~= "function" then
    core.error("script", "wl.phase(name, fn): a name and a function", 2)
  end
  if not active then return fn(...) end
  local rec = active.phases[name]
  if not rec then
    rec = { pairs = {}, top = active.depth == 0 }
    active.phases[name] = rec
    active.order[#active.order + 1] = name
  end
  local pair = event_pair(name, #rec.pairs + 1)
  rec.pairs[#rec.pairs + 1] = pair
  pair[1]:record()
  active.depth = active.depth + 1
  local results = table.pack(pcall(core.nvtx.auto_range, "phase", name, fn, ...)) -- nvtx
  active.depth = active.depth - 1
  pair[2]:record()
  if not results[1] then error(results[2], 0) end
  return table.unpack(results, 2, results.n)
end

-- GPU seconds of each phase in the finished iteration (events already complete)
local function read_phases(it)
  local out = {}
  for _, name in ipairs(it.order) do
    local total = 0
    for _, pair in ipairs(it.phases[name].pairs) do total = total + pair[1]:elapsed(pair[2]) end
    out[#out + 1] = { name = name, time = total, top = it.phases[name].top }
  end
  return out
end

-- ---- summary (pure: tested on recorded timings) ----

local function summary_of(xs) return #xs > 0 and core.stats.summary(xs) or nil end

-- rec = {batch_size, iter = {s...}, data = {s...}, phases = {{name=, time=, top=}...} per
-- iteration} for the measured iterations; optional: total_time (the iterations' whole period, s:
-- wlrun trace's, which may hold time that is neither data nor step; default iter + data),
-- samples (the iterations' samples, where they are not batch_size each: wlrun trace's payloads),
-- overlap = {work, busy, tolerance} (the step's GPU work per iteration, its busy time: the
-- phases overlap when work > busy * (1 + tolerance)), phase_iters (the iterations rec.phases
-- holds, where not every one: wlrun trace's steps whose GPU work was recorded). Returns the
-- summary with its warnings.
function loop.summarize(rec)
  local n = #rec.iter
  local total_iter, total_data = 0, 0
  for i = 1, n do
    total_iter = total_iter + rec.iter[i]
    total_data = total_data + rec.data[i]
  end
  local total = rec.total_time or total_iter + total_data
  local s = {
    iters = n, batch_size = rec.batch_size,
    iter = summary_of(rec.iter), data = summary_of(rec.data),
    total_time = total,
    -- samples/s from the steady-state total time, not a mean of per-iteration rates
    throughput = n > 0 and total > 0 and (rec.samples or rec.batch_size * n) / total or 0,
    data_ratio = total_iter > 0 and total_data / total_iter or 0,
    phases = {}, warnings = {},
  }
  -- phases: mean time per iteration, in first-seen order; "outside" = step - top phases, never
  -- below 0 (phases on several streams at once can add up to more than the step)
  local by_name, order = {}, {}
  for _, iteration in ipairs(rec.phases or {}) do
    for _, ph in ipairs(iteration) do
      local agg = by_name[ph.name]
      if not agg then
        agg = { name = ph.name, times = {}, top = ph.top }
        by_name[ph.name] = agg
        order[#order + 1] = ph.name
      end
      agg.times[#agg.times + 1] = ph.time
    end
  end
  local top_total = 0
  for _, name in ipairs(order) do
    local agg = by_name[name]
    local st = core.stats.summary(agg.times)
    local mean_per_iter = st.mean * #agg.times / math.max(rec.phase_iters or n, 1)
    s.phases[#s.phases + 1] = { name = name, mean = mean_per_iter, median = st.median,
      share = s.iter and s.iter.mean > 0 and mean_per_iter / s.iter.mean or 0, top = agg.top }
    if agg.top then top_total = top_total + mean_per_iter end
  end
  if #order > 0 and s.iter then
    local out = math.max(0, s.iter.mean - top_total)
    s.outside = { mean = out, share = s.iter.mean > 0 and out / s.iter.mean or 0 }
    if rec.overlap then -- the GPU work itself: does it overlap in time?
      s.phases_consistent = rec.overlap.work <= rec.overlap.busy * (
        1 + rec.overlap.tolerance) + 1e-12
    else -- the phases cannot hold more GPU time than the step's wall time (beyond the tolerance)
      s.phases_consistent = top_total <= s.iter.mean * (1 + loop.PHASE_TOLERANCE)
    end
  end
  if s.data_ratio > loop.DATA_BOTTLENECK then
    s.warnings[#s.warnings + 1] = { code = "data-bottleneck",
      title = "data loading is the bottleneck",
      message = ("data loading takes %.0f%% of the step time (%s against %s per iteration)"):format(
        100 * s.data_ratio, units.time(s.data.mean), units.time(s.iter.mean)),
      hint
        =
        "load ahead of the step (a second stream, more loader work per batch), or make batches "
        .. "cheaper to load" }
  end
  if s.phases_consistent == false then
    local message = rec.overlap
      and (
      "the step's GPU work adds up to %s per iteration in %s of busy GPU time: the phases' work "
      .. "overlaps in time (several streams at once)"):format(
      units.time(rec.overlap.work), units.time(rec.overlap.busy))
      or "the phases add up to more than the step's time: they overlap (work on several streams)"
    s.warnings[#s.warnings + 1] = { code = "phase-overlap", title = "phases overlap",
      message = message,
      hint = "the breakdown by phase is not additive here" }
  end
  return s
end

-- the methodology's line; its fps is the batch over the step time (the summary's throughput
-- counts the data time too)
function loop.format_line(i, iter, data, batch_size)
  return ("[%04d]: iter %.2f ms, data %.2f ms, fps %.1f"):format(i, iter * 1e3, data * 1e3,
    batch_size / iter)
end

-- ---- running ----

local function sync() core.sync() end

local DEFAULTS = { iters = 30, warmup = 5 }

-- a loop's iters or warmup in force, and where it came from: the loop's own default <
-- wlrun.ini < the scenario < the command line
function loop.count(L, field)
  local value, source = settings.value("run", field, L[field])
  if source == "default" then value = DEFAULTS[field] end
  return value, source
end

-- runs the loop of a configuration; fills entry (the results document's configuration)
function loop.run(sc, p, state, entry, ctx)
  local L = sc.loop
  local bs = type(L.batch_size) == "function" and L.batch_size(p) or L.batch_size
  if math.type(bs) ~= "integer" or bs < 1 then core.error("script",
    "batch_size(p) must give a whole number >= 1", 0) end
  local warmup, iters = loop.count(L, "warmup"), loop.count(L, "iters")
  local total = warmup + iters
  local rec = { batch_size = bs, iter = {}, data = {}, phases = {} }
  local lines = L.print_iters and ctx.sink
  sync()
  local prev_end = core.clock()
  for i = 1, total do
    local _ <close> = core.nvtx.auto_scope("iteration", ("iter %d"):format(i), i) -- nvtx
    local batch = core.nvtx.auto_range("data", nil, L.data, i, state, p) -- nvtx
    sync()
    local t0 = core.clock()
    active = { phases = {}, order = {}, depth = 0 }
    local ok, err = pcall(core.nvtx.auto_range, "step", nil, L.step, batch, state, p) -- nvtx
    local it = active
    active = nil
    if not ok then error(err, 0) end
    sync()
    local t1 = core.clock()
    local iter, data = t1 - t0, t0 - prev_end
    prev_end = t1
    if i > warmup then
      rec.iter[#rec.iter + 1] = iter
      rec.data[#rec.data + 1] = data
      rec.phases[#rec.phases + 1] = read_phases(it)
      if lines then lines:iteration(loop.format_line(i - warmup, iter, data, bs)) end
    end
  end
  local s = loop.record(entry, rec, warmup)
  local fps = type(L.flops_per_sample) == "function" and L.flops_per_sample(p) or L.flops_per_sample
  if fps ~= nil then
    loop.check_flops(fps, nil, "wl.loop: flops_per_sample(p)", 1)
    loop.add_mfu(entry, fps, L.dtype, core.device())
  end
  return s
end

-- MFU (docs/loops.md, "MFU"): the model FLOP the user gives per sample times samples/s, against
-- the dense peak of dtype on device (a wl.device() table; wlrun.measure.peaks). Without a device,
-- or a
-- peak for it, no MFU: a note says why (why: the reason there is no device).
function loop.add_mfu(entry, flops_per_sample, dtype, device, why)
  local L = entry.loop
  if not (L and entry.status == "ok") then return end
  L.flops_per_sample, L.dtype = flops_per_sample, dtype
  L.achieved_flops = flops_per_sample * L.throughput
  entry.metrics.flops = L.achieved_flops
  local peak = device and peaks.flops(device, dtype)
  if peak and peak > 0 then
    L.peak_flops, L.mfu = peak, L.achieved_flops / peak
    entry.metrics.mfu = L.mfu
  else
    entry.notes = entry.notes or {}
    entry.notes[#entry.notes + 1] = ("no MFU: %s"):format(device
      and ("no dense %s peak for %s (%s) in wlrun's table"):format(
      dtype, device.name or "?", device.arch or "?") or why or "no device")
  end
end

-- a loop's flops_per_sample and dtype, checked (wl.loop's fields, wlrun trace's options)
function loop.check_flops(flops, dtype, where, level)
  if flops ~= nil and not (type(flops) == "number" and flops > 0 and flops < math.huge) then
    core.error("script",
      ("%s: flops_per_sample must be a number > 0 (the model's FLOP per sample)"):format(where),
      level == 0 and 0 or level + 1)
  end
  if dtype ~= nil and not peaks.is_dtype(dtype) then
    core.error("script", ("%s: dtype must be one of %s (the peak MFU is taken against)"):format(
      where,
      table.concat(peaks.DTYPES, ", ")), level == 0 and 0 or level + 1)
  end
end

loop.DEFAULT_DTYPE = "bf16"

-- the measured iterations rec (see loop.summarize) into entry; returns the summary
function loop.record(entry, rec, warmup)
  local s = loop.summarize(rec)
  entry.status, entry.mode = "ok", "loop"
  entry.warmup = warmup
  entry.samples = rec.iter
  entry.stats = s.iter
  entry.loop = { batch_size = rec.batch_size, data = rec.data, data_stats = s.data,
    throughput = s.throughput,
                 data_ratio = s.data_ratio, total_time = s.total_time, phases = s.phases,
                   outside = s.outside }
  entry.metrics = { samples_per_s = s.throughput }
  entry.warnings = s.warnings
  return s
end

return loop
