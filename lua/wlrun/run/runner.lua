-- Runs a scenario (docs/scenarios.md), one way through:
--
--   plan (wlrun.run.plan) -> executor (wlrun.run.executor) -> entries -> document and journal
--   (wlrun.results) -> printers (wlrun.report) through the sink (wlrun.report.sink)
--
-- Nothing here measures, formats or writes files itself.
local core = require "wlrun.core"
local process = require "wlrun.process"
local settings = require "wlrun.settings"
local printable = require "wlrun.text.printable"
local stdio = require "wlrun.text.stdio"
local units = require "wlrun.text.units"
local output_lock = require "wlrun.text.output_lock"
local bench = require "wlrun.measure.bench"
local clocks = require "wlrun.measure.clocks"
local loop = require "wlrun.measure.loop"
local report = require "wlrun.report"
local compiled = require "wlrun.report.compiled"
local sink_of = require "wlrun.report.sink"
local results = require "wlrun.results"
local journal = require "wlrun.results.journal"
local provenance = require "wlrun.results.provenance"
local git = require "wlrun.results.git"
local plan_of = require "wlrun.run.plan"
local sweep = require "wlrun.run.sweep"
local shard = require "wlrun.run.shard"
local configuration = require "wlrun.run.configuration"
local isolate = require "wlrun.run.isolate"
local executor = require "wlrun.run.executor"
local error_value = require "wlrun.run.error_value"
local nvtx = core.nvtx -- nvtx: automatic ranges (docs/nvtx.md)

local runner = {}

local deep_copy = results.copy

