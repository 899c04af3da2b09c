/* Baseline for tests/bench/launch_overhead.lua: the host cost of enqueueing an empty kernel
 * with a plain C loop of cudaLaunchKernel. The kernel is compiled with NVRTC and loaded with
 * cudaLibraryLoadData, as wlrun does, so that only the launch path differs. Before each timed
 * batch a 3 ms spin kernel keeps the GPU busy, so that every launch of every path is queued
 * behind it: the enqueue cost is measured in one driver state, not raced against execution.
 * Prints one line: "raw_c_loop <median ns per launch> <p10> <p90>". */
#include <cuda_runtime_api.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(x)                                                                               \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                                 \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)
#define NVCHECK(x)                                                                             \
  do {                                                                                         \
    nvrtcResult r_ = (x);                                                                      \
    if (r_ != NVRTC_SUCCESS) {                                                                 \
      fprintf(stderr, "%s: %s\n", #x, nvrtcGetErrorString(r_));                                \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

#define SOURCE                                                                                 \
  "extern \"C\" __global__ void empty() {}\n"                                                  \
  "extern \"C\" __global__ void spin(unsigned long long ns) {\n"                              \
  "  unsigned long long t0, t;\n"                                                              \
  "  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"                              \
  "  do { asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); } while (t - t0 < ns);\n"    \
  "}\n"

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int batch = argc > 1 ? atoi(argv[1]) : 256, rounds = argc > 2 ? atoi(argv[2]) : 400;
  int dev, major, minor;
  CHECK(cudaSetDevice(0));
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  char arch[32];
  snprintf(arch, sizeof arch, "-arch=sm_%d%d", major, minor);
  const char *opts[] = {arch};
  nvrtcProgram prog;
  NVCHECK(nvrtcCreateProgram(&prog, SOURCE, "empty.cu", 0, NULL, NULL));
  NVCHECK(nvrtcCompileProgram(prog, 1, opts));
  size_t size;
  NVCHECK(nvrtcGetCUBINSize(prog, &size));
  char *cubin = malloc(size);
  NVCHECK(nvrtcGetCUBIN(prog, cubin));
  cudaLibrary_t lib;
  cudaKernel_t kernel, spin;
  CHECK(cudaLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0));
  CHECK(cudaLibraryGetKernel(&kernel, lib, "empty"));
  CHECK(cudaLibraryGetKernel(&spin, lib, "spin"));
  unsigned long long spin_ns = 3000000;
  void *spin_args[] = {&spin_ns};
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  dim3 one = {1, 1, 1};
  double *per = malloc(sizeof *per * (size_t)rounds);
  for (int r = -rounds / 4; r < rounds; r++) { /* the first quarter warms up */
    CHECK(cudaLaunchKernel((const void *)spin, one, one, spin_args, 0, s));
    double t0 = now_ns();
    for (int i = 0; i < batch; i++) CHECK(cudaLaunchKernel((const void *)kernel, one, one, NULL, 0, s));
    double t1 = now_ns();
    CHECK(cudaStreamSynchronize(s));
    if (r >= 0) per[r] = (t1 - t0) / batch;
  }
  qsort(per, (size_t)rounds, sizeof *per, cmp);
  printf("raw_c_loop %.1f %.1f %.1f\n", per[rounds / 2], per[rounds / 10], per[rounds * 9 / 10]);
  return 0;
}
