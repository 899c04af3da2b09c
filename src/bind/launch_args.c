/* The arguments of a bound launch (cuda_launch.c): each Lua value checked against its kernel
 * parameter and packed as the kernel takes it. */
#include "cuda_tensor.h"
#include "half.h"
#include "launch_args.h"
#include "wl_exit.h"

#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static enum wl_dtype dtype_for(enum wl_ctype c, bool *known) {
  *known = true;
  switch (c) {
  case WL_C_FLOAT: return WL_F32;
  case WL_C_DOUBLE: return WL_F64;
  case WL_C_HALF: return WL_F16;
  case WL_C_BFLOAT16: return WL_BF16;
  case WL_C_INT: return WL_I32;
  case WL_C_UINT: return WL_U32;
  case WL_C_SHORT: return WL_I16;
  case WL_C_CHAR: return WL_I8;
  case WL_C_UCHAR: return WL_U8;
  case WL_C_LONG:
  case WL_C_LONGLONG: return WL_I64;
  default: *known = false; return WL_F32;
  }
}


static int arg_error(const struct wl_arg_ctx *c, const char *expected, int value) {
  char ptx[32];
  lua_State *L = c->L;
  const char *got;
  struct wl_tensor *t = wl_test_tensor(L, value);
  if (t)
    got = lua_pushfstring(L, "a %s tensor (%s)", wl_dtype_info(t->dtype)->name,
                          t->memory == WL_MEM_DEVICE   ? "device"
                          : t->memory == WL_MEM_PINNED ? "pinned host"
                                                       : "host");
  else if (lua_type(L, value) == LUA_TNUMBER)
    got = lua_pushfstring(L, "%s %s", lua_isinteger(L, value) ? "integer" : "float",
                          luaL_tolstring(L, value, NULL));
  else got = luaL_typename(L, value);
  if (c->k->host.call) /* host work: its C parameter list, no PTX */
    return wl_raise(L, WL_EXIT_SCRIPT, "host work '%s' argument %d (%s): expected %s, got %s",
                    c->k->name, c->index, wl_ctype_describe(c->p), expected, got);
  return wl_raise(L, WL_EXIT_SCRIPT, "kernel '%s' argument %d (%s, PTX %s): expected %s, got %s",
                  c->k->name, c->index,
                  c->k->sig.has_ctypes ? wl_ctype_describe(c->p) : "type unknown: extern \"C\"",
                  wl_ptx_describe(c->p, ptx, sizeof ptx), expected, got);
}

/* an exact integer in [lo, hi] from a Lua integer or an integral float */
static lua_Integer check_whole(const struct wl_arg_ctx *c, int value, double lo, double hi,
                               const char *what) {
  lua_State *L = c->L;
  if (lua_type(L, value) != LUA_TNUMBER) arg_error(c, what, value);
  lua_Integer v;
  if (lua_isinteger(L, value)) v = lua_tointeger(L, value);
  else {
    double d = lua_tonumber(L, value);
    if (d != floor(d) || !(d >= -9.2e18 && d <= 9.2e18)) arg_error(c, what, value);
    v = (lua_Integer)d;
  }
  /* compare in the integer domain where possible: unsigned 64 accepts any non-negative */
  if ((double)v < lo || (double)v > hi) arg_error(c, what, value);
  return v;
}

static bool is_unsigned(const struct wl_param *p, bool has_ctypes) {
  if (!has_ctypes) return false; /* PTX gives int as .u32 too: the signedness is unknown */
  switch (p->ctype) {
  case WL_C_UCHAR:
  case WL_C_USHORT:
  case WL_C_UINT:
  case WL_C_ULONG:
  case WL_C_ULONGLONG:
  case WL_C_BOOL: return true;
  default: return false;
  }
}

/* A tensor for a pointer parameter: its device address into dst */
static void pack_tensor(const struct wl_arg_ctx *c, int value, struct wl_tensor *t, bool pointer,
                        bool maybe_pointer, unsigned char *dst) {
  lua_State *L = c->L;
  const struct wl_param *p = c->p;
  if (!pointer && !maybe_pointer) arg_error(c, "a number", value);
  if (!t->data) arg_error(c, "a live tensor (this one was freed)", value);
  if (t->memory == WL_MEM_HOST)
    arg_error(c, "device memory (a device tensor, or a pinned host tensor)", value);
  bool known;
  enum wl_dtype want = dtype_for(p->pointee, &known);
  if (pointer && known && t->dtype != want)
    arg_error(c, lua_pushfstring(L, "a %s tensor", wl_dtype_info(want)->name), value);
  memcpy(dst, &t->data, sizeof t->data);
}

