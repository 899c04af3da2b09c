/* Compiled kernels for Lua (cuda_kernel.c): wl.kernel{...} through NVRTC or nvcc and the disk
 * cache, loading on the device, attributes. Their launches are cuda_launch.h's, which registers
 * k:bind into the kernel class's methods. */
#ifndef WL_CUDA_KERNEL_H
#define WL_CUDA_KERNEL_H

#include "cuda_device.h"
#include "host_work.h"
#include "kernel_cache.h"
#include "kernel_signature.h"

#define KERNEL_MT "wlrun.kernel" /* its field "methods": the methods of kernels */

struct wl_kernel {
  char *name;           /* as the script names it: "gemm_tiled", "scale<float>"; NULL once freed */
  char *source;         /* file path, or "<string>" */
  char arch[32];        /* "sm_90" */
  const char *compiler; /* "nvrtc", "nvcc" or "precompiled" (a file nvcc built) */
  char compiler_version[48]; /* "13.0", "13.0.88"; empty for precompiled code */
  struct wl_compiled code;
  struct wl_signature sig;
  bool from_cache;
  cudaLibrary_t library; /* loaded on first use on a device */
  cudaKernel_t handle;
  struct cudaFuncAttributes attr; /* valid once loaded */
  int dynamic_smem_set;           /* largest cudaFuncAttributeMaxDynamicSharedMemorySize set */
  struct wl_host_work host; /* host work (host_work.h) when host.call is set; else a GPU kernel */
};

/* The kernel at arg; raises when it is not one, or was freed ("FN: kernel used after free",
 * wl_closed_error). */
struct wl_kernel *wl_check_kernel(lua_State *L, int arg, const char *fn);

/* Adds k to the kernels of this run (wl.compiled_kernels, the --compile-only report). */
void wl_kernel_record(lua_State *L, const struct wl_kernel *k);

/* wl.kernel{file = "k.cubin" | "k.fatbin" | "k.ptx", name =, format =, params =} (cuda_module.c):
 * fills k (a kernel object, empty, that the caller made and records) from the module. spec is the
 * table's index, path the resolved file, data its bytes (len, a NUL after them), arch the target
 * ("sm_90"). Raises on bad input (what k holds then is freed with it). */
void wl_kernel_from_module(lua_State *L, int spec, struct wl_kernel *k, const char *name,
                           const char *path, const char *data, size_t len, const char *arch);

/* Pushes the mangled name of the kernel name in module m, matched as wl.kernel{file = ...} does
 * (the mangled name, or the demangled one without its parameters, spaces not counted), and
 * returns it; else pushes the list of the module's kernels (for a message) and returns NULL. */
struct wl_module;
const char *wl_module_find_kernel(lua_State *L, const struct wl_module *m, const char *name);

/* Pushes path resolved against the directory of the script that called the running C
 * function, as wl.kernel's file is (absolute paths as they are). */
const char *wl_push_script_relative(lua_State *L, const char *path);

/* Loads the kernel on the device in use (once); raises on failure. */
void wl_kernel_load(lua_State *L, struct wl_kernel *k);

#endif
