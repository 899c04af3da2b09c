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
wl.current_stream = core.current_stream
wl.event = core.event
wl.sync = core.sync
wl.elapsed = core.elapsed
wl.graph = core.graph

-- NVTX annotation (docs/nvtx.md)
wl.nvtx = core.nvtx

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
-- scenario_value is checked by the setting's own rule (as on the command line and in wlrun.ini)
-- and returned as wl.settings holds it (a percentage as a fraction, a duration in seconds).
function wl.setting(section, name, scenario_value)
  local origins = core.settings_origin[section]
  local origin = origins and origins[name]
  if not origin then
    error(("unknown setting %s.%s"):format(tostring(section), tostring(name)), 2)
  end
  if scenario_value ~= nil then
    local v, err = core.setting_value(section, name, scenario_value)
    if err then core.error("script", ("wl.setting: %s.%s: %s"):format(section, name, err), 2) end
    scenario_value = v
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

-- scenarios (docs/scenarios.md)
local scenario, sweep = require "wlrun.scenario", require "wlrun.sweep"
wl.scenario = function(spec) local s = scenario.declare(spec, 2) return s end -- no tail call
wl.is_scenario = scenario.is
wl.skip = scenario.skip
wl.loop = function(spec) local s = require("wlrun.loop").declare(spec, 2) return s end -- no tail call
wl.phase = require("wlrun.loop").phase
wl.zip = sweep.zip
wl.pow2 = sweep.pow2
wl.range = sweep.range
wl.compile_only = core.compile_only

return wl
