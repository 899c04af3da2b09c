/* The arguments of a bound launch (launch_args.c, for cuda_launch.c): each Lua value checked
 * against its kernel parameter and packed as the kernel takes it. */
#ifndef WL_LAUNCH_ARGS_H
#define WL_LAUNCH_ARGS_H

#include "cuda_kernel.h"

struct wl_tensor;

/* the argument being packed: kernel k's parameter p, argument number index (1-based) */
struct wl_arg_ctx {
  lua_State *L;
  const struct wl_kernel *k;
  int index;
  const struct wl_param *p;
};

/* Converts the Lua value at `value` for parameter c->p into dst (c->p->size bytes); raises
 * naming the argument. Returns the tensor passed (its address packed), or NULL; *input: the
 * tensor goes to a const T* parameter (read, not written). */
struct wl_tensor *wl_pack_arg(const struct wl_arg_ctx *c, int value, unsigned char *dst,
                              bool *input);

#endif
