/* Element types of tensors and the kinds of initialisation, shared by C (cuda_tensor.c, the
 * backends) and CUDA C++ (cuda_init_kernels.cu). */
#ifndef WL_TENSOR_DTYPE_H
#define WL_TENSOR_DTYPE_H

enum wl_dtype {
  WL_F64, WL_F32, WL_F16, WL_BF16, WL_I64, WL_I32, WL_I16, WL_I8, WL_U32, WL_U8, WL_NDTYPES
};

/* FILL a; ARANGE a + i*b; UNIFORM in [a, b); NORMAL with mean a and standard deviation b */
enum wl_init_kind { WL_INIT_FILL, WL_INIT_ARANGE, WL_INIT_UNIFORM, WL_INIT_NORMAL };

#endif
