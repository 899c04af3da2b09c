/* Operations of the CUDA runtime as bound work (docs/libraries.md, "Runtime operations"):
 * wl.ops.memcpy, wl.ops.memset, wl.ops.memcpy2d and wl.ops.memset2d check their sizes against
 * their tensors, and return host work (host_work.h) bound to those tensors, which wl.bench
 * times in every mode and a graph captures. The copies and sets go through the device backend
 * (backend.h); a copy's direction is where its tensors live (device or pinned host memory). */
#include "cuda_kernel.h"
#include "laux.h"
#include "cuda_launch.h"
#include "cuda_tensor.h"
#include "wl_exit.h"
#include "wl_modules.h"

#include <lauxlib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op_kind { OP_COPY, OP_SET, OP_COPY_2D, OP_SET_2D };

struct op {
  enum op_kind kind;
  int value;                            /* a set's byte */
  size_t bytes;                         /* 1D */
  size_t dpitch, spitch, width, height; /* 2D: rows of width bytes, pitch bytes apart */
};

static int op_call(void *ctx, void *const *args, cudaStream_t s, char *why, size_t whylen) {
  const struct op *o = ctx;
  void *dst = *(void *const *)args[0];
  const void *src = o->kind == OP_COPY || o->kind == OP_COPY_2D ? *(void *const *)args[1] : NULL;
  cudaError_t err = cudaSuccess;
  switch (o->kind) {
  case OP_COPY: err = wl_backend->copy_memory(dst, src, o->bytes, s); break;
  case OP_SET: err = wl_backend->set_memory(dst, o->value, o->bytes, s); break;
  case OP_COPY_2D:
    err = wl_backend->copy_memory_2d(dst, o->dpitch, src, o->spitch, o->width, o->height, s);
    break;
  case OP_SET_2D:
    err = wl_backend->set_memory_2d(dst, o->dpitch, o->value, o->width, o->height, s);
    break;
  }
  if (err == cudaSuccess) return 0;
  snprintf(why, whylen, "%s: %s", cudaGetErrorName(err), cudaGetErrorString(err));
  return 1;
}

/* ---- fields ---- */

/* the tensor in field f of the table at spec: live, in device or pinned host memory */
static struct wl_tensor *tensor_field(lua_State *L, int spec, const char *fn, const char *f) {
  lua_getfield(L, spec, f);
  struct wl_tensor *t = wl_test_tensor(L, -1);
  if (!t)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: '%s' (a tensor) is required, got %s", fn, f,
             luaL_typename(L, -1));
  if (!t->data) wl_raise(L, WL_EXIT_SCRIPT, "%s: %s: tensor used after free", fn, f);
  if (t->memory == WL_MEM_HOST)
    wl_raise(L, WL_EXIT_SCRIPT,
             "%s: %s is a pageable host tensor: copies and sets take device or pinned host tensors "
             "(wl.host_tensor{..., pinned = true})",
             fn, f);
  lua_pop(L, 1); /* held by the table, and by the bound work from there */
  return t;
}

/* a whole number of bytes from lo in field f (absent: dflt, or required when dflt < 0) */
static size_t size_field(lua_State *L, int spec, const char *fn, const char *f, lua_Integer lo,
                         lua_Integer dflt) {
  int t = lua_getfield(L, spec, f);
  if (t == LUA_TNIL && dflt >= 0) {
    lua_pop(L, 1);
    return (size_t)dflt;
  }
  int isint = 0;
  lua_Integer v = lua_tointegerx(L, -1, &isint);
  if (t != LUA_TNUMBER || !isint || v < lo || v > ((lua_Integer)1 << 53))
    wl_raise(L, WL_EXIT_SCRIPT, "%s: '%s' must be a whole number from %lld to 2^53, got %s", fn, f,
             (long long)lo, t == LUA_TNIL ? "nothing" : luaL_tolstring(L, -1, NULL));
  lua_pop(L, 1);
  return (size_t)v;
}

static int byte_field(lua_State *L, int spec, const char *fn) {
  int t = lua_getfield(L, spec, "value");
  int isint = 0;
  lua_Integer v = t == LUA_TNIL ? 0 : lua_tointegerx(L, -1, &isint);
  if (t != LUA_TNIL && (t != LUA_TNUMBER || !isint || v < 0 || v > 255))
    wl_raise(L, WL_EXIT_SCRIPT,
             "%s: 'value' (the byte to set) must be a whole number from 0 to 255, got %s", fn,
             luaL_tolstring(L, -1, NULL));
  lua_pop(L, 1);
  return (int)v;
}

/* the bytes from t's first element to its last: a tensor's size, a strided view's extent */
static size_t extent(const struct wl_tensor *t) { return t->span * wl_dtype_info(t->dtype)->size; }

