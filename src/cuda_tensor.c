/* Tensors for Lua: device tensors (wl.tensor) and host tensors (wl.host_tensor, pageable or
 * pinned), initialisation on the device, copies, element access, memory accounting. */
#include "cuda_common.h"
#include "cuda_init_kernels.h"
#include "half.h"
#include "lhost.h"
#include "settings.h"
#include "wl_exit.h"
#include "wl_rng.h"

#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TENSOR_MT "wlrun.tensor"

static const struct wl_dtype_info dtypes[WL_NDTYPES] = {
    [WL_F64] = {"f64", 8, 'f'}, [WL_F32] = {"f32", 4, 'f'}, [WL_F16] = {"f16", 2, 'f'},
    [WL_BF16] = {"bf16", 2, 'f'}, [WL_I64] = {"i64", 8, 'i'}, [WL_I32] = {"i32", 4, 'i'},
    [WL_I16] = {"i16", 2, 'i'}, [WL_I8] = {"i8", 1, 'i'}, [WL_U32] = {"u32", 4, 'u'},
    [WL_U8] = {"u8", 1, 'u'},
};

const struct wl_dtype_info *wl_dtype_info(enum wl_dtype d) {
  return &dtypes[(unsigned)d < WL_NDTYPES ? d : WL_F32];
}

/* memory accounting */
static struct {
  size_t device_live, device_peak, host_live, pinned_live;
  long long device_count, allocations;
  uint64_t inits; /* random initialisations so far: seeds of successive tensors differ */
} mem;

static const char *memory_name(enum wl_memory m) {
  return m == WL_MEM_DEVICE ? "device" : m == WL_MEM_PINNED ? "pinned" : "host";
}

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

struct wl_tensor *wl_check_tensor(lua_State *L, int arg) {
  struct wl_tensor *t = luaL_checkudata(L, arg, TENSOR_MT);
  if (!t->data) luaL_argerror(L, arg, "tensor was freed");
  return t;
}

static void release(struct wl_tensor *t) {
  if (!t->data) return;
  if (t->memory != WL_MEM_HOST && wl_compile_only()) { /* a placeholder, or calloc'd "pinned" */
    if (t->memory == WL_MEM_PINNED) {
      free(t->data);
      mem.pinned_live -= t->nbytes;
    }
    t->data = NULL;
    return;
  }
  switch (t->memory) {
  case WL_MEM_DEVICE:
    cudaFree(t->data); /* in __gc nothing can be raised; a dead context frees nothing anyway */
    mem.device_live -= t->nbytes;
    mem.device_count--;
    break;
  case WL_MEM_PINNED:
    cudaFreeHost(t->data);
    mem.pinned_live -= t->nbytes;
    break;
  case WL_MEM_HOST:
    free(t->data);
    mem.host_live -= t->nbytes;
    break;
  }
  t->data = NULL;
}

static int l_release(lua_State *L) {
  release(luaL_checkudata(L, 1, TENSOR_MT));
  return 0;
}

static const char *shape_string(const struct wl_tensor *t, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < t->ndim && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, i ? "x%lld" : "%lld", (long long)t->shape[i]);
  return buf;
}

/* ---- creation ---- */

static enum wl_dtype check_dtype(lua_State *L, const char *name) {
  for (int i = 0; i < WL_NDTYPES; i++)
    if (strcmp(dtypes[i].name, name) == 0) return (enum wl_dtype)i;
  wl_raise(L, WL_EXIT_SCRIPT, "unknown dtype '%s' (f64 f32 f16 bf16 i64 i32 i16 i8 u32 u8)", name);
  return WL_F32;
}

