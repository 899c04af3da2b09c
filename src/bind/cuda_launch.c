/* Bound launches: k:bind{grid, block, smem, stream, args} checks the arguments against the
 * kernel's parameters once, packs them, and gives a launch that Lua can call and that the C
 * host can queue in a loop without returning to Lua. The launch holds its kernel, stream and
 * tensors (alive, in its uservalue) and checks each time it is called that none was freed or
 * destroyed since (wl_bound_check). */
#include "cuda_kernel.h"
#include "cuda_launch.h"
#include "cuda_stream.h"
#include "cuda_tensor.h"
#include "laux.h"
#include "launch_args.h"
#include "wl_exit.h"
#include "wl_modules.h"

#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define BOUND_MT "wlrun.bound_launch"

struct wl_bound {
  struct wl_kernel *kernel; /* kept alive by the uservalue */
  dim3 grid, block;
  size_t smem;
  struct wl_stream *stream; /* bound stream, kept alive by the uservalue; NULL: the current one */
  bool prepared;            /* loaded and checked on the device */
  int nargs, ntensors;
  void *argv[WL_MAX_PARAMS];
  struct wl_tensor *tensors[WL_MAX_PARAMS]; /* kept alive by the uservalue */
  int tensor_arg[WL_MAX_PARAMS];            /* its argument index (1-based) */
  bool tensor_input[WL_MAX_PARAMS];         /* passed to a const T* parameter: read, not written */
  unsigned char *storage;                   /* the packed argument values (inside this userdata) */
};

struct wl_bound *wl_test_bound(lua_State *L, int arg) {
  return luaL_testudata(L, arg, BOUND_MT);
}

/* ---- geometry ---- */

/* a field's value in an error: numbers, booleans and wlrun objects as they print, strings
 * quoted, other values by their type */
static const char *got(lua_State *L, int idx) {
  switch (lua_type(L, idx)) {
  case LUA_TSTRING: return lua_pushfstring(L, "'%s'", lua_tostring(L, idx));
  case LUA_TNUMBER:
  case LUA_TBOOLEAN: return luaL_tolstring(L, idx, NULL);
  case LUA_TUSERDATA:
    if (luaL_getmetafield(L, idx, "__tostring") != LUA_TNIL) {
      lua_pop(L, 1);
      return luaL_tolstring(L, idx, NULL);
    }
  /* fall through */
  default: return luaL_typename(L, idx);
  }
}

