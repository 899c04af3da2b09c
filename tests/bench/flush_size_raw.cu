// Benchmark helper (docs/benchmarks.md, "How much an L2 flush must write"): how cold a read is
// after a flush of a given size. A kernel reads a buffer that fits in the L2 (a quarter, a half,
// four fifths of it) once per sample; before each sample a memset of F bytes of another buffer
// is the flush, F from none to twice the L2 (what wlrun wrote before 2026-12-01; it now writes
// the L2's size once, src/engine/l2_flush.c, by this program's table). Each sample:
// the flush, the start event, the read, the stop event; the cells interleaved. Prints the median
// read time of each pair in microseconds, the flush's own time, each flush's warmest read as a
// ratio to the same read after twice the L2, and the smallest flush with no read faster than
// after twice the L2 by 1 % or more.
//   flush_size_raw [SAMPLES]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#define CK(x)                                        \
  do {                                               \
    cudaError_t e = (x);                             \
    if (e != cudaSuccess) {                          \
      printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      exit(1);                                       \
    }                                                \
  } while (0)

__global__ void read_all(const float4 *p, size_t n, float *out) {
  float s = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    float4 v = p[i];
    s += v.x + v.y + v.z + v.w;
  }
  if (s == 12345.678f) out[0] = s; // keeps the loads; never true for the zeros read here
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char **argv) {
  int samples = argc > 1 ? atoi(argv[1]) : 400;
  if (samples < 10) samples = 10;
  int l2, sms;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const double reads[] = {0.25, 0.5, 0.8};                        // x the L2
  const double flushes[] = {0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 2}; // x the L2
  const int R = sizeof reads / sizeof *reads, F = sizeof flushes / sizeof *flushes;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  size_t fb = 2 * (size_t)l2, rb = (size_t)(reads[R - 1] * l2) / 16 * 16;
  void *flush, *buf;
  float *out;
  CK(cudaMalloc(&flush, fb));
  CK(cudaMalloc(&buf, rb));
  CK(cudaMalloc(&out, sizeof(float)));
  CK(cudaMemset(buf, 0, rb));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  printf("L2 %.1f MiB, %d samples a cell; median read time (us) after a flush of F x the L2\n",
         l2 / 1048576.0, samples);
  printf("%-12s", "read \\ F");
  for (int f = 0; f < F; f++) printf("%9.2f", flushes[f]);
  printf("\n");
  // Interleaved: each round times every (read, flush) cell once, in an order rotated by the
  // round, with no synchronisation between the flush and its read (as in wlrun's cold samples:
  // the flush, the start event, the work, the stop event), so that a drift of the clocks over
  // the run falls on every cell alike. One synchronisation per round.
  std::vector<std::vector<std::vector<double>>> t(R, std::vector<std::vector<double>>(F));
  std::vector<cudaEvent_t> ev(2 * R * F);
  for (auto &event : ev) CK(cudaEventCreate(&event));
  for (int i = 0; i < samples + 5; i++) {
    for (int c = 0; c < R * F; c++) {
      int cell = (c + i) % (R * F), r = cell / F, f = cell % F;
      size_t fbytes = (size_t)(flushes[f] * l2), n = (size_t)(reads[r] * l2) / 16;
      if (fbytes) CK(cudaMemsetAsync(flush, (i + c) & 0xff, fbytes, s));
      CK(cudaEventRecord(ev[2 * cell], s));
      read_all<<<sms * 8, 256, 0, s>>>((const float4 *)buf, n, out);
      CK(cudaGetLastError());
      CK(cudaEventRecord(ev[2 * cell + 1], s));
    }
    CK(cudaStreamSynchronize(s));
    for (int cell = 0; cell < R * F && i >= 5;
         cell++) { // the first few warm the clocks and the code
      float ms;
      CK(cudaEventElapsedTime(&ms, ev[2 * cell], ev[2 * cell + 1]));
      t[cell / F][cell % F].push_back(ms * 1e3);
    }
  }
  std::vector<std::vector<double>> med(R, std::vector<double>(F));
  for (int r = 0; r < R; r++) {
    printf("%6.2f x L2 ", reads[r]);
    for (int f = 0; f < F; f++) printf("%9.2f", med[r][f] = median(t[r][f]));
    printf("\n");
  }
  std::vector<double> flush_us(F);
  for (int f = 1; f < F; f++) {
    size_t fbytes = (size_t)(flushes[f] * l2);
    std::vector<double> ft;
    for (int i = 0; i < samples + 5; i++) {
      CK(cudaEventRecord(a, s));
      CK(cudaMemsetAsync(flush, i & 0xff, fbytes, s));
      CK(cudaEventRecord(b, s));
      CK(cudaStreamSynchronize(s));
      float ms;
      CK(cudaEventElapsedTime(&ms, a, b));
      if (i >= 5) ft.push_back(ms * 1e3);
    }
    flush_us[f] = median(ft);
  }
  printf("%-12s", "flush (us)");
  for (int f = 0; f < F; f++) printf("%9.2f", flush_us[f]);
  printf("\n");
  // each flush's warmest read against the same read after twice the L2: a ratio under 1 is a
  // read that found some of its data still in the L2
  printf("%-12s", "worst ratio");
  int smallest = F - 1;
  for (int f = 0; f < F; f++) {
    double worst = 1e9;
    for (int r = 0; r < R; r++) worst = std::min(worst, med[r][f] / med[r][F - 1]);
    printf("%9.3f", worst);
    if (f > 0 && f < smallest && worst >= 0.99) smallest = f;
  }
  printf("\n");
  printf("the smallest flush as cold as 2 x L2 (no read faster by 1 %% or more): %.2f x L2 (%.2f "
         "us a flush, against %.2f)\n",
         flushes[smallest], flush_us[smallest], flush_us[F - 1]);
  return 0;
}
