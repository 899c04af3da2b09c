/* A kernel's source compiled by NVRTC or nvcc through the cache (kernel_compile.h). */
#include "kernel_compile.h"
#include "kernel_module.h"
#include "kernel_source.h"
#include "laux.h"
#include "lua_guard.h"
#include "nvcc_run.h"
#include "settings.h"
#include "wl_exit.h"

#include <fcntl.h>
#include <lauxlib.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef WLRUN_CUDA_INCLUDE
#define WLRUN_CUDA_INCLUDE "/usr/local/cuda/include"
#endif

static struct { long compiles, cache_hits, cache_errors, ahead; } counters;

const struct wl_nvrtc_api *wl_nvrtc_or_raise(lua_State *L, const char *fn, const char *kernel) {
  char why[1536];
  const struct wl_nvrtc_api *nv = wl_nvrtc_load(why, sizeof why, NULL);
  if (nv) return nv;
  if (kernel) wl_raise(L, WL_EXIT_COMPILE, "%s '%s': %s", fn, kernel, why);
  wl_raise(L, WL_EXIT_COMPILE, "%s: %s", fn, why);
  return NULL;
}

const char *wl_kernel_name_problem(const char *name, size_t len, size_t *at) {
  static const char punctuation[] = " \t:<>,()*&+-.~!=|^%?/[]'"; /* ' for 'a' and 1'000 */
  for (*at = 0; *at < len; (*at)++) {
    unsigned char ch = (unsigned char)name[*at];
    if (ch == '\0') return "a NUL byte";
    if ((ch < 0x20 && ch != '\t') || ch == 0x7f) return "a control character";
    bool word = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                ch == '_';
    if (!word && (ch >= 0x80 || !strchr(punctuation, ch)))
      return "a character that no name expression holds";
  }
  return NULL;
}

/* nvrtcCompileProgram with SIGINT and SIGTERM held until it returns. While it compiles, NVRTC
 * puts handlers of its own on SIGINT, SIGTERM and SIGXFSZ that end the process with exit 4 (no
 * message, no outputs written), and it puts wlrun's back with other flags. So wlrun's handlers
 * are saved and put back as they were, and a Ctrl-C during a compile reaches wlrun's own handler
 * when the compile ends (the run stops cleanly, its outputs written). */
static nvrtcResult compile_with_signals_held(const struct wl_nvrtc_api *nv, nvrtcProgram prog,
                                             int nopts, const char **opts) {
  static const int handled[] = {SIGINT, SIGTERM, SIGXFSZ};
  enum { N = sizeof handled / sizeof *handled };
  sigset_t held, before;
  sigemptyset(&held);
  sigaddset(&held, SIGINT);
  sigaddset(&held, SIGTERM);
  bool masked = pthread_sigmask(SIG_BLOCK, &held, &before) == 0;
  struct sigaction saved[N];
  bool have[N];
  for (int i = 0; i < N; i++) have[i] = sigaction(handled[i], NULL, &saved[i]) == 0;
  nvrtcResult r = nv->compile(prog, nopts, opts);
  for (int i = 0; i < N; i++)
    if (have[i])
      (void)sigaction(handled[i], &saved[i], NULL); /* put back what was read: cannot fail */
  if (masked) (void)pthread_sigmask(SIG_SETMASK, &before, NULL);
  return r;
}

/* Compiles name (an NVRTC name expression) from code with opts; fills c (its code, lowered name
 * and log). On an error returns false with the message (and NVRTC's log) pushed, for the caller
 * to raise once it has let go of the cache's lock. */
