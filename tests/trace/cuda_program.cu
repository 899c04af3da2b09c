// A CUDA program with NVTX ranges around GPU work of known length, run by the GPU part of
// tests/spec/trace_library_spec.lua under the trace library (NVTX_INJECTION64_PATH and
// CUDA_INJECTION64_PATH both pointing at it). No cuBLAS: kernels that spin on %globaltimer for a
// given time, a copy and a set. Modes (argv[1]):
//
//   steps   3 steps: data (8 MiB copy HtoD), then train_step > forward (forward_spin 2 ms, twice),
//           backward (backward_spin 4 ms, a 1 MiB memset), optimizer (optimizer_spin 1 ms); the
//           device synchronised at the end of each step; then threaded: a kernel (thread_spin
//           1 ms) launched from a thread with no range while main waits inside "threaded"; then
//           graph: a graph of one kernel (graph_spin 1 ms) launched inside "graph"
//   nosync  the steps without the synchronisation at their end (for WLRUN_TRACE_SYNC=train_step)
//   hooked  nosync, with a train_step of the domain "wlrun.auto" pushed in each forward after its
//           kernels, as wlrun's Python hook opens its step inside a program's own forward
//   fork    CUDA initialised, then a child that pushes a range and exits (no CUDA in it)
//   waits   a kernel loaded and the device synchronised, then 8 steps (train_step > forward_spin
//           20 ms on the legacy default stream), each followed by: the device synchronised twice;
//           an event recorded and the legacy stream synchronised; nothing; a copy and the stream
//           synchronised; a kernel and the device synchronised; another stream synchronised,
//           then the device; the device synchronised, then an event; an event synchronised,
//           then the device. W records after the 1st, 2nd and 7th steps; B records (the device's
//           last, no GPU work after it) before the 1st, 2nd, 6th and 7th
#include <nvtx3/nvToolsExt.h>

#include <cuda_runtime.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "cuda_program: %s: %s (line %d)\n", #call, cudaGetErrorString(e_), \
              __LINE__);                                                                 \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

__device__ static uint64_t now_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ static void spin(uint64_t ns) {
  uint64_t t0 = now_ns();
  while (now_ns() - t0 < ns) {}
}

// one kernel per phase, so that the K records' names say where they were launched
__global__ void forward_spin(uint64_t ns) { spin(ns); }
__global__ void backward_spin(uint64_t ns) { spin(ns); }
__global__ void optimizer_spin(uint64_t ns) { spin(ns); }
__global__ void thread_spin(uint64_t ns) { spin(ns); }
__global__ void graph_spin(uint64_t ns) { spin(ns); }

static const uint64_t MS = 1000000;

static void *launch_from_thread(void *arg) {
  thread_spin<<<1, 1, 0, *(cudaStream_t *)arg>>>(1 * MS);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(*(cudaStream_t *)arg));
  return NULL;
}

static void hook_push(const char *name) { // a range of the Python hook's domain
  static nvtxDomainHandle_t hook = nvtxDomainCreateA("wlrun.auto");
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  nvtxDomainRangePushEx(hook, &a);
}

static void hook_pop() { nvtxDomainRangePop(nvtxDomainCreateA("wlrun.auto")); }

