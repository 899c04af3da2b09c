/* Tensors for Lua, their data: copies (t:copy_from, t:to_host, h:to_device), element access of
 * host tensors (h[i], h[i] = v, h:totable(), h:bytes(), h:set_bytes()), and the fields. Every
 * method checks its tensors first (wl_check_tensor): a freed one is an error. Views take part
 * as any tensor: elements go in the row-major order of each side's shape, a strided view's
 * through its strides (wl_tensor_element). */
#include "cuda_stream.h"
#include "cuda_tensor.h"
#include "laux.h"
#include "wl_exit.h"

#include <lauxlib.h>
#include <math.h>
#include <string.h>

/* ---- copies ---- */

/* the elements of t's innermost run: how many follow one another in memory */
static size_t run_length(const struct wl_tensor *t) {
  size_t run = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    if (t->shape[d] == 1) continue;
    if ((size_t)t->strides[d] != run) break;
    run *= (size_t)t->shape[d];
  }
  return run;
}

static size_t gcd(size_t a, size_t b) {
  while (b) {
    size_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

/* Copies between layouts that are not both contiguous: pieces of w elements that are
 * contiguous on both sides, as few 2-D copies as the pieces' spacing allows (one for a block
 * of a matrix; a host-to-host copy moves each piece). */
static void copy_strided(lua_State *L, struct wl_tensor *dst, const struct wl_tensor *src,
                         cudaStream_t s) {
  size_t size = wl_dtype_info(dst->dtype)->size, w = gcd(run_length(dst), run_length(src));
  size_t pieces = dst->numel / w, bytes = w * size;
  bool host = dst->memory != WL_MEM_DEVICE && src->memory != WL_MEM_DEVICE;
  for (size_t c = 0; c < pieces;) {
    size_t d0 = wl_tensor_element(dst, c * w), s0 = wl_tensor_element(src, c * w), h = 1;
    char *to = (char *)dst->data + d0 * size;
    const char *from = (const char *)src->data + s0 * size;
    if (host) {
      memmove(to, from, bytes);
      c++;
      continue;
    }
    size_t dp = w, sp = w; /* the pitches, in elements, while the pieces keep them */
    if (c + 1 < pieces) {
      size_t d1 = wl_tensor_element(dst, (c + 1) * w), s1 = wl_tensor_element(src, (c + 1) * w);
      if (d1 >= d0 + w && s1 >= s0 + w) {
        dp = d1 - d0, sp = s1 - s0;
        while (c + h < pieces && wl_tensor_element(dst, (c + h) * w) == d0 + h * dp &&
               wl_tensor_element(src, (c + h) * w) == s0 + h * sp)
          h++;
      }
    }
    WL_CUDA(L, wl_backend->copy_memory_2d(to, dp * size, from, sp * size, bytes, h, s),
            "copying a tensor view");
    c += h;
  }
}

/* a copy onto itself: the same elements in the same order (nothing moves) */
static bool same_layout(const struct wl_tensor *a, const struct wl_tensor *b) {
  if (a->data != b->data || a->ndim != b->ndim) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d] || a->strides[d] != b->strides[d]) return false;
  return true;
}

/* dst <- src: on stream_arg when it is given (asynchronous), else synchronous on the current
 * stream */
static void copy(lua_State *L, struct wl_tensor *dst, const struct wl_tensor *src, int stream_arg,
                 const char *fn) {
  char a[128], b[128];
  if (dst->dtype != src->dtype || dst->numel != src->numel)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: source %s[%s] does not match destination %s[%s]", fn,
             wl_dtype_info(src->dtype)->name, wl_tensor_shape(src, a, sizeof a),
             wl_dtype_info(dst->dtype)->name, wl_tensor_shape(dst, b, sizeof b));
  if (!same_layout(dst, src) && wl_tensors_overlap(dst, src))
    wl_raise(L, WL_EXIT_SCRIPT, "%s: the source and the destination overlap (views of one tensor)",
             fn);
  bool async = stream_arg > 0 && !lua_isnoneornil(L, stream_arg);
  if (async) wl_check_stream(L, stream_arg, fn);
  bool contiguous = dst->contiguous && src->contiguous;
  if (dst->memory != WL_MEM_DEVICE && src->memory != WL_MEM_DEVICE) {
    if (contiguous) memmove(dst->data, src->data, dst->nbytes);
    else copy_strided(L, dst, src, NULL);
    return;
  }
  if (!async && wl_capturing())
    wl_raise(L, WL_EXIT_SCRIPT, "%s: a synchronous copy inside wl.graph() capture; pass a stream",
             fn);
  cudaStream_t s = async ? wl_opt_stream(L, stream_arg, fn) : wl_current_stream(L);
  if (contiguous)
    WL_CUDA(L, wl_backend->copy_memory(dst->data, src->data, dst->nbytes, s), "copying a tensor");
  else copy_strided(L, dst, src, s);
  if (async) return;
  WL_WATCH_SYNC();
  WL_CUDA(L, wl_backend->stream_sync(s), "copying a tensor (synchronize)");
}

