/* Baseline for tests/bench/launch_overhead.lua: the host cost of enqueueing an empty kernel
 * with a plain C loop of cudaLaunchKernel. The kernel is compiled with NVRTC and loaded with
 * cudaLibraryLoadData, as wlrun does, so that only the launch path differs. Before each timed
 * batch a 3 ms spin kernel keeps the GPU busy, so that every launch of every path is queued
 * behind it: the enqueue cost is measured in one driver state, not raced against execution.
 * Prints one line: "raw_c_loop <median ns per launch> <p10> <p90>". */
#include "bench_nvrtc.h"

#include <time.h>

#define SOURCE                                                                                \
  "extern \"C\" __global__ void empty() {}\n"                                                 \
  "extern \"C\" __global__ void spin(unsigned long long ns) {\n"                              \
  "  unsigned long long t0, t;\n"                                                             \
  "  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"                            \
  "  do { asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); } while (t - t0 < ns);\n" \
  "}\n"

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
  int batch = argc > 1 ? atoi(argv[1]) : 256, rounds = argc > 2 ? atoi(argv[2]) : 400;
  cudaLibrary_t lib = bench_load(SOURCE);
  cudaKernel_t kernel, spin;
  CHECK(cudaLibraryGetKernel(&kernel, lib, "empty"));
  CHECK(cudaLibraryGetKernel(&spin, lib, "spin"));
  unsigned long long spin_ns = 3000000;
  void *spin_args[] = {&spin_ns};
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); /* as wl.stream() makes */
  dim3 one = {1, 1, 1};
  double *per = malloc(sizeof *per * (size_t)rounds);
  for (int r = -rounds / 4; r < rounds; r++) { /* the first quarter warms up */
    CHECK(cudaLaunchKernel((const void *)spin, one, one, spin_args, 0, s));
    double t0 = now_ns();
    for (int i = 0; i < batch; i++)
      CHECK(cudaLaunchKernel((const void *)kernel, one, one, NULL, 0, s));
    double t1 = now_ns();
    CHECK(cudaStreamSynchronize(s));
    if (r >= 0) per[r] = (t1 - t0) / batch;
  }
  qsort(per, (size_t)rounds, sizeof *per, bench_cmp_double);
  printf("raw_c_loop %.1f %.1f %.1f\n", per[rounds / 2], per[rounds / 10], per[rounds * 9 / 10]);
  return 0;
}
