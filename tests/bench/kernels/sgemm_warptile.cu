// A register-heavy warp-tiled fp32 GEMM (C = alpha * A * B + beta * C, row-major, M, N and K
// multiples of the block tile), written for the NVRTC-against-nvcc benchmark
// (tests/bench/nvrtc_vs_nvcc.lua): each block computes a BM x BN tile of C from BK-deep slices
// of A (stored transposed in shared memory) and B, each warp a WM x WN sub-tile in
// WITERM x WITERN steps, each thread TM x TN results per step held in registers (128 floats of
// accumulators per thread). The same source is compiled by NVRTC (wl.kernel) and by nvcc
// (a cubin built by CMake), so that any difference in time is the compiler's.
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 16
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 64
#endif
#ifndef WITERN
#define WITERN 4
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 4
#endif
#define THREADS ((BM / WM) * (BN / WN) * 32)
#define WITERM ((WM * WN) / (32 * TM * TN * WITERN))
#define SUBM (WM / WITERM) /* rows of a warp's sub-tile per step */
#define SUBN (WN / WITERN)

extern "C" __global__ void __launch_bounds__(THREADS)
    sgemm_warptile(int M, int N, int K, float alpha, const float *__restrict__ A,
                   const float *__restrict__ B, float beta, float *__restrict__ C) {
  __shared__ float As[BK * BM]; // transposed: As[k * BM + m]
  __shared__ float Bs[BK * BN];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_row = warp / (BN / WN), warp_col = warp % (BN / WN);
  const int lane_row = lane / (SUBN / TN), lane_col = lane % (SUBN / TN);
  A += (size_t)blockIdx.y * BM * K;
  B += (size_t)blockIdx.x * BN;
  C += ((size_t)blockIdx.y * BM + warp_row * WM) * N + blockIdx.x * BN + warp_col * WN;

  // loading: each thread moves float4s; rows of the tile covered per pass
  const int a_row = threadIdx.x / (BK / 4), a_col = threadIdx.x % (BK / 4);
  const int b_row = threadIdx.x / (BN / 4), b_col = threadIdx.x % (BN / 4);
  constexpr int a_stride = (THREADS * 4) / BK, b_stride = THREADS / (BN / 4);

  float acc[WITERM * TM * WITERN * TN] = {0.0f};
  float a_reg[WITERM * TM], b_reg[WITERN * TN];

  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int r = 0; r < BM; r += a_stride) {
      const float4 v = *reinterpret_cast<const float4 *>(&A[(size_t)(a_row + r) * K + a_col * 4]);
      As[(a_col * 4 + 0) * BM + a_row + r] = v.x;
      As[(a_col * 4 + 1) * BM + a_row + r] = v.y;
      As[(a_col * 4 + 2) * BM + a_row + r] = v.z;
      As[(a_col * 4 + 3) * BM + a_row + r] = v.w;
    }
#pragma unroll
    for (int r = 0; r < BK; r += b_stride)
      *reinterpret_cast<float4 *>(&Bs[(b_row + r) * BN + b_col * 4]) =
          *reinterpret_cast<const float4 *>(&B[(size_t)(b_row + r) * N + b_col * 4]);
    __syncthreads();
    A += BK;
    B += (size_t)BK * N;

#pragma unroll
    for (int k = 0; k < BK; k++) {
#pragma unroll
      for (int wm = 0; wm < WITERM; wm++)
#pragma unroll
        for (int i = 0; i < TM; i++)
          a_reg[wm * TM + i] = As[k * BM + warp_row * WM + wm * SUBM + lane_row * TM + i];
#pragma unroll
      for (int wn = 0; wn < WITERN; wn++)
#pragma unroll
        for (int j = 0; j < TN; j++)
          b_reg[wn * TN + j] = Bs[k * BN + warp_col * WN + wn * SUBN + lane_col * TN + j];
#pragma unroll
      for (int wm = 0; wm < WITERM; wm++)
#pragma unroll
        for (int wn = 0; wn < WITERN; wn++)
#pragma unroll
          for (int i = 0; i < TM; i++)
#pragma unroll
            for (int j = 0; j < TN; j++)
              acc[(wm * TM + i) * (WITERN * TN) + wn * TN + j] +=
                  a_reg[wm * TM + i] * b_reg[wn * TN + j];
    }
    __syncthreads();
  }

#pragma unroll
  for (int wm = 0; wm < WITERM; wm++)
#pragma unroll
    for (int wn = 0; wn < WITERN; wn++) {
      float *c = C + (size_t)(wm * SUBM) * N + wn * SUBN;
#pragma unroll
      for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
          float4 *p =
              reinterpret_cast<float4 *>(&c[(size_t)(lane_row * TM + i) * N + lane_col * TN + j]);
          float4 v = *p;
          const float *a = &acc[(wm * TM + i) * (WITERN * TN) + wn * TN + j];
          v.x = alpha * a[0] + beta * v.x;
          v.y = alpha * a[1] + beta * v.y;
          v.z = alpha * a[2] + beta * v.z;
          v.w = alpha * a[3] + beta * v.w;
          *p = v;
        }
    }
}

// y = x: a bandwidth-bound copy with a grid-stride loop (the simple kernel of the benchmark)
extern "C" __global__ void copy_f32(float *__restrict__ y, const float *__restrict__ x,
                                    long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    y[i] = x[i];
}
