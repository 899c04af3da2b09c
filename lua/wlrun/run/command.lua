-- wl.command{...} (docs/trace.md, "For scenarios"): a scenario whose configurations each run a
-- program traced, as `wlrun trace` does, with the program's own command-line parameters swept;
-- each configuration's entry is the report of that run (a loop configuration).
local core = require "wlrun.core"
local process = require "wlrun.process"
local settings = require "wlrun.settings"
local units = require "wlrun.text.units"
local loop = require "wlrun.measure.loop"
local trace_report = require "wlrun.trace.report"
local ranks = require "wlrun.trace.ranks"
local traced = require "wlrun.trace.run"
local isolate = require "wlrun.run.isolate"

local command = {}

-- a field that is a value or a function(p, state) of one
local function value_of(v, p, state) if type(v) == "function" then
  return v(p, state) end return v end

-- the program's argv: strings and numbers, NUL-free (core.spawn refuses the rest too)
local function argv_of(C, p, state)
  local list = value_of(C.command, p, state)
  if type(list) ~= "table" or #list == 0 then
    core.error("script", "wl.command: command(p) must return a list: the program and its arguments",
      0)
  end
  local argv = {}
  for i = 1, #list do
    local a = list[i]
    if type(a) ~= "string" and type(a) ~= "number" then
      core.error("script",
        ("wl.command: command(p)[%d] is a %s: the program and its arguments are strings "
        .. "or numbers"):format(i,
        type(a)), 0)
    end
    argv[i] = tostring(a)
  end
  return argv
end

local function env_of(C, p, state)
  local env = value_of(C.env, p, state)
  if env == nil then return {} end
  if type(env) ~= "table" then core.error("script",
    "wl.command: env(p) must return a table of NAME = value", 0) end
  local out = {}
  for k, v in pairs(env) do
    if type(k) ~= "string" or not k:match("^[%a_][%w_]*$")
      or (type(v) ~= "string" and type(v) ~= "number") then
      core.error("script", ("wl.command: env: '%s' = %s is not NAME = string"):format(tostring(k),
        tostring(v)), 0)
    end
    if k:match("^WLRUN_TRACE_") or k == "NVTX_INJECTION64_PATH" or k == "CUDA_INJECTION64_PATH" then
      core.error("script", ("wl.command: env: %s is wlrun's own (the trace library's)"):format(k),
        0)
    end
    out[k] = tostring(v)
  end
  return out
end

local function flops_of(C, p, state)
  local f = value_of(C.flops_per_sample, p, state)
  loop.check_flops(f, nil, "wl.command: flops_per_sample(p)", 1)
  return f
end

-- the settings of the trace, as `wlrun trace`'s options
local function options_of(C, p, state)
  local defaults = trace_report.DEFAULTS
  local warmup, source = settings.value("run", "warmup", C.warmup)
  if source == "default" then warmup = defaults.warmup end
  local bs = value_of(C.batch_size, p, state)
  if bs ~= nil and not (math.type(bs) == "integer" and bs >= 1) then
    core.error("script", "wl.command: batch_size(p) must give a whole number >= 1", 0)
  end
  local timeout = C.timeout
  if timeout == 0 then timeout = settings.view.run.config_timeout or 0 end
  local steps = C.steps or defaults.steps
  if steps > 0 and steps <= warmup then
    core.error("script", ("wl.command: steps %d traces no step past warmup %d"):format(steps,
      warmup), 0)
  end
  return { step = C.step or defaults.step, data = C.data or defaults.data, warmup = warmup,
    steps = steps,
    batch_size = bs,
    kernels = C.kernels, sync_steps = C.sync_steps, timeout = timeout, env = env_of(C, p, state),
    auto_ranges = C.auto_ranges, auto = C.auto_ranges and C.step == nil, dtype = C.dtype,
    flops_per_sample = flops_of(C, p, state) }
end

-- the report's configuration (the first process with steps) into the runner's entry
local function fill(entry, entries)
  local e = entries[1]
  for k, v in pairs(e) do
    if k ~= "index" and k ~= "params" then entry[k] = v end
  end
  if #entries > 1 then
    local pids = {}
    for i = 2, #entries do pids[#pids + 1] = tostring(entries[i].trace
      and entries[i].trace.process.pid or "?") end
    entry.notes = entry.notes or {}
    entry.notes[#entry.notes + 1] = (
      "%d processes had steps: this is the first (pid %d); not reported: pids %s"):format(
      #entries, e.trace.process.pid, table.concat(pids, ", "))
    if entry.trace then entry.trace.ranks = ranks.summary(entries) end
  end
end

-- runs the configuration's program traced; fills entry (the results document's configuration)
function command.run(sc, p, state, entry, ctx)
  local C = sc.command
  local argv = argv_of(C, p, state)
  local o = options_of(C, p, state)
  argv[1] = traced.program(argv[1])
  local lib = traced.library()
  local cwd = value_of(C.cwd, p, state)
  if cwd ~= nil and type(cwd) ~= "string" then core.error("script",
    "wl.command: cwd(p) must return a directory", 0) end
  if ctx.compile_only then -- the program and the library are there; nothing runs
    entry.status = "compiled"
    return
  end
  local dir = isolate.temp_dir("wlrun-trace-", "wl.command")
  -- removed however this ends (an error, a stop by a signal before the program runs), unless
  -- the trace files must be kept
  local keep = false
  local _ <close> = setmetatable({}, { __close = function() if not keep then
    process.remove_tree(dir) end end })
  local sink = ctx.sink
  local run = traced.run(o, argv, lib, dir, { timeout = o.timeout, cwd = cwd,
    die_with_parent = true, forward_signals = true },
    function(text) if sink then sink:warning(text) end end)
  if run.problem and type(run.problem) == "table" and run.problem.kind == "io" then
    keep = true
    if sink then sink:warning(("wl.command: the trace files are kept in %s"):format(run.dir)) end
  end
  if run.entries then
    fill(entry, run.entries)
    if C.print_iters and sink and entry.status == "ok" then
      for j, iter in ipairs(entry.samples) do sink:iteration(
        loop.format_line(j, iter, entry.loop.data[j], entry.loop.batch_size)) end
    end
  end
  local r = run.result
  local name = table.concat(argv, " ")
  if #name > 200 then name = name:sub(1, 197) .. "..." end
  if r.interrupted then -- passed on to the program, which has ended: the run stops here
    core.error("interrupted", ("wl.command: %s, interrupted by %s"):format(name, core.stop_signal()
      or ("signal " .. r.interrupted)), 0)
  end
  if r.how == "timeout" then
    core.error("timeout", ("wl.command: %s was stopped after %s"):format(name, units.time(o.timeout,
      "%.3g %s")), 0)
  end
  if r.how == "signal" then core.error("script",
    ("wl.command: %s was killed by signal %d"):format(name, r.signal), 0) end
  if r.code ~= 0 then core.error("script", ("wl.command: %s exited with code %d"):format(name,
    r.code), 0) end
  if run.problem then error(run.problem, 0) end
  if entry.status == "failed" then core.error(entry.kind or "usage", entry.error, 0) end
end

return command
