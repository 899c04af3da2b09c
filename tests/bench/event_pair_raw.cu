// Benchmark helper (docs/measuring.md, "Cold samples with the L2 flushed: the blocking kernel"):
// a spin kernel of NS nanoseconds timed by an event pair around each launch in every arrangement
// tried on the H200 — a stream held by a blocking kernel, with and without the L2 flush, not
// held, a kernel before the start event, a CUDA graph of event-record and kernel nodes — beside
// a graph replay of 16 launches timed as one. Prints the median of each, in microseconds.
//   event_pair_raw [NS]
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x)                                        \
  do {                                               \
    cudaError_t e = (x);                             \
    if (e != cudaSuccess) {                          \
      printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      exit(1);                                       \
    }                                                \
  } while (0)

__global__ void spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
__global__ void block(volatile int *flag, int gen) {
  while (*flag < gen) {}
}

static double med(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char **argv) {
  unsigned long long ns = argc > 1 ? strtoull(argv[1], 0, 10) : 7000;
  const int K = 16, ROUNDS = 25;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int l2;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  size_t fb = 2 * (size_t)l2;
  void *flush;
  CK(cudaMalloc(
      &flush,
      fb)); // twice the L2, as wlrun wrote when docs/measuring.md's table was made (now once)
  int *flag;
  CK(cudaMallocHost(&flag, sizeof(int)));
  *flag = 0;
  int gen = 0;
  cudaEvent_t ev[2 * K];
  for (int i = 0; i < 2 * K; i++) CK(cudaEventCreate(&ev[i]));
  for (int i = 0; i < 50; i++) spin<<<1, 1, 0, s>>>(ns);
  CK(cudaStreamSynchronize(s));
  auto read = [&](std::vector<double> &out, int per) {
    for (int j = 0; j < K; j++) {
      float ms;
      CK(cudaEventElapsedTime(&ms, ev[2 * j], ev[2 * j + 1]));
      out.push_back(ms * 1e3 / per);
    }
  };
  // A/B: stream behind a blocking kernel, with and without the flush; C: not blocked
  for (int variant = 0; variant < 4; variant++) {
    std::vector<double> t;
    for (int r = 0; r < ROUNDS; r++) {
      bool blocked = variant != 2, fl = variant == 0 || variant == 2;
      if (blocked) block<<<1, 1, 0, s>>>(flag, ++gen);
      for (int j = 0; j < K; j++) {
        if (fl) CK(cudaMemsetAsync(flush, j, fb, s));
        if (variant == 3) spin<<<1, 1, 0, s>>>(ns); // a kernel before the start event (no flush)
        CK(cudaEventRecord(ev[2 * j], s));
        spin<<<1, 1, 0, s>>>(ns);
        CK(cudaEventRecord(ev[2 * j + 1], s));
      }
      if (blocked) __atomic_store_n(flag, gen, __ATOMIC_SEQ_CST);
      CK(cudaStreamSynchronize(s));
      read(t, 1);
    }
    const char *names[] = {"stream blocked, flush", "stream blocked, no flush",
                           "stream not blocked, flush", "stream blocked, kernel before start"};
    printf("%-40s %8.3f us\n", names[variant], med(t));
  }
  // D/E: a graph of K samples: [memset] -> ev0 -> kernel -> ev1 -> ...
  for (int fl = 1; fl >= 0; fl--) {
    cudaGraph_t g;
    CK(cudaGraphCreate(&g, 0));
    cudaGraphNode_t prev = nullptr, n;
    void *args[] = {&ns};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)spin;
    kp.gridDim = dim3(1);
    kp.blockDim = dim3(1);
    kp.kernelParams = args;
    for (int j = 0; j < K; j++) {
      if (fl) {
        cudaMemsetParams mp = {};
        mp.dst = flush;
        mp.value = j;
        mp.elementSize = 1;
        mp.width = fb;
        mp.height = 1;
        CK(cudaGraphAddMemsetNode(&n, g, prev ? &prev : nullptr, prev ? 1 : 0, &mp));
        prev = n;
      }
      CK(cudaGraphAddEventRecordNode(&n, g, prev ? &prev : nullptr, prev ? 1 : 0, ev[2 * j]));
      prev = n;
      CK(cudaGraphAddKernelNode(&n, g, &prev, 1, &kp));
      prev = n;
      CK(cudaGraphAddEventRecordNode(&n, g, &prev, 1, ev[2 * j + 1]));
      prev = n;
    }
    cudaGraphExec_t x;
    CK(cudaGraphInstantiate(&x, g, 0));
    CK(cudaGraphLaunch(x, s));
    CK(cudaStreamSynchronize(s));
    std::vector<double> t;
    for (int r = 0; r < ROUNDS; r++) {
      CK(cudaGraphLaunch(x, s));
      CK(cudaStreamSynchronize(s));
      read(t, 1);
    }
    printf("%-40s %8.3f us\n",
           fl ? "graph of samples with event nodes, flush" : "graph of samples with event nodes",
           med(t));
  }
  // F: reference: a graph of 16 kernels timed by one pair, per launch
  {
    cudaGraph_t g;
    cudaGraphExec_t x;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int j = 0; j < K; j++) spin<<<1, 1, 0, s>>>(ns);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&x, g, 0));
    std::vector<double> t;
    for (int r = 0; r < ROUNDS * K; r++) {
      CK(cudaEventRecord(ev[0], s));
      CK(cudaGraphLaunch(x, s));
      CK(cudaEventRecord(ev[1], s));
      CK(cudaStreamSynchronize(s));
      float ms;
      CK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
      t.push_back(ms * 1e3 / K);
    }
    printf("%-40s %8.3f us\n", "graph replay of 16 kernels, per launch", med(t));
  }
  return 0;
}
