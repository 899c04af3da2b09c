/* NVTX for Lua, the API: wl.nvtx.push/pop, range, start/stop, mark, categories, registered
 * strings, domains, name_stream (docs/nvtx.md). NVTX3 is header-only: until a tool (Nsight
 * Systems, or tests/nvtx/recorder.c) is injected through NVTX_INJECTION64_PATH, every NVTX call
 * is a load and a branch. The account of what is pushed is nvtx.c's. */
#include "cuda_stream.h"
#include "laux.h"
#include "nvtx.h"
#include "wl_exit.h"
#include "wl_modules.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

static lua_Integer next_range_id = 1; /* wl.nvtx.start ids, unique in the run */

static struct wl_nvtx_domain *check_domain(lua_State *L, int arg) {
  return wl_check_udata(L, arg, DOMAIN_MT);
}

/* The name at arg: a string, or a string registered in this domain. Sets the message of a and
 * returns the index of the name's text (pushed for a registered string). */
static int check_name(lua_State *L, int didx, int arg, nvtxEventAttributes_t *a, const char *fn) {
  if (lua_type(L, arg) == LUA_TSTRING) {
    a->messageType = NVTX_MESSAGE_TYPE_ASCII;
    a->message.ascii = lua_tostring(L, arg);
    return arg;
  }
  struct wl_nvtx_rstring *r = luaL_testudata(L, arg, STRING_MT);
  if (!r)
    return wl_raise(
        L, WL_EXIT_SCRIPT,
        "%s: the name must be a string or a registered string (wl.nvtx.register), got %s",
        wl_nvtx_fname(L, didx, fn), luaL_typename(L, arg));
  lua_getiuservalue(L, arg, 1);
  if (r->dom != lua_touserdata(L, didx)) {
    const char *text = lua_tostring(L, -1);
    return wl_raise(L, WL_EXIT_SCRIPT,
                    "%s: the string '%s' was registered in another domain than %s",
                    wl_nvtx_fname(L, didx, fn), text, wl_nvtx_domain_label(L, didx));
  }
  a->messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a->message.registered = r->h;
  return lua_gettop(L);
}

static uint32_t check_color(lua_State *L, int didx, int idx, const char *fn) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) == LUA_TSTRING) {
    const char *s = lua_tostring(L, idx);
    uint32_t rgb = wl_nvtx_color_rgb(s);
    if (rgb || strcmp(s, "black") == 0) return 0xFF000000u | rgb;
    if (s[0] == '#' && strlen(s) == 7 && strspn(s + 1, "0123456789abcdefABCDEF") == 6)
      return 0xFF000000u | (uint32_t)strtoul(s + 1, NULL, 16);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (size_t i = 0; i < wl_nvtx_ncolors; i++) {
      luaL_addstring(&b, i ? ", " : "");
      luaL_addstring(&b, wl_nvtx_colors[i].name);
    }
    luaL_pushresult(&b);
    const char *names = lua_tostring(L, -1);
    return (uint32_t)wl_raise(L, WL_EXIT_SCRIPT,
                              "%s: unknown color '%s' (0xRRGGBB, '#RRGGBB' or one of %s)",
                              wl_nvtx_fname(L, didx, fn), s, names);
  }
  int isint;
  lua_Integer v = lua_tointegerx(L, idx, &isint);
  if (!isint || v < 0 || v > 0xFFFFFFFF) {
    const char *got = luaL_tolstring(L, idx, NULL);
    return (uint32_t)wl_raise(
        L, WL_EXIT_SCRIPT, "%s: color must be 0xRRGGBB (or 0xAARRGGBB) or a color's name, got %s",
        wl_nvtx_fname(L, didx, fn), got);
  }
  return v <= 0xFFFFFF ? 0xFF000000u | (uint32_t)v : (uint32_t)v;
}

