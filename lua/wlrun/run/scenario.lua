-- The declaration of a scenario, checked (docs/scenarios.md): wl.scenario{...}, and the two
-- kinds that run something else than wl.bench: wl.loop{...} (docs/loops.md) and wl.command{...}
-- (docs/trace.md, "For scenarios"); wl.skip.
local core = require "wlrun.core"
local fields = require "wlrun.fields"
local bench = require "wlrun.measure.bench"
local loop = require "wlrun.measure.loop"

local scenario = {}

local mt = { __name = "wlrun.run.scenario" }

local scenario_fields = {
  name = "string", description = "string", params = "table", order = "table", where = "function",
  timing = "table", setup = "function", run = "function|string", check = "function",
  work = "function", baseline = "function", teardown = "function", loop = "table",
    command = "table",
  prepare = "function",
}

local function fail(where, msg) core.error("script", where .. ": " .. msg, 0) end

-- The line of a declaration in the script's text, for a tail call that left no frame: of the
-- lines that return a call of a table (`return wl.loop{`, `return L{`), the last one at or above
-- the first line naming the declaration's rarest field (`setp = `); without such a field, the
-- last of them. nil where there is none.
local function line_in_text(lines, spec)
  local returns = {}
  for n, line in ipairs(lines) do
    if line:find("%f[%w_]return%s+[%w_%.:]+%s*[{(]") then returns[#returns + 1] = n end
  end
  if #returns == 0 then return nil end
  local best, first
  for k in pairs(type(spec) == "table" and spec or {}) do
    if type(k) == "string" and k:match("^[%a_][%w_]*$") then
      local count, at = 0, nil
      for n, line in ipairs(lines) do
        if line:find("%f[%w_]" .. k .. "%s*=") then count, at = count + 1, at or n end
      end
      if count > 0 and (not best or count < best) then best, first = count, at end
    end
  end
  local found = returns[#returns]
  if first then
    found = nil
    for _, n in ipairs(returns) do if n <= first then found = n end end
  end
  return found or returns[#returns]
end

-- Where a declaration was written, "script.lua:12": the line of the script's call, the frame at
-- level + 1 (level: the declaring function's). `return wl.loop{...}` is a tail call, which
-- leaves no frame of the script: then the line is read from its text (line_in_text: spec's
-- fields find it among several); failing that, the script's name alone.
function scenario.place(level, spec)
  local tail = debug.getinfo(level + 1, "t") -- + 1: this function's own frame
  local info = not (tail and tail.istailcall) and debug.getinfo(level + 2, "Sl") or nil
  if info and (info.what == "main" or info.what == "Lua") and info.currentline > 0 then
    return info.short_src .. ":" .. info.currentline
  end
  local script = core.cli.script
  local f = script and io.open(script, "rb")
  if not f then return script or "wl" end
  local lines = {}
  for line in f:lines() do lines[#lines + 1] = line end
  f:close()
  local found = line_in_text(lines, spec)
  return found and (script .. ":" .. found) or script
end

-- fn() (a declaration's checks), its errors without a place given the declaration's `at`: those
-- raised at the caller's level, when a tail call left no caller to name
local function placed(at, fn)
  local ok, r = pcall(fn)
  if ok then return r end
  if type(r) == "table" and type(r.message) == "string" and not r.message:find("^[^\n]-:%d+: ") then
    r.message = at .. ": " .. r.message
  end
  error(r, 0)
end

-- the checks of a declaration written at `where` ("script.lua:12"), which they name in their
-- errors;
-- returns it marked as a scenario
local function declare_at(spec, where)
  local at = where or "wl.scenario"
  fields.check(spec, scenario_fields, at .. ": wl.scenario", 0)
  for k, v in pairs(spec) do
    local want = scenario_fields[k]
    if not want:find(type(v), 1, true) then
      fail(at, ("field '%s' must be a %s, got a %s"):format(k, want:gsub("|", " or "), type(v)))
    end
  end
  if type(spec.name) ~= "string" or spec.name == "" then
    fail(at, "'name' (a non-empty string) is required") end
  if spec.run == nil and not spec.loop and not spec.command then
    fail(at,
    "'run' is required: a function(p, state), or the name of a bound launch that setup returns") end
  if type(spec.run) == "string" and not spec.setup then
    fail(at, ("run = '%s' names a field of setup's result, but there is no setup"):format(spec.run))
  end
  if spec.timing then bench.check_options(spec.timing, at .. ": wl.scenario: timing", 0) end
  if spec.order then
    for _, k in ipairs(fields.sorted_keys(spec.order)) do
      if math.type(k) ~= "integer" or k < 1 or k > #spec.order then
        fail(at, ("'order' is a list of parameter names; it has the field '%s'"):format(
          tostring(k)))
      end
    end
    for i, n in ipairs(spec.order) do
      if type(n) ~= "string" then fail(at, ("order[%d] must be a parameter name"):format(i)) end
    end
  end
  spec.defined_at = where
  return setmetatable(spec, mt)
end

-- wl.scenario{...}: checks the declaration and returns it marked as a scenario
function scenario.declare(spec, level)
  level = (level or 1) + 1
  local where = scenario.place(level - 1, spec) -- `return wl.scenario{...}`, a tail call, too
  if type(spec) ~= "table" then core.error("script",
    "wl.scenario expects a table, got " .. type(spec), level) end
  return declare_at(spec, where)
end


local loop_fields = {
  name = true, description = true, params = true, order = true, where = true, setup = true,
  teardown = true, check = true, batch_size = true, warmup = true, iters = true, data = true,
  step = true, print_iters = true, flops_per_sample = true, dtype = true,
}

-- wl.loop{...}'s checks, written at `at`: their errors name no place (level 0), placed names it
local function check_loop(spec, at)
  if type(spec) ~= "table" then core.error("script", "wl.loop expects a table", 0) end
  fields.check(spec, loop_fields, "wl.loop", 0)
  for _, f in ipairs { "data", "step" } do
    if type(spec[f]) ~= "function" then core.error("script",
      ("wl.loop: '%s' must be a function"):format(f), 0) end
  end
  local bs = spec.batch_size
  if not (type(bs) == "function" or (math.type(bs) == "integer" and bs >= 1)) then
    core.error("script", "wl.loop: batch_size must be a whole number >= 1 or a function(p)", 0)
  end
  local fps = spec.flops_per_sample
  if type(fps) ~= "function" then loop.check_flops(fps, nil, "wl.loop", 0) end
  loop.check_flops(nil, spec.dtype, "wl.loop", 0)
  for _, f in ipairs { "warmup", "iters" } do
    local v = spec[f]
    if v ~= nil and not (math.type(v) == "integer" and v >= (f == "iters" and 1 or 0)) then
      core.error("script", ("wl.loop: %s must be a whole number >= %d"):format(f,
        f == "iters" and 1 or 0), 0)
    end
  end
  local sc = {
    name = spec.name, description = spec.description, params = spec.params, order = spec.order,
    where = spec.where, setup = spec.setup, teardown = spec.teardown, check = spec.check,
    loop = {
      batch_size = bs, warmup = spec.warmup, iters = spec.iters, data = spec.data,
      step = spec.step, print_iters = spec.print_iters ~= false, flops_per_sample = fps,
      dtype = spec.dtype or loop.DEFAULT_DTYPE,
    },
  }
  return declare_at(sc, at)
end

-- wl.loop{...}: a scenario whose configurations run a loop instead of wl.bench
function scenario.loop(spec, level)
  local at = scenario.place(level, spec)
  return placed(at, function() return check_loop(spec, at) end)
end

local command_fields = {
  name = true, description = true, params = true, order = true, where = true, setup = true,
    teardown = true,
  command = true, env = true, cwd = true, batch_size = true, step = true, data = true,
    warmup = true,
  sync_steps = true, kernels = true, timeout = true, print_iters = true, auto_ranges = true,
  flops_per_sample = true, dtype = true, steps = true,
}

local function command_fail(msg) core.error("script", "wl.command: " .. msg, 0) end

-- wl.command{...}'s checks, written at `at`: their errors name no place (level 0), placed names it
local function check_command(spec, at)
  if type(spec) ~= "table" then core.error("script", "wl.command expects a table") end
  fields.check(spec, command_fields, "wl.command", 0)
  local c = spec.command
  if type(c) ~= "function" and not (type(c) == "table" and #c > 0) then
    command_fail(
      "'command' must be a function(p, state) returning the program and its arguments, or "
      .. "that list")
  end
  for _, f in ipairs { "env", "cwd" } do
    local v, want = spec[f], f == "env" and "table" or "string"
    if v ~= nil and type(v) ~= want and type(v) ~= "function" then
      command_fail(("'%s' must be a %s or a function(p, state)"):format(f, want))
    end
  end
  for _, f in ipairs { "step", "data" } do
    if spec[f] ~= nil and (type(spec[f]) ~= "string" or spec[f] == "") then
      command_fail(("'%s' must be a range name"):format(f))
    end
  end
  local bs = spec.batch_size
  if bs ~= nil and not (type(bs) == "function" or (math.type(bs) == "integer" and bs >= 1)) then
    command_fail("batch_size must be a whole number >= 1 or a function(p)")
  end
  if spec.warmup ~= nil and not (math.type(spec.warmup) == "integer" and spec.warmup >= 0) then
    command_fail("warmup must be a whole number >= 0")
  end
  if spec.steps ~= nil and not (math.type(spec.steps) == "integer" and spec.steps >= 0) then
    command_fail("steps must be a whole number >= 0 (0: every step traced)")
  end
  local timeout = 0
  if spec.timeout ~= nil then
    local t, err = core.setting_value("run", "config_timeout", spec.timeout)
    if not t or t <= 0 then
      command_fail(("timeout: expected seconds > 0 or a duration like 10m, got '%s'%s"):format(
        tostring(spec.timeout),
        err and (" (" .. err .. ")") or ""))
    end
    timeout = t
  end
  if type(spec.flops_per_sample) ~= "function" then
    loop.check_flops(spec.flops_per_sample, nil, "wl.command", 0) end
  loop.check_flops(nil, spec.dtype, "wl.command", 0)
  for _, f in ipairs { "sync_steps", "kernels", "print_iters", "auto_ranges" } do
    if spec[f] ~= nil and type(spec[f]) ~= "boolean" then
      command_fail(("'%s' must be true or false"):format(f)) end
  end
  local sc = {
    name = spec.name, description = spec.description, params = spec.params, order = spec.order,
    where = spec.where, setup = spec.setup, teardown = spec.teardown,
    command = {
      command = c, env = spec.env, cwd = spec.cwd, batch_size = bs, warmup = spec.warmup,
        timeout = timeout,
      step = spec.step, data = spec.data, sync_steps = spec.sync_steps == true,
        kernels = spec.kernels == true,
      print_iters = spec.print_iters ~= false, auto_ranges = spec.auto_ranges ~= false,
      flops_per_sample = spec.flops_per_sample, dtype = spec.dtype or loop.DEFAULT_DTYPE,
      steps = spec.steps,
    },
  }
  return declare_at(sc, at)
end

-- wl.command{...}: checks the declaration and returns the scenario
function scenario.command(spec, level)
  local at = scenario.place(level, spec)
  return placed(at, function() return check_command(spec, at) end)
end

function scenario.is(v) return getmetatable(v) == mt end

-- wl.skip(reason): from setup, marks the configuration skipped; outside a configuration (a
-- script's top level) there is nothing to skip, and it says so at the script's line
local skip_mt = { __name = "wlrun.skip", __tostring = function(s) return "skipped: "
  .. s.reason end }
local in_configuration = 0
function scenario.skip(reason)
  if in_configuration == 0 then
    core.error("script", "wl.skip skips a configuration, from its setup or run: outside one "
      .. "there is nothing to skip", 2)
  end
  error(setmetatable({ skip = true, reason = tostring(reason or "skipped") }, skip_mt), 0)
end

-- while a configuration runs (a to-be-closed value): wl.skip may skip it
function scenario.skippable()
  in_configuration = in_configuration + 1
  return setmetatable({}, { __close = function() in_configuration = in_configuration - 1 end })
end
function scenario.is_skip(e) return getmetatable(e) == skip_mt end

return scenario
