/* Host work: a function on the host that queues GPU work on a stream — a library call
 * (cuBLAS, cuBLASLt, cudaMemcpyAsync, cudaMemsetAsync) or a function of a user's own shared
 * library (docs/libraries.md). It is a kernel object like a compiled kernel (struct
 * wl_kernel.host is set), so k:bind checks and packs its arguments against its parameter
 * list, and the bound work is launched, timed in every mode, captured in graphs and checked
 * exactly as a bound launch is; grid, block and smem do not apply to it. */
#ifndef WL_HOST_WORK_H
#define WL_HOST_WORK_H

#include <cuda_runtime_api.h>
#include <lua.h>
#include <stdbool.h>
#include <stddef.h>

struct wl_host_work {
  /* Queues the work on stream. args: a pointer to each packed argument value, as
   * cudaLaunchKernel takes them (a tensor: a pointer to its device pointer). Returns 0, or
   * nonzero with a message in why (the caller names the work). Never raises. */
  int (*call)(void *ctx, void *const *args, cudaStream_t stream, char *why, size_t whylen);
  void *ctx;
  /* Frees ctx when the kernel object is freed (may be NULL). Never raises. */
  void (*release)(void *ctx);
  /* May be captured in a CUDA graph (it only queues work on the stream it is given). */
  bool capturable;
  /* What it is, for reports: "cublas", "cublaslt", "runtime", "library" */
  const char *kind;
  /* Bound once by its maker, which checked sizes against the tensors (wl.ops.memcpy): k:bind
   * refuses to bind it again to other tensors. The maker sets it after its wl_bind. */
  bool sealed;
};

struct wl_kernel;

/* Pushes a new kernel object for host work. name: what messages and reports call it
 * ("cublas.gemm bf16", "saxpy in libexample.so"); params: its C parameter list, parsed like a
 * kernel's ("const float* x, float* y, float a, int n"), which bind checks arguments against.
 * Takes ownership of host->ctx (released on an error too). Raises on a bad parameter list.
 * (host_kernel.c) */
struct wl_kernel *wl_push_host_kernel(lua_State *L, const char *name, const char *params,
                                      const struct wl_host_work *host);

/* Raises "WHAT: 'NAME' is host work (KIND), it has no kernel attributes or occupancy" when k is
 * host work; returns otherwise. (host_kernel.c) */
void wl_refuse_host_work(lua_State *L, const struct wl_kernel *k, const char *what);

/* Binding host work in one call from C: wl_bind (cuda_launch.h). */

#endif