static void check_opts(lua_State *L, int didx, int arg, nvtxEventAttributes_t *a, const char *fn) {
  if (lua_isnoneornil(L, arg)) return;
  if (!lua_istable(L, arg))
    wl_raise(L, WL_EXIT_SCRIPT,
             "%s: options must be a table {color =, category =, payload =}, got %s",
             wl_nvtx_fname(L, didx, fn), luaL_typename(L, arg));
  arg = lua_absindex(L, arg);
  lua_pushnil(L);
  while (lua_next(L, arg)) { /* one pass: key at -2, value at -1 */
    const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
    int t = lua_type(L, -1);
    if (strcmp(k, "color") == 0) {
      a->colorType = NVTX_COLOR_ARGB;
      a->color = check_color(L, didx, -1, fn);
    } else if (strcmp(k, "category") == 0 && t == LUA_TSTRING) {
      a->category = wl_nvtx_category_by_name(L, didx, lua_tostring(L, -1));
    } else if (strcmp(k, "category") == 0) {
      int isint;
      lua_Integer c = lua_tointegerx(L, -1, &isint);
      if (!isint || c < 0 || c > 0xFFFFFFFF) {
        const char *got = luaL_tolstring(L, -1, NULL);
        wl_raise(L, WL_EXIT_SCRIPT,
                 "%s: category must be a category's name or an id from 0 to 2^32-1, got %s",
                 wl_nvtx_fname(L, didx, fn), got);
      }
      a->category = (uint32_t)c;
    } else if (strcmp(k, "payload") == 0 && lua_isinteger(L, -1)) {
      a->payloadType = NVTX_PAYLOAD_TYPE_INT64;
      a->payload.llValue = (int64_t)lua_tointeger(L, -1);
    } else if (strcmp(k, "payload") == 0 && t == LUA_TNUMBER) {
      a->payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
      a->payload.dValue = (double)lua_tonumber(L, -1);
    } else if (strcmp(k, "payload") == 0) {
      const char *got = luaL_typename(L, -1);
      wl_raise(
          L, WL_EXIT_SCRIPT,
          "%s: payload must be a number (an integer is sent as int64, a float as double), got %s",
          wl_nvtx_fname(L, didx, fn), got);
    } else {
      const char *key = luaL_tolstring(L, -2, NULL);
      wl_raise(L, WL_EXIT_SCRIPT, "%s: unknown option '%s' (options: color, category, payload)",
               wl_nvtx_fname(L, didx, fn), key);
    }
    lua_pop(L, 1);
  }
}

/* The domain of a call and the index of its first argument: the module's functions
 * (wl.nvtx.push) have the default domain as upvalue 1; the methods (d:push) take it first. */
static struct wl_nvtx_domain *self(lua_State *L, int *didx, int *arg) {
  struct wl_nvtx_domain *d = lua_touserdata(L, lua_upvalueindex(1));
  if (d) {
    *didx = lua_upvalueindex(1);
    *arg = 1;
    return d;
  }
  *didx = 1;
  *arg = 2;
  return check_domain(L, 1);
}

static int domain_push(lua_State *L) {
  int D, A;
  struct wl_nvtx_domain *d = self(L, &D, &A);
  lua_settop(L, A + 1); /* name, options: the name's text may be pushed above them */
  nvtxEventAttributes_t a;
  wl_nvtx_attr_init(&a);
  int tidx = check_name(L, D, A, &a, "push");
  check_opts(L, D, A + 1, &a, "push");
  wl_nvtx_range_push(d, &a);
  lua_pushinteger(L, wl_nvtx_track_push(L, D, tidx));
  return 1;
}

static int domain_pop(lua_State *L) {
  int D, A;
  struct wl_nvtx_domain *d = self(L, &D, &A);
  if (d->depth == 0)
    return wl_raise(L, WL_EXIT_SCRIPT, "%s: no range is pushed in %s (a pop without a push)",
                    wl_nvtx_fname(L, D, "pop"), wl_nvtx_domain_label(L, D));
  wl_nvtx_pop_one(L, D);
  return 1;
}

static int domain_depth(lua_State *L) {
  int D, A;
  lua_pushinteger(L, self(L, &D, &A)->depth);
  return 1;
}

/* the names of the pushed ranges, outermost first */
static int domain_stack(lua_State *L) {
  int D, A;
  int n = self(L, &D, &A)->depth;
  lua_getiuservalue(L, D, UV_STACK);
  lua_createtable(L, n, 0);
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, -2, i);
    lua_rawseti(L, -2, i);
  }
  return 1;
}

/* range(name, [opts,] fn, ...) -> fn(...)'s results, inside a pushed range that is popped
 * however fn ends; an error goes on unchanged (the message handler still sees its stack) */
static int domain_range(lua_State *L) {
  int D, A;
  struct wl_nvtx_domain *d = self(L, &D, &A);
  int opts = A + 1, fn = A + 2;
  if (!lua_isnoneornil(L, opts) && !(lua_istable(L, opts) && !wl_nvtx_callable(L, opts))) {
    fn = opts;
    opts = 0;
  }
  if (!wl_nvtx_callable(L, fn))
    return wl_raise(L, WL_EXIT_SCRIPT,
                    "%s: expected range(name, [options,] function, ...), got %s for the function",
                    wl_nvtx_fname(L, D, "range"), luaL_typename(L, fn));
  int top = lua_gettop(L);
  nvtxEventAttributes_t a;
  wl_nvtx_attr_init(&a);
  int tidx = check_name(L, D, A, &a, "range");
  if (opts) check_opts(L, D, opts, &a, "range");
  wl_nvtx_range_push(d, &a);
  int depth = wl_nvtx_track_push(L, D, tidx);
  lua_settop(L, top);
  lua_pushvalue(L, A);
  if (lua_type(L, -1) != LUA_TSTRING) { /* a registered string: its text */
    lua_getiuservalue(L, -1, 1);
    lua_remove(L, -2);
  }
  wl_nvtx_push_scope(L, D, lua_gettop(L), depth - 1, "wl.nvtx.range");
  lua_remove(L, -2);
  return wl_nvtx_call_in_scope(L, fn, top);
}

