-- Benchmark (not a test): what `wlrun trace`'s Python hook and trace library add to one step of a
-- PyTorch loop with no range of its own, on the CPU (no GPU needed: tests/bench/step_cost.py, a
-- one-layer model, about 100 us a step). Each run traces the first TRACED steps (--steps) and the
-- program times every step; the cost is the median traced step less the median step after the
-- trace stopped recording, in the same process (so that the noise between processes cancels).
-- ROUNDS processes of each variant, interleaved; the median of each column is printed. Then the
-- hook's calls a step, counted (step_cost.py count).
--   wlrun tests/bench/trace_step_cost.lua [python3 [NAME=LIB...]]
-- NAME=LIB: also with WLRUN_TRACE_LIB=LIB (a trace library built another way, to compare);
-- NAME=bin:WLRUN: also with another wlrun binary (its embedded hook, and the trace library beside
-- it: an older build's wlrun and libwlrun_trace.so copied into one folder), interleaved with this
-- one's, so that two builds are compared on the same machine.
local python = arg[1] or os.getenv("WLRUN_PYTHON") or "python3"
local bin = os.getenv("WLRUN_BIN") or "build-static/wlrun"
local ROUNDS = tonumber(os.getenv("WLRUN_TRACE_ROUNDS") or "") or 7
local TRACED = 1000
local core = require "wlrun.core"
local json = require "wlrun.json"

local function q(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local script = ("%s tests/bench/step_cost.py %d"):format(q(python), TRACED)
local out = os.tmpname()
-- (another build's wlrun with the library beside it, not one WLRUN_TRACE_LIB names: run-on-gpu.sh
-- exports it)
local function traced(lib, other)
  local env = lib and ("WLRUN_TRACE_LIB=%s "):format(q(lib)) or other and "env -u WLRUN_TRACE_LIB "
    or ""
  return ("%s%s trace --quiet --steps %d -o %s -- %s"):format(env, q(other or bin), TRACED,
    q(out .. ".json"), script)
end
local variants = { { name = "untraced", cmd = script }, { name = "traced", cmd = traced() } }
for i = 2, #arg do
  local name, lib = arg[i]:match("^([^=]+)=(.+)$")
  assert(name, "expected NAME=LIB or NAME=bin:WLRUN, got " .. arg[i])
  local other = lib:match("^bin:(.+)$")
  variants[#variants + 1] = { name = name, cmd = other and traced(nil, other) or traced(lib) }
end

local function run(cmd)
  local p = assert(io.popen(cmd .. " 2>/dev/null"))
  local text = p:read("a")
  p:close()
  local line = text:match("^(%b{})")
  assert(line, "failed: " .. cmd .. "\n" .. text)
  return json.decode(line)
end

local function median(xs) return core.stats.summary(xs).median end

local cols = {}
for _, v in ipairs(variants) do cols[v.name] = { traced = {}, after = {}, added = {} } end
for round = 1, ROUNDS do
  for k = 1, #variants do
    local v = variants[(k + round - 2) % #variants + 1]
    local r = run(v.cmd)
    local c = cols[v.name]
    c.traced[#c.traced + 1], c.after[#c.after + 1] = r.traced_us, r.after_us
    c.added[#c.added + 1] = r.traced_us - r.after_us
  end
end
-- the hook's calls a step, counted (the same in every run: a measure of its work that the CPU's
-- noise does not move)
-- (the calls in steps 200 to TRACED + 199, the opcodes in as many steps after them: --steps covers
-- both)
local counted = run(("%s trace --quiet --steps %d -o %s -- %s tests/bench/step_cost.py count %d")
  :format(q(bin), 2 * TRACED + 200, q(out .. ".json"), q(python), TRACED + 200))
os.remove(out)
os.remove(out .. ".json")
print(("wlrun trace: the CPU cost of one step of a PyTorch loop with no range (the hook's), %d "
  .. "processes of each, interleaved; medians in us"):format(ROUNDS))
print(("%-16s %12s %12s %12s"):format("variant", "traced", "after", "added"))
for _, v in ipairs(variants) do
  local c = cols[v.name]
  print(("%-16s %12.1f %12.1f %+12.1f"):format(v.name, median(c.traced), median(c.after),
    median(c.added)))
end
print(("\nthe hook's calls a step (steps 200 to %d, counted): %.1f of its Python functions, %.1f "
  .. "C functions from them; %.1f calls added in all (torch's it sets off too), against as many "
  .. "steps after the trace stopped; %.1f bytecode instructions run in its Python functions")
  :format(TRACED + 199, counted.hook_python_calls, counted.hook_c_calls, counted.calls_added or 0,
    counted.hook_opcodes or 0))
