/* Kernels for Lua: wl.source(path), wl.kernel{...} compiled with NVRTC through the on-disk
 * cache, attributes, occupancy, and wl.compile_stats(). Compiling needs no device; loading goes
 * through the device backend. */
#include "cuda_kernel.h"
#include "kernel_source.h"
#include "kernel_module.h"
#include "laux.h"
#include "lua_guard.h"
#include "kernel_compile.h"
#include "nvcc_run.h"
#include "nvrtc_load.h"
#include "settings.h"
#include "wl_exit.h"
#include "wl_modules.h"

#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- paths relative to the calling script ---- */

/* Pushes path resolved against the directory of the Lua code at stack level `level` (1: the caller
 * of the C function); absolute paths and chunks without a file are left alone. */
static const char *push_relative_at(lua_State *L, const char *path, int level) {
  lua_Debug ar;
  if (path[0] != '/' && lua_getstack(L, level, &ar) && lua_getinfo(L, "S", &ar) &&
      ar.source[0] == '@') {
    const char *file = ar.source + 1, *slash = strrchr(file, '/');
    if (slash)
      return lua_pushfstring(L, "%s/%s", lua_pushlstring(L, file, (size_t)(slash - file)), path);
  }
  return lua_pushstring(L, path);
}

static const char *push_script_relative(lua_State *L, const char *path) {
  return push_relative_at(L, path, 1);
}

const char *wl_push_script_relative(lua_State *L, const char *path) {
  return push_script_relative(L, path);
}

/* Pushes {kind = "source", path = path, code = text}; raises an io error when unreadable, as
 * wl.kernel 'KERNEL's where kernel is given. */
static void push_source(lua_State *L, const char *path, const char *kernel) {
  size_t len;
  const char *why = "";
  char *code = wl_read_source_file(path, &len, &why);
  if (!code && kernel)
    wl_raise(L, WL_EXIT_IO, "wl.kernel '%s': cannot read %s: %s", kernel, path, why);
  if (!code) wl_raise(L, WL_EXIT_IO, "cannot read kernel source %s: %s", path, why);
  lua_createtable(L, 0, 3);
  lua_pushliteral(L, "source");
  lua_setfield(L, -2, "kind");
  lua_pushstring(L, path);
  lua_setfield(L, -2, "path");
  lua_pushlstring(L, code, len);
  free(code);
  lua_setfield(L, -2, "code");
}

/* wl.source(path) -> {kind = "source", path = resolved, code = text}; path relative to the script
 */
static int l_source(lua_State *L) {
  push_source(L, push_script_relative(L, wl_check_string(L, 1)), NULL);
  return 1;
}

/* ---- compilation ---- */

/* the --arch / [compile] arch setting into buf: whether it is set */
static bool arch_setting(char *buf, size_t len) {
  const struct wl_setting *s = wl_setting_find("compile", "arch");
  if (s->set) snprintf(buf, len, "%.16s", s->text); /* validated: sm_ and at most 4 more */
  return s->set;
}

/* device dev's architecture ("sm_90") into buf; needs the driver, not a context */
static cudaError_t device_arch(int dev, char *buf, size_t len) {
  int major = 0, minor = 0;
  cudaError_t err = wl_backend->attribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  if (err == cudaSuccess)
    err = wl_backend->attribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  if (err == cudaSuccess) snprintf(buf, len, "sm_%d%d", major, minor);
  return err;
}

static const char *target_arch(lua_State *L, char *buf, size_t len) {
  if (arch_setting(buf, len)) return buf;
  int n = 0;
  if (wl_backend->no_device)
    wl_raise(L, WL_EXIT_USAGE,
             "%s uses no device to take the target architecture from: give one with "
             "--arch sm_90 (or [compile] arch in wlrun.ini)",
             wl_backend->no_device);
  if (wl_backend->device_count(&n) != cudaSuccess || n == 0) {
    wl_backend->clear_error();
    wl_raise(L, WL_EXIT_NO_DEVICE,
             "no CUDA device to take the target architecture from: give one with --arch sm_90 "
             "(or [compile] arch in wlrun.ini)");
  }
  wl_device_ready(L);
  WL_CUDA(L, device_arch(wl_device_index(), buf, len), "compute capability");
  return buf;
}

