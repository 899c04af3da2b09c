/* wlrun/work.h: the C ABI of a function in your own shared library that wlrun binds, checks and
 * times like a kernel (docs/libraries.md). C and C++.
 *
 *   #include <wlrun/work.h>
 *
 *   WLRUN_PARAMS(saxpy, "float* y, const float* x, float a, int n");
 *   WLRUN_EXPORT int saxpy(void *const *args, cudaStream_t stream) {
 *     float *y = *(float *const *)args[0];
 *     const float *x = *(const float *const *)args[1];
 *     float a = *(const float *)args[2];
 *     int n = *(const int *)args[3];
 *     saxpy_kernel<<<(n + 255) / 256, 256, 0, stream>>>(y, x, a, n);
 *     return (int)cudaGetLastError();
 *   }
 *
 * and in the script:
 *
 *   local lib = wl.library { file = "libmine.so" }
 *   local saxpy = lib:func { name = "saxpy" }  -- params from wlrun_params_saxpy
 *   wl.bench(saxpy:bind { args = { y, x, 2.0, n } })
 *
 * The function:
 *   - takes args as cudaLaunchKernel takes kernelParams: args[i] points to the value of
 *     parameter i, packed by wlrun after checking it against the parameter list (a tensor: a
 *     pointer to its device pointer; a float: a pointer to a float; ...);
 *   - queues its GPU work on stream and returns without waiting for it: wlrun times the work
 *     with events on that stream, and may capture it in a CUDA graph (no synchronising, no
 *     allocating, no other stream, unless lib:func is given capturable = false);
 *   - returns 0 on success, or a nonzero code that wlrun reports as the work's failure (a
 *     cudaError_t, as (int)cudaGetLastError() gives, is named in the message);
 *   - runs on wlrun's thread, with wlrun's device current, and must not throw.
 * The parameter list is given to lib:func as params = "...", or exported by the library as a
 * string WLRUN_PARAMS(NAME, "...") (the symbol wlrun_params_NAME, an array of char). */
#ifndef WLRUN_WORK_H
#define WLRUN_WORK_H

#include <cuda_runtime_api.h>

#define WLRUN_WORK_ABI_VERSION 1

#ifdef __cplusplus
#define WLRUN_EXTERN_C extern "C"
#else
#define WLRUN_EXTERN_C
#endif

/* the visibility of what wlrun looks up, whatever -fvisibility the library is built with */
#define WLRUN_EXPORT WLRUN_EXTERN_C __attribute__((visibility("default")))

/* the type of a function wlrun calls */
typedef int (*wlrun_work_fn)(void *const *args, cudaStream_t stream);

/* exports the parameter list of function NAME as the string wlrun_params_NAME (in C++ a const
 * is local to its file unless declared extern first) */
#ifdef __cplusplus
#define WLRUN_PARAMS(name, text)                                                  \
  extern "C" {                                                                    \
  extern __attribute__((visibility("default"))) const char wlrun_params_##name[]; \
  const char wlrun_params_##name[] = text;                                        \
  }                                                                               \
  static_assert(sizeof(text) > 1, "WLRUN_PARAMS: an empty parameter list")
#else
#define WLRUN_PARAMS(name, text) \
  __attribute__((visibility("default"))) const char wlrun_params_##name[] = text
#endif

#endif
