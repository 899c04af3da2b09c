#!/usr/bin/env bash
# The GPU check, run on the GPU machine from the repository root with build-static/ carried
# there (scripts/build-static.sh). Builds nothing. Runs every spec suite (the GPU specs run
# for real there), the benchmarks and the scenarios, then prints a short table. Logs and result
# files go to a work folder, packed at the end into $OUT/gpu-run.tar.gz (or /tmp/wlrun-gpu).
set -uo pipefail
root=$(pwd)
dest=${OUT:-/tmp/wlrun-gpu}
# WLRUN_GPU_LOGS=out: the logs straight into $OUT (they come back even when a call runs out of time)
if [ "${WLRUN_GPU_LOGS:-}" = out ] && [ -n "${OUT:-}" ]; then out=$OUT; else out=$(mktemp -d /tmp/wlrun-gpu.XXXXXX); fi
mkdir -p "$dest"
bin=$root/build-static/wlrun
bundle=$root/build-static/busted
export WLRUN_BIN=$bin WLRUN_SOURCE_DIR=$root WLRUN_NVTX_RECORDER=$root/build-static/libnvtx_recorder.so WLRUN_NVTX_SECOND=$root/build-static/nvtx_second.so
export WLRUN_USERLIB=$root/build-static/libwlrun_userlib.so # docs/libraries.md: the library the specs load
# the process's end (tests/e2e/process_end_spec.lua): libraries whose destructors leave a mark
export WLRUN_EXIT_MARK_LIB=$root/build-static/libexit_mark.so WLRUN_EXIT_MARK_KEPT_LIB=$root/build-static/libexit_mark_kept.so
# file systems that refuse hard links, or fill up and refuse shared mappings (LD_PRELOAD fixtures:
# tests/e2e/output_files_spec.lua, tests/spec/trace_library_spec.lua)
export WLRUN_NO_HARDLINKS_LIB=$root/build-static/libno_hardlinks.so WLRUN_NO_ROOM_LIB=$root/build-static/libno_room.so
# wlrun trace: the injection library and the programs its specs run under it
export WLRUN_TRACE_LIB=$root/build-static/libwlrun_trace.so WLRUN_TRACE_PROGRAM=$root/build-static/trace_nvtx_program
export WLRUN_TRACE_CUDA_PROGRAM=$root/build-static/trace_cuda_program WLRUN_TRACE_NVTX_PUSH=$root/build-static/libtrace_nvtx_push.so
export LUA_PATH="$bundle/share/?.lua;$bundle/share/?/init.lua;$root/tests/?.lua;;"
export LUA_CPATH="$bundle/lib/?.so;;"

names=() codes=() secs=()
step() { # step NAME COMMAND...: runs, logs to $out/NAME.log, records the exit code
  local name=$1; shift
  local t0=$(date +%s.%N)
  echo "=== $name: $*" >"$out/$name.log"
  if [ -n "${WLRUN_GPU_STEP_TIMEOUT:-}" ]; then # each step ends within it, so the summary is written
    timeout -k 15 "$WLRUN_GPU_STEP_TIMEOUT" "$@" >>"$out/$name.log" 2>&1
  else
    "$@" >>"$out/$name.log" 2>&1
  fi
  local rc=$?
  tail -n "${WLRUN_GPU_TAIL:-40}" "$out/$name.log"
  names+=("$name"); codes+=("$rc"); secs+=("$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')")
}

# what compute-sanitizer puts into its target's environment: wlrun keeps every exit handler
# where it finds LD_PRELOAD, CUDA_INJECTION64_PATH and the like (docs/architecture.md)
sanitizer_env_step() {
  step sanitizer-env bash -c 'compute-sanitizer /usr/bin/env | grep -E "PRELOAD|INJECTION|AUDIT|SANITIZER" || echo "none of them"'
}