/* dst:copy_from(src [, stream]): synchronous without a stream, asynchronous on one */
static int tensor_copy_from(lua_State *L) {
  struct wl_tensor *dst = wl_check_tensor(L, 1, "tensor:copy_from");
  copy(L, dst, wl_check_tensor(L, 2, "tensor:copy_from"), 3, "tensor:copy_from");
  wl_capture_hold(L, 1); /* inside wl.graph: the graph keeps both, and checks them at replay */
  wl_capture_hold(L, 2);
  lua_settop(L, 1);
  return 1;
}

static struct wl_tensor *copy_to(lua_State *L, int arg, enum wl_memory where, const char *fn) {
  struct wl_tensor *src = wl_check_tensor(L, arg, fn);
  struct wl_tensor *dst = wl_tensor_new(L, src);
  wl_tensor_allocate(L, dst, where);
  copy(L, dst, src, 0, fn);
  return dst;
}

struct wl_tensor *wl_tensor_compact(lua_State *L, int arg, const char *fn) {
  struct wl_tensor *t = wl_check_tensor(L, arg, fn);
  return t->contiguous ? t : copy_to(L, arg, t->memory, fn);
}

/* t:to_host([pinned]) -> a host copy; h:to_device() -> a device copy */
static int tensor_to_host(lua_State *L) {
  copy_to(L, 1, lua_toboolean(L, 2) ? WL_MEM_PINNED : WL_MEM_HOST, "tensor:to_host");
  return 1;
}

static int tensor_to_device(lua_State *L) {
  copy_to(L, 1, WL_MEM_DEVICE, "tensor:to_device");
  return 1;
}

/* ---- element access (host tensors) ---- */

static size_t check_index(lua_State *L, struct wl_tensor *t, int arg) {
  if (t->memory == WL_MEM_DEVICE)
    wl_raise(L, WL_EXIT_SCRIPT, "element access needs a host tensor: use t:to_host()");
  lua_Integer i = wl_check_integer(L, arg);
  if (i < 1 || (lua_Unsigned)i > t->numel)
    wl_raise(L, WL_EXIT_SCRIPT, "index %lld out of range 1..%llu", (long long)i,
             (unsigned long long)t->numel);
  return (size_t)(i - 1);
}

static void push_element(lua_State *L, const struct wl_tensor *t, size_t i) {
  double v = wl_tensor_host_get(t, i);
  if (wl_dtype_info(t->dtype)->kind == 'f') lua_pushnumber(L, v);
  else if (t->dtype == WL_I64) {
    int64_t x;
    memcpy(&x, (char *)t->data + wl_tensor_element(t, i) * 8, 8);
    lua_pushinteger(L, x);
  } else lua_pushinteger(L, (lua_Integer)v);
}

static void set_element(lua_State *L, struct wl_tensor *t, size_t i, int arg) {
  if (t->dtype == WL_I64 && lua_isinteger(L, arg)) {
    int64_t x = lua_tointeger(L, arg);
    memcpy((char *)t->data + wl_tensor_element(t, i) * 8, &x, 8);
    return;
  }
  double v = wl_check_number(L, arg);
  if (t->dtype >= WL_I64 && !isfinite(v)) wl_tensor_refuse_nonfinite(L, t, v, "tensor[i] = v");
  wl_tensor_host_set(t, i, v);
}

static struct wl_tensor *check_host(lua_State *L, int arg, const char *fn) {
  struct wl_tensor *t = wl_check_tensor(L, arg, fn);
  if (t->memory == WL_MEM_DEVICE)
    wl_raise(L, WL_EXIT_SCRIPT, "%s needs a host tensor: use t:to_host()", fn);
  return t;
}

