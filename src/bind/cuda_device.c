/* Devices for Lua: wl.device_count(), wl.select_device(i), wl.device() properties; the device
 * in use for the other bindings (cuda_device.h). */
#include "cuda_device.h"

#include "laux.h"
#include "settings.h"
#include "side_thread.h"
#include "wl_exit.h"
#include "wl_modules.h"

#include <lauxlib.h>
#include <stdio.h>
#include <string.h>

static int current_device = -1; /* open; -1 until first use */
static int wanted_device = 0;
static bool
    promised; /* wanted_device given to work on a thread before the context (wl_device_promise) */

struct wl_watch wl_watch;

int wl_cuda_raise(lua_State *L, cudaError_t err, const char *what) {
  wl_backend->clear_error(); /* a non-sticky error: the state stays usable */
  return wl_raise(L, wl_cuda_is_no_device(err) ? WL_EXIT_NO_DEVICE : WL_EXIT_CUDA, "%s: %s: %s",
                  what, cudaGetErrorName(err), cudaGetErrorString(err));
}

void wl_device_ready(lua_State *L) {
  if (current_device >= 0) return;
  char why[512] = "";
  cudaError_t err = wl_backend->open_device(wanted_device, why, sizeof why);
  if (err != cudaSuccess) {
    wl_backend->clear_error();
    wl_raise(L, wl_cuda_is_no_device(err) ? WL_EXIT_NO_DEVICE : WL_EXIT_CUDA, "%s", why);
  }
  current_device = wanted_device;
}

void wl_device_needed(lua_State *L, const char *what) {
  if (wl_backend->no_device)
    wl_raise(L, WL_EXIT_USAGE, "%s needs a CUDA device, which %s does not use", what,
             wl_backend->no_device);
  wl_device_ready(L);
}

static cudaError_t finish_err;

static void *finish_on_thread(void *unused) {
  (void)unused;
  cudaError_t err = wl_backend->use_device(current_device);
  finish_err = err != cudaSuccess ? err : wl_backend->device_sync();
  return NULL;
}

bool wl_device_finish(int seconds, cudaError_t *err) {
  *err = cudaSuccess;
  if (current_device < 0 || wl_backend->no_device) return true;
  pthread_t t;
  if (wl_side_thread_start(&t, finish_on_thread) != 0) { /* no thread: wait here, unbounded */
    *err = wl_backend->device_sync();
    return true;
  }
  if (!wl_side_thread_join(t, seconds)) return false;
  *err = finish_err;
  return true;
}

int wl_device_index(void) { return current_device; }

int wl_device_wanted(void) { return current_device >= 0 ? current_device : wanted_device; }

int wl_device_promise(void) {
  if (current_device >= 0) return current_device;
  promised = true;
  return wanted_device;
}

/* wl.device_count() -> n, reason: never raises; reason says why n is 0 */
static int l_device_count(lua_State *L) {
  int n;
  cudaError_t err = wl_backend->device_count(&n);
  lua_pushinteger(L, n);
  if (err != cudaSuccess) {
    lua_pushfstring(L, "%s (%s)", wl_cuda_no_device_reason(err), cudaGetErrorName(err));
    return 2;
  }
  return 1;
}

/* wl.select_device(i): before any CUDA object is made */
static int l_select_device(lua_State *L) {
  lua_Integer i = wl_check_integer(L, 1);
  int n;
  cudaError_t err = wl_backend->device_count(&n);
  if (err != cudaSuccess)
    return wl_raise(L, WL_EXIT_NO_DEVICE, "no CUDA device: %s", wl_cuda_no_device_reason(err));
  if (i < 0 || i >= n)
    return wl_raise(L, WL_EXIT_NO_DEVICE, "no CUDA device %d: this machine has %d (0 to %d)",
                    (int)i, n, n - 1);
  int in_use = current_device >= 0 ? current_device : promised ? wanted_device : -1;
  if (in_use >= 0 && in_use != (int)i)
    return wl_raise(L, WL_EXIT_SCRIPT,
                    "device %d is already in use; select the device before using it", in_use);
  wanted_device = (int)i;
  wl_device_ready(L);
  return 0;
}

