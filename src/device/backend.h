/* The device backend: every operation of the CUDA bindings that touches a device goes through
 * wl_backend, one table of functions chosen once at start (docs/architecture.md, "The device
 * backend"):
 *   wl_backend_cuda  the CUDA runtime (backend_cuda.c);
 *   wl_backend_none  --compile-only (backend_none.c): does nothing, touches no device, and
 *                    hands out handles that stand for streams, events, graphs, kernels and
 *                    device memory, so that the bindings run every check they run on a GPU.
 * Each function returns the CUDA runtime's error code and raises nothing: the bindings check
 * every result (WL_CUDA in cuda_device.h). Pure C: no Lua. */
#ifndef WL_BACKEND_H
#define WL_BACKEND_H

#include "tensor_dtype.h"

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the function of host work (host_work.h: struct wl_host_work's call) */
typedef int (*wl_host_call_fn)(void *ctx, void *const *args, cudaStream_t stream, char *why,
                               size_t whylen);

struct wl_backend {
  const char *name; /* "cuda" or "none" */
  const char
      *no_device; /* NULL for a real device; else the option that uses none ("--compile-only") */

  /* ---- the device ---- */
  cudaError_t (*device_count)(int *n); /* the driver's count (both backends); creates nothing */
  /* selects device dev and creates its context; on failure writes the reason into why */
  cudaError_t (*open_device)(int dev, char *why, size_t whylen);
  /* makes dev current on the calling thread (its primary context made if none is), and nothing
   * more: for wlrun's own threads, whose calls must never wait for the device (a synchronising
   * call waits for a blocking kernel that the main thread cannot release meanwhile) */
  cudaError_t (*use_device)(int dev);
  cudaError_t (*check_context)(void); /* synchronises; the context's sticky error, if any */
  void (*clear_error)(void);          /* forgets a non-sticky error */
  cudaError_t (*device_sync)(void);
  cudaError_t (*attribute)(int *value, enum cudaDeviceAttr attr, int dev);
  cudaError_t (*properties)(struct cudaDeviceProp *p, int dev);
  cudaError_t (*versions)(int *driver, int *runtime);
  cudaError_t (*pci_bus_id)(char *bus, int len, int dev);
  cudaError_t (*mem_info)(size_t *free_bytes, size_t *total_bytes);

  /* ---- memory ---- */
  cudaError_t (*alloc)(void **p, size_t n); /* device memory */
  cudaError_t (*release)(void *p);
  cudaError_t (*alloc_pinned)(void **p, size_t n); /* page-locked host memory, zeroed or not */
  cudaError_t (*release_pinned)(void *p);
  cudaError_t (*set_memory)(void *p, int value, size_t n, cudaStream_t s);
  cudaError_t (*copy_memory)(void *dst, const void *src, size_t n,
                             cudaStream_t s); /* any direction */
  /* height rows of width bytes, pitch bytes apart on each side (strided tensor views) */
  cudaError_t (*copy_memory_2d)(void *dst, size_t dpitch, const void *src, size_t spitch,
                                size_t width, size_t height, cudaStream_t s);

  /* ---- wlrun's own kernels (cuda_init_kernels.h) ---- */
  cudaError_t (*init)(void *data, size_t n, enum wl_dtype dtype, enum wl_init_kind kind, double a,
                      double b, uint64_t seed, cudaStream_t s);
  cudaError_t (*count_nonzero)(const void *data, size_t n, unsigned long long *count,
                               cudaStream_t s);
  cudaError_t (*clock_probe)(unsigned long long *out, unsigned long long ns, cudaStream_t s);
  cudaError_t (*empty_kernel)(cudaStream_t s);
  /* holds s until *release >= generation or timeout_ns pass (then ++*timeouts); both are in
   * page-locked host memory (alloc_pinned) */
  cudaError_t (*block_stream)(volatile int *release, volatile int *timeouts, int generation,
                              unsigned long long timeout_ns, cudaStream_t s);

  /* ---- streams and events ---- */
  cudaError_t (*stream_create)(cudaStream_t *s, bool blocking, int priority);
  /* s's flags and priority: whether it waits for the legacy default stream, and its priority as
   * CUDA keeps it (clamped to the device's range) */
  cudaError_t (*stream_properties)(cudaStream_t s, bool *blocking, int *priority);
  cudaError_t (*stream_destroy)(cudaStream_t s);
  cudaError_t (*stream_sync)(cudaStream_t s);
  cudaError_t (*stream_query)(cudaStream_t s); /* cudaSuccess: done; cudaErrorNotReady: not yet */
  cudaError_t (*stream_wait)(cudaStream_t s, cudaEvent_t e);
  cudaError_t (*event_create)(cudaEvent_t *e, bool timing, bool blocking);
  cudaError_t (*event_destroy)(cudaEvent_t e);
  cudaError_t (*event_record)(cudaEvent_t e, cudaStream_t s);
  cudaError_t (*event_sync)(cudaEvent_t e);
  cudaError_t (*event_query)(cudaEvent_t e); /* cudaSuccess: done; cudaErrorNotReady: not yet */
  cudaError_t (*event_elapsed)(float *ms, cudaEvent_t start, cudaEvent_t stop);

  /* ---- graphs: stream capture ---- */
  cudaError_t (*capture_begin)(cudaStream_t s);
  cudaError_t (*capture_end)(cudaStream_t s, cudaGraph_t *graph);
  cudaError_t (*graph_instantiate)(cudaGraphExec_t *exec, cudaGraph_t graph);
  cudaError_t (*graph_nodes)(cudaGraph_t graph, size_t *n);
  cudaError_t (*graph_launch)(cudaGraphExec_t exec, cudaStream_t s);
  cudaError_t (*graph_destroy)(cudaGraph_t graph);
  cudaError_t (*graph_exec_destroy)(cudaGraphExec_t exec);

  /* ---- compiled kernels ---- */
  cudaError_t (*library_load)(cudaLibrary_t *lib, const void *cubin);
  cudaError_t (*library_unload)(cudaLibrary_t lib);
  cudaError_t (*kernel_get)(cudaKernel_t *k, cudaLibrary_t lib, const char *lowered_name);
  cudaError_t (*kernel_attributes)(struct cudaFuncAttributes *a, cudaKernel_t k);
  cudaError_t (*kernel_max_dynamic_smem)(cudaKernel_t k, int bytes);
  cudaError_t (*occupancy)(int *blocks, cudaKernel_t k, int block, size_t smem);
  cudaError_t (*launch)(cudaKernel_t k, dim3 grid, dim3 block, void **args, size_t smem,
                        cudaStream_t s);

  /* ---- host work (host_work.h): a function that queues its own work on s ---- */
  /* cuda: calls it, clearing the runtime's pending error first; its answer (0, or nonzero with
   * why), and in *after the runtime's error pending after a call that answered 0 (a launch it
   * made that failed), cleared. none: calls nothing, counts it as queued on s (a capture's
   * node), answers 0. */
  int (*host_call)(wl_host_call_fn call, void *ctx, void *const *args, cudaStream_t s, char *why,
                   size_t whylen, cudaError_t *after);
  /* height rows of width bytes set to value, pitch bytes apart (wl.ops.memset2d) */
  cudaError_t (*set_memory_2d)(void *p, size_t pitch, int value, size_t width, size_t height,
                               cudaStream_t s);

  /* ---- tools ---- */
  void (*name_stream)(cudaStream_t s, const char *name); /* the stream's name in NVTX tools */
};

extern const struct wl_backend wl_backend_cuda, wl_backend_none;

/* What a measurement gives under --compile-only besides nil (event:elapsed, wl.elapsed, wl.bench;
 * core.not_measured in Lua): nothing ran, so there is no number to print. */
#define WL_NOT_MEASURED "not measured: --compile-only runs nothing"

/* The backend in use: wl_backend_cuda until wl_backend_select says otherwise. */
extern const struct wl_backend *wl_backend;
void wl_backend_select(bool compile_only);

/* True when the error means "no usable device or driver". */
bool wl_cuda_is_no_device(cudaError_t err);
/* Why there is no device, for an error of cudaGetDeviceCount ("no NVIDIA driver ..."). */
const char *wl_cuda_no_device_reason(cudaError_t err);

#endif
