#!/usr/bin/env bash
# Fuzzes wlrun's parsers with libFuzzer for a bounded time each (docs/reliability.md):
#   scripts/fuzz.sh [SECONDS per target, default 60]
# Targets: -p overrides, setting values, wlrun.ini files, results documents (the one strict
# loader, then every printer), JSON (decode, encode, decode again).
# A crash leaves its input in build-fuzz/crashes/; turn it into a test (tests/c or tests/e2e)
# before fixing it. Needs clang and libclang-rt-14-dev (apt-get install clang libclang-rt-14-dev).
# Then the mutation specs for internal errors (tests/spec/results_fuzz_spec.lua: results documents
# and journals into every printer and tool; tests/e2e/history_hostile_spec.lua: history databases)
# with WLRUN_FUZZ_MUTATIONS (default 50000, the suite runs 1500) and a seed of the day
# (WLRUN_FUZZ_SEED), with build/wlrun.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
out=$root/build-fuzz
cmake -S "$root" -B "$out" -DCMAKE_C_COMPILER=clang -DWLRUN_FUZZ=ON >/dev/null
cmake --build "$out" -j "$(nproc)" --target fuzz_params fuzz_settings fuzz_ini fuzz_results fuzz_json >"$out/build.log" 2>&1 \
  || { cat "$out/build.log" >&2; exit 1; }
mkdir -p "$out/crashes"
status=0
for t in params settings ini results json; do
  corpus=$out/corpus-$t
  mkdir -p "$corpus"
  cp -n "$root/tests/fuzz/corpus/$t/"* "$corpus/" 2>/dev/null || true
  echo "== fuzz_$t for ${seconds}s"
  if ! "$out/fuzz_$t" -max_total_time="$seconds" -artifact_prefix="$out/crashes/$t-" -print_final_stats=1 \
      "$corpus" 2>"$out/fuzz_$t.log"; then
    echo "fuzz_$t found a crash: see $out/crashes/ and $out/fuzz_$t.log" >&2
    status=1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$out/fuzz_$t.log" | sed 's/^/   /'
done
# internal errors under mutation (the suite's specs, many more mutations, another seed each day)
bin=${WLRUN_BIN:-$root/build/wlrun}
if [ -x "$bin" ]; then
  echo "== mutation specs: ${WLRUN_FUZZ_MUTATIONS:-50000} mutations, seed ${WLRUN_FUZZ_SEED:-$(date +%Y%m%d)}"
  (cd "$root" && WLRUN_FUZZ_MUTATIONS=${WLRUN_FUZZ_MUTATIONS:-50000} WLRUN_FUZZ_SEED=${WLRUN_FUZZ_SEED:-$(date +%Y%m%d)} \
    WLRUN_BIN=$bin WLRUN_SOURCE_DIR=$root "$bin" /usr/bin/busted -- --lpath="$root/tests/?.lua" -o utfTerminal \
    tests/spec/results_fuzz_spec.lua tests/e2e/history_hostile_spec.lua) || status=1
else
  echo "no $bin: the mutation specs are skipped (build wlrun first)" >&2
fi
exit $status
