-- What wlrun trace's report says beside its numbers (docs/trace.md): the error when no process
-- has steps, the warnings about a process (open ranges, lost records, the library's errors, no
-- normal exit, CPU times only, work outside every range) and the notes (the hook's steps, how
-- far the loop runs ahead of the GPU, the steps its own synchronisation ends, a GPU idle most of
-- the step). Pure: parsed processes and report fields in, text out.
local units = require "wlrun.text.units"
local read = require "wlrun.trace.read"
local ranges = require "wlrun.trace.ranges"

local notes = {}

-- GPU work in steps' windows without a range, above this share of busy time: a warning
notes.UNATTRIBUTED_SHARE = 0.05
-- windows outlast their ranges by more than this share of iter: a note says how far
notes.RUN_AHEAD = 0.02
-- time between the steps that is neither data nor step, above this share of the period: a note
notes.BETWEEN = 0.05
-- the GPU busy less than this share of an iteration, the loop not running ahead: a note that the
-- step is bound by its CPU side
notes.GPU_IDLE = 0.5

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
function notes.no_steps(trace, o)
  local procs = #trace.processes
  if procs == 0 then
    return (
      "the program wrote no trace: no process of it started NVTX or CUDA with the trace "
      .. "library, so there is no range named '%s' (wlrun trace reads NVTX ranges: push them "
      .. "around the step, docs/trace.md; a PyTorch program needs none while wlrun's hook is "
      .. "on: it finds the optimizer's steps)"):format(
      read.printable(o.step, 60))
  end
  local counts, n = {}, 0
  for _, p in ipairs(trace.processes) do
    for _, r in ipairs(p.ranges) do
      local name = ranges.is_auto(r) and r.name .. " [wlrun's hook]" or r.name
      counts[name] = (counts[name] or 0) + 1
      n = n + 1
    end
  end
  local where = ("%d process%s"):format(procs, procs == 1 and "" or "es")
  if n == 0 then
    return (
      "no NVTX range was seen in the %s traced, so none named '%s': push a range around each "
      .. "step (docs/trace.md; a PyTorch program needs none when it steps a torch.optim "
      .. "optimizer: wlrun's hook then finds the steps)"):format(
      where, read.printable(o.step, 60))
  end
  local deep = 0 -- pushes past the depth the library records, with their pops
  for _, p in ipairs(trace.processes) do deep = deep + (p.dropped.depth or 0) end
  local backward = counts["backward [wlrun's hook]"]
  return (
    "no closed range named '%s' in the %s traced; the ranges seen (%d in all), by count: %s; "
    .. "name the step's range with --step NAME%s%s"):format(
    read.printable(o.step, 60), where, n, (by_count(counts, 20)),
    backward and not counts["optimizer [wlrun's hook]"] and ("; wlrun's hook saw %d backward "
      .. "pass%s and no optimizer step: where a program has made a torch.optim optimizer, its "
      .. "steps end at the optimizer's step (a backward ends one only where there is none), and "
      .. "this one's was never stepped (the loop updates the weights itself?), so push a range "
      .. "around each step (docs/trace.md)"):format(backward, backward == 1 and "" or "es") or "",
    deep > 0 and ("; %d ranges were not recorded, pushed inside %d open ones on their thread "
      .. "(the library's bound): a step range among them is not seen"):format(deep,
      read.LIMITS.depth) or "")
end