/* The target for kernels compiled ahead, before the CUDA context is made: the setting, else the
 * device's (the one the run will use), asked of the driver; false where neither is known (the
 * run's own wl.kernel then says why). */
static bool ahead_arch(char *buf, size_t len) {
  if (arch_setting(buf, len)) return true;
  int n = 0, dev = wl_device_wanted();
  if (!wl_backend->no_device && wl_backend->device_count(&n) == cudaSuccess && dev < n &&
      device_arch(dev, buf, len) == cudaSuccess)
    return true;
  if (!wl_backend->no_device) wl_backend->clear_error();
  return false;
}

/* the one close path: __gc, __close */
static cudaError_t kernel_close(struct wl_kernel *k) {
  cudaError_t err = k->library ? wl_backend->library_unload(k->library) : cudaSuccess;
  k->library = NULL;
  k->handle = NULL;
  if (k->host.release) k->host.release(k->host.ctx); /* host work (host_kernel.c): once */
  k->host.release = NULL;
  k->host.ctx = NULL;
  free(k->name);
  free(k->source);
  k->name = k->source = NULL;
  wl_compiled_free(&k->code);
  return err;
}

static int kernel_gc(lua_State *L) {
  (void)kernel_close(wl_check_udata(L, 1, KERNEL_MT)); /* nothing can be raised from __gc */
  return 0;
}

struct wl_kernel *wl_check_kernel(lua_State *L, int arg, const char *fn) {
  struct wl_kernel *k = wl_check_udata(L, arg, KERNEL_MT);
  if (!k->name) wl_closed_error(L, arg, fn, "kernel", "free");
  return k;
}

/* every kernel made in this run, for the --compile-only report: registry list of tables */
#define COMPILED_KEY "wlrun.compiled_kernels"

void wl_kernel_record(lua_State *L, const struct wl_kernel *k) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, COMPILED_KEY) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, COMPILED_KEY);
  }
  lua_createtable(L, 0, 5);
  lua_pushstring(L, k->name);
  lua_setfield(L, -2, "name");
  lua_pushstring(L, k->source);
  lua_setfield(L, -2, "source");
  lua_pushstring(L, k->arch);
  lua_setfield(L, -2, "arch");
  lua_pushboolean(L, k->from_cache);
  lua_setfield(L, -2, "from_cache");
  lua_pushinteger(L, k->sig.nparams);
  lua_setfield(L, -2, "nparams");
  lua_pushstring(L, k->compiler);
  lua_setfield(L, -2, "compiler");
  lua_pushstring(L, k->compiler_version);
  lua_setfield(L, -2, "compiler_version");
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  lua_pop(L, 1);
}

/* wl.compiled_kernels() -> {{name, source, arch, from_cache, nparams, compiler, compiler_version},
 * ...} in order */
static int l_compiled_kernels(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, COMPILED_KEY) != LUA_TTABLE) lua_newtable(L);
  return 1;
}

/* ---- wl.kernel ---- */

/* Checks wl.kernel's table (argument 1, the only one left) and its fields; pushes the kernel's
 * name (stack index 2) and returns it. */