static dim3 read_dim3(lua_State *L, int spec, const char *field, bool block) {
  dim3 d = {1, 1, 1};
  unsigned *v[3] = {&d.x, &d.y, &d.z};
  int t = lua_getfield(L, spec, field);
  int n = t == LUA_TTABLE ? (int)luaL_len(L, -1) : 1;
  if (t == LUA_TNIL) wl_raise(L, WL_EXIT_SCRIPT, "bind: '%s' is required", field);
  if ((t != LUA_TTABLE && t != LUA_TNUMBER) || n < 1 || n > 3)
    wl_raise(L, WL_EXIT_SCRIPT, "bind: %s must be a number or a list of 1 to 3 numbers, got %s",
             field, got(L, -1));
  static const double grid_max[3] = {2147483647.0, 65535, 65535}, block_max[3] = {1024, 1024, 64};
  for (int i = 0; i < n; i++) {
    if (t == LUA_TTABLE) lua_geti(L, -1, i + 1);
    else lua_pushvalue(L, -1);
    int isint;
    lua_Integer x = lua_tointegerx(L, -1, &isint);
    double max = block ? block_max[i] : grid_max[i];
    if (!isint || x < 1 || (double)x > max)
      wl_raise(L, WL_EXIT_SCRIPT, "bind: %s.%c must be a whole number from 1 to %.0f, got %s",
               field, "xyz"[i], max, got(L, -1));
    *v[i] = (unsigned)x;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (block && (unsigned long)d.x * d.y * d.z > 1024)
    wl_raise(L, WL_EXIT_SCRIPT, "bind: block of %ux%ux%u = %lu threads; at most 1024", d.x, d.y,
             d.z, (unsigned long)d.x * d.y * d.z);
  return d;
}

/* host work has no geometry: grid, block and smem given to it are refused */
static void refuse_geometry(lua_State *L, int spec, const struct wl_kernel *k) {
  static const char *const fields[] = {"grid", "block", "smem"};
  for (int i = 0; i < 3; i++) {
    if (lua_getfield(L, spec, fields[i]) != LUA_TNIL)
      wl_raise(L, WL_EXIT_SCRIPT,
               "bind: '%s' does not apply to host work ('%s' is a function that queues its own GPU "
               "work): leave it out",
               fields[i], k->name);
    lua_pop(L, 1);
  }
}

/* the spec's smem and stream into b (the stream kept alive in refs) */
static void read_smem_stream(lua_State *L, int spec, int refs, struct wl_bound *b) {
  int isint = 1;
  lua_Integer smem = lua_getfield(L, spec, "smem") == LUA_TNIL ? 0 : lua_tointegerx(L, -1, &isint);
  if (!isint || smem < 0 || smem > (1 << 30))
    wl_raise(L, WL_EXIT_SCRIPT, "bind: smem must be a whole number of bytes from 0 to %d, got %s",
             1 << 30, got(L, -1));
  b->smem = (size_t)smem;
  lua_pop(L, 1);
  if (lua_getfield(L, spec, "stream") != LUA_TNIL) {
    b->stream = wl_test_stream(L, -1);
    if (!b->stream)
      wl_raise(L, WL_EXIT_SCRIPT, "bind: stream must be a wl.stream, got %s",
               lua_type(L, -1) == LUA_TUSERDATA ? got(L, -1) : luaL_typename(L, -1));
    if (!wl_stream_get(L, b->stream))
      wl_raise(L, WL_EXIT_SCRIPT, "bind: stream used after destroy");
    lua_setfield(L, refs, "stream");
  } else {
    lua_pop(L, 1);
  }
}

struct wl_bound *wl_bind(lua_State *L, int kernel, int spec) {
  static const char *const known[] = {"grid", "block", "smem", "stream", "args", NULL};
  kernel = lua_absindex(L, kernel);
  spec = lua_absindex(L, spec);
  struct wl_kernel *k = wl_check_kernel(L, kernel, "kernel:bind");
  if (lua_type(L, spec) != LUA_TTABLE)
    wl_raise(L, WL_EXIT_SCRIPT, "bind: expected a table {%sstream =, args =}, got %s",
             k->host.call ? "" : "grid =, block =, smem =, ", luaL_typename(L, spec));
  wl_check_fields(L, spec, "bind", known, false);
  if (k->host.sealed)
    wl_raise(L, WL_EXIT_SCRIPT,
             "bind: '%s' was bound by what made it, to the tensors its sizes were checked "
             "against: make another one for other tensors",
             k->name);
  size_t storage_size = 0;
  for (int i = 0; i < k->sig.nparams; i++) storage_size += k->sig.params[i].size + 16;
  struct wl_bound *b = lua_newuserdatauv(L, sizeof *b + storage_size, 1);
  int bound = lua_gettop(L);
  memset(b, 0, sizeof *b);
  b->storage = (unsigned char *)(b + 1);
  b->kernel = k;
  luaL_setmetatable(L, BOUND_MT);
  lua_createtable(L, 4, 2); /* references kept alive by the launch */
  int refs = lua_gettop(L);
  lua_pushvalue(L, kernel);
  lua_setfield(L, refs, "kernel");

  if (k->host.call) {
    refuse_geometry(L, spec, k);
    b->grid = b->block = (dim3){1, 1, 1};
  } else {
    b->grid = read_dim3(L, spec, "grid", false);
    b->block = read_dim3(L, spec, "block", true);
  }
  read_smem_stream(L, spec, refs, b);
  if (lua_getfield(L, spec, "args") != LUA_TTABLE) {
    if (!lua_isnil(L, -1))
      wl_raise(L, WL_EXIT_SCRIPT, "bind: args must be a list, got %s", luaL_typename(L, -1));
    lua_pop(L, 1);
    lua_newtable(L);
  }
  int args = lua_gettop(L);
  lua_Integer nargs = luaL_len(L, args);
  if (nargs != k->sig.nparams)
    wl_raise(L, WL_EXIT_SCRIPT, "%s '%s' takes %d argument%s, bind gave %d",
             k->host.call ? "host work" : "kernel", k->name, k->sig.nparams,
             k->sig.nparams == 1 ? "" : "s", (int)nargs);
  size_t offset = 0;
  for (int i = 0; i < k->sig.nparams; i++) {
    const struct wl_param *p = &k->sig.params[i];
    struct wl_arg_ctx c = {L, k, i + 1, p};
    unsigned align = p->align ? p->align : 1;
    offset = (offset + align - 1) / align * align;
    lua_geti(L, args, i + 1);
    bool input;
    struct wl_tensor *t = wl_pack_arg(&c, lua_gettop(L), b->storage + offset, &input);
    if (t) {
      b->tensors[b->ntensors] = t;
      b->tensor_arg[b->ntensors] = i + 1;
      b->tensor_input[b->ntensors++] = input;
    }
    if (wl_test_tensor(L, -1)) lua_rawseti(L, refs, i + 1); /* keep the tensor alive */
    else lua_pop(L, 1);
    b->argv[i] = b->storage + offset;
    offset += p->size;
  }
  b->nargs = k->sig.nparams;
  lua_pop(L, 1); /* args */
  lua_setiuservalue(L, bound, 1);
  return b;
}

struct wl_bound *wl_bind_sealed(lua_State *L, int kernel, int spec) {
  struct wl_bound *b = wl_bind(L, kernel, spec);
  b->kernel->host.sealed = true;
  return b;
}

/* k:bind{grid=, block=, smem=0, stream=, args={...}}; host work: k:bind{stream=, args={...}} */
static int kernel_bind(lua_State *L) {
  lua_settop(L, 2);
  wl_bind(L, 1, 2);
  return 1;
}

/* ---- launching ---- */

static void prepare(lua_State *L, struct wl_bound *b) {
  struct wl_kernel *k = b->kernel;
  if (k->host.call) { /* no module to load: the device is all it needs */
    wl_device_ready(L);
    b->prepared = true;
    return;
  }
  wl_kernel_load(L, k);
  unsigned threads = b->block.x * b->block.y * b->block.z;
  if ((int)threads > k->attr.maxThreadsPerBlock)
    wl_raise(L, WL_EXIT_CUDA,
             "launching kernel '%s' (grid %ux%ux%u, block %ux%ux%u): a block of %u threads, but it "
             "can run at most %d per block (%d registers per thread)",
             k->name, b->grid.x, b->grid.y, b->grid.z, b->block.x, b->block.y, b->block.z, threads,
             k->attr.maxThreadsPerBlock, k->attr.numRegs);
  if (b->smem > 48 * 1024 && (int)b->smem > k->dynamic_smem_set) {
    int optin;
    WL_CUDA(
        L,
        wl_backend->attribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, wl_device_index()),
        "shared memory limit");
    if (b->smem + k->attr.sharedSizeBytes > (size_t)optin)
      wl_raise(L, WL_EXIT_CUDA,
               "launching kernel '%s' (grid %ux%ux%u, block %ux%ux%u): %zu bytes of dynamic shared "
               "memory + %zu static exceed the device's %d per block",
               k->name, b->grid.x, b->grid.y, b->grid.z, b->block.x, b->block.y, b->block.z,
               b->smem, k->attr.sharedSizeBytes, optin);
    WL_CUDA(L, wl_backend->kernel_max_dynamic_smem(k->handle, (int)b->smem),
            "allowing more than 48 KiB of dynamic shared memory");
    k->dynamic_smem_set = (int)b->smem;
  }
  b->prepared = true;
}

