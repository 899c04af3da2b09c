-- `-` for a file on the command line: where a file is read, standard input (named "<stdin>"
-- in messages); where an output is written (-o -), standard output. The one reader of the
-- files a command line names and the one writer of an output's text to standard output.
--   stdio.read(path, fail) -> text, name     fail(kind, msg) raises; kinds io and usage
--   stdio.write(text)                        the text on standard output, flushed
--   stdio.put(text)                          the same, a closed standard output a stop
--   stdio.refuse_twice(fail, pos, outputs)   more than one '-' in either list is refused
local core = require "wlrun.core"
local process = require "wlrun.process"

local stdio = {}

stdio.DASH = "-"
stdio.NAME = "<stdin>"

local stdin_taken = false -- standard input has one reading

-- io.open's messages start with the file name: keep the OS's part
local function os_message(msg, path)
  msg = tostring(msg)
  if msg:sub(1, #path + 2) == path .. ": " then msg = msg:sub(#path + 3) end
  return msg
end

function stdio.read(path, fail)
  if path == stdio.DASH then
    if stdin_taken then
      fail("usage", "'-' (standard input) is given twice: it can be read once") end
    stdin_taken = true
    -- a device like /dev/zero
    if process.file_type("/dev/stdin", true) == "other" and not process.isatty(0) then
      fail("io",
        ("cannot read %s: it is a device, not a file, a pipe, a socket or a terminal"):format(
        stdio.NAME))
    end
    local text, err = io.stdin:read("a")
    if not text then fail("io", ("cannot read %s: %s"):format(stdio.NAME, tostring(err))) end
    return text, stdio.NAME
  end
  -- a file or a pipe (a shell's <(...)); a device like /dev/zero would never end the read
  local kind = process.file_type(path, true)
  if kind and kind ~= "file" and kind ~= "fifo" then
    fail("io", ("cannot read '%s': it is %s, not a file"):format(path,
      ({ directory = "a directory", socket = "a socket" })[kind] or "a device"))
  end
  local f, err = io.open(path, "rb")
  local text
  if f then
    text, err = f:read("a")
    f:close()
  end
  if not text then fail("io", ("cannot read '%s': %s"):format(path, os_message(err, path))) end
  return text, path
end

-- A write that finds standard output's reader gone stops the running code as a stop signal does
-- (lhost_signals.c): stdio.put lets that stop through, for what a run writes while its
-- configurations run (a loop's lines), which then ends as an interrupted run. stdio.write, for
-- what is written once the work is done (a report, a tool's output), says it as the write's
-- own error, nothing having been interrupted.
function stdio.put(text)
  local ok, err = io.stdout:write(text)
  if ok then ok, err = io.stdout:flush() end
  if not ok then core.error("io", ("cannot write to standard output: %s"):format(tostring(err)),
    0) end
end

function stdio.write(text)
  local ok, e = pcall(stdio.put, text)
  if ok then return end
  local closed, stopped = core.stdout_closed()
  if closed and stopped and type(e) == "table" and e.kind == "interrupted" then
    core.error("io", core.stop_signal(), 0) -- "cannot write to standard output: Broken pipe"
  end
  error(e, 0)
end

-- inputs: positional arguments; outputs: the -o values (either may be nil)
function stdio.refuse_twice(fail, inputs, outputs)
  for _, l in ipairs { { inputs, "'-' (standard input) is given twice: it can be read once" },
                       { outputs,
                         "-o - (standard output) is given twice: it holds one output" } } do
    local n = 0
    for _, v in ipairs(l[1] or {}) do
      if v == stdio.DASH then n = n + 1 end
    end
    if n > 1 then fail("usage", l[2]) end
  end
end

return stdio
