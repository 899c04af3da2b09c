-- The training-loop report of a trace (docs/trace.md): from the ranges and GPU work that
-- wlrun.trace.read parsed, one loop configuration (docs/loops.md) per process that has step
-- ranges. Pure: a parsed trace and options in, results-document entries out.
--
--   report.entries(trace, opts) -> entries
--     opts: step (default "train_step"), data ("data"), warmup (5), batch_size (nil: the step
--     ranges' payload, else 1), kernels (true: the top kernels per phase), top_kernels (10),
--     sync_steps (the library synchronised the steps), auto (false: never the steps of wlrun's
--     Python hook; default true, used when the process has no step range of its own)
--
-- Per process: its closed step ranges (push/pop or start/end; the outermost ones) in start
-- order are the iterations, the first `warmup` skipped. Each iteration's window runs from the
-- later of its range's start and the end of the GPU work launched before it, to the later of its
-- range's end and the end of the GPU work launched before that, or the loop's own synchronisation
-- after it (wlrun.trace.windows): the template's synchronisations, without them. iter = the
-- window; data = the part of the gap since the previous window that data ranges (with their own
-- GPU work) cover, or the whole gap without data ranges; throughput counts the whole period.
-- Phases are the push/pop ranges nested in a step on its thread (each name counted at its
-- outermost occurrence), top phases its direct children. GPU work belongs to the range its
-- launch's correlation names (C records) and to that range's ancestors: a phase's GPU time is the
-- union of its work's intervals, as is the step's GPU busy time of its subtree's, "outside" the
-- step's work in no phase.
local core = require "wlrun.core"
local loop = require "wlrun.measure.loop"
local read = require "wlrun.trace.read"
local ranges = require "wlrun.trace.ranges"
local windows = require "wlrun.trace.windows"
local notes_of = require "wlrun.trace.notes"

local report = {}

report.DEFAULTS = { step = "train_step", data = "data", warmup = 5, top_kernels = 10, auto = true,
  steps = 1000 }
-- the step's GPU work adds up to more than its busy time by this share: phases overlap
report.OVERLAP = 0.01
report.NAME_MAX = 200 -- bytes of a name kept in the document

local function seconds(ns) return ns / 1e9 end

-- printable names, made once each during report.entries (a phase's name is asked for in every
-- iteration)
local printed = {}
local function name_of(s)
  local p = printed[s]
  if not p then
    p = read.printable(s, report.NAME_MAX)
    printed[s] = p
  end
  return p
end

local function sum(xs)
  local t = 0
  for _, x in ipairs(xs) do t = t + x end
  return t
end

local function mean(xs) return #xs > 0 and sum(xs) / #xs or 0 end

-- the index i with pm[i-1] < t <= pm[i] (pm non-decreasing, pm[0] = -inf), or nil past the end
local function window_of(pm, t)
  local lo, hi = 1, #pm
  if hi == 0 or t > pm[hi] then return nil end
  while lo < hi do
    local mid = (lo + hi) // 2
    if pm[mid] >= t then hi = mid else lo = mid + 1 end
  end
  return lo
end

-- the iteration whose window [start, stop] holds t, or nil (windows sorted and disjoint)
local function window_at(win, t)
  local lo, hi = 1, #win.start
  if hi == 0 or t < win.start[1] then return nil end
  while lo < hi do
    local mid = (lo + hi + 1) // 2
    if win.start[mid] <= t then lo = mid else hi = mid - 1 end
  end
  return t <= win.stop[lo] and lo or nil
end

-- the length of the union of intervals {start, stop}
local function union_length(list)
  table.sort(list, function(a, b) return a[1] < b[1] end)
  local total, lo, hi = 0.0, nil, nil
  for _, iv in ipairs(list) do
    if not hi or iv[1] > hi then
      if hi then total = total + (hi - lo) end
      lo, hi = iv[1], iv[2]
    elseif iv[2] > hi then
      hi = iv[2]
    end
  end
  if hi then total = total + (hi - lo) end
  return total
end

local function tally(t, key, w)
  local k = t[key]
  if not k then k = {}; t[key] = k end
  local e = k[w.name]
  if not e then e = { count = 0, time = 0.0 }; k[w.name] = e end
  e.count = e.count + 1
  e.time = e.time + (w.stop - w.start)
end

-- the top kernels of a tally: {{name, count, time (s, over the measured iterations)}...}
local function top_kernels(t, max)
  local list = {}
  for name, e in pairs(t or {}) do list[#list + 1] = { name = name, count = e.count,
    time = e.time } end
  table.sort(list, function(a, b)
    if a.time ~= b.time then return a.time > b.time end
    return a.name < b.name
  end)
  local out = {}
  for i = 1, math.min(max, #list) do
    out[i] = { name = name_of(list[i].name), count = list[i].count, time = seconds(list[i].time) }
  end
  return out
end

local function cupti_of(p)
  if not p.cupti then
    return { state = "none",
      reason = "no CUDA in this process (the trace library's CUDA injection never started)" }
  end
  return { state = p.cupti.state, reason = p.cupti.reason and name_of(p.cupti.reason) or nil }
end

-- the longest run of steps without a payload inside the list (between two with one) and at its
-- ends (before the first, after the last)
local function payload_gaps(measured)
  local inner, edge, run, seen = 0, 0, 0, false
  for _, s in ipairs(measured) do
    if math.type(s.payload) == "integer" and s.payload >= 1 then
      if seen then inner = math.max(inner, run) else edge = run end
      run, seen = 0, true
    else
      run = run + 1
    end
  end
  return inner, math.max(edge, run)
end

-- whether the steps without a payload at the ends of the list each ran a forward (wlrun's hook
-- saw one: ranges.input_samples's forwarded), rather than an optimizer step alone (the one after
-- a gradient-accumulation loop that applies what is left)
local function edges_forwarded(measured)
  local function paid(s) return math.type(s.payload) == "integer" and s.payload >= 1 end
  local first, last = 1, #measured
  while first <= last and not paid(measured[first]) do
    if not measured[first].forwarded then return false end
    first = first + 1
  end
  while last >= first and not paid(measured[last]) do
    if not measured[last].forwarded then return false end
    last = last - 1
  end
  return true
end

-- the samples of the measured steps where only some carry a payload: those that fetched no batch
-- of their own, between ones that did (a batch trained on for several optimizer steps), add none;
-- a run of them at an end longer than any between by two, or by one where each of them ran a
-- forward (a loader read one batch ahead, as Lightning's and Accelerate's are, leaves the last
-- step none; batches from a cache, itertools.cycle), counts the others' mean batch each
local function some_payloads(measured, total, n, notes)
  local inner, edge = payload_gaps(measured)
  local missing = #measured - n
  if edge <= inner or (edge == inner + 1 and not edges_forwarded(measured)) then
    notes[#notes + 1] = ("%d of the %d steps measured fetched no batch of their own (a batch "
      .. "fetched a step ahead, or trained on for several optimizer steps): samples/s counts the "
      .. "batches fetched, %d samples"):format(missing, #measured, total)
    return math.max(1, math.floor(total / #measured + 0.5)), total
  end
  local bs = total / n
  notes[#notes + 1] = ("%d of the %d steps measured fetched no batch through a DataLoader (at "
    .. "an end: the last batch fetched a step ahead, the batches of a cache, itertools.cycle): "
    .. "each counts the others' mean batch, %.4g samples (give --batch-size N)"):format(missing,
    #measured, bs)
  return math.max(1, math.floor(bs + 0.5)), total + missing * bs
end

-- where none of the measured steps carries a payload but earlier ones did (batches from a cache
-- filled in the warmup): the mean batch of the fetches before them for each (fetches: the data
-- ranges before them; where they are more than the steps that carry a payload, the cache was
-- filled by several fetches a step, `list(loader)` before the first), and the samples; nil where
-- none did
local function earlier_payloads(steps, measured, notes, fetches)
  local total, n = 0, 0
  for _, s in ipairs(steps) do
    if math.type(s.payload) == "integer" and s.payload >= 1 then
      total, n = total + s.payload, n + 1
    end
  end
  if n == 0 then return nil end
  local per, what = n, ("the %d steps before that did"):format(n)
  if fetches and fetches > n then
    per, what = fetches, ("the %d batches fetched before them (in %d step%s)"):format(fetches, n,
      n == 1 and "" or "s")
  end
  local bs = total / per
  notes[#notes + 1] = ("none of the %d steps measured fetched a batch through a DataLoader (the "
    .. "batches of a cache filled before them, itertools.cycle): each counts the mean batch of "
    .. "%s, %.4g samples (give --batch-size N)"):format(#measured, what, bs)
  return math.max(1, math.floor(bs + 0.5)), bs * #measured
end

-- the batches wlrun's hook saw fetched on thread tid before time t0: its data ranges that closed
-- by then with a batch in hand (their payload its time; not a batch only evaluation used, nor a
-- loader's end, whose payload is 0)
local function fetches_before(p, o, tid, t0)
  local n = 0
  for _, r in ipairs(p.ranges) do
    if r.name == o.data and r.tid == tid and ranges.is_auto(r) and r.stop and r.stop <= t0
      and not r.made and math.type(r.payload) == "integer" and r.payload > ranges.EVALUATED then
      n = n + 1
    end
  end
  return n
end

local function any_payload(list)
  for _, s in ipairs(list) do
    if math.type(s.payload) == "integer" and s.payload >= 1 then return true end
  end
  return false
end

-- the steps as their samples from the hook's batches (fetched: step -> samples) tell them
local function as_fetched(list, fetched)
  local out = {}
  for i, s in ipairs(list) do out[i] = { payload = fetched[s] } end
  return out
end

-- the batch size: the option, else the step ranges' payload, else (the program's own ranges with
-- none) the batches the hook saw its DataLoaders give in each step, else 1; where it came from;
-- and the samples of the measured steps when they are not the batch size times the steps (steps:
-- all of them, the warmup's too; fetches: the batches fetched before the measured steps; input:
-- the hook's counts are its model's input, its steps having fetched no batch)
local function batch_of(o, measured, notes, steps, fetched, fetches, what, input)
  if o.batch_size then return o.batch_size, "option" end
  if fetched and not any_payload(steps) and any_payload(as_fetched(steps, fetched)) then
    notes[#notes + 1] = ("the step ranges carry no payload: the samples are the batches %s in "
      .. "each step (wlrun's hook; --batch-size N to set it)"):format(input
      and "given to the model" or "the DataLoader gave")
    local bs, _, samples = batch_of(o, as_fetched(measured, fetched), notes,
      as_fetched(steps, fetched), nil, fetches, "the steps' batches")
    return bs, "loader", samples
  end
  local lo, hi, total, n = math.huge, -math.huge, 0, 0
  for _, s in ipairs(measured) do
    if math.type(s.payload) == "integer" and s.payload >= 1 then
      lo, hi, total, n = math.min(lo, s.payload), math.max(hi, s.payload), total + s.payload, n + 1
    end
  end
  if n > 0 and n == #measured then
    if lo == hi then return lo, "payload" end
    local bs = math.max(1, math.floor(total / n + 0.5))
    notes[#notes + 1] = (
      "%s differ (%d to %d): the batch size is their mean, %d; samples/s counts them all, %d "
      .. "samples"):format(what or "the step ranges' payloads", lo, hi, bs, total)
    return bs, "payload", total
  end
  if n > 0 then
    local bs, samples = some_payloads(measured, total, n, notes)
    return bs, "payload", samples
  end
  local bs, samples = earlier_payloads(steps, measured, notes, fetches)
  if bs then return bs, "payload", samples end
  notes[#notes + 1] = "batch size 1 (no --batch-size and no integer payload on the step ranges): "
    .. "throughput is steps per second"
  return 1, "default"
end

-- ---- one process, in phases ----

-- GPU work by the range its launch names: the step it belongs to (through the range's parent
-- chain) or the outermost data range around it; for each data range, the end of its own work
-- (stop) and the time of its last launch (call)
local function classify_work(p, o, step_of)
  local of = {} -- w -> {range, step} | {range, data} | {}
  local data = { stop = {}, call = {} }
  for _, w in ipairs(p.gpu) do
    local r = p.by_rid[p.corr[w.corr] or -1]
    local s = r and step_of(r)
    local c = { range = r, step = s }
    if not s then
      local d = r and ranges.outermost(r, o.data)
      if d then
        c.data = d
        if not data.stop[d] or w.stop > data.stop[d] then data.stop[d] = w.stop end
        local at = p.launched[w.corr]
        if at and (not data.call[d] or at > data.call[d]) then data.call[d] = at end
      end
    end
    of[w] = c
  end
  return of, data
end

-- when each piece of GPU work was launched: the C record's time (version 2), else the start of the
-- range it was launched in (version 1 wrote no time, and no launch outside a range)
local function launch_time(p)
  if p.version ~= 1 then
    local at = p.launched
    return function(w) return at[w.corr] end
  end
  return function(w)
    local r = p.by_rid[p.corr[w.corr] or -1]
    return r and r.start
  end
end

-- the device that ran the most of the process's GPU work (its peak is the MFU's), or nil
local function busiest_device(p)
  local time, best = {}, nil
  for _, w in ipairs(p.gpu) do
    time[w.device] = (time[w.device] or 0) + (w.stop - w.start)
    if not best or time[w.device] > time[best] or (time[w.device] == time[best]
      and w.device < best) then best = w.device end
  end
  return best
end

-- the loop's synchronisation after each step (wlrun.trace.windows.waited): where it came before
-- any range opened on the step's thread after the step (the process's, the hook's that a view
-- leaves out included: a DataLoader's fetch), but the batch the loop makes next (the hook's,
-- opened as the step closed, whatever became of it: left open at the end too) -> {[i] = wait};
-- and before each (wlrun.trace.windows.before), where none opened between it and the step
local function loop_waits(p, steps)
  local befores = p.befores or {}
  if (not p.waits or #p.waits == 0) and #befores == 0 then return {}, {} end
  local opened = {}
  for _, s in ipairs(steps) do opened[s.tid] = opened[s.tid] or {} end
  for _, r in ipairs((p.unfiltered or p).ranges) do
    local list = opened[r.tid]
    local making = r.made or r.open and ranges.is_auto(r) and r.name == "data"
    if list and not making then list[#list + 1] = r.start end
  end
  for _, list in pairs(opened) do table.sort(list) end
  return windows.waited(steps, p.waits or {}, opened), windows.before(steps, befores, opened)
end

-- 1. the iterations' windows (wlrun.trace.windows), bounded by the GPU work and by the marks
-- (events: where the work launched before each ended, on steps whose work was not recorded too;
-- marks: report.usable_marks), and by the loop's waits after and before the steps
local function iteration_windows(p, steps, gpu, marks)
  local F = {}
  local waited, before = loop_waits(p, steps)
  if gpu then
    local times = {}
    for _, s in ipairs(steps) do
      times[#times + 1] = s.start
      times[#times + 1] = s.stop
    end
    -- F at each wait's entry too: work that another thread launched after the step and the wait
    -- waited for keeps it from ending the step
    for _, w in pairs(waited) do times[#times + 1] = w.start end
    local work = p.gpu
    if marks then
      work = table.move(p.gpu, 1, #p.gpu, 1, {})
      table.move(marks, 1, #marks, #work + 1, work)
    end
    F = windows.frontier(work, launch_time(p), times)
  end
  return windows.of(steps, F, gpu, waited, before)
end

-- the correlations of the library's idle marks (src/trace/trace_marks.c) begin here: their time is
-- the library's clock read (a synchronisation's return before the boundary, or the time it asked
-- the streams), never a device's
report.IDLE_MARKS = 1 << 41

-- the marks, where they are on the launches' clock: none before its call (a millisecond's slack)
-- nor ten minutes after it; nil where there are none, or one is not (a CUPTI whose events' device
-- times are another clock's). An idle mark is on that clock by its making, and may come long
-- before its boundary (the loop synchronised, then loaded its next batch).
function report.usable_marks(p)
  if #p.marks == 0 then return nil end
  for _, w in ipairs(p.marks) do
    local at = w.corr < report.IDLE_MARKS and p.launched[w.corr]
    if at and (w.stop < at - 1000000 or w.stop > at + 600 * 1000000000) then return nil end
  end
  return p.marks
end

-- which steps had their GPU work recorded: GPU activity on from the end of the step before (its
-- start for the first: the library turns it on or off as a step closes, for the next one and the
-- data loading before it) to its end (P records: on before the first; every step where there are
-- none)
local function recorded_steps(p, steps)
  local out, k, on = {}, 1, true
  local P = p.samples
  for i, s in ipairs(steps) do
    local from = i > 1 and math.min(steps[i - 1].stop, s.start) or s.start
    while P[k] and P[k].at <= from do on, k = P[k].on, k + 1 end
    out[i] = on and not (P[k] and P[k].at < s.stop)
  end
  return out
end

-- The CPU end of a data range: its pop; for the hook's, which stay open until the training work
-- begins, the batch in hand: the later of the fetch's end (its payload, src/trace/python) and
-- the range's last launch (the batch's copy), as the template's data ends before its sync. In a
-- process that ran no GPU work (no CUDA, or CUPTI on and no work seen: no sync to wait in), the
-- hook's ends where the training work begins: the batch's conversion on the CPU (x.float() / 255,
-- a flip) is data, as the template's is.
local function data_stop(r, data, gpu_work)
  local fetched = r.payload
  if not (gpu_work and ranges.is_auto(r) and math.type(fetched) == "integer" and fetched >= r.start
    and fetched <= r.stop) then
    return r.stop
  end
  local call = data.call[r]
  return call and call > fetched and math.min(call, r.stop) or fetched
end

-- whether wlrun's hook saw a batch fetched through a DataLoader for training: a data range of its
-- own that ended with the batch in hand (its payload the time; EVALUATED: only evaluation used it)
local function trained_fetch(p)
  for _, r in ipairs(p.ranges) do
    if ranges.is_auto(r) and r.name == "data" and math.type(r.payload) == "integer"
      and r.payload > ranges.EVALUATED then
      return true
    end
  end
  return false
end

-- 2. data: the part of each gap between windows (from the previous window's end to this one's
-- start) that the outermost data ranges cover, each with its own GPU work (the batch's copy);
-- the whole gap without data ranges (none of it with the hook's steps, mode "auto"). Data ranges
-- of the step's thread when it has any.
local function data_times(p, steps, win, data, o, t, notes, mode)
  local tid = steps[1].tid
  local cpu_loop = not p.cupti or p.cupti.state == "on" and #p.gpu == 0
  local list, on_thread = {}, false
  for _, r in ipairs(p.ranges) do
    if not r.open and r.name == o.data and ranges.outermost(r, o.data) == r
      and not ranges.evaluated(r) then
      list[#list + 1] = r
      on_thread = on_thread or r.tid == tid
    end
  end
  local lo, hi = {}, {}
  for i = 1, #steps do lo[i], hi[i] = win.stop[i - 1] or -math.huge, win.data_end[i] end
  -- a data range -> the iteration whose CPU window (previous step's end, this one's end] it starts
  -- in
  local data_iter = {}
  if #list == 0 and mode == "auto" and not trained_fetch(p) then
    -- the hook's steps follow one another where no batch is fetched: a gap is work it ended a
    -- step at (evaluation, a checkpoint), none of it loading
    t.data_source = "none"
    notes[#notes + 1] = "no batch was fetched through a DataLoader for training and wlrun's hook "
      .. "timed the making of none between two steps: the data time is 0 (what lies between "
      .. "the steps, an evaluation or a checkpoint, is neither)"
    local time = {}
    for i = 1, #steps do time[i] = 0.0 end
    return time, data_iter
  end
  if #list == 0 then
    t.data_source = "gap"
    notes[#notes + 1] = (
      "no '%s' ranges: the data time is the whole gap between one step's end and the next "
      .. "one's start"):format(t.data)
    local time = { 0.0 }
    for i = 2, #steps do time[i] = hi[i] - lo[i] end
    return time, data_iter
  end
  t.data_source, t.data_threads = "ranges", on_thread and "step" or "all"
  local pm, starts = {}, {}
  for i, s in ipairs(steps) do pm[i], starts[i] = math.max(pm[i - 1] or s.stop, s.stop), s.start end
  local intervals = {}
  for _, r in ipairs(list) do
    if not on_thread or r.tid == tid then
      local stop = data_stop(r, data, not cpu_loop)
      -- a hook's range still open where the loop's synchronisation before the next step was
      -- entered (win.began: the step begins at its return): the batch was in hand there, as the
      -- template's is before its synchronisation; what the loop did after the fetch is the data's,
      -- a pause after the batch's copy (the interpreter's lock held by another thread) too
      local k = window_of(starts, r.start)
      if k and win.began[k] and ranges.is_auto(r) and r.stop > win.data_end[k] then
        stop = r.stop
      end
      intervals[#intervals + 1] = { r.start, math.max(stop, data.stop[r] or stop) }
      data_iter[r] = window_of(pm, r.start)
    end
  end
  return windows.clip(intervals, lo, hi), data_iter
end

-- 3. phases: the CPU time of each name's outermost occurrences in each step; top[name]: a
-- direct child of a step somewhere
local function phase_times(p, steps, iter_of, step_of)
  local phases, top = {}, {}
  for i = 1, #steps do phases[i] = { by = {} } end
  local function phase(i, name, first)
    local ph = phases[i].by[name]
    if not ph then
      ph = { cpu = 0.0, gpu = 0.0, first = first }
      phases[i].by[name] = ph
    elseif first < ph.first then
      ph.first = first
    end
    return ph
  end
  for _, r in ipairs(p.ranges) do
    if not r.async then
      local s = step_of(r)
      if s and s ~= r and not ranges.shadowed(r, s) then
        local ph = phase(iter_of[s], r.name, r.start)
        if r.stop then ph.cpu = ph.cpu + (r.stop - r.start) end
        top[r.name] = top[r.name] or r.parent == s
      end
    end
  end
  return phases, top, phase
end

-- 4. GPU times per iteration: busy (union), in no phase (a union), launched outside the step (ran
-- in its window), the data's; each phase's, through phase(i, name, first): the union of its
-- work's intervals, so that kernels overlapping one another inside a phase (several streams, or
-- one kernel starting before the one before it ends: programmatic dependent launch) count once
local function gpu_times(p, steps, win, of, iter_of, data_iter, phase)
  local g = { busy = {}, outside = {}, data = {}, unattributed = {}, kernels = {} }
  local outside, touched = {}, {}
  for i = 1, #steps do
    g.busy[i], g.outside[i], g.data[i], g.unattributed[i], g.kernels[i] = {}, 0.0, 0.0, 0.0, {}
    outside[i] = {}
  end
  for _, w in ipairs(p.gpu) do
    local c, dur = of[w], w.stop - w.start
    if c.step then
      local i, r, s = iter_of[c.step], c.range, c.step
      local iv = { w.start, w.stop }
      g.busy[i][#g.busy[i] + 1] = iv
      if r == s then
        outside[i][#outside[i] + 1] = iv
      else
        local seen, at = {}, r
        while at ~= s do
          if not seen[at.name] then
            seen[at.name] = true
            local ph = phase(i, at.name, at.start)
            if not ph.iv then ph.iv, touched[#touched + 1] = {}, ph end
            ph.iv[#ph.iv + 1] = iv
            tally(g.kernels[i], at.name, w)
          end
          at = at.parent
        end
      end
    else
      local i = c.data and data_iter[c.data]
      if i then
        g.data[i] = g.data[i] + dur
        tally(g.kernels[i], "\0data", w)
      else
        i = window_at(win, w.start)
        if i then g.unattributed[i] = g.unattributed[i] + dur end
      end
    end
  end
  for _, ph in ipairs(touched) do ph.gpu, ph.iv = union_length(ph.iv), nil end
  for i = 1, #steps do g.outside[i] = union_length(outside[i]) end
  return g
end

-- 5. the measured iterations: the loop's record (rec) and the trace's per-iteration lists; the GPU
-- times (and the loop's phases) of those whose work was recorded (recorded[i]) only, their
-- indices in m.timed; the phases' CPU times of every one
local function measured_iterations(steps, W, win, data, phases, top, g, gpu, recorded)
  local rec = { iter = {}, data = {}, phases = {}, total_time = 0.0 }
  local m = { steps = {}, between = {}, busy = {}, work = {}, outside = {}, data_gpu = {},
    unattributed = {}, timed = {},
    names = {}, cpu_of = {}, gpu_of = {}, tallies = {} }
  local seen_name = {}
  for i = W + 1, #steps do
    local j = i - W
    m.steps[j] = steps[i]
    local iter = win.stop[i] - win.start[i]
    local period = win.stop[i] - (win.stop[i - 1] or win.start[i] - data[i])
    rec.iter[j], rec.data[j] = seconds(iter), seconds(data[i])
    rec.total_time = rec.total_time + seconds(period)
    m.between[j] = seconds(math.max(0, period - iter - data[i]))
    local timed = not gpu or recorded[i]
    if timed then m.timed[#m.timed + 1] = j end
    local order = {}
    for name, ph in pairs(phases[i].by) do order[#order + 1] = { name = name, ph = ph } end
    table.sort(order, function(a, b)
      if a.ph.first ~= b.ph.first then return a.ph.first < b.ph.first end
      return a.name < b.name
    end)
    -- the step's work as the breakdown adds it: its top phases' GPU times and its work in no phase
    local list, work = {}, g.outside[i]
    for _, x in ipairs(order) do
      list[#list + 1] = { name = name_of(x.name), time = seconds(gpu and x.ph.gpu or x.ph.cpu),
        top = top[x.name] or false }
      if top[x.name] then work = work + x.ph.gpu end
      if not seen_name[x.name] then
        seen_name[x.name] = true
        m.names[#m.names + 1] = x.name
        m.cpu_of[x.name], m.gpu_of[x.name] = {}, {}
      end
      m.cpu_of[x.name][j] = seconds(x.ph.cpu)
      if timed then m.gpu_of[x.name][j] = seconds(x.ph.gpu) end
    end
    if not timed then goto next end
    rec.phases[#rec.phases + 1] = list
    m.busy[j] = seconds(union_length(g.busy[i]))
    m.work[j] = seconds(work)
    m.outside[j] = seconds(g.outside[i])
    m.data_gpu[j] = seconds(g.data[i])
    m.unattributed[j] = seconds(g.unattributed[i])
    for key, k in pairs(g.kernels[i]) do
      local agg = m.tallies[key]
      if not agg then agg = {}; m.tallies[key] = agg end
      for kname, e in pairs(k) do
        local a = agg[kname]
        if not a then a = { count = 0, time = 0.0 }; agg[kname] = a end
        a.count, a.time = a.count + e.count, a.time + e.time
      end
    end
    ::next::
  end
  rec.phase_iters = #m.timed
  return rec, m
end

-- xs at the indices js, 0 where xs has none (a phase absent from an iteration took no time in it)
local function filled_of(xs, js)
  local out = {}
  for k, j in ipairs(js) do out[k] = xs[j] or 0 end
  return out
end

-- 6. the trace's fields of the document from the measured iterations: the phases' and the GPU's
-- lists over those whose work was recorded
local function trace_fields(t, m, top, gpu, o)
  local function filled(xs) return filled_of(xs, m.timed) end
  t.phases = {}
  local every = {}
  for j = 1, #m.steps do every[j] = j end
  for _, name in ipairs(m.names) do
    local ph = { name = name_of(name), top = top[name] or false,
      cpu = filled_of(m.cpu_of[name], every) }
    ph.cpu_mean = mean(ph.cpu)
    if gpu then
      ph.gpu = filled(m.gpu_of[name])
      ph.gpu_mean = mean(ph.gpu)
      if o.kernels then ph.kernels = top_kernels(m.tallies[name], o.top_kernels) end
    end
    t.phases[#t.phases + 1] = ph
  end
  t.between, t.between_mean = m.between, mean(m.between)
  if gpu then
    if #m.timed < #m.steps then t.gpu_steps = m.timed end
    local busy, outside, unattributed = filled(m.busy), filled(m.outside), filled(m.unattributed)
    t.gpu_busy, t.gpu_busy_mean = busy, mean(busy)
    t.gpu_outside, t.gpu_outside_mean = outside, mean(outside)
    t.gpu_unattributed, t.gpu_unattributed_mean = unattributed, mean(unattributed)
    if t.data_source == "ranges" then
      local data_gpu = filled(m.data_gpu)
      t.data_gpu, t.data_gpu_mean = data_gpu, mean(data_gpu)
      if o.kernels then t.data_kernels = top_kernels(m.tallies["\0data"], o.top_kernels) end
    end
  end
end

-- how far the GPU work outlasts the step ranges, over the measured steps: trace.run_ahead
local function run_ahead(steps, win, W)
  local ra = windows.run_ahead(steps, win, W + 1)
  local lag_max, ahead_max = 0, 0
  for j, l in ipairs(ra.lag) do
    lag_max, ahead_max = math.max(lag_max, l), math.max(ahead_max, ra.ahead[j])
  end
  return { lag_mean = seconds(mean(ra.lag)), lag_max = seconds(lag_max),
    steps_mean = mean(ra.ahead), steps_max = ahead_max }
end

-- whether the samples of the measured steps are their model's input (they fetched no batch
-- through a DataLoader): the hook's own steps each say so; the program's steps, through
-- hook_batches (input: what it said)
local function counted_inputs(measured, mode, input)
  if mode ~= "auto" then return input == true end
  for _, s in ipairs(measured) do
    if not s.input then return false end
  end
  return #measured > 0
end

-- the report of one process: its entry (k: its index, of n processes with steps; fetched, input:
-- ranges.hook_batches's, where the program's own steps hold the hook's)
local function process_entry(p, steps, k, n, o, mode, fetched, input)
  local entry = { index = k, params = n > 1 and { process = k } or {} }
  local notes, warnings = {}, {}
  local cupti = cupti_of(p)
  -- GPU times where CUPTI was on and saw GPU work (a CPU-only loop in a process that initialised
  -- CUDA has none: its times are the CPU's)
  local gpu = cupti.state == "on" and #p.gpu > 0
  local tid = steps[1].tid
  local t = {
    step = name_of(o.step), data = name_of(o.data), timing = gpu and "gpu" or "cpu", steps = #steps,
      ranges = mode,
    process = { pid = p.pid, ppid = p.ppid, command = p.command and read.printable(p.command, 1000)
      or nil,
                thread = p.threads[tid] and name_of(p.threads[tid]) or tostring(tid),
                exited = p.exit ~= nil, truncated = p.truncated },
    cupti = cupti,
  }
  entry.trace = t
  local W = o.warmup
  if #steps <= W then
    entry.status, entry.kind = "failed", "usage"
    entry.error = (
      "process %d has %d closed '%s' range%s, not more than --warmup %d: no iteration left to "
      .. "measure (lower --warmup, or run more steps)"):format(
      p.pid, #steps, t.step, #steps == 1 and "" or "s", W)
    notes_of.process(p, warnings)
    entry.warnings = warnings
    return entry
  end

  local iter_of, is_step = {}, {}
  for i, s in ipairs(steps) do iter_of[s], is_step[s] = i, true end
  local step_of = ranges.step_finder(is_step)
  local of, data_work = classify_work(p, o, step_of)
  local marks = report.usable_marks(p)
  local win = iteration_windows(p, steps, gpu, marks)
  notes_of.waited(t, win, W, #steps, notes)
  local data, data_iter = data_times(p, steps, win, data_work, o, t, notes, mode)
  local phases, top, phase = phase_times(p, steps, iter_of, step_of)
  local g = gpu_times(p, steps, win, of, iter_of, data_iter, phase)
  local recorded = recorded_steps(p, steps)
  local rec, m = measured_iterations(steps, W, win, data, phases, top, g, gpu, recorded)
  local gpu_phases = gpu
  if gpu and #m.timed == 0 then -- no measured step recorded (a short run sampled): CPU phases
    gpu_phases = false
    rec, m = measured_iterations(steps, W, win, data, phases, top, g, false, recorded)
  end
  trace_fields(t, m, top, gpu_phases, o)
  if gpu_phases then
    rec.overlap = { work = mean(filled_of(m.work, m.timed)), busy = t.gpu_busy_mean,
      tolerance = report.OVERLAP }
  end
  if gpu then notes_of.sampled(gpu_phases and t.gpu_steps or not gpu_phases and {} or nil,
    #m.steps, notes, marks ~= nil) end
  t.device = busiest_device(p)
  local bs, source, samples = batch_of(o, m.steps, notes, steps, fetched,
    fetches_before(p, o, tid, steps[W + 1].start), nil, input)
  if source == "payload" and mode == "auto" then source = "loader" end
  if source == "loader" and counted_inputs(m.steps, mode, input) then
    source = "input"
    notes[#notes + 1] = "the steps measured fetched no batch through a DataLoader: a step's "
      .. "samples are its model's input as wlrun's hook saw it (the batch of each input given to "
      .. "its model's forward by position; docs/trace.md, \"No annotation needed\"; --batch-size N "
      .. "to set it)"
  end
  rec.batch_size, rec.samples, t.batch_source = bs, samples, source

  local s = loop.record(entry, rec, W)
  if gpu then
    t.run_ahead = run_ahead(steps, win, W)
    notes_of.run_ahead(t, s.iter.mean, notes)
    if gpu_phases then notes_of.gpu_idle(t, s.iter.mean, notes) end
  end
  notes_of.between(t, s, notes)
  for _, x in ipairs(entry.warnings) do warnings[#warnings + 1] = x end
  notes_of.measured(p, t, cupti, o, warnings, notes)
  entry.warnings = warnings
  entry.notes = #notes > 0 and notes or nil
  return entry
end

-- the steps of a process and whose ranges they are: the program's own (without the hook's
-- ranges, if any), else those of wlrun's Python hook when opts allow
local function steps_of(p, o)
  local steps = ranges.steps(p, o.step, false)
  if #steps > 0 then
    local auto, own_data = false, false
    for _, r in ipairs(p.ranges) do
      if ranges.is_auto(r) then auto = true elseif r.name == o.data then own_data = true end
    end
    if not auto then return p, steps, "program" end
    -- the hook's data ranges stay where the program has none of its own
    -- (not a batch the loop made: its range, from the hook's optimizer end, crosses the program's
    -- own step)
    local q = ranges.without_auto(p, function(r)
      return not own_data and r.name == o.data and not r.made
    end)
    steps = ranges.steps(q, o.step, false)
    return q, steps, "program", ranges.hook_batches(p, steps)
  end
  if o.auto then
    local q = ranges.late_forwards(p)
    steps = ranges.steps(q, o.step, true)
    if #steps > 0 then return q, steps, "auto" end
  end
  return p, steps, "program"
end

function report.entries(trace, opts)
  local o = {}
  for k, v in pairs(report.DEFAULTS) do o[k] = v end
  for k, v in pairs(opts or {}) do o[k] = v end
  local with = {}
  for _, p in ipairs(trace.processes) do
    ranges.input_samples(p, o.warmup)
    ranges.made_batches(p)
    local view, steps, mode, fetched, input = steps_of(p, o)
    if #steps > 0 then
      with[#with + 1] = { p = view, steps = steps, mode = mode, fetched = fetched, input = input }
    end
  end
  if #with == 0 then core.error("usage", notes_of.no_steps(trace, o), 0) end
  local entries = {}
  printed = {}
  for k, x in ipairs(with) do
    entries[k] = process_entry(x.p, x.steps, k, #with, o, x.mode, x.fetched, x.input)
  end
  printed = {}
  return entries
end

return report
