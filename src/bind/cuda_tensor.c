/* Tensors for Lua: device tensors (wl.tensor) and host tensors (wl.host_tensor, pageable or
 * pinned); the class, creation, initialisation, memory and its accounting (copies and element
 * access: cuda_tensor_data.c; views: cuda_tensor_view.c). Every method checks its tensor first
 * (wl_check_tensor); free, __gc and __close share one close path (wl_tensor_free) that clears
 * the data pointer, and those of the tensor's views. */
#include "cuda_stream.h"
#include "cuda_tensor.h"
#include "half.h"
#include "laux.h"
#include "settings.h"
#include "wl_exit.h"
#include "wl_modules.h"
#include "wl_rng.h"

#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* memory accounting */
static struct {
  size_t device_live, device_peak, host_live, pinned_live;
  long long device_count, allocations;
  uint64_t inits; /* random initialisations so far: seeds of successive tensors differ */
} mem;


static const char *format_bytes(char *buf, size_t len, double b) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (b >= 1024 && u < 5) b /= 1024, u++;
  snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", b, units[u]);
  return buf;
}

struct wl_tensor *wl_test_tensor(lua_State *L, int arg) {
  return luaL_testudata(L, arg, TENSOR_MT);
}

struct wl_tensor *wl_check_tensor(lua_State *L, int arg, const char *fn) {
  struct wl_tensor *t = wl_check_udata(L, arg, TENSOR_MT);
  if (!t->data) wl_closed_error(L, arg, fn, "tensor", "free");
  return t;
}

/* The one close path: free, __gc, __close. What the runtime says when it frees is not raised:
 * after a kernel fault every call returns the context's sticky error, and the tensor is gone
 * either way (the caller learns of the fault from core.context_ok, and scenario teardown must
 * go on); nothing can be raised from __gc, and a dead context frees nothing anyway. A view
 * releases nothing. */
void wl_tensor_free(lua_State *L, int idx) {
  struct wl_tensor *t = wl_check_udata(L, idx, TENSOR_MT);
  if (!t->data) return;
  if (!t->view) {
    switch (t->memory) {
    case WL_MEM_DEVICE:
      (void)wl_backend->release(t->data);
      mem.device_live -= t->nbytes;
      mem.device_count--;
      break;
    case WL_MEM_PINNED:
      (void)wl_backend->release_pinned(t->data);
      mem.pinned_live -= t->nbytes;
      break;
    case WL_MEM_HOST:
      free(t->data);
      mem.host_live -= t->nbytes;
      break;
    }
    wl_tensor_free_views(L, idx);
  }
  t->data = NULL;
}

static int tensor_gc(lua_State *L) {
  wl_tensor_free(L, 1);
  return 0;
}

/* t:free() */
static int tensor_free(lua_State *L) {
  wl_check_tensor(L, 1, "tensor:free");
  wl_tensor_free(L, 1);
  return 0;
}


/* ---- creation ---- */


static enum wl_dtype check_dtype(lua_State *L, const char *name) {
  enum wl_dtype d = WL_F32;
  if (!wl_dtype_named(name, &d))
    wl_raise(L, WL_EXIT_SCRIPT, "unknown dtype '%s' (f64 f32 f16 bf16 i64 i32 i16 i8 u32 u8)",
             name);
  return d;
}

/* Reads the shape (array part, or shape = {...}) and dtype of a creation table at arg. */
static void read_layout(lua_State *L, int arg, const char *fn, struct wl_tensor *t) {
  int shape_at = arg;
  if (lua_getfield(L, arg, "shape") == LUA_TTABLE) {
    if (luaL_len(L, arg) > 0)
      wl_raise(L, WL_EXIT_SCRIPT, "%s: give the shape once, as shape = {...} or as the list", fn);
    shape_at = lua_gettop(L);
  } else if (!lua_isnil(L, -1)) {
    wl_raise(L, WL_EXIT_SCRIPT, "%s: shape must be a list of sizes, got %s", fn,
             luaL_typename(L, -1));
  }
  lua_Integer ndim = luaL_len(L, shape_at);
  if (ndim < 1 || ndim > WL_TENSOR_MAX_DIMS)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: a tensor has 1 to %d dimensions, got %d", fn,
             WL_TENSOR_MAX_DIMS, (int)ndim);
  t->ndim = (int)ndim;
  size_t numel = 1;
  for (int i = 0; i < t->ndim; i++) {
    int isint;
    lua_geti(L, shape_at, i + 1);
    lua_Integer d = lua_tointegerx(L, -1, &isint);
    if (!isint || d < 1)
      wl_raise(L, WL_EXIT_SCRIPT, "%s: dimension %d must be a whole number >= 1, got %s", fn, i + 1,
               luaL_tolstring(L, -1, NULL));
    lua_pop(L, 1);
    if ((size_t)d > SIZE_MAX / numel / 8)
      wl_raise(L, WL_EXIT_SCRIPT, "%s: the shape's size overflows", fn);
    numel *= (size_t)d;
    t->shape[i] = d;
  }
  lua_pop(L, 1); /* shape field */
  t->dtype = WL_F32;
  if (lua_getfield(L, arg, "dtype") != LUA_TNIL) {
    if (!lua_isstring(L, -1)) wl_raise(L, WL_EXIT_SCRIPT, "%s: dtype must be a string", fn);
    t->dtype = check_dtype(L, lua_tostring(L, -1));
  }
  lua_pop(L, 1);
  t->numel = numel;
  t->nbytes = numel * wl_dtype_info(t->dtype)->size;
}


