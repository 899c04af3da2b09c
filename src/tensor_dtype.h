/* Element types of tensors, shared by C (cuda_tensor.c) and CUDA C++ (cuda_init_kernels.cu). */
#ifndef WL_TENSOR_DTYPE_H
#define WL_TENSOR_DTYPE_H

enum wl_dtype {
  WL_F64, WL_F32, WL_F16, WL_BF16, WL_I64, WL_I32, WL_I16, WL_I8, WL_U32, WL_U8, WL_NDTYPES
};

#endif