void wl_bound_check_alive(lua_State *L, const struct wl_bound *b, const char *fn) {
  if (!b->kernel->name) wl_raise(L, WL_EXIT_SCRIPT, "%s: kernel used after free", fn);
  for (int i = 0; i < b->ntensors; i++)
    if (!b->tensors[i]->data)
      wl_raise(L, WL_EXIT_SCRIPT,
               "%s: kernel '%s': the tensor bound to argument %d used after free", fn,
               b->kernel->name, b->tensor_arg[i]);
}

cudaStream_t wl_bound_check(lua_State *L, struct wl_bound *b, const char *fn) {
  wl_bound_check_alive(L, b, fn);
  cudaStream_t s = b->stream ? wl_stream_get(L, b->stream) : wl_current_stream(L);
  if (!s)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: kernel '%s': the stream bound to it used after destroy", fn,
             b->kernel->name);
  if (!b->prepared || (!b->kernel->handle && !b->kernel->host.call)) prepare(L, b);
  return s;
}

/* Host work: n calls of its function (none under --compile-only: the backend counts them), each
 * checked: its answer, and the CUDA error that a launch inside it left. */
static void enqueue_host(lua_State *L, struct wl_bound *b, cudaStream_t stream, long n) {
  const struct wl_kernel *k = b->kernel;
  if (!k->host.capturable && wl_capturing())
    wl_raise(L, WL_EXIT_SCRIPT,
             "host work '%s' (%s) cannot be captured in a CUDA graph (it does more than queue work "
             "on its stream): "
             "time it in batch, cold or host mode",
             k->name, k->host.kind);
  for (long i = 0; i < n; i++) {
    if (wl_stop_pending()) wl_stop_check(L);
    char why[512];
    why[0] = '\0'; /* not the whole buffer: this is the hot path of batch mode */
    cudaError_t after = cudaSuccess;
    int rc =
        wl_backend->host_call(k->host.call, k->host.ctx, b->argv, stream, why, sizeof why, &after);
    if (rc != 0) {
      wl_backend->clear_error(); /* what the call left is reported here, not by the next call */
      wl_raise(L, WL_EXIT_CUDA, "host work '%s' (%s) failed: %s", k->name, k->host.kind,
               why[0] ? why : "no reason given");
    }
    if (after != cudaSuccess)
      wl_raise(L, wl_cuda_is_no_device(after) ? WL_EXIT_NO_DEVICE : WL_EXIT_CUDA,
               "host work '%s' (%s): a CUDA error after its call: %s: %s", k->name, k->host.kind,
               cudaGetErrorName(after), cudaGetErrorString(after));
  }
}

