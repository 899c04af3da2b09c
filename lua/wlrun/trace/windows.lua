-- The iterations of a traced loop in time (docs/trace.md, "Iterations"): each step's window,
-- bounded by the GPU work launched before it, as the methodology's template bounds it with
-- torch.cuda.synchronize() before and after the step. Pure: numbers in, numbers out.
--
--   windows.frontier(work, launched_at, times) -> F
--     F[t] for each t of times: the latest end of the GPU work launched before t (nil: none).
--     work: {start, stop, corr} records; launched_at(w): the time w was launched, or nil
--   windows.waited(steps, waits, opened) -> {[i] = wait}
--     the loop's synchronisation after step i (W records, src/trace/trace_waits.c): its wait,
--     where that returned before the next step began and was entered before any range opened on
--     the step's thread since the step's close — or, for a step of the Python hook's left open
--     after its optimizer's step, where the library ended its range at that wait's return.
--     steps: {rid, start, stop, tid} in start order;
--     waits: {tid, rid (the step's), start (entered), stop (returned)}; opened[tid]: the sorted
--     starts of that thread's ranges, the batch the loop makes next (opened as the step closes)
--     left out
--   windows.before(steps, befores, opened) -> {[i] = wait}
--     the loop's synchronisation before step i (B records): its wait, where that returned no
--     later than the step's range opened and no range opened on the step's thread in between
--     (opened as for windows.waited)
--   windows.of(steps, F, gpu, waited, before) -> {start = {}, stop = {}, work_end = {},
--       waited = {}, began = {}, data_end = {}}
--     steps: {start, stop} in start order. start[i] = max(s_i, F(s_i), stop[i-1]): the step
--     begins when its range opens and the work launched before it has finished — or, earlier,
--     when the loop's synchronisation before it (before[i]) returned, where that was entered
--     after the previous window's end and returned within windows.WAIT_SHARE of the step's
--     length and windows.WAIT_MAX before that (what the loop does between its synchronisation
--     and the step's first call that a range sees, an autocast's entry, is the step's, as the
--     template's t0 after its synchronisation makes it); began[i] true where it did, and
--     data_end[i], the bound of the data before the step, the wait's entry (else start[i]: the
--     template's batch is in hand before its synchronisation). stop[i] =
--     max(e_i, F(e_i), start[i]): it ends when its range has closed and the work launched before
--     that has finished — or, later, when the loop's synchronisation after it (waited[i]) returned,
--     where that was entered before the step's GPU work ended (it waited for the step), or within
--     windows.WAIT_SHARE of the step's length and windows.WAIT_MAX after its close (the loop's
--     tail after the step, as the template's step holds it; a longer while is the loop's other
--     work, the next batch's loading, which a wait after it must not make the step's), and where
--     F(wait's entry) is no later than the step's GPU end (work another thread launched after the
--     step, which the wait waited for, is not the step's: F must hold the entries' times).
--     waited[i] true where it did, or where the step's range ended at its wait's return (the
--     hook's) and no GPU work outlasted that.
--     Without GPU times (gpu false) the windows are the ranges (and the waits). work_end[i]:
--     the end without the wait, max(e_i, F(e_i), start[i])
--   windows.run_ahead(steps, win, from) -> {lag = {s...}, ahead = {n...}} for i >= from: how
--     long each step's GPU work outlasts its range (work_end, not the loop's wait: a wait's
--     return after the GPU's end is the CPU's), and how many later steps had started on the
--     CPU by then
--   windows.clip(intervals, lo, hi) -> total length of the union of {a, b} within [lo_i, hi_i]
--     for each i: {total...}; intervals need not be sorted or disjoint, the [lo, hi] must be
--     sorted and disjoint
local windows = {}

-- the longest while after a step's close, as a share of the step's window, that the loop's
-- synchronisation after it may come and still end the step (where the GPU was idle by then)
windows.WAIT_SHARE = 0.1
-- and at most this long (ns): the tail it stands for (an optimizer's return, a scheduler's step)
-- is a fixed cost, not one that grows with the step
windows.WAIT_MAX = 1000000

-- the index of the first element of sorted xs above t (#xs + 1 when none)
local function first_above(xs, t)
  local lo, hi = 1, #xs + 1
  while lo < hi do
    local mid = (lo + hi) // 2
    if xs[mid] > t then hi = mid else lo = mid + 1 end
  end
  return lo
end

function windows.frontier(work, launched_at, times)
  local q = {}
  for i, t in ipairs(times) do q[i] = t end
  table.sort(q)
  local latest = {} -- latest[j]: the latest end of the work launched in [q[j-1], q[j])
  for _, w in ipairs(work) do
    local at = launched_at(w)
    if at then
      local j = first_above(q, at)
      if j <= #q and (not latest[j] or w.stop > latest[j]) then latest[j] = w.stop end
    end
  end
  local F, running = {}, nil
  for j, t in ipairs(q) do
    local l = latest[j]
    if l and (not running or l > running) then running = l end
    F[t] = running
  end
  return F
end

-- {[i] = wait} for the steps that keep(i, s, wait, the starts of the ranges opened on the step's
-- thread) takes, each step's wait the one naming its thread and range id
local function of_steps(steps, waits, opened, keep)
  local of = {}
  for _, w in ipairs(waits) do of[w.tid .. ":" .. w.rid] = w end
  local out = {}
  for i, s in ipairs(steps) do
    local w = of[s.tid .. ":" .. tostring(s.rid)]
    if w and keep(i, s, w, opened[s.tid] or {}) then out[i] = w end
  end
  return out
end

function windows.waited(steps, waits, opened)
  return of_steps(steps, waits, opened, function(i, s, w, starts)
    local after = steps[i + 1] and steps[i + 1].start
    if (w.start < s.stop and w.stop ~= s.stop) or after and w.stop > after then return false end
    local k = first_above(starts, s.stop - 1) -- the first range opened at or after the close
    return not starts[k] or starts[k] > w.start
  end)
end

function windows.before(steps, befores, opened)
  return of_steps(steps, befores, opened, function(_, s, w, starts)
    if w.stop > s.start then return false end
    local k = first_above(starts, w.stop - 1) -- the first range opened at or after its return
    return not starts[k] or starts[k] >= s.start
  end)
end

-- the start of step i's window from the loop's synchronisation before it (windows.of), or nil
local function began_at(s, a, b, F, gpu, v, prev)
  if not v or prev and v.start < prev then return nil end
  local at = math.max(v.stop, gpu and F[s.start] or v.stop)
  local gap = a - at
  if gap > 0 and gap <= windows.WAIT_SHARE * (b - a) and gap <= windows.WAIT_MAX then return at end
  return nil
end

function windows.of(steps, F, gpu, waited, before)
  local win = { start = {}, stop = {}, work_end = {}, waited = {}, began = {}, data_end = {} }
  local prev
  for i, s in ipairs(steps) do
    local a, b = s.start, s.stop
    if gpu then
      a = math.max(a, F[s.start] or a)
      b = math.max(b, F[s.stop] or b)
    end
    local v = before and before[i]
    local early = began_at(s, a, b, F, gpu, v, prev)
    local data_end
    if early then a, data_end, win.began[i] = early, v.start, true end
    local work_end = b
    local w = waited and waited[i]
    local gap = w and w.start - s.stop
    -- (and nothing launched before the wait, on another thread, outlasting the step's work)
    if w and w.stop > b and not (gpu and (F[w.start] or b) > b)
      and (w.start < b or gap <= windows.WAIT_SHARE * (b - a) and gap <= windows.WAIT_MAX) then
      b, win.waited[i] = w.stop, true
    elseif w and w.stop == s.stop and b == s.stop then
      win.waited[i] = true -- (the range ended at its return: the hook's step)
    end
    if prev and a < prev then a = prev end
    if b < a then b = a end
    win.start[i], win.stop[i], win.work_end[i] = a, b, math.max(work_end, a)
    win.data_end[i] = data_end or a
    prev = b
  end
  return win
end

function windows.run_ahead(steps, win, from)
  local lag, ahead = {}, {}
  local starts = {}
  for i, s in ipairs(steps) do starts[i] = s.start end
  for i = from, #steps do
    local done = win.work_end[i] -- (never after the window's stop)
    lag[#lag + 1] = math.max(0, done - steps[i].stop)
    -- later steps whose range had opened before this one's work was done
    ahead[#ahead + 1] = math.max(0, first_above(starts, done) - 1 - i)
  end
  return { lag = lag, ahead = ahead }
end

function windows.clip(intervals, lo, hi)
  local list = {}
  for _, iv in ipairs(intervals) do
    if iv[2] > iv[1] then list[#list + 1] = iv end
  end
  table.sort(list, function(x, y) return x[1] < y[1] end)
  local merged = {}
  for _, iv in ipairs(list) do
    local last = merged[#merged]
    if last and iv[1] <= last[2] then
      if iv[2] > last[2] then last[2] = iv[2] end
    else
      merged[#merged + 1] = { iv[1], iv[2] }
    end
  end
  local out, k = {}, 1
  for i = 1, #lo do
    local total = 0.0
    while k <= #merged and merged[k][2] <= lo[i] do k = k + 1 end
    local j = k
    while j <= #merged and merged[j][1] < hi[i] do
      local a, b = math.max(merged[j][1], lo[i]), math.min(merged[j][2], hi[i])
      if b > a then total = total + (b - a) end
      j = j + 1
    end
    out[i] = total
  end
  return out
end

return windows
