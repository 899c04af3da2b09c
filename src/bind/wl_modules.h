/* The C parts of wlrun.core: each wl_open_* adds its functions (and its classes' metatables)
 * to the table on top of the stack. The Lua host (lhost.c) calls them in this order; a binding
 * includes this header for its own prototype and needs nothing of the host. */
#ifndef WL_MODULES_H
#define WL_MODULES_H

#include "cli.h"

#include <lua.h>

void wl_open_clock(lua_State *L);     /* lclock.c: clock, clock_ns, sleep, started */
void wl_clock_mark_start(void);       /* lclock.c: core.started is now (main calls it first) */
void wl_open_stats(lua_State *L);     /* lstats.c: stats */
void wl_open_printable(lua_State *L); /* lprintable.c: printable_clean */
void wl_open_settings(lua_State *L, const struct wl_cli *cli); /* lsettings.c: settings, cli */
void wl_open_system(lua_State *L); /* lsystem.c: terminals, children, ... */
void wl_open_device(lua_State *L); /* cuda_device.c: devices */
void wl_open_tensor(lua_State *L); /* cuda_tensor.c: tensors */
void wl_open_stream(lua_State *L); /* cuda_stream.c: streams, events, sync */
void wl_open_graph(lua_State *L);  /* cuda_graph.c: wl.graph */
void wl_open_kernel(lua_State *L); /* cuda_kernel.c: kernels */
void wl_open_launch(
    lua_State *L); /* cuda_launch.c: k:bind and bound launches (after wl_open_kernel) */
void wl_open_library(
    lua_State *L); /* user_library.c: wl.library, a user's shared library as host work */
void wl_open_ops(lua_State *L); /* runtime_ops.c: wl.ops, runtime copies and sets as bound work */
void wl_open_cublas(lua_State *L);    /* lib_cublas.c: cublas.gemm (after wl_open_launch) */
void wl_open_cublaslt(lua_State *L);  /* lib_cublaslt.c: cublaslt.matmul (after wl_open_launch) */
void wl_open_gpu_clock(lua_State *L); /* gpu_clock.c: gpu_clock */
void wl_open_timing(lua_State *L);    /* cuda_timing.c: the timed loops */
void wl_open_cupti_timing(lua_State *L); /* cupti_timing.c: time_cupti, kernel time from CUPTI */
void wl_open_nvtx(lua_State *L);         /* nvtx_api.c: nvtx */

#endif
