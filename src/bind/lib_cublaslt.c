/* wl.cublaslt: cuBLASLt matmul as bound work (docs/cublas.md).
 * wl.cublaslt.matmul{...} takes the options of wl.cublas.gemm (gemm_args.c); at bind it makes
 * the descriptors, allocates the workspace, and asks cublasLtMatmulAlgoGetHeuristic for the
 * algorithm, so that a call only queues cublasLtMatmul on the launch's stream. */
#include "cublas_load.h"
#include "cublas_prepare.h"
#include "cuda_kernel.h"
#include "cuda_tensor.h"
#include "gemm_args.h"
#include "host_work.h"
#include "wl_exit.h"
#include "wl_modules.h"

#include <lauxlib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_DEVICES 1024 /* the largest [run] device + 1 */

static cublasLtHandle_t handles[MAX_DEVICES]; /* one per device, made at first use, kept */

struct matmul_work {
  const struct wl_cublaslt_api *api;
  cublasLtHandle_t handle; /* NULL under --compile-only: nothing runs */
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t first, second, out; /* of the column-major call: B, A, C */
  cublasLtMatmulAlgo_t algo;
  void *workspace;
  size_t workspace_size;
  union wl_gemm_scale alpha, beta;
};

static void matmul_release(void *ctx) {
  struct matmul_work *w = ctx;
  if (!w) return;
  /* freeing reports nothing: the statuses of destroy calls are of no use here */
  if (w->desc) (void)w->api->desc_destroy(w->desc);
  if (w->first) (void)w->api->layout_destroy(w->first);
  if (w->second) (void)w->api->layout_destroy(w->second);
  if (w->out) (void)w->api->layout_destroy(w->out);
  wl_gemm_workspace_free(w->workspace);
  free(w);
}

static int matmul_call(void *ctx, void *const *args, cudaStream_t stream, char *why,
                       size_t whylen) {
  struct matmul_work *w = ctx;
  if (!w->handle) return 0;
  const void *a = *(void *const *)args[0], *b = *(void *const *)args[1];
  void *c = *(void *const *)args[2];
  cublasStatus_t st =
      w->api->matmul(w->handle, w->desc, &w->alpha, b, w->first, a, w->second, &w->beta, c, w->out,
                     c, w->out, &w->algo, w->workspace, w->workspace_size, stream);
  if (st != CUBLAS_STATUS_SUCCESS) {
    const char *s = w->api->status_string(st);
    snprintf(why, whylen, "cublasLtMatmul: %s", s ? s : "unknown cuBLAS status");
    return 1;
  }
  return 0;
}

/* raises with the status of the cuBLASLt call STEP, after releasing w */
static void check(lua_State *L, struct matmul_work *w, cublasStatus_t st, const char *fn,
                  const char *step) {
  if (st == CUBLAS_STATUS_SUCCESS) return;
  const char *s = w->api->status_string(st);
  char msg[256];
  snprintf(msg, sizeof msg, "%s: %s: %s", fn, step, s ? s : "unknown cuBLAS status");
  matmul_release(w);
  wl_raise(L, WL_EXIT_CUDA, "%s", msg);
}

/* the descriptors of the column-major call C^T = op(B)^T op(A)^T (gemm_args.h) */
static void describe(lua_State *L, struct matmul_work *w, const struct wl_gemm *g, const char *fn) {
  const struct wl_cublaslt_api *api = w->api;
  cudaDataType_t type = wl_gemm_data_type(g->dtype);
  cublasOperation_t opa = g->transa ? CUBLAS_OP_T : CUBLAS_OP_N,
                    opb = g->transb ? CUBLAS_OP_T : CUBLAS_OP_N;
  check(
      L, w,
      api->desc_create(&w->desc, wl_gemm_compute_type(g->compute), wl_gemm_scale_type(g->compute)),
      fn, "cublasLtMatmulDescCreate");
  check(L, w, api->desc_set(w->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opb, sizeof opb), fn,
        "setting TRANSA");
  check(L, w, api->desc_set(w->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opa, sizeof opa), fn,
        "setting TRANSB");
  /* a row-major rows x cols matrix is a column-major cols x rows one */
  uint64_t brows = g->transb ? g->n : g->k, bcols = g->transb ? g->k : g->n;
  uint64_t arows = g->transa ? g->k : g->m, acols = g->transa ? g->m : g->k;
  check(L, w, api->layout_create(&w->first, type, bcols, brows, g->ldb), fn,
        "cublasLtMatrixLayoutCreate (b)");
  check(L, w, api->layout_create(&w->second, type, acols, arows, g->lda), fn,
        "cublasLtMatrixLayoutCreate (a)");
  check(L, w, api->layout_create(&w->out, type, (uint64_t)g->n, (uint64_t)g->m, g->ldc), fn,
        "cublasLtMatrixLayoutCreate (c)");
}

/* the largest power of two up to 256 that divides the address */
static uint32_t alignment(const void *p) {
  uintptr_t a = (uintptr_t)p;
  uint32_t align = 256;
  while (align > 1 && a % align) align /= 2;
  return align;
}