static bool nvrtc_compile(lua_State *L, const struct wl_nvrtc_api *nv, const char *code,
                          const char *source_name, const char *name, const char **opts, int nopts,
                          struct wl_compiled *c) {
  nvrtcProgram prog = NULL;
  nvrtcResult created = nv->create(&prog, code, source_name, 0, NULL, NULL);
  if (created != NVRTC_SUCCESS) {
    lua_pushfstring(L, "kernel '%s': nvrtcCreateProgram: %s", name, nv->error_string(created));
    return false;
  }
  /* from here the program must be destroyed on every path */
  char msg[512] = "";
  nvrtcResult r = nv->add_name(prog, name);
  nvrtcResult cr = r == NVRTC_SUCCESS ? compile_with_signals_held(nv, prog, nopts, opts) : r;
  size_t log_len = 0;
  if (nv->log_size(prog, &log_len) != NVRTC_SUCCESS) log_len = 0;
  c->log = calloc(1, log_len + 1);
  if (c->log && log_len && nv->log(prog, c->log) != NVRTC_SUCCESS) c->log[0] = '\0';
  if (cr == NVRTC_SUCCESS) {
    const char *lowered = NULL;
    r = nv->lowered_name(prog, name, &lowered);
    if (r == NVRTC_SUCCESS) c->lowered = strdup(lowered);
    if (r == NVRTC_SUCCESS) r = nv->ptx_size(prog, &c->ptx_len);
    if (r == NVRTC_SUCCESS && (c->ptx = malloc(c->ptx_len + 1))) {
      r = nv->ptx(prog, c->ptx);
      c->ptx[c->ptx_len] = '\0';
      c->ptx_len = strlen(c->ptx);
    }
    if (r == NVRTC_SUCCESS) r = nv->cubin_size(prog, &c->cubin_len);
    if (r == NVRTC_SUCCESS && (c->cubin = malloc(c->cubin_len ? c->cubin_len : 1)))
      r = nv->cubin(prog, (char *)c->cubin);
    if (r != NVRTC_SUCCESS)
      snprintf(msg, sizeof msg, "reading the compiled code: %s", nv->error_string(r));
    else if (!c->lowered || !c->ptx || !c->cubin) snprintf(msg, sizeof msg, "out of memory");
  }
  (void)nv->destroy(&prog); /* what it made is read: nothing to do if freeing fails */
  if (cr != NVRTC_SUCCESS) {
    lua_pushfstring(L, "compiling kernel '%s' from %s failed (%s):\n%s", name, source_name,
                    nv->error_string(cr), c->log ? c->log : "");
    wl_compiled_free(c);
    return false;
  }
  if (*msg) {
    wl_compiled_free(c);
    lua_pushfstring(L, "kernel '%s': %s", name, msg);
    return false;
  }
  return true;
}

/* Compiles name from code with nvcc; fills c and finds the kernel's mangled name in the cubin
 * (as wl.kernel{file = "k.cubin"} does). False with the message pushed, as nvrtc_compile. */
static bool nvcc_compile(lua_State *L, const struct wl_nvcc *nv, const char *code,
                         const char *source_name, const char *name, const char *arch,
                         const char **opts, int nopts, struct wl_compiled *c) {
  char err[600];
  /* a mangled name is found as it is; any other is referenced, which instantiates a template */
  struct wl_nvcc_job job = {code, source_name, strncmp(name, "_Z", 2) == 0 ? NULL : name,
                            arch, opts,        nopts};
  enum wl_nvcc_result r = wl_nvcc_compile(nv, &job, c, err, sizeof err);
  if (r == WL_NVCC_FAILED) {
    lua_pushfstring(L, "compiling kernel '%s' from %s with nvcc %s failed (%s):\n%s", name,
                    source_name, nv->version, err, c->log ? c->log : "");
    wl_compiled_free(c);
    return false;
  }
  if (r != WL_NVCC_OK) {
    wl_compiled_free(c);
    lua_pushfstring(L, "kernel '%s': %s", name, err);
    return false;
  }
  struct wl_module m;
  bool opened = wl_module_open(&m, c->cubin, c->cubin_len, WL_MODULE_CUBIN, atoi(arch + 3),
                               "the target", err, sizeof err);
  const char *lowered = opened ? wl_module_find_kernel(L, &m, name) : NULL;
  if (opened) wl_module_close(&m);
  if (lowered) c->lowered = strdup(lowered);
  if (!opened) lua_pushfstring(L, "kernel '%s': the cubin nvcc made: %s", name, err);
  else if (!lowered)
    lua_pushfstring(L,
                    "kernel '%s': nvcc's cubin holds no kernel of that name; it has %s (give the "
                    "name as one of these)",
                    name, lua_tostring(L, -1));
  else if (!c->lowered) lua_pushliteral(L, "out of memory");
  else return true;
  wl_compiled_free(c);
  return false;
}

/* ---- options ---- */

