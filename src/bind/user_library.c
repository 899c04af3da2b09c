/* A user's own shared library (docs/libraries.md): wl.library{file = "libmine.so"} opens it
 * with dlopen, lib:func{name =, params =} looks a function of the ABI of include/wlrun/work.h
 * up and makes it host work (host_work.h): a kernel object that binds, launches and is timed
 * like a kernel. The library stays loaded while the library object or any function made from
 * it lives: the handle counts its holders, and the last one closes it. */
#define _GNU_SOURCE /* dladdr1: the size of an exported symbol */
#include "cuda_kernel.h"
#include "laux.h"
#include "wl_exit.h"
#include "wl_modules.h"

#include <ctype.h>
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <wlrun/work.h> /* the ABI, installed for users: include/ */

#define LIBRARY_MT "wlrun.library"

/* the dlopen handle and its holders: the library object (until closed) and each function */
struct handle {
  void *dl;
  int holders;
  char *path;
  const char *file; /* the path's last part, for names: "libmine.so" */
};

struct library {
  struct handle *h; /* NULL once closed */
};

struct func {
  struct handle *h;
  wlrun_work_fn fn;
};

/* Lets go of h; the last holder closes the library. Returns dlclose's answer (0: closed or
 * still held). */
static int handle_release(struct handle *h) {
  if (--h->holders > 0) return 0;
  int rc = dlclose(h->dl);
  free(h->path);
  free(h);
  return rc;
}

/* ---- functions: host work ---- */

static int func_call(void *ctx, void *const *args, cudaStream_t stream, char *why, size_t whylen) {
  const struct func *f = ctx;
  int rc = f->fn(args, stream);
  if (rc != 0) {
    const char *cuda = cudaGetErrorName((cudaError_t)rc);
    if (rc > 0 && cuda && strncmp(cuda, "cuda", 4) == 0)
      snprintf(why, whylen, "it returned %d (%s: %s, if that is a CUDA error code)", rc, cuda,
               cudaGetErrorString((cudaError_t)rc));
    else snprintf(why, whylen, "it returned %d", rc);
  }
  return rc;
}

static void func_release(void *ctx) {
  struct func *f = ctx;
  (void)handle_release(f->h); /* from a kernel's close path: nothing can be raised */
  free(f);
}

/* ---- the library class ---- */

/* the one close path: lib:close(), __gc, __close */
static int library_close(struct library *lib) {
  int rc = lib->h ? handle_release(lib->h) : 0;
  lib->h = NULL;
  return rc;
}

static struct library *check_library(lua_State *L, int arg, const char *fn) {
  struct library *lib = wl_check_udata(L, arg, LIBRARY_MT);
  if (!lib->h) wl_closed_error(L, arg, fn, "library", "close");
  return lib;
}

static int library_gc(lua_State *L) {
  (void)library_close(wl_check_udata(L, 1, LIBRARY_MT)); /* nothing can be raised from __gc */
  return 0;
}

static int library_close_method(lua_State *L) {
  struct library *lib = check_library(L, 1, "library:close");
  if (library_close(lib) != 0)
    return wl_raise(L, WL_EXIT_IO, "library:close: dlclose: %s", dlerror());
  return 0;
}

/* A string that the library exports: an array of printable text whose NUL is its symbol's last
 * byte (a pointer exported instead is a symbol of 8 bytes that are not that). */