void wl_bound_enqueue(lua_State *L, struct wl_bound *b, cudaStream_t stream, long n) {
  if (b->kernel->host.call) {
    enqueue_host(L, b, stream, n);
    return;
  }
  cudaError_t (*launch)(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t) =
      wl_backend->launch;
  cudaKernel_t fn = b->kernel->handle;
  for (long i = 0; i < n; i++) {
    if (wl_stop_pending())
      wl_stop_check(L); /* Ctrl-C: one load per launch, a launch costs microseconds */
    cudaError_t err = launch(fn, b->grid, b->block, b->argv, b->smem, stream);
    if (err != cudaSuccess) {
      wl_backend->clear_error();
      wl_raise(L, wl_cuda_is_no_device(err) ? WL_EXIT_NO_DEVICE : WL_EXIT_CUDA,
               "launching kernel '%s' (grid %ux%ux%u, block %ux%ux%u, %zu bytes shared): %s: %s",
               b->kernel->name, b->grid.x, b->grid.y, b->grid.z, b->block.x, b->block.y, b->block.z,
               b->smem, cudaGetErrorName(err), cudaGetErrorString(err));
    }
  }
}

/* b() or b:launch([n [, stream]]): queue one (or n) launches, on the bound stream, else on the
 * stream given, else on the current one. The hot path of launches from a Lua loop: the type
 * check compares the metatable with the upvalue instead of looking its name up in the
 * registry. */
static int bound_call(lua_State *L) {
  struct wl_bound *b = lua_touserdata(L, 1);
  if (!b || !lua_getmetatable(L, 1) || !lua_rawequal(L, -1, lua_upvalueindex(1)))
    return wl_type_error(L, 1, BOUND_MT);
  lua_pop(L, 1);
  cudaStream_t s = wl_bound_check(L, b, "launch");
  lua_Integer n = lua_gettop(L) == 1 ? 1 : wl_opt_integer(L, 2, 1);
  wl_arg_check(L, n >= 0, 2, "launch count >= 0 expected");
  if (!b->stream && !lua_isnoneornil(L, 3)) s = wl_opt_stream(L, 3, "launch(n, stream)");
  if (wl_capturing()) wl_capture_hold(L, 1); /* a wl.graph keeps it, and checks it at replay */
  wl_bound_enqueue(L, b, s, (long)n);
  return 0;
}