/* start(name, opts) -> id: a range that may end anywhere (stop(id)), not nested */
static int domain_start(lua_State *L) {
  int D, A;
  struct wl_nvtx_domain *d = self(L, &D, &A);
  lua_settop(L, A + 1); /* name, options: the name's text may be pushed above them */
  nvtxEventAttributes_t a;
  wl_nvtx_attr_init(&a);
  int tidx = check_name(L, D, A, &a, "start");
  check_opts(L, D, A + 1, &a, "start");
  nvtxRangeId_t rid = d->is_default ? nvtxRangeStartEx(&a) : nvtxDomainRangeStartEx(d->h, &a);
  lua_Integer id = next_range_id++;
  lua_getiuservalue(L, D, UV_RANGES);
  lua_createtable(L, 2, 0);
  lua_pushvalue(L, tidx);
  lua_rawseti(L, -2, 1);
  lua_pushinteger(L, (lua_Integer)rid);
  lua_rawseti(L, -2, 2);
  lua_rawseti(L, -2, id);
  lua_pushinteger(L, id);
  return 1;
}

static int domain_stop(lua_State *L) {
  int D, A;
  struct wl_nvtx_domain *d = self(L, &D, &A);
  int isint;
  lua_Integer id = lua_tointegerx(L, A, &isint);
  if (!isint)
    return wl_raise(L, WL_EXIT_SCRIPT, "%s: expected the id that start returned, got %s",
                    wl_nvtx_fname(L, D, "stop"), luaL_typename(L, A));
  lua_getiuservalue(L, D, UV_RANGES);
  if (lua_rawgeti(L, -1, id) != LUA_TTABLE)
    return wl_raise(L, WL_EXIT_SCRIPT,
                    "%s: no range %lld is started in %s (stopped already, or never started there)",
                    wl_nvtx_fname(L, D, "stop"), (long long)id, wl_nvtx_domain_label(L, D));
  wl_nvtx_end_range(L, d, lua_gettop(L));
  lua_pushnil(L);
  lua_rawseti(L, -3, id);
  lua_rawgeti(L, -1, 1);
  return 1;
}

static int domain_mark(lua_State *L) {
  int D, A;
  struct wl_nvtx_domain *d = self(L, &D, &A);
  lua_settop(L, A + 1); /* name, options: the name's text may be pushed above them */
  nvtxEventAttributes_t a;
  wl_nvtx_attr_init(&a);
  check_name(L, D, A, &a, "mark");
  check_opts(L, D, A + 1, &a, "mark");
  if (d->is_default) nvtxMarkEx(&a);
  else nvtxDomainMarkEx(d->h, &a);
  return 0;
}

/* category(name) -> id (a new id, named, on first use); category(id, name) -> id (names it) */
static int domain_category(lua_State *L) {
  int D, A;
  self(L, &D, &A);
  if (lua_type(L, A) == LUA_TSTRING && lua_isnone(L, A + 1)) {
    lua_pushinteger(L, wl_nvtx_category_by_name(L, D, lua_tostring(L, A)));
    return 1;
  }
  int isint;
  lua_Integer id = lua_tointegerx(L, A, &isint);
  if (!isint || id < 1 || id > 0xFFFFFFFE || lua_type(L, A + 1) != LUA_TSTRING)
    return wl_raise(L, WL_EXIT_SCRIPT,
                    "%s: expected category(name) or category(id, name) with an id from 1 to 2^32-2",
                    wl_nvtx_fname(L, D, "category"));
  wl_nvtx_name_category(L, D, (uint32_t)id, lua_tostring(L, A + 1));
  lua_pushinteger(L, id);
  return 1;
}

static int domain_name_category(lua_State *L) {
  int D, A;
  self(L, &D, &A);
  if (lua_type(L, A) != LUA_TNUMBER || lua_type(L, A + 1) != LUA_TSTRING)
    return wl_raise(L, WL_EXIT_SCRIPT, "%s: expected name_category(id, name)",
                    wl_nvtx_fname(L, D, "name_category"));
  return domain_category(L);
}

