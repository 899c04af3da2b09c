-- Benchmark (not a test): a sweep on one GPU against the same sweep spread over several with
-- --devices, each a whole wlrun process with -o JSON, after a first run that fills the kernel
-- cache; twice each, alternating, the better of the two (issue 21: at most 0.55x on two GPUs).
--   WLRUN_BIN=build-static/wlrun wlrun tests/bench/devices_speedup.lua [SCENARIO [DEVICES]]
local core = require "wlrun.core"
local json = require "wlrun.json"

local bin = os.getenv("WLRUN_BIN") or "build-static/wlrun"
local scenario = arg[1] or "scenarios/gemm_sweep.lua"
local devices = arg[2] or "0,1"
local dir = require("wlrun.process").temp_dir("wlrun-devices-")

local function q(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function run(args, out)
  local t0 = core.clock()
  assert(os.execute(("%s %s --quiet %s -o %s >/dev/null 2>&1"):format(q(bin), q(scenario), args, q(out))),
    "the scenario failed: " .. args)
  return core.clock() - t0
end

run("", dir .. "/warm.json")
local one, many, last = math.huge, math.huge, nil
for _ = 1, 2 do
  one = math.min(one, run("", dir .. "/one.json"))
  last = run("--devices " .. devices, dir .. "/many.json")
  many = math.min(many, last)
end
local f = assert(io.open(dir .. "/many.json"))
local doc = json.decode(f:read("a"))
f:close()
local per = {}
for _, c in ipairs(doc.configurations) do
  local d = tostring(c.device_index)
  per[d] = (per[d] or 0) + 1
end
local counts = {}
for d, n in pairs(per) do counts[#counts + 1] = ("device %s ran %d"):format(d, n) end
table.sort(counts)
print(("%s: one GPU %.2f s, --devices %s %.2f s: %.2fx (target <= 0.55x on two GPUs); %s"):format(scenario, one,
  devices, many, many / one, table.concat(counts, ", ")))
-- the parent's own account of the last --devices run (doc.wall): the plan holds the devices
-- counted (the CUDA driver loaded), configurations the workers' whole lives but their exits
local w = doc.wall or {}
print(("  the last --devices run, %.2f s: start %.3f, plan %.3f, document %.3f, configurations %.3f, end %.3f s"):format(
  last, w.start or 0, w.plan or 0, w.document or 0, w.configurations or 0, last - (w.total or last)))
os.execute("rm -rf " .. q(dir))
