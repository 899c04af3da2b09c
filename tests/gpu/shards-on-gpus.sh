#!/usr/bin/env bash
# On a machine with two GPUs, from the repository root with build-static/ carried there: two
# shards of a sweep started the way srun starts them (SLURM_PROCID, SLURM_LOCALID, ...), at the
# same time, each choosing its GPU from its local rank; then merged, and the merged results
# compared with a run on one GPU. Prints what it checks; exits non-zero on a failure.
set -uo pipefail
bin=${WLRUN_BIN:-build-static/wlrun}
out=$(mktemp -d)
args=(scenarios/gemm_sweep.lua -p variant=tiled,tiled4x4 --quiet --no-progress)
for rank in 0 1; do
  SLURM_JOB_ID=1 SLURM_STEP_ID=0 SLURM_PROCID=$rank SLURM_NTASKS=2 SLURM_LOCALID=$rank \
    "$bin" "${args[@]}" -o "$out/shard$rank.json" >"$out/shard$rank.txt" 2>"$out/shard$rank.err" &
done
wait
status=0
for rank in 0 1; do
  head -n 1 "$out/shard$rank.err"
  grep -o '"pci_bus_id": *"[^"]*"' "$out/shard$rank.json" | sed "s/^/  shard $rank ran on /"
done
"$bin" merge "$out/shard0.json" "$out/shard1.json" -o "$out/merged.json" || status=1
"$bin" "${args[@]}" -o "$out/one.json" >/dev/null || status=1
"$bin" compare "$out/one.json" "$out/merged.json" | tail -n 4 || status=1
exit $status
