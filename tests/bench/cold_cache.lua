-- Benchmark (not a test): what an empty kernel cache costs a sweep (issue 39, goal 1). Runs a
-- scenario (default scenarios/gemm_sweep.lua) as its own wlrun process, by turns: with a warm
-- cache (filled by a first run), with an empty one (the kernels compiled ahead by the scenario's
-- prepare, wl.prepare_kernels: docs/kernels.md, "Compiled ahead"), and with an empty one and
-- --no-prepare (each kernel compiled where its wl.kernel is called, one after another; nothing
-- started ahead, cuBLAS's first calls neither). Prints each way's median wall time, the GPU time
-- its documents measured, and the cold runs' extra wall time over the warm ones (target <= 0.5 s),
-- also less the difference in GPU time measured (the adaptive stopping rule's share).
--   WLRUN_BIN=build-static/wlrun wlrun tests/bench/cold_cache.lua [SCENARIO [ROUNDS]]
local core = require "wlrun.core"
local json = require "wlrun.json"

local bin = os.getenv("WLRUN_BIN") or "build-static/wlrun"
local scenario = arg[1] or "scenarios/gemm_sweep.lua"
local rounds = tonumber(arg[2] or 3)

local function q(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function tmpdir()
  local p = os.tmpname()
  os.remove(p)
  assert(os.execute("mkdir -p " .. q(p)))
  return p
end

-- one run: its wall time and the GPU time its document measured
local function run(cache, extra)
  local out = os.tmpname() .. ".json"
  local t0 = core.clock()
  local ok = os.execute(("%s %s --quiet --cache-dir %s %s -o %s >/dev/null 2>&1"):format(q(bin),
    q(scenario), q(cache), extra or "", q(out)))
  local wall = core.clock() - t0
  assert(ok, "the scenario failed: " .. scenario)
  local f = assert(io.open(out))
  local doc = json.decode(f:read("a"))
  f:close()
  os.remove(out)
  local gpu = 0
  for _, e in ipairs(doc.configurations) do
    for _, s in ipairs(e.samples or {}) do gpu = gpu + s * (e.per or 1) end
  end
  return wall, gpu
end

local warm_cache = tmpdir()
run(warm_cache) -- fills it
local ways = {
  { name = "warm cache", cache = function() return warm_cache end },
  { name = "empty cache, compiled ahead", cache = tmpdir },
  { name = "empty cache, --no-prepare", cache = tmpdir, extra = "--no-prepare" },
}
for _, w in ipairs(ways) do w.wall, w.gpu = {}, {} end
for round = 1, rounds do
  for i = 1, #ways do
    local w = ways[(i + round - 2) % #ways + 1]
    local cache = w.cache()
    local wall, gpu = run(cache, w.extra)
    w.wall[#w.wall + 1], w.gpu[#w.gpu + 1] = wall, gpu
    if cache ~= warm_cache then os.execute("rm -rf " .. q(cache)) end
  end
end
os.execute("rm -rf " .. q(warm_cache))

local function median(t)
  local s = { table.unpack(t) }
  table.sort(s)
  local n = #s
  return n % 2 == 1 and s[(n + 1) // 2] or (s[n // 2] + s[n // 2 + 1]) / 2
end

print(("%s, %d rounds (medians)"):format(scenario, rounds))
print(("%-30s %9s %9s %12s %12s"):format("way", "wall s", "GPU s", "extra s", "extra-GPU s"))
local warm = ways[1]
for _, w in ipairs(ways) do
  local extra = median(w.wall) - median(warm.wall)
  local extra_gpu = extra - (median(w.gpu) - median(warm.gpu))
  print(("%-30s %9.3f %9.3f %12.3f %12.3f"):format(w.name, median(w.wall), median(w.gpu), extra,
    extra_gpu))
end
local ahead = median(ways[2].wall) - median(warm.wall)
print(("cold cache, compiled ahead: +%.3f s over a warm cache (target <= 0.5 s): %s"):format(ahead,
  ahead <= 0.5 and "met" or "NOT met"))
