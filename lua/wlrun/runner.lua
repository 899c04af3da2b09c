-- Runs a scenario (docs/scenarios.md): expands the parameter space, and for each configuration
-- runs setup, the check, the measurement and the teardown; records the results document
-- (docs/results.md), writes every output after each configuration, and prints the report.
local core = require "wlrun.core"
local sweep = require "wlrun.sweep"
local units = require "wlrun.units"
local nvtx = core.nvtx -- nvtx: automatic ranges (docs/nvtx.md)

local runner = {}

local function wlrun() return require "wlrun" end

local function stderr(fmt, ...) io.stderr:write((fmt):format(...)) end

local function settings_doc()
  local wl = wlrun()
  local sources = {}
  for section, names in pairs(core.settings_origin) do
    for name, o in pairs(names) do
      if o.source ~= "default" then sources[section .. "." .. name] = o.source end
    end
  end
  return wl.settings, sources
end

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function new_document(sc, script, space, device, floor)
  local wl = wlrun()
  local settings, sources = settings_doc()
  return {
    schema = "wlrun-results", version = 1,
    wlrun = { version = wl.version, lua = _VERSION, nvrtc = wl.nvrtc_version() },
    command_line = core.cli.argv, cwd = core.cwd(),
    started = core.utc_now(), complete = false,
    scenario = { name = sc.name, description = sc.description, file = script,
                 hash = core.hash(read_file(script) or ""), axes = space.axes },
    settings = settings, sources = sources,
    device = device, floor = floor,
    configurations = {},
  }
end

-- tensors and bound launches held by a configuration's state (tables searched 3 deep)
local function walk_state(v, fn, depth, seen)
  seen = seen or {}
  if v == nil or depth > 3 or seen[v] then return end
  seen[v] = true
  if type(v) == "table" and getmetatable(v) == nil then
    for _, x in pairs(v) do walk_state(x, fn, depth + 1, seen) end
  elseif type(v) == "userdata" then
    fn(v)
  end
end

