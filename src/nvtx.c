/* NVTX annotation for Lua: wl.nvtx (docs/nvtx.md). NVTX3 is header-only: until a tool (Nsight
 * Systems, or tests/nvtx/recorder.c) is injected through NVTX_INJECTION64_PATH, every NVTX call
 * is a load and a branch. wlrun keeps its own account of what is pushed and started in each
 * domain, with or without a tool, so that unbalanced use is reported: a pop without a push is
 * an error, and ranges left open are named on stderr when wl.nvtx.range or the run ends.
 * The automatic ranges (scenario, configuration, setup, ...) go to the domain "wlrun", with a
 * colour and a category per kind; [run] nvtx = off (--nvtx off) turns them off. */
#include "cuda_common.h"
#include "lhost.h"
#include "settings.h"
#include "wl_exit.h"

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOMAIN_MT "wlrun.nvtx.domain"
#define STRING_MT "wlrun.nvtx.string"
#define SCOPE_MT "wlrun.nvtx.scope"
#define SENTINEL_MT "wlrun.nvtx.sentinel"
#define SENTINEL_KEY "wlrun.nvtx.the_sentinel" /* registry: the sentinel (its metatable is at SENTINEL_MT) */
#define DOMAINS_KEY "wlrun.nvtx.domains" /* registry: name -> domain; [i] -> domain, in creation order */
#define AUTO_DOMAIN "wlrun"

/* the user values of a domain */
enum { UV_NAME = 1, UV_STACK, UV_RANGES, UV_CATEGORIES, UV_STRINGS, DOMAIN_NUV = UV_STRINGS };

struct domain {
  nvtxDomainHandle_t h; /* NULL for the default domain (and for every domain without a tool) */
  bool is_default, is_auto;
  int depth;              /* ranges pushed and not popped; their names are in UV_STACK */
  uint32_t next_category; /* the next id that category(name) hands out */
  uint32_t named_kinds;   /* automatic domain: a bit per kind whose category has been named */
};

/* a registered string; user value: its text */
struct rstring {
  nvtxStringHandle_t h;
  const struct domain *dom;
};

/* an open range that closes itself: wl.nvtx.range, the automatic ranges; user values: the
 * domain and the range's name */
struct scope {
  int depth_before;
  bool closed;
  const char *what;
};

static lua_Integer next_range_id = 1; /* wl.nvtx.start ids, unique in the run */
static const struct wl_setting *auto_setting;

static const struct {
  const char *name;
  uint32_t rgb;
} colors[] = {
    {"red", 0xE15759},   {"orange", 0xF28E2B}, {"yellow", 0xEDC948}, {"green", 0x59A14F},
    {"teal", 0x76B7B2},  {"cyan", 0x17BECF},   {"blue", 0x4E79A7},   {"purple", 0xB07AA1},
    {"magenta", 0xD37295}, {"pink", 0xFF9DA7}, {"brown", 0x9C755F},  {"gray", 0xBAB0AC},
    {"grey", 0xBAB0AC},  {"black", 0x000000},  {"white", 0xFFFFFF},
};
#define NCOLORS (sizeof colors / sizeof colors[0])

/* The kinds of automatic range: the category of kind i is i + 1 in the domain "wlrun". */
static const struct {
  const char *kind, *color;
} kinds[] = {
    {"scenario", "blue"}, {"configuration", "orange"}, {"setup", "green"},  {"check", "purple"},
    {"warmup", "yellow"}, {"measurement", "red"},      {"teardown", "brown"}, {"loop", "teal"},
    {"iteration", "gray"}, {"data", "pink"},           {"step", "cyan"},     {"phase", "magenta"},
};
#define NKINDS ((int)(sizeof kinds / sizeof kinds[0]))

static uint32_t color_rgb(const char *name) {
  for (size_t i = 0; i < NCOLORS; i++)
    if (strcmp(colors[i].name, name) == 0) return colors[i].rgb;
  return 0;
}

/* ---- domains ---- */

static struct domain *check_domain(lua_State *L, int arg) { return luaL_checkudata(L, arg, DOMAIN_MT); }

