-- The command line of the tools (compare, plot, export, merge, history, report, trace, init):
-- failing and warning with the tool's name, options, percentages and name lists, reading
-- documents and writing outputs.
local core = require "wlrun.core"
local process = require "wlrun.process"
local printable = require "wlrun.text.printable"
local stdio = require "wlrun.text.stdio"
local text_files = require "wlrun.text.files"
local trim = require "wlrun.text.trim"
local report = require "wlrun.report"
local output_lock = require "wlrun.text.output_lock"
local foreign = require "wlrun.results.foreign"

local cli = {}

-- the files this command reads (cli.input): an output that is one of them is refused
local inputs = {}

-- A tool's errors and warnings are one line each: what they quote from a document (a device's
-- name, a parameter's value) is printable.whole, so that no newline in the data fakes a line of
-- output (a gate's verdict)
function cli.fail(kind, tool, msg) core.error(kind, ("%s: %s"):format(tool, printable.whole(msg)),
  0) end

function cli.warn(tool, msg)
  io.stderr:write(("wlrun %s: warning: %s\n"):format(tool, printable.whole(msg)))
end

-- Options: spec[name] = { value = true (takes a value), multi = true (repeatable), key = field };
-- names with their dashes ("-o", "--fail-above"); "--name=value" is accepted; "--" ends options.
-- An option with a value that is not repeatable, given twice, is refused (kind usage).
-- Returns the options (by key) and the positional arguments.
function cli.parse_args(tool, args, spec)
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
      if not s then cli.fail("usage", tool, ("unknown option '%s' (wlrun %s --help)"):format(name,
        tool)) end
      local v = true
      if s.value then
        if inline then
          v = inline
        else
          i = i + 1
          v = args[i]
          if v == nil then cli.fail("usage", tool, ("option %s needs a value"):format(name)) end
        end
      elseif inline then
        cli.fail("usage", tool, ("option %s takes no value"):format(name))
      end
      local key = s.key or name:gsub("^%-+", ""):gsub("%-", "_")
      if s.multi then
        opts[key] = opts[key] or {}
        table.insert(opts[key], v)
      elseif s.value and opts[key] ~= nil then -- never drop the first silently
        cli.fail("usage", tool,
          ("%s given twice ('%s', then '%s'): it takes one value (wlrun %s --help)"):format(name,
          opts[key], v, tool))
      else
        opts[key] = v
      end
    end
    i = i + 1
  end
  stdio.refuse_twice(function(kind, msg) cli.fail(kind, tool, msg) end, pos,
    type(opts.output) == "table" and opts.output or { opts.output })
  return opts, pos
end

-- path made as a directory, with the directories above it (a tool's output directory)
function cli.make_dirs(tool, path)
  local at = path:sub(1, 1) == "/" and "/" or ""
  for part in path:gmatch("[^/]+") do
    at = at .. part
    local ok, err = process.make_dir(at)
    if not ok then cli.fail("io", tool, ("cannot make the directory '%s': %s"):format(at,
      tostring(err))) end
    at = at .. "/"
  end
  local kind, err = process.file_type(path, true)
  if kind ~= "directory" then
    cli.fail("io", tool, kind and ("'%s' is not a directory"):format(path)
      or ("cannot reach the directory '%s': %s"):format(path, tostring(err)))
  end
end

-- "5", "5%", "5 %" -> 0.05; nil for anything else: the rule of every percentage (settings.c)
function cli.percent(s) return core.percent(s) end

-- a comma list of names
function cli.names(s)
  local list = {}
  for name in tostring(s):gmatch("[^,]+") do
    name = trim.both(name)
    if name ~= "" then list[#list + 1] = name end
  end
  return list
end

-- path is a file this command reads (a results document, a history database): no output of
-- it may replace that file (cli.write_all), where the results it holds would be lost
function cli.input(path)
  if path ~= "-" then inputs[#inputs + 1] = path end
  return path
end

-- the text of a file, or of standard input for "-"
function cli.read_file(tool, path)
  return (stdio.read(cli.input(path), function(kind, msg) cli.fail(kind, tool, msg) end))
end

-- A results document (or, with accept = {["wlrun-compare"] = 1}, one of those too), through
-- the one strict loader (wlrun.results.load); a Google Benchmark or nvbench JSON file is read
-- as the results document it stands for (wlrun.results.foreign). Unreadable: kind io (9); not
-- JSON, or none of these: kind usage (2).
function cli.load(tool, path, accept)
  return foreign.load(cli.input(path), { prefix = tool .. ": ", accept = accept })
end

-- Writes each {path, text} of list whole
-- (wlrun.text.files: a new file, renamed over it), or to standard output for "-". Every file is
-- held by its lock (wlrun.text.output_lock) from before the first is written until the last is:
-- an output a live run or another tool is writing is refused, and nothing is written, as is one
-- that is a file the command reads (unless replace_input: merge's output may be one of its
-- shards, which it holds whole). Errors are kind io.
function cli.write_all(tool, list, replace_input)
  local paths = {}
  for _, f in ipairs(list) do
    for _, input in ipairs(replace_input and {} or inputs) do
      if f[1] ~= "-" and output_lock.same_file(f[1], input) then
        cli.fail("io", tool, ("cannot write '%s': it is '%s', which this command reads; its "
          .. "results would be lost (give another -o)"):format(f[1], input))
      end
    end
    if f[1] ~= "-" then
      local ok, err = text_files.check(f[1]) -- a path that cannot be written, before its lock
      if not ok then cli.fail("io", tool, ("cannot write '%s': %s"):format(f[1], err)) end
      paths[#paths + 1] = f[1]
    end
  end
  local locks
  local ok, e = pcall(function()
    locks = output_lock.take(paths)
    for _, f in ipairs(list) do
      report.write_text(f[2], f[1], "output")
    end
  end)
  output_lock.release(locks)
  if not ok then
    local msg = type(e) == "table" and e.message or tostring(e)
    cli.fail("io", tool,
      (msg:gsub("^cannot write output to ", "cannot write ")))
  end
end

function cli.write(tool, path, text)
  cli.write_all(tool, { { path, text } })
  return path
end

return cli
