-- Benchmark (not a test): what blocked cold samples lose while wl.cublas.prepare's thread works
-- (docs/benchmarks.md, "cuBLAS's first calls asked ahead"). In fresh processes (the heuristics
-- are asked once a process), chunks of 10 blocked, flushed cold samples of a 5 us kernel run back
-- to back for 0.6 s while the thread prepares f32, bf16 and tf32; each chunk that takes more than
-- 3 ms is a stall, printed with when it came after the measuring began, beside the blocks whose
-- blocking kernel gave up and the thread's own time. "late": the thread starts after the CUDA
-- context, as a script's wl.cublas.prepare does; "early": before it, as a run's prepare hook.
-- A blocking kernel that gives up marks a call on the thread that waited for the device.
--   WLRUN_BIN=build-static/wlrun build-static/wlrun tests/bench/stall_probe.lua [RUNS]
local wl = require "wlrun"
local core = require "wlrun.core"
local engine = require "wlrun.engine"

local KINDS = { { dtype = "f32", compute = "fp32" }, { dtype = "bf16", compute = "fp32" },
  { dtype = "f32", compute = "tf32" } }

local function child(early)
  local t0 = core.clock()
  if early then wl.cublas.prepare(KINDS) end
  wl.device()
  local k = wl.kernel { wl.source "kernels/spin.cu", name = "spin" }:bind { grid = 1, block = 1,
    args = { 5000 } }
  engine.time_cold(k, 10, true, true) -- the blocking kernel's flag, the events, the flush buffer
  if not early then wl.cublas.prepare(KINDS) end
  local started = core.clock()
  local stalls, chunks, gave_up = {}, 0, 0
  while core.clock() - started < 0.6 do
    local a = core.clock()
    local r = engine.time_cold(k, 10, true, true)
    local d = core.clock() - a
    chunks, gave_up = chunks + 1, gave_up + r.blocked.gave_up
    if d > 0.003 then stalls[#stalls + 1] = ("%.0f ms at %.0f ms"):format(d * 1e3,
      (a - started) * 1e3) end
  end
  local p = wl.cublas.prepared()
  print(
    ("%-5s measuring from %3.0f ms after the script's start; the thread ran %3.0f ms; %4d "
    .. "chunks, %d blocks gave up; stalls (from the measuring's start): %s"):format(
    early and "early" or "late", (started - t0) * 1e3, p.seconds * 1e3, chunks, gave_up,
    #stalls > 0 and table.concat(stalls, ", ") or "none"))
end

if arg[1] == "child" then return child(arg[2] == "early") end
local bin = assert(os.getenv("WLRUN_BIN"), "set WLRUN_BIN to the wlrun to run")
local runs = tonumber(arg[1]) or 3
local me = debug.getinfo(1, "S").source:match("^@(.*)$")
for _, how in ipairs { "late", "early" } do
  for _ = 1, runs do
    local ok = os.execute(("'%s' '%s' -- child %s"):format(bin:gsub("'", "'\\''"),
      me:gsub("'", "'\\''"), how))
    assert(ok, "the child failed")
  end
end