/* Reads the shape (array part, or shape = {...}) and dtype of a creation table at arg. */
static void read_layout(lua_State *L, int arg, const char *fn, struct wl_tensor *t) {
  int shape_at = arg;
  if (lua_getfield(L, arg, "shape") == LUA_TTABLE) {
    if (luaL_len(L, arg) > 0) wl_raise(L, WL_EXIT_SCRIPT, "%s: give the shape once, as shape = {...} or as the list", fn);
    shape_at = lua_gettop(L);
  } else if (!lua_isnil(L, -1)) {
    wl_raise(L, WL_EXIT_SCRIPT, "%s: shape must be a list of sizes, got %s", fn, luaL_typename(L, -1));
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

/* refuses fields a creation table does not know (a typo must not be ignored) */
static void check_fields(lua_State *L, int arg, const char *fn, const char *const *known) {
  lua_pushnil(L);
  while (lua_next(L, arg)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING) {
      const char *k = lua_tostring(L, -1);
      bool ok = false;
      for (const char *const *p = known; *p; p++) ok = ok || strcmp(*p, k) == 0;
      if (!ok) wl_raise(L, WL_EXIT_SCRIPT, "%s: unknown field '%s'", fn, k);
    } else if (!lua_isinteger(L, -1)) {
      wl_raise(L, WL_EXIT_SCRIPT, "%s: unexpected key of type %s", fn, luaL_typename(L, -1));
    }
  }
}

struct init_spec {
  enum wl_init_kind kind;
  double a, b;
  bool none;
  bool has_seed;
  uint64_t seed;
};

/* init: nil (zeros), "zeros", "none", a number (fill), or a table from wl.fill/arange/uniform/normal */
static struct init_spec read_init(lua_State *L, int idx, const char *fn) {
  struct init_spec s = {WL_INIT_FILL, 0, 0, false, false, 0};
  idx = lua_absindex(L, idx);
  switch (lua_type(L, idx)) {
  case LUA_TNIL: return s;
  case LUA_TNUMBER: s.a = lua_tonumber(L, idx); return s;
  case LUA_TSTRING:
    if (strcmp(lua_tostring(L, idx), "zeros") == 0) return s;
    if (strcmp(lua_tostring(L, idx), "none") == 0) { s.none = true; return s; }
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
      s.has_seed = true;
      s.seed = (uint64_t)luaL_checkinteger(L, -1);
    }
    lua_pop(L, 4);
    if (!isfinite(s.a) || !isfinite(s.b)) break;
    if (s.kind == WL_INIT_UNIFORM && !(s.b > s.a))
      wl_raise(L, WL_EXIT_SCRIPT, "%s: uniform(lo, hi) needs lo < hi", fn);
    if (s.kind == WL_INIT_NORMAL && !(s.b >= 0))
      wl_raise(L, WL_EXIT_SCRIPT, "%s: normal(mean, std) needs std >= 0", fn);
    return s;
  }
  }
  wl_raise(L, WL_EXIT_SCRIPT,
           "%s: init must be \"zeros\", \"none\", a number, or wl.fill/arange/uniform/normal, got %s",
           fn, luaL_tolstring(L, idx, NULL));
  return s;
}

static uint64_t next_seed(const struct init_spec *s) {
  if (s->has_seed) return wl_mix64(s->seed);
  const struct wl_setting *base = wl_setting_find("run", "seed");
  return wl_stream_seed((uint64_t)base->number, mem.inits++);
}

/* host element i as a double / from a double */
static double host_get(const struct wl_tensor *t, size_t i) {
  const char *p = (const char *)t->data + i * wl_dtype_info(t->dtype)->size;
  switch (t->dtype) {
  case WL_F64: { double v; memcpy(&v, p, 8); return v; }
  case WL_F32: { float v; memcpy(&v, p, 4); return v; }
  case WL_F16: { uint16_t v; memcpy(&v, p, 2); return wl_f16_to_f32(v); }
  case WL_BF16: { uint16_t v; memcpy(&v, p, 2); return wl_bf16_to_f32(v); }
  case WL_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
  case WL_I32: { int32_t v; memcpy(&v, p, 4); return v; }
  case WL_I16: { int16_t v; memcpy(&v, p, 2); return v; }
  case WL_I8: return (int8_t)*p;
  case WL_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
  case WL_U8: return (uint8_t)*p;
  default: return 0;
  }
}

static double saturate(double v, double lo, double hi) {
  v = nearbyint(v);
  return v < lo ? lo : v > hi ? hi : v;
}

