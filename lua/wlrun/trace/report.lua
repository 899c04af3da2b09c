-- The training-loop report of a trace (docs/trace.md): from the ranges and GPU work that
-- wlrun.trace.read parsed, one loop configuration (docs/loops.md) per process that has step
-- ranges. Pure: a parsed trace and options in, results-document entries out.
--
--   report.entries(trace, opts) -> entries
--     opts: step (default "train_step"), data ("data"), warmup (5), batch_size (nil: the step
--     ranges' payload, else 1), kernels (true: the top kernels per phase), top_kernels (10)
--
-- Per process: its closed step ranges (push/pop or start/end; the outermost ones) in start
-- order are the iterations, the first `warmup` skipped. iter = the step's duration. data = the total duration
-- of the outermost data ranges that start in the iteration's window (the previous step's end,
-- this step's end] — those of the step's thread when it has any, else those of every thread;
-- with no data range in the process, data = the gap between the previous step's end and this
-- step's start (data_source "gap"). Phases are the push/pop ranges nested in a step on its
-- thread (each name counted at its outermost occurrence), top phases its direct children. GPU
-- work belongs to the range its launch's correlation names (C records) and to that range's
-- ancestors: a phase's GPU time is the sum of its work's durations, the step's GPU busy time
-- the union of its subtree's work intervals, "outside" the step's work in no phase.
local loop = require "wlrun.loop"
local read = require "wlrun.trace.read"

local report = {}

report.DEFAULTS = { step = "train_step", data = "data", warmup = 5, top_kernels = 10 }
report.UNATTRIBUTED_SHARE = 0.05 -- GPU work in steps' windows without a range, above this share of busy time: a warning
report.NAME_MAX = 200 -- bytes of a name kept in the document

local function core() return require "wlrun.core" end

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

-- "forward (120), backward (120)": the names of a count table, most frequent first
local function by_count(counts, max)
  local list = {}
  for n, c in pairs(counts) do list[#list + 1] = { n, c } end
  table.sort(list, function(a, b)
    if a[2] ~= b[2] then return a[2] > b[2] end
    return a[1] < b[1]
  end)
  local parts = {}
  for i, x in ipairs(list) do
    if i > max then
      parts[#parts + 1] = ("... (%d names in all)"):format(#list)
      break
    end
    parts[#parts + 1] = ("'%s' (%d)"):format(read.printable(x[1], 60), x[2])
  end
  return table.concat(parts, ", "), list
end

-- no step range anywhere: say what there was
local function no_steps(trace, o)
  local procs = #trace.processes
  if procs == 0 then
    return ("the program wrote no trace: no process of it started NVTX or CUDA with the trace library, so there is no range named '%s' (wlrun trace reads NVTX ranges: push them around the step, docs/trace.md)"):format(
      read.printable(o.step, 60))
  end
  local counts, n = {}, 0
  for _, p in ipairs(trace.processes) do
    for _, r in ipairs(p.ranges) do
      counts[r.name] = (counts[r.name] or 0) + 1
      n = n + 1
    end
  end
  local where = ("%d process%s"):format(procs, procs == 1 and "" or "es")
  if n == 0 then
    return ("no NVTX range was seen in the %s traced, so none named '%s': push a range around each step (docs/trace.md)"):format(
      where, read.printable(o.step, 60))
  end
  return ("no closed range named '%s' in the %s traced; the ranges seen (%d in all), by count: %s; name the step's range with --step NAME"):format(
    read.printable(o.step, 60), where, n, (by_count(counts, 20)))
end

-- the nearest step at or above each range (its parent chain), memoised
local function step_finder(is_step)
  local memo = {}
  return function(r)
    local chain, at = {}, r
    while at and memo[at] == nil do
      if is_step[at] then
        memo[at] = at
        break
      end
      chain[#chain + 1] = at
      at = at.parent
    end
    local s = at and memo[at] or false
    for _, c in ipairs(chain) do memo[c] = s end
    return s or nil
  end
end

-- the outermost range named `name` at or above r, or nil
local function outermost(r, name)
  local found
  while r do
    if r.name == name then found = r end
    r = r.parent
  end
  return found
end

-- whether a range between r (excluded) and the step s has r's name
local function shadowed(r, s)
  local at = r.parent
  while at and at ~= s do
    if at.name == r.name then return true end
    at = at.parent
  end
  return false
end

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

-- the step whose [start, stop] holds t, or nil (steps sorted by start)
local function step_at(steps, t)
  local lo, hi = 1, #steps
  if hi == 0 or t < steps[1].start then return nil end
  while lo < hi do
    local mid = (lo + hi + 1) // 2
    if steps[mid].start <= t then lo = mid else hi = mid - 1 end
  end
  for i = lo, 1, -1 do -- overlapping steps (start/end ranges): the latest that holds t
    if steps[i].stop >= t then return i end
    if i < lo - 8 then break end
  end
  return nil
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
  for name, e in pairs(t or {}) do list[#list + 1] = { name = name, count = e.count, time = e.time } end
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
    return { state = "none", reason = "no CUDA in this process (the trace library's CUDA injection never started)" }
  end
  return { state = p.cupti.state, reason = p.cupti.reason and name_of(p.cupti.reason) or nil }
end

-- the batch size: the option, else the step ranges' payload, else 1; and where it came from
local function batch_of(o, measured, notes)
  if o.batch_size then return o.batch_size, "option" end
  local lo, hi, total, n = math.huge, -math.huge, 0, 0
  for _, s in ipairs(measured) do
    if math.type(s.payload) == "integer" and s.payload >= 1 then
      lo, hi, total, n = math.min(lo, s.payload), math.max(hi, s.payload), total + s.payload, n + 1
    end
  end
  if n > 0 and n == #measured then
    if lo == hi then return lo, "payload" end
    local bs = math.max(1, math.floor(total / n + 0.5))
    notes[#notes + 1] = ("the step ranges' payloads differ (%d to %d): the batch size is their mean, %d"):format(lo, hi, bs)
    return bs, "payload"
  end
  notes[#notes + 1] = n > 0 and "some step ranges carry no payload: batch size 1 (give --batch-size N)"
    or "batch size 1 (no --batch-size and no integer payload on the step ranges): throughput is steps per second"
  return 1, "default"
end

local function warning(list, code, title, message, hint)
  list[#list + 1] = { code = code, title = title, message = message, hint = hint }
end

-- what each kind of D record counts (src/trace/trace_format.h)
local LOST = {
  cupti = "GPU activity records CUPTI dropped", memory = "records for want of memory",
  depth = "ranges pushed inside 256 open ones (not recorded: a push without its pop?)",
}

-- the warnings about the process itself: open ranges, lost records, the library's errors
local function process_warnings(p, w)
  local open = {}
  for _, r in ipairs(p.ranges) do
    if r.open then open[r.name] = (open[r.name] or 0) + 1 end
  end
  if next(open) then
    warning(w, "open-ranges", "ranges never closed", ("ranges still open when process %d ended: %s"):format(p.pid,
      (by_count(open, 10))), "a range pushed without its pop, or the program stopped inside it; open ranges are not measured")
  end
  local lost = {}
  for what, n in pairs(p.dropped) do
    if n > 0 then lost[#lost + 1] = ("%d %s"):format(n, LOST[what] or name_of(what)) end
  end
  table.sort(lost)
  if #lost > 0 then
    warning(w, "records-lost", "trace records lost", ("process %d lost records (%s): the times are short of what was lost"):format(
      p.pid, table.concat(lost, ", ")), "docs/trace.md, \"The results document\"")
  end
  if #p.errors > 0 then
    local list = {}
    for i = 1, math.min(3, #p.errors) do list[i] = read.printable(p.errors[i], 160) end
    local more = #p.errors - #list + p.errors_more
    warning(w, "trace-errors", "the trace library met errors", ("in process %d: %s%s"):format(p.pid,
      table.concat(list, "; "), more > 0 and ("; and %d more"):format(more) or ""), "docs/trace.md")
  end
  if not p.exit then
    warning(w, "process-killed", "the process did not exit", ("process %d ended without a normal exit (killed by a signal, or _exit)%s: what it did last may be missing"):format(
      p.pid, p.truncated and ", its trace file cut short" or ""), "the report covers the steps that were written")
  end
end

-- the report of one process: its entry (k: its index, of n processes with steps)
local function process_entry(p, steps, k, n, o)
  local entry = { index = k, params = n > 1 and { process = k } or {} }
  local notes, warnings = {}, {}
  local cupti = cupti_of(p)
  local gpu = cupti.state == "on"
  local tid = steps[1].tid
  local t = {
    step = name_of(o.step), data = name_of(o.data), timing = gpu and "gpu" or "cpu", steps = #steps,
    process = { pid = p.pid, ppid = p.ppid, command = p.command and read.printable(p.command, 1000) or nil,
                thread = p.threads[tid] and name_of(p.threads[tid]) or tostring(tid),
                exited = p.exit ~= nil, truncated = p.truncated },
    cupti = cupti,
  }
  entry.trace = t
  local W = o.warmup
  if #steps <= W then
    entry.status, entry.kind = "failed", "usage"
    entry.error = ("process %d has %d closed '%s' range%s, not more than --warmup %d: no iteration left to measure (lower --warmup, or run more steps)"):format(
      p.pid, #steps, t.step, #steps == 1 and "" or "s", W)
    process_warnings(p, warnings)
    entry.warnings = warnings
    return entry
  end

  local iter_of, is_step = {}, {}
  for i, s in ipairs(steps) do iter_of[s], is_step[s] = i, true end
  local step_of = step_finder(is_step)
  local pm = {} -- the iterations' windows: (pm[i-1], pm[i]]
  for i, s in ipairs(steps) do pm[i] = math.max(pm[i - 1] or s.stop, s.stop) end

  -- data: the outermost data ranges, of the step's thread when it has any
  local data, on_thread = {}, false
  for _, r in ipairs(p.ranges) do
    if not r.open and r.name == o.data and outermost(r, o.data) == r then
      data[#data + 1] = r
      on_thread = on_thread or r.tid == tid
    end
  end
  local data_time, data_iter = {}, {}
  for i = 1, #steps do data_time[i] = 0.0 end -- floats: sums of ns past 2^63 do not wrap round
  if #data > 0 then
    t.data_source, t.data_threads = "ranges", on_thread and "step" or "all"
    for _, r in ipairs(data) do
      if not on_thread or r.tid == tid then
        local i = window_of(pm, r.start)
        if i then
          data_time[i] = data_time[i] + (r.stop - r.start)
          data_iter[r] = i
        end
      end
    end
  else
    t.data_source = "gap"
    for i = 2, #steps do data_time[i] = math.max(0, steps[i].start - pm[i - 1]) end
    notes[#notes + 1] = ("no '%s' ranges: the data time is the gap between one step's end and the next one's start"):format(t.data)
  end

  -- phases: CPU time of each name's outermost occurrences in each step
  local phases = {} -- per iteration: {by = {name = {cpu, gpu, first}}, order}
  for i = 1, #steps do phases[i] = { by = {} } end
  local top = {}
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
      if s and s ~= r and not shadowed(r, s) then
        local ph = phase(iter_of[s], r.name, r.start)
        if r.stop then ph.cpu = ph.cpu + (r.stop - r.start) end
        top[r.name] = top[r.name] or r.parent == s
      end
    end
  end

  -- GPU work, by the range its launch was made in
  local busy, outside, data_gpu, unattributed, kernels = {}, {}, {}, {}, {}
  for i = 1, #steps do busy[i], outside[i], data_gpu[i], unattributed[i], kernels[i] = {}, 0.0, 0.0, 0.0, {} end
  if gpu then
    for _, w in ipairs(p.gpu) do
      local r = p.by_rid[p.corr[w.corr] or -1]
      local s = r and step_of(r)
      local dur = w.stop - w.start
      if s then
        local i = iter_of[s]
        busy[i][#busy[i] + 1] = { w.start, w.stop }
        if r == s then
          outside[i] = outside[i] + dur
        else
          local seen, at = {}, r
          while at ~= s do
            if not seen[at.name] then
              seen[at.name] = true
              local ph = phase(i, at.name, at.start)
              ph.gpu = ph.gpu + dur
              tally(kernels[i], at.name, w)
            end
            at = at.parent
          end
        end
      else
        local d = r and outermost(r, o.data)
        local i = d and data_iter[d]
        if i then
          data_gpu[i] = data_gpu[i] + dur
          tally(kernels[i], "\0data", w)
        else
          i = step_at(steps, w.start)
          if i then unattributed[i] = unattributed[i] + dur end
        end
      end
    end
  end

  -- the measured iterations
  local rec = { iter = {}, data = {}, phases = {} }
  local measured = {}
  local cpu_of, gpu_of, names, seen_name = {}, {}, {}, {}
  local busy_s, outside_s, data_gpu_s, unattributed_s = {}, {}, {}, {}
  local tallies = {}
  for i = W + 1, #steps do
    local j = i - W
    local s = steps[i]
    measured[j] = s
    rec.iter[j] = seconds(s.stop - s.start)
    rec.data[j] = seconds(data_time[i])
    local order = {}
    for name, ph in pairs(phases[i].by) do order[#order + 1] = { name = name, ph = ph } end
    table.sort(order, function(a, b)
      if a.ph.first ~= b.ph.first then return a.ph.first < b.ph.first end
      return a.name < b.name
    end)
    local list = {}
    for _, x in ipairs(order) do
      local time = seconds(gpu and x.ph.gpu or x.ph.cpu)
      list[#list + 1] = { name = name_of(x.name), time = time, top = top[x.name] or false }
      if not seen_name[x.name] then
        seen_name[x.name] = true
        names[#names + 1] = x.name
        cpu_of[x.name], gpu_of[x.name] = {}, {}
      end
      cpu_of[x.name][j] = seconds(x.ph.cpu)
      gpu_of[x.name][j] = seconds(x.ph.gpu)
    end
    rec.phases[j] = list
    busy_s[j] = seconds(union_length(busy[i]))
    outside_s[j] = seconds(outside[i])
    data_gpu_s[j] = seconds(data_gpu[i])
    unattributed_s[j] = seconds(unattributed[i])
    for key, k in pairs(kernels[i]) do
      local agg = tallies[key]
      if not agg then agg = {}; tallies[key] = agg end
      for kname, e in pairs(k) do
        local a = agg[kname]
        if not a then a = { count = 0, time = 0.0 }; agg[kname] = a end
        a.count, a.time = a.count + e.count, a.time + e.time
      end
    end
  end
  local nm = #rec.iter
  local function filled(xs) -- a phase absent from an iteration took no time in it
    local out = {}
    for j = 1, nm do out[j] = xs[j] or 0 end
    return out
  end
  t.phases = {}
  for _, name in ipairs(names) do
    local ph = { name = name_of(name), top = top[name] or false, cpu = filled(cpu_of[name]) }
    ph.cpu_mean = mean(ph.cpu)
    if gpu then
      ph.gpu = filled(gpu_of[name])
      ph.gpu_mean = mean(ph.gpu)
      if o.kernels then ph.kernels = top_kernels(tallies[name], o.top_kernels) end
    end
    t.phases[#t.phases + 1] = ph
  end
  if gpu then
    t.gpu_busy, t.gpu_busy_mean = busy_s, mean(busy_s)
    t.gpu_outside, t.gpu_outside_mean = outside_s, mean(outside_s)
    t.gpu_unattributed, t.gpu_unattributed_mean = unattributed_s, mean(unattributed_s)
    if t.data_source == "ranges" then
      t.data_gpu, t.data_gpu_mean = data_gpu_s, mean(data_gpu_s)
      if o.kernels then t.data_kernels = top_kernels(tallies["\0data"], o.top_kernels) end
    end
  end
  local bs, source = batch_of(o, measured, notes)
  rec.batch_size, t.batch_source = bs, source

  loop.record(entry, rec, W)
  for _, x in ipairs(entry.warnings) do warnings[#warnings + 1] = x end
  if not gpu then
    warning(warnings, "cpu-only", "CPU times only", ("CPU times only (no GPU / CUPTI: %s): the phases' times are their ranges' durations on the CPU"):format(
      cupti.reason or cupti.state), "run where CUPTI loads (a GPU, libcupti.so.13: WLRUN_TRACE_CUPTI) for GPU time per phase")
  elseif t.gpu_busy_mean > 0 and t.gpu_unattributed_mean > report.UNATTRIBUTED_SHARE * t.gpu_busy_mean then
    warning(warnings, "gpu-unattributed", "GPU work outside every range",
      ("%.0f%% of the GPU work that ran during the steps was launched while no range of the step was open: it counts in no phase"):format(
        100 * t.gpu_unattributed_mean / (t.gpu_busy_mean + t.gpu_unattributed_mean)),
      "work launched before the step's range was pushed (or with no range open at all) runs inside the step all the same; docs/trace.md, \"Attribution\"")
  end
  process_warnings(p, warnings)
  entry.warnings = warnings
  entry.notes = #notes > 0 and notes or nil
  return entry
end

-- whether a closed range named `name` holds r (its parent chain)
local function inside_closed(r, name)
  local at = r.parent
  while at do
    if at.name == name and not at.open then return true end
    at = at.parent
  end
  return false
end

-- the closed step ranges of a process, in start order: the outermost ones (a step range inside a
-- closed one is one of its phases, not an iteration of its own)
local function steps_of(p, name)
  local list = {}
  for _, r in ipairs(p.ranges) do
    if r.name == name and not r.open and not inside_closed(r, name) then list[#list + 1] = r end
  end
  table.sort(list, function(a, b)
    if a.start ~= b.start then return a.start < b.start end
    return a.rid < b.rid
  end)
  return list
end

function report.entries(trace, opts)
  local o = {}
  for k, v in pairs(report.DEFAULTS) do o[k] = v end
  for k, v in pairs(opts or {}) do o[k] = v end
  local with = {}
  for _, p in ipairs(trace.processes) do
    local steps = steps_of(p, o.step)
    if #steps > 0 then with[#with + 1] = { p = p, steps = steps } end
  end
  if #with == 0 then core().error("usage", no_steps(trace, o), 0) end
  local entries = {}
  printed = {}
  for k, x in ipairs(with) do entries[k] = process_entry(x.p, x.steps, k, #with, o) end
  printed = {}
  return entries
end

return report
