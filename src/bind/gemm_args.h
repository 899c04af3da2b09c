/* The GEMM that wl.cublas.gemm and wl.cublaslt.matmul describe (gemm_args.c): the fields of
 * the option table, their checks, and the column-major call that computes the row-major
 * product (docs/cublas.md).
 *
 * Tensors are row-major: C (M x N) = alpha * op(A) * op(B) + beta * C, where A is M x K (K x M
 * when transa), B is K x N (N x K when transb), and lda, ldb, ldc are the distances between
 * rows in elements (default: the number of columns). cuBLAS is column-major, and a row-major
 * matrix is its transpose in column-major, so the library is called for C^T = op(B)^T op(A)^T:
 * gemm(opB, opA, N, M, K, B, ldb, A, lda, C, ldc), with the same trans flags. */
#ifndef WL_GEMM_ARGS_H
#define WL_GEMM_ARGS_H

#include "cublas_load.h"
#include "cuda_device.h"
#include "host_work.h"

#include <cublas_api.h>
#include <stdint.h>

enum wl_gemm_compute { WL_GEMM_FP32, WL_GEMM_TF32, WL_GEMM_FP16, WL_GEMM_FP64 };

struct wl_gemm {
  const char *fn; /* "wl.cublas.gemm", for messages */
  enum wl_dtype dtype;
  enum wl_gemm_compute compute;
  bool transa, transb;
  int m, n, k, lda, ldb, ldc; /* row-major leading dimensions */
  double alpha, beta;
  size_t workspace; /* bytes */
};

/* alpha or beta in the scale type of the compute type (fp16: half; fp64: double; else float) */
union wl_gemm_scale {
  float f;
  double d;
  uint16_t h;
};

/* Reads and checks the option table at arg: unknown fields, the tensors a, b, c (live device
 * tensors of one supported dtype, large enough), m, n, k, the trans flags, alpha, beta, dtype,
 * compute, lda, ldb, ldc, workspace and stream. Raises (kind script) naming the field and the
 * script's line. */
void wl_gemm_read(lua_State *L, int arg, const char *fn, struct wl_gemm *g);

/* One kind of GEMM, the table {dtype =, compute =} at arg (wl.cublas.prepare): dtype f32, f64,
 * f16 or bf16 (required), compute as wl.cublas.gemm takes it for that dtype (its default when
 * absent); into g's dtype and compute. Raises (kind script) naming FN and the field. */
void wl_gemm_read_kind(lua_State *L, int arg, const char *fn, struct wl_gemm *g);

/* "const float* A, const float* B, float* C": the parameter list bind checks a, b, c against */
const char *wl_gemm_params(enum wl_dtype dtype);
/* "cublas.gemm f32 tf32 4096x4096x4096 transa" */
void wl_gemm_name(const struct wl_gemm *g, const char *lib, char *buf, size_t len);

cudaDataType_t wl_gemm_data_type(enum wl_dtype dtype);
cublasComputeType_t wl_gemm_compute_type(enum wl_gemm_compute compute);
cudaDataType_t wl_gemm_scale_type(enum wl_gemm_compute compute);
void wl_gemm_scales(const struct wl_gemm *g, union wl_gemm_scale *alpha, union wl_gemm_scale *beta);

/* Pushes the GEMM g of the option table at arg as bound work: a kernel object of host work
 * (host_work.h) named after LIB ("cublas.gemm bf16 fp32 64x16x32"), bound to a, b, c and the
 * table's stream. Takes ownership of host->ctx (released on an error too). Raises. */
void wl_gemm_push_work(lua_State *L, int arg, const struct wl_gemm *g, const char *lib,
                       const struct wl_host_work *host);

/* A library that did not load, for the work FN: raises no_device with the reason, except
 * under --compile-only for a library that is not installed, where it warns once (*warned) that
 * the work would need it on a GPU and returns. */
void wl_gemm_library_missing(lua_State *L, const char *fn, const char *why,
                             enum wl_lib_failure failure, bool *warned);

/* The workspace of one GEMM, allocated before anything is measured (NULL for 0 bytes or under
 * --compile-only); raises on failure. wl_gemm_workspace_free never raises. */
void *wl_gemm_workspace(lua_State *L, const struct wl_gemm *g);
void wl_gemm_workspace_free(void *workspace);

/* Pushes what wl.cublas.library() returns: {path =, version =}, or (path NULL) nil and why. */
int wl_gemm_push_library(lua_State *L, const char *path, lua_Integer version, const char *why);

#endif
