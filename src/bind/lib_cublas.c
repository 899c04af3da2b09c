/* wl.cublas: cuBLAS GEMM as bound work (docs/cublas.md).
 * wl.cublas.gemm{...} checks its options (gemm_args.c), loads cuBLAS (cublas_load.c), creates
 * the device's handle and the call's workspace before anything is measured, and gives a bound
 * launch of host work (host_work.h) that queues cublasGemmEx on the launch's stream. */
#include "cublas_load.h"
#include "cublas_prepare.h"
#include "cuda_kernel.h"
#include "gemm_args.h"
#include "host_work.h"
#include "wl_exit.h"
#include "wl_modules.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_DEVICES 1024 /* the largest [run] device + 1 */

/* one cuBLAS handle per device, made at the first GEMM bound there and kept for the process;
 * what was last set on it, so that a call sets its stream and workspace only when they change */
struct cublas_device {
  cublasHandle_t handle;
  cudaStream_t stream;
  void *workspace;
  size_t workspace_size;
  bool current; /* stream and workspace are set on the handle */
};
static struct cublas_device devices[MAX_DEVICES];

struct gemm_work {
  const struct wl_cublas_api *api;
  struct cublas_device *dev; /* NULL under --compile-only: nothing runs */
  void *workspace;
  size_t workspace_size;
  cublasOperation_t opa, opb;
  int m, n, k, lda, ldb, ldc;
  cudaDataType_t type;
  cublasComputeType_t compute;
  union wl_gemm_scale alpha, beta;
};

static const char *status_text(const struct wl_cublas_api *api, cublasStatus_t st) {
  const char *s = api->status_string(st);
  return s ? s : "unknown cuBLAS status";
}

/* the handle of the device in use, created on first use */
static struct cublas_device *device_handle(lua_State *L, const struct wl_cublas_api *api,
                                           const char *fn) {
  wl_device_ready(L);
  int i = wl_device_index();
  if (i < 0 || i >= MAX_DEVICES)
    wl_raise(L, WL_EXIT_CUDA, "%s: device %d: wlrun keeps cuBLAS handles for devices 0 to %d", fn,
             i, MAX_DEVICES - 1);
  struct cublas_device *d = &devices[i];
  if (d->handle) return d;
  cublasStatus_t st = api->create(&d->handle);
  if (st != CUBLAS_STATUS_SUCCESS) {
    d->handle = NULL;
    wl_raise(L, WL_EXIT_CUDA, "%s: cublasCreate on device %d: %s", fn, i, status_text(api, st));
  }
  /* TF32 comes from the compute type of each call (wl_gemm_compute_type), never from the handle */
  st = api->set_math_mode(d->handle, CUBLAS_DEFAULT_MATH);
  if (st != CUBLAS_STATUS_SUCCESS)
    wl_raise(L, WL_EXIT_CUDA, "%s: cublasSetMathMode on device %d: %s", fn, i,
             status_text(api, st));
  return d;
}

static int gemm_call(void *ctx, void *const *args, cudaStream_t stream, char *why, size_t whylen) {
  struct gemm_work *w = ctx;
  struct cublas_device *d = w->dev;
  if (!d) return 0;
  const struct wl_cublas_api *api = w->api;
  cublasStatus_t st;
  if (!d->current || d->stream != stream || d->workspace != w->workspace ||
      d->workspace_size != w->workspace_size) {
    d->current = false;
    /* cublasSetStream puts the default workspace back: the call's own is set after it, so that
     * cuBLAS never allocates (which a graph capture forbids) */
    if ((st = api->set_stream(d->handle, stream)) != CUBLAS_STATUS_SUCCESS) {
      snprintf(why, whylen, "cublasSetStream: %s", status_text(api, st));
      return 1;
    }
    if ((st = api->set_workspace(d->handle, w->workspace, w->workspace_size)) !=
        CUBLAS_STATUS_SUCCESS) {
      snprintf(why, whylen, "cublasSetWorkspace (%zu bytes): %s", w->workspace_size,
               status_text(api, st));
      return 1;
    }
    d->stream = stream, d->workspace = w->workspace, d->workspace_size = w->workspace_size,
    d->current = true;
  }
  const void *a = *(void *const *)args[0], *b = *(void *const *)args[1];
  void *c = *(void *const *)args[2];
  st = api->gemm_ex(d->handle, w->opb, w->opa, w->n, w->m, w->k, &w->alpha, b, w->type, w->ldb, a,
                    w->type, w->lda, &w->beta, c, w->type, w->ldc, w->compute, CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS) {
    snprintf(why, whylen, "cublasGemmEx: %s", status_text(api, st));
    return 1;
  }
  return 0;
}

