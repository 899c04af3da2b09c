// The GEMM recipe's check (scenarios/lib/gemm.lua): 8 rows of C against a double-precision
// reference computed from the same inputs, for f32 and bf16 tensors (gemm_check_rows<float>,
// gemm_check_rows<__nv_bfloat16>). The rows are spread over M as the recipe documents:
// row r = r * (M / 8) + ((r + 1) * 37) % (M / 8), r = 0..7.
//
// The largest error relative to the size of the terms (a sum of K products of N(0, 1) values is
// about sqrt(K)) goes to *worst as the bits of a non-negative double, which atomicMax orders as
// their values, a NaN above every number: one number comes back, not the rows.
//
// A block of 256 threads takes 32 columns: its 8 warps sum 8 slices of K (warp w: k = w, w + 8,
// ...), each thread all 8 rows at once, so B is read once and each thread's chain of additions
// is K/8 long; the slices are added in shared memory, warp w then takes row w.
#include <cuda_bf16.h>

#define CHECK_ROWS 8
#define CHECK_SLICES 8

__device__ __forceinline__ double as_double(float x) { return (double)x; }
__device__ __forceinline__ double as_double(__nv_bfloat16 x) { return (double)__bfloat162float(x); }

template <typename T>
__global__ void __launch_bounds__(32 * CHECK_SLICES)
    gemm_check_rows(const T* __restrict__ A, const T* __restrict__ B, const T* __restrict__ C,
                    int M, int N, int K, unsigned long long* worst) {
  __shared__ double part[CHECK_SLICES][CHECK_ROWS][32];
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32, col = blockIdx.x * 32 + lane;
  int step = M / CHECK_ROWS > 0 ? M / CHECK_ROWS : 1;
  size_t rows[CHECK_ROWS];
  for (int r = 0; r < CHECK_ROWS; ++r) {
    int row = r * step + ((r + 1) * 37) % step;
    rows[r] = (size_t)(row < M ? row : M - 1);
  }
  double acc[CHECK_ROWS] = {};
  if (col < N)
    for (int k = warp; k < K; k += CHECK_SLICES) {
      double b = as_double(B[(size_t)k * N + col]);
      for (int r = 0; r < CHECK_ROWS; ++r) acc[r] += as_double(A[rows[r] * K + k]) * b;
    }
  for (int r = 0; r < CHECK_ROWS; ++r) part[warp][r][lane] = acc[r];
  __syncthreads();
  unsigned long long bits = 0;
  if (col < N) {
    double ref = 0.0;
    for (int s = 0; s < CHECK_SLICES; ++s) ref += part[s][warp][lane];
    double err = fabs(as_double(C[rows[warp] * N + col]) - ref) / (sqrt((double)K) + fabs(ref));
    bits = (unsigned long long)__double_as_longlong(err);
  }
  for (int o = 16; o > 0; o /= 2) {
    unsigned long long other = __shfl_xor_sync(0xffffffffu, bits, o);
    bits = other > bits ? other : bits;
  }
  if (lane == 0 && bits) atomicMax(worst, bits);
}