static int bound_index(lua_State *L) {
  struct wl_bound *b = wl_check_udata(L, 1, BOUND_MT); /* fields stay readable */
  const char *f = wl_check_string(L, 2);
  if (strcmp(f, "launch") == 0) lua_getfield(L, lua_upvalueindex(1), "__call");
  else if (strcmp(f, "kernel") == 0) {
    lua_getiuservalue(L, 1, 1);
    lua_getfield(L, -1, "kernel");
  } else if (b->kernel->host.call &&
             (strcmp(f, "grid") == 0 || strcmp(f, "block") == 0 || strcmp(f, "smem") == 0)) {
    lua_pushnil(L); /* host work has no geometry */
  } else if (strcmp(f, "grid") == 0 || strcmp(f, "block") == 0) {
    dim3 d = f[0] == 'g' ? b->grid : b->block;
    lua_createtable(L, 3, 0);
    lua_pushinteger(L, d.x);
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, d.y);
    lua_rawseti(L, -2, 2);
    lua_pushinteger(L, d.z);
    lua_rawseti(L, -2, 3);
  } else if (strcmp(f, "smem") == 0) lua_pushinteger(L, (lua_Integer)b->smem);
  else if (strcmp(f, "tensors") == 0) { /* {{tensor =, arg =, input = bool}, ...} */
    lua_getiuservalue(L, 1, 1);
    lua_createtable(L, b->ntensors, 0);
    for (int i = 0; i < b->ntensors; i++) {
      lua_createtable(L, 0, 3);
      lua_rawgeti(L, -3, b->tensor_arg[i]);
      lua_setfield(L, -2, "tensor");
      lua_pushinteger(L, b->tensor_arg[i]);
      lua_setfield(L, -2, "arg");
      lua_pushboolean(L, b->tensor_input[i]);
      lua_setfield(L, -2, "input");
      lua_rawseti(L, -2, i + 1);
    }
  } else lua_pushnil(L);
  return 1;
}

static int bound_tostring(lua_State *L) {
  struct wl_bound *b = wl_check_udata(L, 1, BOUND_MT);
  if (b->kernel->host.call) {
    lua_pushfstring(L, "call of host work %s", b->kernel->name ? b->kernel->name : "(freed)");
    return 1;
  }
  lua_pushfstring(L, "launch of %s <<<(%d,%d,%d), (%d,%d,%d), %d>>>",
                  b->kernel->name ? b->kernel->name : "(freed kernel)", (int)b->grid.x,
                  (int)b->grid.y, (int)b->grid.z, (int)b->block.x, (int)b->block.y, (int)b->block.z,
                  (int)b->smem);
  return 1;
}

/* core.is_launch(v) -> true for a bound launch */
static int l_is_launch(lua_State *L) {
  lua_pushboolean(L, wl_test_bound(L, 1) != NULL);
  return 1;
}

/* core.launch_capturable(v) -> true for a bound launch that a CUDA graph may capture (a kernel,
 * or host work that only queues work on its stream) */
static int l_launch_capturable(lua_State *L) {
  struct wl_bound *b = wl_test_bound(L, 1);
  lua_pushboolean(L, b && (!b->kernel->host.call || b->kernel->host.capturable));
  return 1;
}

void wl_open_launch(lua_State *L) {
  lua_pushcfunction(L, l_is_launch);
  lua_setfield(L, -2, "is_launch");
  lua_pushcfunction(L, l_launch_capturable);
  lua_setfield(L, -2, "launch_capturable");
  luaL_getmetatable(L, KERNEL_MT); /* k:bind, a method of kernels */
  lua_getfield(L, -1, "methods");
  lua_pushcfunction(L, kernel_bind);
  lua_setfield(L, -2, "bind");
  lua_pop(L, 2);
  static const luaL_Reg meta[] = {{"__call", bound_call},
                                  {"__index", bound_index},
                                  {"__tostring", bound_tostring},
                                  {NULL, NULL}};
  luaL_newmetatable(L, BOUND_MT);
  lua_pushvalue(L, -1);
  luaL_setfuncs(L, meta, 1); /* the metatable is every metamethod's upvalue */
  lua_pop(L, 1);
}
