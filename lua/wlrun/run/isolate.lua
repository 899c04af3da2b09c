-- Configurations in child processes (docs/reliability.md): the child's command line, the entry
-- a child leaves (or the failure made from how it ended), and the two kinds of child: one
-- configuration (--worker-config I --worker-output FILE) and a worker of the shared queue of
-- --devices (--worker-queue DIR). The executors (wlrun.run.executor) start and collect them.
local core = require "wlrun.core"
local process = require "wlrun.process"
local report = require "wlrun.report"
local results = require "wlrun.results"
local plan = require "wlrun.run.plan"
local child_args = require "wlrun.run.child_args"

local isolate = {}

isolate.child_args = child_args

local read = results.read_file

local function tail(text, lines)
  local t = {}
  for line in (text or ""):gmatch("[^\n]+") do t[#t + 1] = line end
  return table.concat(t, "\n", math.max(1, #t - lines + 1))
end

-- the first line a child wrote to its standard error (its error message; a traceback
-- follows it), for a message
function isolate.stderr_first(path)
  local line = (read(path) or ""):match("[^\n]*%S[^\n]*")
  if not line then return "it wrote nothing on its standard error" end
  line = line:gsub("^%s+", "")
  return #line > 300 and line:sub(1, 300) .. "..." or line
end

local signals = { [4] = "SIGILL", [6] = "SIGABRT", [7] = "SIGBUS", [8] = "SIGFPE", [9] = "SIGKILL",
                  [11] = "SIGSEGV", [15] = "SIGTERM" }

local INTERRUPTED = { kind = "interrupted", message = "interrupted" }

-- the entry a child wrote (a one-entry results document); nil when it wrote none, or nil and
-- why when what it wrote cannot be read (the strict loader's message)
function isolate.read_entry(path)
  local text = read(path)
  if not text then return nil end
  local ok, doc = pcall(results.decode, text, path)
  if not ok then return nil, tostring(type(doc) == "table" and doc.message or doc) end
  local entry = doc.configurations[1]
  if type(entry) ~= "table" then return nil, ("'%s' holds no configuration"):format(path) end
  entry.isolated = true
  return entry
end

-- the entry of configuration cfg that failed outside this process (kind: timeout, crash, ...)
function isolate.failed(cfg, kind, message, time)
  return { index = cfg.index, params = cfg.params, status = "failed", isolated = true, kind = kind,
    error = message,
           time = time }
end

-- a failed entry for configuration cfg, whose child wrote a result that cannot be read
function isolate.unreadable(cfg, why)
  return isolate.failed(cfg, "crash", "the child process wrote a result wlrun cannot read: " .. why)
end

-- the entry a child wrote, if it is configuration cfg's (its index and parameters): a child's
-- script can write the file itself, and what it wrote for another configuration would take
-- that one's place; else the failure that says so
function isolate.own_entry(cfg, entry)
  local key = results.key
  local ok, same = pcall(function() return entry.index == cfg.index
    and key(entry.params) == key(cfg.params) end)
  if ok and same then return entry end
  return isolate.unreadable(cfg, ("it holds configuration %s, not configuration %d"):format(
    type(entry.index) == "number" and ("%d"):format(entry.index) or "without an index", cfg.index))
end

-- The signals that end a run as Ctrl-C does (lhost.c: SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2,
-- SIGTERM). A child process (an isolated configuration, a --devices worker) was interrupted when
-- one of them ended it, or it exited with the code of a run they ended (130 for Ctrl-C, 128 + the
-- signal): Ctrl-C always (the terminal's whole group gets it), the others only when this process
-- got one too (wlrun itself stops a child that ran past --config-timeout with SIGTERM).
local STOP_SIGNALS = { [1] = true, [2] = true, [3] = true, [10] = true, [12] = true, [15] = true }
function isolate.interrupted_end(r)
  local sig = r.how == "signal" and r.signal or (r.code and r.code > 128 and r.code - 128)
  if not sig or not STOP_SIGNALS[sig] then return false end
  return sig == 2 or core.stop_signal() ~= nil
end

-- the entry of a child that a stop signal ended, marked as such, and the interruption
local function interrupted(entry)
  entry.kind, entry.error = "interrupted", ("interrupted (%s)"):format(core.stop_signal()
    or "Ctrl-C")
  return entry, INTERRUPTED
end

-- the entry of configuration cfg from what its child left: the entry it wrote to `out`, or a
-- failure made from how it ended (r: process.spawn's or process.wait_any's result) and its stderr
function isolate.collect(cfg, r, out, errf, timeout)
  local entry, unreadable = isolate.read_entry(out)
  local stderr = read(errf)
  os.remove(out)
  os.remove(errf)
  -- a child stopped for running past --config-timeout (SIGTERM, which it takes as a stop) may
  -- have written an interrupted entry: what happened is the timeout
  if r.how == "timeout" then entry, unreadable = nil, nil end
  if entry then
    entry = isolate.own_entry(cfg, entry)
    if entry.kind == "interrupted" then return entry,
      { kind = "interrupted", message = entry.error } end
    return entry
  end
  if unreadable then return isolate.unreadable(cfg, unreadable) end
  entry = isolate.failed(cfg, nil, nil, r.time)
  if r.how == "timeout" then
    entry.kind = "timeout"
    entry.error = ("ran past --config-timeout (%.3g s) and was stopped"):format(timeout)
  elseif r.how == "signal" then
    if isolate.interrupted_end(r) then return interrupted(entry) end
    entry.kind = "crash"
    entry.error = ("the child process died of signal %d (%s)"):format(r.signal,
      signals[r.signal] or "?")
  elseif isolate.interrupted_end(r) then
    return interrupted(entry)
  else
    entry.kind = "crash"
    entry.error = ("the child process exited with code %d and wrote no result"):format(r.code)
  end
  local t = tail(stderr, 5)
  if t ~= "" then entry.error = entry.error .. ":\n" .. t end
  return entry
end

-- a fresh private directory for a run's child files, or a tool's (mkdtemp: no other user can
-- have made it or can enter it); name: the start of its name; who: put before the message. A
-- worker of --devices makes it inside the run's queue, which the run removes whole at its end:
-- a worker ended while its directory exists (SIGTERM, SIGKILL) leaves nothing behind.
function isolate.temp_dir(name, who)
  local dir, err, parent = process.temp_dir(name or "wlrun-", core.cli.worker_queue)
  if not dir then
    core.error("io", ("%scannot make a temporary directory in '%s': %s"):format(who
      and (who .. ": ") or "", parent,
      err), 0)
  end
  return dir
end

-- removes a directory and what is in it (no shell); a symbolic link inside is removed, never
-- followed, and dir being one is refused: nothing outside dir is touched. Returns true, or nil
-- and the reason.
function isolate.remove_dir(dir) return process.remove_tree(dir) end

-- Runs configuration cfg in a child and waits; returns its entry (and an interruption). A stop
-- signal that reached this process meanwhile was passed on to the child (r.interrupted); one that
-- came after the child wrote its entry, in its end, still stops the sweep, after this entry.
function isolate.run(cfg, timeout, dir)
  local out, errf = ("%s/%d.json"):format(dir, cfg.index), ("%s/%d.err"):format(dir, cfg.index)
  local r = process.spawn(isolate.child_args { "--worker-config", tostring(cfg.index),
    "--worker-output", out },
    { timeout = timeout, stdout = "/dev/null", stderr = errf, forward_signals = true })
  local entry, interrupt = isolate.collect(cfg, r, out, errf, timeout)
  if r.interrupted and not interrupt and r.how ~= "timeout" then interrupt = INTERRUPTED end
  return entry, interrupt
end

local function write_entry(entry, path)
  local doc = { schema = results.SCHEMA, version = results.VERSION, configurations = { entry } }
  report.write_text(results.render(doc), path, "a result")
end

-- the child's side of isolate.run: configuration `index` of the plan, written to `out`
function isolate.worker(p, index, out, run, ctx)
  local cfg = plan.find(p, index)
  if not cfg then
    core.error("usage", ("--worker-config %d: the space has %d configurations"):format(index,
      #p.space), 0)
  end
  write_entry(run(cfg, ctx), out)
end

-- A worker of --devices says what its GPU is before it takes a configuration: DIR/device/DEV.json,
-- a document of the device record and the timing floor alone, which the parent's document takes
-- (the parent does no GPU work of its own)
local function device_path(dir, dev) return ("%s/device/%s.json"):format(dir, tostring(dev)) end

-- (wall.ready_at: when, on the monotonic clock, which all processes share)
function isolate.write_device(dir, dev, device, floor)
  local doc = { schema = results.SCHEMA, version = results.VERSION, device = device, floor = floor,
    configurations = {},
    wall = { ready_at = core.clock() } }
  report.write_text(results.render(doc), device_path(dir, dev), "the device record")
end

-- {device =, floor =, ready_at =} of DEV's worker, or nil while it has not written them (or
-- they cannot be read: the document then has no device record, which the loader allows)
function isolate.read_device(dir, dev)
  local text = read(device_path(dir, dev))
  local ok, doc = pcall(results.decode, text or "", device_path(dir, dev))
  if not (text and ok) then return nil end
  return { device = doc.device, floor = doc.floor, ready_at = doc.wall and doc.wall.ready_at }
end

-- the worker of --devices: claims configurations from the queue in DIR until it is empty (see
-- executor.devices for the queue)
function isolate.queue_worker(p, dir, run, ctx)
  local by_index = {}
  for _, cfg in ipairs(p.space) do by_index[cfg.index] = cfg end
  local pid, dev = process.getpid(), tonumber(os.getenv("WLRUN_WORKER_DEVICE")
    or os.getenv("CUDA_VISIBLE_DEVICES") or "")
  if ctx and ctx.device then isolate.write_device(dir, dev, ctx.device, ctx.floor) end
  while true do
    local names = process.list_dir(dir .. "/todo") or {}
    table.sort(names, function(a, b) return tonumber(a) < tonumber(b) end)
    local index
    for _, name in ipairs(names) do
      if os.rename(("%s/todo/%s"):format(dir, name), ("%s/taken/%s.%d"):format(dir, name, pid)) then
        index = tonumber(name)
        break
      end
    end
    if not index then return end
    local entry = run(by_index[index], ctx)
    entry.device_index = dev
    write_entry(entry, ("%s/done/%d.json"):format(dir, index))
    os.remove(("%s/taken/%d.%d"):format(dir, index, pid))
    if entry.kind == "interrupted" or not core.context_ok() then return end
  end
end

return isolate
