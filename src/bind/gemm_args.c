/* The option table of a library GEMM and its checks (gemm_args.h). */
#include "gemm_args.h"

#include "cuda_launch.h"
#include "laux.h"
#include "cuda_stream.h"
#include "cuda_tensor.h"
#include "half.h"
#include "wl_exit.h"

#include <lauxlib.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_WORKSPACE (32u << 20) /* what cuBLAS asks for on Hopper and Blackwell */

static const struct {
  const char *name;
  enum wl_gemm_compute compute;
} computes[] = {
    {"fp32", WL_GEMM_FP32}, {"tf32", WL_GEMM_TF32}, {"fp16", WL_GEMM_FP16}, {"fp64", WL_GEMM_FP64}};

static const char *compute_name(enum wl_gemm_compute c) { return computes[c].name; }

/* the compute types each dtype takes, its default first */
static const char *allowed_computes(enum wl_dtype d) {
  switch (d) {
  case WL_F32: return "fp32, tf32";
  case WL_F64: return "fp64";
  case WL_F16: return "fp32, fp16";
  default: return "fp32";
  }
}

static bool allows(enum wl_dtype d, enum wl_gemm_compute c) {
  switch (d) {
  case WL_F32: return c == WL_GEMM_FP32 || c == WL_GEMM_TF32;
  case WL_F64: return c == WL_GEMM_FP64;
  case WL_F16: return c == WL_GEMM_FP32 || c == WL_GEMM_FP16;
  default: return c == WL_GEMM_FP32;
  }
}

static bool supported(enum wl_dtype d) {
  return d == WL_F32 || d == WL_F64 || d == WL_F16 || d == WL_BF16;
}

static const char *value_text(lua_State *L, int idx) {
  switch (lua_type(L, idx)) {
  case LUA_TSTRING: return lua_pushfstring(L, "'%s'", lua_tostring(L, idx));
  case LUA_TNUMBER:
  case LUA_TBOOLEAN: return luaL_tolstring(L, idx, NULL);
  default: return lua_pushfstring(L, "a %s", luaL_typename(L, idx));
  }
}

/* a whole number in [lo, hi] from field; absent when nil */
static int whole_field(lua_State *L, int arg, const struct wl_gemm *g, const char *field, int lo,
                       int absent) {
  if (lua_getfield(L, arg, field) == LUA_TNIL) {
    lua_pop(L, 1);
    if (absent < lo)
      wl_raise(L, WL_EXIT_SCRIPT, "%s: %s is required (a whole number from %d)", g->fn, field, lo);
    return absent;
  }
  int isint;
  lua_Integer v = lua_tointegerx(L, -1, &isint);
  if (!isint || v < lo || v > INT_MAX)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: %s must be a whole number from %d to %d, got %s", g->fn, field,
             lo, INT_MAX, value_text(L, -1));
  lua_pop(L, 1);
  return (int)v;
}

static double number_field(lua_State *L, int arg, const struct wl_gemm *g, const char *field,
                           double absent) {
  if (lua_getfield(L, arg, field) == LUA_TNIL) {
    lua_pop(L, 1);
    return absent;
  }
  if (lua_type(L, -1) != LUA_TNUMBER || !isfinite(lua_tonumber(L, -1)))
    wl_raise(L, WL_EXIT_SCRIPT, "%s: %s must be a finite number, got %s", g->fn, field,
             value_text(L, -1));
  double v = lua_tonumber(L, -1);
  lua_pop(L, 1);
  return v;
}

/* the tensor in field ("a"), live and in device memory */
static struct wl_tensor *tensor_field(lua_State *L, int arg, const struct wl_gemm *g,
                                      const char *field) {
  lua_getfield(L, arg, field);
  struct wl_tensor *t = wl_test_tensor(L, -1);
  if (!t) {
    if (lua_isnil(L, -1))
      wl_raise(L, WL_EXIT_SCRIPT, "%s: %s is required (a device tensor)", g->fn, field);
    wl_raise(L, WL_EXIT_SCRIPT, "%s: %s must be a device tensor, got %s", g->fn, field,
             lua_type(L, -1) == LUA_TUSERDATA ? luaL_tolstring(L, -1, NULL) : value_text(L, -1));
  }
  if (!t->data && t->numel > 0)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: %s: tensor used after free", g->fn, field);
  if (t->memory != WL_MEM_DEVICE)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: %s must be a device tensor, got a %s tensor", g->fn, field,
             wl_tensor_memory_name(t->memory));
  lua_pop(L, 1);
  return t;
}

