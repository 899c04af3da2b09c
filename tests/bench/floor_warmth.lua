-- Benchmark (not a test): the timing floor (docs/measuring.md, "The floor") as a run takes it,
-- at once after the CUDA context, against the same taken again right after, and after 20 ms and
-- 120 ms of a kernel that keeps every SM busy: whether a GPU that was idle reads a higher floor
-- (its clocks still low), which moves auto's line between processes. In ROUNDS fresh processes
-- (5); prints the medians, and the SM clock NVML reads before each floor.
--   WLRUN_BIN=build-static/wlrun build-static/wlrun tests/bench/floor_warmth.lua [-- ROUNDS]

local bin = os.getenv("WLRUN_BIN") or "build-static/wlrun"
local ROUNDS = tonumber(arg[1]) or 5
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local fresh = dofile(here .. "fresh_processes.lua")
local spin = fresh.kernel(here, "spin.cu")

local CHILD = [=[
local wl = require "wlrun"
local engine = require "wlrun.engine"
local dev = wl.device()
local function floor(tag)
  local c = wl.gpu_clock()
  local f = engine.timing_floor(200)
  print(("%s_empty %.9f"):format(tag, f.empty_kernel))
  print(("%s_pair %.9f"):format(tag, f.event_pair))
  print(("%s_mhz %d"):format(tag, c.nvml_sm_mhz or c.sm_mhz or 0))
end
floor("at_once")
floor("again")
local k = wl.kernel { wl.source(arg[1]), name = "spin" }:bind { grid = dev.sm_count or 132, block = 32, args = { 20000000 } }
k()
wl.sync()
floor("after_20ms")
for _ = 1, 5 do k() end
wl.sync()
floor("after_120ms")
]=]

local got = fresh.run { bin = bin, child = CHILD, hows = { "run" }, rounds = ROUNDS,
  args = function() return { spin } end }
local median = fresh.median
local r = got.run

print(("the timing floor in a fresh process (median of %d processes):"):format(ROUNDS))
print(("%-14s %14s %14s %10s   %s"):format("taken", "empty kernel", "event pair", "SM MHz",
  "empty kernel, each process (us)"))
for _, tag in ipairs { "at_once", "again", "after_20ms", "after_120ms" } do
  local each = {}
  for i, v in ipairs(r[tag .. "_empty"]) do each[i] = ("%.2f"):format(v * 1e6) end
  print(("%-14s %11.2f us %11.2f us %10d   %s"):format(tag, 1e6 * median(r[tag .. "_empty"]),
    1e6 * median(r[tag .. "_pair"]),
    median(r[tag .. "_mhz"]), table.concat(each, " ")))
end
print(
  "(at_once: as a run takes it, right after its context; again: at once after that one; "
  .. "after_20ms,")
print(
  " after_120ms: after that long of a kernel on every SM; SM MHz: NVML's clock just before each)")