/* Appends the string on the top of the stack (popped) to the list of options at list; n: its
 * length. */
static void add_option(lua_State *L, int list, int *n) { lua_rawseti(L, list, ++*n); }

/* The architecture, the language, line info, and the include directories: the toolkit's for
 * NVRTC (its headers, and include/cccl: CUB, libcu++, Thrust in CUDA 13; nvcc has them), the
 * source's own (dir). */
static void add_base_options(lua_State *L, int list, int *n, const char *arch,
                             bool toolkit_includes, const char *dir) {
  lua_pushfstring(L, "-arch=%s", arch); /* nvcc is given its own form of it (nvcc_run.c) */
  add_option(L, list, n);
  lua_pushliteral(L, "--std=c++17");
  add_option(L, list, n);
  lua_pushliteral(L, "-lineinfo");
  add_option(L, list, n);
  const char *home = getenv("CUDA_HOME");
  if (toolkit_includes) {
    if (home && *home) lua_pushfstring(L, "-I%s/include", home);
    else lua_pushliteral(L, "-I" WLRUN_CUDA_INCLUDE);
    add_option(L, list, n);
    if (home && *home) lua_pushfstring(L, "-I%s/include/cccl", home);
    else lua_pushliteral(L, "-I" WLRUN_CUDA_INCLUDE "/cccl");
    add_option(L, list, n);
  }
  if (dir) {
    lua_pushfstring(L, "-I%s", dir);
    add_option(L, list, n);
  }
}

/* The names of the defines table at defines, sorted so that the key does not depend on table
 * order: a list, pushed; their count. */
static int sorted_define_names(lua_State *L, int defines) {
  lua_newtable(L);
  int names = lua_gettop(L), nn = 0;
  lua_pushnil(L);
  while (lua_next(L, defines)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING)
      wl_raise(L, WL_EXIT_SCRIPT, "wl.kernel: defines must be NAME = value pairs");
    lua_pushvalue(L, -1);
    lua_rawseti(L, names, ++nn);
  }
  lua_getglobal(L, "table");
  lua_getfield(L, -1, "sort");
  lua_pushvalue(L, names);
  lua_call(L, 1, 0);
  lua_pop(L, 1);
  return nn;
}

/* defines = {NAME = value}: -DNAME=value (a number or string), -DNAME (true), nothing (false),
 * sorted by name */
static void add_defines(lua_State *L, int list, int *n, int spec) {
  if (lua_getfield(L, spec, "defines") == LUA_TTABLE) {
    int defines = lua_gettop(L);
    int nn = sorted_define_names(L, defines), names = lua_gettop(L);
    for (int i = 1; i <= nn; i++) {
      lua_rawgeti(L, names, i);
      lua_pushvalue(L, -1);
      lua_gettable(L, defines);
      int t = lua_type(L, -1);
      if (t == LUA_TBOOLEAN) {
        if (lua_toboolean(L, -1)) lua_pushfstring(L, "-D%s", lua_tostring(L, -2));
        else {
          lua_pop(L, 2);
          continue;
        }
      } else if (t == LUA_TNUMBER || t == LUA_TSTRING) {
        const char *define = lua_tostring(L, -2); /* before luaL_tolstring pushes */
        const char *value = luaL_tolstring(L, -1, NULL);
        lua_pushfstring(L, "-D%s=%s", define, value);
        lua_remove(L, -2);
      } else {
        wl_raise(L, WL_EXIT_SCRIPT, "wl.kernel: define %s must be a number, string or boolean",
                 lua_tostring(L, -2));
      }
      add_option(L, list, n);
      lua_pop(L, 2);
    }
    lua_pop(L, 1);
  } else if (!lua_isnil(L, -1)) {
    wl_raise(L, WL_EXIT_SCRIPT, "wl.kernel: defines must be a table");
  }
  lua_pop(L, 1);
}

/* options = {...}: the script's own, as given */
static void add_script_options(lua_State *L, int list, int *n, int spec) {
  if (lua_getfield(L, spec, "options") == LUA_TTABLE) {
    for (lua_Integer i = 1; i <= luaL_len(L, -1); i++) {
      if (lua_geti(L, -1, i) != LUA_TSTRING)
        wl_raise(L, WL_EXIT_SCRIPT, "wl.kernel: options must be strings");
      add_option(L, list, n);
    }
  } else if (!lua_isnil(L, -1)) {
    wl_raise(L, WL_EXIT_SCRIPT, "wl.kernel: options must be a list of strings");
  }
  lua_pop(L, 1);
}

