/* NVTX for Lua, the account (nvtx.h): wlrun keeps its own record of what is pushed and started
 * in each domain, with or without a tool, so that unbalanced use is reported: a pop without a
 * push is an error, and ranges left open are named on stderr when a scope (wl.nvtx.range, an
 * automatic range) or the run ends. Also the colours, the kinds of automatic range and the
 * categories. The Lua API is nvtx_api.c, the automatic ranges nvtx_auto.c (docs/nvtx.md). */
#include "nvtx.h"
#include "laux.h"
#include "wl_exit.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct wl_nvtx_color wl_nvtx_colors[] = {
    {"red", 0xE15759},     {"orange", 0xF28E2B}, {"yellow", 0xEDC948}, {"green", 0x59A14F},
    {"teal", 0x76B7B2},    {"cyan", 0x17BECF},   {"blue", 0x4E79A7},   {"purple", 0xB07AA1},
    {"magenta", 0xD37295}, {"pink", 0xFF9DA7},   {"brown", 0x9C755F},  {"gray", 0xBAB0AC},
    {"grey", 0xBAB0AC},    {"black", 0x000000},  {"white", 0xFFFFFF},
};
const size_t wl_nvtx_ncolors = sizeof wl_nvtx_colors / sizeof wl_nvtx_colors[0];

/* The kinds of automatic range: the category of kind i is i + 1 in the domain "wlrun". */
const struct wl_nvtx_kind wl_nvtx_kinds[] = {
    {"scenario", "blue"},  {"configuration", "orange"},
    {"setup", "green"},    {"check", "purple"},
    {"warmup", "yellow"},  {"measurement", "red"},
    {"teardown", "brown"}, {"loop", "teal"},
    {"iteration", "gray"}, {"data", "pink"},
    {"step", "cyan"},      {"phase", "magenta"},
};
const int wl_nvtx_nkinds = (int)(sizeof wl_nvtx_kinds / sizeof wl_nvtx_kinds[0]);

uint32_t wl_nvtx_color_rgb(const char *name) {
  for (size_t i = 0; i < wl_nvtx_ncolors; i++)
    if (strcmp(wl_nvtx_colors[i].name, name) == 0) return wl_nvtx_colors[i].rgb;
  return 0;
}

/* event attributes, empty */
void wl_nvtx_attr_init(nvtxEventAttributes_t *a) {
  memset(a, 0, sizeof *a);
  a->version = NVTX_VERSION;
  a->size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
}

/* ---- domains ---- */

/* "wl.nvtx.push" or "wl.nvtx domain 'x': push", for messages */
const char *wl_nvtx_fname(lua_State *L, int didx, const char *fn) {
  struct wl_nvtx_domain *d = lua_touserdata(L, didx);
  if (d->is_default) return lua_pushfstring(L, "wl.nvtx.%s", fn);
  lua_getiuservalue(L, didx, UV_NAME);
  const char *s = lua_pushfstring(L, "wl.nvtx domain '%s': %s", lua_tostring(L, -1), fn);
  lua_remove(L, -2);
  return s;
}

const char *wl_nvtx_domain_label(lua_State *L, int didx) {
  struct wl_nvtx_domain *d = lua_touserdata(L, didx);
  if (d->is_default) return lua_pushliteral(L, "the default domain");
  lua_getiuservalue(L, didx, UV_NAME);
  const char *s = lua_pushfstring(L, "domain '%s'", lua_tostring(L, -1));
  lua_remove(L, -2);
  return s;
}