static void tensor_text(const struct wl_tensor *t, char *buf, size_t len) {
  snprintf(buf, len, "a %s %s %s of %zu bytes", wl_dtype_info(t->dtype)->name,
           t->memory == WL_MEM_DEVICE ? "device" : "pinned host", t->view ? "view" : "tensor",
           extent(t));
}

/* bytes from the start of t fit in it */
static void check_fits(lua_State *L, const char *fn, const char *f, const struct wl_tensor *t,
                       size_t bytes, const char *what) {
  if (bytes <= extent(t)) return;
  char desc[128];
  tensor_text(t, desc, sizeof desc);
  wl_raise(L, WL_EXIT_SCRIPT, "%s: %s (%zu bytes) go beyond %s, %s", fn, what, bytes, f, desc);
}

/* height rows of width bytes, pitch apart, fit in t: (height - 1) x pitch + width bytes */
static void check_rows_fit(lua_State *L, const char *fn, const char *f, const char *pitch_name,
                           const struct wl_tensor *t, size_t pitch, size_t width, size_t height) {
  if (width > pitch)
    wl_raise(L, WL_EXIT_SCRIPT,
             "%s: width (%zu bytes) is more than %s (%zu bytes): rows would overlap", fn, width,
             pitch_name, pitch);
  char what[128];
  snprintf(what, sizeof what, "%zu rows of %zu bytes, %zu apart", height, width, pitch);
  size_t span;
  if (__builtin_mul_overflow(height - 1, pitch, &span) ||
      __builtin_add_overflow(span, width, &span))
    span = SIZE_MAX;
  check_fits(L, fn, f, t, span, what);
}

/* A 2-D operation over a strided view goes over the view's own rows: pitch its row stride, the
 * rows within its shape (wl_tensor_need_matrix, in elements) */
static void check_view_rows(lua_State *L, const char *fn, const char *f, const char *pitch_name,
                            const struct wl_tensor *t, size_t pitch, size_t width, size_t height) {
  if (t->contiguous) return;
  size_t size = wl_dtype_info(t->dtype)->size;
  if (pitch % size || width % size)
    wl_raise(L, WL_EXIT_SCRIPT,
             "%s: %s (%zu bytes) and width (%zu bytes) must be whole elements (%zu bytes) of the "
             "view given as %s",
             fn, pitch_name, pitch, width, size, f);
  char ld_name[64];
  snprintf(ld_name, sizeof ld_name, "%s / %zu bytes", pitch_name, size);
  wl_tensor_need_matrix(L, t, fn, f, ld_name, (int64_t)height, (int64_t)(width / size),
                        (int64_t)(pitch / size));
}

/* the pitch of a 2-D operation over t when none is given: a strided view's row stride in bytes */
static lua_Integer default_pitch(const struct wl_tensor *t, size_t width) {
  int64_t ld = wl_tensor_default_ld(t, -1);
  return ld < 0 ? (lua_Integer)width : (lua_Integer)ld * (lua_Integer)wl_dtype_info(t->dtype)->size;
}

/* ---- making the work ---- */

/* Pushes the host work of o, named name, bound to the tensors of spec's fields dst (and src),
 * on spec's stream; the bound work replaces nothing and is left on the stack. */
static int push_op(lua_State *L, int spec, const struct op *model, const char *name, bool has_src) {
  struct op *o = malloc(sizeof *o);
  if (!o) return wl_raise(L, WL_EXIT_SCRIPT, "out of memory");
  *o = *model;
  struct wl_host_work host = {
      .call = op_call, .ctx = o, .release = free, .capturable = true, .kind = "runtime"};
  wl_push_host_kernel(L, name, has_src ? "void* dst, const void* src" : "void* dst", &host);
  int kernel = lua_gettop(L);
  lua_createtable(L, 0, 2);
  lua_createtable(L, 2, 0);
  lua_getfield(L, spec, "dst");
  lua_rawseti(L, -2, 1);
  if (has_src) {
    lua_getfield(L, spec, "src");
    lua_rawseti(L, -2, 2);
  }
  lua_setfield(L, -2, "args");
  lua_getfield(L, spec, "stream");
  lua_setfield(L, -2, "stream");
  wl_bind_sealed(L, kernel, kernel + 1);
  return 1;
}

static const char *where_name(const struct wl_tensor *t) {
  return t->memory == WL_MEM_DEVICE ? "device" : "host";
}

static void check_table(lua_State *L, const char *fn, const char *const *known,
                        const char *fields) {
  if (lua_type(L, 1) != LUA_TTABLE)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: expected a table {%s}, got %s", fn, fields,
             luaL_typename(L, 1));
  lua_settop(L, 1);
  wl_check_fields(L, 1, fn, known, false);
}