/* the handle of the device in use, and the best algorithm for w within its workspace and for the
 * alignment of the tensors a, b, c */
static void choose_algorithm(lua_State *L, struct matmul_work *w, const struct wl_gemm *g,
                             const void *a, const void *b, const void *c, const char *fn) {
  const struct wl_cublaslt_api *api = w->api;
  int dev = wl_device_index();
  if (dev < 0 || dev >= MAX_DEVICES) {
    matmul_release(w);
    wl_raise(L, WL_EXIT_CUDA, "%s: device %d: wlrun keeps cuBLASLt handles for devices 0 to %d", fn,
             dev, MAX_DEVICES - 1);
  }
  if (!handles[dev]) {
    cublasStatus_t st = api->create(&handles[dev]);
    if (st != CUBLAS_STATUS_SUCCESS) handles[dev] = NULL;
    check(L, w, st, fn, "cublasLtCreate");
  }
  w->handle = handles[dev];
  cublasLtMatmulPreference_t pref;
  check(L, w, api->pref_create(&pref), fn, "cublasLtMatmulPreferenceCreate");
  uint64_t max_workspace = w->workspace_size;
  cublasStatus_t st = api->pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace,
                                    sizeof max_workspace);
  /* the bound tensors never change: an algorithm for their alignment (a view may start anywhere) */
  static const cublasLtMatmulPreferenceAttributes_t align_attr[] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  const void *first_ptr[] = {b, a, c, c}; /* the column-major call's A, B, C, D */
  for (int i = 0; i < 4 && st == CUBLAS_STATUS_SUCCESS; i++) {
    uint32_t align = alignment(first_ptr[i]);
    st = api->pref_set(pref, align_attr[i], &align, sizeof align);
  }
  cublasLtMatmulHeuristicResult_t result;
  int found = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = api->heuristic(w->handle, w->desc, w->first, w->second, w->out, w->out, pref, 1, &result,
                        &found);
  (void)api->pref_destroy(pref); /* its status changes nothing */
  check(L, w, st, fn, "cublasLtMatmulAlgoGetHeuristic");
  if (found < 1) {
    char name[160];
    wl_gemm_name(g, "cublaslt.matmul", name, sizeof name);
    matmul_release(w);
    wl_raise(L, WL_EXIT_CUDA,
             "%s: cuBLASLt has no algorithm for %s within a workspace of %zu bytes", fn, name,
             g->workspace);
  }
  w->algo = result.algo;
}

/* the device address of the tensor in field of the option table at arg (checked by wl_gemm_read) */
static const void *tensor_data(lua_State *L, int arg, const char *field) {
  lua_getfield(L, arg, field);
  const void *p = wl_test_tensor(L, -1)->data;
  lua_pop(L, 1);
  return p;
}

/* wl.cublaslt.matmul{a =, b =, c =, m =, n =, k =, ...} -> a bound launch */
static int l_matmul(lua_State *L) {
  static bool warned;
  const char *fn = "wl.cublaslt.matmul";
  struct wl_gemm g;
  wl_gemm_read(L, 1, fn, &g);
  lua_settop(L, 1);
  char why[2048];
  enum wl_lib_failure failure;
  wl_cublas_prepare_wait();
  const struct wl_cublaslt_api *api = wl_cublaslt_load(why, sizeof why, &failure);
  if (!api) wl_gemm_library_missing(L, fn, why, failure, &warned);
  if (api && !wl_backend->no_device) wl_device_ready(L);
  void *workspace = api ? wl_gemm_workspace(L, &g) : NULL;
  struct matmul_work *w = calloc(1, sizeof *w);
  if (!w) {
    wl_gemm_workspace_free(workspace);
    wl_raise(L, WL_EXIT_CUDA, "%s: out of host memory", fn);
  }
  w->api = api;
  w->workspace = workspace;
  w->workspace_size = workspace ? g.workspace : 0;
  wl_gemm_scales(&g, &w->alpha, &w->beta);
  if (api) describe(L, w, &g, fn); /* host only: checked under --compile-only too */
  if (api && !wl_backend->no_device)
    choose_algorithm(L, w, &g, tensor_data(L, 1, "a"), tensor_data(L, 1, "b"),
                     tensor_data(L, 1, "c"), fn);
  struct wl_host_work host = {matmul_call, w, matmul_release, true, "cublaslt"};
  wl_gemm_push_work(L, 1, &g, "cublaslt.matmul", &host);
  return 1;
}

/* wl.cublaslt.library() -> {path =, version =}, or nil and why it does not load */
static int l_library(lua_State *L) {
  char why[2048];
  enum wl_lib_failure failure;
  wl_cublas_prepare_wait();
  const struct wl_cublaslt_api *api = wl_cublaslt_load(why, sizeof why, &failure);
  return wl_gemm_push_library(L, api ? api->path : NULL, api ? (lua_Integer)api->version : 0, why);
}

void wl_open_cublaslt(lua_State *L) {
  static const luaL_Reg fns[] = {{"matmul", l_matmul}, {"library", l_library}, {NULL, NULL}};
  luaL_newlib(L, fns);
  lua_setfield(L, -2, "cublaslt");
}