# cuBLAS's first calls asked ahead (wl.cublas.prepare): the first calls, what the thread
# changes in launches timed meanwhile (and in the timing floor) and the blocking kernels it makes
# give up; the CUDA context's cost with each of wlrun's threads started before it; the run's end
# without the exit handlers and with them (WLRUN_EXIT_HANDLERS=1); the sweep with
# --no-prepare (A) against the default (B), with the clocks free and locked (the GPU's heat:
# docs/benchmarks.md)
prepare_steps() {
  step bench-cublas-first env WLRUN_BIN="$bin" "$bin" tests/bench/cublas_first.lua -- 5
  step bench-stall-probe env WLRUN_BIN="$bin" "$bin" tests/bench/stall_probe.lua -- 3
  step bench-context-cost env WLRUN_BIN="$bin" "$bin" tests/bench/context_cost.lua -- 7
  step bench-end-cost tests/bench/end_cost.sh "$bin" scenarios/gemm_sweep.lua 4
  step bench-end-cost-handlers env WLRUN_EXIT_HANDLERS=1 tests/bench/end_cost.sh "$bin" scenarios/gemm_sweep.lua 4
  command -v compute-sanitizer >/dev/null && sanitizer_env_step
  step ab-prepare env AB_ARGS_A=--no-prepare tests/bench/ab_sweep.sh "$bin" "$bin" scenarios/gemm_sweep.lua "$out/ab-prepare"
  step ab-prepare-locked env AB_ARGS_A="--no-prepare --lock-clocks base" AB_ARGS_B="--lock-clocks base" \
    tests/bench/ab_sweep.sh "$bin" "$bin" scenarios/gemm_sweep.lua "$out/ab-prepare-locked"
}

# PART (first argument): all (default), specs (the spec suites), rest (benchmarks, scenarios,
# compute-sanitizer): two calls of the device machine each stay under its 10 minutes; or costs
# (the GPU specs and the benchmarks of the harness's own cost and accuracy, issue 21); or ratios
# (a short call: the sweep's per-phase account, the harness's costs, the prepare steps above,
# the specs of wl.bench; with WLRUN_AB_OLD, the sweep's medians against that wlrun's); or
# prepare (the sweep's account, the prepare steps and the cuBLAS specs); or trace (wlrun trace on
# PyTorch: the loop shapes against the program's own timing, the hook, MFU, ranks, the tracing cost)
# or exact (auto's samples against raw C graphs, adaptive stopping's chunks, nvcc beside NVRTC,
# the kernel panel where panel/ is carried, and with WLRUN_AB_OLD the sweep against that wlrun)
# or speed (the harness's own time: kernels compiled ahead, the accounts of a sweep and of tiny
# configurations, a bigger sweep's bound on several GPUs) or filter (the specs of WLRUN_GPU_SPECS
# whose names match one of WLRUN_GPU_FILTER's Lua patterns, separated by |). The suites in calls
# that each end within the device machine's 10 minutes: gpu (the GPU suite but the loop shapes,
# and bench-launch), suites (spec and e2e but the Python hook's spec), hook (that spec and the
# trace library's), loops-own and loops-hook (the loop shapes in two halves; loops: all of them).
# sampling: GPU activity on a sample of the steps (--gpu-every auto): the step marks of each kind,
# the library's W and B records and idle marks on steps not recorded,
# a launch's cost recorded and not, the 2 ms MLP's cost by variant (about 7 minutes). wlrun trace
# samples by default; WLRUN_TRACE_GPU_EVERY=1 runs any part's traces with every step recorded
part=${1:-all}
case $part in
  all | specs | rest | costs | ratios | filter | gpu | suites | hook | loops | loops-own | loops-hook) ;;
  trace | exact | tracecost | sampling | speed | prepare) ;;
  *) echo "run-on-gpu.sh: no part named '$part' (see the comment above)" >&2; exit 2 ;;
