/* The L2 flush of cold samples (l2_flush.h). */
#include "l2_flush.h"
#include "cuda_stream.h"
#include "wl_modules.h"

static void *buffer;
static size_t bytes;

void wl_flush_l2_ready(lua_State *L) {
  if (buffer) return;
  int l2;
  WL_CUDA(L, wl_backend->attribute(&l2, cudaDevAttrL2CacheSize, wl_device_index()), "L2 size");
  /* the L2's size once, as nvbench writes: on the H200, reads after it are as slow as after
   * twice the L2 (tests/bench/flush_size_raw.cu, docs/benchmarks.md), 20 us a flush against 34 */
  bytes = (size_t)(l2 > 0 ? l2 : 1 << 20);
  WL_CUDA(L, wl_backend->alloc(&buffer, bytes), "allocating the L2 flush buffer");
}

void wl_flush_l2(lua_State *L, cudaStream_t s, int value) {
  wl_flush_l2_ready(L);
  WL_CUDA(L, wl_backend->set_memory(buffer, value & 0xff, bytes, s), "flushing the L2 cache");
}