static const char *kernel_name(lua_State *L) {
  static const char *const known[] = {"name", "defines", "options", "compiler",
                                      "file", "format",  "params",  NULL};
  wl_check_type(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  wl_check_fields(L, 1, "wl.kernel", known, true);
  if (lua_getfield(L, 1, "name") != LUA_TSTRING || lua_rawlen(L, -1) == 0)
    wl_raise(L, WL_EXIT_SCRIPT, "wl.kernel: 'name' (the kernel's name) is required");
  return lua_tostring(L, -1);
}

/* a kernel's code and the file it was read from (NULL for a string), Lua strings on the stack */
struct kernel_code {
  const char *code, *path;
  size_t len;
};

/* the code and path of the wl.source table on the top of the stack (pushed) */
static void source_code(lua_State *L, struct kernel_code *c) {
  lua_getfield(L, -1, "code");
  lua_getfield(L, -2, "path");
  c->code = lua_tolstring(L, -2, &c->len);
  c->path = lua_tostring(L, -1);
}

/* whether file = path names precompiled code: by its extension, or by a format = given */
static bool is_module_file(lua_State *L, const char *file) {
  if (wl_module_format_of_path(file) != WL_MODULE_UNKNOWN) return true;
  bool module = lua_getfield(L, 1, "format") != LUA_TNIL;
  lua_pop(L, 1);
  return module;
}

/* wl.kernel{file = "k.cubin" | "k.fatbin" | "k.ptx"}: nvcc's code as a kernel object
 * (cuda_module.c), with none of the fields of code compiled from source */
static int kernel_from_module_file(lua_State *L, const char *name, const char *file) {
  for (const char *const *f = (const char *const[]){"defines", "options", "compiler", NULL}; *f;
       f++)
    if (lua_getfield(L, 1, *f) != LUA_TNIL)
      return wl_raise(L, WL_EXIT_SCRIPT,
                      "wl.kernel '%s': %s is for code compiled from source; %s is compiled already "
                      "(give them to nvcc when you build it)",
                      name, *f, file);
    else lua_pop(L, 1);
  size_t len;
  push_source(L, file, name);
  lua_getfield(L, -1, "code");
  const char *data = lua_tolstring(L, -1, &len);
  char arch[32];
  target_arch(L, arch, sizeof arch);
  struct wl_kernel *k = lua_newuserdatauv(L, sizeof *k, 1);
  int k_index = lua_gettop(L);
  memset(k, 0, sizeof *k);
  luaL_setmetatable(L, KERNEL_MT);
  wl_kernel_from_module(L, 1, k, name, file, data, len, arch);
  wl_kernel_record(L, k);
  lua_pushvalue(L, k_index);
  return 1;
}

/* The name of a kernel whose name holds what NVRTC must not see (it pastes the name into the
 * program it compiles: text must not become code) is refused. */
static void check_kernel_name(lua_State *L, const char *name) {
  size_t name_len, at;
  lua_tolstring(L, 2, &name_len);
  const char *name_problem = wl_kernel_name_problem(name, name_len, &at);
  if (!name_problem) return;
  luaL_Buffer b; /* the name shown with its control characters as \xHH: one line */
  luaL_buffinit(L, &b);
  for (size_t i = 0; i < name_len && i < 200; i++) {
    unsigned char ch = (unsigned char)name[i];
    char shown[5] = {(char)ch, '\0'};
    if (ch < 0x20 || ch == 0x7f) snprintf(shown, sizeof shown, "\\x%02X", ch);
    luaL_addstring(&b, shown);
  }
  luaL_pushresult(&b);
  wl_raise(L, WL_EXIT_SCRIPT,
           "wl.kernel: the name '%s%s' holds %s at byte %zu: a kernel's name is a C++ "
           "name, with its template arguments, and nothing else",
           lua_tostring(L, -1), name_len > 200 ? "..." : "", name_problem, at + 1);
}

/* Code compiled from source: some code, no NUL byte in it, a well-formed name, and none of the
 * fields of precompiled code. */
static void check_source_kernel(lua_State *L, const char *name, const struct kernel_code *c) {
  if (!c->code)
    wl_raise(L, WL_EXIT_SCRIPT,
             "wl.kernel '%s': give the code as a string, a wl.source(path), or file = path", name);
  if (strlen(c->code) !=
      c->len) /* NVRTC takes a C string: what follows a NUL byte would be dropped */
    wl_raise(L, WL_EXIT_SCRIPT, "wl.kernel '%s': the code%s%s holds a NUL byte at offset %zu", name,
             c->path ? " of " : "", c->path ? c->path : "", strlen(c->code));
  check_kernel_name(L, name);
  for (const char *const *f = (const char *const[]){"format", "params", NULL}; *f; f++)
    if (lua_getfield(L, 1, *f) != LUA_TNIL)
      wl_raise(L, WL_EXIT_SCRIPT,
               "wl.kernel '%s': %s is for precompiled code (file = \"k.cubin\", \"k.fatbin\" or "
               "\"k.ptx\")",
               name, *f);
    else lua_pop(L, 1);
}

/* The directory of the kernel's source file (its local headers), pushed; NULL for a string */
static const char *push_source_dir(lua_State *L, const struct kernel_code *c) {
  if (!c->path) return NULL;
  const char *slash = strrchr(c->path, '/');
  return slash ? lua_pushlstring(L, c->path, (size_t)(slash - c->path)) : lua_pushliteral(L, ".");
}

/* The kernel object of code compiled from source for the target architecture (through the
 * disk cache: wl_kernel_build), recorded for --compile-only's report; pushed. */
static int build_source_kernel(lua_State *L, const char *name, const struct kernel_code *c) {
  char arch[32];
  target_arch(L, arch, sizeof arch);
  const char *dir = push_source_dir(L, c); /* a Lua string on the stack */
  struct wl_kernel *k = lua_newuserdatauv(L, sizeof *k, 1);
  int k_index = lua_gettop(L);
  memset(k, 0, sizeof *k);
  luaL_setmetatable(L, KERNEL_MT);
  k->name = strdup(name);
  k->source = strdup(c->path ? c->path : "<string>");
  snprintf(k->arch, sizeof k->arch, "%s", arch);
  if (!k->name || !k->source) return wl_raise(L, WL_EXIT_SCRIPT, "out of memory");
  wl_kernel_build(L, 1, k, c->code, dir);
  wl_kernel_record(L, k);
  lua_pushvalue(L, k_index);
  return 1;
}

/* The code of wl.kernel's table (argument 1): [1] a wl.source or a string, or file = path (resolved
 * against the Lua code at stack level `level`), into c; for precompiled code (file = "k.cubin",
 * ...) the file's resolved path instead. Checks code compiled from source. */
static const char *kernel_code_of(lua_State *L, const char *name, int level,
                                  struct kernel_code *c) {
  if (lua_geti(L, 1, 1) == LUA_TTABLE) {
    source_code(L, c);
  } else if (lua_type(L, -1) == LUA_TSTRING) {
    c->code = lua_tolstring(L, -1, &c->len);
  } else if (lua_getfield(L, 1, "file") == LUA_TSTRING) {
    const char *file = push_relative_at(L, lua_tostring(L, -1), level);
    if (is_module_file(L, file)) return file;
    push_source(L, file, NULL);
    source_code(L, c);
  }
  check_source_kernel(L, name, c);
  return NULL;
}

/* wl.kernel{src_or_source, name = "k", defines = {...}, options = {...}, compiler = "nvrtc" |
 * "nvcc", file = "path.cu"}; or precompiled code: file = "k.cubin" | "k.fatbin" | "k.ptx" [, format
 * =, params =] (cuda_module.c) */
static int l_kernel(lua_State *L) {
  const char *name = kernel_name(L);
  struct kernel_code c = {0};
  const char *module = kernel_code_of(L, name, 1, &c);
  if (module) return kernel_from_module_file(L, name, module);
  return build_source_kernel(L, name, &c);
}

/* core.kernel_job(spec [, level]) -> job, arch | nil, for wl.prepare_kernels (compile_ahead.lua):
 * the table a process compiles spec's kernel from (code: a wl.source table or a string, file =
 * resolved against the Lua code at stack level `level`; name, defines, options, compiler as
 * given) and the target; nil for precompiled code, or where no target is known before the CUDA
 * context. Raises as wl.kernel does on a bad table. Needs no compiler. */
static int l_kernel_job(lua_State *L) {
  int level = (int)wl_opt_integer(L, 2, 1);
  wl_arg_check(L, level >= 1, 2, "a stack level expected");
  const char *name = kernel_name(L);
  struct kernel_code c = {0};
  char arch[32];
  if (kernel_code_of(L, name, level, &c) || !ahead_arch(arch, sizeof arch)) return 0;
  lua_createtable(L, 0, 5);
  if (c.path) {
    lua_createtable(L, 0, 3);
    lua_pushliteral(L, "source");
    lua_setfield(L, -2, "kind");
    lua_pushstring(L, c.path);
    lua_setfield(L, -2, "path");
    lua_pushlstring(L, c.code, c.len);
    lua_setfield(L, -2, "code");
  } else {
    lua_pushlstring(L, c.code, c.len);
  }
  lua_setfield(L, -2, "code");
  for (const char *const *f = (const char *const[]){"name", "defines", "options", "compiler", NULL};
       *f; f++) {
    lua_getfield(L, 1, *f);
    lua_setfield(L, -2, *f);
  }
  lua_pushstring(L, arch);
  return 2;
}

/* core.kernel_needed(spec) -> whether wl.kernel(spec) would compile: no cache entry yet, and not
 * asked about before in this process (wl_kernel_ahead) */
static int l_kernel_needed(lua_State *L) {
  const char *name = kernel_name(L);
  struct kernel_code c = {0};
  char arch[32];
  bool needed = !kernel_code_of(L, name, 1, &c) &&
                wl_kernel_ahead(L, 1, name, target_arch(L, arch, sizeof arch), c.code,
                                push_source_dir(L, &c));
  lua_pushboolean(L, needed);
  return 1;
}

/* core.kernel_ahead_markers(dir | nil, write): wl_kernel_ahead_markers */
static int l_kernel_ahead_markers(lua_State *L) {
  wl_kernel_ahead_markers(lua_isnoneornil(L, 1) ? NULL : wl_check_string(L, 1),
                          lua_toboolean(L, 2));
  return 0;
}

/* ---- loading and attributes ---- */

void wl_kernel_load(lua_State *L, struct wl_kernel *k) {
  if (k->handle) return;
  wl_device_ready(L);
  cudaError_t err = wl_backend->library_load(&k->library, k->code.cubin);
  if (err != cudaSuccess) {
    k->library = NULL;
    wl_backend->clear_error();
    wl_raise(L,
             err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidKernelImage
                 ? WL_EXIT_COMPILE
                 : WL_EXIT_CUDA,
             "loading kernel '%s' (compiled for %s): %s: %s", k->name, k->arch,
             cudaGetErrorName(err), cudaGetErrorString(err));
  }
  err = wl_backend->kernel_get(&k->handle, k->library, k->code.lowered);
  if (err == cudaSuccess) err = wl_backend->kernel_attributes(&k->attr, k->handle);
  if (err != cudaSuccess) {
    k->handle = NULL;
    wl_cuda_raise(L, err, "looking up the loaded kernel");
  }
}

static void set_int(lua_State *L, const char *f, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, f);
}

