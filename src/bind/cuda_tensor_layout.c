/* A tensor's description and layout, which the other files of the class share and which uses
 * none of them: the dtypes, the memory's names, the shape as text, the element of a strided
 * view, the checks of contiguity and matrix layout, and the weak set of a base's views that
 * freeing the base clears (cuda_tensor.h). */
#include "cuda_tensor.h"
#include "wl_exit.h"

#include <lauxlib.h>
#include <stdio.h>
#include <string.h>

static const struct wl_dtype_info dtypes[WL_NDTYPES] = {
    [WL_F64] = {"f64", 8, 'f'},   [WL_F32] = {"f32", 4, 'f'}, [WL_F16] = {"f16", 2, 'f'},
    [WL_BF16] = {"bf16", 2, 'f'}, [WL_I64] = {"i64", 8, 'i'}, [WL_I32] = {"i32", 4, 'i'},
    [WL_I16] = {"i16", 2, 'i'},   [WL_I8] = {"i8", 1, 'i'},   [WL_U32] = {"u32", 4, 'u'},
    [WL_U8] = {"u8", 1, 'u'},
};

const struct wl_dtype_info *wl_dtype_info(enum wl_dtype d) {
  return &dtypes[(unsigned)d < WL_NDTYPES ? d : WL_F32];
}

bool wl_dtype_named(const char *name, enum wl_dtype *d) {
  for (int i = 0; i < WL_NDTYPES; i++)
    if (strcmp(dtypes[i].name, name) == 0) {
      *d = (enum wl_dtype)i;
      return true;
    }
  return false;
}

const char *wl_tensor_memory_name(enum wl_memory m) {
  return m == WL_MEM_DEVICE ? "device" : m == WL_MEM_PINNED ? "pinned" : "host";
}

const char *wl_tensor_shape(const struct wl_tensor *t, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < t->ndim && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, i ? "x%lld" : "%lld", (long long)t->shape[i]);
  return buf;
}

/* ---- layout ---- */

void wl_tensor_set_row_major(struct wl_tensor *t) {
  int64_t stride = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    t->strides[d] = stride;
    stride *= t->shape[d];
  }
  t->offset = 0;
  t->span = t->numel;
  t->view = false;
  t->contiguous = true;
}

size_t wl_tensor_element(const struct wl_tensor *t, size_t i) {
  if (t->contiguous) return i;
  size_t at = 0;
  for (int d = t->ndim - 1; d >= 0; d--) {
    at += i % (size_t)t->shape[d] * (size_t)t->strides[d];
    i /= (size_t)t->shape[d];
  }
  return at;
}

bool wl_tensors_overlap(const struct wl_tensor *a, const struct wl_tensor *b) {
  uintptr_t a0 = (uintptr_t)a->data, b0 = (uintptr_t)b->data;
  size_t asize = wl_dtype_info(a->dtype)->size, bsize = wl_dtype_info(b->dtype)->size;
  return (a->memory == WL_MEM_DEVICE) == (b->memory == WL_MEM_DEVICE) &&
         a0 < b0 + b->span * bsize && b0 < a0 + a->span * asize;
}

int64_t wl_tensor_default_ld(const struct wl_tensor *t, int64_t cols) {
  return !t->contiguous && t->ndim == 2 && t->strides[1] == 1 ? t->strides[0] : cols;
}

void wl_tensor_need_matrix(lua_State *L, const struct wl_tensor *t, const char *fn,
                           const char *field, const char *ld_name, int64_t rows, int64_t cols,
                           int64_t ld) {
  if (t->contiguous) return;
  char shape[128];
  wl_tensor_shape(t, shape, sizeof shape);
  if (t->ndim != 2 || t->strides[1] != 1)
    wl_raise(L, WL_EXIT_SCRIPT,
             "%s: %s is a strided view [%s] whose elements are not rows of adjacent elements; a "
             "library can "
             "take a 2-D view with column stride 1 (a block of a matrix), or copy it into a tensor "
             "first",
             fn, field, shape);
  if (ld != t->strides[0])
    wl_raise(
        L, WL_EXIT_SCRIPT,
        "%s: %s = %lld, but %s is a view [%s] whose rows are %lld elements apart: give %s = %lld",
        fn, ld_name, (long long)ld, field, shape, (long long)t->strides[0], ld_name,
        (long long)t->strides[0]);
  if (rows > t->shape[0] || cols > t->shape[1])
    wl_raise(L, WL_EXIT_SCRIPT, "%s: %s (%lld x %lld) is larger than the view [%s] given as %s", fn,
             field, (long long)rows, (long long)cols, shape, field);
}

void wl_tensor_need_contiguous(lua_State *L, const struct wl_tensor *t, const char *fn) {
  if (t->contiguous) return;
  char shape[128], strides[128];
  size_t n = 0;
  strides[0] = '\0';
  for (int d = 0; d < t->ndim && n < sizeof strides; d++)
    n += (size_t)snprintf(strides + n, sizeof strides - n, d ? ",%lld" : "%lld",
                          (long long)t->strides[d]);
  wl_raise(
      L, WL_EXIT_SCRIPT,
      "%s: the view %s[%s] with strides {%s} is not contiguous; use a contiguous view, or copy it "
      "into a tensor first (t:copy_from(view))",
      fn, wl_dtype_info(t->dtype)->name, wl_tensor_shape(t, shape, sizeof shape), strides);
}

/* ---- the set of a base's views ---- */

void wl_tensor_add_view(lua_State *L, int base_idx, int view_idx) {
  base_idx = lua_absindex(L, base_idx);
  view_idx = lua_absindex(L, view_idx);
  if (lua_getiuservalue(L, base_idx, 1) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_createtable(L, 0, 1);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2); /* weak keys: a view that nothing else holds goes */
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, base_idx, 1);
  }
  lua_pushvalue(L, view_idx);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

void wl_tensor_free_views(lua_State *L, int base_idx) {
  if (lua_getiuservalue(L, base_idx, 1) == LUA_TTABLE) {
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      lua_pop(L, 1);
      struct wl_tensor *v = lua_touserdata(L, -1);
      if (v) v->data = NULL;
    }
  }
  lua_pop(L, 1);
}

bool wl_tensor_view_field(lua_State *L, const struct wl_tensor *t, const char *k) {
  if (strcmp(k, "base") == 0) {
    if (t->view) lua_getiuservalue(L, 1, 1);
    else lua_pushnil(L);
  } else if (strcmp(k, "offset") == 0) lua_pushinteger(L, (lua_Integer)t->offset);
  else if (strcmp(k, "contiguous") == 0) lua_pushboolean(L, t->contiguous);
  else if (strcmp(k, "strides") == 0) {
    lua_createtable(L, t->ndim, 0);
    for (int i = 0; i < t->ndim; i++) {
      lua_pushinteger(L, t->strides[i]);
      lua_rawseti(L, -2, i + 1);
    }
  } else return false;
  return true;
}