struct init_spec {
  enum wl_init_kind kind;
  double a, b;
  bool none;
  bool has_seed;
  uint64_t seed;
};

/* init: nil (zeros), "zeros", "none", a number (fill), or a table from
 * wl.fill/arange/uniform/normal */
static struct init_spec read_init(lua_State *L, int idx, const char *fn) {
  struct init_spec s = {WL_INIT_FILL, 0, 0, false, false, 0};
  idx = lua_absindex(L, idx);
  switch (lua_type(L, idx)) {
  case LUA_TNIL: return s;
  case LUA_TNUMBER: s.a = lua_tonumber(L, idx); return s;
  case LUA_TSTRING:
    if (strcmp(lua_tostring(L, idx), "zeros") == 0) return s;
    if (strcmp(lua_tostring(L, idx), "none") == 0) {
      s.none = true;
      return s;
    }
    break;
  case LUA_TTABLE: {
    static const char *const kinds[] = {"fill", "arange", "uniform", "normal", NULL};
    lua_getfield(L, idx, "kind");
    const char *k = lua_tostring(L, -1);
    int i = 0;
    while (k && kinds[i] && strcmp(kinds[i], k) != 0) i++;
    if (!k || !kinds[i]) break;
    s.kind = (enum wl_init_kind)i;
    lua_getfield(L, idx, "a");
    lua_getfield(L, idx, "b");
    s.a = lua_tonumber(L, -2);
    s.b = lua_tonumber(L, -1);
    if (lua_getfield(L, idx, "seed") != LUA_TNIL) {
      int isint;
      s.has_seed = true;
      s.seed = (uint64_t)lua_tointegerx(L, -1, &isint);
      if (!isint)
        wl_raise(L, WL_EXIT_SCRIPT, "%s: the seed must be a whole number, got %s", fn,
                 luaL_tolstring(L, -1, NULL));
    }
    lua_pop(L, 4);
    /* a fill may be NaN or infinite (integer dtypes saturate); the others need finite numbers */
    if (s.kind == WL_INIT_FILL ? isnan(s.b) : !isfinite(s.a) || !isfinite(s.b))
      wl_raise(L, WL_EXIT_SCRIPT, "%s: wl.%s(...) needs finite numbers, got %g and %g", fn,
               kinds[i], s.a, s.b);
    if (s.kind == WL_INIT_UNIFORM && !(s.b > s.a))
      wl_raise(L, WL_EXIT_SCRIPT, "%s: uniform(lo, hi) needs lo < hi", fn);
    if (s.kind == WL_INIT_NORMAL && !(s.b >= 0))
      wl_raise(L, WL_EXIT_SCRIPT, "%s: normal(mean, std) needs std >= 0", fn);
    return s;
  }
  }
  wl_raise(
      L, WL_EXIT_SCRIPT,
      "%s: init must be \"zeros\", \"none\", a number, or wl.fill/arange/uniform/normal, got %s",
      fn, luaL_tolstring(L, idx, NULL));
  return s;
}

static uint64_t next_seed(const struct init_spec *s) {
  if (s->has_seed) return wl_mix64(s->seed);
  const struct wl_setting *base = wl_setting_find("run", "seed");
  return wl_stream_seed((uint64_t)base->number, mem.inits++);
}

/* A NaN or an infinity stored into an integer tensor (an init, a fill, an element): an error at
 * the script's line, never a value made up (numpy warns; saturating would hide it) */
