/* Kernel objects for host work (host_work.h): the same class as compiled kernels (KERNEL_MT),
 * so that bind, launches, the timed loops and graph capture take them as they take kernels;
 * their parameters come from a C parameter list (c_params.h) instead of PTX. */
#include "c_params.h"
#include "cuda_kernel.h"
#include "wl_exit.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct wl_kernel *wl_push_host_kernel(lua_State *L, const char *name, const char *params,
                                      const struct wl_host_work *host) {
  struct wl_kernel *k = lua_newuserdatauv(L, sizeof *k, 1);
  memset(k, 0, sizeof *k);
  k->host = *host; /* owned from here: the kernel's close path releases it, on an error too */
  luaL_setmetatable(L, KERNEL_MT);
  if (!host->call) {
    wl_raise(L, WL_EXIT_SCRIPT, "host work '%s' without a call", name);
    return NULL;
  }
  k->name = strdup(name);
  k->source = strdup(host->kind ? host->kind : "host");
  snprintf(k->arch, sizeof k->arch, "host");
  if (!k->name || !k->source) {
    wl_raise(L, WL_EXIT_SCRIPT, "out of memory");
    return NULL;
  }
  char err[320];
  if (!wl_c_params(params ? params : "", &k->sig, err, sizeof err))
    wl_raise(L, WL_EXIT_SCRIPT, "%s: its parameter list: %s", name, err);
  return k;
}

void wl_refuse_host_work(lua_State *L, const struct wl_kernel *k, const char *what) {
  if (k->host.call)
    wl_raise(L, WL_EXIT_SCRIPT,
             "%s: '%s' is host work (%s), it has no kernel attributes or occupancy", what, k->name,
             k->host.kind ? k->host.kind : "host");
}
