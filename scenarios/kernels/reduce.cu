// fp32 sum reductions for scenarios/reduction.lua: out[0] = x[0] + ... + x[n-1].
// Every kernel takes a 1-D grid of 1-D blocks whose size is a multiple of 32, at most 1024
// (reduce_tree: a power of two); x is read once, with grid-stride loops.

#define FULL_MASK 0xffffffffu

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(FULL_MASK, v, o);
  return v; // in every lane
}

// The sum of v over the block, in every thread. Every thread of the block must call it.
__device__ float block_sum(float v) {
  __shared__ float warp_sums[32];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = warp_sum(lane < nwarps ? warp_sums[lane] : 0.0f);
  __syncthreads(); // warp_sums is free for the next call
  return v;
}

// This thread's share of x: x[i], x[i + S], x[i + 2S], ... (S = the threads of the grid), four
// independent loads per iteration so that each thread keeps several in flight.
__device__ __forceinline__ float thread_sum(const float* __restrict__ x, long n) {
  long stride = (long)gridDim.x * blockDim.x;
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (; i + 3 * stride < n; i += 4 * stride) {
    a0 += x[i];
    a1 += x[i + stride];
    a2 += x[i + 2 * stride];
    a3 += x[i + 3 * stride];
  }
  for (; i < n; i += stride) a0 += x[i];
  return (a0 + a1) + (a2 + a3);
}

// "tree", one pass of the two-pass reduction: block b writes the sum of its share of x to
// out[b], reduced by a tree in shared memory. Launched twice: a grid of G blocks over x into
// partials[0..G-1], then one block over the G partials into out[0]. blockDim.x: a power of two.
extern "C" __global__ void reduce_tree(const float* __restrict__ x, float* __restrict__ out,
                                       long n) {
  __shared__ float s[1024];
  unsigned t = threadIdx.x;
  s[t] = thread_sum(x, n);
  __syncthreads();
  for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

// "atomic", single pass: warp shuffles reduce the block, whose thread 0 adds the block's sum
// to out[0] with one atomicAdd. out[0] must be 0 before the launch: zero_scalar.
extern "C" __global__ void reduce_atomic(const float* __restrict__ x, float* __restrict__ out,
                                         long n) {
  float v = block_sum(thread_sum(x, n));
  if (threadIdx.x == 0) atomicAdd(out, v);
}

extern "C" __global__ void zero_scalar(float* out) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *out = 0.0f;
}

// "vec4", one launch: float4 loads (x holds n4 float4s, 16-byte aligned), two per iteration,
// warp shuffles; block b writes its sum to partials[b], and the last block to finish (an atomic
// ticket) sums the partials in a fixed order into out[0]: deterministic, nothing to zero.
// counter starts at 0 (a zeroed tensor); atomicInc wraps it back to 0 on the last ticket, so it
// is ready for the next launch. partials holds gridDim.x floats.
extern "C" __global__ void reduce_vec4(const float4* __restrict__ x, float* partials,
                                       unsigned* counter, float* out, long n4) {
  long stride = (long)gridDim.x * blockDim.x;
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  float4 a = make_float4(0.0f, 0.0f, 0.0f, 0.0f), b = a;
  for (; i + stride < n4; i += 2 * stride) {
    float4 u = x[i], w = x[i + stride];
    a.x += u.x;
    a.y += u.y;
    a.z += u.z;
    a.w += u.w;
    b.x += w.x;
    b.y += w.y;
    b.z += w.z;
    b.w += w.w;
  }
  if (i < n4) { // at most one float4 left for this thread
    float4 u = x[i];
    a.x += u.x;
    a.y += u.y;
    a.z += u.z;
    a.w += u.w;
  }
  float v = block_sum(((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w)));

  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
    __threadfence(); // the partial is visible to every block before this block's ticket
    unsigned ticket = atomicInc(counter, gridDim.x - 1); // gridDim.x - 1 -> 0: wraps
    __threadfence(); // and the other blocks' partials, fenced before their tickets, are seen after
    last = ticket == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return; // the same for the whole block
  float s = 0.0f;
  for (unsigned j = threadIdx.x; j < gridDim.x; j += blockDim.x)
    s += __ldcg(partials + j); // from L2
  s = block_sum(s);
  if (threadIdx.x == 0) *out = s;
}

// Reference for the check: the sum in double precision; one double atomicAdd per warp into
// ref[0], which must start at 0.
extern "C" __global__ void reduce_reference(const float* __restrict__ x, double* __restrict__ ref,
                                            long n) {
  long stride = (long)gridDim.x * blockDim.x;
  double s = 0.0;
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += stride) s += (double)x[i];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(FULL_MASK, s, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(ref, s);
}
