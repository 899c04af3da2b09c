-- What differs between the provenance of two runs (docs/compare.md, "Provenance"): the commit of
-- the scenario's repository and its branch, the host, the CPU, the operating system, the
-- drivers, the toolkit, wlrun and the command line — each as the text compare shows, in its
-- header (terminal, Markdown, wlrun report's page) and in its JSON.
--
--   M.differences(base, new) -> {{field =, base =, new =}...}   two results documents
--   M.lines(cmp)             -> {"commit 1a2b3c4 (dirty) vs 9f8e7d6", ...}  of a comparison
local json_out = require "wlrun.report.json"

local M = {}

local function str(v) return type(v) == "string" and v ~= "" and v or nil end
local function tab(v) return type(v) == "table" and v or {} end

local function joined(parts, sep)
  local list = {}
  for i = 1, #parts do
    if parts[i] ~= nil then list[#list + 1] = tostring(parts[i]) end
  end
  return #list > 0 and table.concat(list, sep) or nil
end

-- an argument as a reader tells it apart (quoted when it holds white space or a quote); text
-- to read, never to run
local function arg_text(a)
  if a == "" or a:find("[%s'\"\\]") then return (("%q"):format(a):gsub("\\\n", "\\n")) end
  return a
end

-- the fields compared, in the order shown: name and the text of a provenance (nil: unknown)
local FIELDS = {
  { "commit", function(p)
    local g = tab(p.git)
    return str(g.commit) and (g.commit .. (g.dirty == true and " (dirty)" or "")) or nil
  end },
  { "branch", function(p) return str(tab(p.git).branch) end },
  { "host", function(p) return str(p.host) end },
  { "cpu", function(p)
    local c = tab(p.cpu)
    return joined({ str(c.model), math.type(c.count) == "integer" and (c.count .. " CPUs") or nil },
      ", ")
  end },
  { "os", function(p)
    local o = tab(p.os)
    return joined({ str(o.name), str(o.release), str(o.arch) }, " ")
  end },
  { "CUDA driver", function(p) return str(tab(p.driver).cuda) end },
  { "NVIDIA driver", function(p) return str(tab(p.driver).nvidia) end },
  { "CUDA runtime", function(p) return str(tab(p.toolkit).runtime) end },
  { "NVRTC", function(p) return str(tab(p.toolkit).nvrtc) end },
  { "wlrun", function(p) return str(p.wlrun) end },
  { "command line", function(p)
    if type(p.command_line) ~= "table" then return nil end
    local parts = {}
    for i, a in ipairs(p.command_line) do parts[i] = arg_text(tostring(a)) end
    return table.concat(parts, " ")
  end },
}

-- two commits as short as they can be and still differ (7 hex digits, more when those agree)
local function shorten(a, b)
  local ca, cb = a and a:match("^%x+"), b and b:match("^%x+")
  local n = 7
  if ca and cb and ca ~= cb then
    while n < #ca and n < #cb and ca:sub(1, n) == cb:sub(1, n) do n = n + 1 end
  end
  local function cut(s, c) return s and c and (c:sub(1, n) .. s:sub(#c + 1)) or s end
  return cut(a, ca), cut(b, cb)
end

local NONE = "none"

-- The fields whose text differs, as {field, base, new} (an absent field is "none"). A document
-- of an older wlrun, without provenance, is one difference: {field = "provenance"}.
function M.differences(base, new)
  local pb, pn = type(base.provenance) == "table" and base.provenance,
    type(new.provenance) == "table" and new.provenance
  local out = json_out.array()
  local function add(field, b, n)
    local o = json_out.object()
    o.field = field
    o.base = b or NONE
    o.new = n or NONE
    out[#out + 1] = o
  end
  if not (pb and pn) then
    if pb or pn then add("provenance", pb and "recorded" or "not recorded",
      pn and "recorded" or "not recorded") end
    return out
  end
  for _, f in ipairs(FIELDS) do
    local b, n = f[2](pb), f[2](pn)
    if b ~= n then
      if f[1] == "commit" then b, n = shorten(b, n) end
      add(f[1], b, n)
    end
  end
  return out
end

-- the differences of a comparison document (wlrun.compare.document), one line each
function M.lines(cmp)
  local lines = {}
  for _, d in ipairs(type(cmp.provenance_differences) == "table" and cmp.provenance_differences
    or {}) do
    lines[#lines + 1] = ("%s %s vs %s"):format(tostring(d.field), tostring(d.base), tostring(d.new))
  end
  return lines
end

M.TITLE = "Provenance that differs (BASE vs NEW)"

-- compare's terminal header: the title and a line a difference, indented; none when the same
function M.table_lines(cmp)
  local lines = M.lines(cmp)
  if #lines == 0 then return lines end
  local out = { "  " .. M.TITLE .. ":" }
  for _, l in ipairs(lines) do out[#out + 1] = "    " .. l end
  return out
end

-- compare's Markdown header: one item, or none; cell escapes a text for Markdown
function M.markdown_lines(cmp, cell)
  local lines = M.lines(cmp)
  if #lines == 0 then return lines end
  return { "- " .. cell(M.TITLE .. ": " .. table.concat(lines, "; ")) }
end

return M