/* h:totable() -> the elements as a Lua array */
static int tensor_totable(lua_State *L) {
  struct wl_tensor *t = check_host(L, 1, "tensor:totable");
  if (t->numel > (size_t)INT32_MAX) wl_raise(L, WL_EXIT_SCRIPT, "tensor too large for a Lua table");
  lua_createtable(L, (int)t->numel, 0);
  for (size_t i = 0; i < t->numel; i++) {
    push_element(L, t, i);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* h:bytes([offset [, length]]) -> the raw bytes of a host tensor, as a string */
static int tensor_bytes(lua_State *L) {
  struct wl_tensor *t = check_host(L, 1, "tensor:bytes");
  wl_tensor_need_contiguous(L, t, "tensor:bytes");
  lua_Integer off = wl_opt_integer(L, 2, 0);
  lua_Integer len = off >= 0 && (lua_Unsigned)off <= t->nbytes
                        ? wl_opt_integer(L, 3, (lua_Integer)t->nbytes - off)
                        : wl_opt_integer(L, 3, 0);
  if (off < 0 || len < 0 || (lua_Unsigned)off > t->nbytes ||
      (lua_Unsigned)len > t->nbytes - (lua_Unsigned)off)
    return wl_raise(L, WL_EXIT_SCRIPT, "bytes(%lld, %lld) outside the tensor's %zu bytes",
                    (long long)off, (long long)len, t->nbytes);
  lua_pushlstring(L, (const char *)t->data + off, (size_t)len);
  return 1;
}

/* h:set_bytes(s [, offset]): copies the bytes of string s into a host tensor (file loaders) */
static int tensor_set_bytes(lua_State *L) {
  struct wl_tensor *t = check_host(L, 1, "tensor:set_bytes");
  wl_tensor_need_contiguous(L, t, "tensor:set_bytes");
  size_t len;
  const char *s = wl_check_lstring(L, 2, &len);
  lua_Integer off = wl_opt_integer(L, 3, 0);
  if (off < 0 || (lua_Unsigned)off + len > t->nbytes)
    return wl_raise(L, WL_EXIT_SCRIPT,
                    "set_bytes: %zu bytes at offset %lld do not fit the tensor's %zu", len,
                    (long long)off, t->nbytes);
  memcpy((char *)t->data + off, s, len);
  lua_settop(L, 1);
  return 1;
}

const luaL_Reg wl_tensor_data_methods[] = {{"copy_from", tensor_copy_from},
                                           {"to_host", tensor_to_host},
                                           {"to_device", tensor_to_device},
                                           {"totable", tensor_totable},
                                           {"bytes", tensor_bytes},
                                           {"set_bytes", tensor_set_bytes},
                                           {NULL, NULL}};

/* ---- fields: t.shape, t.dtype, ..., a view's (readable after free), t[i] (host tensors) ---- */

int wl_tensor_index(lua_State *L) {
  if (lua_type(L, 2) == LUA_TNUMBER) {
    struct wl_tensor *t = wl_check_tensor(L, 1, "tensor[i]");
    push_element(L, t, check_index(L, t, 2));
    return 1;
  }
  struct wl_tensor *t = wl_check_udata(L, 1, TENSOR_MT);
  const char *k = wl_check_string(L, 2);
  if (strcmp(k, "shape") == 0) {
    lua_createtable(L, t->ndim, 0);
    for (int i = 0; i < t->ndim; i++) {
      lua_pushinteger(L, t->shape[i]);
      lua_rawseti(L, -2, i + 1);
    }
  } else if (strcmp(k, "dtype") == 0) lua_pushstring(L, wl_dtype_info(t->dtype)->name);
  else if (strcmp(k, "nbytes") == 0) lua_pushinteger(L, (lua_Integer)t->nbytes);
  else if (strcmp(k, "numel") == 0) lua_pushinteger(L, (lua_Integer)t->numel);
  else if (strcmp(k, "ndim") == 0) lua_pushinteger(L, t->ndim);
  else if (strcmp(k, "memory") == 0) lua_pushstring(L, wl_tensor_memory_name(t->memory));
  else if (strcmp(k, "freed") == 0) lua_pushboolean(L, t->data == NULL);
  else if (strcmp(k, "address") == 0) lua_pushinteger(L, (lua_Integer)(uintptr_t)t->data);
  else if (!wl_tensor_view_field(L, t, k)) {
    lua_getmetatable(L, 1);
    lua_getfield(L, -1, "methods");
    lua_getfield(L, -1, k);
  }
  return 1;
}

int wl_tensor_newindex(lua_State *L) {
  if (lua_type(L, 2) != LUA_TNUMBER) {
    wl_check_udata(L, 1, TENSOR_MT);
    return wl_raise(L, WL_EXIT_SCRIPT, "tensor fields are read-only ('%s')",
                    luaL_tolstring(L, 2, NULL));
  }
  struct wl_tensor *t = wl_check_tensor(L, 1, "tensor[i]");
  set_element(L, t, check_index(L, t, 2), 3);
  return 0;
}
