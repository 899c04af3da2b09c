/* Baseline for tests/bench/modes.lua: raw C event loops of each timing mode around a spin
 * kernel of known duration, written the way one would by hand.
 *   modes_raw NS MODE N PER   (MODE: cold | batch | graph)
 * prints "median_seconds" of N samples (per launch), after a warmup of N/5 + 5 samples. */
#include "bench_nvrtc.h"

#include <string.h>

static const char *source =
    "extern \"C\" __global__ void spin(unsigned long long ns) {\n"
    "  unsigned long long t0, t;\n"
    "  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"
    "  do { asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); } while (t - t0 < ns);\n"
    "}\n";

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: modes_raw NS cold|batch|graph N PER\n");
    return 2;
  }
  unsigned long long ns = strtoull(argv[1], NULL, 10);
  const char *mode = argv[2];
  int n = atoi(argv[3]), per = atoi(argv[4]);
  cudaLibrary_t lib = bench_load(source);
  cudaKernel_t k;
  CHECK(cudaLibraryGetKernel(&k, lib, "spin"));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  void *args[] = {&ns};
  dim3 one = {1, 1, 1};
  int warm = n / 5 + 5, total = warm + n;
  cudaEvent_t *ev = malloc(sizeof *ev * 2 * (size_t)total);
  for (int i = 0; i < 2 * total; i++) CHECK(cudaEventCreate(&ev[i]));
  cudaGraphExec_t exec = NULL;
  if (strcmp(mode, "graph") == 0) {
    cudaGraph_t g;
    cudaStream_t cs;
    CHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    CHECK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
    for (int j = 0; j < per; j++) CHECK(cudaLaunchKernel((const void *)k, one, one, args, 0, cs));
    CHECK(cudaStreamEndCapture(cs, &g));
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    for (int j = 0; j < 3; j++) CHECK(cudaGraphLaunch(exec, s));
  }
  for (int i = 0; i < total; i++) {
    CHECK(cudaEventRecord(ev[2 * i], s));
    if (exec) CHECK(cudaGraphLaunch(exec, s));
    else
      for (int j = 0; j < (strcmp(mode, "batch") == 0 ? per : 1); j++)
        CHECK(cudaLaunchKernel((const void *)k, one, one, args, 0, s));
    CHECK(cudaEventRecord(ev[2 * i + 1], s));
  }
  CHECK(cudaStreamSynchronize(s));
  double *t = malloc(sizeof *t * (size_t)n);
  int div = strcmp(mode, "cold") == 0 ? 1 : per;
  for (int i = 0; i < n; i++) {
    float ms;
    CHECK(cudaEventElapsedTime(&ms, ev[2 * (warm + i)], ev[2 * (warm + i) + 1]));
    t[i] = ms * 1e-3 / div;
  }
  qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
  printf("%.9e\n", n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2);
  return 0;
}
