/* wl.cublas: cuBLAS GEMM as bound work (docs/cublas.md).
 * wl.cublas.gemm{...} checks its options (gemm_args.c), loads cuBLAS (cublas_load.c), creates
 * the device's handle and the call's workspace before anything is measured, and gives a bound
 * launch of host work (host_work.h) that queues cublasGemmEx on the launch's stream. */
#include "cublas_load.h"
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
static struct cublas_device *device_handle(lua_State *L, const struct wl_cublas_api *api, const char *fn) {
  wl_device_ready(L);
  int i = wl_device_index();
  if (i < 0 || i >= MAX_DEVICES) wl_raise(L, WL_EXIT_CUDA, "%s: device %d: wlrun keeps cuBLAS handles for devices 0 to %d", fn, i, MAX_DEVICES - 1);
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
    wl_raise(L, WL_EXIT_CUDA, "%s: cublasSetMathMode on device %d: %s", fn, i, status_text(api, st));
  return d;
}

static int gemm_call(void *ctx, void *const *args, cudaStream_t stream, char *why, size_t whylen) {
  struct gemm_work *w = ctx;
  struct cublas_device *d = w->dev;
  if (!d) return 0;
  const struct wl_cublas_api *api = w->api;
  cublasStatus_t st;
  if (!d->current || d->stream != stream || d->workspace != w->workspace || d->workspace_size != w->workspace_size) {
    d->current = false;
    /* cublasSetStream puts the default workspace back: the call's own is set after it, so that
     * cuBLAS never allocates (which a graph capture forbids) */
    if ((st = api->set_stream(d->handle, stream)) != CUBLAS_STATUS_SUCCESS) {
      snprintf(why, whylen, "cublasSetStream: %s", status_text(api, st));
      return 1;
    }
    if ((st = api->set_workspace(d->handle, w->workspace, w->workspace_size)) != CUBLAS_STATUS_SUCCESS) {
      snprintf(why, whylen, "cublasSetWorkspace (%zu bytes): %s", w->workspace_size, status_text(api, st));
      return 1;
    }
    d->stream = stream, d->workspace = w->workspace, d->workspace_size = w->workspace_size, d->current = true;
  }
  const void *a = *(void *const *)args[0], *b = *(void *const *)args[1];
  void *c = *(void *const *)args[2];
  st = api->gemm_ex(d->handle, w->opb, w->opa, w->n, w->m, w->k, &w->alpha, b, w->type, w->ldb, a, w->type, w->lda,
                    &w->beta, c, w->type, w->ldc, w->compute, CUBLAS_GEMM_DEFAULT);
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
  const struct wl_cublas_api *api = wl_cublas_load(why, sizeof why, &failure);
  if (!api) wl_gemm_library_missing(L, fn, why, failure, &warned);
  struct cublas_device *dev = api && !wl_backend->no_device ? device_handle(L, api, fn) : NULL;
  void *workspace = api ? wl_gemm_workspace(L, &g) : NULL;
  struct gemm_work *w = calloc(1, sizeof *w);
  if (!w) {
    wl_gemm_workspace_free(workspace);
    wl_raise(L, WL_EXIT_CUDA, "%s: out of host memory", fn);
  }
  *w = (struct gemm_work){.api = api, .dev = dev, .workspace = workspace, .workspace_size = workspace ? g.workspace : 0,
                          .opa = g.transa ? CUBLAS_OP_T : CUBLAS_OP_N, .opb = g.transb ? CUBLAS_OP_T : CUBLAS_OP_N,
                          .m = g.m, .n = g.n, .k = g.k, .lda = g.lda, .ldb = g.ldb, .ldc = g.ldc,
                          .type = wl_gemm_data_type(g.dtype), .compute = wl_gemm_compute_type(g.compute)};
  wl_gemm_scales(&g, &w->alpha, &w->beta);
  struct wl_host_work host = {gemm_call, w, gemm_release, true, "cublas"};
  wl_gemm_push_work(L, 1, &g, "cublas.gemm", &host);
  return 1;
}

/* wl.cublas.library() -> {path =, version =}, or nil and why it does not load */
static int l_library(lua_State *L) {
  char why[2048];
  enum wl_lib_failure failure;
  const struct wl_cublas_api *api = wl_cublas_load(why, sizeof why, &failure);
  return wl_gemm_push_library(L, api ? api->path : NULL, api ? (lua_Integer)api->version : 0, why);
}

void wl_open_cublas(lua_State *L) {
  static const luaL_Reg fns[] = {{"gemm", l_gemm}, {"library", l_library}, {NULL, NULL}};
  luaL_newlib(L, fns);
  lua_setfield(L, -2, "cublas");
}
