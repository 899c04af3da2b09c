-- One configuration of a scenario, in this process (docs/scenarios.md, "Lifecycle"): setup,
-- the check, the measurement (wl.bench, or a loop), the metrics, teardown; its entry of the
-- results document. Failures become the entry's status; only an interruption goes further.
--
--   configuration.run(sc, cfg, ctx) -> entry [, interruption]
--     ctx: {device =, compile_only =, sink =, timing =}
local core = require "wlrun.core"
local fields = require "wlrun.fields"
local bench = require "wlrun.measure.bench"
local loop = require "wlrun.measure.loop"
local results = require "wlrun.results"
-- os.exit in a configuration stops the run (journal.hook_exit)
local journal = require "wlrun.results.journal"
local scenario = require "wlrun.run.scenario"
local sweep = require "wlrun.run.sweep"
local command = require "wlrun.run.command"
local error_value = require "wlrun.run.error_value"
local nvtx = core.nvtx -- nvtx: automatic ranges (docs/nvtx.md)

local configuration = {}

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
        local entry = { name = k.name, source = k.source, arch = k.arch, compiler = k.compiler }
        if k.compiler_version ~= "" then entry.compiler_version = k.compiler_version end
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

-- work that wl.bench takes: a bound launch, a wl.graph, a function, or a list of those
local function is_work(w, list_ok)
  if type(w) == "function" or core.is_launch(w) then return true end
  local mt = type(w) == "userdata" and getmetatable(w)
  if type(mt) == "table" and mt.__name == "wlrun.graph" then return true end
  if list_ok and type(w) == "table" and getmetatable(w) == nil and #w > 0 then
    for _, x in ipairs(w) do
      if not is_work(x, false) then return false end
    end
    return true
  end
  return false
end

local function resolve_work(sc, p, state)
  if type(sc.run) == "string" then
    local w = type(state) == "table" and state[sc.run]
    if not w then
      core.error("script", ("run = '%s', but setup's result has no field '%s'"):format(sc.run,
        sc.run), 0)
    end
    if not is_work(w, true) then
      core.error("script",
        ("run = '%s': setup's result field '%s' is a %s, not work: a bound launch "
        .. "(k:bind{...}), a wl.graph, a function, or a list of them"):format(
        sc.run, sc.run, type(w)), 0)
    end
    return w
  end
  return function() sc.run(p, state) end
end

-- the kinds of error wlrun knows (each an exit code); anything else raised is a script error
-- the parameters of the configuration baseline(p) names: p with the overrides it returns, or nil
local function baseline_of(sc, p)
  local over = sc.baseline(p)
  if over == nil then return nil end
  if type(over) ~= "table" then
    core.error("script", "baseline(p) must return a table of parameters or nil, got a "
      .. type(over), 0)
  end
  local params = results.copy(p)
  for _, k in ipairs(fields.sorted_keys(over)) do
    local v = over[k]
    if p[k] == nil then
      core.error("script",
        ("baseline(p) returned '%s', which is not a parameter of the scenario"):format(tostring(k)),
        0)
    end
    if type(v) ~= type(p[k]) then
      core.error("script", ("baseline(p).%s must be a %s like the parameter, got a %s"):format(k,
        type(p[k]), type(v)), 0)
    end
    params[k] = v
  end
  return params
end

local kinds = core.error_kinds

-- where the scenario's work function is written (file:line), for an error in what it returns
function configuration.work_at(sc)
  local info = debug.getinfo(sc.work, "S")
  return info.short_src .. ":" .. info.linedefined
end

local function call_work_once(work)
  if type(work) == "function" or core.is_launch(work) then work() else work:launch() end
end

local function check(sc, p, state, entry)
  local good, message = sc.check(p, state)
  if type(good) ~= "boolean" then
    core.error("script",
      ("check(p, state) must return true or false (and a message), got %s"):format(
      good == nil and "nothing" or ("a " .. type(good))), 0)
  end
  results.record_check(entry, good, message ~= nil and error_value.text(message) or nil)
end

-- the measured part of a configuration, into entry
local function measure(sc, p, state, entry, ctx)
  if sc.command then -- a program traced (wl.command, docs/trace.md): its report is the entry
    command.run(sc, p, state, entry, ctx)
    return
  end
  if sc.loop then -- a loop workload (docs/loops.md): its own timing instead of wl.bench
    if not ctx.compile_only then loop.run(sc, p, state, entry, ctx) end
    entry.kernels = kernels_of(state)
    if ctx.compile_only then entry.status = "compiled" return end
    -- after the loop: did the training do what it should?
    if sc.check then check(sc, p, state, entry) end
    results.flag_check(entry)
    return
  end
  local work = resolve_work(sc, p, state)
  if ctx.compile_only then
    call_work_once(work) -- checks the bound arguments; nothing runs
    if sc.work then results.check_work(sc.work(p), configuration.work_at(sc)) end
    if sc.baseline then entry.baseline = baseline_of(sc, p) end
    entry.status = "compiled"
    entry.kernels = kernels_of(state, work)
    return
  end
  -- the check: once, outside timing, on the output of one run, the warmup's first launch (it is
  -- not a launch of its own); entry.wall.check is the check's own time, the launch the warmup's
  local checked = sc.check and function(run_once)
    local _ <close> = nvtx.auto_scope("check") -- nvtx
    run_once()
    local t0 = core.clock()
    core.sync() -- the whole device: work may queue on streams of its own
    check(sc, p, state, entry)
    entry.wall.check = core.clock() - t0
  end
  local r = bench.run(work, sc.timing, checked)
  local t_record = core.clock()
  for k, v in pairs(r.wall) do entry.wall[k] = v end
  results.record_bench(entry, r)
  -- since this configuration's setup
  entry.memory.tensor_peak_bytes = core.memory().device_peak_bytes
  results.flag_check(entry)
  entry.kernels = kernels_of(state, work)
  if sc.work then results.record_work(entry, sc.work(p), ctx.device, configuration.work_at(sc)) end
  -- energy and memory beside the work's metrics, so that printers and compare show them
  local m = entry.metrics or {}
  if entry.energy then
    m.mean_power_w, m.joules_per_launch = entry.energy.mean_power_w, entry.energy.joules_per_launch
    if entry.work and entry.work.flops then m.flop_per_joule
      = entry.work.flops / entry.energy.joules_per_launch end
  end
  m.tensor_peak_bytes = entry.memory.tensor_peak_bytes
  entry.metrics = m
  if sc.baseline then entry.baseline = baseline_of(sc, p) end
  entry.wall.record = core.clock() - t_record
