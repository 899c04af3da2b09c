#include "laux.h"

#include "wl_exit.h"

#include <string.h>

/* Pushes the name under which package.loaded holds the function of ar ("wlrun.json.encode",
 * "string.rep" without "_G.") and returns 1, or pushes nothing and returns 0: the name that
 * luaL_argerror gives a function called from C (pcall), whose call site names none. The same
 * search as lauxlib's (two levels, in package.loaded's order). */
static int find_field(lua_State *L, int objidx, int level) {
  if (level == 0 || !lua_istable(L, -1)) return 0;
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    if (lua_type(L, -2) == LUA_TSTRING) {
      if (lua_rawequal(L, objidx, -1)) {
        lua_pop(L, 1); /* the value; the name stays */
        return 1;
      }
      if (find_field(L, objidx, level - 1)) { /* lib_name, lib_table, field_name */
        lua_pushliteral(L, ".");
        lua_replace(L, -3);
        lua_concat(L, 3);
        return 1;
      }
    }
    lua_pop(L, 1);
  }
  return 0;
}

static int push_global_name(lua_State *L, lua_Debug *ar) {
  int top = lua_gettop(L);
  lua_getinfo(L, "f", ar);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (!lua_checkstack(L, 6) || !find_field(L, top + 1, 2)) {
    lua_settop(L, top);
    return 0;
  }
  const char *name = lua_tostring(L, -1);
  if (strncmp(name, LUA_GNAME ".", 3) == 0) {
    lua_pushstring(L, name + 3);
    lua_remove(L, -2);
  }
  lua_copy(L, -1, top + 1);
  lua_settop(L, top + 1);
  return 1;
}

int wl_arg_error(lua_State *L, int arg, const char *extramsg) {
  lua_Debug ar;
  if (!lua_getstack(L, 0, &ar))
    return wl_raise(L, WL_EXIT_SCRIPT, "bad argument #%d (%s)", arg, extramsg);
  lua_getinfo(L, "n", &ar);
  if (strcmp(ar.namewhat, "method") == 0) {
    arg--; /* self is not counted */
    if (arg == 0)
      return wl_raise(L, WL_EXIT_SCRIPT, "calling '%s' on bad self (%s)", ar.name, extramsg);
  }
  const char *name = ar.name ? ar.name : push_global_name(L, &ar) ? lua_tostring(L, -1) : "?";
  return wl_raise(L, WL_EXIT_SCRIPT, "bad argument #%d to '%s' (%s)", arg, name, extramsg);
}

int wl_type_error(lua_State *L, int arg, const char *tname) {
  const char *actual;
  if (luaL_getmetafield(L, arg, "__name") == LUA_TSTRING) actual = lua_tostring(L, -1);
  else if (lua_type(L, arg) == LUA_TLIGHTUSERDATA) actual = "light userdata";
  else actual = luaL_typename(L, arg);
  return wl_arg_error(L, arg, lua_pushfstring(L, "%s expected, got %s", tname, actual));
}

int wl_integer_error(lua_State *L, int arg) {
  if (lua_isnumber(L, arg)) return wl_arg_error(L, arg, "number has no integer representation");
  return wl_type_error(L, arg, lua_typename(L, LUA_TNUMBER));
}

int wl_check_option(lua_State *L, int arg, const char *def, const char *const lst[]) {
  const char *name = def && lua_isnoneornil(L, arg) ? def : wl_check_string(L, arg);
  for (int i = 0; lst[i]; i++)
    if (strcmp(lst[i], name) == 0) return i;
  return wl_arg_error(L, arg, lua_pushfstring(L, "invalid option '%s'", name));
}

void wl_check_stack(lua_State *L, int space, const char *msg) {
  if (!lua_checkstack(L, space)) {
    if (msg) wl_raise(L, WL_EXIT_SCRIPT, "stack overflow (%s)", msg);
    else wl_raise(L, WL_EXIT_SCRIPT, "stack overflow");
  }
}