/* that t holds a rows x cols row-major matrix with leading dimension ld */
static void check_size(lua_State *L, const struct wl_gemm *g, const struct wl_tensor *t,
                       const char *field, const char *shape, int rows, int cols, int ld) {
  char ldname[8];
  snprintf(ldname, sizeof ldname, "ld%s", field);
  if (ld < cols)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: %s = %d is less than the %d columns of %s (%s, row-major)",
             g->fn, ldname, ld, cols, field, shape);
  /* the library reads need elements from the first: a strided view (a block of a larger
   * matrix, its ld the parent's row length) offers its extent, first element to last */
  int64_t need = (int64_t)(rows - 1) * ld + cols;
  if ((int64_t)t->span < need)
    wl_raise(L, WL_EXIT_SCRIPT,
             "%s: %s %s %zu elements, but %s (%d x %d, row-major, %s = %d) needs %lld (m = %d, n = "
             "%d, k = %d%s%s)",
             g->fn, field, t->contiguous ? "has" : "spans", t->span, field, rows, cols, ldname, ld,
             (long long)need, g->m, g->n, g->k, g->transa ? ", transa" : "",
             g->transb ? ", transb" : "");
}

static enum wl_dtype dtype_field(lua_State *L, int arg, const struct wl_gemm *g,
                                 enum wl_dtype of_tensors) {
  if (lua_getfield(L, arg, "dtype") == LUA_TNIL) {
    lua_pop(L, 1);
    return of_tensors;
  }
  const char *name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
  if (!name || strcmp(name, wl_dtype_info(of_tensors)->name) != 0)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: dtype %s does not agree with the tensors, which are %s", g->fn,
             value_text(L, -1), wl_dtype_info(of_tensors)->name);
  lua_pop(L, 1);
  return of_tensors;
}

static enum wl_gemm_compute compute_field(lua_State *L, int arg, const struct wl_gemm *g) {
  enum wl_gemm_compute dflt = g->dtype == WL_F64 ? WL_GEMM_FP64 : WL_GEMM_FP32;
  if (lua_getfield(L, arg, "compute") == LUA_TNIL) {
    lua_pop(L, 1);
    return dflt;
  }
  const char *name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
  for (size_t i = 0; name && i < sizeof computes / sizeof *computes; i++)
    if (strcmp(name, computes[i].name) == 0 && allows(g->dtype, computes[i].compute)) {
      lua_pop(L, 1);
      return computes[i].compute;
    }
  return wl_raise(L, WL_EXIT_SCRIPT, "%s: compute %s is not one for %s tensors (%s)", g->fn,
                  value_text(L, -1), wl_dtype_info(g->dtype)->name, allowed_computes(g->dtype));
}

