#!/usr/bin/env bash
# Installs what wlrun needs (Debian/Ubuntu packages; the CUDA toolkit must be there already),
# then configures and builds it in build/. Sourced by scripts/wl and scripts/test.
#   WLRUN_BUILD_DIR   build directory (default: build)
#   WLRUN_WERROR=ON   warnings are errors (CI)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${WLRUN_BUILD_DIR:-$root/build}
packages="cmake make gcc g++ pkg-config liblua5.4-dev lua5.4 libinih-dev libjansson-dev libsqlite3-dev lua-busted gnuplot-nox"

missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "wlrun: installing$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "wlrun: missing packages:$missing" >&2
    echo "wlrun: run: sudo apt-get update && sudo apt-get install -y$missing" >&2
    exit 1
  fi
fi

cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -x "$cuda/bin/nvcc" ] && ! command -v nvcc >/dev/null; then
  echo "wlrun: the CUDA toolkit is needed (not found at $cuda); set CUDA_HOME" >&2
  exit 1
fi
export PATH="$cuda/bin:$PATH"

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DWLRUN_WERROR="${WLRUN_WERROR:-OFF}" >/dev/null
elif [ -n "${WLRUN_WERROR:-}" ]; then
  cmake "$build" -DWLRUN_WERROR="$WLRUN_WERROR" >/dev/null
fi
cmake --build "$build" -j "$(nproc)" >"$build/build.log" 2>&1 || { cat "$build/build.log" >&2; exit 1; }
