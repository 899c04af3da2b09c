-- Writing a run's results (docs/results.md, "Writing"): each finished configuration is
-- appended to a journal (JSON Lines: a header, then one entry per line) and flushed, so that a
-- run killed at any point keeps what it measured; the outputs (-o) are rendered once, at the
-- end, from the document in memory — also on Ctrl-C, a fault, an error or os.exit — and the
-- journal is removed once every output is written. Writing is linear in the configurations.
-- Every output is held by a lock (FILE.lock) from before the journal is made until it is
-- written: one writer per output, whatever its place among the -o.
--
--   local w = journal.open(doc, outputs [, resume [, resumed]])
--                                          outputs: {{path =, format =}...}; may be empty;
--                                          resume: the file --resume read (may be the journal);
--                                          resumed: the entries it carries over, written into
--                                          the new journal before it takes the old one's place
--   w:add(entry)                           into the document, and a line of the journal
--   w:finish(complete)                     the outputs, written atomically; journal removed
local core = require "wlrun.core"
local process = require "wlrun.process"
local files = require "wlrun.text.files"
local output_lock = require "wlrun.text.output_lock"
local report = require "wlrun.report"
local results = require "wlrun.results"

local journal = {}

local open_writers = {} -- finished by journal.finish_all (os.exit, the host's last words)

local Writer = {}
Writer.__index = Writer

local function io_fail(path, what, err)
  core.error("io", ("cannot write %s to '%s': %s"):format(what, path, tostring(err)), 0)
end

-- the journal of a run whose first output is path
function journal.path_for(path) return path .. ".journal" end

-- refuses an output that cannot be written before anything is measured (a directory that is
-- not there or not writable, a directory in the file's place): a new file is made beside it and
-- removed (wlrun.text.files), nothing that is there is touched
function journal.check_output(path)
  local ok, err = files.check(path)
  if not ok then io_fail(path, "results", err) end
end

-- os.exit in a script ends the process without unwinding, and must not report success for a
-- scenario run cut short (docs/reliability.md). Inside a configuration (journal.in_configuration,
-- set by wlrun.run.configuration: "configuration 3 (n=3)") it raises an error that stops the run,
-- and
-- so it does in a scenario run before its outputs are open (journal.in_run); while outputs are
-- open they are written first, as incomplete, and an exit code of 0 becomes 1. Hooked by the
-- host before the script runs, so that a script's own copy of os.exit is the hooked one.
journal.in_configuration = nil
-- set by wlrun.run.runner while a scenario's run has not opened its outputs ("scenario 'gemm'"): an
-- os.exit there (in where, prepare, a parameter's function) stops the run as an error, never 0
journal.in_run = nil

local function exit_code(code)
  if code == nil or code == true or code == 0 then return 1 end
  local n = (type(code) == "number" or type(code) == "string") and math.tointeger(tonumber(code))
  return n and n > 0 and n < 256 and n or 1
end

local hooked = false
function journal.hook_exit()
  if hooked then return end
  hooked = true
  local exit = os.exit
  -- a standard library function, replaced on purpose
  os.exit = function(code, close) -- luacheck: ignore
    -- checked as Lua's own os.exit checks it, the error at the script's line
    if code ~= nil and type(code) ~= "boolean" then
      local n = (type(code) == "number" or type(code) == "string") and tonumber(code)
      if not n or not math.tointeger(n) then
        error(("bad argument #1 to 'exit' (%s)"):format(n and "number has no integer "
          .. "representation" or ("number expected, got " .. type(code))), 2)
      end
    end
    local call = ("os.exit(%s)"):format(code == nil and "" or tostring(code))
    if journal.in_configuration then
      local at = debug.getinfo(2, "Sl")
      local where = at and at.currentline > 0 and ("%s:%d: "):format(at.short_src, at.currentline)
        or ""
      local cli = core.cli
      -- a child process: its configuration fails, the run goes on
      local child = cli.worker_config or cli.worker_queue
      error({ kind = "script", exit = exit_code(code),
        message = ("%s%s during %s: %s"):format(where, call,
        journal.in_configuration, child and "the configuration fails (in a child process)"
          or "the run stops here") }, 0)
    end
    if journal.in_run and not next(open_writers) then
      local at = debug.getinfo(2, "Sl")
      local where = at and at.currentline > 0 and ("%s:%d: "):format(at.short_src, at.currentline)
        or ""
      local message = (
        "%s%s during %s, before its first configuration: the run stops; nothing was "
        .. "measured"):format(
        where, call, journal.in_run)
      error({ kind = "script", bare = true, exit_code = exit_code(code), message = message }, 0)
    end
    if next(open_writers) then
      journal.finish_all()
      io.stderr:write(
        ("wlrun: %s during a scenario run: the run stops, its outputs are incomplete\n"):format(
        call))
      return exit(exit_code(code), close)
    end
    return exit(code, close)
  end
end

-- whether anything is at path: a file (readable or not), a directory, a FIFO, a link
local function exists(path) return process.file_type(path) ~= nil end

-- What is at a journal's path: "held" (a live run's: its flock), "left" (a run's that did not
-- finish), or nil: nothing, or gone meanwhile (a run that has just ended removed it; it is no
-- "left" journal then, as a look at it a moment before would have said)
local function journal_state(path)
  local h, err = process.lock_path(path)
  if h then
    h:close()
    return "left"
  end
  if err == "busy" then return "held" end
  return exists(path) and "left" or nil
end

local refuse_held = output_lock.refuse_held

local function refuse_left(path)
  core.error("io",
    ("'%s' is there: the journal of a run that did not finish, with what it measured; "
    .. "go on from it with --resume %s, or remove it"):format(path, path), 0)
end

-- Puts the new journal f (written, locked) at its place: a name taken only where nothing is
-- (link: two runs starting at once cannot both take it), or, resuming, over the journal resumed,
-- locked first so that two runs cannot both resume it.
local function take_place(f, path, output)
  if not exists(path) then
    local err
    for _ = 1, 3 do -- the run that had it may end between the claim and the look: claim again
      local ok, why = files.claim(f)
      if ok then return end
      err = why
      local state = journal_state(path)
      if state or exists(path) or not why:find("exists", 1, true) then
        files.discard(f)
        if state == "held" then refuse_held(output, path) end
        if state == "left" then refuse_left(path) end
        io_fail(path, "the journal", why)
      end
    end
    files.discard(f)
    io_fail(path, "the journal", err)
  end
  local old, id = process.lock_path(path)
  if not old then
    files.discard(f)
    if id == "busy" then refuse_held(output, path) end
    io_fail(path, "the journal", id)
  end
  if id ~= process.file_id(path) then -- replaced while it was being locked: another run's now
    old:close()
    files.discard(f)
    refuse_held(output, path)
  end
  local ok, err = files.rename(f)
  old:close()
  if not ok then io_fail(path, "the journal", err) end
end

-- the journal, made new with its header, then renamed into place (over the journal --resume read)
local function open_journal(w, outputs, resumed)
  local doc = w.doc
  w.path = journal.path_for(outputs[1].path)
  local f, err = files.create(w.path)
  if not f then io_fail(w.path, "the journal", err) end
  w.file = f
  local header = {}
  for k, v in pairs(doc) do
    if k ~= "configurations" then header[k] = v end
  end
  -- the header, then what --resume carries over, all written before the new journal takes the
  -- old one's place: an entry that cannot be written leaves the old journal as it was
  local encoded, lines = pcall(function()
    local lines = { results.encode({ schema = "wlrun-journal", version = 1, document = header },
      true) }
    for _, entry in ipairs(resumed or {}) do lines[#lines + 1] = results.encode(entry, true,
      doc.scenario.axes) end
    lines[#lines + 1] = ""
    return table.concat(lines, "\n")
  end)
  if not encoded then
    files.discard(f)
    error(lines, 0)
  end
  local ok, werr = f:write(lines)
  if ok then ok, werr = f:flush() end
  if ok then ok, werr = process.lock(f) end -- held until the run ends
  if not ok then
    files.discard(f)
    io_fail(w.path, "the journal", werr)
  end
  take_place(f, w.path, outputs[1].path)
end

function journal.open(doc, outputs, resume, resumed)
  journal.hook_exit()
  local w = setmetatable({ doc = doc, outputs = outputs, finished = false }, Writer)
  for _, entry in ipairs(resumed or {}) do doc.configurations[#doc.configurations + 1] = entry end
  for _, o in ipairs(outputs) do journal.check_output(o.path) end
  local paths = {}
  for i, o in ipairs(outputs) do paths[i] = o.path end
  w.locks = output_lock.take(paths) -- one writer per output
  local ok, err = pcall(function()
    for _, o in ipairs(outputs) do
      local left = journal.path_for(o.path)
      local state = journal_state(left) -- a live run's output, or what a killed run measured:
      if state == "held" then refuse_held(o.path, left) end -- never overwritten
      if state == "left" and not output_lock.same_file(left, resume) then refuse_left(left) end
    end
    if #outputs > 0 then open_journal(w, outputs, resumed) end
  end)
  if not ok then
    output_lock.release(w.locks)
    error(err, 0)
  end
  open_writers[w] = true
  return w
end

function Writer:line(text)
  local ok, err = self.file:write(text, "\n")
  if ok then ok, err = self.file:flush() end
  if not ok then io_fail(self.path, "the journal", err) end
end

function Writer:add(entry)
  local list = self.doc.configurations
  list[#list + 1] = entry
  if self.file then self:line(results.encode(entry, true, self.doc.scenario.axes)) end
end

-- Writes every output from the document (once); the journal goes when all are written. An
-- output that cannot be written is an io error, and the journal stays (it holds everything).
function Writer:finish(complete)
  if self.finished then return end
  self.finished = true
  open_writers[self] = nil
  results.finish(self.doc, complete)
  local failed
  for _, o in ipairs(self.outputs) do
    local ok, e = pcall(report.write, self.doc, o.path, o.format)
    if not ok then failed = failed or e end
  end
  if not failed and self.path then os.remove(self.path) end
  -- let go of last: the locks keep another run off these outputs until they are written
  if self.file then self.file:close() end
  output_lock.release(self.locks)
  if failed then
    local msg = type(failed) == "table" and failed.message or tostring(failed)
    if self.path then msg = msg .. ("; every finished configuration is in the journal '%s'"):format(
      self.path) end
    core.error(type(failed) == "table" and failed.kind or "io", msg, 0)
  end
end

-- a to-be-closed guard: the outputs are written however the run ends
function Writer:guard()
  return setmetatable({}, { __close = function(_, err)
    if not self.finished then
      local ok, e = pcall(self.finish, self, false)
      if not ok and err == nil then error(e, 0) end
    end
  end })
end

-- every writer still open, finished as incomplete (os.exit in a script, the host at exit)
function journal.finish_all()
  for w in pairs(open_writers) do pcall(w.finish, w, false) end
end

return journal