static void push_attributes(lua_State *L, struct wl_kernel *k) {
  wl_refuse_host_work(L, k, "k.attributes");
  wl_device_needed(L, "k.attributes");
  wl_kernel_load(L, k);
  lua_createtable(L, 0, 8);
  set_int(L, "registers", k->attr.numRegs);
  set_int(L, "static_shared_bytes", (lua_Integer)k->attr.sharedSizeBytes);
  set_int(L, "local_bytes", (lua_Integer)k->attr.localSizeBytes);
  set_int(L, "const_bytes", (lua_Integer)k->attr.constSizeBytes);
  set_int(L, "max_threads_per_block", k->attr.maxThreadsPerBlock);
  set_int(L, "max_dynamic_shared_bytes", k->attr.maxDynamicSharedSizeBytes);
  set_int(L, "ptx_version", k->attr.ptxVersion);
  set_int(L, "binary_version", k->attr.binaryVersion);
}

static void push_params(lua_State *L, const struct wl_kernel *k) {
  lua_createtable(L, k->sig.nparams, 0);
  for (int i = 0; i < k->sig.nparams; i++) {
    char ptx[32];
    lua_createtable(L, 0, 3);
    lua_pushstring(L, wl_ptx_describe(&k->sig.params[i], ptx, sizeof ptx));
    lua_setfield(L, -2, "ptx");
    if (k->sig.has_ctypes) {
      lua_pushstring(L, wl_ctype_describe(&k->sig.params[i]));
      lua_setfield(L, -2, "ctype");
    }
    set_int(L, "size", k->sig.params[i].size);
    lua_rawseti(L, -2, i + 1);
  }
}