/* pushes the domain called name (NULL: the default one), creating it on first use */
struct wl_nvtx_domain *wl_nvtx_push_domain(lua_State *L, const char *name) {
  lua_getfield(L, LUA_REGISTRYINDEX, DOMAINS_KEY);
  if (name) lua_getfield(L, -1, name);
  else lua_rawgeti(L, -1, 1);
  if (!lua_isnil(L, -1)) {
    lua_remove(L, -2);
    return lua_touserdata(L, -1);
  }
  lua_pop(L, 1);
  struct wl_nvtx_domain *d = lua_newuserdatauv(L, sizeof *d, DOMAIN_NUV);
  memset(d, 0, sizeof *d);
  d->is_default = name == NULL;
  d->is_auto = name && strcmp(name, AUTO_DOMAIN) == 0;
  d->next_category = d->is_auto ? (uint32_t)wl_nvtx_nkinds + 1 : 1;
  luaL_setmetatable(L, DOMAIN_MT);
  if (name) lua_pushstring(L, name);
  else lua_pushnil(L);
  lua_setiuservalue(L, -2, UV_NAME);
  for (int uv = UV_STACK; uv <= UV_STRINGS; uv++) {
    lua_newtable(L);
    lua_setiuservalue(L, -2, uv);
  }
  if (name) {
    d->h = nvtxDomainCreateA(name);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, name);
  }
  lua_pushvalue(L, -1);
  lua_rawseti(L, -3, (lua_Integer)lua_rawlen(L, -3) + 1);
  lua_remove(L, -2);
  return d;
}

/* ---- categories ---- */

void wl_nvtx_name_category(lua_State *L, int didx, uint32_t id, const char *name) {
  struct wl_nvtx_domain *d = lua_touserdata(L, didx);
  if (d->is_default) nvtxNameCategoryA(id, name);
  else nvtxDomainNameCategoryA(d->h, id, name);
  lua_getiuservalue(L, didx, UV_CATEGORIES);
  lua_pushinteger(L, id);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
  if (id >= d->next_category && id < 0xFFFFFFFFu) d->next_category = id + 1;
}

int wl_nvtx_kind_index(const char *kind) {
  for (int i = 0; i < wl_nvtx_nkinds; i++)
    if (strcmp(wl_nvtx_kinds[i].kind, kind) == 0) return i;
  return -1;
}

/* the id of the category called name in the domain; a new one is named on first use */
uint32_t wl_nvtx_category_by_name(lua_State *L, int didx, const char *name) {
  struct wl_nvtx_domain *d = lua_touserdata(L, didx);
  lua_getiuservalue(L, didx, UV_CATEGORIES);
  int isint;
  lua_Integer id = (lua_getfield(L, -1, name), lua_tointegerx(L, -1, &isint));
  lua_pop(L, 2);
  if (isint) return (uint32_t)id;
  int k = d->is_auto ? wl_nvtx_kind_index(name) : -1;
  uint32_t nid = k >= 0 ? (uint32_t)k + 1 : d->next_category;
  if (k >= 0) d->named_kinds |= 1u << k;
  wl_nvtx_name_category(L, didx, nid, name);
  return nid;
}

/* ---- ranges ---- */

void wl_nvtx_range_push(const struct wl_nvtx_domain *d, const nvtxEventAttributes_t *a) {
  if (d->is_default) nvtxRangePushEx(a);
  else nvtxDomainRangePushEx(d->h, a);
}

static void nvtx_pop(const struct wl_nvtx_domain *d) {
  if (d->is_default) nvtxRangePop();
  else nvtxDomainRangePop(d->h);
}

/* records the push of the name at tidx; returns the new depth */
int wl_nvtx_track_push(lua_State *L, int didx, int tidx) {
  struct wl_nvtx_domain *d = lua_touserdata(L, didx);
  lua_getiuservalue(L, didx, UV_STACK);
  lua_pushvalue(L, tidx);
  lua_rawseti(L, -2, ++d->depth);
  lua_pop(L, 1);
  return d->depth;
}

/* pops the innermost range of the domain (there is one), leaving its name on the stack */
void wl_nvtx_pop_one(lua_State *L, int didx) {
  struct wl_nvtx_domain *d = lua_touserdata(L, didx);
  nvtx_pop(d);
  lua_getiuservalue(L, didx, UV_STACK);
  lua_rawgeti(L, -1, d->depth);
  lua_pushnil(L);
  lua_rawseti(L, -3, d->depth--);
  lua_remove(L, -2);
}

