#!/usr/bin/env bash
# End-to-end test of wlrun's sharding under a real single-node Slurm (docs/cluster.md).
#
#   tests/slurm/run.sh              (as root, from anywhere; WLRUN_BIN=path/to/wlrun to choose
#                                    the binary, default build/wlrun; KEEP=1 keeps the temp dir)
#
# Installs Debian's slurm-wlm daemons and munge when they are missing (apt-get), writes a
# minimal slurm.conf for this host into a temporary directory (loopback addresses, no
# accounting, state and spool in the directory), starts munged, slurmctld and slurmd there,
# waits for the node to be idle, then:
#   1. a job array (sbatch --array=1-3 --wait) whose tasks run `wlrun --dry-run` on a GPU-free
#      scenario (tests/slurm/scenario.lua): each task must say "shard K/3 (from
#      SLURM_ARRAY_TASK_ID)" and the three listings together must be the scenario's
#      configurations, each exactly once, with their global indices;
#   2. the same tasks measure their shard on the host (tests/slurm/host_shard.lua, which takes
#      the shard from the environment as the runner does) and write shard_K.json; `wlrun merge`
#      combines them into one complete document that `wlrun compare` finds all "same" against
#      itself;
#   3. `srun -n 3` (a job step of 3 tasks): each task must say "(from SLURM_PROCID)", and the
#      listings must cover the space once;
#   4. a batch script with 2 tasks that runs wlrun itself (no srun) is not sharded;
#   5. `scancel --signal=TERM --batch` during a run's second configuration: the run says so and
#      its outputs hold the finished configuration and the interrupted one, marked.
# Prints PASS or FAIL and exits 0 or 1; exits 77 (skipped) when Slurm cannot be installed or
# started here, saying why. Stops the daemons it started on exit.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
WLRUN=${WLRUN_BIN:-$root/build/wlrun}
case $WLRUN in /*) ;; *) WLRUN=$root/$WLRUN ;; esac
t_start=$(date +%s)

say() { printf 'slurm-test: %s\n' "$*"; }
skip() { say "SKIP: $*"; exit 77; }

[ -x "$WLRUN" ] || { say "FAIL: no wlrun binary at $WLRUN (build first: cmake --build build)"; exit 1; }

# --- Slurm and munge -----------------------------------------------------------------------
need_install=0
for c in slurmctld slurmd sbatch srun sinfo scancel munged; do
  command -v "$c" >/dev/null 2>&1 || need_install=1
done
if [ "$need_install" = 1 ]; then
  [ "$(id -u)" = 0 ] || skip "Slurm is not installed and installing it needs root"
  command -v apt-get >/dev/null 2>&1 || skip "Slurm is not installed and there is no apt-get"
  say "installing slurmctld, slurmd, slurm-client and munge (apt-get)"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
         slurmctld slurmd slurm-client munge; } >/tmp/wlrun-slurm-apt.log 2>&1; then
    tail -5 /tmp/wlrun-slurm-apt.log
    skip "apt-get could not install Slurm (log: /tmp/wlrun-slurm-apt.log)"
  fi
fi
[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start jobs"

T=$(mktemp -d /tmp/wlrun-slurm.XXXXXX) || skip "cannot make a temporary directory"
chmod 755 "$T"
mkdir -p "$T/munge" "$T/state" "$T/spool" "$T/out"
chmod 755 "$T/munge"
pids=()
passed=0

# shellcheck disable=SC2317  # (run by the trap)
cleanup() {
  local rc=$?
  if [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ]; then
    timeout 10 scancel --quiet --user=root >/dev/null 2>&1
    sleep 1
  fi
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  if [ "$passed" = 1 ] && [ -z "${KEEP:-}" ]; then rm -rf "$T"; else say "files kept in $T"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

logs() {
  local f
  for f in "$T"/*.log "$T"/munge/*.log; do
    [ -f "$f" ] && { echo "--- $f (last lines)"; tail -15 "$f"; }
  done
}

fail() {
  say "FAIL: $*"
  logs
  exit 1
}

# a TCP port nothing listens on at 127.0.0.1, from $1 up
free_port() {
  local p=$1
  while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
  echo "$p"
}

# munged with its own key and socket in $T (the system's munge is left alone)
if command -v mungekey >/dev/null 2>&1; then
  mungekey --create --keyfile="$T/munge/munge.key" 2>/dev/null || dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 2>/dev/null
else
  dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 2>/dev/null
fi
chmod 600 "$T/munge/munge.key"
sock=$T/munge/munge.sock
munged --force --foreground --key-file="$T/munge/munge.key" --socket="$sock" --pid-file="$T/munge/munged.pid" \
  --log-file="$T/munge/munged.log" --seed-file="$T/munge/munged.seed" >"$T/munge/stdout.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || { logs; skip "munged did not start"; }
munge --socket="$sock" -n 2>/dev/null | unmunge --socket="$sock" >/dev/null 2>&1 || { logs; skip "munge does not work here"; }

# --- a minimal slurm.conf for this host ------------------------------------------------------
node=$(hostname -s)
cpus=$(nproc)
ctld_port=$(free_port 16817)
slurmd_port=$(free_port $((ctld_port + 1)))
export SLURM_CONF=$T/slurm.conf
: >"$T/plugstack.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=wlruntest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$T/plugstack.conf
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MinJobAge=30
InactiveLimit=0
KillWait=5
NodeName=$node NodeAddr=127.0.0.1 NodeHostname=$node CPUs=$cpus State=UNKNOWN
PartitionName=wlrun Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF

slurmctld -D -c -f "$SLURM_CONF" >"$T/slurmctld.stdout.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$node" >"$T/slurmd.stdout.log" 2>&1 &
pids+=($!)

state=
for _ in $(seq 120); do
  state=$(timeout 5 sinfo -h -N -n "$node" -o %t 2>/dev/null | head -1)
  [ "$state" = idle ] && break
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || { logs; skip "a Slurm daemon exited at start"; }; done
  sleep 0.5
done
[ "$state" = idle ] || { logs; skip "the Slurm node did not become idle (state: '${state:-none}')"; }
say "Slurm is up on $node ($cpus CPUs, slurmctld port $ctld_port) in $(( $(date +%s) - t_start )) s"

# --- the scenario ----------------------------------------------------------------------------
SC=$here/scenario.lua
"$WLRUN" --dry-run "$SC" >"$T/out/all.txt" 2>"$T/out/all.err" || fail "wlrun --dry-run $SC: $(cat "$T/out/all.err")"
listing() { grep -E '^ *[0-9]+  ' "$@" | sed -E 's/^ +//'; }
listing "$T/out/all.txt" | sort -n >"$T/out/all.list"
total=$(wc -l <"$T/out/all.list")
[ "$total" -ge 6 ] || fail "the scenario lists $total configurations"

# the union of some shard listings is the whole space, each configuration once
check_cover() { # what files...
  local what=$1
  shift
  cat "$@" | sort -n >"$T/out/union.list"
  if ! cmp -s "$T/out/union.list" "$T/out/all.list"; then
    diff "$T/out/all.list" "$T/out/union.list" | head -20
    fail "$what: the shards' configurations are not the space's, each once"
  fi
}

# --- 1 and 2: a job array --------------------------------------------------------------------
cat >"$T/array.sh" <<EOF
#!/bin/bash
#SBATCH --job-name=wlrun-shards
#SBATCH --array=1-3
#SBATCH --ntasks=1
#SBATCH --time=5
#SBATCH --output=$T/out/task_%a.out
#SBATCH --error=$T/out/task_%a.err
env | grep '^SLURM_' | sort >"$T/out/env_\$SLURM_ARRAY_TASK_ID.txt"
"$WLRUN" --dry-run "$SC" || exit
"$WLRUN" "$here/host_shard.lua" "$SC" "$T/out/shard_\$SLURM_ARRAY_TASK_ID.json" 2>"$T/out/host_\$SLURM_ARRAY_TASK_ID.err"
EOF
t0=$(date +%s)
timeout 300 sbatch --wait --chdir="$T" "$T/array.sh" >"$T/out/sbatch.txt" 2>&1 \
  || { cat "$T/out/sbatch.txt" "$T"/out/task_*.err 2>/dev/null | tail -20; fail "the job array failed"; }
say "job array of 3 tasks done in $(( $(date +%s) - t0 )) s"
for k in 1 2 3; do
  listing "$T/out/task_$k.out" >"$T/out/task_$k.list"
  m=$(wc -l <"$T/out/task_$k.list")
  want="wlrun: shard $k/3 (from SLURM_ARRAY_TASK_ID): $m of $total configurations"
  grep -qxF "$want" "$T/out/task_$k.err" || {
    cat "$T/out/task_$k.err"
    fail "array task $k did not say '$want'"
  }
  grep -qF "shard $k/3 (from SLURM_ARRAY_TASK_ID)" "$T/out/host_$k.err" || fail "host_shard.lua in array task $k: $(cat "$T/out/host_$k.err")"
done
check_cover "job array" "$T"/out/task_[123].list
say "ok: the 3 array tasks listed $total configurations, each once"

"$WLRUN" merge "$T"/out/shard_[123].json -o "$T/out/merged.json" >"$T/out/merge.txt" 2>"$T/out/merge.err" \
  || fail "wlrun merge: $(cat "$T/out/merge.err")"
grep -qF "3 files: $total of $total configurations, complete" "$T/out/merge.err" || fail "wlrun merge said: $(cat "$T/out/merge.err")"
"$WLRUN" compare "$T/out/merged.json" "$T/out/merged.json" >"$T/out/compare.txt" 2>&1 || fail "wlrun compare: $(cat "$T/out/compare.txt")"
# the same samples on both sides: ratio 1 everywhere (host timings may be too noisy for "same"
# everywhere: "uncertain" is allowed, "slower" and "faster" are not)
if ! grep -qE "^Verdicts: ([0-9]+ (same|uncertain)(, )?)+$" "$T/out/compare.txt" \
  || ! grep -qE "^Geometric mean of NEW/BASE over $total configurations: 1\.000 " "$T/out/compare.txt"; then
  fail "wlrun compare of the merged file with itself: $(grep -E '^(Verdicts|Geometric)' "$T/out/compare.txt")"
fi
say "ok: wlrun merge made one complete document of $total configurations; compare finds it the same as itself"

# --- 3: srun ----------------------------------------------------------------------------------
t0=$(date +%s)
timeout 300 srun --job-name=wlrun-srun --ntasks=3 --overcommit --time=5 --chdir="$T" \
  --output="$T/out/srun_%t.out" --error="$T/out/srun_%t.err" "$WLRUN" --dry-run "$SC" >"$T/out/srun.txt" 2>&1 \
  || { cat "$T/out/srun.txt" "$T"/out/srun_*.err 2>/dev/null | tail -20; fail "srun failed"; }
for r in 0 1 2; do
  k=$((r + 1))
  listing "$T/out/srun_$r.out" >"$T/out/srun_$r.list"
  m=$(wc -l <"$T/out/srun_$r.list")
  want="wlrun: shard $k/3 (from SLURM_PROCID): $m of $total configurations"
  grep -qxF "$want" "$T/out/srun_$r.err" || { cat "$T/out/srun_$r.err"; fail "srun task $r did not say '$want'"; }
done
check_cover "srun -n 3" "$T"/out/srun_[012].list
say "ok: srun -n 3 in $(( $(date +%s) - t0 )) s: 3 shards from SLURM_PROCID, each configuration once"

# --- 4: a batch script of 2 tasks without srun runs the whole sweep ---------------------------
cat >"$T/batch.sh" <<EOF
#!/bin/bash
#SBATCH --ntasks=2
#SBATCH --overcommit
#SBATCH --time=5
#SBATCH --output=$T/out/batch.out
#SBATCH --error=$T/out/batch.err
env | grep '^SLURM_' | sort >"$T/out/env_batch.txt"
exec "$WLRUN" --dry-run "$SC"
EOF
timeout 300 sbatch --wait --chdir="$T" "$T/batch.sh" >"$T/out/sbatch2.txt" 2>&1 || fail "the batch job failed: $(cat "$T/out/sbatch2.txt")"
grep -q "shard" "$T/out/batch.err" && fail "a batch script of 2 tasks (no srun) was sharded: $(cat "$T/out/batch.err")"
listing "$T/out/batch.out" | sort -n | cmp -s - "$T/out/all.list" || fail "the batch script did not list the whole space"
say "ok: a batch script with --ntasks=2 but no srun runs the whole sweep"

# --- 5: scancel --signal=TERM during a run: the finished configurations are written --------
# (a scheduler's time limit or scancel: docs/reliability.md, "Interrupts")
cat >"$T/sig.lua" <<'LUA'
local wl = require "wlrun"
return wl.scenario { name = "signalled", params = { n = { 1, 2, 3, 4 } },
  setup = function(p) if p.n == 2 then io.open("second", "w"):close() wl.sleep(120) end return {} end,
  run = function() end }
LUA
cat >"$T/sig.sh" <<JOB
#!/bin/bash
#SBATCH --job-name=wlrun-signal
#SBATCH --ntasks=1
#SBATCH --time=5
#SBATCH --output=$T/out/sig.out
#SBATCH --error=$T/out/sig.err
exec "$WLRUN" --compile-only --arch sm_90 -o "$T/out/sig.json" -o "$T/out/sig.csv" "$T/sig.lua"
JOB
t0=$(date +%s)
jobid=$(timeout 30 sbatch --parsable --chdir="$T" "$T/sig.sh" 2>"$T/out/sbatch3.txt") \
  || fail "sbatch of the signal job: $(cat "$T/out/sbatch3.txt")"
jobid=${jobid%%;*}
for _ in $(seq 600); do [ -e "$T/second" ] && break; sleep 0.1; done
[ -e "$T/second" ] || fail "the signal job never reached its second configuration: $(cat "$T/out/sig.err" 2>/dev/null)"
sleep 0.3
timeout 30 scancel --signal=TERM --batch "$jobid" || fail "scancel --signal=TERM --batch $jobid failed"
for _ in $(seq 300); do grep -q "interrupted" "$T/out/sig.err" 2>/dev/null && [ -s "$T/out/sig.json" ] && break; sleep 0.1; done
grep -qF "interrupted (SIGTERM) during configuration 2 of 4; 1 finished configurations are in $T/out/sig.json" \
  "$T/out/sig.err" || fail "the signalled job did not say so: $(cat "$T/out/sig.err")"
grep -q '"complete": *false' "$T/out/sig.json" || fail "sig.json does not say complete = false"
[ "$(grep -c '"status": *"compiled"' "$T/out/sig.json")" = 1 ] || fail "sig.json does not hold the one finished configuration"
grep -q '"kind": *"interrupted"' "$T/out/sig.json" || fail "sig.json does not mark the interrupted configuration"
[ -s "$T/out/sig.csv" ] || fail "sig.csv was not written"
say "ok: scancel --signal=TERM during configuration 2 in $(( $(date +%s) - t0 )) s: the finished one in every output, the interrupted one marked"

passed=1
say "PASS ($(( $(date +%s) - t_start )) s)"
exit 0
