/* The GPU's clocks for throttling detection: wl.gpu_clock(). The SM clock is measured by a
 * kernel (clock64 ticks over %globaltimer nanoseconds), so it is the clock while the GPU is busy
 * rather than an idle reading; NVML (nvml.h), where the driver has it, adds its own reading, the
 * maximum, temperature, power and the clock event (throttle) reasons. Also what the engine reads
 * between chunks of samples, outside every timed window: the SM clock and throttle reasons, the
 * energy counter and the device's used memory; and locking the SM clocks (--lock-clocks). */
#include "cuda_stream.h"
#include "laux.h"
#include "nvml.h"
#include "wl_modules.h"

#include <lauxlib.h>
#include <stdio.h>
#include <string.h>

/* SM clock in MHz from a kernel: clock64 ticks per %globaltimer nanosecond, over 50 us (the
 * kernel times the window from a tick to a tick, cuda_init_kernels.cu) */
static double probe_mhz(lua_State *L) {
  static void *scratch;
  unsigned long long host[2] = {0, 0};
  cudaStream_t s = wl_current_stream(L);
  if (!scratch) WL_CUDA(L, wl_backend->alloc(&scratch, sizeof host), "clock probe buffer");
  WL_CUDA(L, wl_backend->clock_probe((unsigned long long *)scratch, 50000, s),
          "clock probe kernel");
  WL_CUDA(L, wl_backend->copy_memory(host, scratch, sizeof host, s), "clock probe copy");
  WL_CUDA(L, wl_backend->stream_sync(s), "clock probe");
  return host[1] ? (double)host[0] / (double)host[1] * 1e3 : 0;
}

static void push_reasons(lua_State *L, unsigned long long reasons, bool throttled_only) {
  const char *names[WL_NVML_REASONS];
  int n = wl_nvml_reason_names(reasons, throttled_only, names);
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, names[i]);
    lua_rawseti(L, -2, i + 1);
  }
}

/* wl.gpu_clock() -> {sm_mhz (measured busy), max_sm_mhz, nvml = true|false, nvml_sm_mhz,
 * temperature_c, power_w, reasons = {...}} */
static int l_gpu_clock(lua_State *L) {
  wl_device_needed(L, "wl.gpu_clock()");
  bool ok = wl_nvml_ready(L);
  lua_createtable(L, 0, 8);
  lua_pushnumber(L, probe_mhz(L));
  lua_setfield(L, -2, "sm_mhz");
  unsigned mhz = 0, max = 0, temp = 0, mw = 0;
  unsigned long long reasons = 0;
  if (!wl_nvml_max_sm_mhz(&max)) { /* the runtime's figure where NVML has none */
    int khz = 0;
    WL_CUDA(L, wl_backend->attribute(&khz, cudaDevAttrClockRate, wl_device_index()),
            "SM clock rate");
    max = (unsigned)(khz / 1000);
  }
  lua_pushnumber(L, max);
  lua_setfield(L, -2, "max_sm_mhz");
  lua_pushboolean(L, ok);
  lua_setfield(L, -2, "nvml");
  push_reasons(L, wl_nvml_reasons(&reasons) ? reasons : 0, false);
  lua_setfield(L, -2, "reasons");
  if (wl_nvml_sm_mhz(&mhz)) {
    lua_pushnumber(L, mhz);
    lua_setfield(L, -2, "nvml_sm_mhz");
  }
  if (wl_nvml_temperature(&temp)) {
    lua_pushinteger(L, temp);
    lua_setfield(L, -2, "temperature_c");
  }
  if (wl_nvml_power_mw(&mw)) {
    lua_pushnumber(L, mw / 1000.0);
    lua_setfield(L, -2, "power_w");
  }
  return 1;
}