/* 'a' > 'b' > 'c': the names pushed above depth `from`, pushed as one string */
static const char *stack_names(lua_State *L, int didx, int from) {
  int n = ((struct wl_nvtx_domain *)lua_touserdata(L, didx))->depth;
  lua_getiuservalue(L, didx, UV_STACK);
  int t = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = from + 1; i <= n; i++) {
    if (n - from > 10 && i == from + 5) { /* a long list: the 4 outermost and the 4 innermost */
      lua_pushfstring(L, " > (%d more)", n - from - 8);
      luaL_addvalue(&b);
      i = n - 4;
      continue;
    }
    luaL_addstring(&b, i > from + 1 ? " > '" : "'");
    lua_rawgeti(L, t, i);
    luaL_addvalue(&b);
    luaL_addchar(&b, '\'');
  }
  luaL_pushresult(&b);
  lua_remove(L, t);
  return lua_tostring(L, -1);
}

static void warn(lua_State *L, const char *msg) { wl_warn(L, "NVTX: %s", msg); }

void wl_nvtx_end_range(lua_State *L, const struct wl_nvtx_domain *d, int info) {
  lua_rawgeti(L, info, 2);
  nvtxRangeId_t rid = (nvtxRangeId_t)lua_tointeger(L, -1);
  lua_pop(L, 1);
  if (d->is_default) nvtxRangeEnd(rid);
  else nvtxDomainRangeEnd(d->h, rid);
}

/* ---- scopes ---- */

/* pushes a scope over the range just pushed (name at tidx) in the domain at didx */
void wl_nvtx_push_scope(lua_State *L, int didx, int tidx, int depth_before, const char *what) {
  struct wl_nvtx_scope *s = lua_newuserdatauv(L, sizeof *s, 2);
  s->depth_before = depth_before;
  s->closed = false;
  s->what = what;
  luaL_setmetatable(L, SCOPE_MT);
  lua_pushvalue(L, didx);
  lua_setiuservalue(L, -2, 1);
  lua_pushvalue(L, tidx);
  lua_setiuservalue(L, -2, 2);
}

/* Closes a scope: pops its range. On an error, also pops whatever was left above it, silently
 * (the error is the report); otherwise ranges left open inside it are popped and named on
 * stderr, and a range of the outer code popped inside it is an error. */
static int scope_close(lua_State *L) {
  struct wl_nvtx_scope *s = wl_check_udata(L, 1, SCOPE_MT);
  if (s->closed) return 0;
  s->closed = true;
  bool failing = !lua_isnoneornil(L, 2);
  lua_getiuservalue(L, 1, 1);
  int didx = lua_gettop(L);
  lua_getiuservalue(L, 1, 2);
  const char *name = lua_tostring(L, -1);
  int depth = ((struct wl_nvtx_domain *)lua_touserdata(L, didx))->depth;
  if (failing) {
    for (; depth > s->depth_before; depth--) {
      wl_nvtx_pop_one(L, didx);
      lua_pop(L, 1);
    }
    return 0;
  }
  if (depth <= s->depth_before)
    return wl_raise(
        L, WL_EXIT_SCRIPT,
        "%s '%s' (%s): a range pushed before it was popped inside it (a pop without a push)",
        s->what, name, wl_nvtx_domain_label(L, didx));
  if (depth > s->depth_before + 1) {
    int extra = depth - s->depth_before - 1;
    const char *names = stack_names(L, didx, s->depth_before + 1);
    warn(L, lua_pushfstring(L,
                            "%s '%s' (%s) ended with %d range%s pushed inside it and not popped: "
                            "%s; wlrun popped %s",
                            s->what, name, wl_nvtx_domain_label(L, didx), extra,
                            extra == 1 ? "" : "s", names, extra == 1 ? "it" : "them"));
    for (; extra > 0; extra--) {
      wl_nvtx_pop_one(L, didx);
      lua_pop(L, 1);
    }
  }
  wl_nvtx_pop_one(L, didx);
  return 0;
}

