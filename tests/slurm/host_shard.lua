-- wlrun tests/slurm/host_shard.lua SCENARIO.lua OUT.json
-- One shard of a GPU-free scenario, measured on the host: the shard comes from the launcher's
-- environment exactly as the runner takes it (wlrun.run.shard.select: Slurm job array, srun, MPI),
-- each configuration's `run` is timed with the monotonic clock (20 samples of about
-- 0.2 ms each), and a results
-- document with `shard` and `scenario.total_configurations` is written for `wlrun merge`.
-- It stands in for `wlrun SCENARIO -o OUT.json`, which needs a CUDA device (tests/slurm/run.sh).
local wl = require "wlrun"
local core = require "wlrun.core"
local process = require "wlrun.process"
local sweep = require "wlrun.run.sweep"
local shard = require "wlrun.run.shard"
local report = require "wlrun.report"

local script, out = ...
assert(script and out, "usage: wlrun tests/slurm/host_shard.lua SCENARIO.lua OUT.json")
local sc = dofile(script)
local f = assert(io.open(script, "rb"))
local source = f:read("a")
f:close()

local space = sweep.expand(sc)
local list, info = shard.select(space.list, { getenv = os.getenv })
if not info then error("host_shard.lua: no shard in the environment (not run by Slurm or MPI?)",
  0) end
io.stderr:write("wlrun: " .. shard.message(info) .. "\n")

local doc = {
  schema = "wlrun-results", version = 1,
  wlrun = { version = wl.version, lua = _VERSION },
  command_line = { "wlrun", "tests/slurm/host_shard.lua", script, out },
  started = process.utc_now(), complete = false,
  scenario = { name = sc.name, description = sc.description, file = script,
    hash = process.hash(source),
               axes = space.axes, total_configurations = #space.list },
  settings = { run = { mode = "host", iters = 20, warmup = 2 } },
  device = { name = "host CPU", index = 0 },
  shard = { k = info.k, n = info.n, source = info.source },
  configurations = {},
}
for _, cfg in ipairs(list) do
  local t0 = core.clock()
  -- calls per sample: enough for about 0.2 ms
  local a = core.clock()
  sc.run(cfg.params)
  local per = math.max(1, math.ceil(2e-4 / math.max(core.clock() - a, 1e-7)))
  for _ = 1, 2 * per do sc.run(cfg.params) end
  local samples = {}
  for i = 1, 20 do
    a = core.clock()
    for _ = 1, per do sc.run(cfg.params) end
    samples[i] = (core.clock() - a) / per
  end
  doc.configurations[#doc.configurations + 1] = {
    index = cfg.index, params = cfg.params, status = "ok", mode = "host", per = per,
      warmup = 2 * per,
    samples = samples, stats = wl.stats.summary(samples), warnings = {}, time = core.clock() - t0,
  }
end
doc.finished, doc.complete = process.utc_now(), true
report.write(doc, out)
