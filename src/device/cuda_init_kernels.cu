// Device-side tensor initialisation: one grid-stride kernel per element type.
#include "cuda_init_kernels.h"
#include "wl_rng.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {

template <typename T> __device__ T convert(double v) { return static_cast<T>(v); }
template <> __device__ __half convert<__half>(double v) { return __double2half(v); }
template <> __device__ __nv_bfloat16 convert<__nv_bfloat16>(double v) {
  return __double2bfloat16(v);
}

// integers: round to nearest, NaN -> 0, saturate at the type's range (tensor_dtype.h, as on
// the host)
template <typename T> __device__ T to_int(double v, double lo, double hi) {
  return static_cast<T>(wl_to_whole(v, lo, hi));
}
template <> __device__ long long convert<long long>(double v) { return wl_to_i64(v); }
template <> __device__ int convert<int>(double v) {
  return to_int<int>(v, -2147483648.0, 2147483647.0);
}
template <> __device__ short convert<short>(double v) {
  return to_int<short>(v, -32768.0, 32767.0);
}
template <> __device__ signed char convert<signed char>(double v) {
  return to_int<signed char>(v, -128.0, 127.0);
}
template <> __device__ unsigned convert<unsigned>(double v) {
  return to_int<unsigned>(v, 0.0, 4294967295.0);
}
template <> __device__ unsigned char convert<unsigned char>(double v) {
  return to_int<unsigned char>(v, 0.0, 255.0);
}

// float dtypes compute in float (fast), f64 and integers in double (exact)
template <typename T> struct compute { typedef float type; };
template <> struct compute<double> { typedef double type; };
template <> struct compute<long long> { typedef double type; };
template <> struct compute<unsigned> { typedef double type; };
template <> struct compute<int> { typedef double type; };

template <typename T>
__global__ void init_kernel(T *out, size_t n, wl_init_kind kind, double a, double b,
                            uint64_t seed) {
  typedef typename compute<T>::type C;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    double v;
    switch (kind) {
    case WL_INIT_FILL: v = a; break;
    case WL_INIT_ARANGE: v = a + (double)i * b; break;
    case WL_INIT_UNIFORM: v = a + (b - a) * wl_uniform01(seed, i); break;
    default: {
      if (sizeof(C) == sizeof(float)) { // float Box-Muller: same draws, float math
        float u1 = wl_uniform01f(seed, 2 * i), u2 = wl_uniform01f(seed, 2 * i + 1);
        v = a + b * (double)(sqrtf(-2.0f * logf(1.0f - u1)) * cospif(2.0f * u2));
      } else {
        v = a + b * wl_normal01(seed, i);
      }
    }
    }
    out[i] = convert<T>(v);
  }
}

template <typename T>
cudaError_t launch(void *data, size_t n, wl_init_kind kind, double a, double b, uint64_t seed,
                   cudaStream_t stream) {
  int device, sms;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err != cudaSuccess) return err;
  const int threads = 256;
  size_t blocks = (n + threads - 1) / threads, cap = (size_t)sms * 8;
  if (blocks > cap) blocks = cap;
  if (blocks == 0) blocks = 1;
  init_kernel<T>
      <<<(unsigned)blocks, threads, 0, stream>>>(static_cast<T *>(data), n, kind, a, b, seed);
  return cudaGetLastError();
}

/* SM clock ticks over %globaltimer nanoseconds, both ends taken just after a tick of
 * %globaltimer (it may advance a microsecond at a time): the window is then exact to a few
 * loop iterations, and 50 us give the clock to about 0.1 % where a window begun anywhere in a
 * tick would need 1 ms for that */
__global__ void clock_probe(unsigned long long *out, unsigned long long ns) {
  unsigned long long first, t0, t, c0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(first));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  } while (t0 == first);
  c0 = clock64();
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
  out[0] = clock64() - c0;
  out[1] = t - t0;
}

__global__ void count_nonzero(const unsigned char *data, size_t n, unsigned long long *count) {
  unsigned long long mine = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    mine += data[i] != 0;
  for (int o = 16; o > 0; o /= 2) mine += __shfl_down_sync(0xffffffffu, mine, o);
  if ((threadIdx.x & 31) == 0 && mine) atomicAdd(count, mine);
}

__global__ void empty() {}

/* spins until the host writes `generation` (or more) to *release, or timeout_ns of %globaltimer
 * pass; a timeout is counted in *timeouts. Both live in mapped host memory. */
__global__ void block_stream(volatile int *release, volatile int *timeouts, int generation,
                             unsigned long long timeout_ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  while (*release < generation) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t - t0 >= timeout_ns) {
      *timeouts = *timeouts + 1;
      return;
    }
  }
}

} // namespace

extern "C" cudaError_t wl_clock_probe(unsigned long long *out, unsigned long long ns,
                                      cudaStream_t stream) {
  clock_probe<<<1, 1, 0, stream>>>(out, ns);
  return cudaGetLastError();
}

extern "C" cudaError_t wl_count_nonzero(const void *data, size_t n, unsigned long long *count,
                                        cudaStream_t stream) {
  cudaError_t err = cudaMemsetAsync(count, 0, sizeof *count, stream);
  if (err != cudaSuccess) return err;
  size_t blocks = (n + 255) / 256;
  if (blocks > 4096) blocks = 4096;
  if (blocks == 0) blocks = 1;
  count_nonzero<<<(unsigned)blocks, 256, 0, stream>>>(static_cast<const unsigned char *>(data), n,
                                                      count);
  return cudaGetLastError();
}

extern "C" cudaError_t wl_empty_kernel(cudaStream_t stream) {
  empty<<<1, 1, 0, stream>>>();
  return cudaGetLastError();
}

extern "C" cudaError_t wl_block_stream(volatile int *release, volatile int *timeouts,
                                       int generation, unsigned long long timeout_ns,
                                       cudaStream_t stream) {
  void *r, *t;
  cudaError_t err = cudaHostGetDevicePointer(&r, (void *)release, 0);
  if (err == cudaSuccess) err = cudaHostGetDevicePointer(&t, (void *)timeouts, 0);
  if (err != cudaSuccess) return err;
  block_stream<<<1, 1, 0, stream>>>(static_cast<volatile int *>(r), static_cast<volatile int *>(t),
                                    generation, timeout_ns);
  return cudaGetLastError();
}

extern "C" cudaError_t wl_init_device(void *data, size_t n, enum wl_dtype dtype,
                                      enum wl_init_kind kind, double a, double b, uint64_t seed,
                                      cudaStream_t stream) {
  switch (dtype) {
  case WL_F64: return launch<double>(data, n, kind, a, b, seed, stream);
  case WL_F32: return launch<float>(data, n, kind, a, b, seed, stream);
  case WL_F16: return launch<__half>(data, n, kind, a, b, seed, stream);
  case WL_BF16: return launch<__nv_bfloat16>(data, n, kind, a, b, seed, stream);
  case WL_I64: return launch<long long>(data, n, kind, a, b, seed, stream);
  case WL_I32: return launch<int>(data, n, kind, a, b, seed, stream);
  case WL_I16: return launch<short>(data, n, kind, a, b, seed, stream);
  case WL_I8: return launch<signed char>(data, n, kind, a, b, seed, stream);
  case WL_U32: return launch<unsigned>(data, n, kind, a, b, seed, stream);
  case WL_U8: return launch<unsigned char>(data, n, kind, a, b, seed, stream);
  default: return cudaErrorInvalidValue;
  }
}