static int steps(bool sync, bool hooked) {
  const size_t copy_bytes = 8 << 20, set_bytes = 1 << 20;
  void *host, *dev;
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  CHECK(cudaMallocHost(&host, copy_bytes));
  CHECK(cudaMalloc(&dev, copy_bytes));
  memset(host, 1, copy_bytes);
  for (int i = 0; i < 3; i++) {
    nvtxRangePushA("data");
    CHECK(cudaMemcpyAsync(dev, host, copy_bytes, cudaMemcpyHostToDevice, s));
    CHECK(cudaStreamSynchronize(s));
    nvtxRangePop();
    nvtxRangePushA("train_step");
    nvtxRangePushA("forward");
    forward_spin<<<1, 1, 0, s>>>(2 * MS);
    forward_spin<<<1, 1, 0, s>>>(2 * MS);
    CHECK(cudaGetLastError());
    if (hooked) hook_push("train_step");
    nvtxRangePop();
    nvtxRangePushA("backward");
    backward_spin<<<1, 1, 0, s>>>(4 * MS);
    CHECK(cudaGetLastError());
    CHECK(cudaMemsetAsync(dev, 0, set_bytes, s));
    nvtxRangePop();
    nvtxRangePushA("optimizer");
    optimizer_spin<<<1, 1, 0, s>>>(1 * MS);
    CHECK(cudaGetLastError());
    nvtxRangePop();
    if (sync) CHECK(cudaStreamSynchronize(s));
    if (hooked) hook_pop();
    nvtxRangePop();
  }
  CHECK(cudaStreamSynchronize(s));

  nvtxRangePushA("threaded");
  pthread_t t;
  if (pthread_create(&t, NULL, launch_from_thread, &s) != 0) return 1;
  pthread_join(t, NULL);
  nvtxRangePop();

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  graph_spin<<<1, 1, 0, s>>>(1 * MS);
  CHECK(cudaStreamEndCapture(s, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  nvtxRangePushA("graph");
  CHECK(cudaGraphLaunch(exec, s));
  nvtxRangePop();
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaFree(dev));
  CHECK(cudaFreeHost(host));
  CHECK(cudaStreamDestroy(s));
  return 0;
}

static int waits() {
  void *host, *dev;
  cudaStream_t other;
  cudaEvent_t ev;
  CHECK(cudaStreamCreate(&other));
  CHECK(cudaEventCreate(&ev));
  CHECK(cudaMallocHost(&host, 4096));
  CHECK(cudaMalloc(&dev, 4096));
  forward_spin<<<1, 1>>>(0); // loaded before the steps: each step's kernel outlasts its range
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < 8; i++) {
    nvtxRangePushA("train_step");
    forward_spin<<<1, 1>>>(20 * MS); // the legacy default stream; outlasts the range
    CHECK(cudaGetLastError());
    nvtxRangePop();
    switch (i) {
    case 0:
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaDeviceSynchronize());
      break;
    case 1:
      CHECK(cudaEventRecord(ev, 0));
      CHECK(cudaStreamSynchronize(cudaStreamLegacy));
      break;
    case 3:
      CHECK(cudaMemcpyAsync(dev, host, 4096, cudaMemcpyHostToDevice, 0));
      CHECK(cudaStreamSynchronize(0));
      break;
    case 4:
      forward_spin<<<1, 1>>>(1 * MS);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      break;
    case 5:
      CHECK(cudaStreamSynchronize(other));
      CHECK(cudaDeviceSynchronize());
      break;
    case 6:
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaEventRecord(ev, 0));
      CHECK(cudaEventSynchronize(ev));
      break;
    case 7:
      CHECK(cudaEventRecord(ev, 0));
      CHECK(cudaEventSynchronize(ev));
      CHECK(cudaDeviceSynchronize());
      break;
    default: break;
    }
  }
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(dev));
  CHECK(cudaFreeHost(host));
  CHECK(cudaEventDestroy(ev));
  CHECK(cudaStreamDestroy(other));
  return 0;
}

static int forked() {
  CHECK(cudaFree(0));
  nvtxRangePushA("parent");
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    nvtxRangePushA("child");
    nvtxRangePop();
    exit(0);
  }
  int status;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  nvtxRangePop();
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "steps") == 0) return steps(true, false);
  if (strcmp(mode, "nosync") == 0) return steps(false, false);
  if (strcmp(mode, "hooked") == 0) return steps(false, true);
  if (strcmp(mode, "fork") == 0) return forked();
  if (strcmp(mode, "waits") == 0) return waits();
  fprintf(stderr, "usage: %s steps|nosync|hooked|fork|waits\n", argv[0]);
  return 2;
}
