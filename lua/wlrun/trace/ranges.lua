-- The ranges of a traced process as the report reads them (docs/trace.md, "The report"): which
-- are the steps, the nesting of phases in a step, and whose ranges count — the program's own,
-- or those of wlrun's Python start-up hook (the domain "wlrun.auto") where the program has no
-- step range of its own. Pure: a parsed process (wlrun.trace.read) in, lists and lookups out.
local ranges = {}

ranges.AUTO_DOMAIN = "wlrun.auto" -- src/trace/trace_format.h: WL_TRACE_AUTO_DOMAIN

function ranges.is_auto(r) return r.domain == ranges.AUTO_DOMAIN end

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
  return list
end

-- The process without the hook's ranges, as if it had never pushed them, but those for which
-- keep(r) is true: the ranges kept keep their nesting among themselves (a parent is the nearest
-- ancestor kept), and GPU work launched in a range left out belongs to the innermost range kept
-- that was open on that thread when the work was launched. Its time decides, not the parents: the
-- hook's step opens inside the program's forward and outlives it, so the forward is no ancestor of
-- the hook's ranges, yet their work launched before it closed is the forward's.
function ranges.without_auto(p, keep)
  local q = {}
  for k, v in pairs(p) do q[k] = v end
  local kept, copy = {}, {}
  for _, r in ipairs(p.ranges) do
    if not ranges.is_auto(r) or keep(r) then
      local c = {}
      for k, v in pairs(r) do c[k] = v end
      copy[r] = c
      kept[#kept + 1] = c
    end
  end
  local function nearest(r) -- the nearest range of the program's at or above r
    while r and not copy[r] do r = r.parent end
    return r and copy[r]
  end
  for r, c in pairs(copy) do c.parent = nearest(r.parent) end
  local open_at = ranges.innermost_finder(kept)
  q.ranges, q.by_rid, q.corr = kept, {}, {}
  for _, c in ipairs(kept) do q.by_rid[c.rid] = c end
  for corr, rid in pairs(p.corr) do
    local r = p.by_rid[rid]
    local t = p.launched[corr]
    local c = copy[r] or (t and open_at(r.tid, t)) or nearest(r.parent)
    if c then q.corr[corr] = c.rid end
  end
  return q
end

-- open_at(tid, t): the innermost push/pop range of list open on thread tid at time t, or nil.
-- The ranges of a thread nest (a parent holds its children), so the one open at t is the latest
-- to start by t or one of its ancestors.
function ranges.innermost_finder(list)
  local by_tid = {}
  for _, r in ipairs(list) do
    if not r.async then
      local l = by_tid[r.tid] or {}
      by_tid[r.tid] = l
      l[#l + 1] = r
    end
  end
  for _, l in pairs(by_tid) do
    table.sort(l, function(a, b)
      if a.start ~= b.start then return a.start < b.start end
      return a.rid < b.rid
    end)
  end
  return function(tid, t)
    local l = by_tid[tid]
    if not l then return nil end
    local lo, hi = 1, #l + 1 -- the first range starting after t
    while lo < hi do
      local mid = (lo + hi) // 2
      if l[mid].start > t then hi = mid else lo = mid + 1 end
    end
    local at = l[lo - 1]
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
