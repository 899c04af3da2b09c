-- What --compile-only reports: each distinct kernel compiled by the script, once.
local core = require "wlrun.core"

local compiled = {}

function compiled.text()
  local list, distinct, by_key, cached = core.compiled_kernels(), {}, {}, 0
  for _, k in ipairs(list) do
    if k.from_cache then cached = cached + 1 end
    local key = k.name .. "\0" .. k.source .. "\0" .. k.arch
    if not by_key[key] then
      by_key[key] = { k = k, uses = 0 }
      distinct[#distinct + 1] = by_key[key]
    end
    by_key[key].uses = by_key[key].uses + 1
  end
  local out = { ("compile-only: %d distinct kernel%s from %d wl.kernel call%s (%d served by the cache)"):format(#distinct,
    #distinct == 1 and "" or "s", #list, #list == 1 and "" or "s", cached) }
  for _, d in ipairs(distinct) do
    out[#out + 1] = ("  %-28s %-6s %2d params  %s%s"):format(d.k.name, d.k.arch, d.k.nparams, d.k.source,
      d.uses > 1 and ("  (x" .. d.uses .. ")") or "")
  end
  return table.concat(out, "\n") .. "\n"
end

return compiled
