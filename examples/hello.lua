-- The smallest wlrun script: host clocks, statistics, and the device count.
local wl = require "wlrun"

local t0 = wl.clock_ns()
wl.sleep(0.01)
local s = wl.stats.summary { 1.02, 0.98, 1.01, 1.00, 0.99 }
print(("slept %.2f ms; median %.3f, p90 %.3f, cv %.2f%%"):format(
  (wl.clock_ns() - t0) / 1e6, s.median, s.p90, 100 * s.cv))
print("CUDA devices:", wl.device_count())