/* wl.ops.memcpy{dst =, src =, bytes = src's size, stream =} */
static int l_memcpy(lua_State *L) {
  static const char *const known[] = {"dst", "src", "bytes", "stream", NULL};
  const char *fn = "wl.ops.memcpy";
  check_table(L, fn, known, "dst =, src =, bytes =, stream =");
  struct wl_tensor *dst = tensor_field(L, 1, fn, "dst"), *src = tensor_field(L, 1, fn, "src");
  wl_tensor_need_contiguous(L, dst, fn);
  wl_tensor_need_contiguous(L, src, fn);
  struct op o = {.kind = OP_COPY};
  o.bytes = size_field(L, 1, fn, "bytes", 1, (lua_Integer)src->nbytes);
  check_fits(L, fn, "src", src, o.bytes, "the bytes to copy");
  check_fits(L, fn, "dst", dst, o.bytes, "the bytes to copy");
  char name[128];
  snprintf(name, sizeof name, "memcpy %s to %s, %zu bytes", where_name(src), where_name(dst),
           o.bytes);
  return push_op(L, 1, &o, name, true);
}

/* wl.ops.memset{dst =, value = 0, bytes = dst's size, stream =} */
static int l_memset(lua_State *L) {
  static const char *const known[] = {"dst", "value", "bytes", "stream", NULL};
  const char *fn = "wl.ops.memset";
  check_table(L, fn, known, "dst =, value =, bytes =, stream =");
  struct wl_tensor *dst = tensor_field(L, 1, fn, "dst");
  wl_tensor_need_contiguous(L, dst, fn);
  struct op o = {.kind = OP_SET, .value = byte_field(L, 1, fn)};
  o.bytes = size_field(L, 1, fn, "bytes", 1, (lua_Integer)dst->nbytes);
  check_fits(L, fn, "dst", dst, o.bytes, "the bytes to set");
  char name[128];
  snprintf(name, sizeof name, "memset %s, %zu bytes", where_name(dst), o.bytes);
  return push_op(L, 1, &o, name, false);
}

/* wl.ops.memcpy2d{dst =, dpitch =, src =, spitch =, width =, height =, stream =} */
static int l_memcpy2d(lua_State *L) {
  static const char *const known[] = {"dst",   "dpitch", "src",    "spitch",
                                      "width", "height", "stream", NULL};
  const char *fn = "wl.ops.memcpy2d";
  check_table(L, fn, known, "dst =, dpitch =, src =, spitch =, width =, height =, stream =");
  struct wl_tensor *dst = tensor_field(L, 1, fn, "dst"), *src = tensor_field(L, 1, fn, "src");
  struct op o = {.kind = OP_COPY_2D};
  o.width = size_field(L, 1, fn, "width", 1, -1);
  o.height = size_field(L, 1, fn, "height", 1, -1);
  o.dpitch = size_field(L, 1, fn, "dpitch", 1, default_pitch(dst, o.width));
  o.spitch = size_field(L, 1, fn, "spitch", 1, default_pitch(src, o.width));
  check_view_rows(L, fn, "src", "spitch", src, o.spitch, o.width, o.height);
  check_view_rows(L, fn, "dst", "dpitch", dst, o.dpitch, o.width, o.height);
  check_rows_fit(L, fn, "src", "spitch", src, o.spitch, o.width, o.height);
  check_rows_fit(L, fn, "dst", "dpitch", dst, o.dpitch, o.width, o.height);
  char name[128];
  snprintf(name, sizeof name, "memcpy2d %s to %s, %zu rows of %zu bytes", where_name(src),
           where_name(dst), o.height, o.width);
  return push_op(L, 1, &o, name, true);
}

/* wl.ops.memset2d{dst =, pitch =, value = 0, width =, height =, stream =} */
static int l_memset2d(lua_State *L) {
  static const char *const known[] = {"dst", "pitch", "value", "width", "height", "stream", NULL};
  const char *fn = "wl.ops.memset2d";
  check_table(L, fn, known, "dst =, pitch =, value =, width =, height =, stream =");
  struct wl_tensor *dst = tensor_field(L, 1, fn, "dst");
  struct op o = {.kind = OP_SET_2D, .value = byte_field(L, 1, fn)};
  o.width = size_field(L, 1, fn, "width", 1, -1);
  o.height = size_field(L, 1, fn, "height", 1, -1);
  o.dpitch = size_field(L, 1, fn, "pitch", 1, default_pitch(dst, o.width));
  check_view_rows(L, fn, "dst", "pitch", dst, o.dpitch, o.width, o.height);
  check_rows_fit(L, fn, "dst", "pitch", dst, o.dpitch, o.width, o.height);
  char name[128];
  snprintf(name, sizeof name, "memset2d %s, %zu rows of %zu bytes", where_name(dst), o.height,
           o.width);
  return push_op(L, 1, &o, name, false);
}

void wl_open_ops(lua_State *L) {
  static const luaL_Reg fns[] = {{"memcpy", l_memcpy},
                                 {"memset", l_memset},
                                 {"memcpy2d", l_memcpy2d},
                                 {"memset2d", l_memset2d},
                                 {NULL, NULL}};
  luaL_newlib(L, fns);
  lua_setfield(L, -2, "ops");
}