esac
# specs_but DIR NAME: the spec files of DIR but NAME, as words (their names have no spaces)
specs_but() { for f in "$1"/*_spec.lua; do [ "${f##*/}" = "$2" ] || echo "$f"; done; }
export WLRUN_CACHE_DIR=/tmp/wlrun-gpu-cache
step version "$bin" --version
step nvidia-smi nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
step info "$bin" info
if [ "$part" = costs ]; then
  step busted-gpu "$bin" "$bundle/run.lua" -- -o gtest tests/gpu
  step bench-config-overhead env WLRUN_BIN="$bin" "$bin" tests/bench/config_overhead.lua -- scenarios/gemm_sweep.lua "$out/config_overhead.json"
  step bench-harness-costs env WLRUN_BIN="$bin" "$bin" tests/bench/harness_costs.lua -- "$root/build-static/nvml_raw" "$root/build-static/cublas_raw"
  step bench-tiny-sweep env WLRUN_BIN="$bin" "$bin" tests/bench/tiny_sweep.lua
  step bench-sample-memory "$bin" tests/bench/sample_memory.lua -- "$root/build-static/evidence_raw"
  # the same with its kernel compiled in the process (an empty cache): NVRTC's freed memory
  step bench-sample-memory-compiling env WLRUN_CACHE_DIR="$(mktemp -d)" "$bin" tests/bench/sample_memory.lua -- "$root/build-static/evidence_raw"
  step bench-modes "$bin" tests/bench/modes.lua -- "$root/build-static/evidence_raw"
  step bench-cold-l2 "$bin" tests/bench/cold_l2.lua -- "$root/build-static/evidence_raw"
  step bench-flush-size "$root/build-static/flush_size_raw"
  step bench-exit "$root/build-static/exit_raw"
  # the timing floor of an idle GPU against a busy one; --devices 0 against a plain run (what
  # the queue and its worker cost on one GPU)
  step bench-floor-warmth env WLRUN_BIN="$bin" "$bin" tests/bench/floor_warmth.lua -- 7
  step bench-devices-one env WLRUN_BIN="$bin" "$bin" tests/bench/devices_speedup.lua -- scenarios/gemm_sweep.lua 0
  # gemm_sweep's one warmup launch against five: the same medians (a second run of one as the control)
  step gemm-warmup1 "$bin" scenarios/gemm_sweep.lua --quiet -o "$out/warmup1.json"
  step gemm-warmup5 "$bin" scenarios/gemm_sweep.lua --quiet --warmup 5 -o "$out/warmup5.json"
  step gemm-warmup1b "$bin" scenarios/gemm_sweep.lua --quiet -o "$out/warmup1b.json"
  step compare-control "$bin" compare "$out/warmup1.json" "$out/warmup1b.json"
  step compare-warmup "$bin" compare "$out/warmup1.json" "$out/warmup5.json"
elif [ "$part" = ratios ]; then
  step bench-config-overhead env WLRUN_BIN="$bin" "$bin" tests/bench/config_overhead.lua -- scenarios/gemm_sweep.lua "$out/config_overhead.json"
  step bench-harness-costs env WLRUN_BIN="$bin" "$bin" tests/bench/harness_costs.lua -- "$root/build-static/nvml_raw" "$root/build-static/cublas_raw"
  step bench-tiny-sweep env WLRUN_BIN="$bin" "$bin" tests/bench/tiny_sweep.lua
  step bench-flush-size "$root/build-static/flush_size_raw"
  step bench-pipeline "$root/build-static/pipeline_raw" 100 blocking
  step bench-exit "$root/build-static/exit_raw"
  step bench-cold-l2 "$bin" tests/bench/cold_l2.lua -- "$root/build-static/evidence_raw"
  step bench-blocks-in-flight "$bin" tests/bench/blocks_in_flight.lua
  # a change to the measurement against the build before it (WLRUN_AB_OLD: that build's wlrun)
  [ -n "${WLRUN_AB_OLD:-}" ] && step ab-sweep tests/bench/ab_sweep.sh "$WLRUN_AB_OLD" "$bin" scenarios/gemm_sweep.lua "$out/ab"
  prepare_steps
  step busted-bench "$bin" "$bundle/run.lua" -- -o gtest tests/gpu/bench_spec.lua tests/gpu/gemm_spec.lua tests/gpu/device_spec.lua tests/gpu/deep_measure_spec.lua tests/gpu/cublas_spec.lua
elif [ "$part" = filter ]; then # a rerun of chosen GPU specs: WLRUN_GPU_SPECS (files), WLRUN_GPU_FILTER
  export WLRUN_PYTHON=${WLRUN_PYTHON:-python3} # WLRUN_TRACE_NVTX_PUSH is set above
  filters=()
  IFS='|' read -ra pats <<<"${WLRUN_GPU_FILTER:-.}" # patterns separated by |: a spec matching any
  for pat in "${pats[@]}"; do filters+=(--filter "$pat"); done
  # shellcheck disable=SC2086 # the files are words
  step busted-filter "$bin" "$bundle/run.lua" -- -o gtest "${filters[@]}" ${WLRUN_GPU_SPECS:-tests/gpu}
