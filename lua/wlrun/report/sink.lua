-- The log and progress sink of a scenario run: with the printers (wlrun.report), the only
-- writer of standard output and standard error while a scenario runs. Standard output holds
-- the report in the chosen format and nothing else when that format is for machines (csv,
-- json, markdown) or is named by -o - (report_only); messages, progress and failures go to
-- standard error.
--
--   local s = sink.new{format =, quiet =, progress =, report_only =}
--   s:message(text)          "wlrun: text" on stderr (unless quiet)
--   s:warning(text)          "wlrun: warning: text" on stderr (even when quiet)
--   s:progress(text)         one line rewritten in place (a terminal only)
--   s:failure(text)          "wlrun: text" on stderr, always
--   s:iteration(line)        a loop's per-iteration line: stdout for table/plain (not
--                            report_only), else stderr
--   s:report(text)           the report, on stdout (nothing once its reader is gone)
local core = require "wlrun.core"
local process = require "wlrun.process"
local printable = require "wlrun.text.printable"
local stdio = require "wlrun.text.stdio"

local sink = {}

local Sink = {}
Sink.__index = Sink

local human = { table = true, plain = true }

-- With a format for machines, standard output is held (wlrun.process.hold_stdout) from the
-- start: whatever else writes there (a script's print, a library) goes to standard error, and
-- the report alone reaches standard output. Closing the sink gives it back.
function sink.new(o)
  o = o or {}
  local s = setmetatable({ format = o.format or "table", quiet = o.quiet,
    show_progress = o.progress, shown = false },
    Sink)
  s.report_only = o.report_only or not human[s.format]
  if s.report_only then s.held = process.hold_stdout() end
  return s
end

function Sink:release()
  if self.held then
    local fd = self.held
    self.held = nil
    process.release_stdout(fd)
  end
end

Sink.__close = Sink.release

-- a sink that writes nothing (child processes: their parent reports)
function sink.silent() return setmetatable({ format = "table", quiet = true, silent = true },
  Sink) end

-- text from the run (names, parameter values, messages) reaches the terminal with its newlines
-- and no other control character (wlrun.text.printable)

local function err(text)
  io.stderr:write(text)
  io.stderr:flush()
end

function Sink:clear()
  if self.shown then
    err("\r\27[K")
    self.shown = false
  end
end

function Sink:progress(text)
  if not self.show_progress or self.silent then return end
  err("\r\27[K" .. printable.text(text, 200))
  self.shown = true
end

-- a line on stderr, after the progress line is cleared
function Sink:line(text)
  self:clear()
  err(printable.lines(text) .. "\n")
end

function Sink:message(text) if not self.quiet then self:line("wlrun: " .. text) end end

function Sink:warning(text) if not self.silent then self:line("wlrun: warning: " .. text) end end

function Sink:failure(text) if not self.silent then self:line("wlrun: " .. text) end end

function Sink:iteration(line)
  if self.quiet then return end
  self:clear()
  line = printable.lines(line)
  if not self.report_only then
    if core.stdout_closed() then return end
    stdio.put(line .. "\n")
  else
    err(line .. "\n")
  end
end

-- A standard output whose reader is gone stopped the run (core.stdout_closed): the report has
-- nowhere to go, and the stop's message says so once.
function Sink:report(text)
  if self.silent then return end
  self:clear()
  self:release()
  if core.stdout_closed() then return end
  stdio.write(text)
end

return sink