void wl_tensor_refuse_nonfinite(lua_State *L, const struct wl_tensor *t, double v, const char *fn) {
  wl_raise(L, WL_EXIT_SCRIPT,
           "%s: %s cannot be stored in an integer tensor (%s): an integer has no NaN or infinity",
           fn,
           isnan(v) ? "NaN"
           : v > 0  ? "inf"
                    : "-inf",
           wl_dtype_info(t->dtype)->name);
}

/* host element i as a double / from a double */
double wl_tensor_host_get(const struct wl_tensor *t, size_t i) {
  const char *p = (const char *)t->data + wl_tensor_element(t, i) * wl_dtype_info(t->dtype)->size;
  switch (t->dtype) {
  case WL_F64: {
    double v;
    memcpy(&v, p, 8);
    return v;
  }
  case WL_F32: {
    float v;
    memcpy(&v, p, 4);
    return v;
  }
  case WL_F16: {
    uint16_t v;
    memcpy(&v, p, 2);
    return wl_f16_to_f32(v);
  }
  case WL_BF16: {
    uint16_t v;
    memcpy(&v, p, 2);
    return wl_bf16_to_f32(v);
  }
  case WL_I64: {
    int64_t v;
    memcpy(&v, p, 8);
    return (double)v;
  }
  case WL_I32: {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
  }
  case WL_I16: {
    int16_t v;
    memcpy(&v, p, 2);
    return v;
  }
  case WL_I8: return (int8_t)*p;
  case WL_U32: {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
  }
  case WL_U8: return (uint8_t)*p;
  default: return 0;
  }
}

void wl_tensor_host_set(struct wl_tensor *t, size_t i, double v) {
  char *p = (char *)t->data + wl_tensor_element(t, i) * wl_dtype_info(t->dtype)->size;
  switch (t->dtype) {
  case WL_F64: memcpy(p, &v, 8); break;
  case WL_F32: {
    float f = (float)v;
    memcpy(p, &f, 4);
    break;
  }
  case WL_F16: {
    uint16_t h = wl_f32_to_f16((float)v);
    memcpy(p, &h, 2);
    break;
  }
  case WL_BF16: {
    uint16_t h = wl_f32_to_bf16((float)v);
    memcpy(p, &h, 2);
    break;
  }
  /* integers: rounded, NaN -> 0, saturated (tensor_dtype.h) */
  case WL_I64: {
    int64_t x = wl_to_i64(v);
    memcpy(p, &x, 8);
    break;
  }
  case WL_I32: {
    int32_t x = (int32_t)wl_to_whole(v, -2147483648.0, 2147483647.0);
    memcpy(p, &x, 4);
    break;
  }
  case WL_I16: {
    int16_t x = (int16_t)wl_to_whole(v, -32768, 32767);
    memcpy(p, &x, 2);
    break;
  }
  case WL_I8: {
    int8_t x = (int8_t)wl_to_whole(v, -128, 127);
    memcpy(p, &x, 1);
    break;
  }
  case WL_U32: {
    uint32_t x = (uint32_t)wl_to_whole(v, 0, 4294967295.0);
    memcpy(p, &x, 4);
    break;
  }
  case WL_U8: {
    uint8_t x = (uint8_t)wl_to_whole(v, 0, 255);
    memcpy(p, &x, 1);
    break;
  }
  default: break;
  }
}

static void apply_init(lua_State *L, struct wl_tensor *t, const struct init_spec *s,
                       const char *fn) {
  if (s->none) return;
  if (s->kind == WL_INIT_FILL && t->dtype >= WL_I64 && !isfinite(s->a))
    wl_tensor_refuse_nonfinite(L, t, s->a, fn);
  if (t->memory == WL_MEM_DEVICE) {
    wl_tensor_need_contiguous(L, t, fn); /* a host tensor's elements are set one by one */
    cudaStream_t stream = wl_current_stream(L);
    if (s->kind == WL_INIT_FILL && s->a == 0 && !signbit(s->a)) {
      WL_CUDA(L, wl_backend->set_memory(t->data, 0, t->nbytes, stream), "zeroing a tensor");
      return;
    }
    uint64_t seed = (s->kind == WL_INIT_UNIFORM || s->kind == WL_INIT_NORMAL) ? next_seed(s) : 0;
    WL_CUDA(L, wl_backend->init(t->data, t->numel, t->dtype, s->kind, s->a, s->b, seed, stream),
            "initialising a tensor");
    return;
  }
  uint64_t seed = (s->kind == WL_INIT_UNIFORM || s->kind == WL_INIT_NORMAL) ? next_seed(s) : 0;
  for (size_t i = 0; i < t->numel; i++) {
    double v;
    switch (s->kind) {
    case WL_INIT_FILL: v = s->a; break;
    case WL_INIT_ARANGE: v = s->a + (double)i * s->b; break;
    case WL_INIT_UNIFORM: v = s->a + (s->b - s->a) * wl_uniform01(seed, i); break;
    default: v = s->a + s->b * wl_normal01(seed, i);
    }
    wl_tensor_host_set(t, i, v);
  }
}

