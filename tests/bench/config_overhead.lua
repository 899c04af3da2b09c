-- Benchmark (not a test): where a sweep's wall time goes besides measuring (issue 21). Runs a
-- scenario (default scenarios/gemm_sweep.lua) as its own wlrun process with -o JSON, twice (the
-- first fills the kernel cache), and from the second run's document adds up, over the
-- configurations, the GPU time measured (every sample x its launches) and each phase's wall
-- time (entry.wall: setup, floor, inputs, check, warmup, clocks, measure, summary, record,
-- teardown; measure split into
-- the timed loops, flushes and synchronisation included, and what runs between chunks: NVML's
-- readings, the stopping rule, recovery pauses), against the process's wall time; then what lies
-- outside the configurations, by the run's own account (doc.wall: the process's start and the
-- script, the plan, the CUDA context, the timing floor, the scenario's prepare, the document's
-- provenance, the journal between configurations) and, from the process's wall time less the
-- account's total, what follows it (the document and outputs written, the report, the process's
-- exit). The L2 flushes within the timed loops are estimated: the samples flushed (cold and
-- cupti samples of a run with flush_l2, the discarded ones too) times one flush's cost on this
-- device, measured here (1,000 cold samples of an empty kernel with the flush, less 1,000
-- without). Last, the same wall time by whose it is: the GPU time measured, the driver's
-- (context, end), one-time costs in the warmups, the warmups' GPU time, the flushes, the
-- queueing in the timed loops, the scenario's setup, check and teardown, and wlrun's own.
--   WLRUN_BIN=build-static/wlrun wlrun tests/bench/config_overhead.lua [SCENARIO [KEEP.json]]
local core = require "wlrun.core"
local json = require "wlrun.json"

local bin = os.getenv("WLRUN_BIN") or "build-static/wlrun"
local scenario = arg[1] or "scenarios/gemm_sweep.lua"
local keep = arg[2] -- where the second run's document is kept, if given
local out = os.tmpname() .. ".json"

