/* The tensor class assembled (wl.tensor's metatable and the functions of wlrun.core): the
 * methods of the tensor itself (cuda_tensor.c), its copies and elements (cuda_tensor_data.c) and
 * its views (cuda_tensor_view.c), each of which knows nothing of the others' tables. */
#include "cuda_tensor.h"
#include "wl_modules.h"

#include <lauxlib.h>

void wl_open_tensor(lua_State *L) {
  static const luaL_Reg fields[] = {
      {"__index", wl_tensor_index}, {"__newindex", wl_tensor_newindex}, {NULL, NULL}};
  luaL_newmetatable(L, TENSOR_MT);
  luaL_setfuncs(L, fields, 0);
  luaL_setfuncs(L, wl_tensor_core_meta, 0);
  lua_newtable(L);
  luaL_setfuncs(L, wl_tensor_core_methods, 0);
  luaL_setfuncs(L, wl_tensor_data_methods, 0);
  luaL_setfuncs(L, wl_tensor_view_methods, 0);
  lua_pushliteral(L, "tensor:fill"); /* fill and init: one function, named as called */
  lua_pushcclosure(L, wl_tensor_fill, 1);
  lua_setfield(L, -2, "fill");
  lua_pushliteral(L, "tensor:init");
  lua_pushcclosure(L, wl_tensor_fill, 1);
  lua_setfield(L, -2, "init");
  lua_setfield(L, -2, "methods");
  lua_pop(L, 1);
  luaL_setfuncs(L, wl_tensor_core_functions, 0);
}
