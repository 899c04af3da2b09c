/* cuBLAS and cuBLASLt through dlopen (cublas_load.c, docs/cublas.md):
 * loaded at their first use, never at start, so that wlrun runs where they are not installed.
 * The toolkit's headers give the types only; wlrun does not link the libraries. Each library
 * is looked for as toolkit_lib.h says, WLRUN_CUBLAS (WLRUN_CUBLASLT) its explicit path.
 * Every symbol used is resolved with dlsym and checked. Pure C: no Lua, no device. One thread
 * at a time: the main thread waits for a preparation's thread (cublas_prepare.h) before it loads.
 */
#ifndef WL_CUBLAS_LOAD_H
#define WL_CUBLAS_LOAD_H

#include "toolkit_lib.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <stdbool.h>
#include <stddef.h>

struct wl_cublas_api {
  char path[512]; /* where it was loaded from, as dlopen was given it */
  int version;    /* cublasGetProperty: major * 10000 + minor * 100 + patch */
  __typeof__(cublasCreate_v2) *create;
  __typeof__(cublasSetStream_v2) *set_stream;
  __typeof__(cublasSetWorkspace_v2) *set_workspace;
  __typeof__(cublasSetMathMode) *set_math_mode;
  __typeof__(cublasGemmEx) *gemm_ex;
  __typeof__(cublasGetStatusString) *status_string;
};

struct wl_cublaslt_api {
  char path[512];
  size_t version; /* cublasLtGetVersion */
  __typeof__(cublasLtCreate) *create;
  __typeof__(cublasLtMatmulDescCreate) *desc_create;
  __typeof__(cublasLtMatmulDescDestroy) *desc_destroy;
  __typeof__(cublasLtMatmulDescSetAttribute) *desc_set;
  __typeof__(cublasLtMatrixLayoutCreate) *layout_create;
  __typeof__(cublasLtMatrixLayoutDestroy) *layout_destroy;
  __typeof__(cublasLtMatmulPreferenceCreate) *pref_create;
  __typeof__(cublasLtMatmulPreferenceDestroy) *pref_destroy;
  __typeof__(cublasLtMatmulPreferenceSetAttribute) *pref_set;
  __typeof__(cublasLtMatmulAlgoGetHeuristic) *heuristic;
  __typeof__(cublasLtMatmul) *matmul;
  __typeof__(cublasLtGetStatusString) *status_string;
};

/* The loaded library, or NULL with the reason (where it looked, how to point wlrun at it) in
 * why and the kind of failure in *failure. Loads once per process; a failure is remembered
 * and reported again the same way. */
const struct wl_cublas_api *wl_cublas_load(char *why, size_t whylen, enum wl_lib_failure *failure);
const struct wl_cublaslt_api *wl_cublaslt_load(char *why, size_t whylen,
                                               enum wl_lib_failure *failure);

#endif
