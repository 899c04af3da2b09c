/* Benchmark (not a test) for tests/bench/harness_costs.lua: what each device query the engine
 * makes between chunks of samples costs on its own, in plain C: NVML's readings (through
 * dlopen, as src/bind/nvml.c), cudaMemGetInfo, the SM clock rate attribute and an empty
 * synchronisation. Prints one line a call:
 * "<name> <mean us> <max us>" over 100 calls. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

#define CALLS 100

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

typedef int (*dev_uint_fn)(void *, unsigned *);
typedef int (*dev_kind_uint_fn)(void *, int, unsigned *);
typedef int (*dev_ull_fn)(void *, unsigned long long *);

static void *nvml_dev;
static void *fn;

static int clock_sm(void) {
  unsigned v;
  return ((dev_kind_uint_fn)fn)(nvml_dev, 1, &v);
}
static int temperature(void) {
  unsigned v;
  return ((dev_kind_uint_fn)fn)(nvml_dev, 0, &v);
}
static int dev_uint(void) {
  unsigned v;
  return ((dev_uint_fn)fn)(nvml_dev, &v);
}
static int dev_ull(void) {
  unsigned long long v;
  return ((dev_ull_fn)fn)(nvml_dev, &v);
}
static int mem_get_info(void) {
  size_t f, t;
  return (int)cudaMemGetInfo(&f, &t);
}
static int sync_device(void) { return (int)cudaDeviceSynchronize(); }
static int clock_rate(void) {
  int khz;
  return (int)cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
}

static void cost(const char *name, int (*call)(void)) {
  double sum = 0, max = 0;
  if (call() != 0) {
    printf("%-44s failed\n", name);
    return;
  }
  for (int i = 0; i < CALLS; i++) {
    double t0 = now_us();
    call();
    double d = now_us() - t0;
    sum += d;
    if (d > max) max = d;
  }
  printf("%-44s %10.1f us (max %.1f)\n", name, sum / CALLS, max);
}

static void nvml_cost(void *h, const char *symbol, int (*call)(void)) {
  fn = dlsym(h, symbol);
  if (!fn) {
    printf("%-44s absent\n", symbol);
    return;
  }
  cost(symbol, call);
}

int main(void) {
  if (cudaSetDevice(0) != cudaSuccess || cudaFree(0) != cudaSuccess)
    return fprintf(stderr, "no CUDA device\n"), 1;
  char bus[32];
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, 0) != cudaSuccess) return 1;
  void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  int (*init)(void) = h ? (int (*)(void))dlsym(h, "nvmlInit_v2") : NULL;
  int (*by_bus)(const char *, void **) =
      h ? (int (*)(const char *, void **))dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2") : NULL;
  if (!init || !by_bus || init() != 0 || by_bus(bus, &nvml_dev) != 0)
    return fprintf(stderr, "no NVML\n"), 1;
  nvml_cost(h, "nvmlDeviceGetClockInfo", clock_sm);
  nvml_cost(h, "nvmlDeviceGetMaxClockInfo", clock_sm);
  nvml_cost(h, "nvmlDeviceGetCurrentClocksEventReasons", dev_ull);
  nvml_cost(h, "nvmlDeviceGetTemperature", temperature);
  nvml_cost(h, "nvmlDeviceGetPowerUsage", dev_uint);
  nvml_cost(h, "nvmlDeviceGetTotalEnergyConsumption", dev_ull);
  cost("cudaMemGetInfo", mem_get_info);
  cost("cudaDeviceGetAttribute(cudaDevAttrClockRate)", clock_rate);
  cost("cudaDeviceSynchronize (idle)", sync_device);
  return 0;
}