static void host_set(struct wl_tensor *t, size_t i, double v) {
  char *p = (char *)t->data + i * wl_dtype_info(t->dtype)->size;
  switch (t->dtype) {
  case WL_F64: memcpy(p, &v, 8); break;
  case WL_F32: { float f = (float)v; memcpy(p, &f, 4); break; }
  case WL_F16: { uint16_t h = wl_f32_to_f16((float)v); memcpy(p, &h, 2); break; }
  case WL_BF16: { uint16_t h = wl_f32_to_bf16((float)v); memcpy(p, &h, 2); break; }
  case WL_I64: { int64_t x = (int64_t)saturate(v, -9223372036854775808.0, 9223372036854774784.0); memcpy(p, &x, 8); break; }
  case WL_I32: { int32_t x = (int32_t)saturate(v, -2147483648.0, 2147483647.0); memcpy(p, &x, 4); break; }
  case WL_I16: { int16_t x = (int16_t)saturate(v, -32768, 32767); memcpy(p, &x, 2); break; }
  case WL_I8: *p = (char)(int8_t)saturate(v, -128, 127); break;
  case WL_U32: { uint32_t x = (uint32_t)saturate(v, 0, 4294967295.0); memcpy(p, &x, 4); break; }
  case WL_U8: *p = (char)(uint8_t)saturate(v, 0, 255); break;
  default: break;
  }
}

