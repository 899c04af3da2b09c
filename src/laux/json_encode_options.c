/* The options of json.encode (docs/architecture.md, "JSON"): indent, order, orders, objects,
 * arrays; each checked, with a message naming the option. */
#include "json_encode.h"
#include "wl_exit.h"

#include <lauxlib.h>
#include <stdint.h>
#include <string.h>

const char *wl_json_type_name(lua_State *L, int idx) {
  if (lua_type(L, idx) == LUA_TNUMBER) return lua_isinteger(L, idx) ? "integer" : "float";
  return luaL_typename(L, idx);
}

int wl_json_same(struct wl_json_name a, const char *s, size_t len) {
  return a.len == len && memcmp(a.s, s, len) == 0;
}

int wl_json_listed(struct wl_json_names list, struct wl_json_name key) {
  for (size_t i = 0; key.s && i < list.n; i++)
    if (wl_json_same(list.v[i], key.s, key.len)) return 1;
  return 0;
}


static size_t list_length(lua_State *L, int idx, const char *option, const char *sub) {
  if (!lua_istable(L, idx))
    wl_raise(L, WL_EXIT_SCRIPT, "json.encode: option '%s%s%s' must be a list of strings, not a %s",
             option, sub ? "." : "", sub ? sub : "", luaL_typename(L, idx));
  return lua_rawlen(L, idx);
}

/* v[0..n) from the list at idx (n = list_length); the strings stay anchored by the options */
static void fill_names(lua_State *L, int idx, const char *option, const char *sub,
                       struct wl_json_name *v, size_t n) {
  size_t count = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) { /* every key 1..n and a string at each, nothing else */
    lua_Integer i = lua_isinteger(L, -2) ? lua_tointeger(L, -2) : 0;
    if (i < 1 || (lua_Unsigned)i > n || lua_type(L, -1) != LUA_TSTRING) {
      count = SIZE_MAX;
      lua_pop(L, 2);
      break;
    }
    v[i - 1].s = lua_tolstring(L, -1, &v[i - 1].len);
    count++;
    lua_pop(L, 1);
  }
  if (count != n)
    wl_raise(L, WL_EXIT_SCRIPT, "json.encode: option '%s%s%s' must be a list of strings", option,
             sub ? "." : "", sub ? sub : "");
}

static struct wl_json_names read_names(lua_State *L, int idx, const char *option) {
  size_t n = list_length(L, idx, option, NULL);
  struct wl_json_name *v =
      lua_newuserdatauv(L, (n ? n : 1) * sizeof *v, 0); /* stays on the stack */
  fill_names(L, idx, option, NULL, v, n);
  return (struct wl_json_names){v, n};
}

/* objects and arrays: a list of keys, or a set ({params = true}) */
static struct wl_json_names read_key_set(lua_State *L, int idx, const char *option) {
  if (!lua_istable(L, idx))
    wl_raise(L, WL_EXIT_SCRIPT,
             "json.encode: option '%s' must be a list or a set of keys, not a %s", option,
             luaL_typename(L, idx));
  size_t n = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    int listed_name = lua_isinteger(L, -2) && lua_type(L, -1) == LUA_TSTRING;
    int set_member = lua_type(L, -2) == LUA_TSTRING && lua_toboolean(L, -1);
    if (!listed_name && !set_member)
      wl_raise(L, WL_EXIT_SCRIPT,
               "json.encode: option '%s' must be a list of keys or a set of keys (key = true)",
               option);
    n++;
    lua_pop(L, 1);
  }
  struct wl_json_name *v =
      lua_newuserdatauv(L, (n ? n : 1) * sizeof *v, 0); /* stays on the stack */
  size_t i = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    v[i].s = lua_tolstring(L, lua_type(L, -2) == LUA_TSTRING ? -2 : -1, &v[i].len);
    i++;
    lua_pop(L, 1);
  }
  return (struct wl_json_names){v, n};
}

static void read_orders(lua_State *L, struct wl_json_encoder *e, int idx) {
  if (!lua_istable(L, idx))
    wl_raise(L, WL_EXIT_SCRIPT,
             "json.encode: option 'orders' must be a table of lists of keys, not a %s",
             luaL_typename(L, idx));
  size_t n = 0, total = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      wl_raise(L, WL_EXIT_SCRIPT, "json.encode: option 'orders' must have string keys, not %s keys",
               wl_json_type_name(L, -2));
    total += list_length(L, lua_gettop(L), "orders", lua_tostring(L, -2));
    n++;
    lua_pop(L, 1);
  }
  struct wl_json_orders_entry *v =
      lua_newuserdatauv(L, n * sizeof *v + total * sizeof(struct wl_json_name) + 1, 0);
  struct wl_json_name *names = (struct wl_json_name *)(v + n);
  size_t i = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    v[i].key.s = lua_tolstring(L, -2, &v[i].key.len);
    size_t len = lua_rawlen(L, -1);
    fill_names(L, lua_gettop(L), "orders", v[i].key.s, names, len);
    v[i].order = (struct wl_json_names){names, len};
    names += len;
    i++;
    lua_pop(L, 1);
  }
  e->orders = v;
  e->norders = n;
}

static int option_given(lua_State *L, int opts, const char *name) {
  lua_pushstring(L, name);
  if (lua_rawget(L, opts) != LUA_TNIL) return lua_gettop(L);
  lua_pop(L, 1);
  return 0;
}

/* What the lists need stays on the stack. */
void wl_json_read_options(lua_State *L, struct wl_json_encoder *e, int opts) {
  static const char *const known[] = {"indent", "order", "orders", "objects", "arrays"};
  lua_pushnil(L);
  while (lua_next(L, opts)) {
    size_t i = 0;
    while (i < sizeof known / sizeof *known &&
           !(lua_type(L, -2) == LUA_TSTRING && strcmp(lua_tostring(L, -2), known[i]) == 0))
      i++;
    if (i == sizeof known / sizeof *known) {
      lua_pushvalue(L, -2);
      wl_raise(L, WL_EXIT_SCRIPT, "json.encode: unknown option '%s'", luaL_tolstring(L, -1, NULL));
    }
    lua_pop(L, 1);
  }
  int v;
  if ((v = option_given(L, opts, "indent"))) {
    if (!lua_isboolean(L, v))
      wl_raise(L, WL_EXIT_SCRIPT, "json.encode: option 'indent' must be a boolean, not a %s",
               luaL_typename(L, v));
    e->indent = lua_toboolean(L, v);
  }
  if ((v = option_given(L, opts, "order"))) e->order = read_names(L, v, "order");
  if ((v = option_given(L, opts, "orders"))) read_orders(L, e, v);
  if ((v = option_given(L, opts, "objects"))) e->objects = read_key_set(L, v, "objects");
  if ((v = option_given(L, opts, "arrays"))) e->arrays = read_key_set(L, v, "arrays");
  for (size_t i = 0; i < e->objects.n; i++)
    if (wl_json_listed(e->arrays, (struct wl_json_name){e->objects.v[i].s, e->objects.v[i].len}))
      wl_raise(L, WL_EXIT_SCRIPT, "json.encode: options 'objects' and 'arrays' both name '%s'",
               e->objects.v[i].s);
}