static void gemm_release(void *ctx) {
  struct gemm_work *w = ctx;
  if (!w) return;
  if (w->dev && w->dev->workspace == w->workspace) w->dev->current = false;
  wl_gemm_workspace_free(w->workspace);
  free(w);
}

/* wl.cublas.gemm{a =, b =, c =, m =, n =, k =, ...} -> a bound launch */
static int l_gemm(lua_State *L) {
  static bool warned;
  const char *fn = "wl.cublas.gemm";
  struct wl_gemm g;
  wl_gemm_read(L, 1, fn, &g);
  lua_settop(L, 1);
  char why[2048];
  enum wl_lib_failure failure;
  wl_cublas_prepare_wait();
  const struct wl_cublas_api *api = wl_cublas_load(why, sizeof why, &failure);
  if (!api) wl_gemm_library_missing(L, fn, why, failure, &warned);
  struct cublas_device *dev = api && !wl_backend->no_device ? device_handle(L, api, fn) : NULL;
  void *workspace = api ? wl_gemm_workspace(L, &g) : NULL;
  struct gemm_work *w = calloc(1, sizeof *w);
  if (!w) {
    wl_gemm_workspace_free(workspace);
    wl_raise(L, WL_EXIT_CUDA, "%s: out of host memory", fn);
  }
  *w = (struct gemm_work){.api = api,
                          .dev = dev,
                          .workspace = workspace,
                          .workspace_size = workspace ? g.workspace : 0,
                          .opa = g.transa ? CUBLAS_OP_T : CUBLAS_OP_N,
                          .opb = g.transb ? CUBLAS_OP_T : CUBLAS_OP_N,
                          .m = g.m,
                          .n = g.n,
                          .k = g.k,
                          .lda = g.lda,
                          .ldb = g.ldb,
                          .ldc = g.ldc,
                          .type = wl_gemm_data_type(g.dtype),
                          .compute = wl_gemm_compute_type(g.compute)};
  wl_gemm_scales(&g, &w->alpha, &w->beta);
  struct wl_host_work host = {gemm_call, w, gemm_release, true, "cublas"};
  wl_gemm_push_work(L, 1, &g, "cublas.gemm", &host);
  return 1;
}

/* wl.cublas.library() -> {path =, version =}, or nil and why it does not load */
static int l_library(lua_State *L) {
  char why[2048];
  enum wl_lib_failure failure;
  wl_cublas_prepare_wait();
  const struct wl_cublas_api *api = wl_cublas_load(why, sizeof why, &failure);
  return wl_gemm_push_library(L, api ? api->path : NULL, api ? (lua_Integer)api->version : 0, why);
}

/* wl.cublas.prepare{{dtype =, compute =}, ...} -> true when a thread started to ask cuBLASLt's
 * heuristics for those kinds ahead (cublas_prepare.h); false when there is nothing new to ask
 * or no device (--compile-only); false and why when the thread cannot start */
