/* Tensor initialisation on the device (cuda_init_kernels.cu, compiled by nvcc into wlrun). */
#ifndef WL_CUDA_INIT_KERNELS_H
#define WL_CUDA_INIT_KERNELS_H

#include "tensor_dtype.h"

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum wl_init_kind { WL_INIT_FILL, WL_INIT_ARANGE, WL_INIT_UNIFORM, WL_INIT_NORMAL };

/* Writes n elements of dtype at data on stream: FILL a; ARANGE a + i*b; UNIFORM in [a, b);
 * NORMAL with mean a and standard deviation b. Integer dtypes round to nearest and saturate.
 * Returns the launch's error. */
cudaError_t wl_init_device(void *data, size_t n, enum wl_dtype dtype, enum wl_init_kind kind,
                           double a, double b, uint64_t seed, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
