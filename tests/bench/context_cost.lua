-- Benchmark (not a test): what the CUDA context's creation (wl.device()) costs in a fresh wlrun
-- process, alone and with each of wlrun's threads started before it as a run starts them
-- (lua/wlrun/run/runner.lua): NVML's loader, NVRTC's loader, wl.cublas.prepare's thread, and all
-- three; and the run's whole start (the driver, the threads, the context, the timing floor).
-- ROUNDS fresh processes of each (5), interleaved; prints the medians in ms.
--   WLRUN_BIN=build-static/wlrun build-static/wlrun tests/bench/context_cost.lua [-- ROUNDS]
local bin = os.getenv("WLRUN_BIN") or "build-static/wlrun"
local ROUNDS = tonumber(arg[1]) or 5

local CHILD = [=[
local wl = require "wlrun"
local core = require "wlrun.core"
local how = arg[1]
local t0 = core.clock()
assert(core.device_count() > 0, "no device")
local t_driver = core.clock()
if how == "nvml" or how == "all" then core.nvml_start() end
if how == "nvrtc" or how == "all" then core.nvrtc_start() end
if how == "prepare" or how == "all" then
  assert(wl.cublas.prepare { { dtype = "f32", compute = "fp32" }, { dtype = "bf16", compute = "fp32" } })
end
local t1 = core.clock()
wl.device()
local t2 = core.clock()
wl.timing_floor()
local t3 = core.clock()
print(("driver %.6f"):format(t_driver - t0))
print(("context %.6f"):format(t2 - t1))
print(("floor %.6f"):format(t3 - t2))
print(("start %.6f"):format(t3 - t0))
]=]

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local fresh = dofile(here .. "fresh_processes.lua")
local HOWS = { "alone", "nvml", "nvrtc", "prepare", "all" }
local got = fresh.run { bin = bin, child = CHILD, hows = HOWS, rounds = ROUNDS }
local median = fresh.median

print(
  ("the CUDA context with wlrun's threads started before it, ms (median of %d fresh "
  .. "processes):"):format(ROUNDS))
print(("%-10s %10s %10s %10s %10s"):format("started", "driver", "context", "floor", "start"))
for _, how in ipairs(HOWS) do
  local g = got[how]
  print(("%-10s %10.1f %10.1f %10.1f %10.1f"):format(how, 1e3 * median(g.driver),
    1e3 * median(g.context),
    1e3 * median(g.floor), 1e3 * median(g.start)))
end
print(
  "(driver: cuInit; context: wl.device(), which waits for nothing of the threads; floor: "
  .. "wl.timing_floor(),")
print(" its 200 empty kernels and event pairs; start: all of it)")