/* core.gpu_sample([energy]) -> {sm_mhz = NVML's current SM clock, throttle = {reasons that slow
 * the clock below the power budget}, used_bytes = the device's used memory, energy_j = the
 * energy counter in joules, read only when energy is true}: what the engine reads after a chunk
 * of samples; fields NVML cannot give are absent. No kernel, no synchronisation; microseconds,
 * but the energy counter takes milliseconds (tests/bench/harness_costs.lua). */
static int l_gpu_sample(lua_State *L) {
  wl_device_needed(L, "core.gpu_sample()");
  bool energy = lua_toboolean(L, 1);
  wl_nvml_ready(L);
  lua_createtable(L, 0, 4);
  unsigned mhz;
  unsigned long long reasons, mj;
  if (wl_nvml_sm_mhz(&mhz)) {
    lua_pushinteger(L, mhz);
    lua_setfield(L, -2, "sm_mhz");
  }
  if (wl_nvml_reasons(&reasons)) {
    push_reasons(L, reasons, true);
    lua_setfield(L, -2, "throttle");
  }
  if (energy && wl_nvml_energy_mj(&mj)) {
    lua_pushnumber(L, (double)mj / 1e3);
    lua_setfield(L, -2, "energy_j");
  }
  size_t free_b = 0, total_b = 0;
  WL_CUDA(L, wl_backend->mem_info(&free_b, &total_b), "cudaMemGetInfo");
  lua_pushinteger(L, (lua_Integer)(total_b - free_b));
  lua_setfield(L, -2, "used_bytes");
  return 1;
}

/* core.lock_clocks(what) -> mhz | nil, why: locks the SM clock for the rest of the run (reset at
 * exit). what: "base" (the default applications clock), "max", or a clock in MHz. */
static int l_lock_clocks(lua_State *L) {
  wl_device_needed(L, "--lock-clocks");
  unsigned mhz = 0;
  char why[256] = "";
  if (!wl_nvml_ready(L)) {
    lua_pushnil(L);
    lua_pushstring(L, "NVML (libnvidia-ml.so.1) is not available");
    return 2;
  }
  const char *what = lua_type(L, 1) == LUA_TSTRING ? lua_tostring(L, 1) : NULL;
  bool found = what && strcmp(what, "base") == 0  ? wl_nvml_default_sm_mhz(&mhz)
               : what && strcmp(what, "max") == 0 ? wl_nvml_max_sm_mhz(&mhz)
                                                  : (mhz = (unsigned)wl_check_integer(L, 1), true);
  if (!found) {
    lua_pushnil(L);
    lua_pushfstring(L, "NVML does not give the %s clock of this device", what);
    return 2;
  }
  if (!wl_nvml_lock_clocks(mhz, mhz, why, sizeof why)) {
    lua_pushnil(L);
    lua_pushstring(L, why);
    return 2;
  }
  lua_pushinteger(L, mhz);
  return 1;
}

/* core.nvml_start(): begins opening NVML on a thread while the CUDA context is made, for the
 * device the run will use (the run calls it once the driver is loaded, to read its PCI bus id);
 * nothing with the do-nothing backend */
static int l_nvml_start(lua_State *L) {
  (void)L;
  if (wl_backend->no_device) return 0;
  char bus[32];
  bool known = wl_backend->pci_bus_id(bus, sizeof bus, wl_device_wanted()) == cudaSuccess;
  if (!known)
    wl_backend->clear_error(); /* the thread opens NVML all the same; the device's, later */
  wl_nvml_start(known ? bus : NULL);
  return 0;
}

void wl_open_gpu_clock(lua_State *L) {
  lua_pushcfunction(L, l_nvml_start);
  lua_setfield(L, -2, "nvml_start");
  lua_pushcfunction(L, l_gpu_clock);
  lua_setfield(L, -2, "gpu_clock");
  lua_pushcfunction(L, l_gpu_sample);
  lua_setfield(L, -2, "gpu_sample");
  lua_pushcfunction(L, l_lock_clocks);
  lua_setfield(L, -2, "lock_clocks");
}
