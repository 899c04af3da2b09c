-- The ranges of a traced process as the report reads them (docs/trace.md, "The report"): which
-- are the steps, the nesting of phases in a step, and whose ranges count — the program's own,
-- or those of wlrun's Python start-up hook (the domain "wlrun.auto") where the program has no
-- step range of its own. Pure: a parsed process (wlrun.trace.read) in, lists and lookups out.
local core = require "wlrun.core"
local printable = require "wlrun.text.printable"

local ranges = {}

ranges.AUTO_DOMAIN = "wlrun.auto" -- src/trace/trace_format.h: WL_TRACE_AUTO_DOMAIN

function ranges.is_auto(r) return r.domain == ranges.AUTO_DOMAIN end

-- the payload of the hook's data range whose batch only evaluation used (its fetch is no data)
ranges.EVALUATED = 1 -- src/trace/python/sitecustomize.py: EVALUATED

function ranges.evaluated(r) return r.payload == ranges.EVALUATED and ranges.is_auto(r) end

-- added to the payload of the hook's step whose samples are its model's input, the step having
-- fetched no batch through a DataLoader (src/trace/python/sitecustomize.py: FORWARD_SAMPLES)
ranges.FORWARD_SAMPLES = 1 << 40

-- added to the payload of the hook's data range of a batch the loop made itself, no DataLoader
-- giving it (src/trace/python/sitecustomize.py: MADE); the rest is the time it was in hand
ranges.MADE = 1 << 61

-- The hook's ranges of a batch the loop made: payload the time it was in hand, made true. In
-- place; a second call changes nothing.
function ranges.made_batches(p)
  for _, r in ipairs(p.ranges) do
    if ranges.is_auto(r) and r.name == "data" and math.type(r.payload) == "integer"
      and r.payload >= ranges.MADE then
      r.payload, r.made = r.payload - ranges.MADE, true
    end
  end
end

