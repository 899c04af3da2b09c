/* Tensors for Lua: device tensors (wl.tensor) and host tensors (wl.host_tensor, pageable or
 * pinned). cuda_tensor.c: the class, creation, initialisation, memory and its accounting;
 * cuda_tensor_data.c: copies and element access. */
#ifndef WL_CUDA_TENSOR_H
#define WL_CUDA_TENSOR_H

#include "cuda_device.h"

#include <lauxlib.h>
#include <stddef.h>
#include <stdint.h>

#define WL_TENSOR_MAX_DIMS 8
#define TENSOR_MT "wlrun.tensor" /* the metatable of tensors */

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

/* The tensor at arg; raises when it is not one, or was freed ("FN: tensor used after free",
 * wl_closed_error). */
struct wl_tensor *wl_check_tensor(lua_State *L, int arg, const char *fn);
/* The tensor at arg (freed or not), or NULL if the value is not a tensor. */
struct wl_tensor *wl_test_tensor(lua_State *L, int arg);

/* ---- between the two files of the tensor module ---- */

/* Pushes a new, empty tensor with the layout of model (or zeroed). */
struct wl_tensor *wl_tensor_new(lua_State *L, const struct wl_tensor *model);
/* Allocates t's memory where asked; raises on failure. */
void wl_tensor_allocate(lua_State *L, struct wl_tensor *t, enum wl_memory where);
const char *wl_tensor_shape(const struct wl_tensor *t, char *buf, size_t len); /* "64x32" */
const char *wl_tensor_memory_name(enum wl_memory m);                         /* "device" */
/* element i of a host tensor as a double, and set from one (rounded, saturated) */
double wl_tensor_host_get(const struct wl_tensor *t, size_t i);
void wl_tensor_host_set(struct wl_tensor *t, size_t i, double v);
/* cuda_tensor_data.c: the methods that copy and access elements, and the metamethods */
extern const luaL_Reg wl_tensor_data_methods[];
int wl_tensor_index(lua_State *L);
int wl_tensor_newindex(lua_State *L);

#endif
