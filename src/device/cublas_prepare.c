/* cuBLASLt's heuristics asked ahead, on a thread of their own (cublas_prepare.h). */
#include "cublas_prepare.h"

#include "backend.h"
#include "cublas_load.h"
#include "side_thread.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIDE 1024 /* the matrices the heuristics are asked about: any size warms the kind */
#define WORKSPACE (32u << 20) /* wl.cublas.gemm's default workspace */
#define EXIT_WAIT_S WL_PREPARE_EXIT_WAIT_S

/* Written by the main thread while no preparation runs; the thread reads its kinds and writes
 * prepared, seconds and why, which the main thread reads after joining it (then copied into
 * done, what the report gives while a later preparation runs). */
static struct {
  struct wl_gemm_kind asked[WL_PREPARE_MAX];
  int n_asked;     /* every kind asked for, in this process */
  int first, last; /* the running preparation's kinds: asked[first..last) */
  int device;
  pthread_t thread;
  bool running;
  int prepared;
  double seconds, waited;
  char why[600];
  struct wl_prepare_report done;
} prep;
static atomic_bool working; /* from the thread's start to its last step: read by the main thread */

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t); /* cannot fail for CLOCK_MONOTONIC on Linux */
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void failed(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prep.why, sizeof prep.why, fmt, ap);
  va_end(ap);
}

static const char *status_text(const struct wl_cublaslt_api *api, cublasStatus_t st) {
  const char *s = api->status_string(st);
  return s ? s : "unknown cuBLAS status";
}

/* the heuristics of one kind, asked once; whether they answered */
static bool ask(const struct wl_cublaslt_api *api, cublasLtHandle_t handle,
                const struct wl_gemm_kind *k) {
  cublasLtMatmulDesc_t desc = NULL;
  cublasLtMatrixLayout_t layout = NULL;
  cublasLtMatmulPreference_t pref = NULL;
  cublasLtMatmulHeuristicResult_t result;
  size_t workspace = WORKSPACE;
  int found = 0;
  const char *step = "cublasLtMatmulDescCreate";
  cublasStatus_t st = api->desc_create(&desc, k->compute, k->scale);
  if (st == CUBLAS_STATUS_SUCCESS) {
    step = "cublasLtMatrixLayoutCreate";
    st = api->layout_create(&layout, k->type, SIDE, SIDE, SIDE);
  }
  if (st == CUBLAS_STATUS_SUCCESS) {
    step = "cublasLtMatmulPreferenceCreate";
    st = api->pref_create(&pref);
  }
  if (st == CUBLAS_STATUS_SUCCESS) {
    step = "cublasLtMatmulPreferenceSetAttribute";
    st =
        api->pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace);
  }
  if (st == CUBLAS_STATUS_SUCCESS) {
    step = "cublasLtMatmulAlgoGetHeuristic";
    st = api->heuristic(handle, desc, layout, layout, layout, layout, pref, 1, &result, &found);
  }
  /* what was made is destroyed whatever happened; their statuses change nothing */
  if (pref) (void)api->pref_destroy(pref);
  if (layout) (void)api->layout_destroy(layout);
  if (desc) (void)api->desc_destroy(desc);
  if (st != CUBLAS_STATUS_SUCCESS) failed("%s: %s", step, status_text(api, st));
  else if (found < 1)
    failed("cublasLtMatmulAlgoGetHeuristic found no algorithm for a kind asked for");
  return st == CUBLAS_STATUS_SUCCESS && found > 0;
}

/* A last resort for an end that comes by a path that did not call wl_cublas_prepare_finish:
 * registered before the thread starts, for an end that comes while it loads the libraries. (An
 * end that comes later would run the library's own exit handlers first, which were registered
 * after it: wlrun's ends, main's return, os.exit and a panic, finish the thread first,
 * wl_host_finish_threads.) */
static void wait_at_exit(void) { wl_cublas_prepare_wait(); }

/* The thread's cuBLASLt handle, made once and kept for the process: destroying it frees device
 * memory, and cudaFree waits for the device, which may be held by a blocking kernel that only
 * the main thread releases, the main thread meanwhile waiting for the driver that the free
 * holds (the blocking kernel's timeout ends that: 100 ms lost). For the same reason the thread
 * makes its device current with use_device (cudaSetDevice), not open_device (cudaFree(NULL)). */
