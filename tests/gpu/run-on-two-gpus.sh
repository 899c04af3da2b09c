#!/usr/bin/env bash
# The two-GPU check, run on a machine with two GPUs from the repository root with build-static/
# carried there (scripts/build-static.sh). Builds nothing. Runs the GPU specs that need two
# devices (--devices), the pipeline and reliability specs, the shards started as srun starts
# them (shards-on-gpus.sh), gemm_sweep on one GPU and on two, and tests/bench/devices_speedup.lua;
# with the argument costs, run-on-gpu.sh costs besides (on GPU 0); with the argument ratios, only
# issue 21's ratios and the specs they touch (a short call): config_overhead.lua and
# harness_costs.lua on GPU 0, devices_speedup.lua, bench_spec and devices_spec. Prints a short
# table last.
set -uo pipefail
root=$(pwd)
bin=$root/build-static/wlrun
bundle=$root/build-static/busted
export WLRUN_BIN=$bin WLRUN_SOURCE_DIR=$root WLRUN_CACHE_DIR=/tmp/wlrun-gpu-cache
export LUA_PATH="$bundle/share/?.lua;$bundle/share/?/init.lua;$root/tests/?.lua;;"
export LUA_CPATH="$bundle/lib/?.so;;"
out=$(mktemp -d)
names=() codes=() secs=()
step() { # step NAME COMMAND...
  local name=$1; shift
  local t0=$(date +%s.%N)
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  tail -n "${WLRUN_GPU_TAIL:-25}" "$out/$name.log"
  names+=("$name"); codes+=("$rc"); secs+=("$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')")
}
step nvidia-smi nvidia-smi --query-gpu=index,name,pci.bus_id --format=csv
if [ "${1:-}" = ratios ]; then
  step bench-config-overhead "$bin" tests/bench/config_overhead.lua
  step bench-devices "$bin" tests/bench/devices_speedup.lua
  step bench-harness-costs "$bin" tests/bench/harness_costs.lua -- "$root/build-static/nvml_raw"
  step specs "$bin" "$bundle/run.lua" -- -o utfTerminal tests/gpu/bench_spec.lua tests/gpu/devices_spec.lua
else
step specs "$bin" "$bundle/run.lua" -- -o utfTerminal tests/gpu/devices_spec.lua tests/gpu/pipeline_spec.lua tests/gpu/reliability_spec.lua
step shards bash tests/gpu/shards-on-gpus.sh
"$bin" scenarios/gemm_sweep.lua --quiet -o "$out/warm.json" >/dev/null 2>&1 # the kernel cache
step sweep-one-gpu "$bin" scenarios/gemm_sweep.lua --quiet --no-progress -o "$out/one.json"
step sweep-two-gpus "$bin" scenarios/gemm_sweep.lua --quiet --no-progress --devices 0,1 -o "$out/two.json"
step compare "$bin" compare "$out/one.json" "$out/two.json"
step bench-devices "$bin" tests/bench/devices_speedup.lua
fi
# the single-GPU costs of issue 21 on GPU 0 of this machine, in the same call: PART=costs
if [ "${1:-}" = costs ]; then
  OUT=$out/costs bash tests/gpu/run-on-gpu.sh costs >"$out/costs.log" 2>&1
  names+=("costs"); codes+=("$?"); secs+=("0")
  tail -n 60 "$out/costs.log"
fi
{
  echo
  printf '%-16s %6s %8s\n' step exit seconds
  for i in "${!names[@]}"; do printf '%-16s %6s %8.1f\n' "${names[$i]}" "${codes[$i]}" "${secs[$i]}"; done
} | tee "$out/summary.txt"
mkdir -p "${OUT:-/tmp}" && tar -C "$out" -czf "${OUT:-/tmp}/two-gpus.tar.gz" .
for c in "${codes[@]}"; do [ "$c" = 0 ] || exit 1; done