/* Pushes a list (a Lua table, which keeps the strings alive) and fills *opts_out with the
 * options given to the compiler: the architecture, the language, line info, include
 * directories (the toolkit's for NVRTC: nvcc has them), the sorted defines, the script's own. */
static void compile_options(lua_State *L, int spec, const char *arch, bool toolkit_includes,
                            const char *dir, const char ***opts_out, int *nopts_out) {
  lua_newtable(L);
  int list = lua_gettop(L), n = 0;
  add_base_options(L, list, &n, arch, toolkit_includes, dir);
  add_defines(L, list, &n, spec);
  add_script_options(L, list, &n, spec);
  const char **opts = lua_newuserdatauv(L, sizeof *opts * (size_t)(n + 1), 0);
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, list, i);
    opts[i - 1] = lua_tostring(L, -1); /* kept alive by the list */
    lua_pop(L, 1);
  }
  opts[n] = NULL;
  *opts_out = opts;
  *nopts_out = n;
}

/* ---- the cache's lock ---- */

/* The cache lock's descriptor while wl.kernel holds it (-1: none), in a to-be-closed slot: an
 * error raised while compiling (out of memory) closes it, so that another process waiting for
 * the lock goes on (the lock's file stays, free: the next holder removes it); the normal paths
 * unlock it (wl_cache_unlock) and set it to -1 first. */
static int held_lock_close(lua_State *L) {
  int *fd = wl_check_udata(L, 1, "wlrun.cache_lock");
  if (*fd >= 0) close(*fd);
  *fd = -1;
  return 0;
}

/* says once that wl.kernel waits for another process's compile of the same kernel */
struct lock_wait {
  lua_State *L;
  const char *name;
};

static void lock_waiting(void *ctx, const char *path) {
  struct lock_wait *w = ctx;
  wl_warn(
      w->L,
      "wl.kernel '%s': waiting for another process that compiles it (%d s so far; the lock is %s, "
      "which a process that hangs holds: end it, or give --cache-dir another directory)",
      w->name, WL_CACHE_LOCK_NOTE, path);
}

static int *held_lock(lua_State *L) {
  int *fd = wl_guard_new(L, sizeof *fd, "wlrun.cache_lock", held_lock_close);
  *fd = -1;
  lua_toclose(L, -1);
  return fd;
}

/* ---- the compiler, the options and the key ---- */

/* the compiler the table names, else the setting's: "nvrtc" or "nvcc" */
static const char *chosen_compiler(lua_State *L, int spec, const char *name) {
  int t = lua_getfield(L, spec, "compiler");
  const char *c =
      t == LUA_TNIL ? wl_setting_find("compile", "compiler")->text : lua_tostring(L, -1);
  if (t != LUA_TNIL && (t != LUA_TSTRING || (strcmp(c, "nvrtc") != 0 && strcmp(c, "nvcc") != 0)))
    wl_raise(L, WL_EXIT_SCRIPT, "wl.kernel '%s': compiler must be \"nvrtc\" or \"nvcc\", got %s",
             name, t == LUA_TSTRING ? lua_pushfstring(L, "'%s'", c) : luaL_typename(L, -1));
  lua_pop(L, 1);
  return strcmp(c, "nvcc") == 0 ? "nvcc" : "nvrtc";
}

/* Pushes the cache key: the compiler and its version ("nvrtc 13.0", "nvcc 13.0.88"), the name, the
 * options (the architecture first), the code and the local headers it includes. NVRTC's keys are
 * as they were before nvcc came. */