struct wl_tensor *wl_tensor_new(lua_State *L, const struct wl_tensor *model) {
  struct wl_tensor *t = lua_newuserdatauv(L, sizeof *t, 1); /* the uservalue: its views */
  if (model) *t = *model;
  else memset(t, 0, sizeof *t);
  t->data = NULL;
  t->nbytes = t->numel * wl_dtype_info(t->dtype)->size;
  wl_tensor_set_row_major(t);
  luaL_setmetatable(L, TENSOR_MT);
  return t;
}

void wl_tensor_allocate(lua_State *L, struct wl_tensor *t, enum wl_memory where) {
  char shape[128], want[32], avail[32], total[32], held[32];
  WL_WATCH_ALLOC();
  t->memory = where;
  if (where == WL_MEM_DEVICE) {
    size_t free_b = 0, total_b = 0;
    wl_device_ready(L);
    if (wl_capturing())
      wl_raise(L, WL_EXIT_SCRIPT,
               "allocating a tensor inside wl.graph() capture; allocate before the graph");
    WL_CUDA(L, wl_backend->mem_info(&free_b, &total_b), "cudaMemGetInfo");
    void *data = NULL;
    cudaError_t err =
        t->nbytes > free_b ? cudaErrorMemoryAllocation : wl_backend->alloc(&data, t->nbytes);
    if (err != cudaSuccess) {
      /* tensors nobody holds may still hold the memory: Lua paces its collector by its own
       * heap, where a tensor is a few bytes; collect them, and try once more */
      wl_backend->clear_error();
      lua_gc(L, LUA_GCCOLLECT);
      WL_CUDA(L, wl_backend->mem_info(&free_b, &total_b), "cudaMemGetInfo");
      err = t->nbytes > free_b ? cudaErrorMemoryAllocation : wl_backend->alloc(&data, t->nbytes);
    }
    if (err != cudaSuccess) {
      wl_backend->clear_error();
      wl_raise(L, WL_EXIT_CUDA,
               "out of device memory: tensor %s[%s] needs %s, %s free of %s (wlrun holds %s in "
               "%lld tensors)",
               wl_dtype_info(t->dtype)->name, wl_tensor_shape(t, shape, sizeof shape),
               format_bytes(want, sizeof want, (double)t->nbytes),
               format_bytes(avail, sizeof avail, (double)free_b),
               format_bytes(total, sizeof total, (double)total_b),
               format_bytes(held, sizeof held, (double)mem.device_live), mem.device_count);
    }
    t->data = data;
    mem.device_live += t->nbytes;
    mem.device_count++;
    mem.allocations++;
    if (mem.device_live > mem.device_peak) mem.device_peak = mem.device_live;
  } else if (where == WL_MEM_PINNED) {
    wl_device_ready(L);
    void *data = NULL;
    cudaError_t err = wl_backend->alloc_pinned(&data, t->nbytes);
    if (err != cudaSuccess) {
      wl_backend->clear_error();
      wl_raise(L, WL_EXIT_CUDA, "cannot allocate %s of pinned host memory for %s[%s]: %s",
               format_bytes(want, sizeof want, (double)t->nbytes), wl_dtype_info(t->dtype)->name,
               wl_tensor_shape(t, shape, sizeof shape), cudaGetErrorString(err));
    }
    t->data = data;
    mem.pinned_live += t->nbytes;
  } else {
    t->data =
        calloc(1, t->nbytes); /* zeroed: a copy from a device under --compile-only reads zeros */
    if (!t->data)
      wl_raise(L, WL_EXIT_SCRIPT, "cannot allocate %s of host memory for %s[%s]",
               format_bytes(want, sizeof want, (double)t->nbytes), wl_dtype_info(t->dtype)->name,
               wl_tensor_shape(t, shape, sizeof shape));
    mem.host_live += t->nbytes;
  }
}

