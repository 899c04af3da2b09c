/* Guards of C resources held by Lua (lua_guard.h). */
#include "lua_guard.h"

#include <lauxlib.h>
#include <string.h>

void *wl_guard_new(lua_State *L, size_t size, const char *name, lua_CFunction close) {
  void *p = lua_newuserdatauv(L, size, 0);
  memset(p, 0, size);
  if (luaL_newmetatable(L, name)) {
    lua_pushcfunction(L, close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, close);
    lua_setfield(L, -2, "__close");
  }
  lua_setmetatable(L, -2);
  return p;
}