/* "wl.nvtx.push" or "wl.nvtx domain 'x': push", for messages */
static const char *fname(lua_State *L, int didx, const char *fn) {
  struct domain *d = lua_touserdata(L, didx);
  if (d->is_default) return lua_pushfstring(L, "wl.nvtx.%s", fn);
  lua_getiuservalue(L, didx, UV_NAME);
  const char *s = lua_pushfstring(L, "wl.nvtx domain '%s': %s", lua_tostring(L, -1), fn);
  lua_remove(L, -2);
  return s;
}

static const char *domain_label(lua_State *L, int didx) {
  struct domain *d = lua_touserdata(L, didx);
  if (d->is_default) return lua_pushliteral(L, "the default domain");
  lua_getiuservalue(L, didx, UV_NAME);
  const char *s = lua_pushfstring(L, "domain '%s'", lua_tostring(L, -1));
  lua_remove(L, -2);
  return s;
}

/* pushes the domain called name (NULL: the default one), creating it on first use */
static struct domain *push_domain(lua_State *L, const char *name) {
  lua_getfield(L, LUA_REGISTRYINDEX, DOMAINS_KEY);
  if (name) lua_getfield(L, -1, name);
  else lua_rawgeti(L, -1, 1);
  if (!lua_isnil(L, -1)) {
    lua_remove(L, -2);
    return lua_touserdata(L, -1);
  }
  lua_pop(L, 1);
  struct domain *d = lua_newuserdatauv(L, sizeof *d, DOMAIN_NUV);
  memset(d, 0, sizeof *d);
  d->is_default = name == NULL;
  d->is_auto = name && strcmp(name, AUTO_DOMAIN) == 0;
  d->next_category = d->is_auto ? (uint32_t)NKINDS + 1 : 1;
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

/* ---- event attributes ---- */

static void attr_init(nvtxEventAttributes_t *a) {
  memset(a, 0, sizeof *a);
  a->version = NVTX_VERSION;
  a->size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
}

/* The name at arg: a string, or a string registered in this domain. Sets the message of a and
 * returns the index of the name's text (pushed for a registered string). */
static int check_name(lua_State *L, int didx, int arg, nvtxEventAttributes_t *a, const char *fn) {
  if (lua_type(L, arg) == LUA_TSTRING) {
    a->messageType = NVTX_MESSAGE_TYPE_ASCII;
    a->message.ascii = lua_tostring(L, arg);
    return arg;
  }
  struct rstring *r = luaL_testudata(L, arg, STRING_MT);
  if (!r)
    return wl_raise(L, WL_EXIT_SCRIPT, "%s: the name must be a string or a registered string (wl.nvtx.register), got %s",
                    fname(L, didx, fn), luaL_typename(L, arg));
  lua_getiuservalue(L, arg, 1);
  if (r->dom != lua_touserdata(L, didx)) {
    const char *text = lua_tostring(L, -1);
    return wl_raise(L, WL_EXIT_SCRIPT, "%s: the string '%s' was registered in another domain than %s", fname(L, didx, fn),
                    text, domain_label(L, didx));
  }
  a->messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a->message.registered = r->h;
  return lua_gettop(L);
}

static uint32_t check_color(lua_State *L, int didx, int idx, const char *fn) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) == LUA_TSTRING) {
    const char *s = lua_tostring(L, idx);
    uint32_t rgb = color_rgb(s);
    if (rgb || strcmp(s, "black") == 0) return 0xFF000000u | rgb;
    if (s[0] == '#' && strlen(s) == 7 && strspn(s + 1, "0123456789abcdefABCDEF") == 6)
      return 0xFF000000u | (uint32_t)strtoul(s + 1, NULL, 16);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (size_t i = 0; i < NCOLORS; i++) {
      luaL_addstring(&b, i ? ", " : "");
      luaL_addstring(&b, colors[i].name);
    }
    luaL_pushresult(&b);
    const char *names = lua_tostring(L, -1);
    return (uint32_t)wl_raise(L, WL_EXIT_SCRIPT, "%s: unknown color '%s' (0xRRGGBB, '#RRGGBB' or one of %s)",
                              fname(L, didx, fn), s, names);
  }
  int isint;
  lua_Integer v = lua_tointegerx(L, idx, &isint);
  if (!isint || v < 0 || v > 0xFFFFFFFF) {
    const char *got = luaL_tolstring(L, idx, NULL);
    return (uint32_t)wl_raise(L, WL_EXIT_SCRIPT, "%s: color must be 0xRRGGBB (or 0xAARRGGBB) or a color's name, got %s",
                              fname(L, didx, fn), got);
  }
  return v <= 0xFFFFFF ? 0xFF000000u | (uint32_t)v : (uint32_t)v;
}

