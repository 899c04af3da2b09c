/* IEEE binary16 and bfloat16 conversions on the host (round to nearest even). */
#ifndef WL_HALF_H
#define WL_HALF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t wl_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float wl_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline uint16_t wl_f32_to_bf16(float f) {
  uint32_t u = wl_f32_bits(f);
  if (isnan(f)) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

static inline float wl_bf16_to_f32(uint16_t h) { return wl_bits_f32((uint32_t)h << 16); }

static inline uint16_t wl_f32_to_f16(float f) {
  uint32_t u = wl_f32_bits(f), sign = (u >> 16) & 0x8000;
  uint32_t abs = u & 0x7fffffff;
  if (abs >= 0x7f800000) return (uint16_t)(sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 : 0));
  if (abs >= 0x477ff000) return (uint16_t)(sign | 0x7c00); /* rounds to above 65504: inf */
  if (abs < 0x38800000) {                                  /* subnormal in f16 (or zero) */
    float m = wl_bits_f32(abs) * 16777216.0f; /* scale by 2^24: the f16 subnormal unit */
    return (uint16_t)(sign | (uint32_t)lrintf(m));
  }
  uint32_t r = abs + 0xfff + ((abs >> 13) & 1) - 0x38000000;
  return (uint16_t)(sign | (r >> 13));
}

static inline float wl_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0) return wl_bits_f32(sign) + (sign ? -1.0f : 1.0f) * (float)m * 5.9604644775390625e-8f;
  if (e == 31) return wl_bits_f32(sign | 0x7f800000 | (m << 13));
  return wl_bits_f32(sign | ((e + 112) << 23) | (m << 13));
}

#endif
