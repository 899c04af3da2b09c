-- Benchmark (not a test): what `wlrun trace` adds to one PyTorch launch and to one NVTX range, the
-- two things a launch-bound training step is made of (tests/bench/launch_cost.py: 20,000 tiny
-- launches and 20,000 push/pop pairs, the median of 7 rounds, in us). Each variant runs ROUNDS
-- processes, interleaved; the median of its processes is printed, with the difference from the
-- untraced program. Where trace_overhead.lua's 2 ms step moves by several per cent from one process
-- to the next, a launch's cost is known here to a few ns.
--   wlrun tests/bench/trace_launch_cost.lua [python3 [NAME=LIB...]]
-- NAME=LIB: also run `wlrun trace` with WLRUN_TRACE_LIB=LIB (a trace library built another way).
-- A second table: a launch inside a step's range (launch_cost.py steps), in a step whose GPU
-- work is recorded (--gpu-every 1) and in one that is not (--gpu-every 1000: the steps after the
-- third), with the step marks as memsets (the default), as CUDA events (WLRUN_TRACE_MARKS=event)
-- and as copies from pinned host memory (WLRUN_TRACE_MARKS=copy), and with quiet steps
-- (WLRUN_TRACE_QUIET=1: no CUPTI activity or callback on the steps not recorded).
local python = arg[1] or os.getenv("WLRUN_PYTHON") or "python3"
local bin = os.getenv("WLRUN_BIN") or "build-static/wlrun"
local ROUNDS = tonumber(os.getenv("WLRUN_TRACE_ROUNDS") or "") or 3
local json = require "wlrun.json"

local function q(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local script = q(python) .. " tests/bench/launch_cost.py"
local variants = {
  { name = "untraced", cmd = script },
  { name = "nvtx only", cmd = ("WLRUN_TRACE_GPU=0 %s trace --quiet --no-auto-ranges -- %s"):format(
    q(bin), script) },
  { name = "full", cmd = ("%s trace --quiet --no-auto-ranges -- %s"):format(q(bin), script) },
}
for i = 2, #arg do
  local name, lib = arg[i]:match("^([^=]+)=(.+)$")
  assert(name, "expected NAME=LIB, got " .. arg[i])
  variants[#variants + 1] = { name = name, cmd = (
    "WLRUN_TRACE_LIB=%s %s trace --quiet --no-auto-ranges -- %s"):format(
    q(lib), q(bin), script) }
end

local function run(cmd)
  local p = assert(io.popen(cmd .. " 2>/dev/null"))
  local out = p:read("a")
  -- wlrun trace exits 2 on launch_cost.py (no train_step range: the script has none); with its
  -- steps it prints its report after the program's line
  p:close()
  local line = out:match('({"launch_us"[^\n]*})')
  assert(line, "failed: " .. cmd .. "\n" .. out)
  return json.decode(line)
end

local function median(xs)
  table.sort(xs)
  local n = #xs
  return n % 2 == 1 and xs[(n + 1) // 2] or (xs[n // 2] + xs[n // 2 + 1]) / 2
end

local launch, pair = {}, {}
for _, v in ipairs(variants) do launch[v.name], pair[v.name] = {}, {} end
for round = 1, ROUNDS do
  for k = 1, #variants do
    local v = variants[(k + round - 2) % #variants + 1]
    local r = run(v.cmd)
    table.insert(launch[v.name], r.launch_us)
    table.insert(pair[v.name], r.pair_us)
  end
end
print(
  ("wlrun trace: the CPU cost of one launch and one NVTX range, %d processes of each, "
  .. "interleaved"):format(ROUNDS))
print(("%-16s %12s %12s %12s %12s"):format("variant", "launch (us)", "added", "range (us)",
  "added"))
local base_l, base_p = median(launch.untraced), median(pair.untraced)
for _, v in ipairs(variants) do
  local l, p = median(launch[v.name]), median(pair[v.name])
  print(("%-16s %12.3f %+12.3f %12.3f %+12.3f"):format(v.name, l, l - base_l, p, p - base_p))
end

local in_steps = script .. " steps"
local traced = ("%s trace --quiet --no-auto-ranges"):format(q(bin))
local step_variants = {
  { name = "untraced", cmd = in_steps },
  { name = "recorded", cmd = ("%s --gpu-every 1 -- %s"):format(traced, in_steps) },
  { name = "not recorded", cmd = ("%s --gpu-every 1000 -- %s"):format(traced, in_steps) },
  { name = "not rec., events", cmd = ("WLRUN_TRACE_MARKS=event %s --gpu-every 1000 -- %s"):format(
    traced, in_steps) },
  { name = "not rec., copies", cmd = ("WLRUN_TRACE_MARKS=copy %s --gpu-every 1000 -- %s"):format(
    traced, in_steps) },
  { name = "not rec., quiet", cmd = ("WLRUN_TRACE_QUIET=1 %s --gpu-every 1000 -- %s"):format(
    traced, in_steps) },
}
local in_step, bound, sync = {}, {}, {}
for _, v in ipairs(step_variants) do in_step[v.name], bound[v.name], sync[v.name] = {}, {}, {} end
for round = 1, ROUNDS do
  for k = 1, #step_variants do
    local v = step_variants[(k + round - 2) % #step_variants + 1]
    local r = run(v.cmd)
    table.insert(in_step[v.name], r.launch_us)
    table.insert(bound[v.name], r.boundary_us)
    table.insert(sync[v.name], r.sync_us)
  end
end
print(("\na launch inside a step's range (--gpu-every), and a step's push and pop together (its "
  .. "boundaries, where the steps are marked) and the synchronisation after it; %d processes of "
  .. "each, interleaved"):format(ROUNDS))
print(("%-16s %12s %12s %14s %12s %12s"):format("variant", "launch (us)", "added",
  "boundary (us)", "added", "sync (us)"))
local base_s, base_b = median(in_step.untraced), median(bound.untraced)
for _, v in ipairs(step_variants) do
  local l, b = median(in_step[v.name]), median(bound[v.name])
  print(("%-16s %12.3f %+12.3f %14.3f %+12.3f %12.3f"):format(v.name, l, l - base_s, b,
    b - base_b, median(sync[v.name])))
end
