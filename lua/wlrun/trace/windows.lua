-- The iterations of a traced loop in time (docs/trace.md, "Iterations"): each step's window,
-- bounded by the GPU work launched before it, as the methodology's template bounds it with
-- torch.cuda.synchronize() before and after the step. Pure: numbers in, numbers out.
--
--   windows.frontier(work, launched_at, times) -> F
--     F[t] for each t of times: the latest end of the GPU work launched before t (nil: none).
--     work: {start, stop, corr} records; launched_at(w): the time w was launched, or nil
--   windows.of(steps, F, gpu) -> {start = {}, stop = {}, own_end = {}}
--     steps: {start, stop} in start order. start[i] = max(s_i, F(s_i), stop[i-1]): the step
--     begins when its range opens and the work launched before it has finished; stop[i] =
--     max(e_i, F(e_i), start[i]): it ends when its range has closed and the work launched
--     before that has finished. Without GPU times (gpu false) the windows are the ranges.
--   windows.run_ahead(steps, win, from) -> {lag = {s...}, ahead = {n...}} for i >= from: how
--     long each step's window outlasts its range, and how many later steps had started on the
--     CPU by then
--   windows.clip(intervals, lo, hi) -> total length of the union of {a, b} within [lo_i, hi_i]
--     for each i: {total...}; intervals need not be sorted or disjoint, the [lo, hi] must be
--     sorted and disjoint
local windows = {}

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

function windows.of(steps, F, gpu)
  local win = { start = {}, stop = {} }
  local prev
  for i, s in ipairs(steps) do
    local a, b = s.start, s.stop
    if gpu then
      a = math.max(a, F[s.start] or a)
      b = math.max(b, F[s.stop] or b)
    end
    if prev and a < prev then a = prev end
    if b < a then b = a end
    win.start[i], win.stop[i] = a, b
    prev = b
  end
  return win
end

function windows.run_ahead(steps, win, from)
  local lag, ahead = {}, {}
  local starts = {}
  for i, s in ipairs(steps) do starts[i] = s.start end
  for i = from, #steps do
    lag[#lag + 1] = math.max(0, win.stop[i] - steps[i].stop)
    -- later steps whose range had opened before this one's work was done
    ahead[#ahead + 1] = math.max(0, first_above(starts, win.stop[i]) - 1 - i)
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