elif [ "$part" = gpu ]; then # the GPU suite but its loop shapes (about 5 minutes), and bench-launch
  export WLRUN_PYTHON=${WLRUN_PYTHON:-python3}
  mapfile -t files < <(specs_but tests/gpu trace_loops_spec.lua)
  step busted-gpu "$bin" "$bundle/run.lua" -- -o gtest "${files[@]}"
  step bench-launch "$bin" tests/bench/launch_overhead.lua -- "$root/build-static/launch_raw"
elif [ "$part" = suites ]; then # the spec and e2e suites but the Python hook's spec (about 5 minutes)
  export WLRUN_PYTHON=${WLRUN_PYTHON:-python3}
  mapfile -t files < <(specs_but tests/e2e trace_auto_spec.lua)
  step busted-suites "$bin" "$bundle/run.lua" -- -o gtest tests/spec "${files[@]}"
elif [ "$part" = hook ]; then # the Python hook's spec and the trace library's (about 8 minutes)
  export WLRUN_PYTHON=${WLRUN_PYTHON:-python3}
  step busted-hook "$bin" "$bundle/run.lua" -- -o gtest tests/e2e/trace_auto_spec.lua \
    tests/spec/trace_library_spec.lua
elif [ "$part" = loops ] || [ "$part" = loops-own ] || [ "$part" = loops-hook ]; then
  # wlrun trace against the programs' own timing, by loop shape: all (about 10 minutes), or in
  # two calls: the shapes with the program's own ranges and the compiled ones (loops-own), then
  # the other shapes of the hook (loops-hook)
  export WLRUN_PYTHON=${WLRUN_PYTHON:-python3}
  which=()
  if [ "$part" = loops-own ]; then
    for pat in '%] after$' '%] inside$' '%] none$' '%] item10$' 'none bf16$' 'slow loader$' \
      compiled 'CUDA graphs' 'CPU data$' 'the table'; do which+=(--filter "$pat"); done
  elif [ "$part" = loops-hook ]; then
    which=(--filter 'no ranges' --filter 'the table' --filter-out compiled --filter-out 'CUDA graphs')
  fi
  step busted-trace-loops "$bin" "$bundle/run.lua" -- -o gtest "${which[@]}" tests/gpu/trace_loops_spec.lua
elif [ "$part" = trace ]; then # wlrun trace on PyTorch: loop shapes, the hook, MFU, ranks; its cost
  export WLRUN_TRACE_NVTX_PUSH=$root/build-static/libtrace_nvtx_push.so WLRUN_PYTHON=${WLRUN_PYTHON:-python3}
  step busted-trace-torch "$bin" "$bundle/run.lua" -- -o gtest tests/gpu/trace_loops_spec.lua tests/gpu/trace_torch_spec.lua
  step busted-trace-lib "$bin" "$bundle/run.lua" -- -o gtest tests/spec/trace_library_spec.lua tests/e2e/trace_auto_spec.lua
  step bench-trace "$bin" tests/bench/trace_overhead.lua
elif [ "$part" = exact ]; then # auto's samples against raw C graphs, adaptive stopping, nvcc beside NVRTC
  step toolkit bash -c 'command -v nvcc && nvcc --version | tail -1 && g++ --version | head -1'
  step busted-exact "$bin" "$bundle/run.lua" -- -o gtest tests/gpu/bench_spec.lua tests/gpu/deep_measure_spec.lua tests/gpu/cupti_spec.lua tests/gpu/modules_spec.lua
  step bench-auto-exact "$bin" tests/bench/auto_exact.lua -- "$root/build-static/evidence_raw"
  # what is left of auto's gap on short kernels: CUPTI's record against a graph's period per launch
  step bench-cupti-record "$bin" tests/bench/cupti_record.lua -- "$root/build-static/evidence_raw"
  step bench-nvrtc-nvcc "$bin" tests/bench/nvrtc_vs_nvcc.lua -- "$root/build-static/modules"
  [ -f panel/panel.lua ] && step panel "$bin" panel/panel.lua # docs/kernels.md: public kernels, NVRTC and nvcc
  [ -n "${WLRUN_AB_OLD:-}" ] && step ab-sweep tests/bench/ab_sweep.sh "$WLRUN_AB_OLD" "$bin" scenarios/gemm_sweep.lua "$out/ab"
  step evidence "$bin" tests/bench/evidence.lua -- "$root/build-static/evidence_raw"
