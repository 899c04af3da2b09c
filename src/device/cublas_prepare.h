/* cuBLAS's first GEMM of each kind (data type and compute type) costs the host 12-180 ms on
 * the H200, the same in a raw C program: cuBLASLt works out its heuristics for that kind
 * (docs/cublas.md). wl.cublas.prepare asks for them ahead: a thread of its own loads cuBLASLt
 * and asks its heuristics once for each kind, on the device in use, while the run goes on.
 * Host work only: nothing is queued on the GPU. The main thread waits for that thread before
 * it loads cuBLAS or cuBLASLt or binds a GEMM of theirs (so that one thread at a time loads the
 * libraries) and before the process ends. */
#ifndef WL_CUBLAS_PREPARE_H
#define WL_CUBLAS_PREPARE_H

#include <cublasLt.h>
#include <stdbool.h>
#include <stddef.h>

#define WL_PREPARE_MAX 16 /* kinds a process prepares, in all */

struct wl_gemm_kind {
  cudaDataType_t type;
  cublasComputeType_t compute;
  cudaDataType_t scale;
};

static inline bool wl_gemm_kind_same(const struct wl_gemm_kind *a, const struct wl_gemm_kind *b) {
  return a->type == b->type && a->compute == b->compute && a->scale == b->scale;
}

/* Starts preparing the kinds not asked for before, on device; where there are any, waits first
 * for a preparation under way. Returns whether a thread started (false: nothing new to
 * prepare); on a failure to start it, false with the reason in why. */
bool wl_cublas_prepare_start(int device, const struct wl_gemm_kind *kinds, int n, char *why,
                             size_t whylen);

/* Waits for the preparation under way, if any; the time waited goes into the report. */
void wl_cublas_prepare_wait(void);

/* For the process's end: waits for the preparation under way, at most WL_PREPARE_EXIT_WAIT_S;
 * whether it ended (or none was under way). A thread still inside the library would crash under
 * the library's exit handlers: the caller ends the process without them (lhost.h). */
#define WL_PREPARE_EXIT_WAIT_S 10
bool wl_cublas_prepare_finish(void);

/* What the preparations did, in all, up to the last one finished (one at its end is joined). */
struct wl_prepare_report {
  int asked, prepared; /* kinds asked for; kinds whose heuristics answered */
  double seconds;      /* the threads' own time */
  double waited;       /* the main thread's time in wl_cublas_prepare_wait */
  bool running;        /* a preparation not waited for yet */
  bool working;        /* its thread still at work (running, and not at its end) */
  char why[600];       /* the last failure, "" if none */
};
void wl_cublas_prepare_report(struct wl_prepare_report *r);

#endif
