-- What --compile-only reports: each distinct kernel compiled by the script, once. With
-- --isolate or --config-timeout the configurations run in child processes: the kernels they
-- bound come from their entries of doc (name, arch and source; the parameter count is not
-- known here, "?").
local core = require "wlrun.core"
local printable = require "wlrun.text.printable"

local compiled = {}

function compiled.text(doc)
  local list, distinct, by_key, cached = core.compiled_kernels(), {}, {}, 0
  local function add(k)
    local key = k.name .. "\0" .. k.source .. "\0" .. k.arch .. "\0" .. tostring(k.compiler)
    if not by_key[key] then
      by_key[key] = { k = k, uses = 0 }
      distinct[#distinct + 1] = by_key[key]
    end
    return by_key[key]
  end
  for _, k in ipairs(list) do
    if k.from_cache then cached = cached + 1 end
    local d = add(k)
    d.uses = d.uses + 1
  end
  local children = 0
  for _, e in ipairs(doc and doc.configurations or {}) do
    if e.isolated then
      children = children + 1
      for _, k in ipairs(e.kernels or {}) do
        if type(k.name) == "string" and type(k.source) == "string" and type(k.arch) == "string" then
          add { name = k.name, source = k.source, arch = k.arch,
            compiler = type(k.compiler) == "string" and k.compiler or nil,
                compiler_version = type(k.compiler_version) == "string" and k.compiler_version
                  or nil }
        end
      end
    end
  end
  local out = {
    ("compile-only: %d distinct kernel%s from %d wl.kernel call%s (%d served by the "
    .. "cache)%s"):format(#distinct,
    #distinct == 1 and "" or "s", #list, #list == 1 and "" or "s", cached,
    children > 0 and (", and those of %d configuration%s in child processes"):format(children,
      children == 1 and "" or "s") or "") }
  local P = printable.whole -- names from a script or a child's entry
  local width = 28 -- the longest name's, at least
  for _, d in ipairs(distinct) do width = math.max(width, utf8.len(P(d.k.name)) or #P(d.k.name)) end
  local function compiler(k)
    if not k.compiler then return "?" end
    return k.compiler_version and k.compiler_version ~= ""
      and (k.compiler .. " " .. k.compiler_version) or k.compiler
  end
  local cwidth = 5
  for _, d in ipairs(distinct) do cwidth = math.max(cwidth, #P(compiler(d.k))) end
  for _, d in ipairs(distinct) do
    local name = P(d.k.name)
    out[#out + 1] = ("  %s%s %-6s %-" .. cwidth .. "s %2s params  %s%s"):format(name,
      (" "):rep(width - (utf8.len(name) or #name)),
      P(d.k.arch), P(compiler(d.k)), d.k.nparams or "?", P(d.k.source),
        d.uses > 1 and ("  (x" .. d.uses .. ")") or "")
  end
  for _, d in ipairs(distinct) do
    if d.k.compiler == "nvrtc" then
      out[#out + 1]
        =
        "  (NVRTC's machine code can differ from nvcc's for the same source: --compiler nvcc "
        .. "builds it as nvcc"
        .. " does; docs/kernels.md, \"NVRTC and nvcc\")"
      break
    end
  end
  return table.concat(out, "\n") .. "\n"
end

return compiled