static const char *push_key(lua_State *L, const char *compiler, const char *name, const char **opts,
                            int nopts, const char *code, const char *dir, size_t *keylen) {
  luaL_Buffer key; /* nothing else touches the stack while the buffer is open */
  luaL_buffinit(L, &key);
  luaL_addstring(&key, "wlrun kernel v1\n");
  luaL_addstring(&key, compiler);
  luaL_addstring(&key, "\nname ");
  luaL_addstring(&key, name);
  luaL_addchar(&key, '\n');
  for (int i = 0; i < nopts; i++) {
    luaL_addstring(&key, opts[i]);
    luaL_addchar(&key, '\n');
  }
  luaL_addstring(&key, "\n#source\n");
  luaL_addstring(&key, code);
  char bad_header[1300];
  bool headers_ok = wl_add_local_headers(&key, code, dir, bad_header, sizeof bad_header);
  luaL_pushresult(&key);
  if (!headers_ok) wl_raise(L, WL_EXIT_IO, "wl.kernel '%s': #include of %s", name, bad_header);
  return lua_tolstring(L, -1, keylen);
}

/* Compiles with the chosen compiler into k->code, the cache's lock held; false with the message
 * pushed */
static bool compile_now(lua_State *L, struct wl_kernel *k, const struct wl_nvrtc_api *nv,
                        const struct wl_nvcc *cc, const char *code, const char **opts, int nopts) {
  counters.compiles++;
  if (cc)
    return nvcc_compile(L, cc, code, k->source, k->name, k->arch, opts + 1, nopts - 1, &k->code);
  return nvrtc_compile(L, nv, code, k->source, k->name, opts, nopts, &k->code);
}

/* What building one kernel takes: the compiler and its version, the options, the cache's key and
 * directory (Lua strings and a list, kept on the stack) */
struct build_plan {
  const char *compiler; /* "nvrtc" or "nvcc" */
  char version[48];
  const struct wl_nvrtc_api *nv; /* the one chosen; the other NULL */
  const struct wl_nvcc *cc;
  const char **opts;
  int nopts;
  const char *key;
  size_t keylen;
  const char *cache; /* NULL: no cache */
};

static void plan_build(lua_State *L, int spec, const char *name, const char *arch, const char *code,
                       const char *dir, struct build_plan *p) {
  p->compiler = chosen_compiler(L, spec, name);
  p->nv = NULL;
  p->cc = NULL;
  char why[1100];
  if (strcmp(p->compiler, "nvcc") == 0) {
    if (!(p->cc = wl_nvcc_find(why, sizeof why)))
      wl_raise(L, WL_EXIT_COMPILE, "wl.kernel '%s': %s", name, why);
    snprintf(p->version, sizeof p->version, "%s", p->cc->version);
  } else {
    p->nv = wl_nvrtc_or_raise(L, "wl.kernel", name);
    snprintf(p->version, sizeof p->version, "%d.%d", p->nv->major, p->nv->minor);
  }
  compile_options(L, spec, arch, p->nv != NULL, dir, &p->opts, &p->nopts);
  p->key = push_key(L, lua_pushfstring(L, "%s %s", p->compiler, p->version), name, p->opts,
                    p->nopts, code, dir, &p->keylen);
  const struct wl_setting *use_cache = wl_setting_find("compile", "cache");
  char *cache_c = use_cache->number ? wl_cache_dir() : NULL;
  p->cache = cache_c ? lua_pushstring(L, cache_c) : NULL; /* a Lua string: errors leak nothing */
  free(cache_c);
}

/* ---- kernels compiled ahead (wl.prepare_kernels) ---- */

/* The keys (their hashes) this process has asked about, so that a kernel listed twice is
 * compiled once */
static struct {
  char (*hash)[33];
  size_t n, cap;
} asked;

/* keeps the key; false where it is kept already */
static bool ask_once(const char *key, size_t keylen) {
  char hex[33];
  wl_cache_hash(key, keylen, hex);
  for (size_t i = 0; i < asked.n; i++)
    if (strcmp(asked.hash[i], hex) == 0) return false;
  if (asked.n == asked.cap) {
    size_t cap = asked.cap ? 2 * asked.cap : 16;
    char(*grown)[33] = realloc(asked.hash, cap * sizeof *grown);
    if (!grown) return true; /* it may be compiled twice, and is right all the same */
    asked.hash = grown;
    asked.cap = cap;
  }
  memcpy(asked.hash[asked.n++], hex, sizeof hex);
  return true;
}

/* The directory of a run's compiles ahead: the processes that compile write DIR/HASH.done for
 * each kernel they compiled (before they store its entry); the run takes it (unlinks it) when
 * its wl.kernel finds the entry, and so counts the kernel as compiled by this run. */