static void set_int(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

static int attribute(lua_State *L, enum cudaDeviceAttr attr, int dev, const char *name) {
  int v = 0;
  WL_CUDA(L, wl_backend->attribute(&v, attr, dev), name);
  return v;
}

/* What does not change while the process runs, read once per device: the properties and the
 * clock attributes take over a millisecond together (the SM clock rate alone 0.4 ms on an H200,
 * tests/bench/harness_costs.lua), and wl.bench reads wl.device() for every configuration. */
enum { CACHED_DEVICES = 64 };
static struct device_facts {
  bool known;
  struct cudaDeviceProp p;
  int driver, runtime, sm_clock, mem_clock, bus;
} facts[CACHED_DEVICES];

static const struct device_facts *facts_of(lua_State *L, int dev, struct device_facts *uncached) {
  struct device_facts *f = dev < CACHED_DEVICES ? &facts[dev] : uncached;
  if (f->known) return f;
  WL_CUDA(L, wl_backend->properties(&f->p, dev), "cudaGetDeviceProperties");
  WL_CUDA(L, wl_backend->versions(&f->driver, &f->runtime),
          "the driver's and the runtime's versions");
  f->sm_clock = attribute(L, cudaDevAttrClockRate, dev, "SM clock rate");
  f->mem_clock = attribute(L, cudaDevAttrMemoryClockRate, dev, "memory clock rate");
  f->bus = attribute(L, cudaDevAttrGlobalMemoryBusWidth, dev, "memory bus width");
  f->known = f != uncached;
  return f;
}

/* wl.device([i]) -> properties of device i (default: the selected one) */
static int l_device(lua_State *L) {
  wl_device_needed(L, "wl.device()");
  int dev = (int)wl_opt_integer(L, 1, current_device);
  int n;
  WL_CUDA(L, wl_backend->device_count(&n), "cudaGetDeviceCount");
  if (dev < 0 || dev >= n)
    return wl_raise(L, WL_EXIT_NO_DEVICE, "no CUDA device %d: this machine has %d", dev, n);
  struct device_facts uncached = {0};
  const struct device_facts *f = facts_of(L, dev, &uncached);
  const struct cudaDeviceProp *p = &f->p;
  size_t free_b = 0, total_b = 0;
  if (dev == current_device) WL_CUDA(L, wl_backend->mem_info(&free_b, &total_b), "cudaMemGetInfo");

  lua_createtable(L, 0, 32);
  set_int(L, "index", dev);
  lua_pushstring(L, p->name);
  lua_setfield(L, -2, "name");
  lua_pushfstring(L, "%d.%d", p->major, p->minor);
  lua_setfield(L, -2, "compute_capability");
  lua_pushfstring(L, "sm_%d%d", p->major, p->minor);
  lua_setfield(L, -2, "arch");
  set_int(L, "major", p->major);
  set_int(L, "minor", p->minor);
  set_int(L, "sm_count", p->multiProcessorCount);
  set_int(L, "l2_bytes", p->l2CacheSize);
  set_int(L, "memory_bytes", (lua_Integer)p->totalGlobalMem);
  if (dev == current_device) set_int(L, "memory_free_bytes", (lua_Integer)free_b);
  set_int(L, "sm_clock_khz", f->sm_clock);
  set_int(L, "memory_clock_khz", f->mem_clock);
  set_int(L, "memory_bus_bits", f->bus);
  /* double data rate: two transfers per memory clock, bus_width/8 bytes each */
  lua_pushnumber(L, 2.0 * f->mem_clock * 1e3 * (f->bus / 8.0));
  lua_setfield(L, -2, "peak_bandwidth");
  /* FP32 lanes per SM by architecture (CUDA programming guide, arithmetic instructions) */
  int lanes = p->major >= 8 && !(p->major == 8 && p->minor == 0) ? 128 : 64;
  lua_pushnumber(L, 2.0 * lanes * p->multiProcessorCount * f->sm_clock * 1e3);
  lua_setfield(L, -2, "peak_fp32_flops");
  set_int(L, "max_threads_per_block", p->maxThreadsPerBlock);
  set_int(L, "max_threads_per_sm", p->maxThreadsPerMultiProcessor);
  set_int(L, "warp_size", p->warpSize);
  set_int(L, "shared_per_block", (lua_Integer)p->sharedMemPerBlock);
  set_int(L, "shared_per_block_optin", (lua_Integer)p->sharedMemPerBlockOptin);
  set_int(L, "shared_per_sm", (lua_Integer)p->sharedMemPerMultiprocessor);
  set_int(L, "registers_per_sm", p->regsPerMultiprocessor);
  set_int(L, "registers_per_block", p->regsPerBlock);
  set_int(L, "driver_version", f->driver);
  set_int(L, "runtime_version", f->runtime);
  char pci[32], uuid[40];
  snprintf(pci, sizeof pci, "%04x:%02x:%02x.0", (unsigned)p->pciDomainID, (unsigned)p->pciBusID,
           (unsigned)p->pciDeviceID);
  lua_pushstring(L, pci);
  lua_setfield(L, -2, "pci_bus_id");
  const unsigned char *u = (const unsigned char *)p->uuid.bytes;
  snprintf(uuid, sizeof uuid,
           "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
           u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  lua_pushstring(L, uuid);
  lua_setfield(L, -2, "uuid");
  return 1;
}

/* core.context_ok() -> true, or false and the error: whether the CUDA context still works
 * (a kernel fault leaves a sticky error that every later call returns) */
static int l_context_ok(lua_State *L) {
  if (current_device < 0) {
    lua_pushboolean(L, 1);
    return 1;
  }
  cudaError_t err = wl_backend->check_context();
  lua_pushboolean(L, err == cudaSuccess);
  if (err == cudaSuccess) return 1;
  lua_pushstring(L, cudaGetErrorName(err));
  return 2;
}

/* core.compile_only() -> whether the do-nothing backend runs (--compile-only) */
static int l_compile_only(lua_State *L) {
  lua_pushboolean(L, wl_backend->no_device != NULL);
  return 1;
}

void wl_open_device(lua_State *L) {
  lua_pushcfunction(L, l_compile_only);
  lua_setfield(L, -2, "compile_only");
  lua_pushstring(L, WL_NOT_MEASURED);
  lua_setfield(L, -2, "not_measured");
  lua_pushcfunction(L, l_context_ok);
  lua_setfield(L, -2, "context_ok");
  wanted_device = (int)wl_setting_find("run", "device")->number;
  static const luaL_Reg fns[] = {{"device_count", l_device_count},
                                 {"select_device", l_select_device},
                                 {"device", l_device},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
