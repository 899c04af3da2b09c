#!/usr/bin/env bash
# Installs what wlrun needs (Debian/Ubuntu packages; the CUDA toolkit must be there already),
# then configures and builds it in build/. Sourced by scripts/wl and scripts/test.
#   WLRUN_BUILD_DIR   build directory (default: build)
#   WLRUN_WERROR=ON   warnings are errors (CI)
#   WLRUN_TESTS=1     also what only the tests use, where the distribution has it (scripts/test)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${WLRUN_BUILD_DIR:-$root/build}
packages="cmake make gcc g++ pkg-config liblua5.4-dev lua5.4 libinih-dev libjansson-dev libsqlite3-dev lua-busted gnuplot-nox"
# the headless browser that the HTML report's page is checked in (tests/e2e/report_spec.lua);
# a distribution without it (Ubuntu ships Chromium as a snap) runs those specs as pending;
# dpkg-dev (dpkg-shlibdeps) builds the .deb, lintian checks it as Debian does and zsh checks its
# completion (tests/e2e/install_spec.lua);
# python3-torch (CPU) runs wlrun trace's Python hook on a PyTorch loop (tests/e2e/trace_auto_spec.lua);
# lua-check lints the Lua code (tests/e2e/lint_spec.lua, .luacheckrc); clang-format checks the C
# sources' format (scripts/format.sh --check, in .ci/run)
optional=""
[ "${WLRUN_TESTS:-}" = 1 ] && optional="chromium-headless-shell dpkg-dev lintian zsh python3-torch lua-check clang-format"

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing="" missing_optional=""
for p in $packages; do installed "$p" || missing="$missing $p"; done
for p in $optional; do installed "$p" || missing_optional="$missing_optional $p"; done
if [ -n "$missing$missing_optional" ]; then
  if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    for p in $missing_optional; do
      if apt-cache show "$p" >/dev/null 2>&1; then
        missing="$missing $p"
      else
        echo "wlrun: $p is not in this distribution's packages: the specs that need it will be pending" >&2
      fi
    done
    if [ -n "$missing" ]; then
      echo "wlrun: installing$missing" >&2
      apt-get install -y -qq --no-install-recommends $missing >/dev/null
    fi
  elif [ -n "$missing" ]; then
    echo "wlrun: missing packages:$missing" >&2
    echo "wlrun: run: sudo apt-get update && sudo apt-get install -y$missing$missing_optional" >&2
    exit 1
  else
    echo "wlrun: not installed:$missing_optional (the specs that need it will be pending)" >&2
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
