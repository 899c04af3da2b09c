-- Benchmark (not a test): a sweep on one GPU against the same sweep spread over several with
-- --devices, each a whole wlrun process with -o JSON, after a first run that fills the kernel
-- cache; twice each, alternating, the better of the two (issue 21: at most 0.55x on two GPUs),
-- and the best ratio that any spread could reach, from the one-GPU run's own account.
-- Each run's wall time less its GPU time measured is printed too: it moves less between runs
-- than the wall time, whose GPU time the adaptive rule changes by up to 10 %. With DEVICES 0 on
-- a one-GPU machine, that difference is what --devices itself costs (its worker, the queue).
-- EXTRA (one argument: "-p K=1024,4096,8192") goes to every run: a bigger sweep.
--   WLRUN_BIN=build-static/wlrun wlrun tests/bench/devices_speedup.lua [SCENARIO [DEVICES [EXTRA]]]
local core = require "wlrun.core"
local json = require "wlrun.json"

local bin = os.getenv("WLRUN_BIN") or "build-static/wlrun"
local scenario = arg[1] or "scenarios/gemm_sweep.lua"
local devices = arg[2] or "0,1"
local extra = arg[3] or ""
local dir = require("wlrun.process").temp_dir("wlrun-devices-")

local function q(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function read_doc(path)
  local f = assert(io.open(path))
  local doc = json.decode(f:read("a"))
  f:close()
  return doc
end

-- the GPU time measured in a results file: its samples (as config_overhead.lua adds them)
local function gpu_time(doc)
  local sum = 0
  for _, c in ipairs(doc.configurations) do
    if c.status == "ok" then for _, x in ipairs(c.samples or {}) do
      sum = sum + x * (c.per or 1) end end
  end
  return sum
end

-- one run: its wall time, and its wall time less its GPU time measured
local function run(args, out)
  local t0 = core.clock()
  assert(os.execute(("%s %s --quiet %s %s -o %s >/dev/null 2>&1"):format(q(bin), q(scenario), args,
    extra, q(out))),
    "the scenario failed: " .. args)
  local wall = core.clock() - t0
  return wall, wall - gpu_time(read_doc(out))
end

run("", dir .. "/warm.json")
local one, many, last, one_last = math.huge, math.huge, nil, nil
local one_rest, many_rest = {}, {}
for r = 1, 2 do
  local w, rest = run("", dir .. "/one.json")
  one, one_rest[r], one_last = math.min(one, w), rest, w
  last, many_rest[r] = run("--devices " .. devices, dir .. "/many.json")
  many = math.min(many, last)
end
-- Amdahl's bound from the last one-GPU run: only its configurations phase (doc.wall) can be
-- spread; the rest (the start, the CUDA context, the outputs, the process's end, the driver's
-- release of the context) is paid once by every worker, so no spread over n GPUs can take less
-- than (rest + configurations / n) / wall of the one-GPU run's wall time
local one_doc = read_doc(dir .. "/one.json")
local spread = (one_doc.wall or {}).configurations or 0
local rest = one_last - spread
local function bound(n) return (rest + spread / n) / one_last end
local doc = read_doc(dir .. "/many.json")
local per = {}
for _, c in ipairs(doc.configurations) do
  local d = tostring(c.device_index)
  per[d] = (per[d] or 0) + 1
end
local counts = {}
for d, n in pairs(per) do counts[#counts + 1] = ("device %s ran %d"):format(d, n) end
table.sort(counts)
print(("%s: one GPU %.2f s, --devices %s %.2f s: %.2fx (target <= 0.55x on two GPUs); %s"):format(
  scenario, one,
  devices, many, many / one, table.concat(counts, ", ")))
print(
  ("  wall time less GPU time measured: one GPU %.3f s, %.3f s; --devices %s %.3f "
  .. "s, %.3f s"):format(
  one_rest[1], one_rest[2], devices, many_rest[1], many_rest[2]))
print(
  ("  the last one-GPU run, %.2f s: configurations %.3f s, the rest %.3f s: at best %.3fx on "
  .. "two GPUs, %.3fx on four"):format(
  one_last, spread, rest, bound(2), bound(4)))
-- the parent's own account of the last --devices run (doc.wall): the plan holds the workers'
-- start and the devices counted (the CUDA driver loaded, while the workers start), configurations
-- up to the last entry, and the end the outputs, the report and the workers' exits; the first
-- worker ready (its context and floor) from the process's start
local w = doc.wall or {}
print(
  ("  the last --devices run, %.2f s: start %.3f, plan %.3f, document %.3f, configurations "
  .. "%.3f, end %.3f s; first worker ready at %.3f s"):format(
  last, w.start or 0, w.plan or 0, w.document or 0, w.configurations or 0, last - (w.total or last),
    w.workers_ready or 0))
os.execute("rm -rf " .. q(dir))
