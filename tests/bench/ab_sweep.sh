#!/usr/bin/env bash
# Benchmark helper (docs/benchmarks.md): a change to the measurement against the build before it,
# on the same GPU in the same call. Runs SCENARIO with wlrun binaries A and B in turn (A, B, A, B;
# the kernel cache filled by a run of each before), prints each run's wall time and GPU time
# measured and its timing floor (the empty kernel's), then `wlrun compare` of A against A (the
# control: what two runs of one binary differ by), and of A against B, twice, with a noise threshold of AB_NOISE percent (1).
# AB_ARGS_A and AB_ARGS_B: options for A's runs and B's (one binary both ways: --no-prepare
# against the default, for instance); AB_SCENARIO_A: A's scenario where it is not SCENARIO (a copy
# of a recipe before a change to it).
#   tests/bench/ab_sweep.sh A B [SCENARIO [DIR]]
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 A B [SCENARIO [DIR]]" >&2; exit 2; }
a=$1 b=$2 scenario=${3:-scenarios/gemm_sweep.lua} dir=${4:-$(mktemp -d)}
scenario_a=${AB_SCENARIO_A:-$scenario}
mkdir -p "$dir"
# the kernel cache filled by each (their scenarios may differ, and the builds' keys)
# shellcheck disable=SC2086 # the options are words
"$a" ${AB_ARGS_A:-} "$scenario_a" --quiet -o "$dir/fill.json" >/dev/null || exit 1
# shellcheck disable=SC2086
"$b" ${AB_ARGS_B:-} "$scenario" --quiet -o "$dir/fill.json" >/dev/null || exit 1
# the GPU time measured in a results file: its samples, added as config_overhead.lua adds them
sum_lua=$dir/gpu_time.lua
cat >"$sum_lua" <<'LUA'
local json = require "wlrun.json"
local f = assert(io.open(arg[1])); local doc = json.decode(f:read("a")); f:close()
local sum = 0
for _, c in ipairs(doc.configurations) do
  if c.status == "ok" then for _, s in ipairs(c.samples or {}) do sum = sum + s * (c.per or 1) end end
end
local floor = doc.floor and doc.floor.empty_kernel
io.write(("%.3f %s"):format(sum, floor and ("%.2f"):format(floor * 1e6) or "?"))
LUA
for round in 1 2; do
  for which in A B; do
    bin=$a opts=${AB_ARGS_A:-} sc=$scenario_a; [ "$which" = B ] && bin=$b opts=${AB_ARGS_B:-} sc=$scenario
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$bin" $opts "$sc" --quiet -o "$dir/$which$round.json" >/dev/null || exit 1
    wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.3f", b-a}')
    read -r gpu floor < <("$b" "$sum_lua" "$dir/$which$round.json")
    awk -v w="$which" -v r="$round" -v wall="$wall" -v gpu="$gpu" -v floor="$floor" \
      'BEGIN{printf "%s, run %d: %s s of wall time for %s s of GPU time measured (%.2fx); timing floor: empty kernel %s us\n", w, r, wall, gpu, wall/gpu, floor}'
  done
done
for pair in "A1 A2" "A1 B1" "A2 B2"; do
  set -- $pair
  echo "== compare $1 $2"
  "$b" compare "$dir/$1.json" "$dir/$2.json" --noise "${AB_NOISE:-1}" | grep -E "^(Geometric|Verdicts)"
done
