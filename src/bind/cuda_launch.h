/* Bound launches (cuda_launch.c): k:bind{...} checks the arguments once and packs them; the
 * launch checks its kernel, stream and tensors each time it is called from Lua, and the C
 * loops of the measurement engine check once per timed call and then queue launches. */
#ifndef WL_CUDA_LAUNCH_H
#define WL_CUDA_LAUNCH_H

#include "cuda_device.h"

struct wl_bound;

/* Binds the kernel object at stack index kernel as k:bind(spec) does, spec the table at stack
 * index spec ({args =, stream =} for host work), and pushes the bound work: bind in one call
 * from C (host work's makers: wl.ops, cuBLAS). Its errors are bind's, placed at the script
 * line that called the running C function (a lua_call of k.bind would place them nowhere). */
struct wl_bound *wl_bind(lua_State *L, int kernel, int spec);

/* wl_bind for host work whose maker checked sizes against these very tensors (wl.ops, cuBLAS):
 * binds, then seals the kernel object, so that k:bind refuses other tensors later. */
struct wl_bound *wl_bind_sealed(lua_State *L, int kernel, int spec);

/* the bound launch at arg, or NULL if the value is not one */
struct wl_bound *wl_test_bound(lua_State *L, int arg);

/* Checks that the launch can go (its kernel, its bound stream and tensors not freed or
 * destroyed), loads its kernel on first use, and returns the stream it goes to (its own, or
 * the current one). FN names the caller for errors. Raises. */
cudaStream_t wl_bound_check(lua_State *L, struct wl_bound *b, const char *fn);

/* The part of wl_bound_check that a captured graph repeats before each replay: its kernel and
 * tensors not freed. */
void wl_bound_check_alive(lua_State *L, const struct wl_bound *b, const char *fn);

/* Queues n launches on stream, after wl_bound_check (which is not repeated here); raises. */
void wl_bound_enqueue(lua_State *L, struct wl_bound *b, cudaStream_t stream, long n);

#endif
