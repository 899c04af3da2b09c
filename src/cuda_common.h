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

void wl_open_device(lua_State *L);

#endif
