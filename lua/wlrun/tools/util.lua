-- What the tools (compare, plot, export, merge) share: failing and warning with the tool's
-- name, options, percentages and name lists, reading documents, writing files, JSON, aligned
-- text tables.
local T = require "wlrun.report.table"

local util = {}

local function core() return require "wlrun.core" end

function util.fail(kind, tool, msg) core().error(kind, ("%s: %s"):format(tool, msg), 0) end

function util.warn(tool, msg)
  io.stderr:write(("wlrun %s: warning: %s\n"):format(tool, require("wlrun.text.printable").lines(msg)))
end

-- Options: spec[name] = { value = true (takes a value), multi = true (repeatable), key = field };
-- names with their dashes ("-o", "--fail-above"); "--name=value" is accepted; "--" ends options.
-- An option with a value that is not repeatable, given twice, is refused (kind usage).
-- Returns the options (by key) and the positional arguments.
function util.parse_args(tool, args, spec)
  local opts, pos = {}, {}
  local i, n = 1, #args
  local rest = false
  while i <= n do
    local a = args[i]
    if rest or a == "-" or a:sub(1, 1) ~= "-" then
      pos[#pos + 1] = a
    elseif a == "--" then
      rest = true
    else
      local name, inline = a:match("^(%-%-[^=]+)=(.*)$")
      name = name or a
      local s = spec[name]
      if not s then util.fail("usage", tool, ("unknown option '%s' (wlrun %s --help)"):format(name, tool)) end
      local v = true
      if s.value then
        if inline then
          v = inline
        else
          i = i + 1
          v = args[i]
          if v == nil then util.fail("usage", tool, ("option %s needs a value"):format(name)) end
        end
      elseif inline then
        util.fail("usage", tool, ("option %s takes no value"):format(name))
      end
      local key = s.key or name:gsub("^%-+", ""):gsub("%-", "_")
      if s.multi then
        opts[key] = opts[key] or {}
        table.insert(opts[key], v)
      elseif s.value and opts[key] ~= nil then -- never drop the first silently
        util.fail("usage", tool, ("%s given twice ('%s', then '%s'): it takes one value (wlrun %s --help)"):format(name,
          opts[key], v, tool))
      else
        opts[key] = v
      end
    end
    i = i + 1
  end
  require("wlrun.text.stdio").refuse_twice(function(kind, msg) util.fail(kind, tool, msg) end, pos,
    type(opts.output) == "table" and opts.output or { opts.output })
  return opts, pos
end

-- path made as a directory, with the directories above it (a tool's output directory)
function util.make_dirs(tool, path)
  local process = require "wlrun.process"
  local at = path:sub(1, 1) == "/" and "/" or ""
  for part in path:gmatch("[^/]+") do
    at = at .. part
    local ok, err = process.make_dir(at)
    if not ok then util.fail("io", tool, ("cannot make the directory '%s': %s"):format(at, tostring(err))) end
    at = at .. "/"
  end
  if not process.list_dir(path) then util.fail("io", tool, ("'%s' is not a directory"):format(path)) end
end

-- "5", "5%", "5 %" -> 0.05; nil for anything else: the rule of every percentage (settings.c)
function util.percent(s) return core().percent(s) end

-- a comma list of names
function util.names(s)
  local list = {}
  for name in tostring(s):gmatch("[^,]+") do
    name = require("wlrun.text.trim").both(name)
    if name ~= "" then list[#list + 1] = name end
  end
  return list
end

-- the text of a file, or of standard input for "-"
function util.read_file(tool, path)
  return (require("wlrun.text.stdio").read(path, function(kind, msg) util.fail(kind, tool, msg) end))
end

-- A results document (or, with accept = {["wlrun-compare"] = 1}, one of those too), through
-- the one strict loader (wlrun.results.load). Unreadable: kind io (9); not JSON, or not such a
-- document: kind usage (2).
function util.load(tool, path, accept)
  return require("wlrun.results.load").load(path, { prefix = tool .. ": ", accept = accept })
end

-- writes text to path whole (wlrun.text.files: a new file, renamed over it), or to standard output for "-";
-- errors are kind io
function util.write(tool, path, text)
  local ok, e = pcall(require("wlrun.report").write_text, text, path, "output")
  if not ok then
    local msg = type(e) == "table" and e.message or tostring(e)
    util.fail("io", tool, (msg:gsub("^cannot write output to ", "cannot write ")))
  end
  return path
end

-- JSON: objects made with util.object() keep the order in which their keys were set; floats
-- are written with the digits that read back the same; NaN and infinities as null
function util.object()
  local order = {}
  return setmetatable({}, {
    __jsontype = "object", __jsonorder = order,
    __newindex = function(t, k, v)
      order[#order + 1] = k
      rawset(t, k, v)
    end,
  })
end

function util.array(t) return require("wlrun.json").array(t or {}) end

function util.json(value) return require("wlrun.json").encode(value, { indent = true }) .. "\n" end

-- a table of rows: cols = { {title=, right=bool} }, rows = { {cell, ...} } -> aligned lines
function util.align(cols, rows, sep)
  sep = sep or "  "
  local w = {}
  for j, c in ipairs(cols) do w[j] = T.width(c.title) end
  for _, r in ipairs(rows) do
    for j = 1, #cols do w[j] = math.max(w[j], T.width(r[j] or "")) end
  end
  local function line(cells)
    local parts = {}
    for j, c in ipairs(cols) do
      local s = cells[j] or ""
      local pad = string.rep(" ", w[j] - T.width(s))
      parts[j] = c.right and (pad .. s) or (s .. pad)
    end
    return require("wlrun.text.trim").right(table.concat(parts, sep))
  end
  local out = {}
  local titles, rule = {}, {}
  for j, c in ipairs(cols) do titles[j], rule[j] = c.title, string.rep("-", w[j]) end
  out[1] = line(titles)
  out[2] = line(rule)
  for _, r in ipairs(rows) do out[#out + 1] = line(r) end
  return out
end

-- "4.9%" without trailing zeros ("2%", "0.5%")
function util.pct(f)
  local s = ("%.2f"):format(100 * f):gsub("0+$", ""):gsub("%.$", "")
  return s .. "%"
end

-- a parameter's value as text
function util.param_text(v)
  if type(v) == "boolean" then return tostring(v) end
  return T.value(v)
end

-- the parameter names of a document, in its axes' order, then any others sorted
function util.param_names(doc)
  local names, seen = {}, {}
  for _, a in ipairs(T.axes(doc)) do
    if not seen[a] then seen[a], names[#names + 1] = true, a end
  end
  local extra = {}
  for _, c in ipairs(doc.configurations or {}) do
    for k in pairs(c.params or {}) do
      if not seen[k] then seen[k], extra[#extra + 1] = true, k end
    end
  end
  table.sort(extra, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(extra) do names[#names + 1] = k end
  return names
end

return util