void wl_gemm_read(lua_State *L, int arg, const char *fn, struct wl_gemm *g) {
  static const char *const known[] = {"a",      "b",      "c",     "m",         "n",      "k",
                                      "transa", "transb", "alpha", "beta",      "dtype",  "compute",
                                      "lda",    "ldb",    "ldc",   "workspace", "stream", NULL};
  memset(g, 0, sizeof *g);
  g->fn = fn;
  if (lua_type(L, arg) != LUA_TTABLE)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: expected a table {a =, b =, c =, m =, n =, k =, ...}, got %s",
             fn, luaL_typename(L, arg));
  wl_check_fields(L, arg, fn, known, false);
  const struct wl_tensor *a = tensor_field(L, arg, g, "a"), *b = tensor_field(L, arg, g, "b"),
                         *c = tensor_field(L, arg, g, "c");
  if (wl_tensors_overlap(c, a) || wl_tensors_overlap(c, b)) {
    const char *other = wl_tensors_overlap(c, a) ? "a" : "b";
    if (c == a || c == b)
      wl_raise(L, WL_EXIT_SCRIPT,
               "%s: c is the tensor given as %s: the library reads a and b while it writes c", fn,
               other);
    wl_raise(L, WL_EXIT_SCRIPT,
             "%s: c shares memory with %s (views of one tensor): the library reads a and b while "
             "it writes c",
             fn, other);
  }
  if (!supported(a->dtype))
    wl_raise(L, WL_EXIT_SCRIPT, "%s: a is a %s tensor; the GEMM takes f32, f64, f16 or bf16", fn,
             wl_dtype_info(a->dtype)->name);
  if (b->dtype != a->dtype || c->dtype != a->dtype)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: a, b and c must have one dtype, got %s, %s and %s", fn,
             wl_dtype_info(a->dtype)->name, wl_dtype_info(b->dtype)->name,
             wl_dtype_info(c->dtype)->name);
  g->dtype = dtype_field(L, arg, g, a->dtype);
  g->compute = compute_field(L, arg, g);
  g->transa = wl_bool_field(L, arg, "transa", fn, false);
  g->transb = wl_bool_field(L, arg, "transb", fn, false);
  g->m = whole_field(L, arg, g, "m", 1, 0);
  g->n = whole_field(L, arg, g, "n", 1, 0);
  g->k = whole_field(L, arg, g, "k", 1, 0);
  int arows = g->transa ? g->k : g->m, acols = g->transa ? g->m : g->k;
  int brows = g->transb ? g->n : g->k, bcols = g->transb ? g->k : g->n;
  g->lda = whole_field(L, arg, g, "lda", 1, (int)wl_tensor_default_ld(a, acols));
  g->ldb = whole_field(L, arg, g, "ldb", 1, (int)wl_tensor_default_ld(b, bcols));
  g->ldc = whole_field(L, arg, g, "ldc", 1, (int)wl_tensor_default_ld(c, g->n));
  wl_tensor_need_matrix(L, a, fn, "a", "lda", arows, acols, g->lda);
  wl_tensor_need_matrix(L, b, fn, "b", "ldb", brows, bcols, g->ldb);
  wl_tensor_need_matrix(L, c, fn, "c", "ldc", g->m, g->n, g->ldc);
  check_size(L, g, a, "a", g->transa ? "K x M: transa" : "M x K", arows, acols, g->lda);
  check_size(L, g, b, "b", g->transb ? "N x K: transb" : "K x N", brows, bcols, g->ldb);
  check_size(L, g, c, "c", "M x N", g->m, g->n, g->ldc);
  g->alpha = number_field(L, arg, g, "alpha", 1);
  g->beta = number_field(L, arg, g, "beta", 0);
  g->workspace = (size_t)whole_field(L, arg, g, "workspace", 0, DEFAULT_WORKSPACE);
  if (lua_getfield(L, arg, "stream") != LUA_TNIL && !wl_test_stream(L, -1))
    wl_raise(L, WL_EXIT_SCRIPT, "%s: stream must be a wl.stream, got %s", fn, value_text(L, -1));
  lua_pop(L, 1);
}

void wl_gemm_read_kind(lua_State *L, int arg, const char *fn, struct wl_gemm *g) {
  static const char *const known[] = {"dtype", "compute", NULL};
  memset(g, 0, sizeof *g);
  g->fn = fn;
  if (lua_type(L, arg) != LUA_TTABLE)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: expected a table {dtype =, compute =}, got %s", fn,
             luaL_typename(L, arg));
  wl_check_fields(L, arg, fn, known, false);
  lua_getfield(L, arg, "dtype");
  const char *name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
  if (!name || !wl_dtype_named(name, &g->dtype) || !supported(g->dtype))
    wl_raise(L, WL_EXIT_SCRIPT, "%s: dtype must be f32, f64, f16 or bf16, got %s", fn,
             lua_isnil(L, -1) ? "nothing" : value_text(L, -1));
  lua_pop(L, 1);
  g->compute = compute_field(L, arg, g);
}

const char *wl_gemm_params(enum wl_dtype dtype) {
  switch (dtype) {
  case WL_F64: return "const double* A, const double* B, double* C";
  case WL_F16: return "const __half* A, const __half* B, __half* C";
  case WL_BF16: return "const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C";
  default: return "const float* A, const float* B, float* C";
  }
}

void wl_gemm_name(const struct wl_gemm *g, const char *lib, char *buf, size_t len) {
  snprintf(buf, len, "%s %s %s %dx%dx%d%s%s", lib, wl_dtype_info(g->dtype)->name,
           compute_name(g->compute), g->m, g->n, g->k, g->transa ? " transa" : "",
           g->transb ? " transb" : "");
}