/* register(name) -> a registered string, for names used many times */
static int domain_register(lua_State *L) {
  int D, A;
  struct wl_nvtx_domain *d = self(L, &D, &A);
  if (lua_type(L, A) != LUA_TSTRING)
    return wl_raise(L, WL_EXIT_SCRIPT, "%s: expected a string, got %s",
                    wl_nvtx_fname(L, D, "register"), luaL_typename(L, A));
  lua_getiuservalue(L, D, UV_STRINGS);
  if (lua_getfield(L, -1, lua_tostring(L, A)) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  struct wl_nvtx_rstring *r = lua_newuserdatauv(L, sizeof *r, 1);
  r->dom = d;
  r->h = nvtxDomainRegisterStringA(d->is_default ? NULL : d->h, lua_tostring(L, A));
  luaL_setmetatable(L, STRING_MT);
  lua_pushvalue(L, A);
  lua_setiuservalue(L, -2, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, lua_tostring(L, A));
  return 1;
}

static int rstring_tostring(lua_State *L) {
  wl_check_udata(L, 1, STRING_MT);
  lua_getiuservalue(L, 1, 1);
  return 1;
}

static int domain_tostring(lua_State *L) {
  check_domain(L, 1);
  lua_pushfstring(L, "wl.nvtx %s", wl_nvtx_domain_label(L, 1));
  return 1;
}

/* d:name() -> the domain's name */
static int domain_name(lua_State *L) {
  check_domain(L, 1);
  lua_getiuservalue(L, 1, UV_NAME);
  return 1;
}

/* domain(name) -> the domain of that name (the same object every time) */
static int l_domain(lua_State *L) {
  if (lua_type(L, 1) != LUA_TSTRING || lua_rawlen(L, 1) == 0)
    return wl_raise(L, WL_EXIT_SCRIPT,
                    "wl.nvtx.domain: expected a domain's name (a non-empty string), got %s",
                    lua_type(L, 1) == LUA_TSTRING ? "an empty string" : luaL_typename(L, 1));
  wl_nvtx_push_domain(L, lua_tostring(L, 1));
  return 1;
}

/* name_stream(stream, name): the stream's name in the tool's timeline */
static int l_name_stream(lua_State *L) {
  struct wl_stream *s = wl_check_stream(L, 1, "wl.nvtx.name_stream");
  if (lua_type(L, 2) != LUA_TSTRING)
    return wl_raise(L, WL_EXIT_SCRIPT,
                    "wl.nvtx.name_stream: expected (stream, name), got a %s for the name",
                    luaL_typename(L, 2));
  wl_backend->name_stream(wl_stream_get(L, s), lua_tostring(L, 2));
  return 0;
}

void wl_open_nvtx(lua_State *L) {
  static const luaL_Reg domain_methods[] = {{"push", domain_push},
                                            {"pop", domain_pop},
                                            {"range", domain_range},
                                            {"start", domain_start},
                                            {"stop", domain_stop},
                                            {"mark", domain_mark},
                                            {"category", domain_category},
                                            {"name_category", domain_name_category},
                                            {"register", domain_register},
                                            {"depth", domain_depth},
                                            {"stack", domain_stack},
                                            {"name", domain_name},
                                            {NULL, NULL}};
  static const luaL_Reg on_default[] = {
      /* the same functions, with the default domain as upvalue */
      {"push", domain_push},         {"pop", domain_pop},
      {"range", domain_range},       {"start", domain_start},
      {"stop", domain_stop},         {"mark", domain_mark},
      {"category", domain_category}, {"name_category", domain_name_category},
      {"register", domain_register}, {"depth", domain_depth},
      {"stack", domain_stack},       {NULL, NULL}};
  static const luaL_Reg fns[] = {
      {"domain", l_domain}, {"name_stream", l_name_stream}, {NULL, NULL}};

  if (luaL_newmetatable(L, DOMAIN_MT)) {
    luaL_newlib(L, domain_methods); /* a table: method lookups stay in the VM */
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, domain_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, STRING_MT)) {
    lua_pushcfunction(L, rstring_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
  wl_nvtx_open_account(L);
  lua_newtable(L); /* wl.nvtx */
  wl_nvtx_push_domain(L, NULL);
  luaL_setfuncs(L, on_default, 1);
  luaL_setfuncs(L, fns, 0);
  lua_createtable(L, 0, (int)wl_nvtx_ncolors);
  for (size_t i = 0; i < wl_nvtx_ncolors; i++) {
    lua_pushinteger(L, wl_nvtx_colors[i].rgb);
    lua_setfield(L, -2, wl_nvtx_colors[i].name);
  }
  lua_setfield(L, -2, "colors");
  wl_nvtx_open_auto(L);
  lua_setfield(L, -2, "nvtx");
}
