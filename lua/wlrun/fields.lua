-- The one check of a table's field names against the names a function takes (wl.scenario,
-- wl.loop, wl.bench's options, a scenario's timing table): an unknown one is a script error
-- that names it and lists the known ones, so that a typo never passes as a default.
local core = require "wlrun.core"

local fields = {}

-- known: a set {name = true or anything}; what: "wl.loop" / "wl.bench: option"; level: as
-- for error (0: the message alone, for callers that name the place themselves)
-- t's keys in a fixed order: numbers, then strings, each sorted (other keys last, by their text).
-- A check that says the first bad field of a table walks them so: the same input gives the same
-- message on every run (pairs' order follows hashes that Lua seeds at random per process).
function fields.sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  local rank = { number = 1, string = 2 }
  table.sort(keys, function(a, b)
    local ra, rb = rank[type(a)] or 3, rank[type(b)] or 3
    if ra ~= rb then return ra < rb end
    if ra == 3 then return tostring(a) < tostring(b) end
    return a < b
  end)
  return keys
end

-- Of several unknown names, the first in sorted order is named: the same on every run.
function fields.check(t, known, what, level, noun)
  local unknown = {}
  for k in pairs(t) do
    if type(k) ~= "string" or known[k] == nil then unknown[#unknown + 1] = tostring(k) end
  end
  if #unknown == 0 then return end
  table.sort(unknown)
  local names = {}
  for name in pairs(known) do names[#names + 1] = name end
  table.sort(names)
  core.error("script", ("%s: unknown %s '%s' (%ss: %s)"):format(what, noun or "field", unknown[1],
    noun or "field", table.concat(names, ", ")), level == 0 and 0 or level + 1)
end

return fields
