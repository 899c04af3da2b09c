/* One kernel compiled by NVRTC, and NVRTC found or its absence raised (kernel_compile.h). */
#include "kernel_compile.h"
#include "wl_exit.h"

#include <lauxlib.h>
#include <pthread.h>
#include <signal.h>
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

const char *wl_kernel_name_problem(const char *name, size_t len, size_t *at) {
  static const char punctuation[] = " \t:<>,()*&+-.~!=|^%?/[]'"; /* ' for 'a' and 1'000 */
  for (*at = 0; *at < len; (*at)++) {
    unsigned char ch = (unsigned char)name[*at];
    if (ch == '\0') return "a NUL byte";
    if ((ch < 0x20 && ch != '\t') || ch == 0x7f) return "a control character";
    bool word = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
    if (!word && (ch >= 0x80 || !strchr(punctuation, ch))) return "a character that no name expression holds";
  }
  return NULL;
}

/* nvrtcCompileProgram with SIGINT and SIGTERM held until it returns. While it compiles, NVRTC
 * puts handlers of its own on SIGINT, SIGTERM and SIGXFSZ that end the process with exit 4 (no
 * message, no outputs written), and it puts wlrun's back with other flags. So wlrun's handlers
 * are saved and put back as they were, and a Ctrl-C during a compile reaches wlrun's own handler
 * when the compile ends (the run stops cleanly, its outputs written). */
static nvrtcResult compile_with_signals_held(const struct wl_nvrtc_api *nv, nvrtcProgram prog, int nopts,
                                             const char **opts) {
  static const int handled[] = {SIGINT, SIGTERM, SIGXFSZ};
  enum { N = sizeof handled / sizeof *handled };
  sigset_t held, before;
  sigemptyset(&held);
  sigaddset(&held, SIGINT);
  sigaddset(&held, SIGTERM);
  bool masked = pthread_sigmask(SIG_BLOCK, &held, &before) == 0;
  struct sigaction saved[N];
  bool have[N];
  for (int i = 0; i < N; i++) have[i] = sigaction(handled[i], NULL, &saved[i]) == 0;
  nvrtcResult r = nv->compile(prog, nopts, opts);
  for (int i = 0; i < N; i++)
    if (have[i]) (void)sigaction(handled[i], &saved[i], NULL); /* put back what was read: cannot fail */
  if (masked) (void)pthread_sigmask(SIG_SETMASK, &before, NULL);
  return r;
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
  nvrtcResult cr = r == NVRTC_SUCCESS ? compile_with_signals_held(nv, prog, nopts, opts) : r;
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
