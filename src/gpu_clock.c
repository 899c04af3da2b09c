/* The GPU's clocks for throttling detection: wl.gpu_clock(). The SM clock is measured by a
 * kernel (clock64 ticks over %globaltimer nanoseconds), so it is the clock while the GPU is busy
 * rather than an idle reading; NVML, through dlopen when the driver has it, adds its own
 * reading, the maximum, temperature, power and the clock event (throttle) reasons. */
#include "cuda_stream.h"
#include "wl_modules.h"

#include <dlfcn.h>
#include <lauxlib.h>
#include <stdio.h>

/* NVML's C ABI, declared here since the toolkit has no nvml.h: return 0 is NVML_SUCCESS */
typedef void *nvml_device;
static struct {
  bool tried, ok;
  nvml_device dev;
  int (*clock)(nvml_device, int, unsigned *);     /* nvmlDeviceGetClockInfo */
  int (*max_clock)(nvml_device, int, unsigned *); /* nvmlDeviceGetMaxClockInfo */
  int (*reasons)(nvml_device, unsigned long long *);
  int (*temperature)(nvml_device, int, unsigned *);
  int (*power)(nvml_device, unsigned *);
} nvml;

enum { NVML_CLOCK_SM = 1, NVML_TEMPERATURE_GPU = 0 };

static const struct { unsigned long long bit; const char *name; } reason_names[] = {
    {0x4, "sw_power_cap"},          {0x8, "hw_slowdown"},           {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"},  {0x80, "hw_power_brake"},
};

static void nvml_open(lua_State *L) {
  if (nvml.tried) return;
  nvml.tried = true;
  void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
  int (*init)(void) = (int (*)(void))dlsym(h, "nvmlInit_v2");
  int (*by_bus)(const char *, nvml_device *) =
      (int (*)(const char *, nvml_device *))dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
  nvml.clock = (int (*)(nvml_device, int, unsigned *))dlsym(h, "nvmlDeviceGetClockInfo");
  nvml.max_clock = (int (*)(nvml_device, int, unsigned *))dlsym(h, "nvmlDeviceGetMaxClockInfo");
  nvml.reasons = (int (*)(nvml_device, unsigned long long *))dlsym(h, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!nvml.reasons)
    nvml.reasons = (int (*)(nvml_device, unsigned long long *))dlsym(h, "nvmlDeviceGetCurrentClocksThrottleReasons");
  nvml.temperature = (int (*)(nvml_device, int, unsigned *))dlsym(h, "nvmlDeviceGetTemperature");
  nvml.power = (int (*)(nvml_device, unsigned *))dlsym(h, "nvmlDeviceGetPowerUsage");
  if (!init || !by_bus || !nvml.clock || !nvml.max_clock || init() != 0) return;
  char bus[32];
  wl_device_ready(L);
  if (wl_backend->pci_bus_id(bus, sizeof bus, wl_device_index()) != cudaSuccess) { /* no NVML then */
    wl_backend->clear_error();
    return;
  }
  nvml.ok = by_bus(bus, &nvml.dev) == 0;
}

/* SM clock in MHz from a kernel: clock64 ticks per %globaltimer nanosecond */
static double probe_mhz(lua_State *L) {
  static void *scratch;
  unsigned long long host[2] = {0, 0};
  cudaStream_t s = wl_current_stream(L);
  if (!scratch) WL_CUDA(L, wl_backend->alloc(&scratch, sizeof host), "clock probe buffer");
  WL_CUDA(L, wl_backend->clock_probe((unsigned long long *)scratch, 200000, s), "clock probe kernel");
  WL_CUDA(L, wl_backend->copy_memory(host, scratch, sizeof host, s), "clock probe copy");
  WL_CUDA(L, wl_backend->stream_sync(s), "clock probe");
  return host[1] ? (double)host[0] / (double)host[1] * 1e3 : 0;
}

/* wl.gpu_clock() -> {sm_mhz (measured busy), max_sm_mhz, nvml = true|false, nvml_sm_mhz,
 * temperature_c, power_w, reasons = {...}} */
static int l_gpu_clock(lua_State *L) {
  wl_device_needed(L, "wl.gpu_clock()");
  nvml_open(L);
  lua_createtable(L, 0, 8);
  lua_pushnumber(L, probe_mhz(L));
  lua_setfield(L, -2, "sm_mhz");
  int khz = 0;
  WL_CUDA(L, wl_backend->attribute(&khz, cudaDevAttrClockRate, wl_device_index()), "SM clock rate");
  unsigned mhz = 0, max = 0, temp = 0, mw = 0;
  unsigned long long reasons = 0;
  lua_pushnumber(L, nvml.ok && nvml.max_clock(nvml.dev, NVML_CLOCK_SM, &max) == 0 ? max : khz / 1000.0);
  lua_setfield(L, -2, "max_sm_mhz");
  lua_pushboolean(L, nvml.ok);
  lua_setfield(L, -2, "nvml");
  lua_newtable(L);
  if (nvml.ok) {
    if (nvml.reasons && nvml.reasons(nvml.dev, &reasons) == 0)
      for (size_t i = 0; i < sizeof reason_names / sizeof reason_names[0]; i++)
        if (reasons & reason_names[i].bit) {
          lua_pushstring(L, reason_names[i].name);
          lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
        }
    if (nvml.clock(nvml.dev, NVML_CLOCK_SM, &mhz) == 0) {
      lua_pushnumber(L, mhz);
      lua_setfield(L, -3, "nvml_sm_mhz");
    }
    if (nvml.temperature && nvml.temperature(nvml.dev, NVML_TEMPERATURE_GPU, &temp) == 0) {
      lua_pushinteger(L, temp);
      lua_setfield(L, -3, "temperature_c");
    }
    if (nvml.power && nvml.power(nvml.dev, &mw) == 0) {
      lua_pushnumber(L, mw / 1000.0);
      lua_setfield(L, -3, "power_w");
    }
  }
  lua_setfield(L, -2, "reasons");
  return 1;
}

void wl_open_gpu_clock(lua_State *L) {
  lua_pushcfunction(L, l_gpu_clock);
  lua_setfield(L, -2, "gpu_clock");
}
