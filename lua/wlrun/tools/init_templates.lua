-- The files of `wlrun init` (wlrun/tools/init.lua), as written. The scenario must pass
-- `wlrun --compile-only --arch sm_90` as it is (tests/e2e/init_spec.lua).
local T = {}

T.scenario = [==[
-- axpy (y = a x + y) in fp32 over vector lengths: a memory-bound kernel compiled by NVRTC,
-- checked against the host, reported in GB/s and % of the device's peak bandwidth.
--   wlrun bench/axpy.lua                       the sweep, as a table
--   wlrun bench/axpy.lua -p n=1048576 -o out/axpy.json
--   wlrun --compile-only bench/axpy.lua        compile and bind every kernel, no GPU needed
-- Replace the kernel and the check with your own; keep the check (a wrong kernel is fast).
local wl = require "wlrun"

local src = [[
extern "C" __global__ void axpy(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}]]

local A = 2.0

return wl.scenario {
  name = "axpy",
  description = "y = a x + y in fp32, 2^20 to 2^26 elements",
  params = {
    n = { 1 << 20, 1 << 22, 1 << 24, 1 << 26 },
    block = { 256 },
  },
  timing = { mode = "cold", flush_l2 = true, warmup = 10, iters = 50 },

  setup = function(p)
    local s = {}
    s.x = wl.tensor { p.n, dtype = "f32", init = wl.normal() }
    s.y = wl.tensor { p.n, dtype = "f32", init = 1 }
    local k = wl.kernel { src, name = "axpy" }
    s.launch = k:bind { grid = wl.cdiv(p.n, p.block), block = p.block, args = { s.y, s.x, A, p.n } }
    return s
  end,

  run = "launch",

  -- run once on y = 1 before timing: y must be a x + 1 (checked at a few places)
  check = function(p, s)
    local x, y = s.x:to_host(), s.y:to_host()
    for _, i in ipairs { 1, 2, p.n // 2, p.n } do
      local want = A * x[i] + 1
      if math.abs(y[i] - want) > 1e-5 * math.max(1, math.abs(want)) then
        return false, ("y[%d] = %.7g, expected %.7g"):format(i, y[i], want)
      end
    end
    return true
  end,

  -- what one launch moves and computes: GB/s, GFLOP/s and % of peak bandwidth come from it
  work = function(p)
    return { bytes = 3 * 4 * p.n, flops = 2 * p.n }
  end,
}
]==]

T.ini = [==[
; wlrun.ini: the settings of the benchmarks run from this directory or below it (wlrun reads the
; first wlrun.ini from the working directory up to the repository's root).
; Precedence: wlrun's defaults < this file < the scenario's timing table < the command line.
; Every key: `wlrun --help` (CONFIGURATION) and docs/config.md of wlrun. Uncomment to change.

[run]
; mode = auto          ; auto | cold | batch | graph | host
; warmup = 50          ; iterations before measuring
; iters = 100          ; measured iterations
; seed = 0             ; random tensor initialisation
; device = 0
; config_timeout = 0   ; stop a configuration running longer than this (like 5m); 0: never

[adaptive]
; enabled = off        ; stop measuring once the median's noise is below target_noise
; target_noise = 0.5%
; max_time = 15s

[output]
; format = table       ; table | plain | csv | markdown | json

[compile]
; --compile-only compiles for this architecture where there is no GPU (CI without one)
arch = sm_90
]==]

T.readme = [==[
## Benchmarks

The recipes in `bench/` run with wlrun (a Lua-scriptable CUDA benchmark
harness): each is a scenario that compiles its kernels with NVRTC, checks the result and
reports times and bandwidth.

    wlrun bench/axpy.lua                          # the sweep on this machine's GPU
    wlrun --compile-only bench/axpy.lua           # compile and bind every kernel, no GPU needed
    sh bench/ci.sh                                # what CI runs

`bench/ci.sh` compiles every kernel on any machine; where a GPU is present it also runs each
recipe and fails (exit 7) when a configuration is significantly slower than that recipe's own
baseline, `bench/NAME.baseline.json`, by more than 5 %. Store the baseline from the GPU that CI
runs on:

    wlrun bench/axpy.lua -o bench/axpy.baseline.json && git add bench/axpy.baseline.json
]==]

T.ci = [==[
#!/bin/sh
# CI job of the benchmarks (any CI: call `sh bench/ci.sh` from the repository's root or elsewhere).
# Without a GPU: compile and bind every kernel of each recipe (--compile-only, for [compile] arch
# of wlrun.ini). With a GPU: run each recipe and compare it with its own stored baseline,
# bench/NAME.baseline.json for bench/NAME.lua: exit 7 when a configuration is significantly
# slower by more than 5 %. Every recipe is run and gated, whatever an earlier one gave; the
# job's exit is the first failure's (7: a regression; 2: a gate that compared nothing).
#   WLRUN=/path/to/wlrun   the wlrun to run (default: wlrun on PATH)
#   WLRUN_DEB=URL or path  where that wlrun is not there: wlrun's .deb, installed first with
#                          apt-get (through sudo where not root), its dependencies with it
#   FAIL_ABOVE=5           the regression gate, in percent
set -u
cd "$(dirname "$0")/.."
wlrun=${WLRUN:-wlrun}
fail_above=${FAIL_ABOVE:-5}
if [ -n "${WLRUN_DEB:-}" ] && ! command -v "$wlrun" >/dev/null 2>&1; then
  deb=$(mktemp -d)/wlrun.deb
  case $WLRUN_DEB in
    http://* | https://*) curl -fsSL -o "$deb" "$WLRUN_DEB" || exit 1 ;;
    *) cp "$WLRUN_DEB" "$deb" || exit 1 ;;
  esac
  sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -q && $sudo apt-get install -y "$deb" || exit 1
fi
"$wlrun" --version || exit 1
status=0
fail() { [ "$status" -ne 0 ] || status=$1; }

for recipe in bench/*.lua; do
  "$wlrun" --compile-only "$recipe" || fail $?
done

if ! "$wlrun" info >/dev/null 2>&1; then
  echo "ci.sh: no GPU here (wlrun info): kernels compiled, nothing measured"
  exit "$status"
fi

mkdir -p out
for recipe in bench/*.lua; do
  name=$(basename "$recipe" .lua)
  if ! "$wlrun" "$recipe" -o "out/$name.json"; then
    fail 1
    continue
  fi
  baseline=bench/$name.baseline.json
  if [ -f "$baseline" ]; then
    "$wlrun" compare "$baseline" "out/$name.json" --fail-above "$fail_above" || fail $?
  else
    echo "ci.sh: no baseline for $recipe: store one with: cp out/$name.json $baseline"
  fi
done
exit "$status"
]==]

-- GitHub Actions: the kernels compiled on a CPU runner, the recipes run and gated on a runner of
-- the label `gpu`; on both, ci.sh installs wlrun from the .deb that WLRUN_DEB (a repository
-- variable) names where the runner has none
T.github = [==[
# The benchmarks of this repository (wlrun init): every kernel compiled on any runner; the
# recipes run and gated against their stored baselines (bench/NAME.baseline.json) on a runner
# with a GPU. Set the repository variable WLRUN_DEB to the URL of wlrun's .deb (docs/install.md):
# bench/ci.sh installs it on a runner that has no wlrun (with sudo where the runner is not root).
# Give a self-hosted runner with an NVIDIA GPU and the CUDA toolkit the label `gpu`.
name: benchmarks
on: [push, pull_request]
env:
  WLRUN_DEB: ${{ vars.WLRUN_DEB }}
jobs:
  compile:
    runs-on: ubuntu-latest
    container: nvidia/cuda:13.0.0-devel-ubuntu24.04
    steps:
      - uses: actions/checkout@v4
      - name: curl, to fetch wlrun's .deb
        run: apt-get update && apt-get install -y curl
      - name: compile every kernel (no GPU)
        run: sh bench/ci.sh
  gate:
    runs-on: [self-hosted, gpu]
    needs: compile
    steps:
      - uses: actions/checkout@v4
      - name: run and gate the recipes
        run: sh bench/ci.sh
      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: benchmark-results
          path: out/
]==]

-- GitLab CI: the same two jobs, in a file for the project's .gitlab-ci.yml to include
T.gitlab = [==[
# The benchmarks of this repository (wlrun init), for GitLab CI: add to .gitlab-ci.yml
#   include:
#     - local: bench/gitlab-ci.yml
# Set the CI/CD variable WLRUN_DEB to the URL of wlrun's .deb (docs/install.md): bench/ci.sh
# installs it on a runner that has no wlrun (with sudo where the runner is not root). Tag a runner
# with an NVIDIA GPU and the CUDA toolkit `gpu`.
bench-compile:
  image: nvidia/cuda:13.0.0-devel-ubuntu24.04
  script:
    - apt-get update && apt-get install -y curl
    - sh bench/ci.sh
bench-gate:
  tags: [gpu]
  needs: [bench-compile]
  script:
    - sh bench/ci.sh
  artifacts:
    when: always
    paths: [out/]
]==]

-- what wlrun writes that is not to be committed: the CI script's results, the history's default
-- database
T.gitignore = [==[
# wlrun (wlrun init): the benchmarks' results and the history's database
out/
.wlrun/
]==]

return T