elif [ "$part" = tracecost ]; then # wlrun trace's cost on the launch-bound 2 ms step, interleaved rounds
  step bench-trace env WLRUN_TRACE_ROUNDS="${WLRUN_TRACE_ROUNDS:-5}" "$bin" tests/bench/trace_overhead.lua -- python3 1024 \
    "${WLRUN_TRACE_VARIANTS:-untraced,nvtx,full,auto}"
  step bench-trace-launch env WLRUN_BIN="$bin" "$bin" tests/bench/trace_launch_cost.lua -- python3
  # the 10 ms step, auto's recorded steps taking 1 % (the default) or 0.25 % of a step
  step bench-trace-share env WLRUN_TRACE_ROUNDS="${WLRUN_TRACE_ROUNDS:-5}" WLRUN_TRACE_CPUS=2-9 \
    "$bin" tests/bench/trace_overhead.lua -- python3 8192 untraced,auto,auto-share-0.25
  # the hook's and the library's cost of one step, on the CPU (no GPU work: the machine's CPU)
  step bench-trace-step env WLRUN_BIN="$bin" "$bin" tests/bench/trace_step_cost.lua -- python3
  # the conv net of the loop shapes' spec, the template shape, by variant (where its cost goes)
  step bench-trace-conv env WLRUN_TRACE_ROUNDS="${WLRUN_TRACE_ROUNDS:-5}" "$bin" tests/bench/trace_overhead.lua -- \
    python3 conv "${WLRUN_TRACE_CONV_VARIANTS:-untraced,nvtx,nvtx-nohook,full,full-nohook,auto}"
elif [ "$part" = sampling ]; then
  export WLRUN_PYTHON=${WLRUN_PYTHON:-python3}
  step busted-trace-marks "$bin" "$bundle/run.lua" -- -o gtest tests/gpu/trace_marks_spec.lua
  # the loop's W and B records and idle marks on steps not recorded (the library's GPU cases)
  step busted-trace-lib "$bin" "$bundle/run.lua" -- -o gtest --filter "synchronisation" \
    tests/spec/trace_library_spec.lua
  step bench-trace-launch env WLRUN_BIN="$bin" WLRUN_TRACE_ROUNDS="${WLRUN_TRACE_ROUNDS:-3}" \
    "$bin" tests/bench/trace_launch_cost.lua -- python3
  # 300 steps traced and 300 after (50 of each left out), every process on CPUs 2-9
  # (WLRUN_TRACE_CPUS= for none; one H100 call so: the untraced runs spread 2.4 %, against 6.9 %
  # in an earlier call unpinned with shorter runs, which is no comparison yet)
  step bench-trace env WLRUN_TRACE_ROUNDS="${WLRUN_TRACE_ROUNDS:-3}" WLRUN_TRACE_STEPS=300 \
    WLRUN_TRACE_AFTER=300 WLRUN_TRACE_SKIP=50 WLRUN_TRACE_CPUS="${WLRUN_TRACE_CPUS-2-9}" \
    "$bin" tests/bench/trace_overhead.lua -- python3 1024 \
    "${WLRUN_TRACE_VARIANTS:-untraced,hook,nvtx-nohook,auto-sampled,auto-quiet}"
elif [ "$part" = speed ]; then # the harness's own time (issue 39): a cold kernel cache, a sweep's
  # account, tiny configurations, a bigger sweep's bound on several GPUs
  step busted-ahead "$bin" "$bundle/run.lua" -- -o gtest tests/gpu/compile_ahead_spec.lua tests/e2e/compile_ahead_spec.lua
  step bench-cold-cache env WLRUN_BIN="$bin" "$bin" tests/bench/cold_cache.lua -- scenarios/gemm_sweep.lua 3
  step bench-config-overhead env WLRUN_BIN="$bin" "$bin" tests/bench/config_overhead.lua -- scenarios/gemm_sweep.lua "$out/config_overhead.json"
  step bench-config-tiny env WLRUN_BIN="$bin" "$bin" tests/bench/config_overhead.lua -- tests/bench/tiny_cold.lua "$out/config_tiny.json"
  step bench-tiny-sweep env WLRUN_BIN="$bin" "$bin" tests/bench/tiny_sweep.lua
  step bench-devices-big env WLRUN_BIN="$bin" "$bin" tests/bench/devices_speedup.lua -- scenarios/gemm_sweep.lua 0 "-p K=1024,2048,4096,8192"
