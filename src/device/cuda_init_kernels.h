/* wlrun's own kernels (cuda_init_kernels.cu, compiled by nvcc into wlrun), called by the CUDA
 * backend only (backend_cuda.c). */
#ifndef WL_CUDA_INIT_KERNELS_H
#define WL_CUDA_INIT_KERNELS_H

#include "tensor_dtype.h"

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes n elements of dtype at data on stream: FILL a; ARANGE a + i*b; UNIFORM in [a, b);
 * NORMAL with mean a and standard deviation b. Integer dtypes round to nearest and saturate.
 * Returns the launch's error. */
cudaError_t wl_init_device(void *data, size_t n, enum wl_dtype dtype, enum wl_init_kind kind,
                           double a, double b, uint64_t seed, cudaStream_t stream);

/* Measures the SM clock: one thread spins for about `ns` nanoseconds of %globaltimer and
 * writes {clock64 ticks, nanoseconds} to out[0..1] (device memory). */
cudaError_t wl_clock_probe(unsigned long long *out, unsigned long long ns, cudaStream_t stream);

/* Counts the nonzero bytes of n bytes at data into *count (device memory, zeroed by the
 * function). */
cudaError_t wl_count_nonzero(const void *data, size_t n, unsigned long long *count,
                             cudaStream_t stream);

/* An empty kernel, for the timing floor. */
cudaError_t wl_empty_kernel(cudaStream_t stream);

/* Holds the stream (nvbench's blocking kernel): one thread spins until the host writes
 * `generation` or more to *release, or for at most timeout_ns, then counts the timeout in
 * *timeouts. release and timeouts are page-locked host memory (cudaMallocHost: mapped). */
cudaError_t wl_block_stream(volatile int *release, volatile int *timeouts, int generation,
                            unsigned long long timeout_ns, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