/* k:occupancy(block [, dynamic_smem]) -> {blocks_per_sm, warps_per_sm, occupancy (0..1)} */
static int kernel_occupancy(lua_State *L) {
  struct wl_kernel *k = wl_check_kernel(L, 1, "kernel:occupancy");
  wl_refuse_host_work(L, k, "kernel:occupancy");
  lua_Integer block = wl_check_integer(L, 2), smem = wl_opt_integer(L, 3, 0);
  wl_arg_check(L, block >= 1 && block <= 1024, 2, "block size from 1 to 1024 expected");
  wl_arg_check(L, smem >= 0, 3, "shared memory bytes >= 0 expected");
  wl_device_needed(L, "kernel:occupancy");
  wl_kernel_load(L, k);
  int blocks = 0, dev = wl_device_index(), max_threads, warp;
  WL_CUDA(L, wl_backend->occupancy(&blocks, k->handle, (int)block, (size_t)smem),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  WL_CUDA(L, wl_backend->attribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, dev),
          "max threads per SM");
  WL_CUDA(L, wl_backend->attribute(&warp, cudaDevAttrWarpSize, dev), "warp size");
  lua_Integer warps = blocks * ((block + warp - 1) / warp);
  lua_createtable(L, 0, 3);
  set_int(L, "blocks_per_sm", blocks);
  set_int(L, "warps_per_sm", warps);
  lua_pushnumber(L, (double)warps / (max_threads / warp));
  lua_setfield(L, -2, "occupancy");
  return 1;
}

