/* libFuzzer target: wlrun.json (src/laux/json_decode.c, src/laux/json_encode.c). Any bytes through
 * json.decode; what it accepts is encoded, decoded again and encoded again: encode must write
 * what decode reads back, the second text must equal the first (compact and indented), and
 * without nulls (which leave holes in arrays) the two values must be equal. Decode refuses
 * nesting deeper than encode's 1000 levels, so encode writes whatever decode accepts. */
#include "ljson.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const check =
    "local json, text = ...\n"
    "local v, err = json.decode(text)\n"
    "if err == 'nesting deeper than 1000 levels' then return end\n"
    "if err ~= nil then\n"
    "  local line, column, position = select(3, json.decode(text))\n"
    "  assert(type(err) == 'string' and err:find('^invalid JSON at line %d+, column %d+: '), err)\n"
    "  assert(math.type(line) == 'integer' and math.type(column) == 'integer')\n"
    "  assert(position >= 1 and position <= #text + 1)\n"
    "  return\n"
    "end\n"
    "local ok, a = pcall(json.encode, v)\n"
    "assert(ok, a)\n"
    "local w, err2 = json.decode(a)\n"
    "assert(err2 == nil, err2)\n"
    "assert(json.encode(w) == a, 'encode(decode(encode(v))) differs from encode(v)')\n"
    "assert(json.encode(w, {indent = true}) == json.encode(v, {indent = true}), 'indented texts "
    "differ')\n"
    "assert(json.decode(json.encode(v, {indent = true})) ~= nil or a == 'null')\n"
    "if text:find('null', 1, true) then return end\n"
    "local function same(x, y)\n"
    "  if type(x) ~= type(y) then return false end\n"
    "  if type(x) == 'number' then\n"
    "    return math.type(x) == math.type(y) and x == y and (x ~= 0 or 1 / x == 1 / y)\n"
    "  end\n"
    "  if type(x) ~= 'table' then return x == y end\n"
    "  if getmetatable(x) ~= getmetatable(y) then return false end\n"
    "  for k, e in pairs(x) do if not same(e, y[k]) then return false end end\n"
    "  for k in pairs(y) do if x[k] == nil then return false end end\n"
    "  return true\n"
    "end\n"
    "assert(same(v, w), 'decode(encode(v)) differs from v')\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static lua_State *L;
  if (!L) {
    L = luaL_newstate();
    if (!L) return 0;
    luaL_openlibs(L);
    luaL_requiref(L, "wlrun.json", luaopen_wlrun_json, 0);
    lua_pop(L, 1);
  }
  int top = lua_gettop(L);
  if (luaL_loadbuffer(L, check, strlen(check), "=fuzz_json") != LUA_OK) abort();
  luaL_requiref(L, "wlrun.json", luaopen_wlrun_json, 0);
  lua_pushlstring(L, (const char *)data, size);
  if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
    fprintf(stderr, "fuzz_json: %s\n", lua_tostring(L, -1));
    abort();
  }
  lua_settop(L, top);
  lua_gc(L, LUA_GCSTEP, 0);
  return 0;
}