end

-- the bytes of wlrun's tensors alive, on the device, pinned and on the host
local function tensor_bytes()
  local m = core.memory()
  return m.device_bytes + m.pinned_bytes + m.host_bytes
end

-- an error that stops the run, not only its configuration: Ctrl-C, os.exit (results.journal)
local function stop_of(e)
  if type(e) ~= "table" then return nil end
  if e.exit ~= nil then return { kind = "exit", message = e.message, code = e.exit } end
  if e.kind == "interrupted" then return e end
end

-- a teardown that raised: the configuration fails with it (what was measured stays); after
-- another failure, the first stays the configuration's and the teardown's is added
local function teardown_failed(entry, e)
  local message = "teardown: " .. error_value.text(type(e) == "table" and e.message or e)
  if entry.status == "failed" then
    entry.error = ("%s\n(and %s)"):format(entry.error, message)
    return
  end
  entry.status, entry.reason, entry.error = "failed", nil, message
  entry.kind = type(e) == "table" and kinds[e.kind] and e.kind or "script"
end

function configuration.run(sc, cfg, ctx)
  local p = cfg.params
  local entry = results.entry(cfg)
  local state
  local t0 = core.clock()
  local described = sweep.describe(p, ctx.axes)
  journal.in_configuration = ("configuration %d%s"):format(cfg.index,
    described ~= "" and (" (" .. described .. ")") or "")
  if not ctx.compile_only then core.reset_memory_peak() end
  entry.wall = {} -- seconds of each phase (issue 21: where a configuration's time goes)
  local held_before = tensor_bytes()
  local _skippable <close> = scenario.skippable()
  local ok, err = xpcall(function()
    do local _ <close> = nvtx.auto_scope("setup") -- nvtx
      state = sc.setup and sc.setup(p) or {}
    end
    entry.wall.setup = core.clock() - t0
    measure(sc, p, state, entry, ctx)
  end, function(e)
    if type(e) == "table" and (getmetatable(e) ~= nil or type(e.message) == "string") then
      return e end
    if type(e) == "table" then -- error{...} of the script's own, without a message
      return { message = debug.traceback("an error value that is a table without a message", 2),
        kind = "script" }
    end
    return { message = debug.traceback(error_value.text(e), 2), kind = "script" }
  end)
  -- its metamethods run here, protected, and never again
  if not ok then err = error_value.of(err) end
  if not ok and type(err) == "table" and err.kind == "cuda" and err.message then -- name the kernels
    local names = {}
    for _, k in ipairs(kernels_of(state)) do names[#names + 1] = k.name end
    if #names > 0 then err.message = ("%s (kernels of this configuration: %s)"):format(err.message,
      table.concat(names, ", ")) end
  end
  local t_teardown = core.clock()
  local torn, terr = true, nil
  -- nvtx
  if sc.teardown and state ~= nil then torn, terr = pcall(nvtx.auto_range, "teardown", nil,
    sc.teardown, p, state) end
  if not torn then terr = error_value.of(terr) end
  journal.in_configuration = nil
  walk_state(state, function(v) if core.is_tensor(v) and not v.freed then v:free() end end, 0)
  state = nil
  -- tensors this configuration left behind, out of the state (a check's temporaries, copies to
  -- the host): a full collection frees their memory now, which Lua's own pace would not, as it
  -- sees a few bytes of userdata. Only then: a full collection walks every entry measured so
  -- far, and one a configuration made a long sweep quadratic (4,000 configurations: 3.7 s).
  -- A device allocation that fails collects and tries again besides (src/bind/cuda_tensor.c).
  if tensor_bytes() > held_before then collectgarbage() end
  entry.wall.teardown = core.clock() - t_teardown
  entry.time = core.clock() - t0
  if next(entry.wall) == nil or entry.status == "compiled" then entry.wall = nil end
  if not ok then
    if scenario.is_skip(err) then
      entry.status, entry.reason = "skipped", err.reason
      for _, k in ipairs { "check", "warnings", "kernels" } do entry[k] = nil end
    else
      entry.status = "failed"
      entry.kind = kinds[err.kind] and err.kind or "script"
      entry.error = err.message
    end
  end
  if not torn then teardown_failed(entry, terr) end
  local stop = not ok and stop_of(err) or not torn and stop_of(terr) or nil
  if stop then return entry, stop end
  return entry
end

return configuration
