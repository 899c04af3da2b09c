/* The device for the CUDA bindings: CUDA errors raised into Lua, the device in use, the message
 * of an object used after it was closed, and what the measurement engine watches. The bindings
 * reach the device only through wl_backend (backend.h). */
#ifndef WL_CUDA_DEVICE_H
#define WL_CUDA_DEVICE_H

#include "backend.h"

#include <lua.h>
#include <stdbool.h>

/* Raises a Lua error for a failed CUDA call: "what: cudaErrorX: description". The kind is
 * no_device when there is no device or driver, cuda otherwise. Never returns. */
int wl_cuda_raise(lua_State *L, cudaError_t err, const char *what);

/* Checks a backend call's result; raises on error. */
#define WL_CUDA(L, call, what)                                       \
  do {                                                               \
    cudaError_t wl_err_ = (call);                                    \
    if (wl_err_ != cudaSuccess) wl_cuda_raise((L), wl_err_, (what)); \
  } while (0)

/* Makes sure the device in use is open (selected, context created) before an operation on it;
 * raises no_device with the reason when there is none. Cheap after the first call. Under
 * --compile-only the backend opens nothing and this always succeeds. */
void wl_device_ready(lua_State *L);

/* For what needs facts of a real device (its properties, a kernel's attributes, clocks, timed
 * loops): raises a usage error "WHAT needs a CUDA device, which --compile-only does not use"
 * under the do-nothing backend; else as wl_device_ready. */
void wl_device_needed(lua_State *L, const char *what);

/* At the process's end, before the Lua state's close (lhost.c): waits for the work queued on the
 * open device, if one is (kernels still running, their printf output), at most seconds, on a
 * thread of its own; makes no context. true once done, with the synchronisation's answer in
 * *err (an error of work the script never waited for); false while the device still works. */
bool wl_device_finish(int seconds, cudaError_t *err);

/* The index of the open device (after wl_device_ready). */
int wl_device_index(void);

/* The device this process will use: the open one, else the one wl_device_ready will open. */
int wl_device_wanted(void);

/* The same, for work that starts on a thread before the context is made:
 * the open one, else the one wl_device_ready will open (selected, or the run.device setting),
 * which wl.select_device then keeps as if it were open. */
int wl_device_promise(void);

/* While the measurement engine measures, the Lua API counts what a timed body must not do. */
struct wl_watch {
  bool measuring;
  long syncs, allocs;
};
extern struct wl_watch wl_watch;
#define WL_WATCH_SYNC() (wl_watch.measuring ? (void)wl_watch.syncs++ : (void)0)
#define WL_WATCH_ALLOC() (wl_watch.measuring ? (void)wl_watch.allocs++ : (void)0)

#endif
