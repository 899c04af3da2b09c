/* core.count_nonzero, the zero-input check of the measurement engine (docs/measuring.md),
 * registered by wl_open_timing (cuda_timing.c). */
#include "count_nonzero.h"
#include "cuda_device.h"
#include "cuda_stream.h"
#include "cuda_tensor.h"
#include "laux.h"

/* core.count_nonzero(tensor) -> number of nonzero bytes (of a strided view: of its elements,
 * counted in a contiguous copy) */
int wl_l_count_nonzero(lua_State *L) {
  lua_settop(L, 1);
  struct wl_tensor *t = wl_tensor_compact(L, 1, "core.count_nonzero");
  if (t->memory != WL_MEM_DEVICE) {
    unsigned long long c = 0;
    for (size_t i = 0; i < t->nbytes; i++) c += ((const unsigned char *)t->data)[i] != 0;
    if (lua_gettop(L) == 2) wl_tensor_free(L, 2);
    lua_pushinteger(L, (lua_Integer)c);
    return 1;
  }
  static void *count;
  unsigned long long host = 0;
  wl_device_needed(L, "core.count_nonzero");
  cudaStream_t s = wl_current_stream(L);
  if (!count) WL_CUDA(L, wl_backend->alloc(&count, sizeof host), "allocating a counter");
  WL_CUDA(L, wl_backend->count_nonzero(t->data, t->nbytes, (unsigned long long *)count, s),
          "counting nonzero bytes");
  WL_CUDA(L, wl_backend->copy_memory(&host, count, sizeof host, s), "reading the count");
  WL_CUDA(L, wl_backend->stream_sync(s), "counting nonzero bytes");
  if (lua_gettop(L) == 2) wl_tensor_free(L, 2); /* the contiguous copy */
  lua_pushinteger(L, (lua_Integer)host);
  return 1;
}