static int kernel_index(lua_State *L) {
  const char *f = wl_check_string(L, 2);
  struct wl_kernel *k = wl_check_kernel(L, 1, lua_pushfstring(L, "kernel.%s", f));
  if (strcmp(f, "name") == 0) lua_pushstring(L, k->name);
  else if (strcmp(f, "lowered_name") == 0) lua_pushstring(L, k->code.lowered);
  else if (strcmp(f, "source") == 0) lua_pushstring(L, k->source);
  else if (strcmp(f, "arch") == 0) lua_pushstring(L, k->arch);
  else if (strcmp(f, "from_cache") == 0) lua_pushboolean(L, k->from_cache);
  else if (strcmp(f, "compiler") == 0) lua_pushstring(L, k->compiler ? k->compiler : "host");
  else if (strcmp(f, "compiler_version") == 0) lua_pushstring(L, k->compiler_version);
  else if (strcmp(f, "kind") == 0)
    lua_pushstring(L, k->host.call ? k->host.kind : "kernel"); /* host work: its kind */
  else if (strcmp(f, "log") == 0) lua_pushstring(L, k->code.log);
  else if (strcmp(f, "ptx") == 0) lua_pushlstring(L, k->code.ptx, k->code.ptx_len);
  else if (strcmp(f, "cubin_bytes") == 0) lua_pushinteger(L, (lua_Integer)k->code.cubin_len);
  else if (strcmp(f, "params") == 0) push_params(L, k);
  else if (strcmp(f, "attributes") == 0) push_attributes(L, k);
  else {
    /* a method (k:occupancy, and k:bind from cuda_launch.c), or nil */
    lua_getmetatable(L, 1);
    lua_getfield(L, -1, "methods");
    lua_getfield(L, -1, f);
  }
  return 1;
}