-- The hook's steps whose samples are their model's input (payload FORWARD_SAMPLES + n): where
-- every closed step of the hook's after the first `skip` (the warmup) that carries samples is one
-- (a batch made in the loop, a dataset read once and sliced), payload n and input true; else (a
-- loader's batch trained on in several optimizer steps, truncated BPTT) no payload and forwarded
-- true, so that the steps that fetched a batch count it (docs/trace.md, Iterations). In place;
-- a second call changes nothing.
function ranges.input_samples(p, skip)
  local list = {}
  for _, r in ipairs(p.ranges) do
    if ranges.is_auto(r) and r.name == "train_step" and not r.open then list[#list + 1] = r end
  end
  table.sort(list, function(a, b) return a.start < b.start end)
  local function input(r)
    return math.type(r.payload) == "integer" and r.payload > ranges.FORWARD_SAMPLES
  end
  local all, any = true, false
  for i = skip + 1, #list do
    local r = list[i]
    if input(r) then any = true
    elseif math.type(r.payload) == "integer" and r.payload >= 1 then all = false end
  end
  for _, r in ipairs(list) do
    if input(r) then
      if all and any then r.payload, r.input = r.payload - ranges.FORWARD_SAMPLES, true
      else r.payload, r.forwarded = nil, true end -- it trained, on no batch of its own
    end
  end
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

-- Two push/pop step ranges of one thread and one domain, neither inside the other, follow one
-- another: a pop ends its own domain's innermost range, so only ranges of two domains can cross
-- (the library moves the other's up to its parent). A file where a step ends after the next one
-- of its domain begins was written by something else, and would make iterations of no length:
-- refused, as a malformed trace is (kind io).
local function no_overlap(p, list)
  local last = {}
  for _, r in ipairs(list) do
    if not r.async then
      local key = r.tid .. "\0" .. tostring(r.domain)
      local prev = last[key]
      if prev and prev.stop > r.start then
        core.error("io", ("%s: step ranges %d and %d ('%s', thread %d, one domain) overlap "
          .. "(%d..%d and %d..%d), neither inside the other: push and pop cannot make that"):format(
          p.file or ("process " .. tostring(p.pid)), prev.rid, r.rid, printable.text(r.name, 60),
          r.tid, prev.start, prev.stop, r.start, r.stop), 0)
      end
      last[key] = r
    end
  end
end

-- the closed step ranges of a process, in start order: the outermost ones (a step range inside a
-- closed one is one of its phases, not an iteration of its own); auto: those of wlrun's hook
-- (true), the program's own (false)
function ranges.steps(p, name, auto)
  local list = {}
  for _, r in ipairs(p.ranges) do
    if r.name == name and not r.open and ranges.is_auto(r) == auto
      and not inside_closed(r, name) then
      list[#list + 1] = r
    end
  end
  table.sort(list, function(a, b)
    if a.start ~= b.start then return a.start < b.start end
    return a.rid < b.rid
  end)
  no_overlap(p, list)
  return list
end

-- A copy of the process to rewrite: its ranges those for which keep(r) is true, copied, each
-- parent the nearest ancestor kept; copy: range -> its copy; nearest(r): the copy at or above r
local function view(p, keep)
  local q = {}
  for k, v in pairs(p) do q[k] = v end
  q.unfiltered = p.unfiltered or p -- the process as read (wlrun.trace.report's loop waits)
  local kept, copy = {}, {}
  for _, r in ipairs(p.ranges) do
    if keep(r) then
      local c = {}
      for k, v in pairs(r) do c[k] = v end
      copy[r] = c
      kept[#kept + 1] = c
    end
  end
  local function nearest(r)
    while r and not copy[r] do r = r.parent end
    return r and copy[r]
  end
  for r, c in pairs(copy) do c.parent = nearest(r.parent) end
  q.ranges, q.by_rid, q.corr = kept, {}, {}
  for _, c in ipairs(kept) do q.by_rid[c.rid] = c end
  return q, copy, nearest
end

-- The process without the hook's ranges, as if it had never pushed them, but those for which
-- keep(r) is true: the ranges kept keep their nesting among themselves (a parent is the nearest
-- ancestor kept), and GPU work launched in a range left out belongs to the innermost range kept
-- that was open on that thread when the work was launched. Its time decides, not the parents: the
-- hook's step opens inside the program's forward and outlives it, so the forward is no ancestor of
-- the hook's ranges, yet their work launched before it closed is the forward's.
function ranges.without_auto(p, keep)
  local q, copy, nearest = view(p, function(r) return not ranges.is_auto(r) or keep(r) end)
  local open_at = ranges.innermost_finder(q.ranges)
  for corr, rid in pairs(p.corr) do
    local r = p.by_rid[rid]
    local t = p.launched[corr]
    local c = copy[r] or (t and open_at(r.tid, t)) or nearest(r.parent)
    if c then q.corr[corr] = c.rid end
  end
  return q
end

-- The samples of each of the program's own steps (ranges in start order, as ranges.steps gives
-- them) that the hook's steps tell: a hook step's payload, the batches its DataLoaders gave it,
-- goes to the own step it overlaps the most, on its thread where the program has steps there
-- (none where it overlaps none: a step the program did not mark); a hook step left open (the
-- recording stopped at --steps before the next fetch ended it) counts the others' mean batch.
-- Returns step -> samples, or nil where the hook has no such step, and whether every hook step
-- counted its model's input (none fetched a batch through a DataLoader: ranges.input_samples).
function ranges.hook_batches(p, steps)
  local hook, total, n, tids, input = {}, 0, 0, {}, true
  for _, s in ipairs(steps) do tids[s.tid] = true end
  for _, r in ipairs(p.ranges) do
    if ranges.is_auto(r) and r.name == "train_step" then
      if r.open then
        hook[#hook + 1] = r
      elseif math.type(r.payload) == "integer" and r.payload >= 1 then
        hook[#hook + 1], total, n = r, total + r.payload, n + 1
        input = input and r.input == true
      end
    end
  end
  if n == 0 then return nil end
  table.sort(hook, function(a, b) return a.start < b.start end)
  local got, j, mean = {}, 1, math.max(1, math.floor(total / n + 0.5))
  for _, h in ipairs(hook) do
    local stop = h.stop or math.huge
    while j <= #steps and steps[j].stop < h.start do j = j + 1 end
    local best, most = nil, 0
    for k = j, #steps do
      local s = steps[k]
      if s.start > stop then break end
      local overlap = math.min(s.stop, stop) - math.max(s.start, h.start)
      if overlap > most and (s.tid == h.tid or not tids[h.tid]) then best, most = s, overlap end
    end
    if best then got[best] = (got[best] or 0) + (h.open and mean or h.payload) end
  end
  return got, input
end

-- the "forward" of no length that the hook puts in a step where its training work on a batch
-- began late (at backward or the optimizer: the forward called no module the hook sees; or after
-- evaluation on the batch in hand: a frozen backbone), its payload the time the batch was in hand
-- (src/trace/python/sitecustomize.py, _Loop.begin)
local function late_marker(r)
  local s = r.parent
  return ranges.is_auto(r) and r.name == "forward" and not r.open and s and ranges.is_auto(s)
    and s.name == "train_step" and math.type(r.payload) == "integer"
    and r.payload > ranges.EVALUATED and r.payload <= r.start
end

-- the calls that can start GPU work in time order: by the rid of the range they were made in,
-- and those made in no range (loose)
local function launches_of(p)
  local by, loose = {}, {}
  for corr, t in pairs(p.launched or {}) do
    local rid = p.corr[corr]
    local l = rid and (by[rid] or {}) or loose
    if rid then by[rid] = l end
    l[#l + 1] = { corr = corr, t = t }
  end
  local function order(a, b) return a.t < b.t or (a.t == b.t and a.corr < b.corr) end
  for _, l in pairs(by) do table.sort(l, order) end
  table.sort(loose, order)
  return by, loose
end

-- the batch in hand of a data range d whose batch was in hand at t: t, or just after the copies
-- to the GPU from the host launched in d from t on before any other GPU work (x.to(dev)), so that
-- the step's window begins when they have finished, as the template's synchronisation before its
-- t0 makes it. A kernel, a set or another copy is the forward's: on a step whose kernels were not
-- recorded (--gpu-every) a set or copy inside the forward is all that is seen of it. Calls with
-- no GPU work recorded (an event's, a mark's, a kernel's not recorded) are passed over.
local function in_hand(d, t, launched, kind)
  local at = t
  for _, l in ipairs(launched[d.rid] or {}) do
    if l.t >= t then
      local k = kind[l.corr]
      if k == "forward" then break end
      if k then at = math.max(at, l.t + 1) end
    end
  end
  return math.min(at, d.stop)
end

-- a copy from the host to the GPU (a copy whose direction is not known too), as a batch's is
local function arrives(w)
  return w.kind == "memcpy" and not w.name:find("^memcpy [DAP]") and w.name ~= "memcpy HtoH"
end

-- the index of the first element of list (sorted by key) whose key is t or more (#list + 1: none)
local function first_at(list, t, key)
  local lo, hi = 1, #list + 1
  while lo < hi do
    local mid = (lo + hi) // 2
    if list[mid][key] < t then lo = mid + 1 else hi = mid end
  end
  return lo
end

-- the push/pop ranges of list by thread, in start order
local function by_thread(list)
  local by = {}
  for _, r in ipairs(list) do
    if not r.async then
      local l = by[r.tid] or {}
      by[r.tid] = l
      l[#l + 1] = r
    end
  end
  for _, l in pairs(by) do
    table.sort(l, function(a, b)
      if a.start ~= b.start then return a.start < b.start end
      return a.rid < b.rid
    end)
  end
  return by
end

-- the rids of d and of the ranges around d and around the step s: where the work done between the
-- batch in hand and the marker was recorded (a program's "epoch" around them all)
local function around(d, s)
  local set = { [d.rid] = true }
  for _, r in ipairs { d.parent, s.parent } do
    while r do
      set[r.rid] = true
      r = r.parent
    end
  end
  return set
end

-- The hook's training work that began late on a batch begins at the batch in hand instead: the
-- end of the data range that fetched it (in_hand), where the marker (late_marker) now begins, the
-- forward from there to the marker's old start; the step too, where that is earlier than its
-- start. The work done in that span on the step's thread is the forward's: the ranges opened and
-- closed in it (the program's, under d or the ranges around it), and the GPU work launched in it
-- in d, in a range around d or the step, or in no range. The process unchanged where no work
-- began late.
function ranges.late_forwards(p)
  local markers, data = {}, {}
  for _, r in ipairs(p.ranges) do
    if late_marker(r) then markers[#markers + 1] = r end
    if ranges.is_auto(r) and r.name == "data" and not r.open and math.type(r.payload) == "integer"
      and r.payload >= r.start and r.payload <= r.stop then data[r.tid .. ":" .. r.payload] = r end
  end
  if #markers == 0 then return p end
  local q, copy = view(p, function() return true end)
  for corr, rid in pairs(p.corr) do q.corr[corr] = rid end
  local kind = {}
  for _, w in ipairs(p.gpu) do
    kind[w.corr] = (kind[w.corr] == "forward" or not arrives(w)) and "forward" or "copy"
  end
  local launched, loose = launches_of(p)
  local threads = by_thread(q.ranges)
  local function claim(list, from, to, rid) -- the launches of list made in [from, to)
    for i = first_at(list, from, "t"), #list do
      if list[i].t >= to then break end
      q.corr[list[i].corr] = rid
    end
  end
  for _, m in ipairs(markers) do
    local s, d = m.parent, data[m.tid .. ":" .. m.payload]
    if d and d.stop <= m.start then
      local from = in_hand(d, m.payload, launched, kind)
      local cm, cd, cs = copy[m], copy[d], copy[s]
      local set = around(d, s)
      local l = threads[m.tid]
      local first = first_at(l, from, "start") -- before the starts below move
      cd.stop, cm.start = from, from
      if from < cs.start then cs.start = from end
      for i = first, #l do
        local c = l[i]
        if c.start >= m.start then break end
        if c ~= cm and c ~= cs and c ~= cd and c.stop and c.stop <= m.start
          and (not c.parent or set[c.parent.rid]) then c.parent = cm end
      end
      for rid in pairs(set) do claim(launched[rid] or {}, from, m.start, m.rid) end
      claim(loose, from, m.start, m.rid)
    end
  end
  return q
end

-- open_at(tid, t): the innermost push/pop range of list open on thread tid at time t, or nil.
-- The ranges of a thread nest (a parent holds its children), so the one open at t is the latest
-- to start by t or one of its ancestors.
function ranges.innermost_finder(list)
  local by_tid = by_thread(list)
  return function(tid, t)
    local l = by_tid[tid]
    if not l then return nil end
    local at = l[first_at(l, t + 1, "start") - 1] -- the last to start by t (times: whole ns)
    while at and at.tid == tid and not (at.start <= t and (not at.stop or t < at.stop)) do
      at = at.parent
    end
    return at and at.tid == tid and at or nil
  end
end

-- the nearest step at or above each range (its parent chain), memoised
function ranges.step_finder(is_step)
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
function ranges.outermost(r, name)
  local found
  while r do
    if r.name == name then found = r end
    r = r.parent
  end
  return found
end

-- whether a range between r (excluded) and the step s has r's name
function ranges.shadowed(r, s)
  local at = r.parent
  while at and at ~= s do
    if at.name == r.name then return true end
    at = at.parent
  end
  return false
end

return ranges
