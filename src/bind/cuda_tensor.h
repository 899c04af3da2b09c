/* Tensors for Lua: device tensors (wl.tensor) and host tensors (wl.host_tensor, pageable or
 * pinned), and views of them (t:view, t:rows). cuda_tensor.c: the class, creation,
 * initialisation, memory and its accounting; cuda_tensor_data.c: copies and element access;
 * cuda_tensor_view.c: views and the layout of their elements. */
#ifndef WL_CUDA_TENSOR_H
#define WL_CUDA_TENSOR_H

#include "cuda_device.h"

#include <lauxlib.h>
#include <stddef.h>
#include <stdint.h>

#define WL_TENSOR_MAX_DIMS 8
#define TENSOR_MT "wlrun.tensor" /* the metatable of tensors */

enum wl_memory { WL_MEM_DEVICE, WL_MEM_HOST, WL_MEM_PINNED };

/* A tensor that owns its memory, or a view: a sub-range of another tensor's memory (its base,
 * held in the view's uservalue). A view is a tensor like any other to the code that takes
 * tensors (bind, copies, host work): data points at its first element. Freeing the base sets
 * the data of every view of it to NULL, so that "data == NULL" means "used after free" for
 * views too (cuda_tensor_view.c). */
struct wl_tensor {
  void *data;           /* NULL when empty or freed (a view: also when its base was freed) */
  size_t nbytes, numel; /* nbytes: numel x the element size (a view: its own elements) */
  int ndim;
  int64_t shape[WL_TENSOR_MAX_DIMS];
  int64_t strides[WL_TENSOR_MAX_DIMS]; /* in elements; row-major unless a strided view */
  size_t offset; /* a view: elements from its base's first element to its own; else 0 */
  size_t span;   /* elements from the first element to the last, plus one (= numel if contiguous) */
  bool view;     /* its memory is its base's */
  bool contiguous; /* row-major and dense: numel elements from data */
  enum wl_dtype dtype;
  enum wl_memory memory;
};

struct wl_dtype_info {
  const char *name; /* "f32" */
  unsigned size;
  char kind; /* 'f' float, 'i' signed, 'u' unsigned */
};
const struct wl_dtype_info *wl_dtype_info(enum wl_dtype d);
/* The dtype named name ("bf16") into *d; false for a name that is none. */
bool wl_dtype_named(const char *name, enum wl_dtype *d);

/* The tensor at arg; raises when it is not one, or was freed ("FN: tensor used after free",
 * wl_closed_error). */
struct wl_tensor *wl_check_tensor(lua_State *L, int arg, const char *fn);
/* The tensor at arg (freed or not), or NULL if the value is not a tensor. */
struct wl_tensor *wl_test_tensor(lua_State *L, int arg);
/* Raises "FN: ... a strided view ... is not contiguous" unless t's numel elements lie one after
 * the other from t->data (code that takes a pointer and a length: fill, bytes, a byte count). */
void wl_tensor_need_contiguous(lua_State *L, const struct wl_tensor *t, const char *fn);

/* A library reads or writes t as a matrix of rows x cols elements whose rows start ld elements
 * apart (cuBLAS's lda, a 2-D copy's pitch / element size). Any ld on a contiguous t (its extent
 * is checked by the caller); a strided view only as what it is: 2-D, unit column stride, at
 * least rows x cols, and ld its row stride — else the library would touch its base's elements
 * outside the view. Raises naming fn, field and ld_name. */
void wl_tensor_need_matrix(lua_State *L, const struct wl_tensor *t, const char *fn,
                           const char *field, const char *ld_name, int64_t rows, int64_t cols,
                           int64_t ld);

/* a and b may share memory: the bytes from the first element to the last of each meet (views
 * of one tensor, or one tensor twice) */
bool wl_tensors_overlap(const struct wl_tensor *a, const struct wl_tensor *b);

/* The ld a library should use over t when none is given: a strided view's row stride, else
 * cols (dense rows). */
int64_t wl_tensor_default_ld(const struct wl_tensor *t, int64_t cols);
/* The tensor at arg if it is contiguous; else pushes a contiguous copy of it (same memory
 * kind) and returns that: free it with wl_tensor_free(L, -1) when done. */
struct wl_tensor *wl_tensor_compact(lua_State *L, int arg, const char *fn);
/* The one close path (t:free, __gc, __close) of the tensor at idx: releases a base's memory
 * and makes its views freed; a view releases nothing. */
void wl_tensor_free(lua_State *L, int idx);

/* ---- between the two files of the tensor module ---- */

/* Pushes a new, empty tensor (not a view) with the dtype and shape of model (or zeroed), its
 * layout row-major. */
struct wl_tensor *wl_tensor_new(lua_State *L, const struct wl_tensor *model);
/* Allocates t's memory where asked; raises on failure. */
void wl_tensor_allocate(lua_State *L, struct wl_tensor *t, enum wl_memory where);
const char *wl_tensor_shape(const struct wl_tensor *t, char *buf, size_t len); /* "64x32" */
const char *wl_tensor_memory_name(enum wl_memory m);                           /* "device" */
/* element i (in row-major order of its shape) of a host tensor as a double, and set from one
 * (rounded, saturated) */
double wl_tensor_host_get(const struct wl_tensor *t, size_t i);
/* raises: v (NaN or an infinity) cannot be stored in the integer tensor t */
void wl_tensor_refuse_nonfinite(lua_State *L, const struct wl_tensor *t, double v, const char *fn);
void wl_tensor_host_set(struct wl_tensor *t, size_t i, double v);
/* cuda_tensor_data.c: the methods that copy and access elements, and the metamethods */
/* the class's own methods (free), metamethods (__len, __tostring, __gc, __close) and wlrun.core
 * functions (tensor, host_tensor, memory, reset_memory_peak, is_tensor), and t:fill / t:init
 * (the method's name as its closure's upvalue): cuda_tensor.c; the class is assembled in
 * cuda_tensor_class.c */
extern const luaL_Reg wl_tensor_core_meta[];
extern const luaL_Reg wl_tensor_core_methods[];
extern const luaL_Reg wl_tensor_core_functions[];
int wl_tensor_fill(lua_State *L);
extern const luaL_Reg wl_tensor_data_methods[];
int wl_tensor_index(lua_State *L);
int wl_tensor_newindex(lua_State *L);
/* cuda_tensor_view.c: t:view, t:rows; the fields of views */
extern const luaL_Reg wl_tensor_view_methods[];
/* Sets t's strides to row-major, span and contiguous from its shape; not a view. */
void wl_tensor_set_row_major(struct wl_tensor *t);
/* Where element i (row-major order of t's shape) lies: elements from t->data. */
size_t wl_tensor_element(const struct wl_tensor *t, size_t i);
/* Pushes t.base, t.offset, t.strides or t.contiguous for the tensor at 1; false if k is none. */
bool wl_tensor_view_field(lua_State *L, const struct wl_tensor *t, const char *k);
/* The base's views: remembers the view at view_idx in the base at base_idx; makes all of
 * the base's views freed. */
void wl_tensor_add_view(lua_State *L, int base_idx, int view_idx);
void wl_tensor_free_views(lua_State *L, int base_idx);

#endif