static int scope_close_method(lua_State *L) {
  wl_check_udata(L, 1, SCOPE_MT);
  lua_settop(L, 1);
  return scope_close(L);
}

/* calls the function at fn with the arguments above it up to top; the scope at top + 1 closes
 * when this C function returns or the error unwinds it. Returns the function's results. */
int wl_nvtx_call_in_scope(lua_State *L, int fn, int top) {
  lua_toclose(L, top + 1);
  lua_pushvalue(L, fn);
  for (int i = fn + 1; i <= top; i++) lua_pushvalue(L, i);
  lua_call(L, top - fn, LUA_MULTRET);
  return lua_gettop(L) - (top + 1);
}

bool wl_nvtx_callable(lua_State *L, int idx) {
  if (lua_type(L, idx) == LUA_TFUNCTION) return true;
  if (luaL_getmetafield(L, idx, "__call") == LUA_TNIL) return false;
  lua_pop(L, 1);
  return true;
}

/* ---- the end of the run ---- */

/* At lua_close: ranges left open in any domain are named on stderr, and closed. */
static int sentinel_gc(lua_State *L) {
  if (lua_getiuservalue(L, 1, 1) != LUA_TTABLE) return 0;
  int list = lua_gettop(L);
  for (lua_Integer i = 1; lua_rawgeti(L, list, i) == LUA_TUSERDATA; i++) {
    int didx = lua_gettop(L);
    struct wl_nvtx_domain *d = lua_touserdata(L, didx);
    int depth = d->depth;
    if (depth > 0) {
      const char *names = stack_names(L, didx, 0);
      warn(L,
           lua_pushfstring(
               L, "the run ended with %d range%s pushed and not popped in %s: %s; wlrun popped %s",
               depth, depth == 1 ? "" : "s", wl_nvtx_domain_label(L, didx), names,
               depth == 1 ? "it" : "them"));
      for (; depth > 0; depth--) {
        wl_nvtx_pop_one(L, didx);
        lua_pop(L, 1);
      }
    }
    lua_getiuservalue(L, didx, UV_RANGES);
    int ranges = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, ranges)) {
      lua_rawgeti(L, -1, 1);
      const char *name = lua_tostring(L, -1);
      long long id = (long long)lua_tointeger(L, -3);
      const char *where = wl_nvtx_domain_label(L, didx);
      warn(
          L,
          lua_pushfstring(
              L,
              "the run ended with range '%s' (id %I) started and not stopped in %s; wlrun ended it",
              name, (lua_Integer)id, where));
      lua_pop(L, 3);
      wl_nvtx_end_range(L, d, lua_gettop(L));
      lua_pop(L, 1);
    }
    lua_settop(L, list);
  }
  lua_pop(L, 1);
  return 0;
}

void wl_nvtx_open_account(lua_State *L) {
  if (luaL_newmetatable(L, SCOPE_MT)) {
    lua_pushcfunction(L, scope_close);
    lua_setfield(L, -2, "__close");
    lua_createtable(L, 0, 1); /* s:close(): ends the range before the scope ends (once) */
    lua_pushcfunction(L, scope_close_method);
    lua_setfield(L, -2, "close");
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  /* The account of each domain lives as long as the state, even when wlrun.core is loaded
   * again (busted's insulation does that): NVTX's own state is the process's. */
  if (lua_getfield(L, LUA_REGISTRYINDEX, DOMAINS_KEY) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, DOMAINS_KEY);
    /* the sentinel's finaliser runs at lua_close, the end of the run; it holds the domains */
    lua_newuserdatauv(L, 1, 1);
    lua_pushvalue(L, -2);
    lua_setiuservalue(L, -2, 1);
    if (luaL_newmetatable(L, SENTINEL_MT)) {
      lua_pushcfunction(L, sentinel_gc);
      lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, SENTINEL_KEY);
  }
  lua_pop(L, 1);
}
