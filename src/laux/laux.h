/* Argument checks whose errors have a kind: the luaL_check* family, for every binding.
 *
 * luaL_argerror raises a plain string, with no kind, placed at the Lua code that called the C
 * function (inside wlrun's own library when the library called it). These raise through
 * wl_raise instead: kind "script" (exit 1), placed at the script's line (wl_user_level), and
 * worded as luaL_argerror words them, so the messages stay familiar: "bad argument #2 to
 * 'percentile' (percentile from 0 to 100 expected)", "bad argument #1 to 'wait' (wlrun.event
 * expected, got string)". The checks are inline; only their errors are calls. */
#ifndef WL_LAUX_H
#define WL_LAUX_H

#include <lauxlib.h>
#include <lua.h>
#include <stdbool.h>
#include <stddef.h>

/* "bad argument #arg to 'f' (extramsg)" (a method's self not counted: "calling 'f' on bad
 * self (extramsg)"), f the function's name as luaL_argerror finds it; a script error. Never
 * returns. */
int wl_arg_error(lua_State *L, int arg, const char *extramsg);

/* wl_arg_error with "TNAME expected, got TYPE" (TYPE: the value's __name, or its type) */
int wl_type_error(lua_State *L, int arg, const char *tname);

/* luaL_argcheck's kinded twin */
#define wl_arg_check(L, cond, arg, extramsg) \
  ((void)((cond) || wl_arg_error((L), (arg), (extramsg))))

/* wl_check_integer's error: "number has no integer representation", or "number expected, got
 * TYPE" */
int wl_integer_error(lua_State *L, int arg);

static inline lua_Integer wl_check_integer(lua_State *L, int arg) {
  int isnum;
  lua_Integer d = lua_tointegerx(L, arg, &isnum);
  if (!isnum) wl_integer_error(L, arg);
  return d;
}

static inline lua_Integer wl_opt_integer(lua_State *L, int arg, lua_Integer def) {
  return lua_isnoneornil(L, arg) ? def : wl_check_integer(L, arg);
}

static inline lua_Number wl_check_number(lua_State *L, int arg) {
  int isnum;
  lua_Number d = lua_tonumberx(L, arg, &isnum);
  if (!isnum) wl_type_error(L, arg, lua_typename(L, LUA_TNUMBER));
  return d;
}

static inline lua_Number wl_opt_number(lua_State *L, int arg, lua_Number def) {
  return lua_isnoneornil(L, arg) ? def : wl_check_number(L, arg);
}

static inline const char *wl_check_lstring(lua_State *L, int arg, size_t *len) {
  const char *s = lua_tolstring(L, arg, len);
  if (!s) wl_type_error(L, arg, lua_typename(L, LUA_TSTRING));
  return s;
}

static inline const char *wl_check_string(lua_State *L, int arg) {
  return wl_check_lstring(L, arg, NULL);
}

static inline void wl_check_type(lua_State *L, int arg, int t) {
  if (lua_type(L, arg) != t) wl_type_error(L, arg, lua_typename(L, t));
}

static inline void wl_check_any(lua_State *L, int arg) {
  if (lua_type(L, arg) == LUA_TNONE) wl_arg_error(L, arg, "value expected");
}

static inline void *wl_check_udata(lua_State *L, int arg, const char *tname) {
  void *p = luaL_testudata(L, arg, tname);
  if (!p) wl_type_error(L, arg, tname);
  return p;
}

/* luaL_checkoption's twin: the index of the string argument arg (def when absent, if not NULL)
 * in lst */
int wl_check_option(lua_State *L, int arg, const char *def, const char *const lst[]);

/* luaL_checkstack's twin: room for space more values, or "stack overflow (msg)" */
void wl_check_stack(lua_State *L, int space, const char *msg);

/* the string argument idx, refused when it holds a NUL byte (C would see it cut short) */
const char *wl_check_cstring(lua_State *L, int idx);

/* nil and the reason (strerror of errno): 2 results, for the functions that return their failure */
int wl_push_failure(lua_State *L);

/* Raises "FN: CLASS used after VERB" for the closed object at stack index arg, naming the
 * argument when it is not the method's self: "event:query: event used after destroy",
 * "stream:wait: event (argument 1) used after destroy". FN is "class:method" for a method
 * (argument 1 is self) or a function's name ("wl.elapsed"). Never returns. */
int wl_closed_error(lua_State *L, int arg, const char *fn, const char *cls, const char *verb);

/* The one check of a creation table's keys in C: refuses a key of the table at stack index arg
 * that is not one of known (a NULL-terminated list): "FN: unknown field 'x' (fields: a, b)",
 * so that a typo is never ignored. positional: integer keys (the table's list part: a shape,
 * a kernel's source) are allowed; any other key that is not a string is refused. Then replaces
 * the table at arg with a plain copy of its own fields (no metatable): every field read after
 * the check is the value that was checked. */
void wl_check_fields(lua_State *L, int arg, const char *fn, const char *const *known,
                     bool positional);

/* The field of the table at arg as a boolean, absent when nil; anything else than a boolean
 * raises "FN: FIELD must be true or false, got a string" (a string "false" is true in Lua). */
bool wl_bool_field(lua_State *L, int arg, const char *field, const char *fn, bool absent);

#endif