static void apply_init(lua_State *L, struct wl_tensor *t, const struct init_spec *s) {
  if (s->none || (t->memory == WL_MEM_DEVICE && wl_compile_only())) return;
  if (t->memory == WL_MEM_DEVICE) {
    cudaStream_t stream = wl_current_stream(L);
    if (s->kind == WL_INIT_FILL && s->a == 0 && !signbit(s->a)) {
      WL_CUDA(L, cudaMemsetAsync(t->data, 0, t->nbytes, stream), "zeroing a tensor");
      return;
    }
    uint64_t seed = (s->kind == WL_INIT_UNIFORM || s->kind == WL_INIT_NORMAL) ? next_seed(s) : 0;
    WL_CUDA(L, wl_init_device(t->data, t->numel, t->dtype, s->kind, s->a, s->b, seed, stream),
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
    host_set(t, i, v);
  }
}

/* a new, empty tensor userdata with the layout of model (or zeroed) */
static struct wl_tensor *new_tensor(lua_State *L, const struct wl_tensor *model) {
  struct wl_tensor *t = lua_newuserdatauv(L, sizeof *t, 0);
  if (model) *t = *model; else memset(t, 0, sizeof *t);
  t->data = NULL;
  luaL_setmetatable(L, TENSOR_MT);
  return t;
}

static void allocate(lua_State *L, struct wl_tensor *t, enum wl_memory where) {
  char shape[128], want[32], avail[32], total[32], held[32];
  WL_WATCH_ALLOC();
  t->memory = where;
  if (where != WL_MEM_HOST && wl_compile_only()) {
    /* a placeholder: never dereferenced, since nothing runs on a device in this mode */
    static uintptr_t next = 0x10000;
    t->data = (void *)next;
    next += (t->nbytes + 511) / 256 * 256;
    if (where == WL_MEM_PINNED) { /* pinned memory is host memory: real, from calloc here */
      t->data = calloc(1, t->nbytes);
      if (!t->data) wl_raise(L, WL_EXIT_SCRIPT, "cannot allocate host memory");
      mem.pinned_live += t->nbytes;
    }
    return;
  }
  if (where == WL_MEM_DEVICE) {
    size_t free_b = 0, total_b = 0;
    wl_cuda_require_device(L);
    if (wl_capturing())
      wl_raise(L, WL_EXIT_SCRIPT, "allocating a tensor inside wl.graph() capture; allocate before the graph");
    WL_CUDA(L, cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    cudaError_t err = t->nbytes > free_b ? cudaErrorMemoryAllocation : cudaMalloc(&t->data, t->nbytes);
    if (err != cudaSuccess) {
      cudaGetLastError();
      t->data = NULL;
      wl_raise(L, WL_EXIT_CUDA,
               "out of device memory: tensor %s[%s] needs %s, %s free of %s (wlrun holds %s in %lld tensors)",
               wl_dtype_info(t->dtype)->name, shape_string(t, shape, sizeof shape),
               format_bytes(want, sizeof want, (double)t->nbytes),
               format_bytes(avail, sizeof avail, (double)free_b),
               format_bytes(total, sizeof total, (double)total_b),
               format_bytes(held, sizeof held, (double)mem.device_live), mem.device_count);
    }
    mem.device_live += t->nbytes;
    mem.device_count++;
    mem.allocations++;
    if (mem.device_live > mem.device_peak) mem.device_peak = mem.device_live;
  } else if (where == WL_MEM_PINNED) {
    wl_cuda_require_device(L);
    cudaError_t err = cudaMallocHost(&t->data, t->nbytes);
    if (err != cudaSuccess) {
      t->data = NULL;
      wl_raise(L, WL_EXIT_CUDA, "cannot allocate %s of pinned host memory for %s[%s]: %s",
               format_bytes(want, sizeof want, (double)t->nbytes), wl_dtype_info(t->dtype)->name,
               shape_string(t, shape, sizeof shape), cudaGetErrorString(err));
    }
    mem.pinned_live += t->nbytes;
  } else {
    t->data = malloc(t->nbytes);
    if (!t->data)
      wl_raise(L, WL_EXIT_SCRIPT, "cannot allocate %s of host memory for %s[%s]",
               format_bytes(want, sizeof want, (double)t->nbytes), wl_dtype_info(t->dtype)->name,
               shape_string(t, shape, sizeof shape));
    mem.host_live += t->nbytes;
  }
}

static int create(lua_State *L, bool device) {
  static const char *const device_fields[] = {"shape", "dtype", "init", NULL};
  static const char *const host_fields[] = {"shape", "dtype", "init", "pinned", NULL};
  const char *fn = device ? "wl.tensor" : "wl.host_tensor";
  luaL_checktype(L, 1, LUA_TTABLE);
  check_fields(L, 1, fn, device ? device_fields : host_fields);
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
  struct wl_tensor *t = new_tensor(L, &layout);
  allocate(L, t, where);
  apply_init(L, t, &init);
  return 1;
}

static int l_tensor(lua_State *L) { return create(L, true); }
static int l_host_tensor(lua_State *L) { return create(L, false); }

/* ---- copies ---- */

static void copy(lua_State *L, struct wl_tensor *dst, const struct wl_tensor *src, int stream_arg) {
  char a[128], b[128];
  if (dst->dtype != src->dtype || dst->numel != src->numel)
    wl_raise(L, WL_EXIT_SCRIPT, "copy: source %s[%s] does not match destination %s[%s]",
             wl_dtype_info(src->dtype)->name, shape_string(src, a, sizeof a), wl_dtype_info(dst->dtype)->name,
             shape_string(dst, b, sizeof b));
  if (dst->memory != WL_MEM_DEVICE && src->memory != WL_MEM_DEVICE) {
    memmove(dst->data, src->data, dst->nbytes);
    return;
  }
  if (wl_compile_only()) return; /* device tensors are placeholders */
  bool async = stream_arg > 0 && !lua_isnoneornil(L, stream_arg);
  cudaStream_t s = async ? wl_opt_stream(L, stream_arg) : wl_current_stream(L);
  if (!async && wl_capturing())
    wl_raise(L, WL_EXIT_SCRIPT, "a synchronous copy inside wl.graph() capture; pass a stream");
  WL_CUDA(L, cudaMemcpyAsync(dst->data, src->data, dst->nbytes, cudaMemcpyDefault, s), "copying a tensor");
  if (!async) WL_WATCH_SYNC();
  if (!async) WL_CUDA(L, cudaStreamSynchronize(s), "copying a tensor (synchronize)");
}

/* dst:copy_from(src [, stream]): synchronous without a stream, asynchronous on one */
static int l_copy_from(lua_State *L) {
  copy(L, wl_check_tensor(L, 1), wl_check_tensor(L, 2), 3);
  lua_settop(L, 1);
  return 1;
}

static int copy_to(lua_State *L, enum wl_memory where) {
  struct wl_tensor *src = wl_check_tensor(L, 1);
  struct wl_tensor *dst = new_tensor(L, src);
  allocate(L, dst, where);
  copy(L, dst, src, 0);
  return 1;
}

/* t:to_host([pinned]) -> a host copy; h:to_device() -> a device copy */
static int l_to_host(lua_State *L) { return copy_to(L, lua_toboolean(L, 2) ? WL_MEM_PINNED : WL_MEM_HOST); }
static int l_to_device(lua_State *L) { return copy_to(L, WL_MEM_DEVICE); }

/* t:fill(v) / t:init(spec): on the current stream for device tensors */
static int l_init(lua_State *L) {
  struct wl_tensor *t = wl_check_tensor(L, 1);
  if (lua_isnoneornil(L, 2)) luaL_argerror(L, 2, "an init (number, \"zeros\" or wl.normal() ...) expected");
  struct init_spec s = read_init(L, 2, "init");
  apply_init(L, t, &s);
  lua_settop(L, 1);
  return 1;
}

/* ---- element access (host tensors) ---- */

static size_t check_index(lua_State *L, struct wl_tensor *t, int arg) {
  if (t->memory == WL_MEM_DEVICE)
    wl_raise(L, WL_EXIT_SCRIPT, "element access needs a host tensor: use t:to_host()");
  lua_Integer i = luaL_checkinteger(L, arg);
  if (i < 1 || (lua_Unsigned)i > t->numel)
    wl_raise(L, WL_EXIT_SCRIPT, "index %lld out of range 1..%llu", (long long)i,
             (unsigned long long)t->numel);
  return (size_t)(i - 1);
}

static void push_element(lua_State *L, const struct wl_tensor *t, size_t i) {
  double v = host_get(t, i);
  if (wl_dtype_info(t->dtype)->kind == 'f') lua_pushnumber(L, v);
  else if (t->dtype == WL_I64) { int64_t x; memcpy(&x, (char *)t->data + i * 8, 8); lua_pushinteger(L, x); }
  else lua_pushinteger(L, (lua_Integer)v);
}

static void set_element(lua_State *L, struct wl_tensor *t, size_t i, int arg) {
  if (t->dtype == WL_I64 && lua_isinteger(L, arg)) {
    int64_t x = lua_tointeger(L, arg);
    memcpy((char *)t->data + i * 8, &x, 8);
    return;
  }
  host_set(t, i, luaL_checknumber(L, arg));
}

/* h:totable() -> the elements as a Lua array */
static int l_totable(lua_State *L) {
  struct wl_tensor *t = wl_check_tensor(L, 1);
  if (t->memory == WL_MEM_DEVICE) wl_raise(L, WL_EXIT_SCRIPT, "totable needs a host tensor: use t:to_host()");
  if (t->numel > (size_t)INT32_MAX) wl_raise(L, WL_EXIT_SCRIPT, "tensor too large for a Lua table");
  lua_createtable(L, (int)t->numel, 0);
  for (size_t i = 0; i < t->numel; i++) {
    push_element(L, t, i);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static struct wl_tensor *check_host(lua_State *L, int arg, const char *what) {
  struct wl_tensor *t = wl_check_tensor(L, arg);
  if (t->memory == WL_MEM_DEVICE) wl_raise(L, WL_EXIT_SCRIPT, "%s needs a host tensor: use t:to_host()", what);
  return t;
}

/* h:bytes([offset [, length]]) -> the raw bytes of a host tensor, as a string */
static int l_bytes(lua_State *L) {
  struct wl_tensor *t = check_host(L, 1, "bytes()");
  lua_Integer off = luaL_optinteger(L, 2, 0);
  lua_Integer len = luaL_optinteger(L, 3, (lua_Integer)t->nbytes - off);
  if (off < 0 || len < 0 || (lua_Unsigned)(off + len) > t->nbytes)
    return wl_raise(L, WL_EXIT_SCRIPT, "bytes(%lld, %lld) outside the tensor's %zu bytes", (long long)off,
                    (long long)len, t->nbytes);
  lua_pushlstring(L, (const char *)t->data + off, (size_t)len);
  return 1;
}

/* h:set_bytes(s [, offset]): copies the bytes of string s into a host tensor (file loaders) */
static int l_set_bytes(lua_State *L) {
  struct wl_tensor *t = check_host(L, 1, "set_bytes()");
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  lua_Integer off = luaL_optinteger(L, 3, 0);
  if (off < 0 || (lua_Unsigned)off + len > t->nbytes)
    return wl_raise(L, WL_EXIT_SCRIPT, "set_bytes: %zu bytes at offset %lld do not fit the tensor's %zu", len,
                    (long long)off, t->nbytes);
  memcpy((char *)t->data + off, s, len);
  lua_settop(L, 1);
  return 1;
}

static int l_free(lua_State *L) {
  release(wl_check_tensor(L, 1));
  return 0;
}

static int l_index(lua_State *L) {
  struct wl_tensor *t = luaL_checkudata(L, 1, TENSOR_MT);
  if (lua_type(L, 2) == LUA_TNUMBER) {
    if (!t->data) luaL_argerror(L, 1, "tensor was freed");
    push_element(L, t, check_index(L, t, 2));
    return 1;
  }
  const char *k = luaL_checkstring(L, 2);
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
  else if (strcmp(k, "memory") == 0) lua_pushstring(L, memory_name(t->memory));
  else if (strcmp(k, "freed") == 0) lua_pushboolean(L, t->data == NULL);
  else if (strcmp(k, "address") == 0) lua_pushinteger(L, (lua_Integer)(uintptr_t)t->data);
  else {
    luaL_getmetatable(L, TENSOR_MT);
    lua_getfield(L, -1, "methods");
    lua_getfield(L, -1, k);
  }
  return 1;
}

static int l_newindex(lua_State *L) {
  struct wl_tensor *t = luaL_checkudata(L, 1, TENSOR_MT);
  if (lua_type(L, 2) != LUA_TNUMBER)
    return wl_raise(L, WL_EXIT_SCRIPT, "tensor fields are read-only ('%s')", luaL_tolstring(L, 2, NULL));
  if (!t->data) luaL_argerror(L, 1, "tensor was freed");
  set_element(L, t, check_index(L, t, 2), 3);
  return 0;
}

static int l_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)((struct wl_tensor *)luaL_checkudata(L, 1, TENSOR_MT))->numel);
  return 1;
}

static int l_tostring(lua_State *L) {
  struct wl_tensor *t = luaL_checkudata(L, 1, TENSOR_MT);
  char shape[128], size[32];
  lua_pushfstring(L, "tensor %s[%s] %s %s%s", wl_dtype_info(t->dtype)->name, shape_string(t, shape, sizeof shape),
                  memory_name(t->memory), format_bytes(size, sizeof size, (double)t->nbytes),
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

void wl_open_tensor(lua_State *L) {
  static const luaL_Reg methods[] = {
      {"copy_from", l_copy_from}, {"to_host", l_to_host}, {"to_device", l_to_device},
      {"fill", l_init}, {"init", l_init}, {"totable", l_totable}, {"free", l_free},
      {"bytes", l_bytes}, {"set_bytes", l_set_bytes},
      {NULL, NULL}};
  static const luaL_Reg meta[] = {{"__index", l_index}, {"__newindex", l_newindex},
                                  {"__len", l_len}, {"__tostring", l_tostring},
                                  {"__gc", l_release}, {"__close", l_release}, {NULL, NULL}};
  static const luaL_Reg fns[] = {{"tensor", l_tensor}, {"host_tensor", l_host_tensor},
                                 {"memory", l_memory}, {"reset_memory_peak", l_reset_peak},
                                 {"is_tensor", l_is_tensor},
                                 {NULL, NULL}};
  luaL_newmetatable(L, TENSOR_MT);
  luaL_setfuncs(L, meta, 0);
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "methods");
  lua_pop(L, 1);
  luaL_setfuncs(L, fns, 0);
}