elif [ "$part" = prepare ]; then # the sweep's account, and the prepare steps alone
  step bench-config-overhead env WLRUN_BIN="$bin" "$bin" tests/bench/config_overhead.lua -- scenarios/gemm_sweep.lua "$out/config_overhead.json"
  prepare_steps
  step busted-cublas "$bin" "$bundle/run.lua" -- -o gtest tests/gpu/cublas_spec.lua
elif [ "$part" = all ] || [ "$part" = specs ]; then
  # WLRUN_GPU_SUITES: the suites of this call (the three take more than one call's 10 minutes)
  for suite in ${WLRUN_GPU_SUITES:-gpu spec e2e}; do
    step "busted-$suite" "$bin" "$bundle/run.lua" -- -o gtest "tests/$suite"
  done
fi
if [ "$part" = all ] || [ "$part" = rest ]; then
step bench-launch "$bin" tests/bench/launch_overhead.lua -- "$root/build-static/launch_raw"
step bench-modes "$bin" tests/bench/modes.lua -- "$root/build-static/evidence_raw"
step bench-cold-l2 "$bin" tests/bench/cold_l2.lua -- "$root/build-static/evidence_raw"
step bench-sample-memory "$bin" tests/bench/sample_memory.lua -- "$root/build-static/evidence_raw"
step bench-config-overhead env WLRUN_BIN="$bin" "$bin" tests/bench/config_overhead.lua
step bench-harness-costs "$bin" tests/bench/harness_costs.lua -- "$root/build-static/nvml_raw"
step evidence "$bin" tests/bench/evidence.lua -- "$root/build-static/evidence_raw"
step bench-cublas "$bin" tests/bench/cublas.lua -- "$root/build-static/cublas_raw" all
step bench-nvrtc-nvcc "$bin" tests/bench/nvrtc_vs_nvcc.lua -- "$root/build-static/modules"
step bench-json "$bin" tests/bench/json.lua
step bench-trace "$bin" tests/bench/trace_overhead.lua # PyTorch: wlrun trace's cost by step length
step bench-output "$bin" tests/bench/output_cost.lua
step gemm-sweep "$bin" scenarios/gemm_sweep.lua -o "$out/gemm.json" -o "$out/gemm.csv" -o "$out/gemm.md"
step bandwidth "$bin" scenarios/bandwidth.lua -o "$out/bandwidth.json" -o "$out/bandwidth.md"
step training-loop "$bin" scenarios/training_loop.lua -o "$out/train.json"
# naive against tiled GEMM through compare and plot (docs/compare.md)
step gemm-naive "$bin" scenarios/gemm_sweep.lua -p variant=naive --quiet -o "$out/naive.json"
step gemm-tiled "$bin" scenarios/gemm_sweep.lua -p variant=tiled --quiet -o "$out/tiled.json"
step compare "$bin" compare "$out/naive.json" "$out/tiled.json" --ignore variant -o "$out/compare.json" -o "$out/compare.md"
# compute-sanitizer's memcheck over the specs of wlrun's own kernels and a small sweep
if command -v compute-sanitizer >/dev/null; then
  sanitizer_env_step
  step memcheck-specs compute-sanitizer --tool memcheck --error-exitcode 1 "$bin" "$bundle/run.lua" -- -o gtest tests/gpu/cuda_spec.lua
  step memcheck-misuse compute-sanitizer --tool memcheck --error-exitcode 1 "$bin" "$bundle/run.lua" -- -o gtest tests/gpu/misuse_spec.lua
  step memcheck-sweep compute-sanitizer --tool memcheck --error-exitcode 1 "$bin" scenarios/gemm_sweep.lua --filter 'M == 1024 and K == 1024' --max-time 1s --quiet
fi
fi

{
  echo
  printf '%-16s %6s %8s\n' step exit seconds
  for i in "${!names[@]}"; do printf '%-16s %6s %8.1f\n' "${names[$i]}" "${codes[$i]}" "${secs[$i]}"; done
} | tee "$out/summary.txt"
if [ "$out" != "$dest" ]; then
  tar -C "$out" -czf "$dest/gpu-run.tar.gz" .
  cp "$out/summary.txt" "$dest/summary.txt"
fi
for c in "${codes[@]}"; do [ "$c" = 0 ] || exit 1; done
