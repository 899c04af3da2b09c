/* Raw C event loops for tests/bench/evidence.lua: the baseline that wlrun's modes, CuPy and
 * Triton are compared with, on the same kernel sources.
 *   evidence_raw spin NS      MODE N PER
 *   evidence_raw copy BYTES   MODE N PER   (scenarios/kernels/stream.cu: copy)
 *   evidence_raw gemm SIZE    MODE N PER   (scenarios/kernels/gemm.cu: gemm_tiled, fp32)
 * MODE: cold | batch | graph. Prints "median p10 p90 enqueue" in seconds per launch, after a
 * warmup of N/5 + 5 samples; enqueue is the median host time to enqueue one launch. */
#include "bench_nvrtc.h"

#include <string.h>
#include <time.h>

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) exit(1);
  s[n] = '\0';
  fclose(f);
  return s;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static const char *spin_src =
    "extern \"C\" __global__ void spin(unsigned long long ns) {\n"
    "  unsigned long long t0, t;\n"
    "  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"
    "  do { asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); } while (t - t0 < ns);\n"
    "}\n";

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: evidence_raw spin|copy|gemm PARAM cold|batch|graph N PER\n");
    return 2;
  }
  const char *kind = argv[1], *mode = argv[3];
  unsigned long long param = strtoull(argv[2], NULL, 10);
  int n = atoi(argv[4]), per = atoi(argv[5]);
  if (strcmp(mode, "cold") == 0) per = 1;
  cudaLibrary_t lib;
  cudaKernel_t k;
  void *args[8];
  dim3 grid = {1, 1, 1}, block = {1, 1, 1};
  unsigned long long ns = param;
  void *x = NULL, *y = NULL, *z = NULL;
  long n4 = 0;
  int size = 0;
  if (strcmp(kind, "spin") == 0) {
    lib = bench_load(spin_src);
    CHECK(cudaLibraryGetKernel(&k, lib, "spin"));
    args[0] = &ns;
  } else if (strcmp(kind, "copy") == 0) {
    lib = bench_load(read_text("scenarios/kernels/stream.cu"));
    CHECK(cudaLibraryGetKernel(&k, lib, "copy"));
    CHECK(cudaMalloc(&x, param));
    CHECK(cudaMalloc(&y, param));
    CHECK(cudaMemset(x, 1, param));
    n4 = (long)(param / 16);
    args[0] = &y, args[1] = &x, args[2] = &n4;
    grid.x = 1024, block.x = 512; /* as scenarios/bandwidth.lua binds it */
  } else {
    lib = bench_load(read_text("scenarios/kernels/gemm.cu"));
    CHECK(cudaLibraryGetKernel(&k, lib, "gemm_tiled"));
    size = (int)param;
    size_t bytes = (size_t)size * size * 4;
    CHECK(cudaMalloc(&x, bytes));
    CHECK(cudaMalloc(&y, bytes));
    CHECK(cudaMalloc(&z, bytes));
    CHECK(cudaMemset(x, 0, bytes));
    CHECK(cudaMemset(y, 0, bytes));
    args[0] = &x, args[1] = &y, args[2] = &z, args[3] = &size, args[4] = &size, args[5] = &size;
    grid.x = grid.y = (unsigned)((size + 31) / 32), block.x = block.y = 32;
  }
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int warm = n / 5 + 5, total = warm + n;
  cudaEvent_t *ev = malloc(sizeof *ev * 2 * (size_t)total);
  double *enq = malloc(sizeof *enq * (size_t)total), *t = malloc(sizeof *t * (size_t)n);
  for (int i = 0; i < 2 * total; i++) CHECK(cudaEventCreate(&ev[i]));
  cudaGraphExec_t exec = NULL;
  if (strcmp(mode, "graph") == 0) {
    cudaGraph_t g;
    cudaStream_t cs;
    CHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    CHECK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
    for (int j = 0; j < per; j++)
      CHECK(cudaLaunchKernel((const void *)k, grid, block, args, 0, cs));
    CHECK(cudaStreamEndCapture(cs, &g));
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    for (int j = 0; j < 3; j++) CHECK(cudaGraphLaunch(exec, s));
  }
  for (int i = 0; i < total; i++) {
    CHECK(cudaEventRecord(ev[2 * i], s));
    double t0 = now();
    if (exec) CHECK(cudaGraphLaunch(exec, s));
    else
      for (int j = 0; j < per; j++)
        CHECK(cudaLaunchKernel((const void *)k, grid, block, args, 0, s));
    enq[i] = (now() - t0) / per;
    CHECK(cudaEventRecord(ev[2 * i + 1], s));
  }
  CHECK(cudaStreamSynchronize(s));
  for (int i = 0; i < n; i++) {
    float ms;
    CHECK(cudaEventElapsedTime(&ms, ev[2 * (warm + i)], ev[2 * (warm + i) + 1]));
    t[i] = ms * 1e-3 / per;
  }
  qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
  qsort(enq + warm, (size_t)n, sizeof *enq, bench_cmp_double);
  printf("%.9e %.9e %.9e %.9e\n", t[n / 2], t[n / 10], t[n * 9 / 10], enq[warm + n / 2]);
  return 0;
}
