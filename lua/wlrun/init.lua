-- wlrun: the Lua API that scripts `require "wlrun"` (docs/lua-api.md).
local core = require "wlrun.core"

local wl = {}

wl.version = core.version

-- host clocks
wl.clock = core.clock       -- monotonic seconds (float)
wl.clock_ns = core.clock_ns -- monotonic nanoseconds (integer)
wl.sleep = core.sleep

-- statistics on sample arrays
wl.stats = core.stats

-- devices
wl.device_count = core.device_count
wl.select_device = core.select_device
wl.device = core.device

-- tensors (docs/lua-api.md, "Tensors")
wl.tensor = core.tensor
wl.host_tensor = core.host_tensor
wl.memory = core.memory
wl.reset_memory_peak = core.reset_memory_peak

-- initialisers for `init =` and t:init(): generated on the device, seeded by --seed
function wl.zeros() return { kind = "fill", a = 0, b = 0 } end
function wl.fill(value) return { kind = "fill", a = assert(tonumber(value), "wl.fill(value)"), b = 0 } end
function wl.arange(start, step) return { kind = "arange", a = start or 0, b = step or 1 } end
function wl.uniform(lo, hi, opts)
  return { kind = "uniform", a = lo or 0, b = hi or 1, seed = opts and opts.seed }
end
function wl.normal(mean, std, opts)
  return { kind = "normal", a = mean or 0, b = std or 1, seed = opts and opts.seed }
end

-- kernels, launches, streams, events, graphs
wl.source = core.source
wl.kernel = core.kernel
wl.compile_stats = core.compile_stats
wl.nvrtc_version = core.nvrtc_version
wl.compiled_kernels = core.compiled_kernels
wl.stream = core.stream
wl.event = core.event
wl.sync = core.sync
wl.elapsed = core.elapsed
wl.graph = core.graph

-- measuring (docs/measuring.md)
function wl.bench(work, opts) return require("wlrun.bench").run(work, opts) end
wl.gpu_clock = core.gpu_clock
wl.timing_floor = function() return require("wlrun.bench").floor() end

-- ceil(a / b) for grid sizes
function wl.cdiv(a, b) return (a + b - 1) // b end

-- errors with a kind (an exit code): wl.error("usage", "message" [, level])
wl.error = core.error

-- effective settings (built-in < wlrun.ini < command line) and the parsed command line
wl.settings = core.settings
wl.cli = core.cli

-- The value of setting section.name for a scenario that asks for scenario_value:
-- built-in < wlrun.ini < scenario < command line. Returns the value and where it came from.
function wl.setting(section, name, scenario_value)
  local origins = core.settings_origin[section]
  local origin = origins and origins[name]
  if not origin then
    error(("unknown setting %s.%s"):format(tostring(section), tostring(name)), 2)
  end
  if origin.source == "cli" or scenario_value == nil then
    return core.settings[section][name], origin.source
  end
  return scenario_value, "scenario"
end

function wl.setting_origin(section, name)
  local origins = core.settings_origin[section]
  return origins and origins[name]
end

local scenario_mt = { __name = "wlrun.scenario" }

-- wl.scenario{...}: declares a scenario; a script returns it and wlrun runs it.
function wl.scenario(spec)
  if type(spec) ~= "table" then
    wl.error("script", "wl.scenario expects a table, got " .. type(spec), 2)
  end
  if type(spec.name) ~= "string" or spec.name == "" then
    wl.error("script", "wl.scenario: 'name' must be a non-empty string", 2)
  end
  local info = debug.getinfo(2, "Sl") -- absent when the script tail-calls wl.scenario
  if info and info.what ~= "C" then spec.defined_at = info.short_src .. ":" .. info.currentline end
  return setmetatable(spec, scenario_mt)
end

function wl.is_scenario(v)
  return getmetatable(v) == scenario_mt
end

-- called by the host after a script run with --compile-only
function wl.report_compiled()
  local list = core.compiled_kernels()
  local cached = 0
  for _, k in ipairs(list) do if k.from_cache then cached = cached + 1 end end
  print(("compile-only: %d kernel%s compiled (%d from the cache)"):format(#list,
    #list == 1 and "" or "s", cached))
  for _, k in ipairs(list) do
    print(("  %-28s %-6s %2d params  %s%s"):format(k.name, k.arch, k.nparams, k.source,
      k.from_cache and "  (cached)" or ""))
  end
end

-- called by the host when a script returns a scenario
function wl.run_scenario(scenario, script)
  return require("wlrun.runner").run(scenario, script)
end

return wl
