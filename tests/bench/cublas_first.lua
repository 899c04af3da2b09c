-- Benchmark (not a test): cuBLAS's first GEMM of each kind (docs/cublas.md, "The first call of
-- each kind"), in fresh wlrun processes, with and without wl.cublas.prepare, interleaved, ROUNDS
-- of each (3):
--   first:   the host time of the first GEMM of f32, tf32 and bf16 at 1024^3 (its bind, call
--            and synchronisation), as a script pays it;
--   eager:   the same with CUDA_MODULE_LOADING=EAGER (every kernel of the libraries loaded when
--            they are: whether the first calls' cost is loading kernels);
--   prepared: the same after wl.cublas.prepare for the three kinds and a pause for its thread,
--            with the thread's own time;
--   during:  flushed cold samples of a 20 us spin kernel timed while the preparation's thread
--            runs, against the same in a process without it: the GPU time's and the enqueue
--            time's medians, and the enqueue's 90th percentile (what the thread's host work
--            could disturb); and the timing floor (engine.timing_floor, uncached) taken as the
-- thread
--            starts, and again once it is done.
-- Prints the medians over the rounds.
--   WLRUN_BIN=build-static/wlrun build-static/wlrun tests/bench/cublas_first.lua [-- ROUNDS]

local bin = os.getenv("WLRUN_BIN") or "build-static/wlrun"
local ROUNDS = tonumber(arg[1]) or 3
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local fresh = dofile(here .. "fresh_processes.lua")
local spin = fresh.kernel(here, "spin.cu")

local CHILD = [=[
local wl = require "wlrun"
local core = require "wlrun.core"
local how, spin = arg[1], arg[2]
local kinds = { { dtype = "f32", compute = "fp32" }, { dtype = "f32", compute = "tf32" }, { dtype = "bf16", compute = "fp32" } }
wl.device()
if how == "prepared" or how == "during-prepared" then assert(wl.cublas.prepare(kinds)) end
if how == "first" or how == "eager" or how == "prepared" then
  if how == "prepared" then wl.sleep(1) end -- the thread done: what is left of each first call
  for _, k in ipairs(kinds) do
    local a = wl.tensor { 1024, 1024, dtype = k.dtype, init = wl.normal() }
    local b = wl.tensor { 1024, 1024, dtype = k.dtype, init = wl.normal() }
    local c = wl.tensor { 1024, 1024, dtype = k.dtype }
    wl.sync()
    local t0 = core.clock()
    wl.cublas.gemm { a = a, b = b, c = c, m = 1024, n = 1024, k = 1024, compute = k.compute }()
    wl.sync()
    print(("%s %s %.6f"):format(k.dtype, k.compute, core.clock() - t0))
  end
  local p = wl.cublas.prepared()
  print(("thread %.6f"):format(p.seconds))
else
  -- the timing floor (an empty kernel between its own pair, the queue drained) taken at once,
  -- while the thread starts its work, and again once it is done
  local f = require("wlrun.engine").timing_floor(200)
  print(("floor_empty %.9f"):format(f.empty_kernel))
  print(("floor_pair %.9f"):format(f.event_pair))
  local g = wl.kernel { wl.source(spin), name = "spin" }:bind { grid = 1, block = 1, args = { 20000 } }
  local r = wl.bench(g, { mode = "cold", flush_l2 = true, warmup = 2, iters = 6000 })
  local e = {}
  for i, v in ipairs(r.enqueue) do e[i] = v end
  table.sort(e)
  print(("gpu %.9f"):format(r.stats.median))
  print(("enqueue %.9f"):format(r.enqueue_stats.median))
  print(("enqueue_p90 %.9f"):format(e[math.ceil(0.9 * #e)]))
  print(("running %s"):format(tostring(wl.cublas.prepared().running)))
  while wl.cublas.prepared().working do wl.sleep(0.01) end
  f = require("wlrun.engine").timing_floor(200)
  print(("floor_empty_after %.9f"):format(f.empty_kernel))
end
]=]

local got = fresh.run { bin = bin, child = CHILD,
  hows = { "first", "eager", "prepared", "during", "during-prepared" },
  rounds = ROUNDS, args = function(how) return { how, spin } end,
  env = function(how) return how == "eager" and "CUDA_MODULE_LOADING=EAGER " or "" end }
local median = fresh.median

print(
  ("cuBLAS's first GEMM of each kind at 1024^3 in a fresh process, host ms (median of %d "
  .. "processes):"):format(ROUNDS))
print(("%-12s %12s %14s %12s"):format("kind", "first call", "after prepare", "eager"))
for _, kind in ipairs { "f32 fp32", "f32 tf32", "bf16 fp32" } do
  print(("%-12s %12.2f %14.2f %12.2f"):format(kind, 1e3 * median(got.first[kind]),
    1e3 * median(got.prepared[kind]),
    1e3 * median(got.eager[kind])))
end
print(("the preparation's thread: %.1f ms"):format(1e3 * median(got.prepared.thread)))
print(
  ("cold flushed samples of a 20 us spin kernel while the thread runs (median of %d "
  .. "processes, us):"):format(ROUNDS))
print(("%-14s %10s %12s %10s"):format("", "without", "thread runs", "change"))
for _, name in ipairs { "gpu", "enqueue", "enqueue_p90", "floor_empty", "floor_pair",
  "floor_empty_after" } do
  local a, b = median(got.during[name]), median(got["during-prepared"][name])
  print(("%-14s %10.3f %12.3f %+10.3f"):format(name, 1e6 * a, 1e6 * b, 1e6 * (b - a)))
end
print(("(the thread still ran when the samples ended: %s)"):format(
  got["during-prepared"].words.running or "?"))
print(
  "(floor_*: the timing floor's empty kernel and event pair, taken at once after "
  .. "wl.cublas.prepare, and")
print(" floor_empty_after once its thread is done)")
