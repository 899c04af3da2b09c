/* Views of tensors (docs/lua-api.md, "Views"): t:view{offset =, shape =, strides =},
 * t:view(offset, count) and t:rows(first [, last]) give a tensor whose memory is a sub-range of
 * t's, checked to lie within t, with strides in elements (positive, and no two elements at one
 * address). A view is a struct wl_tensor like any other, so bind, copies and host work take it
 * unchanged; its uservalue holds its base (the tensor that owns the memory: a view of a view
 * has the same base), which keeps the base alive. The base's uservalue holds a weak set of its
 * views, and freeing the base clears their data pointers (wl_tensor_free_views): every check
 * of "used after free" sees a view of a freed tensor as freed. */
#include "cuda_tensor.h"
#include "laux.h"
#include "wl_exit.h"

#include <lauxlib.h>
#include <stdio.h>
#include <string.h>


/* ---- making a view ---- */

/* a whole number >= min at the top of the stack (popped), or an error naming the field */
static int64_t whole(lua_State *L, const char *fn, const char *field, int64_t min,
                     const char *unit) {
  int isint;
  lua_Integer v = lua_tointegerx(L, -1, &isint);
  if (!isint || v < min)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: %s must be a whole number%s >= %lld, got %s", fn, field, unit,
             (long long)min, lua_isnil(L, -1) ? "nil" : luaL_tolstring(L, -1, NULL));
  lua_pop(L, 1);
  return v;
}

/* the dimensions i and j of v (sizes above 1) overlap unless the outer stride passes the
 * inner dimension's extent: refuses a view in which two index tuples reach one element */
static void check_no_overlap(lua_State *L, const struct wl_tensor *v, const char *fn) {
  int order[WL_TENSOR_MAX_DIMS], n = 0;
  for (int d = 0; d < v->ndim; d++)
    if (v->shape[d] > 1) {
      int k = n++;
      while (k > 0 && v->strides[order[k - 1]] > v->strides[d]) order[k] = order[k - 1], k--;
      order[k] = d;
    }
  for (int k = 1; k < n; k++) {
    int in = order[k - 1], out = order[k];
    if (v->strides[out] < v->strides[in] * v->shape[in]) /* no overflow: checked by the span */
      wl_raise(L, WL_EXIT_SCRIPT,
               "%s: the view's elements overlap: dimension %d (size %lld, stride %lld) covers %lld "
               "elements, "
               "more than the stride %lld of dimension %d",
               fn, in + 1, (long long)v->shape[in], (long long)v->strides[in],
               (long long)(v->strides[in] * v->shape[in]), (long long)v->strides[out], out + 1);
  }
}

static bool is_row_major(const struct wl_tensor *v) {
  int64_t want = 1;
  for (int d = v->ndim - 1; d >= 0; d--) {
    if (v->shape[d] == 1) continue;
    if (v->strides[d] != want) return false;
    want *= v->shape[d];
  }
  return true;
}

/* Pushes the view of the tensor at 1 (t, checked) with the layout in v (shape, strides, ndim;
 * offset from t's first element): checks it, and that it lies within t. */
static void push_view(lua_State *L, const struct wl_tensor *t, struct wl_tensor *v,
                      const char *fn) {
  char shape[128], tshape[128];
  size_t numel = 1, last = v->offset;
  bool overflow = false;
  for (int d = 0; d < v->ndim; d++) {
    size_t reach;
    overflow |= __builtin_mul_overflow((size_t)(v->shape[d] - 1), (size_t)v->strides[d], &reach);
    overflow |= __builtin_add_overflow(last, reach, &last);
    overflow |= __builtin_mul_overflow(numel, (size_t)v->shape[d], &numel);
  }
  if (overflow || last >= t->span) {
    char reach[48];
    snprintf(reach, sizeof reach, overflow ? "beyond any tensor" : "to element %zu", last);
    wl_raise(
        L, WL_EXIT_SCRIPT,
        "%s: the view %s[%s] at offset %zu reaches %s, outside the %s %s[%s] (elements 0 to %zu)",
        fn, wl_dtype_info(t->dtype)->name, wl_tensor_shape(v, shape, sizeof shape), v->offset,
        reach, t->view ? "view" : "tensor", wl_dtype_info(t->dtype)->name,
        wl_tensor_shape(t, tshape, sizeof tshape), t->span - 1);
  }
  check_no_overlap(L, v, fn);
  size_t size = wl_dtype_info(t->dtype)->size;
  struct wl_tensor *view = lua_newuserdatauv(L, sizeof *view, 1);
  *view = *v;
  view->dtype = t->dtype;
  view->memory = t->memory;
  view->numel = numel;
  view->nbytes = numel * size;
  view->span = last - v->offset + 1;
  view->view = true;
  view->contiguous = is_row_major(v);
  view->offset = t->offset + v->offset; /* from the base */
  view->data = (void *)((uintptr_t)t->data + v->offset * size);
  luaL_setmetatable(L, TENSOR_MT);
  if (t->view) lua_getiuservalue(L, 1, 1); /* the base of t */
  else lua_pushvalue(L, 1);
  wl_tensor_add_view(L, -1, -2);
  lua_setiuservalue(L, -2, 1);
}

