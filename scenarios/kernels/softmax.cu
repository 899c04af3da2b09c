// Row softmax for scenarios/softmax.lua: y[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max)),
// row-major [rows, cols], in T = float or __nv_bfloat16, computed in fp32.
#include <cuda_bf16.h>

#define FULL_MASK 0xffffffffu
#define NEG_INF __int_as_float(0xff800000) // -infinity (NVRTC has no INFINITY)

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// max / sum over the block, in every thread; blockDim.x a multiple of 32, every thread calls it
template <bool MAX> __device__ float block_reduce(float v) {
  __shared__ float part[32];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    float u = __shfl_xor_sync(FULL_MASK, v, o);
    v = MAX ? fmaxf(v, u) : v + u;
  }
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = lane < nwarps ? part[lane] : (MAX ? NEG_INF : 0.0f);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    float u = __shfl_xor_sync(FULL_MASK, v, o);
    v = MAX ? fmaxf(v, u) : v + u;
  }
  __syncthreads(); // part is free for the next call
  return v;
}

// One block per row (gridDim.x = rows; blockDim.x a multiple of 32, at most 1024), the row kept
// in dynamic shared memory as floats (cols * 4 bytes), so x is read once and y written once.
// Sized for about 4 vectors per thread (scenarios/softmax.lua picks the block).
// When a row is a whole number of 16-byte vectors (cols a multiple of 16 / sizeof(T)), x and y
// move by 16-byte loads and stores; vector j of the row belongs to thread j % blockDim.x and
// its element k sits at row[k * nv + j] in shared memory (nv = vectors per row), so that
// consecutive threads touch consecutive words (no bank conflicts).
template <typename T>
__global__ void softmax(const T* __restrict__ x, T* __restrict__ y, int rows, int cols) {
  extern __shared__ float row[];
  if (blockIdx.x >= (unsigned)rows) return; // the whole block: before any barrier
  constexpr int V = 16 / sizeof(T);         // elements per 16-byte vector
  const size_t base = (size_t)blockIdx.x * cols;
  const bool vec = cols % V == 0;
  const int nv = cols / V;

  float m = NEG_INF;
  if (vec) {
    // U loads issued before any is used, so that each thread keeps U vectors in flight; the
    // vectors of thread t are still j = t, t + blockDim.x, t + 2 blockDim.x, ...
    constexpr int U = 4;
    const uint4* xv = reinterpret_cast<const uint4*>(x + base);
    for (int j0 = threadIdx.x; j0 < nv; j0 += U * blockDim.x) {
      uint4 u[U];
#pragma unroll
      for (int q = 0; q < U; ++q) {
        int j = j0 + q * blockDim.x;
        if (j < nv) u[q] = xv[j];
      }
#pragma unroll
      for (int q = 0; q < U; ++q) {
        int j = j0 + q * blockDim.x;
        if (j < nv) {
          const T* e = reinterpret_cast<const T*>(&u[q]);
#pragma unroll
          for (int k = 0; k < V; ++k) {
            float v = to_float(e[k]);
            row[k * nv + j] = v;
            m = fmaxf(m, v);
          }
        }
      }
    }
  } else {
#pragma unroll 4
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
      float v = to_float(x[base + c]);
      row[c] = v;
      m = fmaxf(m, v);
    }
  }
  m = block_reduce<true>(m);

  // each thread reads back only the words it wrote itself: no barrier needed before this
  float sum = 0.0f;
  if (vec) {
    for (int j = threadIdx.x; j < nv; j += blockDim.x)
#pragma unroll
      for (int k = 0; k < V; ++k) {
        float e = __expf(row[k * nv + j] - m);
        row[k * nv + j] = e;
        sum += e;
      }
  } else {
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
      float e = __expf(row[c] - m);
      row[c] = e;
      sum += e;
    }
  }
  const float inv = 1.0f / block_reduce<false>(sum);

  if (vec) {
    uint4* yv = reinterpret_cast<uint4*>(y + base);
    for (int j = threadIdx.x; j < nv; j += blockDim.x) {
      uint4 u;
      T* e = reinterpret_cast<T*>(&u);
#pragma unroll
      for (int k = 0; k < V; ++k) e[k] = from_float<T>(row[k * nv + j] * inv);
      yv[j] = u;
    }
  } else {
    for (int c = threadIdx.x; c < cols; c += blockDim.x) y[base + c] = from_float<T>(row[c] * inv);
  }
}