static bool exported_text(const char *s) {
  Dl_info info;
  const ElfW(Sym) *sym = NULL;
  if (!dladdr1(s, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || sym->st_size < 2 ||
      sym->st_size > 4096)
    return false;
  for (size_t i = 0; i + 1 < sym->st_size; i++)
    if (s[i] == '\0' || (!isprint((unsigned char)s[i]) && !isspace((unsigned char)s[i])))
      return false;
  return s[sym->st_size - 1] == '\0';
}

/* lib:func{name = "saxpy", params = "float* y, ...", capturable = true} -> a kernel object */
static int library_func(lua_State *L) {
  static const char *const known[] = {"name", "params", "capturable", NULL};
  struct library *lib = check_library(L, 1, "library:func");
  if (lua_type(L, 2) != LUA_TTABLE)
    return wl_raise(L, WL_EXIT_SCRIPT,
                    "library:func: expected a table {name =, params =, capturable =}, got %s",
                    luaL_typename(L, 2));
  lua_settop(L, 2);
  wl_check_fields(L, 2, "library:func", known, false);
  const char *file = lib->h->file;
  if (lua_getfield(L, 2, "name") != LUA_TSTRING || lua_rawlen(L, -1) == 0)
    return wl_raise(L, WL_EXIT_SCRIPT,
                    "library:func: 'name' (the function's name in %s) is required", file);
  const char *name = lua_tostring(L, -1);
  if (strlen(name) > 200)
    return wl_raise(L, WL_EXIT_SCRIPT, "library:func: the name '%.40s...' is too long", name);
  bool capturable = wl_bool_field(L, 2, "capturable", "library:func", true);

  (void)dlerror();
  void *sym = dlsym(lib->h->dl, name);
  if (!sym) {
    const char *why = dlerror();
    return wl_raise(L, WL_EXIT_SCRIPT,
                    "library:func: %s has no function '%s' (%s); export it as extern \"C\" with "
                    "default visibility "
                    "(WLRUN_EXPORT in wlrun/work.h)",
                    file, name, why ? why : "dlsym found nothing");
  }
  const char *params = NULL;
  int t = lua_getfield(L, 2, "params");
  if (t == LUA_TSTRING) {
    params = lua_tostring(L, -1);
  } else if (t != LUA_TNIL) {
    return wl_raise(L, WL_EXIT_SCRIPT,
                    "library:func: params must be a string (a C parameter list), got %s",
                    luaL_typename(L, -1));
  } else {
    char symbol[256];
    snprintf(symbol, sizeof symbol, "wlrun_params_%s", name);
    (void)dlerror();
    const char *text = dlsym(lib->h->dl, symbol);
    if (!text)
      return wl_raise(
          L, WL_EXIT_SCRIPT,
          "library:func: no parameter list for '%s': give params = \"...\" (such as \"float* y, "
          "const float* x, float a, int n\"), or export it from %s as %s (WLRUN_PARAMS in "
          "wlrun/work.h)",
          name, file, symbol);
    if (!exported_text(text))
      return wl_raise(L, WL_EXIT_SCRIPT,
                      "library:func: %s in %s is not a string: export it as an array, const char "
                      "%s[] = \"...\" "
                      "(WLRUN_PARAMS in wlrun/work.h)",
                      symbol, file, symbol);
    params = lua_pushstring(L, text);
  }

  struct func *f = malloc(sizeof *f);
  if (!f) return wl_raise(L, WL_EXIT_SCRIPT, "out of memory");
  f->h = lib->h;
  f->h->holders++;
  f->fn = (wlrun_work_fn)sym;
  struct wl_host_work host = {.call = func_call,
                              .ctx = f,
                              .release = func_release,
                              .capturable = capturable,
                              .kind = "library"};
  lua_pushfstring(L, "%s in %s", name, file);
  struct wl_kernel *k = wl_push_host_kernel(L, lua_tostring(L, -1), params, &host);
  char *source = strdup(f->h->path); /* k.source and the results' kernels: the library's path */
  if (!source) return wl_raise(L, WL_EXIT_SCRIPT, "out of memory");
  free(k->source);
  k->source = source;
  return 1;
}

static int library_index(lua_State *L) {
  struct library *lib = wl_check_udata(L, 1, LIBRARY_MT);
  const char *k = wl_check_string(L, 2);
  if (strcmp(k, "path") == 0) {
    if (lib->h) lua_pushstring(L, lib->h->path);
    else lua_pushnil(L);
  } else if (strcmp(k, "closed") == 0) {
    lua_pushboolean(L, lib->h == NULL);
  } else {
    lua_getmetatable(L, 1);
    lua_getfield(L, -1, "methods");
    lua_getfield(L, -1, k);
  }
  return 1;
}

static int library_tostring(lua_State *L) {
  struct library *lib = wl_check_udata(L, 1, LIBRARY_MT);
  if (lib->h) lua_pushfstring(L, "library %s", lib->h->path);
  else lua_pushliteral(L, "library (closed)");
  return 1;
}

/* wl.library{file = "libmine.so"}: the path relative to the calling script */
static int l_library(lua_State *L) {
  static const char *const known[] = {"file", NULL};
  if (lua_type(L, 1) != LUA_TTABLE)
    return wl_raise(L, WL_EXIT_SCRIPT,
                    "wl.library: expected a table {file = \"libmine.so\"}, got %s",
                    luaL_typename(L, 1));
  lua_settop(L, 1);
  wl_check_fields(L, 1, "wl.library", known, false);
  if (lua_getfield(L, 1, "file") != LUA_TSTRING || lua_rawlen(L, -1) == 0)
    return wl_raise(L, WL_EXIT_SCRIPT,
                    "wl.library: 'file' (the shared library's path) is required");
  const char *path = wl_push_script_relative(L, lua_tostring(L, -1));
  if (!strchr(path, '/'))
    path = lua_pushfstring(L, "./%s", path); /* a file, not a search of the system's */
  struct stat st;
  if (stat(path, &st) != 0)
    return wl_raise(L, WL_EXIT_IO, "wl.library: cannot open %s: %s", path, strerror(errno));
  if (S_ISDIR(st.st_mode)) return wl_raise(L, WL_EXIT_IO, "wl.library: %s is a directory", path);

  struct library *lib = lua_newuserdatauv(L, sizeof *lib, 0);
  lib->h = NULL;
  luaL_setmetatable(L, LIBRARY_MT);
  struct handle *h = calloc(1, sizeof *h);
  char *copy = strdup(path);
  if (!h || !copy) {
    free(h);
    free(copy);
    return wl_raise(L, WL_EXIT_SCRIPT, "out of memory");
  }
  (void)dlerror();
  h->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h->dl) {
    const char *why = dlerror();
    free(h);
    free(copy);
    return wl_raise(L, WL_EXIT_IO, "wl.library: cannot load %s as a shared library: %s", path,
                    why ? why : "dlopen failed");
  }
  h->holders = 1;
  h->path = copy;
  const char *slash = strrchr(copy, '/');
  h->file = slash ? slash + 1 : copy;
  lib->h = h;
  return 1;
}

void wl_open_library(lua_State *L) {
  static const luaL_Reg meta[] = {{"__index", library_index},
                                  {"__gc", library_gc},
                                  {"__close", library_gc},
                                  {"__tostring", library_tostring},
                                  {NULL, NULL}};
  static const luaL_Reg methods[] = {
      {"func", library_func}, {"close", library_close_method}, {NULL, NULL}};
  luaL_newmetatable(L, LIBRARY_MT);
  luaL_setfuncs(L, meta, 0);
  luaL_newlib(L, methods);
  lua_setfield(L, -2, "methods");
  lua_pop(L, 1);
  lua_pushcfunction(L, l_library);
  lua_setfield(L, -2, "library");
}
