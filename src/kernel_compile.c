/* One kernel compiled by NVRTC, and NVRTC found or its absence raised (kernel_compile.h). */
#include "kernel_compile.h"
#include "wl_exit.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct wl_nvrtc_api *wl_nvrtc_or_raise(lua_State *L, const char *fn, const char *kernel) {
  char why[1536];
  const struct wl_nvrtc_api *nv = wl_nvrtc_load(why, sizeof why, NULL);
  if (nv) return nv;
  if (kernel) wl_raise(L, WL_EXIT_COMPILE, "%s '%s': %s", fn, kernel, why);
  wl_raise(L, WL_EXIT_COMPILE, "%s: %s", fn, why);
  return NULL;
}

bool wl_kernel_compile(lua_State *L, const struct wl_nvrtc_api *nv, const char *code, const char *source_name,
                       const char *name, const char **opts, int nopts, struct wl_compiled *c) {
  nvrtcProgram prog = NULL;
  nvrtcResult created = nv->create(&prog, code, source_name, 0, NULL, NULL);
  if (created != NVRTC_SUCCESS) {
    lua_pushfstring(L, "kernel '%s': nvrtcCreateProgram: %s", name, nv->error_string(created));
    return false;
  }
  /* from here the program must be destroyed on every path */
  char msg[512] = "";
  nvrtcResult r = nv->add_name(prog, name);
  nvrtcResult cr = r == NVRTC_SUCCESS ? nv->compile(prog, nopts, opts) : r;
  size_t log_len = 0;
  if (nv->log_size(prog, &log_len) != NVRTC_SUCCESS) log_len = 0;
  c->log = calloc(1, log_len + 1);
  if (c->log && log_len && nv->log(prog, c->log) != NVRTC_SUCCESS) c->log[0] = '\0';
  if (cr == NVRTC_SUCCESS) {
    const char *lowered = NULL;
    r = nv->lowered_name(prog, name, &lowered);
    if (r == NVRTC_SUCCESS) c->lowered = strdup(lowered);
    if (r == NVRTC_SUCCESS) r = nv->ptx_size(prog, &c->ptx_len);
    if (r == NVRTC_SUCCESS && (c->ptx = malloc(c->ptx_len + 1))) {
      r = nv->ptx(prog, c->ptx);
      c->ptx[c->ptx_len] = '\0';
      c->ptx_len = strlen(c->ptx);
    }
    if (r == NVRTC_SUCCESS) r = nv->cubin_size(prog, &c->cubin_len);
    if (r == NVRTC_SUCCESS && (c->cubin = malloc(c->cubin_len ? c->cubin_len : 1)))
      r = nv->cubin(prog, (char *)c->cubin);
    if (r != NVRTC_SUCCESS)
      snprintf(msg, sizeof msg, "reading the compiled code: %s", nv->error_string(r));
    else if (!c->lowered || !c->ptx || !c->cubin)
      snprintf(msg, sizeof msg, "out of memory");
  }
  (void)nv->destroy(&prog); /* what it made is read: nothing to do if freeing fails */
  if (cr != NVRTC_SUCCESS) {
    lua_pushfstring(L, "compiling kernel '%s' from %s failed (%s):\n%s", name, source_name,
                    nv->error_string(cr), c->log ? c->log : "");
    wl_compiled_free(c);
    return false;
  }
  if (*msg) {
    wl_compiled_free(c);
    lua_pushfstring(L, "kernel '%s': %s", name, msg);
    return false;
  }
  return true;
}