static uint32_t category_by_name(lua_State *L, int didx, const char *name);

static void check_opts(lua_State *L, int didx, int arg, nvtxEventAttributes_t *a, const char *fn) {
  if (lua_isnoneornil(L, arg)) return;
  if (!lua_istable(L, arg))
    wl_raise(L, WL_EXIT_SCRIPT, "%s: options must be a table {color =, category =, payload =}, got %s",
             fname(L, didx, fn), luaL_typename(L, arg));
  arg = lua_absindex(L, arg);
  lua_pushnil(L);
  while (lua_next(L, arg)) { /* one pass: key at -2, value at -1 */
    const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
    int t = lua_type(L, -1);
    if (strcmp(k, "color") == 0) {
      a->colorType = NVTX_COLOR_ARGB;
      a->color = check_color(L, didx, -1, fn);
    } else if (strcmp(k, "category") == 0 && t == LUA_TSTRING) {
      a->category = category_by_name(L, didx, lua_tostring(L, -1));
    } else if (strcmp(k, "category") == 0) {
      int isint;
      lua_Integer c = lua_tointegerx(L, -1, &isint);
      if (!isint || c < 0 || c > 0xFFFFFFFF) {
        const char *got = luaL_tolstring(L, -1, NULL);
        wl_raise(L, WL_EXIT_SCRIPT, "%s: category must be a category's name or an id from 0 to 2^32-1, got %s",
                 fname(L, didx, fn), got);
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
      wl_raise(L, WL_EXIT_SCRIPT, "%s: payload must be a number (an integer is sent as int64, a float as double), got %s",
               fname(L, didx, fn), got);
    } else {
      const char *key = luaL_tolstring(L, -2, NULL);
      wl_raise(L, WL_EXIT_SCRIPT, "%s: unknown option '%s' (options: color, category, payload)", fname(L, didx, fn), key);
    }
    lua_pop(L, 1);
  }
}

/* ---- categories ---- */

static void name_category(lua_State *L, int didx, uint32_t id, const char *name) {
  struct domain *d = lua_touserdata(L, didx);
  if (d->is_default) nvtxNameCategoryA(id, name);
  else nvtxDomainNameCategoryA(d->h, id, name);
  lua_getiuservalue(L, didx, UV_CATEGORIES);
  lua_pushinteger(L, id);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
  if (id >= d->next_category && id < 0xFFFFFFFFu) d->next_category = id + 1;
}

static int kind_index(const char *kind) {
  for (int i = 0; i < NKINDS; i++)
    if (strcmp(kinds[i].kind, kind) == 0) return i;
  return -1;
}

/* the id of the category called name in the domain; a new one is named on first use */
static uint32_t category_by_name(lua_State *L, int didx, const char *name) {
  struct domain *d = lua_touserdata(L, didx);
  lua_getiuservalue(L, didx, UV_CATEGORIES);
  int isint;
  lua_Integer id = (lua_getfield(L, -1, name), lua_tointegerx(L, -1, &isint));
  lua_pop(L, 2);
  if (isint) return (uint32_t)id;
  int k = d->is_auto ? kind_index(name) : -1;
  uint32_t nid = k >= 0 ? (uint32_t)k + 1 : d->next_category;
  if (k >= 0) d->named_kinds |= 1u << k;
  name_category(L, didx, nid, name);
  return nid;
}

/* ---- ranges ---- */

static void nvtx_push(const struct domain *d, const nvtxEventAttributes_t *a) {
  if (d->is_default) nvtxRangePushEx(a);
  else nvtxDomainRangePushEx(d->h, a);
}

static void nvtx_pop(const struct domain *d) {
  if (d->is_default) nvtxRangePop();
  else nvtxDomainRangePop(d->h);
}

/* records the push of the name at tidx; returns the new depth */
static int track_push(lua_State *L, int didx, int tidx) {
  struct domain *d = lua_touserdata(L, didx);
  lua_getiuservalue(L, didx, UV_STACK);
  lua_pushvalue(L, tidx);
  lua_rawseti(L, -2, ++d->depth);
  lua_pop(L, 1);
  return d->depth;
}

/* pops the innermost range of the domain (there is one), leaving its name on the stack */
static void pop_one(lua_State *L, int didx) {
  struct domain *d = lua_touserdata(L, didx);
  nvtx_pop(d);
  lua_getiuservalue(L, didx, UV_STACK);
  lua_rawgeti(L, -1, d->depth);
  lua_pushnil(L);
  lua_rawseti(L, -3, d->depth--);
  lua_remove(L, -2);
}

/* 'a' > 'b' > 'c': the names pushed above depth `from`, pushed as one string */
static const char *stack_names(lua_State *L, int didx, int from) {
  int n = ((struct domain *)lua_touserdata(L, didx))->depth;
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

static void warn(lua_State *L, const char *msg) {
  (void)L;
  fprintf(stderr, "wlrun: warning: NVTX: %s\n", msg);
  fflush(stderr);
}

/* The domain of a call and the index of its first argument: the module's functions
 * (wl.nvtx.push) have the default domain as upvalue 1; the methods (d:push) take it first. */
static struct domain *self(lua_State *L, int *didx, int *arg) {
  struct domain *d = lua_touserdata(L, lua_upvalueindex(1));
  if (d) {
    *didx = lua_upvalueindex(1);
    *arg = 1;
    return d;
  }
  *didx = 1;
  *arg = 2;
  return check_domain(L, 1);
}

static int dom_push(lua_State *L) {
  int D, A;
  struct domain *d = self(L, &D, &A);
  lua_settop(L, A + 1); /* name, options: the name's text may be pushed above them */
  nvtxEventAttributes_t a;
  attr_init(&a);
  int tidx = check_name(L, D, A, &a, "push");
  check_opts(L, D, A + 1, &a, "push");
  nvtx_push(d, &a);
  lua_pushinteger(L, track_push(L, D, tidx));
  return 1;
}

static int dom_pop(lua_State *L) {
  int D, A;
  struct domain *d = self(L, &D, &A);
  if (d->depth == 0)
    return wl_raise(L, WL_EXIT_SCRIPT, "%s: no range is pushed in %s (a pop without a push)", fname(L, D, "pop"),
                    domain_label(L, D));
  pop_one(L, D);
  return 1;
}

static int dom_depth(lua_State *L) {
  int D, A;
  lua_pushinteger(L, self(L, &D, &A)->depth);
  return 1;
}

/* the names of the pushed ranges, outermost first */
static int dom_stack(lua_State *L) {
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

static int scope_close(lua_State *L);

/* pushes a scope over the range just pushed (name at tidx) in the domain at didx */
static void push_scope(lua_State *L, int didx, int tidx, int depth_before, const char *what) {
  struct scope *s = lua_newuserdatauv(L, sizeof *s, 2);
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
  struct scope *s = luaL_checkudata(L, 1, SCOPE_MT);
  if (s->closed) return 0;
  s->closed = true;
  bool failing = !lua_isnoneornil(L, 2);
  lua_getiuservalue(L, 1, 1);
  int didx = lua_gettop(L);
  lua_getiuservalue(L, 1, 2);
  const char *name = lua_tostring(L, -1);
  int depth = ((struct domain *)lua_touserdata(L, didx))->depth;
  if (failing) {
    for (; depth > s->depth_before; depth--) {
      pop_one(L, didx);
      lua_pop(L, 1);
    }
    return 0;
  }
  if (depth <= s->depth_before)
    return wl_raise(L, WL_EXIT_SCRIPT, "%s '%s' (%s): a range pushed before it was popped inside it (a pop without a push)",
                    s->what, name, domain_label(L, didx));
  if (depth > s->depth_before + 1) {
    int extra = depth - s->depth_before - 1;
    const char *names = stack_names(L, didx, s->depth_before + 1);
    warn(L, lua_pushfstring(L, "%s '%s' (%s) ended with %d range%s pushed inside it and not popped: %s; wlrun popped %s",
                            s->what, name, domain_label(L, didx), extra, extra == 1 ? "" : "s", names,
                            extra == 1 ? "it" : "them"));
    for (; extra > 0; extra--) {
      pop_one(L, didx);
      lua_pop(L, 1);
    }
  }
  pop_one(L, didx);
  return 0;
}

static int scope_close_method(lua_State *L) {
  luaL_checkudata(L, 1, SCOPE_MT);
  lua_settop(L, 1);
  return scope_close(L);
}

/* calls the function at fn with the arguments above it up to top; the scope at top + 1 closes
 * when this C function returns or the error unwinds it. Returns the function's results. */
static int call_in_scope(lua_State *L, int fn, int top) {
  lua_toclose(L, top + 1);
  lua_pushvalue(L, fn);
  for (int i = fn + 1; i <= top; i++) lua_pushvalue(L, i);
  lua_call(L, top - fn, LUA_MULTRET);
  return lua_gettop(L) - (top + 1);
}

static bool callable(lua_State *L, int idx) {
  if (lua_type(L, idx) == LUA_TFUNCTION) return true;
  if (luaL_getmetafield(L, idx, "__call") == LUA_TNIL) return false;
  lua_pop(L, 1);
  return true;
}

/* range(name, [opts,] fn, ...) -> fn(...)'s results, inside a pushed range that is popped
 * however fn ends; an error goes on unchanged (the message handler still sees its stack) */
static int dom_range(lua_State *L) {
  int D, A;
  struct domain *d = self(L, &D, &A);
  int opts = A + 1, fn = A + 2;
  if (!lua_isnoneornil(L, opts) && !(lua_istable(L, opts) && !callable(L, opts))) {
    fn = opts;
    opts = 0;
  }
  if (!callable(L, fn))
    return wl_raise(L, WL_EXIT_SCRIPT, "%s: expected range(name, [options,] function, ...), got %s for the function",
                    fname(L, D, "range"), luaL_typename(L, fn));
  int top = lua_gettop(L);
  nvtxEventAttributes_t a;
  attr_init(&a);
  int tidx = check_name(L, D, A, &a, "range");
  if (opts) check_opts(L, D, opts, &a, "range");
  nvtx_push(d, &a);
  int depth = track_push(L, D, tidx);
  lua_settop(L, top);
  lua_pushvalue(L, A);
  if (lua_type(L, -1) != LUA_TSTRING) { /* a registered string: its text */
    lua_getiuservalue(L, -1, 1);
    lua_remove(L, -2);
  }
  push_scope(L, D, lua_gettop(L), depth - 1, "wl.nvtx.range");
  lua_remove(L, -2);
  return call_in_scope(L, fn, top);
}

/* start(name, opts) -> id: a range that may end anywhere (stop(id)), not nested */
static int dom_start(lua_State *L) {
  int D, A;
  struct domain *d = self(L, &D, &A);
  lua_settop(L, A + 1); /* name, options: the name's text may be pushed above them */
  nvtxEventAttributes_t a;
  attr_init(&a);
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

static void end_range(lua_State *L, const struct domain *d, int info) {
  lua_rawgeti(L, info, 2);
  nvtxRangeId_t rid = (nvtxRangeId_t)lua_tointeger(L, -1);
  lua_pop(L, 1);
  if (d->is_default) nvtxRangeEnd(rid);
  else nvtxDomainRangeEnd(d->h, rid);
}

static int dom_stop(lua_State *L) {
  int D, A;
  struct domain *d = self(L, &D, &A);
  int isint;
  lua_Integer id = lua_tointegerx(L, A, &isint);
  if (!isint)
    return wl_raise(L, WL_EXIT_SCRIPT, "%s: expected the id that start returned, got %s", fname(L, D, "stop"),
                    luaL_typename(L, A));
  lua_getiuservalue(L, D, UV_RANGES);
  if (lua_rawgeti(L, -1, id) != LUA_TTABLE)
    return wl_raise(L, WL_EXIT_SCRIPT, "%s: no range %lld is started in %s (stopped already, or never started there)",
                    fname(L, D, "stop"), (long long)id, domain_label(L, D));
  end_range(L, d, lua_gettop(L));
  lua_pushnil(L);
  lua_rawseti(L, -3, id);
  lua_rawgeti(L, -1, 1);
  return 1;
}

static int dom_mark(lua_State *L) {
  int D, A;
  struct domain *d = self(L, &D, &A);
  lua_settop(L, A + 1); /* name, options: the name's text may be pushed above them */
  nvtxEventAttributes_t a;
  attr_init(&a);
  check_name(L, D, A, &a, "mark");
  check_opts(L, D, A + 1, &a, "mark");
  if (d->is_default) nvtxMarkEx(&a);
  else nvtxDomainMarkEx(d->h, &a);
  return 0;
}

/* category(name) -> id (a new id, named, on first use); category(id, name) -> id (names it) */
static int dom_category(lua_State *L) {
  int D, A;
  self(L, &D, &A);
  if (lua_type(L, A) == LUA_TSTRING && lua_isnone(L, A + 1)) {
    lua_pushinteger(L, category_by_name(L, D, lua_tostring(L, A)));
    return 1;
  }
  int isint;
  lua_Integer id = lua_tointegerx(L, A, &isint);
  if (!isint || id < 1 || id > 0xFFFFFFFE || lua_type(L, A + 1) != LUA_TSTRING)
    return wl_raise(L, WL_EXIT_SCRIPT, "%s: expected category(name) or category(id, name) with an id from 1 to 2^32-2",
                    fname(L, D, "category"));
  name_category(L, D, (uint32_t)id, lua_tostring(L, A + 1));
  lua_pushinteger(L, id);
  return 1;
}

static int dom_name_category(lua_State *L) {
  int D, A;
  self(L, &D, &A);
  if (lua_type(L, A) != LUA_TNUMBER || lua_type(L, A + 1) != LUA_TSTRING)
    return wl_raise(L, WL_EXIT_SCRIPT, "%s: expected name_category(id, name)", fname(L, D, "name_category"));
  return dom_category(L);
}

/* register(name) -> a registered string, for names used many times */
static int dom_register(lua_State *L) {
  int D, A;
  struct domain *d = self(L, &D, &A);
  if (lua_type(L, A) != LUA_TSTRING)
    return wl_raise(L, WL_EXIT_SCRIPT, "%s: expected a string, got %s", fname(L, D, "register"), luaL_typename(L, A));
  lua_getiuservalue(L, D, UV_STRINGS);
  if (lua_getfield(L, -1, lua_tostring(L, A)) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  struct rstring *r = lua_newuserdatauv(L, sizeof *r, 1);
  r->dom = d;
  r->h = nvtxDomainRegisterStringA(d->is_default ? NULL : d->h, lua_tostring(L, A));
  luaL_setmetatable(L, STRING_MT);
  lua_pushvalue(L, A);
  lua_setiuservalue(L, -2, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, lua_tostring(L, A));
  return 1;
}

static int string_tostring(lua_State *L) {
  luaL_checkudata(L, 1, STRING_MT);
  lua_getiuservalue(L, 1, 1);
  return 1;
}

static int domain_tostring(lua_State *L) {
  check_domain(L, 1);
  lua_pushfstring(L, "wl.nvtx %s", domain_label(L, 1));
  return 1;
}

/* d:name() -> the domain's name */
static int dom_name(lua_State *L) {
  check_domain(L, 1);
  lua_getiuservalue(L, 1, UV_NAME);
  return 1;
}

/* domain(name) -> the domain of that name (the same object every time) */
static int l_domain(lua_State *L) {
  if (lua_type(L, 1) != LUA_TSTRING || lua_rawlen(L, 1) == 0)
    return wl_raise(L, WL_EXIT_SCRIPT, "wl.nvtx.domain: expected a domain's name (a non-empty string), got %s",
                    lua_type(L, 1) == LUA_TSTRING ? "an empty string" : luaL_typename(L, 1));
  push_domain(L, lua_tostring(L, 1));
  return 1;
}

/* name_stream(stream, name): the stream's name in the tool's timeline */
static int l_name_stream(lua_State *L) {
  luaL_checkudata(L, 1, "wlrun.stream");
  if (lua_type(L, 2) != LUA_TSTRING)
    return wl_raise(L, WL_EXIT_SCRIPT, "wl.nvtx.name_stream: expected (stream, name), got a %s for the name",
                    luaL_typename(L, 2));
  cudaStream_t s = wl_opt_stream(L, 1);
  if (!wl_compile_only()) nvtxNameCudaStreamA(s, lua_tostring(L, 2));
  return 0;
}

/* ---- automatic ranges ---- */

static bool auto_on(void) { return !auto_setting || auto_setting->number != 0; }

static int l_auto_enabled(lua_State *L) {
  lua_pushboolean(L, auto_on());
  return 1;
}

/* pushes the automatic range of kind (arg 1), name (arg 2, default: the kind), payload (arg 3)
 * and its scope; returns the scope's index */
static int auto_push(lua_State *L, int payload) {
  const char *kind = luaL_checkstring(L, 1);
  int k = kind_index(kind);
  if (k < 0) {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0; i < NKINDS; i++) {
      luaL_addstring(&b, i ? ", " : "");
      luaL_addstring(&b, kinds[i].kind);
    }
    luaL_pushresult(&b);
    return wl_raise(L, WL_EXIT_SCRIPT, "wl.nvtx: unknown kind of automatic range '%s' (kinds: %s)", kind,
                    lua_tostring(L, -1));
  }
  if (!lua_isnoneornil(L, 2) && lua_type(L, 2) != LUA_TSTRING)
    return wl_raise(L, WL_EXIT_SCRIPT, "wl.nvtx: the name of an automatic range must be a string, got %s",
                    luaL_typename(L, 2));
  const char *name = lua_isnoneornil(L, 2) ? kind : lua_tostring(L, 2);
  struct domain *d = push_domain(L, AUTO_DOMAIN);
  int didx = lua_gettop(L);
  if (!(d->named_kinds & (1u << k))) {
    d->named_kinds |= 1u << k;
    name_category(L, didx, (uint32_t)k + 1, kind);
  }
  nvtxEventAttributes_t a;
  attr_init(&a);
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  a.category = (uint32_t)k + 1;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xFF000000u | color_rgb(kinds[k].color);
  if (payload && lua_isinteger(L, payload)) {
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = (int64_t)lua_tointeger(L, payload);
  } else if (payload && lua_type(L, payload) == LUA_TNUMBER) {
    a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
    a.payload.dValue = lua_tonumber(L, payload);
  } else if (payload && !lua_isnoneornil(L, payload)) {
    return wl_raise(L, WL_EXIT_SCRIPT, "wl.nvtx: the payload of an automatic range must be a number, got %s",
                    luaL_typename(L, payload));
  }
  lua_pushstring(L, name);
  int tidx = lua_gettop(L);
  nvtx_push(d, &a);
  int depth = track_push(L, didx, tidx);
  push_scope(L, didx, tidx, depth - 1, "automatic range");
  return lua_gettop(L);
}

/* auto_scope(kind [, name [, payload]]) -> a to-be-closed value (nil when --nvtx off):
 *   local r <close> = wl.nvtx.auto_scope("phase", "forward") */
static int l_auto_scope(lua_State *L) {
  if (!auto_on()) return 0;
  lua_settop(L, 3);
  auto_push(L, 3);
  return 1;
}

/* auto_range(kind, name, fn, ...) -> fn(...)'s results, inside an automatic range */
static int l_auto_range(lua_State *L) {
  if (!callable(L, 3))
    return wl_raise(L, WL_EXIT_SCRIPT, "wl.nvtx.auto_range: expected (kind, name, function, ...), got %s for the function",
                    luaL_typename(L, 3));
  int top = lua_gettop(L);
  if (!auto_on()) {
    lua_call(L, top - 3, LUA_MULTRET);
    return lua_gettop(L) - 2;
  }
  auto_push(L, 0);
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
  return call_in_scope(L, 3, top);
}

/* ---- the end of the run ---- */

/* At lua_close: ranges left open in any domain are named on stderr, and closed. */
static int sentinel_gc(lua_State *L) {
  if (lua_getiuservalue(L, 1, 1) != LUA_TTABLE) return 0;
  int list = lua_gettop(L);
  for (lua_Integer i = 1; lua_rawgeti(L, list, i) == LUA_TUSERDATA; i++) {
    int didx = lua_gettop(L);
    struct domain *d = lua_touserdata(L, didx);
    int depth = d->depth;
    if (depth > 0) {
      const char *names = stack_names(L, didx, 0);
      warn(L, lua_pushfstring(L, "the run ended with %d range%s pushed and not popped in %s: %s; wlrun popped %s", depth,
                              depth == 1 ? "" : "s", domain_label(L, didx), names, depth == 1 ? "it" : "them"));
      for (; depth > 0; depth--) {
        pop_one(L, didx);
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
      const char *where = domain_label(L, didx);
      warn(L, lua_pushfstring(L, "the run ended with range '%s' (id %I) started and not stopped in %s; wlrun ended it",
                              name, (lua_Integer)id, where));
      lua_pop(L, 3);
      end_range(L, d, lua_gettop(L));
      lua_pop(L, 1);
    }
    lua_settop(L, list);
  }
  lua_pop(L, 1);
  return 0;
}

void wl_open_nvtx(lua_State *L) {
  static const luaL_Reg domain_methods[] = {
      {"push", dom_push},   {"pop", dom_pop},           {"range", dom_range},
      {"start", dom_start}, {"stop", dom_stop},         {"mark", dom_mark},
      {"category", dom_category}, {"name_category", dom_name_category}, {"register", dom_register},
      {"depth", dom_depth}, {"stack", dom_stack},       {"name", dom_name},
      {NULL, NULL}};
  static const luaL_Reg on_default[] = { /* the same functions, with the default domain as upvalue */
      {"push", dom_push},   {"pop", dom_pop},           {"range", dom_range},
      {"start", dom_start}, {"stop", dom_stop},         {"mark", dom_mark},
      {"category", dom_category}, {"name_category", dom_name_category}, {"register", dom_register},
      {"depth", dom_depth}, {"stack", dom_stack},       {NULL, NULL}};
  static const luaL_Reg fns[] = {
      {"domain", l_domain}, {"name_stream", l_name_stream}, {"auto_scope", l_auto_scope},
      {"auto_range", l_auto_range}, {"auto_enabled", l_auto_enabled}, {NULL, NULL}};

  auto_setting = wl_setting_find("run", "nvtx");
  if (luaL_newmetatable(L, DOMAIN_MT)) {
    luaL_newlib(L, domain_methods); /* a table: method lookups stay in the VM */
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, domain_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, STRING_MT)) {
    lua_pushcfunction(L, string_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
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

  lua_newtable(L); /* wl.nvtx */
  push_domain(L, NULL);
  luaL_setfuncs(L, on_default, 1);
  luaL_setfuncs(L, fns, 0);
  lua_createtable(L, 0, (int)NCOLORS);
  for (size_t i = 0; i < NCOLORS; i++) {
    lua_pushinteger(L, colors[i].rgb);
    lua_setfield(L, -2, colors[i].name);
  }
  lua_setfield(L, -2, "colors");
  lua_createtable(L, 0, NKINDS);
  for (int i = 0; i < NKINDS; i++) {
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, color_rgb(kinds[i].color));
    lua_setfield(L, -2, "color");
    lua_pushstring(L, kinds[i].color);
    lua_setfield(L, -2, "color_name");
    lua_pushinteger(L, i + 1);
    lua_setfield(L, -2, "category");
    lua_setfield(L, -2, kinds[i].kind);
  }
  lua_setfield(L, -2, "kinds");
  lua_pushliteral(L, AUTO_DOMAIN);
  lua_setfield(L, -2, "auto_domain");
  lua_setfield(L, -2, "nvtx");
}
