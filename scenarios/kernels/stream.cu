// Memory-bound kernels for scenarios/bandwidth.lua (the STREAM family), vectorised by float4.
extern "C" __global__ void copy(float4* __restrict__ y, const float4* __restrict__ x, long n4) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n4;
       i += (long)gridDim.x * blockDim.x)
    y[i] = x[i];
}

extern "C" __global__ void scale(float4* __restrict__ y, const float4* __restrict__ x, float a,
                                 long n4) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n4;
       i += (long)gridDim.x * blockDim.x) {
    float4 v = x[i];
    y[i] = make_float4(a * v.x, a * v.y, a * v.z, a * v.w);
  }
}

extern "C" __global__ void triad(float4* __restrict__ y, const float4* __restrict__ x,
                                 const float4* __restrict__ z, float a, long n4) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n4;
       i += (long)gridDim.x * blockDim.x) {
    float4 u = x[i], v = z[i];
    y[i] = make_float4(u.x + a * v.x, u.y + a * v.y, u.z + a * v.z, u.w + a * v.w);
  }
}