static int kernel_tostring(lua_State *L) {
  struct wl_kernel *k = wl_check_udata(L, 1, KERNEL_MT);
  lua_pushfstring(L, "%s %s (%s, %s)", k->host.call ? "host work" : "kernel",
                  k->name ? k->name : "(freed)", k->source ? k->source : "", k->arch);
  return 1;
}

/* wl.compile_stats() -> {compiles, cache_hits, ahead}: compiler calls (those wl.prepare_kernels
 * started included) and cache hits in this run; ahead: the compiler calls done ahead */
static int l_compile_stats(lua_State *L) {
  long compiles, hits, ahead;
  wl_kernel_compile_counts(&compiles, &hits, &ahead);
  lua_createtable(L, 0, 3);
  set_int(L, "compiles", compiles);
  set_int(L, "cache_hits", hits);
  set_int(L, "ahead", ahead);
  return 1;
}

/* wl.compilers() -> {"nvrtc", "nvcc"}: the compilers wl.kernel finds here, NVRTC first */
static int l_compilers(lua_State *L) {
  char why[1100];
  int n = 0;
  lua_newtable(L);
  if (wl_nvrtc_load(why, sizeof why, NULL)) {
    lua_pushliteral(L, "nvrtc");
    lua_rawseti(L, -2, ++n);
  }
  if (wl_nvcc_find(why, sizeof why)) {
    lua_pushliteral(L, "nvcc");
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

/* wl.nvrtc_version() -> "13.0"; an error (exit 6) where NVRTC is not found */
static int l_nvrtc_version(lua_State *L) {
  const struct wl_nvrtc_api *nv = wl_nvrtc_or_raise(L, "wl.nvrtc_version", NULL);
  lua_pushfstring(L, "%d.%d", nv->major, nv->minor);
  return 1;
}

/* core.nvrtc_start(): NVRTC loads on a thread while the CUDA context is made (nvrtc_load.h) */
static int l_nvrtc_start(lua_State *L) {
  (void)L;
  wl_nvrtc_start();
  return 0;
}

void wl_open_kernel(lua_State *L) {
  static const luaL_Reg meta[] = {{"__index", kernel_index},
                                  {"__gc", kernel_gc},
                                  {"__close", kernel_gc},
                                  {"__tostring", kernel_tostring},
                                  {NULL, NULL}};
  static const luaL_Reg fns[] = {{"source", l_source},
                                 {"kernel", l_kernel},
                                 {"kernel_job", l_kernel_job},
                                 {"kernel_needed", l_kernel_needed},
                                 {"kernel_ahead_markers", l_kernel_ahead_markers},
                                 {"compile_stats", l_compile_stats},
                                 {"nvrtc_version", l_nvrtc_version},
                                 {"nvrtc_start", l_nvrtc_start},
                                 {"compiled_kernels", l_compiled_kernels},
                                 {"compilers", l_compilers},
                                 {NULL, NULL}};
  static const luaL_Reg methods[] = {{"occupancy", kernel_occupancy}, {NULL, NULL}};
  luaL_newmetatable(L, KERNEL_MT);
  luaL_setfuncs(L, meta, 0);
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "methods");
  lua_pop(L, 1);
  luaL_setfuncs(L, fns, 0);
}
