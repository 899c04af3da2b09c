/* A parameter list written in C ("float* y, const float* x, float a, int n"), read into the
 * signature that k:bind checks arguments against: the parameters of host work (host_work.h),
 * which has no PTX or mangled name to read them from. Pure C; unit-tested in
 * tests/c/test_c_params.c. */
#ifndef WL_C_PARAMS_H
#define WL_C_PARAMS_H

#include "kernel_signature.h"

/* Reads TEXT: parameters separated by commas, each a type and an optional name. Types: void*,
 * bool, char, short, int, long, long long (signed or unsigned), float, double, __half
 * (half), __nv_bfloat16 (nv_bfloat16), size_t, ptrdiff_t, [u]intN_t, and pointers to any of
 * them or to any other named type; const, volatile and __restrict__ are taken (const before
 * the first * makes a pointer's memory an input). "" and "void" are no parameters. Fills sig
 * (has_ctypes true, sizes and alignments of the x86-64 ABI, PTX kinds as NVRTC gives them).
 * Returns false with a message in err naming the parameter (counted from 1). */
bool wl_c_params(const char *text, struct wl_signature *sig, char *err, size_t errlen);

#endif
