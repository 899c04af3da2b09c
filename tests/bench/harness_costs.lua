-- Benchmark (not a test): what the harness's own steps cost on this device, each the mean of
-- repeated calls (issue 21: the per-phase account of tests/bench/config_overhead.lua, broken down
-- to the calls behind it): NVML's readings after a chunk, the clock probes, a synchronisation,
-- cold chunks with and without the L2 flush and the blocking kernel, the stopping rule's
-- median noise, a tensor's copy to the host, element access from Lua, allocation, a full
-- garbage collection, a cached kernel lookup and the timing floor.
-- With the path of build-static/nvml_raw, that program's costs of each query alone, first; with
-- that of build-static/cublas_raw besides, a whole cuBLAS run in raw C beside wlrun's.
--   wlrun tests/bench/harness_costs.lua [-- build-static/nvml_raw [build-static/cublas_raw]]
local wl = require "wlrun"
local core = require "wlrun.core"
local engine = require "wlrun.engine"
local bench = require "wlrun.measure.bench"

local function cost(name, n, f)
  f()
  local t0 = core.clock()
  for _ = 1, n do f() end
  print(("%-44s %10.3f ms"):format(name, (core.clock() - t0) / n * 1e3))
end

if arg[1] then
  print("each device query alone (" .. arg[1] .. "):")
  assert(os.execute(("'%s'"):format(arg[1]:gsub("'", "'\\''"))), arg[1] .. " failed")
end
cost("core.gpu_sample (after each chunk)", 200, core.gpu_sample)
cost("core.gpu_sample(true), the energy counter too", 50, function() core.gpu_sample(true) end)
cost("core.gpu_clock (before and after)", 20, core.gpu_clock)
do -- the probe's 50 us window (tick to tick of %globaltimer) against NVML's reading, back to back
  local probe, nvml = {}, {}
  for i = 1, 21 do
    local c = core.gpu_clock()
    probe[i], nvml[i] = c.sm_mhz, c.nvml_sm_mhz or 0 / 0
  end
  table.sort(probe)
  table.sort(nvml)
  print(("%-44s %10.1f MHz (min %.1f, max %.1f; NVML %.0f-%.0f)"):format(
    "the clock probe's reading, median of 21",
    probe[11], probe[1], probe[21], nvml[1], nvml[21]))
end
cost("core.sync", 200, core.sync)
cost("wl.device() (properties read once, then kept)", 200, wl.device)
local k = wl.kernel { wl.source "kernels/spin.cu", name = "spin" }
local spin5 = k:bind { grid = 1, block = 1, args = { 5000 } }
local empty = k:bind { grid = 1, block = 1, args = { 0 } }
cost("1000 cold samples, 5 us kernel", 3, function() engine.time_cold(spin5, 1000, false,
  false) end)
cost("1000 cold samples, 5 us kernel, flushed", 3,
  function() engine.time_cold(spin5, 1000, true, false) end)
cost("1000 cold samples, 5 us, flushed, blocked", 3,
  function() engine.time_cold(spin5, 1000, true, true) end)
cost("1000 cold samples, empty kernel, flushed, blocked", 3,
  function() engine.time_cold(empty, 1000, true, true) end)
for _, n in ipairs { 1000, 10000, 100000 } do
  local s = {}
  for i = 1, n do s[i] = 5e-6 * (1 + 0.01 * ((i * 7919) % 101) / 101) end
  cost(("median noise of %d samples"):format(n), 5, function() bench.median_noise(s) end)
end
local A = wl.tensor { 4096, 4096, dtype = "f32" }
cost("to_host of 64 MB", 5, function() A:to_host() end)
cost("to_host of a 32 KB view", 50, function() A:view(4096 * 17, 8192):to_host() end)
local h = A:view(0, 65536):to_host()
cost("65536 elements read from Lua, h[i]", 5, function() local x = 0 for i = 1,
  65536 do x = x + h[i] end end)
cost("65536 elements read from Lua, totable", 5, function() local t, x = h:totable(), 0 for i = 1,
  65536 do x = x + t[i] end end)
cost("a 64 MB tensor allocated and freed", 10,
  function() wl.tensor({ 4096, 4096, dtype = "f32" }):free() end)
cost("the same, initialised with wl.normal()", 10,
  function() wl.tensor({ 4096, 4096, dtype = "f32", init = wl.normal() }):free() end)
cost("collectgarbage()", 10, collectgarbage)
cost("wl.kernel of a compiled kernel (cached)", 20,
  function() wl.kernel { wl.source "kernels/spin.cu", name = "spin" } end)
local t0 = core.clock()
engine.timing_floor(200)
print(("%-44s %10.3f ms"):format("the timing floor, 200 samples", (core.clock() - t0) * 1e3))