static int create(lua_State *L, bool device) {
  static const char *const device_fields[] = {"shape", "dtype", "init", NULL};
  static const char *const host_fields[] = {"shape", "dtype", "init", "pinned", NULL};
  const char *fn = device ? "wl.tensor" : "wl.host_tensor";
  wl_check_type(L, 1, LUA_TTABLE);
  wl_check_fields(L, 1, fn, device ? device_fields : host_fields, true);
  struct wl_tensor layout;
  memset(&layout, 0, sizeof layout);
  read_layout(L, 1, fn, &layout);
  lua_getfield(L, 1, "init");
  struct init_spec init = read_init(L, -1, fn);
  lua_pop(L, 1);
  enum wl_memory where = WL_MEM_DEVICE;
  if (!device) {
    lua_getfield(L, 1, "pinned");
    where = lua_toboolean(L, -1) ? WL_MEM_PINNED : WL_MEM_HOST;
    lua_pop(L, 1);
  }
  struct wl_tensor *t = wl_tensor_new(L, &layout);
  wl_tensor_allocate(L, t, where);
  apply_init(L, t, &init, fn);
  return 1;
}

static int l_tensor(lua_State *L) { return create(L, true); }
static int l_host_tensor(lua_State *L) { return create(L, false); }

/* t:fill(v) / t:init(spec): on the current stream for device tensors; the method's name is the
 * closure's upvalue */
int wl_tensor_fill(lua_State *L) {
  const char *fn = lua_tostring(L, lua_upvalueindex(1));
  struct wl_tensor *t = wl_check_tensor(L, 1, fn);
  if (lua_isnoneornil(L, 2))
    wl_arg_error(L, 2, "an init (number, \"zeros\" or wl.normal() ...) expected");
  struct init_spec s = read_init(L, 2, "init");
  apply_init(L, t, &s, fn);
  wl_capture_hold(L, 1); /* inside wl.graph: the graph keeps it, and checks it at replay */
  lua_settop(L, 1);
  return 1;
}

static int tensor_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)((struct wl_tensor *)wl_check_udata(L, 1, TENSOR_MT))->numel);
  return 1;
}

static int tensor_tostring(lua_State *L) {
  struct wl_tensor *t = wl_check_udata(L, 1, TENSOR_MT);
  char shape[128], size[32], view[64] = "";
  if (t->view)
    snprintf(view, sizeof view, " %sview at %zu", t->contiguous ? "" : "strided ", t->offset);
  lua_pushfstring(L, "tensor %s[%s] %s %s%s%s", wl_dtype_info(t->dtype)->name,
                  wl_tensor_shape(t, shape, sizeof shape), wl_tensor_memory_name(t->memory),
                  format_bytes(size, sizeof size, (double)t->nbytes), view,
                  t->data ? "" : " (freed)");
  return 1;
}

static int l_is_tensor(lua_State *L) {
  lua_pushboolean(L, wl_test_tensor(L, 1) != NULL);
  return 1;
}

/* wl.memory() -> accounting of what wlrun holds */
static int l_memory(lua_State *L) {
  lua_createtable(L, 0, 6);
  lua_pushinteger(L, (lua_Integer)mem.device_live);
  lua_setfield(L, -2, "device_bytes");
  lua_pushinteger(L, (lua_Integer)mem.device_peak);
  lua_setfield(L, -2, "device_peak_bytes");
  lua_pushinteger(L, mem.device_count);
  lua_setfield(L, -2, "device_tensors");
  lua_pushinteger(L, mem.allocations);
  lua_setfield(L, -2, "device_allocations");
  lua_pushinteger(L, (lua_Integer)mem.pinned_live);
  lua_setfield(L, -2, "pinned_bytes");
  lua_pushinteger(L, (lua_Integer)mem.host_live);
  lua_setfield(L, -2, "host_bytes");
  return 1;
}

/* wl.reset_memory_peak(): the peak restarts from what is live now */
static int l_reset_peak(lua_State *L) {
  mem.device_peak = mem.device_live;
  return 0;
}

const luaL_Reg wl_tensor_core_meta[] = {{"__len", tensor_len},
                                        {"__tostring", tensor_tostring},
                                        {"__gc", tensor_gc},
                                        {"__close", tensor_gc},
                                        {NULL, NULL}};
const luaL_Reg wl_tensor_core_methods[] = {{"free", tensor_free}, {NULL, NULL}};
const luaL_Reg wl_tensor_core_functions[] = {
    {"tensor", l_tensor},       {"host_tensor", l_host_tensor},
    {"memory", l_memory},       {"reset_memory_peak", l_reset_peak},
    {"is_tensor", l_is_tensor}, {NULL, NULL}};
