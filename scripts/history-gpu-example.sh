#!/usr/bin/env bash
# docs/history.md's example on a GPU: a git repository of 12 commits of a scenario whose kernel
# (a polynomial of degree 400 per element, n = 2^20 and 2^24) does 15 % more work for n = 2^24
# from the seventh commit on; at each commit the scenario runs for real and `wlrun history add`
# stores it; then trend, blame and the --fail-on gate.
#   WLRUN   the wlrun to run (default: build/wlrun)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
wlrun=$(realpath "${WLRUN:-$root/build/wlrun}")
base=$(mktemp -d /tmp/wlrun-history-gpu.XXXXXX)
trap 'rm -rf "$base"' EXIT
repo=$base/repo
mkdir -p "$repo/bench" "$repo/out"
cd "$repo"

export GIT_AUTHOR_NAME=Ada GIT_AUTHOR_EMAIL=ada@example.com GIT_COMMITTER_NAME=Ada
export GIT_COMMITTER_EMAIL=ada@example.com GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
git init -q -b main .
printf '.wlrun/\nout/\n' >.gitignore

scenario() { # the scenario at commit $1: $2 the degree of the large size
  cat <<EOF
-- commit $1
local wl = require "wlrun"
local DEGREE = $2 -- of n = 2^24; 400 for the others
local src = [[extern "C" __global__ void poly(float* y, const float* x, int n, int degree) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i], a = 0.0f;
  for (int d = 0; d < degree; d++) a = a * v + 1.0f;
  y[i] = a;
}]]
return wl.scenario {
  name = "poly", params = { n = { 1 << 20, 1 << 24 } },
  timing = { mode = "cold", warmup = 20, iters = 100 },
  setup = function(p)
    local s = { x = wl.tensor { p.n, init = wl.uniform(-0.5, 0.5) }, y = wl.tensor { p.n } }
    local degree = p.n == 1 << 24 and DEGREE or 400
    s.run = wl.kernel { src, name = "poly" }:bind { grid = wl.cdiv(p.n, 256), block = 256, args = { s.y, s.x, p.n, degree } }
    return s
  end,
  run = "run",
}
EOF
}

run() {
  echo "\$ wlrun $*"
  "$wlrun" "$@" 2>&1 || echo "(exit code $?)"
}

for i in $(seq 1 12); do
  scenario "$i" "$([ "$i" -ge 7 ] && echo 460 || echo 400)" >bench/poly.lua
  git add -A
  git commit -q -m "commit $i$([ "$i" -eq 7 ] && echo ': degree 460' || true)"
  "$wlrun" bench/poly.lua -o out/poly.json -q --no-progress >/dev/null
  run history add out/poly.json
done
echo
run history trend
echo
run history blame
echo
run history blame --fail-on 5
