/* A C resource held by Lua while a C function uses it (liolib's pattern): a userdata whose
 * __gc and __close are one close function, which a to-be-closed slot runs when the function
 * returns or an error leaves it. */
#ifndef WL_LUA_GUARD_H
#define WL_LUA_GUARD_H

#include <lua.h>
#include <stddef.h>

/* Pushes a zeroed userdata of size bytes with the metatable name (made once: __gc and __close
 * are close) and returns it. The caller sets its fields to their empty state, then marks it
 * with lua_toclose; close must leave a closed guard empty, as it may run twice. */
void *wl_guard_new(lua_State *L, size_t size, const char *name, lua_CFunction close);

#endif
