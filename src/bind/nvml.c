/* NVML through dlopen (nvml.h). */
#include "nvml.h"
#include "cuda_stream.h"
#include "side_thread.h"
#include "wl_modules.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *nvml_device;
enum { NVML_CLOCK_SM = 1, NVML_TEMPERATURE_GPU = 0 };

static struct {
  bool tried, loaded, ok, locked;
  nvml_device dev;
  int (*by_bus)(const char *, nvml_device *);     /* nvmlDeviceGetHandleByPciBusId_v2 */
  int (*clock)(nvml_device, int, unsigned *);     /* nvmlDeviceGetClockInfo */
  int (*max_clock)(nvml_device, int, unsigned *); /* nvmlDeviceGetMaxClockInfo */
  int (*default_clock)(nvml_device, int, unsigned *);
  int (*reasons)(nvml_device, unsigned long long *);
  int (*temperature)(nvml_device, int, unsigned *);
  int (*power)(nvml_device, unsigned *);
  int (*energy)(nvml_device, unsigned long long *);
  int (*lock)(nvml_device, unsigned, unsigned);
  int (*unlock)(nvml_device);
  const char *(*error_string)(int);
} nvml;

/* what the thread found for the device wl_nvml_start named (by its PCI bus id): its handle and
 * its maximum SM clock, which NVML takes over a millisecond to give (H200) and never changes */
static struct {
  char bus[32];
  bool found;
  nvml_device dev;
  unsigned max_sm_mhz;
} ahead;

static const struct {
  unsigned long long bit;
  const char *name;
  bool throttle; /* slows the clock below what the power budget allows */
} reason_names[WL_NVML_REASONS] = {
    {0x4, "sw_power_cap", false},        {0x8, "hw_slowdown", true},
    {0x20, "sw_thermal_slowdown", true}, {0x40, "hw_thermal_slowdown", true},
    {0x80, "hw_power_brake", true},
};

#define SYM(field, name) (*(void **)&nvml.field = dlsym(h, name))

/* The slow part of opening NVML, which needs no device: the library, its symbols, nvmlInit
 * (about 20 ms on an H200, tests/bench/harness_costs.lua). wl_nvml_start runs it on a thread of
 * its own while the CUDA context is made; the first wl_nvml_ready waits for it. */
