/* Raw C event loop of a cuBLAS GEMM for tests/bench/cublas.lua: the baseline that wlrun's
 * timing of wl.cublas.gemm is compared with. cuBLAS is linked here (wlrun loads it with
 * dlopen); the call is the one wlrun makes for row-major tensors (docs/cublas.md):
 * cublasGemmEx(N, N, n, m, k, B, A, C) with a 32 MiB workspace set on the handle.
 *   cublas_raw f32|tf32|bf16|f16 SIZE cold|batch|graph N PER
 * Prints "median p10 p90 enqueue" in seconds per call, after a warmup of N/5 + 5 samples;
 * enqueue is the median host time to queue one call. Inputs are uniform in [-1, 1). */
#include "../../src/base/half.h" /* fp16 and bf16 from float */

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                                          \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                 \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)
#define CHECK_BLAS(call)                                                                        \
  do {                                                                                          \
    cublasStatus_t s_ = (call);                                                                 \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                          \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cublasGetStatusString(s_)); \
      exit(1);                                                                                  \
    }                                                                                           \
  } while (0)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* a device matrix of n elements of dtype type, uniform in [-1, 1) */
static void *random_matrix(size_t n, cudaDataType_t type, uint64_t seed) {
  size_t size = type == CUDA_R_32F ? 4 : 2;
  unsigned char *host = malloc(n * size);
  if (!host) exit(1);
  for (size_t i = 0; i < n; i++) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17; /* xorshift64 */
    float v = (float)((double)(seed >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    uint16_t h = type == CUDA_R_16BF ? wl_f32_to_bf16(v) : wl_f32_to_f16(v);
    if (size == 4) memcpy(host + i * 4, &v, 4);
    else memcpy(host + i * 2, &h, 2);
  }
  void *d;
  CHECK(cudaMalloc(&d, n * size));
  CHECK(cudaMemcpy(d, host, n * size, cudaMemcpyHostToDevice));
  free(host);
  return d;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: cublas_raw f32|tf32|bf16|f16 SIZE cold|batch|graph N PER\n");
    return 2;
  }
  const char *dtype = argv[1], *mode = argv[3];
  int size = atoi(argv[2]), n = atoi(argv[4]), per = atoi(argv[5]);
  if (strcmp(mode, "cold") == 0) per = 1;
  cudaDataType_t type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  int elem = 4;
  if (strcmp(dtype, "f32") && strcmp(dtype, "tf32") && strcmp(dtype, "bf16") &&
      strcmp(dtype, "f16")) {
    fprintf(stderr, "cublas_raw: dtype %s: expected f32, tf32, bf16 or f16\n", dtype);
    return 2;
  }
  if (strcmp(dtype, "tf32") == 0) compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  else if (strcmp(dtype, "bf16") == 0) type = CUDA_R_16BF, elem = 2;
  else if (strcmp(dtype, "f16") == 0) type = CUDA_R_16F, elem = 2;
  size_t count = (size_t)size * (size_t)size;
  void *a = random_matrix(count, type, 1), *b = random_matrix(count, type, 2), *c;
  CHECK(cudaMalloc(&c, count * (size_t)elem));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); /* as wlrun's streams */
  cublasHandle_t handle;
  CHECK_BLAS(cublasCreate(&handle));
  size_t workspace_size = 32u << 20;
  void *workspace;
  CHECK(cudaMalloc(&workspace, workspace_size));
  float alpha = 1, beta = 0;

#define GEMM(stream)                                                                             \
  do {                                                                                           \
    CHECK_BLAS(cublasSetStream(handle, stream));                                                 \
    CHECK_BLAS(cublasSetWorkspace(handle, workspace, workspace_size));                           \
    CHECK_BLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, size, size, size, &alpha, b, type, \
                            size, a, type, size, &beta, c, type, size, compute,                  \
                            CUBLAS_GEMM_DEFAULT));                                               \
  } while (0)

  int warm = n / 5 + 5, total = warm + n;
  cudaEvent_t *ev = malloc(sizeof *ev * 2 * (size_t)total);
  double *enq = malloc(sizeof *enq * (size_t)total), *t = malloc(sizeof *t * (size_t)n);
  if (!ev || !enq || !t) return 1;
  for (int i = 0; i < 2 * total; i++) CHECK(cudaEventCreate(&ev[i]));
  cudaGraphExec_t exec = NULL;
  if (strcmp(mode, "graph") == 0) {
    cudaGraph_t g;
    cudaStream_t cs;
    CHECK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    CHECK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
    for (int j = 0; j < per; j++) GEMM(cs);
    CHECK(cudaStreamEndCapture(cs, &g));
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    for (int j = 0; j < 3; j++) CHECK(cudaGraphLaunch(exec, s));
  }
  CHECK_BLAS(cublasSetStream(handle, s));
  CHECK_BLAS(cublasSetWorkspace(handle, workspace, workspace_size));
  for (int i = 0; i < total; i++) {
    CHECK(cudaEventRecord(ev[2 * i], s));
    double t0 = now();
    if (exec) CHECK(cudaGraphLaunch(exec, s));
    else
      for (int j = 0; j < per; j++)
        CHECK_BLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, size, size, size, &alpha, b, type,
                                size, a, type, size, &beta, c, type, size, compute,
                                CUBLAS_GEMM_DEFAULT));
    enq[i] = (now() - t0) / per;
    CHECK(cudaEventRecord(ev[2 * i + 1], s));
  }
  CHECK(cudaStreamSynchronize(s));
  for (int i = 0; i < n; i++) {
    float ms;
    CHECK(cudaEventElapsedTime(&ms, ev[2 * (warm + i)], ev[2 * (warm + i) + 1]));
    t[i] = ms * 1e-3 / per;
  }
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  qsort(enq + warm, (size_t)n, sizeof *enq, cmp_double);
  printf("%.9e %.9e %.9e %.9e\n", t[n / 2], t[n / 10], t[n * 9 / 10], enq[warm + n / 2]);
  return 0;
}
