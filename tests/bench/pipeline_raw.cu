// Benchmark helper (docs/benchmarks.md, "Cold samples with the L2 flushed"): whether the host may
// queue the next block of cold samples while the GPU runs the block before without moving the
// samples. Each sample is wlrun's flushed cold sample (a memset of the L2's size, the start event,
// the kernel, the stop event); blocks of 16 are queued behind a gate the host opens once the block
// is queued. The arrangements, interleaved round by round in a rotating order:
//   one block at a time  the host waits for a block before it queues the next (wlrun's method)
//   the same, again      the control: how far two cells of one arrangement differ
//   same stream          the next block queued on the stream while the one before runs
//   two streams          the next block on the other stream, behind the last event of the one
//                        before, held by the blocking kernel
//   two streams, wait    the same, held by a stream wait on the flag (cuStreamWaitValue32)
//                        instead of a kernel
//   not blocked          no gate: the host queues each sample as the GPU runs the ones before
// Kernels: spins of 3, 7 and 20 us and a read of a quarter of the L2. Prints each cell's median
// (us) and each arrangement's difference from one block at a time, then the wall time a sample
// took in each arrangement. With `blocking`, the streams are blocking streams (ordered with the
// legacy default stream), as wlrun's own stream is; else non-blocking.
//   pipeline_raw [ROUNDS [blocking]]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>
#include <cuda.h>
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
__global__ void read_all(const float4 *p, size_t n, float *out) {
  float s = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    float4 v = p[i];
    s += v.x + v.y + v.z + v.w;
  }
  if (s == 12345.678f) out[0] = s;
}
__global__ void block(volatile int *flag, int gen) {
  while (*flag < gen) {}
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
static double now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

enum { K = 16, BLOCKS = 4, ARR = 6, KERNELS = 4 };
static const char *arr_names[ARR] = {"one block at a time", "the same, again",   "same stream",
                                     "two streams",         "two streams, wait", "not blocked"};
static const char *kernel_names[KERNELS] = {"spin 3 us", "spin 7 us", "spin 20 us", "read L2/4"};

struct rig {
  cudaStream_t s[2];
  cudaEvent_t ev[2][2 * K];
  int *flag, gen;
  void *flush, *buf;
  float *out;
  size_t fbytes, rn;
  int sms;
  CUresult (*wait_value)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
};

static void sample(rig &r, cudaStream_t s, cudaEvent_t a, cudaEvent_t b, int kernel, int i) {
  static const unsigned long long ns[] = {3000, 7000, 20000};
  CK(cudaMemsetAsync(r.flush, i & 0xff, r.fbytes, s));
  CK(cudaEventRecord(a, s));
  if (kernel < 3) spin<<<1, 1, 0, s>>>(ns[kernel]);
  else read_all<<<r.sms * 8, 256, 0, s>>>((const float4 *)r.buf, r.rn, r.out);
  CK(cudaGetLastError());
  CK(cudaEventRecord(b, s));
}

static void read_set(rig &r, int set, std::vector<double> &t) {
  CK(cudaEventSynchronize(r.ev[set][2 * K - 1]));
  for (int j = 0; j < K; j++) {
    float ms;
    CK(cudaEventElapsedTime(&ms, r.ev[set][2 * j], r.ev[set][2 * j + 1]));
    t.push_back(ms * 1e3);
  }
}

// queues block b of arrangement a on stream s, behind its gate, and opens the gate
static void queue_block(rig &r, int a, int b, cudaStream_t s, int kernel) {
  int set = b % 2, gen = ++r.gen;
  if ((a == 3 || a == 4) && b > 0) CK(cudaStreamWaitEvent(s, r.ev[1 - set][2 * K - 1], 0));
  if (a == 4) {
    if (r.wait_value(s, (CUdeviceptr)r.flag, (cuuint32_t)gen, CU_STREAM_WAIT_VALUE_GEQ) !=
        CUDA_SUCCESS) {
      printf("cuStreamWaitValue32 failed\n");
      exit(1);
    }
  } else if (a != 5) {
    block<<<1, 1, 0, s>>>(r.flag, gen);
    CK(cudaGetLastError());
  }
  for (int j = 0; j < K; j++)
    sample(r, s, r.ev[set][2 * j], r.ev[set][2 * j + 1], kernel, b * K + j);
  __atomic_store_n(r.flag, gen, __ATOMIC_SEQ_CST);
}

// BLOCKS blocks of arrangement a; returns the wall time
static double run(rig &r, int a, int kernel, std::vector<double> &t) {
  double t0 = now();
  for (int b = 0; b < BLOCKS; b++) {
    cudaStream_t s = (a == 3 || a == 4) ? r.s[b % 2] : r.s[0];
    queue_block(r, a, b, s, kernel);
    bool pipelined = a >= 2 && a <= 4;
    if (!pipelined) read_set(r, b % 2, t);
    else if (b > 0) read_set(r, (b - 1) % 2, t);
  }
  if (a >= 2 && a <= 4) read_set(r, (BLOCKS - 1) % 2, t);
  return now() - t0;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 100;
  if (rounds < 5) rounds = 5;
  rig r{};
  int l2;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  CK(cudaDeviceGetAttribute(&r.sms, cudaDevAttrMultiProcessorCount, 0));
  bool blocking = argc > 2 && std::string(argv[2]) == "blocking";
  unsigned flags = blocking ? cudaStreamDefault : cudaStreamNonBlocking;
  CK(cudaStreamCreateWithFlags(&r.s[0], flags));
  CK(cudaStreamCreateWithFlags(&r.s[1], flags));
  for (auto &set : r.ev)
    for (auto &event : set) CK(cudaEventCreate(&event));
  r.fbytes = (size_t)l2;
  r.rn = (size_t)l2 / 4 / 16;
  CK(cudaMalloc(&r.flush, r.fbytes));
  CK(cudaMalloc(&r.buf, r.rn * 16));
  CK(cudaMemset(r.buf, 0, r.rn * 16));
  CK(cudaMalloc(&r.out, sizeof(float)));
  CK(cudaMallocHost(&r.flag, sizeof(int)));
  *r.flag = 0;
  cudaDriverEntryPointQueryResult q;
  void *fn = nullptr;
  CK(cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &fn, 12000, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess || !fn) {
    printf("no cuStreamWaitValue32\n");
    return 1;
  }
  r.wait_value = (CUresult(*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int))fn;
  std::vector<double> t[ARR][KERNELS];
  double wall[ARR] = {}, count[ARR] = {}; // seconds and samples of each arrangement
  const int cells = ARR * KERNELS;
  for (int i = 0; i < rounds + 3; i++) {
    for (int c = 0; c < cells; c++) {
      int cell = (c + i) % cells, a = cell / KERNELS, k = cell % KERNELS;
      std::vector<double> got;
      double w = run(r, a, k, got);
      if (i < 3) continue; // the first rounds warm the clocks and the code
      t[a][k].insert(t[a][k].end(), got.begin(), got.end());
      wall[a] += w, count[a] += got.size();
    }
  }
  printf("%d rounds, %d blocks of %d flushed samples a cell, %s streams; median (us)\n", rounds,
         BLOCKS, K, blocking ? "blocking" : "non-blocking");
  printf("%-22s", "arrangement");
  for (int k = 0; k < KERNELS; k++) printf("%12s", kernel_names[k]);
  printf("   wall a sample (us)\n");
  double base[KERNELS];
  for (int a = 0; a < ARR; a++) {
    printf("%-22s", arr_names[a]);
    for (int k = 0; k < KERNELS; k++) {
      double m = median(t[a][k]);
      if (a == 0) base[k] = m;
      printf("%12.3f", m);
    }
    printf("   %8.2f\n", wall[a] / count[a] * 1e6);
  }
  printf("difference from one block at a time (us):\n");
  for (int a = 1; a < ARR; a++) {
    printf("%-22s", arr_names[a]);
    for (int k = 0; k < KERNELS; k++) printf("%+12.3f", median(t[a][k]) - base[k]);
    printf("\n");
  }
  return 0;
}