local function q(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function run()
  local t0 = core.clock()
  assert(os.execute(("%s %s --quiet -o %s >/dev/null 2>&1"):format(q(bin), q(scenario), q(out))),
    "the scenario failed")
  return core.clock() - t0
end

run() -- the kernel cache, warm
local wall = run()
local f = assert(io.open(out))
local text = f:read("a")
f:close()
os.remove(out)
if keep then -- a path that cannot be written is said, and the account printed all the same
  local k, err = io.open(keep, "w")
  local ok, werr = false, nil
  if k then
    ok, werr = k:write(text)
    local closed, cerr = k:close()
    ok, werr = ok and closed, werr or cerr
  end
  if not ok then io.stderr:write(("config_overhead: the document is not kept: %s\n"):format(err
    or werr or keep)) end
end
local doc = json.decode(text)

local gpu, phases, configs = 0, {}, 0
local order = { "setup", "floor", "inputs", "check", "warmup", "clocks", "measure", "summary",
  "record", "teardown" }
local in_configs, worst = 0, {} -- the configurations' own wall time (entry.time), all of them
for _, e in ipairs(doc.configurations) do
  in_configs = in_configs + (e.time or 0)
  if e.status == "ok" then
    configs = configs + 1
    local g = 0
    for _, s in ipairs(e.samples or {}) do g = g + s * (e.per or 1) end
    gpu = gpu + g
    for k, v in pairs(e.wall or {}) do phases[k] = (phases[k] or 0) + v end
    local described = {}
    for _, a in ipairs(doc.scenario.axes or {}) do
      described[#described + 1] = ("%s=%s"):format(a, tostring(e.params[a])) end
    worst[#worst + 1] = { what = table.concat(described, " "), gpu = g, time = e.time or 0,
      n = #(e.samples or {}),
      wall = e.wall or {} }
  end
end
-- per configuration, its wall time outside its timed loops (entry.time less wall.chunks), and
-- the share of the time between configurations (the journal, the outputs) each one adds
local outside = {}
for _, e in ipairs(doc.configurations) do
  if e.status == "ok" and e.wall and e.wall.chunks then
    outside[#outside + 1] = (e.time or 0) - e.wall.chunks
  end
end
table.sort(outside)
local between_each = #outside > 0 and doc.wall and doc.wall.configurations
  and (doc.wall.configurations - in_configs) / #outside or 0
local in_phases = 0
print(
  ("%s: %d configurations measured, %.2f s of wall time for %.2f s of GPU time measured (%.2fx; "
  .. "target <= 1.3x, issue 39: %s)"):format(
  scenario, configs, wall, gpu, wall / gpu, wall / gpu <= 1.3 and "met" or "not met"))
print(("%-28s %9s %9s %14s"):format("phase", "seconds", "share", "per config (ms)"))
for _, k in ipairs(order) do
  local v = phases[k] or 0
  in_phases = in_phases + v
  print(("%-28s %9.3f %8.1f%% %14.2f"):format(k, v, 100 * v / wall, 1e3 * v / math.max(configs, 1)))
end
if phases.chunks then -- measure's own split: inside the timed loops, and between the chunks
  local between = (phases.measure or 0) - phases.chunks
  print(("%-28s %9.3f %8.1f%% %14.2f"):format("  of which timed loops", phases.chunks,
    100 * phases.chunks / wall,
    1e3 * phases.chunks / math.max(configs, 1)))
  print(("%-28s %9.3f %8.1f%% %14.2f"):format("  of which between chunks", between,
    100 * between / wall,
    1e3 * between / math.max(configs, 1)))
end
local flushed = 0
if doc.settings and doc.settings.run and doc.settings.run.flush_l2 then
  for _, e in ipairs(doc.configurations) do
    if e.status == "ok" and (e.mode == "cold" or e.mode == "cupti") then
      flushed = flushed + #(e.samples or {}) + (e.throttle and e.throttle.discarded_samples or 0)
    end
  end
end
local flush_time = 0
if flushed > 0 then
  local wl, engine = require "wlrun", require "wlrun.engine"
  local empty = wl.kernel { wl.source "kernels/spin.cu", name = "spin" }:bind { grid = 1, block = 1,
    args = { 0 } }
  local function took(flush)
    engine.time_cold(empty, 100, flush, false)
    local t0 = core.clock()
    engine.time_cold(empty, 1000, flush, false)
    return core.clock() - t0
  end
  local each = (took(true) - took(false)) / 1000
  flush_time = flushed * each
  print(("%-28s %9.3f %8.1f%% %14.2f   (%d flushes x %.1f us, estimated)"):format(
    "  of which L2 flushes", flush_time,
    100 * flush_time / wall, 1e3 * flush_time / math.max(configs, 1), flushed, each * 1e6))
end
if #outside > 0 then
  local median = outside[(#outside + 1) // 2]
  print(("per configuration outside its timed loops (ms): median %.3f, p90 %.3f; with the time "
    .. "between configurations (journal, outputs: %.3f each) %.3f (target <= 2 ms)"):format(
    1e3 * median, 1e3 * outside[math.ceil(0.9 * #outside)], 1e3 * between_each,
    1e3 * (median + between_each)))
end
local rest, between = in_configs - in_phases, wall - in_configs
print(("%-28s %9.3f %8.1f%% %14.2f"):format("configurations, no phase", rest, 100 * rest / wall,
  1e3 * rest / math.max(configs, 1)))
print(("%-28s %9.3f %8.1f%% %14.2f"):format("outside the configurations", between,
  100 * between / wall,
  1e3 * between / math.max(configs, 1)))
local w = doc.wall or {}
local function part(name, v)
  print(("%-28s %9.3f %8.1f%%"):format("  " .. name, v, 100 * v / wall))
end
if w.total then
  part("start: exec, libraries, script", w.start or 0)
  part("plan", w.plan or 0)
  part("device: the CUDA context", w.device or 0)
  part("floor", w.floor or 0)
  part("prepare: the scenario's", w.prepare or 0)
  part("document: provenance", w.document or 0)
  part("journal and outputs", w.journal or 0)
  part("between, the rest", (w.configurations or 0) - in_configs - (w.journal or 0))
  part("end: document, report, exit", wall - w.total)
end
print(
  ("(GPU time measured is part of 'measure': %.3f s, %.1f%% of it; 'no phase': the "
  .. "entry begun,"):format(gpu,
  100 * gpu / math.max(phases.measure or 0, 1e-9)))
print(" the memory's peak, the results' checks; 'outside': by the run's own account, doc.wall)")

-- The same wall time by whose it is. The warmups' GPU time is estimated as their launches times
-- the configuration's median; the rest of a warmup is one-time costs (a library's first call,
-- a module loaded) and its host time. The timed loops less the GPU time measured and the
-- flushes is the queueing behind the blocking kernel and the chunks' synchronisations.
if w.total then
  local warm_gpu, one_time = 0, 0
  for _, e in ipairs(doc.configurations) do
    if e.status == "ok" and e.wall and e.stats and e.stats.median then
      local g = (e.warmup or 0) * e.stats.median * (e.per or 1)
      warm_gpu = warm_gpu + math.min(g, e.wall.warmup or 0)
      one_time = one_time + math.max(0, (e.wall.warmup or 0) - g)
    end
  end
  local driver = (w.device or 0) + (wall - w.total)
  local queueing = (phases.chunks or 0) - gpu - flush_time
  local scenario_own = (phases.setup or 0) + (phases.check or 0) + (phases.teardown or 0)
  local own = wall - gpu - driver - one_time - warm_gpu - flush_time - queueing - scenario_own
  print("\nby whose it is:")
  local function cause(name, v) print(("  %-66s %7.3f s %6.1f%%"):format(name, v,
    100 * v / wall)) end
  cause("the GPU time measured", gpu)
  cause("the CUDA context, and the end (the document, the report, the exit)", driver)
  cause("one-time costs in the warmups (libraries' first calls, modules)", one_time)
  cause("the warmup launches' GPU time (estimated)", warm_gpu)
  cause("the L2 flushes (estimated)", flush_time)
  cause("queueing and synchronisation in the timed loops", queueing)
  cause("the scenario's setup, check and teardown", scenario_own)
  cause("wlrun's own (the rest)", own)
end

table.sort(worst, function(a, b) return a.time - a.gpu > b.time - b.gpu end)
print("\nthe 8 configurations with the most wall time besides their GPU time measured (ms):")
print(("%-40s %8s %8s %6s %8s %8s %8s %8s"):format("configuration", "wall", "gpu", "n", "check",
  "warmup", "clocks", "measure"))
for i = 1, math.min(8, #worst) do
  local w = worst[i]
  print(("%-40s %8.1f %8.1f %6d %8.1f %8.1f %8.1f %8.1f"):format(w.what, w.time * 1e3, w.gpu * 1e3,
    w.n,
    (w.wall.check or 0) * 1e3, (w.wall.warmup or 0) * 1e3, (w.wall.clocks or 0) * 1e3,
      (w.wall.measure or 0) * 1e3))
end
