#!/usr/bin/env bash
# Runs wlrun's non-GPU paths under valgrind's memcheck and fails on an error in wlrun's own
# code (docs/reliability.md). Needs a build in build/ (scripts/test makes one) and valgrind.
#   scripts/valgrind.sh
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${WLRUN_BIN:-$root/build/wlrun}
cache=$(mktemp -d)
log=$(mktemp -d)
cd "$root"
status=0
n=0
run() { # run NAME ARGS...: memcheck on one invocation; errors in wlrun's sources fail it
  local name=$1; shift
  n=$((n + 1))
  valgrind --tool=memcheck --error-exitcode=99 --errors-for-leak-kinds=definite --leak-check=full \
    --suppressions="$root/scripts/valgrind.supp" --log-file="$log/$name.txt" "$bin" "$@" >/dev/null 2>&1
  local rc=$?
  if [ "$rc" = 99 ] || grep -q "definitely lost: [1-9]" "$log/$name.txt"; then
    echo "valgrind: $name: errors (see $log/$name.txt)"; status=1
  else
    echo "valgrind: $name: clean (exit $rc)"
  fi
}
run help --help
run version --version
run script examples/hello.lua
run dry-run scenarios/gemm_sweep.lua --dry-run -p variant=tiled
run compile-only scenarios/gemm_sweep.lua --compile-only --arch sm_90 --cache-dir "$cache"
run compile-cached scenarios/bandwidth.lua --compile-only --arch sm_90 --cache-dir "$cache"
run bad-option --bogus
run bad-ini scenarios/gemm_sweep.lua --config tests/fixtures/ini/bad_value.ini
run compare compare tests/fixtures/compare/base.json tests/fixtures/compare/slower.json
echo "valgrind: $n runs, $([ $status = 0 ] && echo clean || echo 'errors found')"
exit $status
