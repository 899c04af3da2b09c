/* The wlrun.json module: encode and decode (json_encode.c, json_decode.c) and the two marks
 * that say how an empty table is written. A mark is one shared metatable, kept in the registry. */
#include "ljson.h"
#include "laux.h"
#include "wl_exit.h"

#include <lauxlib.h>

static int mark(lua_State *L, const char *name, const char *what, const char *other) {
  if (lua_isnoneornil(L, 1)) {
    lua_settop(L, 0);
    lua_newtable(L);
  } else {
    wl_check_type(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
  }
  if (lua_getmetatable(L, 1)) {
    luaL_getmetatable(L, name);
    if (lua_rawequal(L, -1, -2)) {
      lua_pop(L, 2);
      return 1; /* marked already */
    }
    luaL_getmetatable(L, other);
    if (lua_rawequal(L, -1, -3))
      return wl_raise(L, WL_EXIT_SCRIPT, "json.%s: the table is marked json.%s already", what,
                      what[0] == 'o' ? "array" : "object");
    return wl_raise(L, WL_EXIT_SCRIPT,
                    "json.%s: the table has a metatable already (a mark is a metatable)", what);
  }
  luaL_setmetatable(L, name);
  return 1;
}

static int is_marked(lua_State *L, const char *name) {
  int marked = 0;
  if (lua_type(L, 1) == LUA_TTABLE && lua_getmetatable(L, 1)) {
    luaL_getmetatable(L, name);
    marked = lua_rawequal(L, -1, -2);
  }
  lua_pushboolean(L, marked);
  return 1;
}

static int json_object(lua_State *L) {
  return mark(L, WL_JSON_OBJECT_MARK, "object", WL_JSON_ARRAY_MARK);
}
static int json_array(lua_State *L) {
  return mark(L, WL_JSON_ARRAY_MARK, "array", WL_JSON_OBJECT_MARK);
}
static int json_is_object(lua_State *L) { return is_marked(L, WL_JSON_OBJECT_MARK); }
static int json_is_array(lua_State *L) { return is_marked(L, WL_JSON_ARRAY_MARK); }

int luaopen_wlrun_json(lua_State *L) {
  static const luaL_Reg functions[] = {
      {"encode", wl_json_encode},
      {"decode", wl_json_decode},
      {"object", json_object},
      {"array", json_array},
      {"is_object", json_is_object},
      {"is_array", json_is_array},
      {NULL, NULL},
  };
  luaL_newmetatable(L, WL_JSON_OBJECT_MARK);
  luaL_newmetatable(L, WL_JSON_ARRAY_MARK);
  lua_pop(L, 2);
  luaL_newlib(L, functions);
  return 1;
}