-- why a process's report holds CPU times only
function notes.cpu_reason(cupti)
  if cupti.state == "on" then return "CUPTI was on, but the process ran no GPU work" end
  return cupti.reason or cupti.state
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
function notes.process(p, w)
  local open = {}
  for _, r in ipairs(p.ranges) do
    -- the hook's: never closed at exit
    if r.open and not ranges.is_auto(r) then open[r.name] = (open[r.name] or 0) + 1 end
  end
  if next(open) then
    warning(w, "open-ranges", "ranges never closed",
      ("ranges still open when process %d ended: %s"):format(p.pid,
      (by_count(open, 10))),
        "a range pushed without its pop, or the program stopped inside it; open ranges are not "
        .. "measured")
  end
  local lost = {}
  for what, n in pairs(p.dropped) do
    if n > 0 then lost[#lost + 1] = ("%d %s"):format(n, LOST[what] or read.printable(what, 200)) end
  end
  table.sort(lost)
  if #lost > 0 then
    warning(w, "records-lost", "trace records lost",
      ("process %d lost records (%s): the times are short of what was lost"):format(
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
    warning(w, "process-killed", "the process did not exit",
      ("process %d ended without a normal exit (killed by a signal, or _exit)%s: what it did "
      .. "last may be missing"):format(
      p.pid, p.truncated and ", its trace file cut short" or ""),
        "the report covers the steps that were written")
  end
end

-- how far the GPU work outlasts the step ranges (t.run_ahead): a note when the lag is more than
-- RUN_AHEAD of an iteration
function notes.run_ahead(t, iter_mean, list)
  local r = t.run_ahead
  if iter_mean > 0 and r.lag_mean > notes.RUN_AHEAD * iter_mean then
    list[#list + 1] = (
      "the GPU work of a step ends %s after its '%s' range closes (mean; at most %s): the "
      .. "program runs %s ahead of the GPU (mean %.1f); each iteration is timed to the end of "
      .. "its GPU work"):format(
      units.time(r.lag_mean), t.step, units.time(r.lag_max),
      r.steps_max == 0 and "less than a step" or ("up to %d step%s"):format(r.steps_max,
        r.steps_max == 1 and "" or "s"),
      r.steps_mean)
  end
end

-- the measured steps (from W + 1 of n) that end where the loop's own synchronisation after them
-- returned, and that begin where the one before them returned (win.waited[i], win.began[i]:
-- wlrun.trace.windows.of's): trace.waited_steps, trace.began_steps, and a note of each
function notes.waited(t, win, W, n, list)
  local count, began = 0, 0
  for i = W + 1, n do
    if win.waited[i] then count = count + 1 end
    if win.began[i] then began = began + 1 end
  end
  t.waited_steps, t.began_steps = count > 0 and count or nil, began > 0 and began or nil
  local said = {
    { count, "end where the loop's own synchronisation after them returned (its first call after "
      .. "the step to synchronise the device or a default stream, with no GPU work started "
      .. "before it), as the template's step ends after its torch.cuda.synchronize()" },
    { began, "begin where the loop's own synchronisation before them returned (its last call "
      .. "before the step to synchronise, of the device, with no GPU work started after it), and "
      .. "their data ends where it was entered, as the template's t0 follows its "
      .. "torch.cuda.synchronize()" } }
  for _, s in ipairs(said) do
    if s[1] > 0 then
      list[#list + 1] = ("%d of the %d steps measured %s"):format(s[1], n - W, s[2])
    end
  end
end

-- GPU activity recorded on a sample of the measured steps (timed: their indices among the n
-- measured, trace.gpu_steps; {} for none; nil: every one; docs/trace.md, "Steps with their GPU
-- work recorded"); marked: the report had usable marks
function notes.sampled(timed, n, list, marked)
  if not timed then return end
  if not marked then
    list[#list + 1] = ("GPU work recorded on %d of the %d steps measured (--gpu-every), and no "
      .. "usable mark of where the others' GPU work ended (none came from CUPTI, or on another "
      .. "clock): those steps' iterations end with their ranges, which can be before their GPU "
      .. "work; --gpu-every 1 records every step"):format(#timed, n)
    return
  end
  if #timed == 0 then
    list[#list + 1] = ("no measured step had its GPU work recorded (GPU activity was on for one "
      .. "step in several, --gpu-every): the phases are CPU times; lower --warmup, run more "
      .. "steps, or --gpu-every 1"):format()
    return
  end
  list[#list + 1] = ("GPU work recorded on %d of the %d steps measured (one in %s; --gpu-every "
    .. "1 for every step): the phases' GPU times and kernels are theirs; every iteration is "
    .. "bounded by marks of its GPU work's end"):format(#timed, n,
    ("%.0f"):format(n / #timed))
end

-- a step whose GPU is idle most of its iteration (a launch-bound PyTorch step: the Python and the
-- launches take longer than the kernels) reads as mostly "(outside)" in a breakdown of GPU times:
-- a note says so, with the top phases' CPU times, where the time goes
function notes.gpu_idle(t, iter_mean, list)
  if iter_mean <= 0 or t.gpu_busy_mean >= notes.GPU_IDLE * iter_mean
    or t.run_ahead.lag_mean > notes.RUN_AHEAD * iter_mean then
    return
  end
  local cpu = {}
  for _, ph in ipairs(t.phases) do
    if ph.top then cpu[#cpu + 1] = read.printable(ph.name, 60) .. " " .. units.time(ph.cpu_mean) end
  end
  list[#list + 1] = (
    "the GPU is busy %s of an iteration's %s (%.0f%%; mean): the step waits on its CPU side "
    .. "(launching its work, Python, host work between the GPU's) more than on its kernels, and "
    .. "(outside) is mostly the GPU idle%s; faster kernels would not shorten it, fewer launches "
    .. "would (torch.compile, CUDA graphs, a larger batch), and tracing adds the most to such a "
    .. "step (CUPTI's 3-4 us a launch; docs/trace.md)"):format(
    units.time(t.gpu_busy_mean), units.time(iter_mean), 100 * t.gpu_busy_mean / iter_mean,
    #cpu > 0 and ("; the top phases' CPU times: " .. table.concat(cpu, ", ")) or "")
end

-- time in the steps' period that is neither data nor step (evaluation between the steps,
-- logging, a checkpoint): samples/s counts it, as a steady-state throughput does; a note when it
-- is more than BETWEEN of the period, with the throughput of the iterations and data alone
function notes.between(t, s, list)
  local n, total = s.iters, s.total_time
  if n == 0 or total <= 0 or t.between_mean <= notes.BETWEEN * total / n then return end
  local most = 0
  for _, b in ipairs(t.between) do most = math.max(most, b) end
  local busy = total - t.between_mean * n
  list[#list + 1] = (
    "%s a step (mean; at most %s; %.0f%% of the measured period in all) lies outside the steps "
    .. "and their data, neither data nor step (evaluation between the steps, logging, a "
    .. "checkpoint, waiting: the loop's synchronisation before a step too): samples/s (%.1f) "
    .. "counts it, as the loop's steady-state throughput; over the iterations and their data "
    .. "alone it is %.1f"):format(
    units.time(t.between_mean), units.time(most), 100 * t.between_mean * n / total,
    s.throughput, busy > 0 and s.throughput * total / busy or 0)
end

-- the warnings and notes of a measured process (t: its trace fields)
function notes.measured(p, t, cupti, o, warnings, list)
  local gpu = t.timing == "gpu"
  if not gpu then
    local how = o.sync_steps
      and "the steps were synchronised (--sync-steps), so each range ends with its GPU work"
      or "an iteration is its step range's CPU time, which can end before the step's GPU work "
        .. "does (a loop that does not synchronise)"
    warning(warnings, "cpu-only", "CPU times only",
      ("CPU times only (no GPU / CUPTI: %s): the phases' times are their ranges' durations on "
      .. "the CPU; %s"):format(
      notes.cpu_reason(cupti), how),
        "run where CUPTI loads (a GPU, libcupti.so.13: WLRUN_TRACE_CUPTI) for GPU times and "
        .. "iterations bounded by their GPU work")
  elseif t.gpu_busy_mean and t.gpu_busy_mean > 0 -- (no GPU lists: no measured step recorded)
    and t.gpu_unattributed_mean > notes.UNATTRIBUTED_SHARE
    * t.gpu_busy_mean then
    warning(warnings, "gpu-unattributed", "GPU work outside every range",
      ("%.0f%% of the GPU work that ran during the steps was launched while no range of the "
        .. "step was open: it counts in no phase"):format(
        100 * t.gpu_unattributed_mean / (t.gpu_busy_mean + t.gpu_unattributed_mean)),
      "work launched before the step's range was pushed (or with no range open at all) runs "
        .. "inside the step all the same; docs/trace.md, \"Attribution\"")
  end
  if o.steps and o.steps > 0 and t.steps >= o.steps then
    list[#list + 1] = ("the first %d steps were traced (--steps %d): nothing after them was "
      .. "recorded; --steps 0 traces every step"):format(o.steps, o.steps)
  end
  if t.ranges == "auto" then
    list[#list + 1] = (
      "no '%s' ranges of the program's own: the steps are wlrun's automatic PyTorch ranges (one "
      .. "per optimizer step; docs/trace.md, \"No annotation needed\")"):format(
      t.step)
  end
  notes.process(p, warnings)
end

return notes
