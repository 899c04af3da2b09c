-- wlrun: the Lua API that scripts `require "wlrun"` (docs/lua-api.md).
local core = require "wlrun.core"
local settings = require "wlrun.settings"
local fields = require "wlrun.fields"
local peaks = require "wlrun.measure.peaks"
local bench = require "wlrun.measure.bench"
local loop = require "wlrun.measure.loop"
local scenario = require "wlrun.run.scenario"
local sweep = require "wlrun.run.sweep"
local compile_ahead = require "wlrun.run.compile_ahead"

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
-- {f32 =, tf32 =, bf16 =, f16 =} dense FLOP/s of a wl.device() table (wlrun/peaks.lua); {} where
-- unknown
wl.peak_flops = function(device)
  if device ~= nil and type(device) ~= "table" then
    core.error("script", "wl.peak_flops: expected a table from wl.device(), got a " .. type(device),
      2)
  end
  return peaks.of(device or core.device())
end

-- tensors (docs/lua-api.md, "Tensors")
wl.tensor = core.tensor
wl.host_tensor = core.host_tensor
wl.memory = core.memory
wl.reset_memory_peak = core.reset_memory_peak

-- initialisers for `init =` and t:init(): generated on the device, seeded by --seed. Each
-- argument is checked here, so that the error names it and the script's line.
local function show(v)
  if v ~= v then return "nan" end
  if type(v) == "number" then return tostring(v) end
  return type(v) == "string" and ("a string ('%s')"):format(v) or "a " .. type(v)
end
local function init_arg(fn, name, v, default, finite)
  if v == nil and default ~= nil then return default end
  if type(v) ~= "number" or (finite and (v ~= v or v == math.huge or v == -math.huge)) then
    core.error("script", ("%s: %s must be a %snumber, got %s"):format(fn, name,
      finite and "finite " or "", show(v)), 3)
  end
  return v
end
local function init_seed(fn, opts)
  if opts == nil then return nil end
  if type(opts) ~= "table" then core.error("script",
    ("%s: opts must be a table {seed = N}, got a %s"):format(fn, type(opts)), 3) end
  fields.check(opts, { seed = true }, fn, 3, "option")
  local seed = opts.seed
  if seed ~= nil and math.type(seed) ~= "integer" then
    core.error("script", ("%s: seed must be a whole number, got %s"):format(fn, show(seed)), 3)
  end
  return seed
end
function wl.zeros() return { kind = "fill", a = 0, b = 0 } end
function wl.fill(value)
  -- NaN and infinities are values to fill with
  local a = init_arg("wl.fill(value)", "value", value, nil, false)
  return { kind = "fill", a = a, b = 0 }
end
function wl.arange(start, step)
  local a = init_arg("wl.arange(start, step)", "start", start, 0, true)
  local b = init_arg("wl.arange(start, step)", "step", step, 1, true)
  return { kind = "arange", a = a, b = b }
end
function wl.uniform(lo, hi, opts)
  local fn = "wl.uniform(lo, hi, opts)"
  -- lo < hi: checked by the tensor
  local a, b = init_arg(fn, "lo", lo, 0, true), init_arg(fn, "hi", hi, 1, true)
  return { kind = "uniform", a = a, b = b, seed = init_seed(fn, opts) }
end
function wl.normal(mean, std, opts)
  local fn = "wl.normal(mean, std, opts)"
  -- std >= 0: by the tensor
  local a, b = init_arg(fn, "mean", mean, 0, true), init_arg(fn, "std", std, 1, true)
  return { kind = "normal", a = a, b = b, seed = init_seed(fn, opts) }
end

-- kernels, launches, streams, events, graphs
wl.source = core.source
wl.kernel = core.kernel
wl.prepare_kernels = compile_ahead.start
wl.compile_stats = core.compile_stats
wl.nvrtc_version = core.nvrtc_version
wl.compilers = core.compilers
wl.compiled_kernels = core.compiled_kernels
wl.stream = core.stream
wl.current_stream = core.current_stream
wl.event = core.event
wl.sync = core.sync
wl.elapsed = core.elapsed
wl.graph = core.graph
-- a user's shared library (docs/libraries.md); direct: paths relative to the caller
wl.library = core.library
wl.ops = core.ops         -- runtime copies and sets as bound work
wl.cublas = core.cublas     -- cuBLAS and cuBLASLt GEMM as bound work (docs/cublas.md)
wl.cublaslt = core.cublaslt

-- NVTX annotation (docs/nvtx.md)
wl.nvtx = core.nvtx

-- measuring (docs/measuring.md)
function wl.bench(work, opts) return bench.run(work, opts) end
wl.gpu_clock = core.gpu_clock
wl.timing_floor = function() return bench.floor() end

-- ceil(a / b) for grid sizes
function wl.cdiv(a, b) return (a + b - 1) // b end

-- errors with a kind (an exit code): wl.error("usage", "message" [, level])
wl.error = core.error

-- effective settings (built-in < wlrun.ini < command line), the parsed command line, and the
-- value in force for a scenario (lua/wlrun/settings.lua: a leaf module, which the library's own
-- modules read without requiring this one)
wl.settings = settings.view
wl.cli = core.cli
wl.setting = settings.value
wl.setting_origin = settings.origin

-- scenarios (docs/scenarios.md)
wl.scenario = function(spec) local s = scenario.declare(spec, 2) return s end -- no tail call
wl.is_scenario = scenario.is
wl.skip = scenario.skip
wl.loop = function(spec) local s = scenario.loop(spec, 2) return s end -- no tail call
wl.phase = loop.phase
wl.command = function(spec) local s = scenario.command(spec, 2) return s end -- no tail call
wl.zip = sweep.zip
wl.pow2 = sweep.pow2
wl.range = sweep.range
wl.compile_only = core.compile_only

return wl