/* a floating parameter (half, bfloat16, float, double) from a Lua number */
static void pack_float(const struct wl_arg_ctx *c, int value, bool typed, unsigned char *dst) {
  lua_State *L = c->L;
  const struct wl_param *p = c->p;
  if (lua_type(L, value) != LUA_TNUMBER) arg_error(c, "a number", value);
  double v = lua_tonumber(L, value);
  if (typed && p->ctype == WL_C_HALF) {
    uint16_t h = wl_f32_to_f16((float)v);
    memcpy(dst, &h, 2);
  } else if (typed && p->ctype == WL_C_BFLOAT16) {
    uint16_t h = wl_f32_to_bf16((float)v);
    memcpy(dst, &h, 2);
  } else if (p->size == 4) {
    float f = (float)v;
    memcpy(dst, &f, 4);
  } else if (p->size == 8) memcpy(dst, &v, 8);
  else arg_error(c, "a supported floating type", value);
}

/* integers: signedness from the C type when known, else the union of both ranges */
static void pack_integer(const struct wl_arg_ctx *c, int value, bool typed, unsigned char *dst) {
  const struct wl_param *p = c->p;
  double bits = 8.0 * p->size, lo, hi;
  if (typed) {
    bool u = is_unsigned(p, typed);
    lo = u ? 0 : -ldexp(1, (int)bits - 1);
    hi = u ? ldexp(1, (int)bits) - 1 : ldexp(1, (int)bits - 1) - 1;
  } else {
    lo = -ldexp(1, (int)bits - 1);
    hi = ldexp(1, (int)bits) - 1;
  }
  char what[96];
  snprintf(what, sizeof what, "an integer from %.0f to %.0f", lo, hi);
  lua_Integer v = check_whole(c, value, lo, hi, what);
  switch (p->size) {
  case 1: {
    uint8_t x = (uint8_t)v;
    memcpy(dst, &x, 1);
    break;
  }
  case 2: {
    uint16_t x = (uint16_t)v;
    memcpy(dst, &x, 2);
    break;
  }
  case 4: {
    uint32_t x = (uint32_t)v;
    memcpy(dst, &x, 4);
    break;
  }
  case 8: memcpy(dst, &v, 8); break;
  default: arg_error(c, "a supported integer type", value);
  }
}

struct wl_tensor *wl_pack_arg(const struct wl_arg_ctx *c, int value, unsigned char *dst,
                              bool *input) {
  lua_State *L = c->L;
  const struct wl_param *p = c->p;
  bool typed = c->k->sig.has_ctypes;
  bool pointer = typed ? p->ctype == WL_C_POINTER : false;
  bool untyped = p->ptx_kind == WL_PTX_UNTYPED; /* a cubin's sizes only (docs/kernels.md) */
  bool maybe_pointer = !typed && (p->ptx_kind == WL_PTX_UNSIGNED || untyped) && p->size == 8;
  struct wl_tensor *t = wl_test_tensor(L, value);

  *input = false;
  if (t) {
    pack_tensor(c, value, t, pointer, maybe_pointer, dst);
    *input = pointer && p->pointee_const;
    return t;
  }
  if (pointer) arg_error(c, "a tensor", value);

  /* untyped: a Lua float is a float, a Lua integer an integer, a string the bytes */
  bool untyped_float = untyped && !typed && lua_type(L, value) == LUA_TNUMBER &&
                       !lua_isinteger(L, value) && (p->size == 4 || p->size == 8);
  bool untyped_bytes = untyped && ((typed && p->ctype == WL_C_OTHER) ||
                                   (!typed && lua_type(L, value) == LUA_TSTRING) ||
                                   (p->size != 1 && p->size != 2 && p->size != 4 && p->size != 8));
  if (p->ptx_kind == WL_PTX_FLOAT || untyped_float ||
      (typed && (p->ctype == WL_C_HALF || p->ctype == WL_C_BFLOAT16 || p->ctype == WL_C_FLOAT ||
                 p->ctype == WL_C_DOUBLE))) {
    pack_float(c, value, typed, dst);
    return NULL;
  }
  if ((p->ptx_kind == WL_PTX_BYTES || untyped_bytes) && !(typed && p->ctype == WL_C_BOOL)) {
    /* a struct by value: the script packs it (string.pack) to exactly its size */
    size_t len;
    const char *s = lua_type(L, value) == LUA_TSTRING ? lua_tolstring(L, value, &len) : NULL;
    if (!s || len != p->size)
      arg_error(c, lua_pushfstring(L, "a string of exactly %d bytes (string.pack)", (int)p->size),
                value);
    memcpy(dst, s, len);
    return NULL;
  }
  if (typed && p->ctype == WL_C_BOOL && lua_type(L, value) == LUA_TBOOLEAN) {
    unsigned char v = (unsigned char)lua_toboolean(L, value);
    memset(dst, 0, p->size);
    memcpy(dst, &v, 1);
    return NULL;
  }
  pack_integer(c, value, typed, dst);
  return NULL;
}
