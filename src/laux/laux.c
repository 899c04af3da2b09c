#include "laux.h"

#include "wl_exit.h"

#include <errno.h>
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

const char *wl_check_cstring(lua_State *L, int idx) {
  size_t len;
  const char *s = wl_check_lstring(L, idx, &len);
  if (strlen(s) != len) wl_arg_error(L, idx, "a string holding a NUL byte");
  return s;
}

int wl_push_failure(lua_State *L) {
  lua_pushnil(L);
  lua_pushstring(L, strerror(errno));
  return 2;
}

int wl_closed_error(lua_State *L, int arg, const char *fn, const char *cls, const char *verb) {
  bool method =
      strpbrk(fn, ":[(") != NULL; /* "class:method", "tensor[i]", "launch(n, stream)": 1 is self */
  if (method && arg == 1) return wl_raise(L, WL_EXIT_SCRIPT, "%s: %s used after %s", fn, cls, verb);
  return wl_raise(L, WL_EXIT_SCRIPT, "%s: %s (argument %d) used after %s", fn, cls,
                  method ? arg - 1 : arg, verb);
}

/* Of several unknown fields, the first in the order of their names is said: the same on every
 * run (lua_next's order follows string hashes, which Lua seeds at random). */
void wl_check_fields(lua_State *L, int arg, const char *fn, const char *const *known,
                     bool positional) {
  arg = lua_absindex(L, arg);
  int first = 0; /* the stack slot of the first unknown field's name, 0: none yet */
  lua_pushnil(L);
  while (lua_next(L, arg)) {
    lua_pop(L, 1);
    if (positional && lua_isinteger(L, -1)) continue;
    const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    bool ok = false;
    for (const char *const *p = known; k && *p; p++) ok = ok || strcmp(*p, k) == 0;
    if (ok) continue;
    luaL_tolstring(L, -1, NULL);
    if (!first) {
      lua_insert(L, -2); /* below the key, which lua_next needs on top */
      first = lua_gettop(L) - 1;
    } else if (strcmp(lua_tostring(L, -1), lua_tostring(L, first)) < 0) {
      lua_replace(L, first);
    } else {
      lua_pop(L, 1);
    }
  }
  if (first) {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (const char *const *p = known; *p; p++) {
      if (p != known) luaL_addstring(&b, ", ");
      luaL_addstring(&b, *p);
    }
    luaL_pushresult(&b);
    wl_raise(L, WL_EXIT_SCRIPT, "%s: unknown field '%s' (fields: %s)", fn, lua_tostring(L, first),
             lua_tostring(L, -1));
  }
  /* From here the fields are read from a plain copy of the table's own fields: a metatable's
   * __index cannot answer one field differently each time it is read (a size checked against
   * one tensor, then another tensor bound). */
  lua_newtable(L);
  lua_pushnil(L);
  while (lua_next(L, arg)) {
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, -4);
  }
  lua_replace(L, arg);
}

bool wl_bool_field(lua_State *L, int arg, const char *field, const char *fn, bool absent) {
  int t = lua_getfield(L, arg, field);
  bool v = lua_toboolean(L, -1);
  if (t != LUA_TNIL && t != LUA_TBOOLEAN)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: %s must be true or false, got a %s", fn, field,
             luaL_typename(L, -1));
  lua_pop(L, 1);
  return t == LUA_TNIL ? absent : v;
}
