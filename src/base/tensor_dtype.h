/* Element types of tensors and the kinds of initialisation, shared by C (cuda_tensor.c, the
 * backends) and CUDA C++ (cuda_init_kernels.cu). */
#ifndef WL_TENSOR_DTYPE_H
#define WL_TENSOR_DTYPE_H

#include <math.h>

enum wl_dtype {
  WL_F64,
  WL_F32,
  WL_F16,
  WL_BF16,
  WL_I64,
  WL_I32,
  WL_I16,
  WL_I8,
  WL_U32,
  WL_U8,
  WL_NDTYPES
};

/* FILL a; ARANGE a + i*b; UNIFORM in [a, b); NORMAL with mean a and standard deviation b */
enum wl_init_kind { WL_INIT_FILL, WL_INIT_ARANGE, WL_INIT_UNIFORM, WL_INIT_NORMAL };

/* A float as an integer dtype, as the docs promise (docs/lua-api.md, "Tensors"): rounded to
 * nearest (ties to even), NaN -> 0 (the bindings refuse NaN and infinities before they get
 * here: cuda_tensor.c), below the range -> its minimum, above -> its maximum, with
 * no undefined conversion in C or C++. wl_to_whole: for the dtypes whose range a double holds
 * exactly (all but i64), v in [lo, hi] as a double ready for the cast; wl_to_i64: i64. The
 * host (cuda_tensor.c) and the device (cuda_init_kernels.cu) share them. */
#if defined(__CUDACC__)
#define WL_DTYPE_FN static __host__ __device__ inline
#else
#define WL_DTYPE_FN static inline
#endif

WL_DTYPE_FN double wl_to_whole(double v, double lo, double hi) {
  if (!(v == v)) return 0; /* NaN */
  v = rint(v);
  return v < lo ? lo : v > hi ? hi : v;
}

WL_DTYPE_FN long long wl_to_i64(double v) {
  if (!(v == v)) return 0;
  v = rint(v);
  if (v < -9223372036854775808.0) return -9223372036854775807LL - 1;
  if (v >= 9223372036854775808.0) return 9223372036854775807LL; /* 2^63 is the first double above */
  return (long long)v;
}

#endif
