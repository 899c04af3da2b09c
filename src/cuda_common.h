/* Shared by the CUDA modules: error reporting into Lua and the current device. */
#ifndef WL_CUDA_COMMON_H
#define WL_CUDA_COMMON_H

#include <cuda_runtime_api.h>
#include <lua.h>
#include <stdbool.h>

/* Raises a Lua error for a failed CUDA call: "what: cudaErrorX: description". The kind is
 * no_device when there is no device or driver, cuda otherwise. Never returns. */
int wl_cuda_raise(lua_State *L, cudaError_t err, const char *what);

/* Checks a CUDA call's result; raises on error. */
#define WL_CUDA(L, call, what)                                                                 \
  do {                                                                                         \
    cudaError_t wl_err_ = (call);                                                              \
    if (wl_err_ != cudaSuccess) wl_cuda_raise((L), wl_err_, (what));                           \
  } while (0)

/* True when the error means "no usable device or driver". */
bool wl_cuda_is_no_device(cudaError_t err);

/* Makes sure a device is usable (selected device, context created); raises no_device with
 * the reason when there is none. Cheap after the first call. */
void wl_cuda_require_device(lua_State *L);

/* The stream that wlrun's work goes to when none is named: wlrun's own stream (created at
 * first use), or the capture stream inside wl.graph(). */
cudaStream_t wl_current_stream(lua_State *L);
/* arg is a wl.stream, or none/nil for the current stream */
cudaStream_t wl_opt_stream(lua_State *L, int arg);
/* True while wl.graph() captures: synchronising calls are refused then. */
bool wl_capturing(void);

#include "tensor_dtype.h"
#include <stddef.h>
#include <stdint.h>

#define WL_TENSOR_MAX_DIMS 8

enum wl_memory { WL_MEM_DEVICE, WL_MEM_HOST, WL_MEM_PINNED };

struct wl_tensor {
  void *data; /* NULL when empty or freed */
  size_t nbytes, numel;
  int ndim;
  int64_t shape[WL_TENSOR_MAX_DIMS];
  enum wl_dtype dtype;
  enum wl_memory memory;
};

struct wl_dtype_info {
  const char *name; /* "f32" */
  unsigned size;
  char kind; /* 'f' float, 'i' signed, 'u' unsigned */
};
const struct wl_dtype_info *wl_dtype_info(enum wl_dtype d);

/* the tensor at arg (raises if it is not one, or was freed) */
struct wl_tensor *wl_check_tensor(lua_State *L, int arg);
/* the tensor at arg, or NULL if the value is not a tensor */
struct wl_tensor *wl_test_tensor(lua_State *L, int arg);

/* --compile-only: kernels are compiled and launches checked, but no device is touched: device
 * tensors are placeholders without memory, and launches, copies and synchronisation do nothing. */
bool wl_compile_only(void);
void wl_set_compile_only(bool on);

/* While the measurement engine measures, the Lua API counts what a timed body must not do. */
struct wl_watch {
  bool measuring;
  long syncs, allocs;
};
extern struct wl_watch wl_watch;
#define WL_WATCH_SYNC() (wl_watch.measuring ? (void)wl_watch.syncs++ : (void)0)
#define WL_WATCH_ALLOC() (wl_watch.measuring ? (void)wl_watch.allocs++ : (void)0)

/* Graph capture on the current stream, for wl.graph() and graph-mode timing. */
cudaStream_t wl_capture_begin(lua_State *L);
/* Ends the capture begun above; returns the instantiated graph (NULL on failure, with the
 * error in *err). */
cudaGraphExec_t wl_capture_end(cudaGraph_t *graph, cudaError_t *err);
/* the executable graph of the wl.graph at arg, or NULL if the value is not one */
cudaGraphExec_t wl_test_graph(lua_State *L, int arg);

void wl_open_device(lua_State *L);
void wl_open_gpu_clock(lua_State *L);
void wl_open_timing(lua_State *L);
void wl_open_tensor(lua_State *L);
void wl_open_stream(lua_State *L);
void wl_open_kernel(lua_State *L);

#endif
