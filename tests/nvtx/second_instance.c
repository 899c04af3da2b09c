/* A second NVTX instance in the wlrun process, for the recorder's spec (tests/e2e/nvtx_spec.lua):
 * a Lua C module with its own copy of the NVTX3 implementation (its globals are hidden in this
 * shared object), as a library such as cuDNN or NCCL carries one. The recorder must accept its
 * InitializeInjectionNvtx2 call after wlrun's. It uses the plain A calls, which wlrun does not.
 *   local second = package.loadlib(path, "luaopen_nvtx_second")() */
#include <nvtx3/nvToolsExt.h>

#include <lauxlib.h>
#include <lua.h>

static int push(lua_State *L) {
  lua_pushinteger(L, nvtxRangePushA(luaL_checkstring(L, 1)));
  return 1;
}

static int pop(lua_State *L) {
  lua_pushinteger(L, nvtxRangePop());
  return 1;
}

static int mark(lua_State *L) {
  nvtxMarkA(luaL_checkstring(L, 1));
  return 0;
}

__attribute__((visibility("default"))) int luaopen_nvtx_second(lua_State *L);

int luaopen_nvtx_second(lua_State *L) {
  static const luaL_Reg fns[] = {{"push", push}, {"pop", pop}, {"mark", mark}, {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