local function kernels_of(state, work)
  local list, seen = {}, {}
  local function add(v)
    if core.is_launch(v) then
      local k = v.kernel
      if not seen[k] then
        seen[k] = true
        local entry = { name = k.name, source = k.source, arch = k.arch }
        local ok, a = pcall(function() return k.attributes end)
        if ok then for key, val in pairs(a) do entry[key] = val end end
        list[#list + 1] = entry
      end
    end
  end
  add(work)
  walk_state(state, add, 0)
  return list
end

local function resolve_work(sc, p, state)
  if type(sc.run) == "string" then
    local w = type(state) == "table" and state[sc.run]
    if not w then
      core.error("script", ("run = '%s', but setup's result has no field '%s'"):format(sc.run, sc.run), 0)
    end
    return w
  end
  return function() sc.run(p, state) end
end

local function call_work_once(work)
  if type(work) == "function" or core.is_launch(work) then work() else work:launch() end
end

function runner.check_failed(check)
  return { code = "check-failed", title = "the check failed",
    message = "the check failed" .. (check.message and (": " .. check.message) or ""),
    hint = "the output is wrong: the timing does not measure the intended work" }
end

-- runs one configuration; returns its entry for the document
local function run_config(sc, cfg, ctx)
  local wl = wlrun()
  local p = cfg.params
  local entry = { index = cfg.index, params = p }
  local state
  local t0 = core.clock()
  local ok, err = xpcall(function()
    do local _ <close> = nvtx.auto_scope("setup") -- nvtx
      state = sc.setup and sc.setup(p) or {}
    end
    if sc.loop then -- a loop workload (docs/loops.md): its own timing instead of wl.bench
      if ctx.compile_only then entry.status = "compiled" return end
      require("wlrun.loop").run(sc, p, state, entry, ctx)
      entry.kernels = kernels_of(state)
      if sc.check then -- for a loop, after it: did the training do what it should?
        local good, message = sc.check(p, state)
        entry.check = { ok = good ~= false and good ~= nil, message = message and tostring(message) or nil }
        if not entry.check.ok then table.insert(entry.warnings, 1, runner.check_failed(entry.check)) end
      end
      return
    end
    local work = resolve_work(sc, p, state)
    if ctx.compile_only then
      call_work_once(work) -- checks the bound arguments; nothing runs
      entry.status = "compiled"
      return
    end
    if sc.check then -- once, outside timing, on the output of one run
      local _ <close> = nvtx.auto_scope("check") -- nvtx
      call_work_once(work)
      wl.sync()
      local good, message = sc.check(p, state)
      entry.check = { ok = good ~= false and good ~= nil, message = message and tostring(message) or nil }
    end
    local r = wl.bench(work, sc.timing)
    entry.status = "ok"
    entry.mode, entry.per, entry.warmup = r.mode, r.per, r.warmup.n
    entry.samples, entry.enqueue = r.samples, r.enqueue
    entry.stats, entry.enqueue_stats, entry.shape = r.stats, r.enqueue_stats, r.shape
    entry.clock, entry.notes, entry.adaptive = r.clock, r.notes, r.adaptive
    entry.warnings = r.warnings
    if entry.check and not entry.check.ok then table.insert(entry.warnings, 1, runner.check_failed(entry.check)) end
    entry.kernels = kernels_of(state, work)
    if sc.work then
      local w = sc.work(p)
      if type(w) ~= "table" then core.error("script", "work(p) must return {flops =, bytes =}", 0) end
      entry.work = { flops = w.flops, bytes = w.bytes }
      local m = {}
      if w.flops then
        m.flop_per_s = w.flops / r.stats.median
        m.peak_fp32_fraction = ctx.device and m.flop_per_s / ctx.device.peak_fp32_flops or nil
      end
      if w.bytes then
        m.bytes_per_s = w.bytes / r.stats.median
        m.peak_bandwidth_fraction = ctx.device and m.bytes_per_s / ctx.device.peak_bandwidth or nil
      end
      entry.metrics = m
    end
  end, function(e)
    if type(e) == "table" then return e end
    return { message = debug.traceback(tostring(e), 2), kind = "script" }
  end)
  if not ok and type(err) == "table" and err.kind == "cuda" and err.message then -- name the kernels
    local names = {}
    for _, k in ipairs(kernels_of(state)) do names[#names + 1] = k.name end
    if #names > 0 then err.message = ("%s (kernels of this configuration: %s)"):format(err.message, table.concat(names, ", ")) end
  end
  if sc.teardown and state ~= nil then pcall(nvtx.auto_range, "teardown", nil, sc.teardown, p, state) end -- nvtx
  walk_state(state, function(v) if core.is_tensor(v) and not v.freed then v:free() end end, 0)
  state = nil
  collectgarbage()
  entry.time = core.clock() - t0
  if not ok then
    if require("wlrun.scenario").is_skip(err) then
      entry.status, entry.reason = "skipped", err.reason
    else
      entry.status = "failed"
      entry.kind = err.kind or "script"
      entry.error = err.message or tostring(err)
      if entry.kind == "interrupted" then return entry, err end
    end
  end
  return entry
end

local function save(doc, outputs)
  local report = require "wlrun.report"
  for _, o in ipairs(outputs) do report.write(doc, o.path, o.format) end
end

local function print_dry_run(space, sc)
  print(("%s: %d configuration%s (%d in the space, %d pruned by where, %d by --filter)"):format(sc.name,
    #space.list, #space.list == 1 and "" or "s", space.total, space.pruned, space.filtered))
  for _, c in ipairs(space.list) do
    print(("%4d  %s"):format(c.index, sweep.describe(c.params, space.axes)))
  end
end

local function progress_line(i, n, cfg, axes, elapsed)
  local eta = i > 1 and elapsed / (i - 1) * (n - i + 1) or nil
  local line = ("[%d/%d] %s%s"):format(i, n, sweep.describe(cfg.params, axes),
    eta and ("  ETA " .. units.time(eta, "%.0f %s")) or "")
  stderr("\r\27[K%s", line:sub(1, 200))
end

local function compile_only_run() return core.compile_only() end

-- --devices 0,1,...: a child process per device at a time, each configuration to the first free
-- device (CUDA_VISIBLE_DEVICES); results merged as they finish
function runner.run_devices(sc, space, doc, outputs, done)
  local wl = wlrun()
  local devices = {}
  for d in core.cli.devices:gmatch("%d+") do devices[#devices + 1] = tonumber(d) end
  local n = wl.device_count()
  for _, d in ipairs(devices) do
    if d >= n then core.error("no_device", ("--devices: no CUDA device %d (this machine has %d)"):format(d, n), 0) end
  end
  local todo = {}
  for _, cfg in ipairs(space.list) do
    local old = done[runner.params_key(cfg.params)]
    if old then
      old.index, old.resumed = cfg.index, true
      doc.configurations[#doc.configurations + 1] = old
    else
      todo[#todo + 1] = cfg
    end
  end
  local progress = wl.settings.output.progress and not wl.settings.output.quiet and core.isatty(2)
  local t0, finished, failed, first_failure, interrupt = core.clock(), 0, 0, nil, nil
  require("wlrun.isolate").run_on_devices(todo, devices, wl.settings.run.config_timeout, function(entry, stop)
    doc.configurations[#doc.configurations + 1] = entry
    table.sort(doc.configurations, function(a, b) return a.index < b.index end)
    finished = finished + 1
    if entry.status == "failed" and entry.kind ~= "interrupted" then
      failed = failed + 1
      first_failure = first_failure or entry
      if progress then stderr("\r\27[K") end
      stderr("wlrun: configuration %d (%s) failed on device %d: %s\n", entry.index,
        sweep.describe(entry.params, space.axes), entry.device_index, entry.error)
    end
    interrupt = interrupt or stop
    save(doc, outputs)
    if progress then
      local elapsed = core.clock() - t0
      stderr("\r\27[K[%d/%d on %d devices] ETA %s", finished, #todo, #devices,
        units.time(elapsed / finished * (#todo - finished), "%.0f %s"))
    end
  end)
  if progress then stderr("\r\27[K") end
  if interrupt then
    core.error("interrupted", ("interrupted; %d finished configurations are in %s"):format(
      #doc.configurations, #outputs > 0 and outputs[1].path or "no output file (-o)"), 0)
  end
  doc.finished, doc.complete = core.utc_now(), true
  doc.devices = devices
  save(doc, outputs)
  io.stdout:write(require("wlrun.report").render(doc, wl.settings.output.format))
  io.stdout:flush()
  if failed > 0 then
    core.error(first_failure.kind, ("%d of %d configurations failed (the first: %s)"):format(failed, #todo,
      first_failure.error:match("[^\n]*")), 0)
  end
end

-- a configuration's identity across runs: its parameters, in name order
function runner.params_key(params)
  local names = {}
  for k in pairs(params) do names[#names + 1] = k end
  table.sort(names)
  local parts = {}
  for _, k in ipairs(names) do parts[#parts + 1] = k .. "=" .. tostring(params[k]) .. ":" .. type(params[k]) end
  return table.concat(parts, "\0")
end

-- --resume FILE: the configurations FILE finished (ok or skipped), by params_key; failed ones
-- run again
function runner.resumed(path, sc, script)
  local f = io.open(path, "rb")
  if not f then core.error("io", ("--resume %s: cannot read the file"):format(path), 0) end
  local text = f:read("a")
  f:close()
  local old = require("dkjson").decode(text)
  if type(old) ~= "table" or old.schema ~= "wlrun-results" or type(old.configurations) ~= "table" then
    core.error("usage", ("--resume %s: not a wlrun results document"):format(path), 0)
  end
  if not old.scenario or old.scenario.name ~= sc.name then
    core.error("usage", ("--resume %s: its scenario is '%s', this one is '%s'"):format(path,
      tostring(old.scenario and old.scenario.name), sc.name), 0)
  end
  if old.scenario.hash ~= core.hash(read_file(script) or "") then
    stderr("wlrun: warning: --resume %s was made by another version of %s (its hash differs)\n", path, script)
  end
  local done = {}
  for _, c in ipairs(old.configurations) do
    if (c.status == "ok" or c.status == "skipped") and type(c.params) == "table" then
      done[runner.params_key(c.params)] = c
    end
  end
  return done
end

function runner.run(sc, script)
  local wl = wlrun()
  local cli = core.cli
  local space = sweep.expand(sc, cli.params, cli.filter)
  -- --shard K/N, or Slurm's or MPI's variables (docs/cluster.md); the slice is applied below,
  -- after the workers of --isolate and --devices, which look configurations up by index
  local sh = require "wlrun.shard"
  local slice, shard = sh.select(space.list, { shard = cli.shard })
  local function apply_shard()
    if not shard then return end
    space.total_configurations, space.list = shard.total, slice
    stderr("wlrun: %s\n", sh.message(shard))
  end
  if shard and shard.local_rank and not cli.worker_config and not cli.worker_queue and not compile_only_run()
      and wl.setting_origin("run", "device").source == "default" and not cli.devices then
    local n = wl.device_count()
    if n > 0 then wl.select_device(sh.local_device(shard.local_rank, n)) end
  end
  if cli.dry_run then
    apply_shard()
    print_dry_run(space, sc)
    return
  end
  local scenario_range <close> = nvtx.auto_scope("scenario", "scenario " .. sc.name) -- nvtx
  local compile_only = core.compile_only()
  local done = cli.resume and runner.resumed(cli.resume, sc, script) or {} -- before the device: bad input first
  local device, floor
  if not compile_only then
    local ok, d = pcall(wl.device) -- no device: a clear error (exit 4) before anything runs
    if not ok then
      local why = type(d) == "table" and d.message or tostring(d)
      core.error(type(d) == "table" and d.kind or "no_device", ("%s needs a CUDA device: %s"):format(script,
        why:gsub("^.-no CUDA device: ", "")), 0)
    end
    device = d
    floor = wl.timing_floor()
  end
  local doc = new_document(sc, script, space, device, floor)
  local report = require "wlrun.report"
  local outputs = {}
  for _, path in ipairs(cli.outputs) do
    outputs[#outputs + 1] = { path = path, format = report.format_for_path(path) }
  end
  local quiet = wl.settings.output.quiet
  local progress = wl.settings.output.progress and not quiet and core.isatty(2)
  local ctx = { device = device, compile_only = compile_only,
                quiet = quiet or cli.worker_config ~= nil or cli.worker_queue ~= nil }
  local isolate = require "wlrun.isolate"
  if cli.worker_config then -- a child of --isolate: one configuration, its entry to a file
    return isolate.worker(sc, space, cli.worker_config, cli.worker_output, run_config, ctx)
  end
  if cli.worker_queue then -- a worker of --devices: configurations from the shared queue
    return isolate.queue_worker(sc, space, cli.worker_queue, run_config, ctx)
  end
  if shard then
    apply_shard()
    doc.shard = { k = shard.k, n = shard.n, source = shard.source }
    doc.scenario.total_configurations = space.total_configurations
  end
  if cli.devices and not compile_only then
    return runner.run_devices(sc, space, doc, outputs, done)
  end
  local timeout = wl.settings.run.config_timeout
  local isolated = not compile_only and (wl.settings.run.isolate or timeout > 0)
  local t0, failed, first_failure = core.clock(), 0, nil
  for i, cfg in ipairs(space.list) do
    if progress then progress_line(i, #space.list, cfg, space.axes, core.clock() - t0) end
    local config_range <close> = nvtx.auto_scope("configuration", -- nvtx
      ("config %d: %s"):format(cfg.index, sweep.describe(cfg.params, space.axes)), cfg.index) -- nvtx
    local key = runner.params_key(cfg.params)
    local entry, interrupt
    if done[key] then
      entry = done[key]
      entry.index, entry.resumed = cfg.index, true
    elseif isolated then
      entry, interrupt = isolate.run(cfg, timeout)
    else
      entry, interrupt = run_config(sc, cfg, ctx)
      local healthy, why = core.context_ok()
      if not healthy and i < #space.list then -- a fault poisoned the CUDA context for good
        isolated = true
        stderr("wlrun: the CUDA context is lost after configuration %d (%s); the other configurations run in child processes\n",
          cfg.index, why)
      end
    end
    doc.configurations[#doc.configurations + 1] = entry
    if entry.status == "failed" then
      failed = failed + 1
      first_failure = first_failure or entry
      if progress then stderr("\r\27[K") end
      stderr("wlrun: configuration %d (%s) failed: %s\n", cfg.index, sweep.describe(cfg.params, space.axes), entry.error)
    end
    if not compile_only then save(doc, outputs) end
    if interrupt then
      if progress then stderr("\r\27[K") end
      core.error("interrupted", ("interrupted during configuration %d of %d; %d finished configurations are in %s"):format(
        i, #space.list, i - 1, #outputs > 0 and outputs[1].path or "no output file (-o)"), 0)
    end
    if entry.kind == "no_device" then break end
  end
  if progress then stderr("\r\27[K") end
  if compile_only then
    wl.report_compiled()
  else
    doc.finished, doc.complete = core.utc_now(), true
    save(doc, outputs)
    io.stdout:write(report.render(doc, wl.settings.output.format))
    io.stdout:flush()
  end
  if failed > 0 then
    core.error(first_failure.kind == "interrupted" and "script" or first_failure.kind,
      ("%d of %d configurations failed (the first: %s)"):format(failed, #space.list,
        first_failure.error:match("[^\n]*")), 0)
  end
end

return runner
