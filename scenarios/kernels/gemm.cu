// fp32 GEMM kernels for scenarios/gemm_sweep.lua: C[M,N] = A[M,K] * B[K,N], row-major.

// One thread per element of C, reading A and B straight from global memory.
extern "C" __global__ void gemm_naive(const float* __restrict__ A, const float* __restrict__ B,
                                      float* __restrict__ C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  C[(size_t)row * N + col] = acc;
}

#ifndef TILE
#define TILE 32
#endif

// Shared-memory tiling: a TILE x TILE block stages tiles of A and B in shared memory, so that
// each element loaded from global memory is used TILE times.
extern "C" __global__ void gemm_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                      float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE + 1];
  int ty = threadIdx.y, tx = threadIdx.x;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    As[ty][tx] = (row < M && t + tx < K) ? A[(size_t)row * K + t + tx] : 0.0f;
    Bs[ty][tx] = (t + ty < K && col < N) ? B[(size_t)(t + ty) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[(size_t)row * N + col] = acc;
}

// Register tiling on top of shared memory: each thread computes a 4x4 block of C
// (block of 16x16 threads, 64x64 tile of C, K staged 16 at a time).
extern "C" __global__ void __launch_bounds__(256)
    gemm_tiled4x4(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                  int M, int N, int K) {
  __shared__ float As[16][64 + 4];
  __shared__ float Bs[16][64 + 4];
  int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  int row0 = blockIdx.y * 64, col0 = blockIdx.x * 64;
  float acc[4][4] = {};
  for (int t = 0; t < K; t += 16) {
    for (int i = tid; i < 64 * 16; i += 256) { // A tile 64x16 stored transposed, B tile 16x64
      int r = i / 16, c = i % 16;
      As[c][r] = (row0 + r < M && t + c < K) ? A[(size_t)(row0 + r) * K + t + c] : 0.0f;
      int br = i / 64, bc = i % 64;
      Bs[br][bc] = (t + br < K && col0 + bc < N) ? B[(size_t)(t + br) * N + col0 + bc] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; ++k) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = As[k][ty * 4 + i];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = Bs[k][tx * 4 + j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      int r = row0 + ty * 4 + i, c = col0 + tx * 4 + j;
      if (r < M && c < N) C[(size_t)r * N + c] = acc[i][j];
    }
}
