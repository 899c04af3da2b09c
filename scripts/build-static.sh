#!/usr/bin/env bash
# Builds the static wlrun (Lua, inih, jansson, SQLite and cudart linked in) into build-static/, and packs busted
# beside it (build-static/busted) so that the tests run on a GPU machine without Lua packages; the
# man page too, so that `cmake --install build-static --prefix P` installs it (docs/install.md).
# Carry build-static/ to that machine and run tests/gpu/run-on-gpu.sh there (docs/testing.md).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WLRUN_BUILD_DIR=$root/build "$root/scripts/bootstrap.sh" # installs the packages
out=$root/build-static
cmake -S "$root" -B "$out" -DWLRUN_STATIC=ON -DWLRUN_WERROR="${WLRUN_WERROR:-OFF}" >/dev/null
cmake --build "$out" -j "$(nproc)" --target wlrun wlrun_man launch_raw evidence_raw nvml_raw flush_size_raw pipeline_raw exit_raw cublas_raw nvtx_recorder nvtx_second wlrun_modules wlrun_userlib exit_mark exit_mark_kept no_hardlinks no_room wlrun_trace trace_nvtx_program trace_cuda_program trace_nvtx_push >"$out/build.log" 2>&1 || { cat "$out/build.log" >&2; exit 1; }
bundle=${WLRUN_BUSTED_BUNDLE:-$root/../shared/tools/busted-bundle.sh}
"$bundle" "$out/busted" >/dev/null
echo "built $out/wlrun ($(du -h "$out/wlrun" | cut -f1)); busted packed in $out/busted"
ldd "$out/wlrun" | sed 's/^/  /'
if ldd "$out/wlrun" | grep -qE 'liblua|libinih|libjansson|libsqlite3'; then
  echo "wlrun: $out/wlrun needs a shared Lua, inih, jansson or SQLite; it must link them statically" >&2
  exit 1
fi
