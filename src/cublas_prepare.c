/* cuBLASLt's heuristics asked ahead, on a thread of their own (cublas_prepare.h). */
#include "cublas_prepare.h"

#include "backend.h"
#include "cublas_load.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIDE 1024           /* the matrices the heuristics are asked about: any size warms the kind */
#define WORKSPACE (32u << 20) /* wl.cublas.gemm's default workspace */

/* Written by the main thread while no preparation runs; the thread reads its kinds and writes
 * prepared, seconds and why, which the main thread reads after joining it. */
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
static bool ask(const struct wl_cublaslt_api *api, cublasLtHandle_t handle, const struct wl_gemm_kind *k) {
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
    st = api->pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace);
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
  else if (found < 1) failed("cublasLtMatmulAlgoGetHeuristic found no algorithm for a kind asked for");
  return st == CUBLAS_STATUS_SUCCESS && found > 0;
}

/* The process's end waits for the thread (exit handlers run on the thread that calls exit, the
 * main thread): registered before the thread starts, for an end that comes while it loads the
 * library, and again once the library is loaded, so that it also runs before the library's own
 * exit handlers (they run in the reverse order of their registration). */
static void wait_at_exit(void) { wl_cublas_prepare_wait(); }

static void register_exit_wait(void) {
  if (atexit(wait_at_exit) != 0) failed("atexit: cannot register the wait at the process's end");
}

static void *prepare(void *unused) {
  (void)unused;
  static pthread_once_t registered = PTHREAD_ONCE_INIT;
  double t0 = now();
  char why[512] = "";
  enum wl_lib_failure failure;
  cublasLtHandle_t handle = NULL;
  const struct wl_cublaslt_api *api = wl_cublaslt_load(why, sizeof why, &failure);
  cublasStatus_t st;
  if (!api) {
    failed("%s", why);
  } else if (pthread_once(&registered, register_exit_wait) != 0) {
    failed("pthread_once failed");
  } else if (wl_backend->open_device(prep.device, why, sizeof why) != cudaSuccess) {
    failed("device %d: %s", prep.device, why);
  } else if ((st = api->create(&handle)) != CUBLAS_STATUS_SUCCESS) {
    failed("cublasLtCreate: %s", status_text(api, st));
  } else {
    for (int i = prep.first; i < prep.last; i++) prep.prepared += ask(api, handle, &prep.asked[i]);
    (void)api->destroy(handle); /* what it asked stays known to the library: the handle is not needed */
  }
  prep.seconds += now() - t0;
  atomic_store(&working, false);
  return NULL;
}

static bool same(const struct wl_gemm_kind *a, const struct wl_gemm_kind *b) {
  return a->type == b->type && a->compute == b->compute && a->scale == b->scale;
}

bool wl_cublas_prepare_start(int device, const struct wl_gemm_kind *kinds, int n, char *why, size_t whylen) {
  wl_cublas_prepare_wait();
  int first = prep.n_asked;
  for (int i = 0; i < n && prep.n_asked < WL_PREPARE_MAX; i++) {
    bool known = false;
    for (int j = 0; j < prep.n_asked && !known; j++) known = same(&prep.asked[j], &kinds[i]);
    if (!known) prep.asked[prep.n_asked++] = kinds[i];
  }
  if (prep.n_asked == first) return false;
  prep.first = first, prep.last = prep.n_asked, prep.device = device;
  static bool registered;
  if (!registered && atexit(wait_at_exit) != 0) {
    prep.n_asked = first;
    snprintf(why, whylen, "atexit: cannot register the wait at the process's end");
    return false;
  }
  registered = true;
  atomic_store(&working, true);
  int err = pthread_create(&prep.thread, NULL, prepare, NULL);
  if (err != 0) {
    atomic_store(&working, false);
    prep.n_asked = first; /* not asked after all: a later call may try again */
    snprintf(why, whylen, "cannot start a thread: %s", strerror(err));
    return false;
  }
  prep.running = true;
  return true;
}

void wl_cublas_prepare_wait(void) {
  if (!prep.running) return;
  double t0 = now();
  (void)pthread_join(prep.thread, NULL); /* a thread of ours, joinable, joined once: cannot fail */
  prep.running = false;
  prep.waited += now() - t0;
}

void wl_cublas_prepare_report(struct wl_prepare_report *r) {
  memset(r, 0, sizeof *r);
  r->running = prep.running;
  r->working = atomic_load(&working);
  r->waited = prep.waited;
  if (prep.running) return; /* the thread's fields are its own until it is joined */
  r->asked = prep.n_asked;
  r->prepared = prep.prepared;
  r->seconds = prep.seconds;
  snprintf(r->why, sizeof r->why, "%s", prep.why);
}
