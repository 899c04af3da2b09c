/* The L2 flush of cold samples (docs/measuring.md, flush_l2): a device buffer of the L2's size,
 * made at the first flush and kept, written before a sample so that no line of its work
 * survives in the cache. Used by cold mode (cuda_timing.c) and cupti mode (cupti_timing.c). */
#ifndef WL_L2_FLUSH_H
#define WL_L2_FLUSH_H

#include <cuda_runtime_api.h>
#include <lua.h>

/* Makes the buffer now (a cudaMalloc may wait for the device: not behind a blocking kernel). */
void wl_flush_l2_ready(lua_State *L);

/* Queues the flush on s (value: the byte written, varied so that no write is skipped); raises. */
void wl_flush_l2(lua_State *L, cudaStream_t s, int value);

#endif
