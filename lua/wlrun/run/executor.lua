-- Executors: where the configurations of a plan run. All have one interface:
--
--   exec:run(list, emit [, started]) -> nil | stop
--
-- runs the configurations of list ({index, params, key}...), calls started(cfg) before one
-- starts (where the executor knows) and emit(entry) as each one finishes (in the order they
-- finish), and returns nil when all ran, or the interruption ({kind =, message =}) that
-- stopped it early (Ctrl-C; no device).
--
--   executor.in_process(ctx)        here, one after another; after a fault that poisons the
--                                   CUDA context, the rest in child processes
--   executor.isolated(timeout)      a child process per configuration (--isolate,
--                                   --config-timeout)
--   executor.devices(list, timeout) a worker process per GPU taking configurations from a
--                                   shared queue (--devices); exec:start(list) starts the
--                                   workers before the run needs them, exec:check() then checks
--                                   the devices named while they start, exec:describe(doc) gives
--                                   the document the device record and floor of the first GPU's
--                                   worker and the devices that ran configurations, and
--                                   exec:close() (also __close) waits for the workers, ending any
--                                   still there, and removes the queue
--   executor.choose(ctx, settings, cli) the one the command line asks for (under --compile-only,
--                                   --isolate, --config-timeout and --devices: isolated)
local core = require "wlrun.core"
local process = require "wlrun.process"
local printable = require "wlrun.text.printable"
local trim = require "wlrun.text.trim"
local results = require "wlrun.results"
local provenance = require "wlrun.results.provenance"
local sweep = require "wlrun.run.sweep"
local isolate = require "wlrun.run.isolate"
local configuration = require "wlrun.run.configuration"

local executor = {}

local exists = results.exists

local function stops(entry)
  if entry.kind == "interrupted" then return { kind = "interrupted",
    message = entry.error or "interrupted" } end
  if entry.kind == "no_device" then return { kind = "no_device", message = entry.error } end
end

---------------------------------------------------------------------------------------------

local Isolated = { name = "isolated" }
Isolated.__index = Isolated

function executor.isolated(timeout) return setmetatable({ timeout = timeout }, Isolated) end

-- the temporary directory the children write into can be made (TMPDIR): said before the run
-- opens its outputs, which a run that cannot start must leave as they were
function Isolated:check() isolate.remove_dir(isolate.temp_dir()) end

function Isolated:run(list, emit, started)
  local dir = isolate.temp_dir()
  local _ <close> = setmetatable({}, { __close = function() isolate.remove_dir(dir) end })
  for _, cfg in ipairs(list) do
    if started then started(cfg) end
    local entry, interrupt = isolate.run(cfg, self.timeout, dir)
    emit(entry)
    if interrupt then return interrupt end
    local stop = stops(entry)
    if stop then return stop end
  end
end

---------------------------------------------------------------------------------------------

local InProcess = { name = "in-process" }
InProcess.__index = InProcess

function executor.in_process(ctx) return setmetatable({ ctx = ctx }, InProcess) end