static struct {
  char *dir;
  bool write;
} markers;

void wl_kernel_ahead_markers(const char *dir, bool write) {
  free(markers.dir);
  markers.dir = dir ? strdup(dir) : NULL;
  markers.write = write;
}

static bool marker_path(const char *key, size_t keylen, char *path, size_t len) {
  if (!markers.dir) return false;
  char hex[33];
  wl_cache_hash(key, keylen, hex);
  int n = snprintf(path, len, "%s/%s.done", markers.dir, hex);
  return n > 0 && (size_t)n < len;
}

static void marker_write(const char *key, size_t keylen) {
  char path[4096];
  if (!markers.write || !marker_path(key, keylen, path, sizeof path)) return;
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) close(fd); /* a marker not written only counts the kernel as the cache's */
}

static bool marker_take(const char *key, size_t keylen) {
  char path[4096];
  return !markers.write && marker_path(key, keylen, path, sizeof path) && unlink(path) == 0;
}

bool wl_kernel_ahead(lua_State *L, int spec, const char *name, const char *arch, const char *code,
                     const char *dir) {
  int top = lua_gettop(L);
  struct build_plan p;
  plan_build(L, spec, name, arch, code, dir, &p);
  struct wl_compiled c = {0};
  bool miss = p.cache && !wl_cache_load(p.cache, p.key, p.keylen, &c) && ask_once(p.key, p.keylen);
  wl_compiled_free(&c);
  lua_settop(L, top);
  return miss;
}

/* ---- one kernel, through the cache ---- */

void wl_kernel_build(lua_State *L, int spec, struct wl_kernel *k, const char *code,
                     const char *dir) {
  const char *name = k->name;
  struct build_plan p;
  plan_build(L, spec, name, k->arch, code, dir, &p);
  k->compiler = p.compiler;
  snprintf(k->compiler_version, sizeof k->compiler_version, "%s", p.version);
  const char *cache = p.cache, *keystr = p.key;
  size_t keylen = p.keylen;
  /* a miss waits for another process compiling the same key, and looks again */
  int *lock = held_lock(L);
  bool stored = true, compiled = true;
  char store_err[512];
  bool hit = cache && wl_cache_load(cache, keystr, keylen, &k->code);
  if (cache && !hit) {
    struct lock_wait wait = {L, name};
    *lock = wl_cache_lock(cache, keystr, keylen, wl_stop_pending, lock_waiting, &wait);
    if (*lock < 0 && wl_stop_pending()) wl_stop_check(L); /* Ctrl-C while waiting: no compile */
    hit = *lock >= 0 && wl_cache_load(cache, keystr, keylen, &k->code);
  }
  if (hit) {
    k->from_cache = !marker_take(keystr, keylen);
    counters.cache_hits += k->from_cache;
    counters.compiles += !k->from_cache;
    counters.ahead += !k->from_cache;
  } else {
    compiled = compile_now(L, k, p.nv, p.cc, code, p.opts, p.nopts);
    if (compiled && cache) marker_write(keystr, keylen); /* before the entry can be found */
    if (compiled && cache &&
        !wl_cache_store(cache, keystr, keylen, &k->code, store_err, sizeof store_err))
      stored = false;
  }
  if (cache) wl_cache_unlock(cache, keystr, keylen, *lock);
  *lock = -1;
  if (!compiled) {
    if (wl_stop_pending())
      wl_stop_check(L); /* a Ctrl-C ended the compiler: the run stops as it does */
    wl_raise(L, WL_EXIT_COMPILE, "%s", lua_tostring(L, -1));
  }
  if (!stored && counters.cache_errors++ == 0) wl_warn(L, "%s", store_err);
  char err[256];
  if (!wl_ptx_params(k->code.ptx, k->code.lowered, &k->sig, err, sizeof err))
    wl_raise(L, WL_EXIT_COMPILE, "kernel '%s': %s", name, err);
  wl_demangle_params(k->code.lowered, &k->sig);
}

void wl_kernel_compile_counts(long *compiles, long *cache_hits, long *compiled_ahead) {
  *compiles = counters.compiles;
  *cache_hits = counters.cache_hits;
  *compiled_ahead = counters.ahead;
}
