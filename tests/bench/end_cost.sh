#!/usr/bin/env bash
# Benchmark (not a test): where a run's end goes, after its own account (doc.wall.total): the
# outputs written (the journal's finish: results.finish and each -o file), the report rendered
# and printed, and the rest until the process has ended (the Lua state closed, the libraries'
# teardown, the CUDA context released). Runs SCENARIO (gemm_sweep) ROUNDS times (4; the first
# fills the kernel cache) with a copy of wlrun's Lua library (WLRUN_LUA_DIR, docs/testing.md)
# whose runner writes the monotonic clock to standard error at those points; this script's own
# wlrun reads the clock when the process has ended. END_ARGS: more options for the runs.
#   tests/bench/end_cost.sh WLRUN [SCENARIO [ROUNDS]]
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: $0 WLRUN [SCENARIO [ROUNDS]]" >&2; exit 2; }
bin=$1 scenario=${2:-scenarios/gemm_sweep.lua} rounds=${3:-4}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r lua/wlrun "$work/wlrun" || exit 1
python3 - "$work/wlrun/run/runner.lua" <<'PY' || exit 1
import sys
p = sys.argv[1]
s = open(p).read()
marks = [
    ('  doc.wall = wall\n  writer:finish(stop == nil)\n',
     '  doc.wall = wall\n  io.stderr:write(("END total %.6f\\n"):format(core.clock()))\n'
     '  writer:finish(stop == nil)\n  io.stderr:write(("END written %.6f\\n"):format(core.clock()))\n'),
    ('  local where = #outputs > 0',
     '  io.stderr:write(("END reported %.6f\\n"):format(core.clock()))\n  local where = #outputs > 0'),
]
for old, new in marks:
    if s.count(old) != 1:
        sys.exit("end_cost.sh: lua/wlrun/run/runner.lua has changed: mark the points again (%r)" % old[:40])
    s = s.replace(old, new)
open(p, "w").write(s)
PY
cat >"$work/parent.lua" <<'LUA'
local core = require "wlrun.core"
local bin, lua, scenario, out, rounds, more = arg[1], arg[2], arg[3], arg[4], tonumber(arg[5]), arg[6] or ""
local function q(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end
print(("%-6s %10s %10s %10s %10s   (ms; %s)"):format("run", "whole", "written", "reported", "the rest", scenario))
for i = 1, rounds do
  local t0 = core.clock()
  local p = assert(io.popen(("WLRUN_LUA_DIR=%s %s %s --quiet -o %s %s 2>&1 >/dev/null"):format(q(lua), q(bin), q(scenario),
    q(out .. "/r.json"), more)))
  local text = p:read("a")
  local ok = p:close()
  local t_end = core.clock()
  local v = {}
  for k, t in text:gmatch("END (%a+) (%S+)") do v[k] = tonumber(t) end
  assert(ok and v.total and v.written and v.reported, "the run failed:\n" .. text)
  print(("%-6s %10.1f %10.1f %10.1f %10.1f"):format(i == 1 and "fill" or tostring(i - 1), (t_end - t0) * 1e3,
    (v.written - v.total) * 1e3, (v.reported - v.written) * 1e3, (t_end - v.reported) * 1e3))
end
print("(written: the outputs, from the run's own account's end; reported: the report; the rest: to the")
print(" process's end, seen here: the Lua state closed, the libraries' teardown, the context released)")
LUA
"$bin" "$work/parent.lua" -- "$bin" "$work" "$scenario" "$work" "$rounds" "${END_ARGS:-}"
