-- Benchmark (not a test): a sweep of 400 tiny configurations (a kernel of one block, the
-- default timing), each run a whole wlrun process, without outputs and with every output format
-- (-o r.json -o r.csv -o r.md -o r.txt); best of two each, alternating, after a first run that
-- fills the kernel cache (issue 21: 400 such configurations took 95 s with -o x.json, 2.72 s
-- without; the target is at most 3 s with every output). Then the run's own account of the
-- last run with outputs (the document's wall, docs/results.md) and its configurations' phases.
--   WLRUN_BIN=build-static/wlrun wlrun tests/bench/tiny_sweep.lua [CONFIGURATIONS]
local core = require "wlrun.core"
local json = require "wlrun.json"

local bin = os.getenv("WLRUN_BIN") or "build-static/wlrun"
local n = math.tointeger(tonumber(arg[1] or "400"))
  or error("CONFIGURATIONS: a whole number expected")
local dir = require("wlrun.process").temp_dir("wlrun-tiny-")

local function q(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local scenario = dir .. "/tiny.lua"
local f = assert(io.open(scenario, "w"))
f:write(([[
local wl = require "wlrun"
local k = wl.kernel { 'extern "C" __global__ void add(float* x, int n) { if (threadIdx.x < n) x[threadIdx.x] += 1.0f; }',
  name = "add" }
return wl.scenario {
  name = "tiny",
  params = { n = wl.range(1, %d) },
  setup = function(p)
    local x = wl.tensor { 32 }
    return { x = x, launch = k:bind { grid = 1, block = 32, args = { x, p.n %% 32 + 1 } } }
  end,
  run = "launch",
  work = function(p) return { flops = p.n %% 32 + 1 } end,
}
]]):format(n))
f:close()

local function run(outputs)
  local t0 = core.clock()
  assert(os.execute(("%s %s --quiet --no-progress %s >/dev/null 2>&1"):format(q(bin), q(scenario),
    outputs)),
    "the scenario failed: " .. outputs)
  return core.clock() - t0
end

local every = ("-o %s -o %s -o %s -o %s"):format(q(dir .. "/r.json"), q(dir .. "/r.csv"),
  q(dir .. "/r.md"), q(dir .. "/r.txt"))
run("") -- the kernel cache, warm
local bare, with, last = math.huge, math.huge, nil
for _ = 1, 2 do
  bare = math.min(bare, run(""))
  last = run(every)
  with = math.min(with, last)
end
f = assert(io.open(dir .. "/r.json"))
local doc = json.decode(f:read("a"))
f:close()
local phases, order, ok = {}, { "setup", "check", "warmup", "clocks", "measure", "teardown" }, 0
local in_configs = 0
for _, e in ipairs(doc.configurations) do
  in_configs = in_configs + (e.time or 0)
  if e.status == "ok" then ok = ok + 1 end
  for k, v in pairs(e.wall or {}) do phases[k] = (phases[k] or 0) + v end
end
print(
  ("%d tiny configurations (%d measured): %.2f s without outputs, %.2f s with -o json, csv, md "
  .. "and txt (+%.2f s); target <= 3 s with them (400): %s"):format(
  n, ok, bare, with, with - bare, (n ~= 400 or ok ~= n) and "-" or with <= 3 and "met" or "MISSED"))
local w = doc.wall or {}
print(
  ("the last run with outputs, %.2f s: start %.3f, plan %.3f, device %.3f, floor %.3f, document "
  .. "%.3f, configurations %.3f (journal and outputs %.3f), end %.3f s"):format(
  last, w.start or 0, w.plan or 0, w.device or 0, w.floor or 0, w.document or 0,
    w.configurations or 0, w.journal or 0,
  last - (w.total or last)))
local parts = {}
for _, k in ipairs(order) do parts[#parts + 1] = ("%s %.2f"):format(k,
  1e3 * (phases[k] or 0) / math.max(#doc.configurations, 1)) end
print(("per configuration (ms): %.2f in all; %s"):format(
  1e3 * in_configs / math.max(#doc.configurations, 1),
  table.concat(parts, ", ")))
os.execute("rm -rf " .. q(dir))