cudaDataType_t wl_gemm_data_type(enum wl_dtype dtype) {
  switch (dtype) {
  case WL_F64: return CUDA_R_64F;
  case WL_F16: return CUDA_R_16F;
  case WL_BF16: return CUDA_R_16BF;
  default: return CUDA_R_32F;
  }
}

cublasComputeType_t wl_gemm_compute_type(enum wl_gemm_compute compute) {
  switch (compute) {
  case WL_GEMM_TF32: return CUBLAS_COMPUTE_32F_FAST_TF32;
  case WL_GEMM_FP16: return CUBLAS_COMPUTE_16F;
  case WL_GEMM_FP64: return CUBLAS_COMPUTE_64F;
  default: return CUBLAS_COMPUTE_32F;
  }
}

cudaDataType_t wl_gemm_scale_type(enum wl_gemm_compute compute) {
  return compute == WL_GEMM_FP16 ? CUDA_R_16F : compute == WL_GEMM_FP64 ? CUDA_R_64F : CUDA_R_32F;
}

static union wl_gemm_scale scale(enum wl_gemm_compute compute, double v) {
  union wl_gemm_scale s;
  memset(&s, 0, sizeof s);
  if (compute == WL_GEMM_FP16) s.h = wl_f32_to_f16((float)v);
  else if (compute == WL_GEMM_FP64) s.d = v;
  else s.f = (float)v;
  return s;
}

void wl_gemm_scales(const struct wl_gemm *g, union wl_gemm_scale *alpha,
                    union wl_gemm_scale *beta) {
  *alpha = scale(g->compute, g->alpha);
  *beta = scale(g->compute, g->beta);
}

void wl_gemm_push_work(lua_State *L, int arg, const struct wl_gemm *g, const char *lib,
                       const struct wl_host_work *host) {
  char name[160];
  wl_gemm_name(g, lib, name, sizeof name);
  wl_push_host_kernel(L, name, wl_gemm_params(g->dtype), host);
  int kernel = lua_gettop(L);
  lua_createtable(L, 0, 2);
  lua_createtable(L, 3, 0);
  static const char *const tensors[] = {"a", "b", "c"};
  for (int i = 0; i < 3; i++) {
    lua_getfield(L, arg, tensors[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "args");
  lua_getfield(L, arg, "stream");
  lua_setfield(L, -2, "stream");
  wl_bind_sealed(L, kernel, kernel + 1);
  lua_replace(L, kernel);
  lua_settop(L, kernel);
}

void wl_gemm_library_missing(lua_State *L, const char *fn, const char *why,
                             enum wl_lib_failure failure, bool *warned) {
  if (!wl_backend->no_device || failure != WL_LIB_NOT_FOUND)
    wl_raise(L, WL_EXIT_NO_DEVICE, "%s: %s", fn, why);
  if (!*warned)
    wl_warn(L, "%s: %s: on a GPU this work needs the library; checked here without it", fn, why);
  *warned = true;
}

void *wl_gemm_workspace(lua_State *L, const struct wl_gemm *g) {
  void *p = NULL;
  if (g->workspace == 0) return NULL;
  WL_WATCH_ALLOC(); /* made inside a timed body: the measurement engine warns, as for a tensor */
  if (wl_backend->no_device) return NULL;
  char what[96];
  snprintf(what, sizeof what, "%s: allocating its workspace of %zu bytes", g->fn, g->workspace);
  WL_CUDA(L, wl_backend->alloc(&p, g->workspace), what);
  return p;
}

void wl_gemm_workspace_free(void *workspace) {
  if (workspace) (void)wl_backend->release(workspace); /* freeing a kernel object reports nothing */
}

int wl_gemm_push_library(lua_State *L, const char *path, lua_Integer version, const char *why) {
  if (!path) {
    lua_pushnil(L);
    lua_pushstring(L, why);
    return 2;
  }
  lua_createtable(L, 0, 2);
  lua_pushstring(L, path);
  lua_setfield(L, -2, "path");
  lua_pushinteger(L, version);
  lua_setfield(L, -2, "version");
  return 1;
}
