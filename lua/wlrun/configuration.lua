-- One configuration of a scenario, in this process (docs/scenarios.md, "Lifecycle"): setup,
-- the check, the measurement (wl.bench, or a loop), the metrics, teardown; its entry of the
-- results document. Failures become the entry's status; only an interruption goes further.
--
--   configuration.run(sc, cfg, ctx) -> entry [, interruption]
--     ctx: {device =, compile_only =, sink =, timing =}
local core = require "wlrun.core"
local results = require "wlrun.results"
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

local function check(sc, p, state, entry)
  local good, message = sc.check(p, state)
  results.record_check(entry, good, message)
end

-- the measured part of a configuration, into entry
local function measure(sc, p, state, entry, ctx)
  if sc.loop then -- a loop workload (docs/loops.md): its own timing instead of wl.bench
    if not ctx.compile_only then require("wlrun.loop").run(sc, p, state, entry, ctx) end
    entry.kernels = kernels_of(state)
    if ctx.compile_only then entry.status = "compiled" return end
    if sc.check then check(sc, p, state, entry) end -- after the loop: did the training do what it should?
    results.flag_check(entry)
    return
  end
  local work = resolve_work(sc, p, state)
  if ctx.compile_only then
    call_work_once(work) -- checks the bound arguments; nothing runs
    entry.status = "compiled"
    entry.kernels = kernels_of(state, work)
    return
  end
  if sc.check then -- once, outside timing, on the output of one run
    local _ <close> = nvtx.auto_scope("check") -- nvtx
    call_work_once(work)
    core.sync()
    check(sc, p, state, entry)
  end
  local r = require("wlrun.bench").run(work, sc.timing)
  results.record_bench(entry, r)
  results.flag_check(entry)
  entry.kernels = kernels_of(state, work)
  if sc.work then results.record_work(entry, sc.work(p), ctx.device) end
end

function configuration.run(sc, cfg, ctx)
  local p = cfg.params
  local entry = results.entry(cfg)
  local state
  local t0 = core.clock()
  local ok, err = xpcall(function()
    do local _ <close> = nvtx.auto_scope("setup") -- nvtx
      state = sc.setup and sc.setup(p) or {}
    end
    measure(sc, p, state, entry, ctx)
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
      for _, k in ipairs { "check", "warnings", "kernels" } do entry[k] = nil end
    else
      entry.status = "failed"
      entry.kind = err.kind or "script"
      entry.error = err.message or tostring(err)
      if entry.kind == "interrupted" then return entry, err end
    end
  end
  return entry
end

return configuration