-- the settings that only wl.bench reads (a loop times its iterations its own way): its
-- options but the counts a loop has too, in a fixed order
local function bench_only()
  local list = {}
  for opt, s in pairs(bench.settings_of) do
    if opt ~= "iters" and opt ~= "warmup" then list[#list + 1] = s end
  end
  table.sort(list, function(a, b) return a[1] .. "." .. a[2] < b[1] .. "." .. b[2] end)
  return list
end

local function option_name(section, name)
  if section == "adaptive" and name == "enabled" then return "--adaptive" end
  return "--" .. name:gsub("_", "-")
end

-- The settings in force for the scenario's measurements, and where each came from:
-- built-in < wlrun.ini < the scenario (its timing table, a loop's iters and warmup) < the
-- command line. Bench-only options given on the command line to a loop are refused.
function runner.in_force(sc)
  local in_force, sources = deep_copy(settings.view), {}
  in_force.history = nil -- where runs are kept (wlrun history), not how this one measured
  for section, names in pairs(core.settings_origin) do
    for name, o in pairs(names) do
      if o.source ~= "default" and in_force[section] then
        sources[section .. "." .. name] = o.source end
    end
  end
  local function set(section, name, value, source)
    in_force[section][name] = value
    sources[section .. "." .. name] = source ~= "default" and source or nil
  end
  if sc.loop or sc.command then
    local why = sc.loop
      and "a loop (wl.loop) times each iteration between two synchronisations (docs/loops.md)"
      or "a traced program (wl.command) is timed by its own NVTX step ranges (docs/trace.md)"
    local refused = bench_only()
    -- the program decides how many steps
    if sc.command then refused[#refused + 1] = { "run", "iters" } end
    for _, s in ipairs(refused) do
      if settings.origin(s[1], s[2]).source == "cli" then
        core.error("usage", ("%s does not apply to %s: %s"):format(option_name(s[1], s[2]), sc.name,
          why), 0)
      end
    end
    if sc.loop then
      for _, f in ipairs { "iters", "warmup" } do set("run", f, loop.count(sc.loop, f)) end
    else
      set("run", "warmup", loop.count({ warmup = sc.command.warmup }, "warmup"))
    end
  else
    local map = bench.settings_of
    for opt, v in pairs(sc.timing or {}) do
      local s = map[opt]
      if s then set(s[1], s[2], settings.value(s[1], s[2], v)) end
    end
  end
  return in_force, sources
end

local function dry_run_text(p, sc)
  local out = {
    ("%s: %d configuration%s (%d in the space, %d pruned by where, %d by --filter)"):format(
    printable.whole(sc.name),
    #p.list, #p.list == 1 and "" or "s", p.total, p.pruned, p.filtered) }
  for _, c in ipairs(p.list) do out[#out + 1] = ("%4d  %s"):format(c.index,
    sweep.describe(c.params, p.axes)) end
  return table.concat(out, "\n") .. "\n"
end

-- no device: a clear error (exit 4) before anything runs
local function require_device(script)
  local ok, d = pcall(core.device)
  if not ok then
    local why = type(d) == "table" and d.message or tostring(d)
    core.error(type(d) == "table" and d.kind or "no_device",
      ("%s needs a CUDA device: %s"):format(script,
      why:gsub("^.-no CUDA device: ", "")), 0)
  end
  return d
end

-- the -o files, and the format of standard output: -o - puts the report there in --format's
-- format (json when --format is not given) and nothing else, in place of the table
local function outputs_of(cli, out)
  stdio.refuse_twice(function(kind, msg) core.error(kind, msg, 0) end, nil, cli.outputs)
  local list, stdout_format, to_stdout = {}, out.format, nil
  for _, path in ipairs(cli.outputs) do
    local format = report.format_for_path(path)
    if path == "-" then
      to_stdout = true
      stdout_format = core.settings_origin.output.format.source == "cli" and out.format or "json"
    elseif not format then
      core.error("usage",
        ("cannot tell the output format of '%s' from its extension (.json .csv .md .txt)"):format(
        path), 0)
    end
    if format then list[#list + 1] = { path = path, format = format } end
  end
  return list, stdout_format, to_stdout
end

-- a resumed entry, renumbered to this run's space
local function resumed_entry(old, cfg)
  local e = deep_copy(old)
  e.index, e.resumed = cfg.index, true
  return e
end

-- The device of a process from its launcher's local rank (docs/cluster.md), or nil: none given,
-- a device set (--device, wlrun.ini), --devices (each worker has its own GPU), --compile-only,
-- or no device. A child of --isolate, --config-timeout or a run whose context a fault broke
-- (--worker-config) has the same environment and arguments, so it takes the same device as the
-- process that started it.
function runner.rank_device(p, cli, compile_only, device_source, count)
  if not (p.shard and p.shard.local_rank) or compile_only or cli.devices
    or cli.worker_queue then return nil end
  if device_source ~= "default" or count < 1 then return nil end
  return shard.local_device(p.shard.local_rank, count)
end

-- the process-wide part of a run: this process's device from its launcher's local rank
local function pick_device(p, cli, compile_only)
  if not (p.shard and p.shard.local_rank) then return end
  local dev = runner.rank_device(p, cli, compile_only, settings.origin("run", "device").source,
    core.device_count())
  if dev then core.select_device(dev) end
end

-- exec:run, where a stop (a signal, Ctrl-C) raised in this process between two configurations,
-- or while it waits for an isolated one, ends the sweep as one raised inside a configuration does:
-- an interruption returned, so that the outputs and the message follow
local function until_stopped(exec, list, emit, started)
  local ok, stop = pcall(exec.run, exec, list, emit, started)
  if ok then return stop end
  if error_value.field(stop, "kind") ~= "interrupted" then error(stop, 0) end
  return { kind = "interrupted", message = error_value.field(stop, "message") or "interrupted" }
end

-- the run's own wall account (doc.wall): from the process's start to the run (the script
-- loaded), then each phase outside the configurations; mark(phase) ends one
local function wall_account()
  local t, wall = core.clock(), {}
  wall.start = t - core.started
  local function mark(phase)
    local now = core.clock()
    wall[phase], t = (wall[phase] or 0) + (now - t), now
  end
  return wall, mark
end

-- --dry-run: the plan, in the format asked for
local function dry_run(r)
  local p, sc = r.p, r.sc
  for _, n in ipairs(p.notes) do r.sink:message(n) end
  if r.format == "table" or r.format == "plain" then return r.sink:report(dry_run_text(p, sc)) end
  local planned = { schema = results.SCHEMA, version = results.VERSION, complete = false,
    scenario = { name = sc.name, axes = p.axes }, configurations = {} }
  for i, c in ipairs(p.list) do planned.configurations[i] = { index = c.index, params = c.params,
    status = "planned" } end
  return r.sink:report(report.render(planned, r.format))
end

-- bad input before any device: what this run would leave out of the file it overwrites
local function refuse_resume_losses(r)
  local cli, p = r.cli, r.p
  if not (cli.resume and p.resume_outside > 0) then return end
  for _, o in ipairs(r.outputs) do
    for _, path in ipairs { o.path, journal.path_for(o.path) } do
      if output_lock.same_file(path, cli.resume) then
        core.error("usage",
          ("--resume %s: it holds %d finished configuration%s outside this run's selection (-p, "
          .. "--filter, --shard), and this run writes '%s': they would be lost; resume with the "
          .. "same selection, or write to another -o"):format(
          cli.resume, p.resume_outside, p.resume_outside == 1 and "" or "s", o.path), 0)
      end
    end
  end
end

-- With --devices the parent does no GPU work (its workers start without waiting for a CUDA
-- context and a timing floor of its own), and the document takes the device record and timing
-- floor that the first listed GPU's worker measured (executor.devices). The workers (a command
-- scenario's too) start at once, and make their contexts while this process checks the devices
-- named (the driver's load, about 100 ms), before any output is opened (no device: nothing is
-- written, the workers ended); they are waited for last, after the outputs and the report.
-- Returns the executor of the workers (not yet started), or nil.
local function workers_of(r)
  local cli = r.cli
  r.spreads = cli.devices and not r.worker and not r.compile_only and not r.sc.command
  -- the workers measure on other GPUs
  if r.spreads and settings.value("run", "lock_clocks") ~= "off" then
    r.sink:warning(
      "--lock-clocks is not applied with --devices: lock each GPU's clock with nvidia-smi "
      .. "--lock-gpu-clocks")
  end
  if not (cli.devices and not r.worker and not r.compile_only) then return nil end
  return executor.choose({ compile_only = false }, r.in_force, cli)
end

-- The driver loaded (cuInit): from here a library loads on a thread while the context is made
-- (a library's load holds the loader's lock, which the driver's own load needs). NVML, with the
-- device's handle: the first clock probe finds it ready; NVRTC: the first wl.kernel (15-35 ms on
-- the main thread else). No device: its error now, before any thread starts (a scenario's
-- prepare included).
local function start_libraries(r)
  if core.device_count() == 0 then require_device(r.script) end
  core.nvml_start()
  core.nvrtc_start()
  r.mark("device")
end

-- What the configurations will need, started ahead (wl.cublas.prepare: its libraries load while
-- the context is made), where this process runs them: not in a child that runs one, nor where
-- children or another program run them (--devices, isolation, a config timeout, a command); a
-- --devices worker runs its own
local function prepare_ahead(r)
  local cli, in_force, sc = r.cli, r.in_force, r.sc
  local in_children = not cli.worker_queue
    and (cli.devices ~= nil or in_force.run.isolate or in_force.run.config_timeout > 0)
  if not (sc.prepare and in_force.run.prepare and not cli.worker_config and not in_children
    and not sc.command) then return end
  local params = {}
  -- the hook cannot change the plan
  for i, cfg in ipairs(r.p.todo) do params[i] = deep_copy(cfg.params) end
  sc.prepare(params)
  r.mark("prepare")
end

-- the device, its clocks locked as asked, and the timing floor
local function open_device(r)
  local device = require_device(r.script)
  if not r.worker then -- the parent holds the lock: a child's exit would reset it
    device.clocks = clocks.apply(settings.value("run", "lock_clocks"),
      function(m) r.sink:warning(m) end)
  end
  r.mark("device")
  local floor = bench.floor()
  r.mark("floor")
  return device, floor
end

-- the results document of this run, and the entries --resume carries over into it
local function new_document(r, git_head)
  local p = r.p
  local doc = results.new_document { scenario = r.sc, script = r.script, axes = p.axes,
    device = r.device,
    floor = r.floor, settings = r.in_force, sources = r.sources, compile_only = r.compile_only,
      git = git_head,
    total = p.shard and #p.space or nil,
    shard = p.shard and { k = p.shard.k, n = p.shard.n, source = p.shard.source } or nil,
    resumed_from = p.resumed_from and p.resumed_from.provenance }
  local resumed_commit = p.resumed_from and provenance.resume_warning(p.resumed_from,
    doc.provenance)
  if resumed_commit then r.sink:warning(resumed_commit) end
  local carried = {}
  for _, cfg in ipairs(p.list) do
    if p.resumed[cfg.index] then carried[#carried + 1] = resumed_entry(p.resumed[cfg.index],
      cfg) end
  end
  return doc, carried
end

-- The configurations, each entry into the journal as it comes, the progress line and the
-- failures said as they come. Returns the stop (nil: all ran) and the tally {n, finished,
-- failed, first_failure, interrupted_at, journal_time}.
local function run_configurations(r, exec, writer)
  local p, sink = r.p, r.sink
  local tally = { n = #r.p.todo, finished = 0, failed = 0, journal_time = 0, said = {} }
  local t0 = core.clock()
  local function eta()
    if tally.finished == 0 then return "" end
    return "  ETA " .. units.time((core.clock() - t0) / tally.finished * (tally.n - tally.finished),
      "%.0f %s")
  end
  local function started(cfg)
    sink:progress(("[%d/%d] %s%s"):format(tally.finished + 1, tally.n,
      sweep.describe(cfg.params, p.axes), eta()))
  end
  local stop = until_stopped(exec, p.todo, function(entry)
    local t_add = core.clock()
    writer:add(entry)
    tally.journal_time = tally.journal_time + (core.clock() - t_add)
    tally.finished = tally.finished + 1
    if entry.kind == "interrupted" then tally.interrupted_at = tally.interrupted_at
      or tally.finished end
    if entry.status == "failed" and entry.kind ~= "interrupted" then
      tally.failed = tally.failed + 1
      tally.first_failure = tally.first_failure or entry
      local params = sweep.describe(entry.params, p.axes)
      -- an error said before (no --arch under --compile-only, for every configuration) is not
      -- said again: the configuration that said it is named
      local said = tally.said[entry.error]
      tally.said[entry.error] = said or entry.index
      sink:failure(("configuration %d%s failed%s: %s"):format(entry.index,
        params ~= "" and (" (" .. params .. ")") or "",
        entry.device_index and (" on device " .. entry.device_index) or "",
        said and ("the same error as configuration %d"):format(said) or entry.error))
    end
    if exec.name == "devices" then
      sink:progress(("[%d/%d on %d devices]%s"):format(tally.finished, tally.n, #exec.devices,
        eta()))
    end
  end, started)
  sink:clear()
  return stop, tally
end

-- How the run ended, once every output is written: an interruption, os.exit in a configuration
-- or failed configurations are errors with their exit codes; else nothing
local function raise_ending(r, doc, stop, tally)
  local outputs = r.outputs
  local where = #outputs > 0 and ("in " .. outputs[1].path) or "above (no -o file was given)"
  if stop and stop.kind == "interrupted" then
    local at = tally.interrupted_at or tally.finished + 1
    core.error("interrupted",
      ("interrupted (%s) during configuration %d of %d; %d finished configurations are %s"):format(
      core.stop_signal() or "Ctrl-C", at, tally.n,
        #doc.configurations - (tally.interrupted_at and 1 or 0), where), 0)
  end
  -- os.exit in a configuration: the run stops, never as a success
  if stop and stop.kind == "exit" then
    error({ kind = "script", bare = true, exit_code = stop.code,
      message = ("%s; %d finished configurations are %s"):format(
      stop.message, #doc.configurations - 1, where) }, 0)
  end
  if tally.failed > 0 then
    local first = tally.first_failure
    core.error(first.kind == "interrupted" and "script" or first.kind,
      ("%d of %d configurations failed (the first: %s)"):format(tally.failed, tally.finished,
        first.error:match("[^\n]*")), 0)
  end
end

-- The sweep of a run that makes a document: the outputs opened (written however this ends), the
-- configurations run, the document finished and reported, and how it ended said
local function sweep_into_outputs(r, exec, git_head)
  if not exec then
    exec = executor.choose(r.ctx, r.in_force, r.cli)
    -- what it needs (a temporary directory), before any output is opened
    if exec.check then exec:check() end
  end
  local doc, carried = new_document(r, git_head)
  local writer = journal.open(doc, r.outputs, r.cli.resume, carried)
  journal.in_run = nil -- an os.exit from here on finds the outputs open (journal.hook_exit)
  local _ <close> = writer:guard() -- the outputs are written however this ends
  -- with --devices, the device record of a worker (else of --resume's file) before the outputs,
  -- however this ends (closed before the guard above)
  local _ <close> = setmetatable({}, { __close = function()
    if r.spreads then exec:describe(doc, r.p.resumed_from) end
  end })
  r.mark("document")
  local stop, tally = run_configurations(r, exec, writer)
  r.mark("configurations")
  local wall = r.wall
  wall.journal = tally.journal_time
  if r.spreads then
    wall.workers_ready = exec.ready
    exec:describe(doc, r.p.resumed_from)
  end
  wall.total = core.clock() - core.started
  doc.wall = wall
  writer:finish(stop == nil)
  -- the report, also of a run that stopped early: what was measured is shown, not only kept
  if r.compile_only and (r.format == "table" or r.format == "plain") then
    r.sink:report(compiled.text(doc))
  else
    r.sink:report(report.render(doc, r.format))
  end
  raise_ending(r, doc, stop, tally)
end

-- A scenario's run, in its phases: the plan and the settings (bad input before any device), the
-- outputs and the sink, the workers of --devices, the device and what the configurations need
-- ahead, then the sweep into the outputs (or one configuration, in a child)
function runner.run(sc, script)
  local cli = core.cli
  local wall, mark = wall_account()
  journal.in_run = ("scenario '%s'"):format(printable.text(tostring(sc.name), 60))
  local _ <close> = setmetatable({}, { __close = function() journal.in_run = nil end })
  local r = { sc = sc, script = script, cli = cli, wall = wall, mark = mark }
  r.p = plan_of.build(sc, script, cli) -- bad input (-p, --filter, --resume) before the device
  core.time_limit(0) -- the top level's --config-timeout covered the plan too (where, --filter)
  r.in_force, r.sources = runner.in_force(sc)
  r.worker = cli.worker_config or cli.worker_queue
  clocks.parse(settings.value("run", "lock_clocks")) -- a bad value before anything runs
  local out = settings.view.output
  local report_only
  r.outputs, r.format, report_only = outputs_of(cli, out)
  local sink <close> = r.worker and sink_of.silent() or sink_of.new {
    format = r.format, quiet = out.quiet, progress = out.progress and not out.quiet
      and process.isatty(2),
    report_only = report_only }
  r.sink = sink
  core.on_warning(function(msg) sink:warning(msg) end) -- the C parts' warnings, through the sink
  local _ <close> = setmetatable({}, { __close = function() core.on_warning(nil) end })
  r.compile_only = core.compile_only()
  pick_device(r.p, cli, r.compile_only)
  if cli.dry_run then return dry_run(r) end
  refuse_resume_losses(r)
  local _scenario_range <close> = nvtx.auto_scope("scenario", "scenario " .. sc.name) -- nvtx
  local exec <close> = workers_of(r) -- closed however this ends: no worker or queue left
  if exec then
    exec:start(r.p.todo)
    exec:check()
  end
  -- the provenance's `git status` runs while the context is made (13-15 ms, more in a large
  -- repository); a child that runs one configuration makes no document and asks nothing
  local script_dir = provenance.dir_of(script)
  local git_head <close> = not r.worker and script_dir and git.head_started(script_dir) or nil
  mark("plan")
  -- a traced program has the device to itself
  local on_device = not r.compile_only and not sc.command and not r.spreads
  if on_device then start_libraries(r) end
  prepare_ahead(r)
  if on_device then r.device, r.floor = open_device(r) end
  r.ctx = { scenario = sc, axes = r.p.axes, device = r.device, floor = r.floor,
    compile_only = r.compile_only, sink = sink }
  local run = function(cfg) return configuration.run(sc, cfg, r.ctx) end
  if cli.worker_config then return isolate.worker(r.p, cli.worker_config, cli.worker_output,
    run) end
  if cli.worker_queue then return isolate.queue_worker(r.p, cli.worker_queue, run, r.ctx) end
  for _, n in ipairs(r.p.notes) do
    if n:match("^warning: ") then sink:warning(n:sub(10)) else sink:message(n) end
  end
  sweep_into_outputs(r, exec, git_head)
end

return runner
