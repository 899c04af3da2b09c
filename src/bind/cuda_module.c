/* wl.kernel{file = "k.cubin" | "k.fatbin" | "k.ptx", name =, format =, params =}: a kernel of
 * precompiled code (nvcc's), the same kernel object as an NVRTC kernel (docs/kernels.md,
 * "Precompiled code"). The file is read and checked here, without a device: its format, the
 * image for the target architecture, the kernel's name and parameters; the device loads the
 * whole file (cudaLibraryLoadData picks the image of a fatbin itself) on first use. */
#include "cuda_kernel.h"
#include "c_params.h"
#include "kernel_module.h"
#include "settings.h"
#include "wl_exit.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler (linked for cudart), declared here for C */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* The demangled name without its parameter list and, for a template, its return type:
 * "_Z4axpyIfEvPT_PKS0_S0_" -> "axpy<float>"; spaces removed. Pushes it; NULL for a C name. */
static const char *push_short_name(lua_State *L, const char *mangled, const char **full) {
  int status = 0;
  char *d = strncmp(mangled, "_Z", 2) == 0 ? __cxa_demangle(mangled, NULL, NULL, &status) : NULL;
  if (!d || status != 0) {
    free(d);
    *full = NULL;
    return NULL;
  }
  size_t n = strlen(d);
  if (n && d[n - 1] == ')') { /* cut at the '(' that matches the last ')' */
    int depth = 0;
    while (n > 0) {
      char c = d[--n];
      if (c == ')') depth++;
      else if (c == '(' && --depth == 0) break;
    }
  }
  const char *start = d;
  if (n > 5 && strncmp(d, "void ", 5) == 0) start += 5; /* a template's return type */
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (const char *p = start; p < d + n; p++)
    if (*p != ' ') luaL_addchar(&b, *p);
  luaL_pushresult(&b);
  *full = lua_pushstring(L, d);
  free(d);
  lua_insert(L, -2); /* short name on top, full below */
  return lua_tostring(L, -1);
}

struct match {
  lua_State *L;
  const char *want, *want_short; /* as given; without spaces */
  int list;                      /* a Lua table of the kernels' names, for the message */
  int found;                     /* stack index of the mangled name matched, or 0 */
  int count;
};

static void match_one(const char *name, size_t len, void *ctx) {
  struct match *m = ctx;
  lua_State *L = m->L;
  const char *mangled = lua_pushlstring(L, name, len), *full;
  int base = lua_gettop(L);
  const char *short_name = push_short_name(L, mangled, &full);
  bool hit =
      strcmp(mangled, m->want) == 0 || (short_name && strcmp(short_name, m->want_short) == 0);
  if (short_name) lua_pushfstring(L, "%s (%s)", full, mangled);
  else lua_pushvalue(L, base);
  lua_rawseti(L, m->list, ++m->count);
  lua_settop(L, base);
  if (hit && !m->found) m->found = base; /* keep the mangled name on the stack */
  else lua_pop(L, 1);
}

/* cuda_kernel.h; raises nothing but memory errors */
const char *wl_module_find_kernel(lua_State *L, const struct wl_module *m, const char *name) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (const char *p = name; *p; p++)
    if (*p != ' ') luaL_addchar(&b, *p);
  luaL_pushresult(&b);
  lua_newtable(L);
  struct match mt = {L, name, lua_tostring(L, -2), lua_gettop(L), 0, 0};
  wl_module_kernels(m, match_one, &mt);
  if (mt.found) {
    lua_pushvalue(L, mt.found);
    return lua_tostring(L, -1);
  }
  luaL_Buffer list;
  luaL_buffinit(L, &list);
  for (int i = 1; i <= mt.count; i++) {
    lua_rawgeti(L, mt.list, i);
    luaL_addstring(&list, i > 1 ? ", " : "");
    luaL_addvalue(&list);
  }
  if (mt.count == 0) luaL_addstring(&list, "no kernels");
  luaL_pushresult(&list);
  return NULL;
}

static char *copy_bytes(const void *p, size_t n) {
  char *c = malloc(n + 1);
  if (c) {
    memcpy(c, p, n);
    c[n] = '\0';
  }
  return c;
}