/* shape = {...} and strides = {...} of the table at arg into v */
static void read_dims(lua_State *L, int arg, const char *fn, struct wl_tensor *v) {
  char field[32];
  if (lua_getfield(L, arg, "shape") != LUA_TTABLE)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: shape must be a list of sizes, got %s", fn,
             luaL_typename(L, -1));
  lua_Integer ndim = luaL_len(L, -1);
  if (ndim < 1 || ndim > WL_TENSOR_MAX_DIMS)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: a view has 1 to %d dimensions, got %d", fn, WL_TENSOR_MAX_DIMS,
             (int)ndim);
  v->ndim = (int)ndim;
  for (int d = 0; d < v->ndim; d++) {
    lua_geti(L, -1, d + 1);
    snprintf(field, sizeof field, "shape[%d]", d + 1);
    v->shape[d] = whole(L, fn, field, 1, "");
  }
  lua_pop(L, 1);
  int type = lua_getfield(L, arg, "strides");
  if (type == LUA_TNIL) {
    lua_pop(L, 1);
    int64_t stride = 1; /* row-major */
    for (int d = v->ndim - 1; d >= 0; d--) {
      v->strides[d] = stride;
      if (__builtin_mul_overflow(stride, v->shape[d], &stride))
        wl_raise(L, WL_EXIT_SCRIPT, "%s: the view's size overflows", fn);
    }
    return;
  }
  if (type != LUA_TTABLE)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: strides must be a list of strides in elements, got %s", fn,
             luaL_typename(L, -1));
  if (luaL_len(L, -1) != ndim)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: strides has %d entries for a shape of %d dimensions", fn,
             (int)luaL_len(L, -1), v->ndim);
  for (int d = 0; d < v->ndim; d++) {
    lua_geti(L, -1, d + 1);
    snprintf(field, sizeof field, "strides[%d]", d + 1);
    int isint;
    lua_Integer s = lua_tointegerx(L, -1, &isint);
    if (isint && s <= 0)
      wl_raise(L, WL_EXIT_SCRIPT,
               "%s: %s is %lld: a stride is a whole number of elements >= 1 (zero and negative "
               "strides are not supported)",
               fn, field, (long long)s);
    v->strides[d] = whole(L, fn, field, 1, " of elements");
  }
  lua_pop(L, 1);
}

/* t:view{offset = 0, shape = {...}, strides = {...}} or t:view(offset, count) */
static int tensor_view(lua_State *L) {
  static const char *const fields[] = {"offset", "shape", "strides", NULL};
  const char *fn = "tensor:view";
  struct wl_tensor *t = wl_check_tensor(L, 1, fn);
  struct wl_tensor v;
  memset(&v, 0, sizeof v);
  if (lua_type(L, 2) == LUA_TTABLE) {
    if (!lua_isnone(L, 3))
      wl_raise(L, WL_EXIT_SCRIPT, "%s: give a table {offset =, shape =, strides =} alone", fn);
    wl_check_fields(L, 2, fn, fields, false);
    if (lua_getfield(L, 2, "offset") == LUA_TNIL) lua_pop(L, 1);
    else v.offset = (size_t)whole(L, fn, "offset", 0, " of elements");
    read_dims(L, 2, fn, &v);
  } else if (lua_type(L, 2) == LUA_TNUMBER) {
    if (lua_gettop(L) != 3)
      wl_raise(L, WL_EXIT_SCRIPT,
               "%s: takes a table {offset =, shape =, strides =} or (offset, count)", fn);
    lua_pushvalue(L, 2);
    v.offset = (size_t)whole(L, fn, "offset", 0, " of elements");
    lua_pushvalue(L, 3);
    v.shape[0] = whole(L, fn, "count", 1, " of elements");
    v.strides[0] = 1;
    v.ndim = 1;
  } else {
    wl_raise(L, WL_EXIT_SCRIPT,
             "%s: expected a table {offset =, shape =, strides =} or (offset, count), got %s", fn,
             luaL_typename(L, 2));
  }
  lua_settop(L, 1);
  push_view(L, t, &v, fn);
  return 1;
}

/* t:rows(first [, last]): rows first to last (1-based, inclusive) of t's first dimension */
static int tensor_rows(lua_State *L) {
  const char *fn = "tensor:rows";
  struct wl_tensor *t = wl_check_tensor(L, 1, fn);
  lua_settop(L, 3);
  lua_pushvalue(L, 2);
  int64_t first = whole(L, fn, "first", 1, "");
  if (lua_isnil(L, 3)) lua_pushvalue(L, 2);
  else lua_pushvalue(L, 3);
  int64_t last = whole(L, fn, "last", first, "");
  if (last > t->shape[0])
    wl_raise(L, WL_EXIT_SCRIPT, "%s: rows %lld to %lld of a tensor with %lld rows", fn,
             (long long)first, (long long)last, (long long)t->shape[0]);
  struct wl_tensor v = *t;
  v.shape[0] = last - first + 1;
  v.offset = (size_t)(first - 1) * (size_t)t->strides[0];
  lua_settop(L, 1);
  push_view(L, t, &v, fn);
  return 1;
}

const luaL_Reg wl_tensor_view_methods[] = {
    {"view", tensor_view}, {"rows", tensor_rows}, {NULL, NULL}};
