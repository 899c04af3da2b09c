/* Counter-based random numbers for tensor initialisation: element i of a tensor with seed s
 * is a pure function of (s, i), so the values do not depend on the launch configuration and
 * the host (C) and device (CUDA) generators give the same numbers. */
#ifndef WL_RNG_H
#define WL_RNG_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define WL_HD __host__ __device__ __forceinline__
#else
#define WL_HD static inline
#endif

/* splitmix64's finaliser: a bijective mixer with good avalanche */
WL_HD uint64_t wl_mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/* uniform in [0, 1) with 53 random bits */
WL_HD double wl_uniform01(uint64_t seed, uint64_t i) {
  uint64_t x = wl_mix64(seed + 0x9e3779b97f4a7c15ULL * (i + 1));
  return (double)(x >> 11) * 0x1.0p-53;
}

/* uniform in [0, 1) with 24 random bits, exact in float: never rounds up to 1 (a double from
 * wl_uniform01 converted to float can, and log(1 - 1) is -inf) */
WL_HD float wl_uniform01f(uint64_t seed, uint64_t i) {
  uint64_t x = wl_mix64(seed + 0x9e3779b97f4a7c15ULL * (i + 1));
  return (float)(x >> 40) * 0x1.0p-24f;
}

/* standard normal by Box-Muller from two independent uniforms of the counter pair (2i, 2i+1) */
WL_HD double wl_normal01(uint64_t seed, uint64_t i) {
  double u1 = wl_uniform01(seed, 2 * i), u2 = wl_uniform01(seed, 2 * i + 1);
  double r = sqrt(-2.0 * log(1.0 - u1)); /* 1 - u1 is in (0, 1] */
  return r * cos(6.283185307179586 * u2);
}

/* the seed of the k-th initialisation of a run with base seed s */
WL_HD uint64_t wl_stream_seed(uint64_t base, uint64_t k) {
  return wl_mix64(base * 0x2545f4914f6cdd1dULL + k + 1);
}

#endif
