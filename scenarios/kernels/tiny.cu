// The tiny kernel of scenarios/launch_overhead.lua: p[i] += 1 for i < n. One launch does almost
// no work (one block of 256 threads on a 1 KiB buffer), so a chain of them costs what launching
// costs; the counts in p say how many launches ran.
extern "C" __global__ void tiny(unsigned* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1u;
}