function InProcess:run(list, emit, started)
  for i, cfg in ipairs(list) do
    if started then started(cfg) end
    local _config_range <close> = core.nvtx.auto_scope("configuration", -- nvtx
      -- nvtx
      ("config %d: %s"):format(cfg.index, sweep.describe(cfg.params, self.ctx.axes)), cfg.index)
    local entry, interrupt = configuration.run(self.ctx.scenario, cfg, self.ctx)
    emit(entry)
    if interrupt then return interrupt end
    local stop = stops(entry)
    if stop then return stop end
    local healthy, why = core.context_ok()
    if not healthy and i < #list then -- a fault poisoned the CUDA context for good
      self.ctx.sink:message(
        ("the CUDA context is lost after configuration %d (%s); the other configurations run in "
        .. "child processes"):format(
        cfg.index, why))
      return executor.isolated(0):run(table.move(list, i + 1, #list, 1, {}), emit, started)
    end
  end
end

---------------------------------------------------------------------------------------------
-- --devices 0,1,...: a shared queue in a directory. DIR/todo/I stands for configuration I; a
-- worker claims it by renaming it to DIR/taken/I.PID (a rename is atomic: two workers cannot
-- both win), runs it and writes its entry to DIR/done/I.json. One worker per device
-- (CUDA_VISIBLE_DEVICES: executor.visible_device), restarted when it exits early (a fault
-- poisons its CUDA context, so a worker stops after one) while work is left.

local Devices = { name = "devices" }
Devices.__index = Devices

function executor.devices(devices, timeout)
  -- stopped until a run has taken every configuration: a close before then ends the workers
  return setmetatable({ devices = devices, timeout = timeout, workers = {}, records = {},
    stopped = true }, Devices)
end

-- The CUDA_VISIBLE_DEVICES of the worker for dev, an index among the devices this process sees:
-- dev's entry of this process's own CUDA_VISIBLE_DEVICES (visible) where that is set (an index,
-- a GPU-... or MIG-... UUID; Slurm sets it to the job's GPUs), else dev. nil where visible has no
-- entry dev: this process sees no such device (Devices:check refuses it).
function executor.visible_device(dev, visible)
  if visible == nil then return tostring(dev) end
  local i = 0
  for entry in (visible .. ","):gmatch("([^,]*),") do
    if i == dev then
      entry = trim.both(entry)
      return entry ~= "" and entry or nil
    end
    i = i + 1
  end
  return nil
end

-- a worker for device dev, its standard error kept in the queue's directory (killed with this
-- process, however it ends: no worker goes on taking from the queue alone); none for a device
-- this process does not see (the check then refuses the run). WLRUN_WORKER_DEVICE: dev, which
-- the worker records (its CUDA_VISIBLE_DEVICES may be a UUID).
function Devices:spawn(dev)
  local visible = executor.visible_device(dev, os.getenv("CUDA_VISIBLE_DEVICES"))
  if not visible then return end
  local pid = process.spawn_async(isolate.child_args { "--worker-queue", self.dir },
    { stdout = "/dev/null", stderr = ("%s/stderr.%d"):format(self.dir, dev),
      env = { CUDA_VISIBLE_DEVICES = visible, WLRUN_WORKER_DEVICE = tostring(dev) },
        die_with_parent = true })
  self.workers[pid] = dev
end

-- the queue of list's configurations, and a worker per device taking from it: started as soon as
-- the plan is known, so that the workers make their CUDA contexts while this process does the
-- rest of its start (the devices' check included: exec:check)
function Devices:start(list)
  if self.dir then
    assert(list == self.list, "Devices:start: the queue holds another list")
    return
  end
  self.list, self.dir = list, isolate.temp_dir()
  for _, d in ipairs { "/todo", "/taken", "/done", "/device" } do
    local ok, err = process.make_dir(self.dir .. d)
    if not ok then core.error("io", ("cannot make '%s': %s"):format(self.dir .. d, tostring(err)),
      0) end
  end
  for _, cfg in ipairs(list) do
    local f = assert(io.open(("%s/todo/%d"):format(self.dir, cfg.index), "w"))
    f:close()
  end
  for _, dev in ipairs(self.devices) do if #list > 0 then self:spawn(dev) end end
end

-- the devices named exist: the driver's count (loading it takes about 100 ms, which the workers
-- started before spend on their own)
function Devices:check()
  local n = core.device_count()
  local visible = os.getenv("CUDA_VISIBLE_DEVICES") -- the GPUs a job was given (Slurm): say so
  local seen = visible and (", as CUDA_VISIBLE_DEVICES=%s shows them"):format(
    printable.text(visible))
    or ""
  for _, d in ipairs(self.devices) do
    if d >= n then
      core.error("no_device", ("--devices: no CUDA device %d (this machine has %d%s)"):format(d, n,
        seen), 0)
    end
  end
end

-- the workers that end within seconds, collected
function Devices:wait(seconds)
  local deadline = core.clock() + seconds
  while next(self.workers) do
    local left = deadline - core.clock()
    local w = left > 0 and process.wait_any(left)
    if not w then return end
    self.workers[w.pid] = nil
  end
end

-- Every worker gone, then the queue: a worker still there after a run that finished everything
-- is ending on its own (its context released as its process ends, while this one wrote the
-- outputs and the report); after a stop or an error (err: __close's), or past the wait, it is
-- ended (SIGTERM, then SIGKILL). A Ctrl-C during the waits kills what is left at once; the
-- queue is removed whatever happens, and the interruption raised again.
function Devices:close(err)
  if self.closed then return end
  self.closed = true
  local ok, why = pcall(function()
    if not self.stopped and err == nil then self:wait(Devices.EXIT_WAIT_S) end
    for _, sig in ipairs { 15, 9 } do
      if not next(self.workers) then break end
      for pid in pairs(self.workers) do process.kill(pid, sig) end
      self:wait(2)
    end
  end)
  if not ok then
    for pid in pairs(self.workers) do process.kill(pid, 9) end
    pcall(self.wait, self, 1)
  end
  if self.dir then isolate.remove_dir(self.dir) end
  if not ok then error(why, 0) end
end
Devices.__close = Devices.close
-- a worker's own end waits up to 10 s for its device (docs/architecture.md)
Devices.EXIT_WAIT_S = 10

-- A run over the queue, in steps that share its state (run_state): the entries the workers
-- wrote, the claims past --config-timeout, the workers that ended, the configurations no
-- worker is left to run.

-- each worker's device record, written once it has its context and timing floor, at a time
-- on the monotonic clock that all processes share: the first of them, from this process's
-- start, is the run's workers_ready (doc.wall)
local function read_records(exec)
  for _, dev in ipairs(exec.devices) do
    if not exec.records[dev] then
      local r = isolate.read_device(exec.dir, dev)
      exec.records[dev] = r
      local at = r and (r.ready_at or core.clock()) - core.started
      if at and at < (exec.ready or math.huge) then exec.ready = at end
    end
  end
end

-- the configurations not finished yet (seen: those finished), when each claim was first seen,
-- the workers killed for a timeout, why the workers that never got their GPU exited, the stop
local function run_state(exec, list, emit)
  local by_index = {}
  for _, cfg in ipairs(list) do by_index[cfg.index] = cfg end
  return { exec = exec, dir = exec.dir, list = list, emit = emit, by_index = by_index,
    timeout = exec.timeout,
    remaining = #list, seen = {}, claimed_at = {}, killed = {}, lost = {}, stop = nil }
end

local function finish(q, index, entry)
  q.seen[index] = true
  q.remaining = q.remaining - 1
  q.emit(entry)
  q.stop = q.stop or stops(entry)
end

-- the entries the workers wrote
local function collect_done(q)
  local dir, by_index = q.dir, q.by_index
  for _, name in ipairs(process.list_dir(dir .. "/done") or {}) do
    local index = tonumber(name:match("^(%d+)%.json$"))
    if index and not q.seen[index] then
      -- a worker writes its entry under another name and renames it: what is here is whole
      local entry, unreadable = isolate.read_entry(("%s/done/%s"):format(dir, name))
      if unreadable and by_index[index] then entry = isolate.unreadable(by_index[index],
        unreadable) end
      if entry and by_index[index] then entry = isolate.own_entry(by_index[index], entry) end
      if entry then finish(q, index, entry) end
    end
  end
end

-- a claim held past --config-timeout: its worker gets SIGTERM, and SIGKILL a second later
local function watch_claims(q, now)
  local workers, killed = q.exec.workers, q.killed
  for _, name in ipairs(process.list_dir(q.dir .. "/taken") or {}) do
    local index, pid = name:match("^(%d+)%.(%d+)$")
    q.claimed_at[name] = q.claimed_at[name] or now
    pid = tonumber(pid)
    if q.timeout > 0 and now - q.claimed_at[name] > q.timeout and workers[pid]
      and not killed[pid] then
      process.kill(pid, 15)
      killed[pid] = { at = now, index = tonumber(index) }
    elseif killed[pid] and now - killed[pid].at > 1 then
      process.kill(pid, 9)
    end
  end
end

-- what the ended worker w (of device dev) held and did not finish failed with it
local function fail_held(q, w, dev, now)
  local dir = q.dir
  for _, name in ipairs(process.list_dir(dir .. "/taken") or {}) do
    local index, pid = name:match("^(%d+)%.(%d+)$")
    index, pid = tonumber(index), tonumber(pid)
    if pid == w.pid and not q.seen[index] and not exists(
      ("%s/done/%d.json"):format(dir, index)) then
      if q.killed[pid] then w.how = "timeout" end
      w.time = now - (q.claimed_at[name] or now)
      local entry, interrupt = isolate.collect(q.by_index[index], w, "/nonexistent",
        ("%s/stderr.%d"):format(dir, dev), q.timeout)
      entry.device_index = dev
      os.remove(("%s/taken/%s"):format(dir, name))
      finish(q, index, entry)
      q.stop = q.stop or interrupt
    end
  end
end

-- a worker that ended: what it held fails, and it is started again while work is left
local function worker_ended(q, w, now)
  local exec = q.exec
  local dev = exec.workers[w.pid]
  exec.workers[w.pid] = nil
  fail_held(q, w, dev, now)
  if isolate.interrupted_end(w) then
    q.stop = q.stop or { kind = "interrupted", message = ("interrupted (%s)"):format(
      core.stop_signal() or "Ctrl-C") }
  end
  -- a worker that exited before it wrote its device record never got its GPU (no context:
  -- a GPU in exclusive mode, out of memory): started again it would fail again, for ever
  read_records(exec)
  if not exec.records[dev] then
    q.lost[#q.lost + 1] = ("device %d: %s"):format(dev,
      isolate.stderr_first(("%s/stderr.%d"):format(q.dir, dev)))
  elseif not q.stop and #(process.list_dir(q.dir .. "/todo") or {}) > 0 then
    exec:spawn(dev)
  end
end

-- every worker gone with work left: the configurations not done fail, saying why
local function fail_rest(q)
  local why = #q.lost > 0 and ("no worker ran it (every worker of --devices exited; %s)"):format(
    table.concat(q.lost, "; "))
    or "no worker ran it (every worker of --devices exited)"
  for _, cfg in ipairs(q.list) do
    if not q.seen[cfg.index] and not exists(("%s/done/%d.json"):format(q.dir, cfg.index)) then
      finish(q, cfg.index, isolate.failed(cfg, "crash", why))
    end
  end
end

function Devices:run(list, emit)
  local owned = not self.dir -- not started before: this run closes what it starts
  self:start(list)
  local _ <close> = owned and self or nil
  local q = run_state(self, list, emit)
  while q.remaining > 0 and not q.stop do
    read_records(self)
    collect_done(q)
    local now = core.clock()
    watch_claims(q, now)
    -- the last entry found within 10 ms
    local w = q.remaining > 0 and not q.stop and process.wait_any(0.01)
    if w and self.workers[w.pid] then worker_ended(q, w, now) end
    if q.remaining > 0 and not q.stop and next(self.workers) == nil then fail_rest(q) end
  end
  read_records(self)
  -- a stop ends the workers at once, the queue they would go on taking from being full (an error
  -- from emit, the journal's, leaves the run stopped, for close)
  self.stopped = q.stop ~= nil or q.remaining > 0
  if self.stopped then for pid in pairs(self.workers) do process.kill(pid, 15) end end
  return q.stop
end

-- doc.device and doc.floor: the first listed GPU's worker's, else the first other's that wrote
-- them, else those of resumed (--resume's file: {device =, floor =}, when no worker ran); none:
-- a document without a device record, as the loader allows. doc.devices: the GPUs that ran
-- configurations
function Devices:describe(doc, resumed)
  local records, taken = self.records or {}, nil
  for _, dev in ipairs(self.devices) do
    if records[dev] then taken = records[dev] break end
  end
  if not taken and type(resumed) == "table" and type(resumed.device) == "table" then
    taken = resumed end
  if taken then
    doc.device, doc.floor = taken.device, taken.floor
    provenance.add_device(doc.provenance, taken.device)
  end
  local used, list = {}, {}
  for _, c in ipairs(doc.configurations) do
    if math.type(c.device_index) == "integer" and not used[c.device_index] then
      used[c.device_index] = true
      list[#list + 1] = c.device_index
    end
  end
  table.sort(list)
  doc.devices = #list > 0 and list or nil
end

---------------------------------------------------------------------------------------------

-- the executor a run asks for: --devices, --isolate or --config-timeout, or this process. Under
-- --compile-only too, --isolate and --config-timeout run each configuration in a child process
-- (a setup that hangs is stopped as on a GPU); --devices has no devices to spread over there.
function executor.choose(ctx, settings, cli)
  if ctx.compile_only then -- no device: what --devices asks for is each configuration in a child
    local timeout = settings.run.config_timeout
    if settings.run.isolate or timeout > 0 or cli.devices then return executor.isolated(timeout) end
    return executor.in_process(ctx)
  end
  if cli.devices then -- the devices named are checked by exec:check, once the workers have started
    local devices = {}
    for d in cli.devices:gmatch("%d+") do devices[#devices + 1] = tonumber(d) end
    return executor.devices(devices, settings.run.config_timeout)
  end
  local timeout = settings.run.config_timeout
  if settings.run.isolate or timeout > 0 then return executor.isolated(timeout) end
  return executor.in_process(ctx)
end

return executor
