/* Shared by the raw C baselines of tests/bench: checks, and an NVRTC-compiled library loaded
 * the way wlrun loads kernels (cudaLibraryLoadData), so that only the path under test differs. */
#ifndef WL_BENCH_NVRTC_H
#define WL_BENCH_NVRTC_H

#include <cuda_runtime_api.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                   \
  do {                                             \
    int e_ = (int)(x);                             \
    if (e_ != 0) {                                 \
      fprintf(stderr, "%s failed (%d)\n", #x, e_); \
      exit(1);                                     \
    }                                              \
  } while (0)

/* compiles source for device 0's architecture and loads it */
static inline cudaLibrary_t bench_load(const char *source) {
  int dev, major, minor;
  CHECK(cudaSetDevice(0));
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  char arch[32];
  snprintf(arch, sizeof arch, "-arch=sm_%d%d", major, minor);
  const char *opts[] = {arch};
  nvrtcProgram prog;
  CHECK(nvrtcCreateProgram(&prog, source, "bench.cu", 0, NULL, NULL));
  CHECK(nvrtcCompileProgram(prog, 1, opts));
  size_t size;
  CHECK(nvrtcGetCUBINSize(prog, &size));
  char *cubin = malloc(size);
  if (!cubin) exit(1);
  CHECK(nvrtcGetCUBIN(prog, cubin));
  CHECK(nvrtcDestroyProgram(&prog));
  cudaLibrary_t lib;
  CHECK(cudaLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0));
  free(cubin);
  return lib;
}

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#endif