void wl_kernel_from_module(lua_State *L, int spec, struct wl_kernel *k, const char *name,
                           const char *path, const char *data, size_t len, const char *arch) {
  enum wl_module_format f = wl_module_format_of_path(path);
  if (lua_getfield(L, spec, "format") != LUA_TNIL) {
    const char *fname = lua_tostring(L, -1);
    f = fname && lua_type(L, -1) == LUA_TSTRING ? wl_module_format_named(fname) : WL_MODULE_UNKNOWN;
    if (f == WL_MODULE_UNKNOWN)
      wl_raise(L, WL_EXIT_SCRIPT,
               "wl.kernel '%s': format must be \"cubin\", \"fatbin\" or \"ptx\", got %s", name,
               lua_type(L, -1) == LUA_TSTRING ? lua_pushfstring(L, "'%s'", fname)
                                              : luaL_typename(L, -1));
  }
  lua_pop(L, 1);
  int target = atoi(arch + 3); /* "sm_90" or "sm_90a": validated by the settings */
  const char *what = wl_setting_find("compile", "arch")->set ? "--arch" : "this device";
  struct wl_module m;
  char err[512];
  if (!wl_module_open(&m, (const unsigned char *)data, len, f, target, what, err, sizeof err))
    wl_raise(L, WL_EXIT_COMPILE, "wl.kernel '%s': %s (%s): %s", name, path,
             wl_module_format_name(f), err);
  /* from here m owns memory: nothing raises until it is closed */
  struct wl_signature sig;
  const char *lowered = wl_module_find_kernel(L, &m, name);
  bool ok = lowered && wl_module_params(&m, lowered, &sig, err, sizeof err);
  char image_arch[24];
  snprintf(image_arch, sizeof image_arch, "%s_%d", m.sm_is_ptx ? "compute" : "sm", m.sm);
  char *ptx = m.ptx ? copy_bytes(m.ptx, strlen(m.ptx)) : NULL;
  bool had_ptx = m.ptx != NULL;
  wl_module_close(&m);
  if (!lowered) {
    free(ptx);
    wl_raise(L, WL_EXIT_COMPILE, "wl.kernel: no kernel '%s' in %s; it has %s", name, path,
             lua_tostring(L, -1));
  }
  if (!ok) {
    free(ptx);
    wl_raise(L, WL_EXIT_COMPILE, "wl.kernel '%s': %s: %s", name, path, err);
  }
  wl_demangle_params(lowered, &sig);
  if (lua_getfield(L, spec, "params") != LUA_TNIL) {
    struct wl_signature declared;
    if (lua_type(L, -1) != LUA_TSTRING) {
      free(ptx);
      wl_raise(
          L, WL_EXIT_SCRIPT,
          "wl.kernel '%s': params must be a C parameter list such as \"float* y, int n\", got %s",
          name, luaL_typename(L, -1));
    }
    if (!wl_c_params(lua_tostring(L, -1), &declared, err, sizeof err) ||
        !wl_module_check_declared(&declared, &sig, err, sizeof err)) {
      free(ptx);
      wl_raise(L, WL_EXIT_SCRIPT, "wl.kernel '%s' (%s): %s", name, path, err);
    }
    sig = declared;
  }
  lua_pop(L, 1);

  k->name = strdup(name);
  k->source = strdup(path);
  k->compiler = "precompiled";
  snprintf(k->arch, sizeof k->arch, "%s", image_arch);
  k->sig = sig;
  k->code.lowered = strdup(lowered);
  k->code.ptx = had_ptx ? ptx : copy_bytes("", 0);
  k->code.ptx_len = k->code.ptx ? strlen(k->code.ptx) : 0;
  k->code.cubin = (unsigned char *)copy_bytes(
      data, len); /* the whole file: the driver picks a fatbin's image */
  k->code.cubin_len = len;
  k->code.log = copy_bytes("", 0);
  if (!k->name || !k->source || !k->code.lowered || !k->code.ptx || !k->code.cubin || !k->code.log)
    wl_raise(L, WL_EXIT_SCRIPT, "out of memory");
}