static cublasLtHandle_t lt_handle(const struct wl_cublaslt_api *api, cublasStatus_t *st) {
  static cublasLtHandle_t handle;
  if (!handle && (*st = api->create(&handle)) != CUBLAS_STATUS_SUCCESS) handle = NULL;
  return handle;
}

static void *prepare(void *unused) {
  (void)unused;
  double t0 = now();
  char why[512] = "";
  enum wl_lib_failure failure;
  cublasLtHandle_t handle = NULL;
  /* cuBLAS first, where it is: it brings the cuBLASLt beside it (WLRUN_CUBLAS's), which the
   * search for cuBLASLt then finds loaded, as for a script that calls wl.cublas.gemm first */
  (void)wl_cublas_load(why, sizeof why, &failure); /* a failure is the GEMM's to report */
  const struct wl_cublaslt_api *api = wl_cublaslt_load(why, sizeof why, &failure);
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  cudaError_t err;
  if (!api) {
    failed("%s", why);
  } else if ((err = wl_backend->use_device(prep.device)) != cudaSuccess) {
    failed("device %d: cudaSetDevice: %s: %s", prep.device, cudaGetErrorName(err),
           cudaGetErrorString(err));
  } else if (!(handle = lt_handle(api, &st))) {
    failed("cublasLtCreate: %s", status_text(api, st));
  } else {
    for (int i = prep.first; i < prep.last; i++) prep.prepared += ask(api, handle, &prep.asked[i]);
  }
  prep.seconds += now() - t0;
  atomic_store(&working, false);
  return NULL;
}

/* whether kind k is asked for already, or among the first n of kinds */
static bool known(const struct wl_gemm_kind *k, const struct wl_gemm_kind *kinds, int n) {
  for (int j = 0; j < prep.n_asked; j++)
    if (wl_gemm_kind_same(&prep.asked[j], k)) return true;
  for (int j = 0; j < n; j++)
    if (wl_gemm_kind_same(&kinds[j], k)) return true;
  return false;
}

bool wl_cublas_prepare_start(int device, const struct wl_gemm_kind *kinds, int n, char *why,
                             size_t whylen) {
  struct wl_gemm_kind fresh[WL_PREPARE_MAX];
  int n_fresh = 0;
  for (int i = 0; i < n && prep.n_asked + n_fresh < WL_PREPARE_MAX; i++)
    if (!known(&kinds[i], fresh, n_fresh)) fresh[n_fresh++] = kinds[i];
  if (n_fresh == 0) return false; /* without waiting for a preparation under way */
  wl_cublas_prepare_wait();       /* the thread reads asked, first and last */
  static bool registered;
  if (!registered && atexit(wait_at_exit) != 0) {
    snprintf(why, whylen, "atexit: cannot register the wait at the process's end");
    return false;
  }
  registered = true;
  int first = prep.n_asked;
  memcpy(&prep.asked[first], fresh, (size_t)n_fresh * sizeof *fresh);
  prep.n_asked += n_fresh;
  prep.first = first, prep.last = prep.n_asked, prep.device = device;
  atomic_store(&working, true);
  int err = wl_side_thread_start(&prep.thread, prepare);
  if (err != 0) {
    atomic_store(&working, false);
    prep.n_asked = first; /* not asked after all: a later call may try again */
    snprintf(why, whylen, "cannot start a thread: %s", strerror(err));
    return false;
  }
  prep.running = true;
  return true;
}

/* after the join: the thread's fields are the main thread's again */
static void joined(double t0) {
  prep.running = false;
  prep.waited += now() - t0;
  prep.done = (struct wl_prepare_report){
      .asked = prep.n_asked, .prepared = prep.prepared, .seconds = prep.seconds};
  snprintf(prep.done.why, sizeof prep.done.why, "%s", prep.why);
}

void wl_cublas_prepare_wait(void) {
  if (!prep.running) return;
  double t0 = now();
  (void)pthread_join(prep.thread, NULL); /* a thread of ours, joinable, joined once: cannot fail */
  joined(t0);
}

bool wl_cublas_prepare_finish(void) {
  if (!prep.running) return true;
  double t0 = now();
  if (!wl_side_thread_join(prep.thread, EXIT_WAIT_S)) return false;
  joined(t0);
  return true;
}

void wl_cublas_prepare_report(struct wl_prepare_report *r) {
  if (prep.running && !atomic_load(&working)) wl_cublas_prepare_wait(); /* at its end: no wait */
  *r = prep.done; /* the finished preparations' account */
  r->running = prep.running;
  r->working = atomic_load(&working);
  r->waited = prep.waited;
}