static void *load(void *unused) {
  (void)unused;
  void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return NULL;
  int (*init)(void) = (int (*)(void))dlsym(h, "nvmlInit_v2");
  *(void **)&nvml.by_bus = dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
  SYM(clock, "nvmlDeviceGetClockInfo");
  SYM(max_clock, "nvmlDeviceGetMaxClockInfo");
  SYM(default_clock, "nvmlDeviceGetDefaultApplicationsClock");
  if (!SYM(reasons, "nvmlDeviceGetCurrentClocksEventReasons"))
    SYM(reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  SYM(temperature, "nvmlDeviceGetTemperature");
  SYM(power, "nvmlDeviceGetPowerUsage");
  SYM(energy, "nvmlDeviceGetTotalEnergyConsumption");
  SYM(lock, "nvmlDeviceSetGpuLockedClocks");
  SYM(unlock, "nvmlDeviceResetGpuLockedClocks");
  SYM(error_string, "nvmlErrorString");
  nvml.loaded = init && nvml.by_bus && nvml.clock && nvml.max_clock && init() == 0;
  if (nvml.loaded && ahead.bus[0] && nvml.by_bus(ahead.bus, &ahead.dev) == 0) {
    ahead.found = true;
    if (nvml.max_clock(ahead.dev, NVML_CLOCK_SM, &ahead.max_sm_mhz) != 0) ahead.max_sm_mhz = 0;
  }
  return NULL;
}

static pthread_t loader;
static bool loading;

static void wait_for_loader(void) {
  if (loading) (void)pthread_join(loader, NULL);
  loading = false;
}

/* A process that ends first waits for the thread rather than exiting under NVML's
 * initialisation, but at most WL_NVML_EXIT_WAIT_S: a run that failed because the device is in a
 * bad state must not hang in an nvmlInit it never needed. wlrun's own end waits for it the same
 * way (wl_host_finish_threads), as it skips the exit handlers; this one stays for os.exit. */
static void wait_for_loader_at_exit(void) { (void)wl_nvml_finish(WL_NVML_EXIT_WAIT_S); }

bool wl_nvml_finish(int seconds) {
  if (loading && wl_side_thread_join(loader, seconds)) loading = false;
  return !loading;
}

void wl_nvml_start(const char *bus) {
  if (nvml.tried || loading) return;
  snprintf(ahead.bus, sizeof ahead.bus, "%s", bus ? bus : "");
  loading = wl_side_thread_start(&loader, load) == 0; /* else wl_nvml_ready loads it */
  if (loading && atexit(wait_for_loader_at_exit) != 0) wait_for_loader();
}

bool wl_nvml_ready(lua_State *L) {
  if (nvml.tried) return nvml.ok;
  nvml.tried = true;
  if (loading) wait_for_loader();
  else load(NULL);
  if (!nvml.loaded) return false;
  char bus[32];
  wl_device_ready(L);
  if (wl_backend->pci_bus_id(bus, sizeof bus, wl_device_index()) !=
      cudaSuccess) { /* no NVML then */
    wl_backend->clear_error();
    return false;
  }
  if (ahead.found && strcmp(ahead.bus, bus) == 0) { /* the thread's, for this device */
    nvml.dev = ahead.dev;
    nvml.ok = true;
  } else {
    ahead.max_sm_mhz = 0;
    nvml.ok = nvml.by_bus(bus, &nvml.dev) == 0;
  }
  return nvml.ok;
}

bool wl_nvml_sm_mhz(unsigned *mhz) {
  return nvml.ok && nvml.clock(nvml.dev, NVML_CLOCK_SM, mhz) == 0;
}
/* read once (by the thread, where it could): it does not change, and NVML takes over a
 * millisecond to give it (H200) */
bool wl_nvml_max_sm_mhz(unsigned *mhz) {
  unsigned *max = &ahead.max_sm_mhz;
  if (!nvml.ok || (!*max && nvml.max_clock(nvml.dev, NVML_CLOCK_SM, max) != 0)) return false;
  *mhz = *max;
  return true;
}
bool wl_nvml_default_sm_mhz(unsigned *mhz) {
  return nvml.ok && nvml.default_clock && nvml.default_clock(nvml.dev, NVML_CLOCK_SM, mhz) == 0;
}
bool wl_nvml_reasons(unsigned long long *r) {
  return nvml.ok && nvml.reasons && nvml.reasons(nvml.dev, r) == 0;
}
bool wl_nvml_temperature(unsigned *c) {
  return nvml.ok && nvml.temperature && nvml.temperature(nvml.dev, NVML_TEMPERATURE_GPU, c) == 0;
}
bool wl_nvml_power_mw(unsigned *mw) {
  return nvml.ok && nvml.power && nvml.power(nvml.dev, mw) == 0;
}
bool wl_nvml_energy_mj(unsigned long long *mj) {
  return nvml.ok && nvml.energy && nvml.energy(nvml.dev, mj) == 0;
}

int wl_nvml_reason_names(unsigned long long reasons, bool throttled_only, const char **names) {
  int n = 0;
  for (int i = 0; i < WL_NVML_REASONS; i++)
    if ((reasons & reason_names[i].bit) && (!throttled_only || reason_names[i].throttle))
      names[n++] = reason_names[i].name;
  return n;
}

void wl_nvml_unlock_clocks(void) {
  if (nvml.locked && nvml.unlock) (void)nvml.unlock(nvml.dev); /* at exit: nothing to say it to */
  nvml.locked = false;
}

bool wl_nvml_lock_clocks(unsigned min_mhz, unsigned max_mhz, char *why, size_t whylen) {
  if (!nvml.ok || !nvml.lock || !nvml.unlock) {
    snprintf(why, whylen, "%s",
             nvml.ok ? "this driver's NVML cannot lock clocks" : "NVML is not available");
    return false;
  }
  int rc = nvml.lock(nvml.dev, min_mhz, max_mhz);
  if (rc != 0) {
    const char *msg = nvml.error_string ? nvml.error_string(rc) : NULL;
    snprintf(why, whylen, "NVML: %s (error %d)%s", msg ? msg : "refused", rc,
             rc == 4
                 ? ": locking clocks needs root, or an administrator's nvidia-smi --lock-gpu-clocks"
                 : "");
    return false;
  }
  static bool registered;
  if (!registered) registered = atexit(wl_nvml_unlock_clocks) == 0;
  nvml.locked = true;
  return true;
}