static int l_prepare(lua_State *L) {
  const char *fn = "wl.cublas.prepare";
  if (lua_type(L, 1) != LUA_TTABLE || lua_rawlen(L, 1) == 0) {
    bool fields = lua_type(L, 1) == LUA_TTABLE && (lua_pushnil(L), lua_next(L, 1));
    wl_raise(L, WL_EXIT_SCRIPT, "%s: expected a list of kinds {{dtype =, compute =}, ...}, got %s",
             fn,
             fields ? "a table with no list entries (one kind is written {{dtype = ...}})"
             : lua_type(L, 1) == LUA_TTABLE ? "an empty table"
                                            : luaL_typename(L, 1));
  }
  lua_Integer len = (lua_Integer)lua_rawlen(L, 1);
  for (lua_pushnil(L); lua_next(L, 1); lua_pop(L, 1)) {
    lua_Integer i = lua_isinteger(L, -2) ? lua_tointeger(L, -2) : 0;
    if (i < 1 || i > len)
      wl_raise(L, WL_EXIT_SCRIPT,
               "%s: expected a list of kinds {{dtype =, compute =}, ...}; it has the key %s", fn,
               lua_type(L, -2) == LUA_TSTRING ? lua_pushfstring(L, "'%s'", lua_tostring(L, -2))
                                              : luaL_tolstring(L, -2, NULL));
  }
  struct wl_gemm_kind kinds[WL_PREPARE_MAX];
  int n = 0;
  for (lua_Integer i = 1; i <= len; i++) {
    char at[64];
    struct wl_gemm g;
    snprintf(at, sizeof at, "%s: kind %lld", fn, (long long)i);
    lua_rawgeti(L, 1, i);
    wl_gemm_read_kind(L, lua_gettop(L), at, &g);
    lua_pop(L, 1);
    struct wl_gemm_kind k = {wl_gemm_data_type(g.dtype), wl_gemm_compute_type(g.compute),
                             wl_gemm_scale_type(g.compute)};
    bool known = false;
    for (int j = 0; j < n && !known; j++) known = wl_gemm_kind_same(&kinds[j], &k);
    if (!known && n < WL_PREPARE_MAX) kinds[n++] = k; /* fewer kinds exist than WL_PREPARE_MAX */
  }
  if (wl_backend->no_device) {
    lua_pushboolean(L, false);
    return 1;
  }
  char why[256] = "";
  /* the driver loaded first: the thread's load of the libraries holds the loader's lock, which
   * the driver's own load needs; the device's context is the thread's to make, so that a run
   * that asks before its context is made overlaps the two */
  int count;
  if (wl_backend->device_count(&count) != cudaSuccess)
    wl_backend->clear_error(); /* the thread says why */
  bool started = wl_cublas_prepare_start(wl_device_promise(), kinds, n, why, sizeof why);
  lua_pushboolean(L, started);
  if (started || !*why) return 1;
  lua_pushstring(L, why);
  return 2;
}

/* wl.cublas.prepared() -> {asked =, prepared =, seconds =, waited =, running =, working =, why =}:
 * what wl.cublas.prepare's threads that ended did (why: the last failure); running: a thread
 * not waited for yet; working: one still at work */
static int l_prepared(lua_State *L) {
  struct wl_prepare_report r;
  wl_cublas_prepare_report(&r);
  lua_createtable(L, 0, 7);
  lua_pushinteger(L, r.asked);
  lua_setfield(L, -2, "asked");
  lua_pushinteger(L, r.prepared);
  lua_setfield(L, -2, "prepared");
  lua_pushnumber(L, r.seconds);
  lua_setfield(L, -2, "seconds");
  lua_pushnumber(L, r.waited);
  lua_setfield(L, -2, "waited");
  lua_pushboolean(L, r.running);
  lua_setfield(L, -2, "running");
  lua_pushboolean(L, r.working);
  lua_setfield(L, -2, "working");
  if (*r.why) {
    lua_pushstring(L, r.why);
    lua_setfield(L, -2, "why");
  }
  return 1;
}

void wl_open_cublas(lua_State *L) {
  static const luaL_Reg fns[] = {{"gemm", l_gemm},
                                 {"library", l_library},
                                 {"prepare", l_prepare},
                                 {"prepared", l_prepared},
                                 {NULL, NULL}};
  luaL_newlib(L, fns);
  lua_setfield(L, -2, "cublas");
}