-- whole wlrun processes (WLRUN_BIN), the best of 3: what a run costs before its first
-- configuration (process start, the CUDA context, NVML, the timing floor) and around it
local bin = os.getenv("WLRUN_BIN")
if bin then
  local dir = require("wlrun.process").temp_dir("wlrun-costs-")
  -- a script's last statement writes the monotonic clock (the same in every process) to its
  -- .end file; the time from it to the process's end, seen here, is the exit: the Lua state
  -- closed (tensors freed, modules unloaded, cuBLAS's handle destroyed), the CUDA context torn
  -- down, NVML shut down. For a run of a scenario, what follows the run's own account
  -- (doc.wall.total): the document and outputs written, the report, the exit.
  local function command(name, line, ends) -- a shell command line
    local best, exit = math.huge, nil
    for _ = 1, 3 do
      local t0 = core.clock()
      assert(os.execute(line .. " >/dev/null 2>&1"), name .. " failed")
      local t1 = core.clock()
      local e = ends and ends(t0, t1)
      if t1 - t0 < best then best, exit = t1 - t0, e end
    end
    print(("%-44s %10.3f ms%s"):format(name, best * 1e3,
      exit and ("   (%s %.1f ms)"):format(exit[1], exit[2] * 1e3) or ""))
  end
  local function process(name, args, ends) command(name, ("'%s' %s"):format(bin, args), ends) end
  local function script(name, text) -- with its last statement's clock in NAME.end
    local path = dir .. "/" .. name
    local f = assert(io.open(path, "w"))
    f:write(text,
      ("\nlocal e = assert(io.open(%q, 'w')) e:write(string.format('%%.9f', "
      .. "require('wlrun.core').clock())) e:close()\n"):format(path .. ".end"))
    f:close()
    return path, function(_, t1)
      local e = assert(io.open(path .. ".end"))
      local at = assert(tonumber(e:read("a")))
      e:close()
      return { "exit", t1 - at }
    end
  end
  local function run_of(path) -- a scenario's run writing PATH: the end after its account
    return function(t0, t1)
      local f = assert(io.open(path))
      local doc = require("wlrun.json").decode(f:read("a"))
      f:close()
      return doc.wall and doc.wall.total and { "end", (t1 - t0) - doc.wall.total } or nil
    end
  end
  print("whole processes (best of 3; a script's exit, a run's end after its own account):")
  process("wlrun --version", "--version")
  process("a script: nothing", script("none.lua", "local wl = require 'wlrun'\n"))
  process("a script: wl.device_count() (the driver)",
    script("count.lua", "require('wlrun').device_count()\n"))
  process("a script: wl.device() (the CUDA context)",
    script("device.lua", "require('wlrun').device()\n"))
  process("  and NVML (wl.gpu_clock())", script("nvml.lua",
    "local wl = require('wlrun') wl.device() wl.gpu_clock()\n"))
  process("  and the timing floor", script("floor.lua",
    "local wl = require('wlrun') wl.device() wl.gpu_clock() wl.timing_floor()\n"))
  local gemm
    =
    "local wl = require('wlrun') local A, B, C = wl.tensor { 1024, 1024 }, wl.tensor { 1024, "
    .. "1024 }, wl.tensor { 1024, 1024 }\n"
    .. "local g = wl.cublas.gemm { a = A, b = B, c = C, m = 1024, n = 1024, k = 1024 }\n"
  process("a script: a cuBLAS GEMM bound (dlopen, handle)", script("cublas.lua", gemm))
  process("  and called once (cuBLAS's first call)",
    script("cublas1.lua", gemm .. "g() wl.sync()\n"))
  process("  and a kernel of ours launched", script("kernel.lua",
    gemm
    .. "g() wl.kernel { [[extern \"C\" __global__ void noop() {}]], name = 'noop' }:bind { grid "
    .. "= 1, block = 1, args = {} }() wl.sync()\n"))
  if arg[2] then -- the same work in a raw C program that links cuBLAS: what cuBLAS itself costs
    command("  a raw C program: cuBLAS f32 1024^3, 10 samples",
      ("'%s' f32 1024 cold 10 1"):format(arg[2]))
    process("  wlrun: the same, wl.bench cold, 10 samples",
      script("cublas10.lua", gemm .. "wl.bench(g, { mode = 'cold', warmup = 7, iters = 10 })\n"))
  end
  -- gemm_sweep's tiled configuration at 1024, alone or with one of another variant
  local function sweep(name, also, file)
    local variants = also and ("(variant == 'tiled' or variant == '%s')"):format(also)
      or "variant == 'tiled'"
    process(name,
      ("scenarios/gemm_sweep.lua --quiet --filter \"%s and M == 1024 and K == 1024\" "
      .. "-o %s/%s"):format(
      variants, dir, file), run_of(dir .. "/" .. file))
  end
  sweep("gemm_sweep, one configuration, -o JSON", nil, "one.json")
  sweep("  the same, with a cuBLAS f32 configuration", "cublas_f32", "two.json")
  sweep("  the same, with an mma_bf16 configuration (cupti mode)", "mma_bf16", "cupti.json")
  os.execute(("rm -rf '%s'"):format(dir))
end
