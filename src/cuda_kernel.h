/* Compiled kernels (cuda_kernel.c) and their launches (cuda_launch.c). */
#ifndef WL_CUDA_KERNEL_H
#define WL_CUDA_KERNEL_H

#include "cuda_common.h"
#include "kernel_cache.h"
#include "kernel_signature.h"

#define KERNEL_MT "wlrun.kernel"

struct wl_kernel {
  char *name;    /* as the script names it: "gemm_tiled", "scale<float>" */
  char *source;  /* file path, or "<string>" */
  char arch[32]; /* "sm_90" */
  struct wl_compiled code;
  struct wl_signature sig;
  bool from_cache;
  cudaLibrary_t library; /* loaded on first use on a device */
  cudaKernel_t handle;
  struct cudaFuncAttributes attr; /* valid once loaded */
  int dynamic_smem_set;           /* largest cudaFuncAttributeMaxDynamicSharedMemorySize set */
};

/* the kernel at arg; raises if it is not one */
struct wl_kernel *wl_check_kernel(lua_State *L, int arg);

/* Loads the kernel on the current device (once); raises on failure. */
void wl_kernel_load(lua_State *L, struct wl_kernel *k);

/* k:bind{...} (cuda_launch.c) */
int wl_kernel_bind(lua_State *L);

void wl_open_launch(lua_State *L);

/* The C side of a bound launch, for loops that never return to Lua. */
struct wl_bound;
struct wl_bound *wl_check_bound(lua_State *L, int arg);
struct wl_bound *wl_test_bound(lua_State *L, int arg);
/* the stream the launch goes to: its own, or the current one */
cudaStream_t wl_bound_stream(lua_State *L, const struct wl_bound *b);
/* Queues n launches on stream (callers pass wl_bound_stream() unless they capture); raises. */
void wl_bound_launch(lua_State *L, struct wl_bound *b, cudaStream_t stream, long n);

#endif
