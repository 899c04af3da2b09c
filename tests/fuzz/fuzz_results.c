/* libFuzzer target: results documents as `wlrun compare` and `--resume` read them: the bytes go
 * through dkjson and wlrun's checks of a results document inside a real wlrun Lua host. Lua
 * errors are fine (they are the clear messages); crashes, PANICs and sanitizer reports are not. */
#include "cli.h"
#include "lhost.h"
#include "settings.h"

#include <lauxlib.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const check =
    "local text = ...\n"
    "local doc = require('dkjson').decode(text)\n"
    "if type(doc) ~= 'table' then return end\n"
    "local runner = require('wlrun.runner')\n"
    "for _, c in ipairs(type(doc.configurations) == 'table' and doc.configurations or {}) do\n"
    "  if type(c) == 'table' and type(c.params) == 'table' then runner.params_key(c.params) end\n"
    "end\n"
    "pcall(require('wlrun.report').render, doc, 'table')\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static lua_State *L;
  static struct wl_cli cli;
  if (!L) {
    wl_settings_reset();
    L = wl_host_new(&cli);
    if (!L) return 0;
  }
  int top = lua_gettop(L);
  if (luaL_loadbuffer(L, check, strlen(check), "=fuzz") == LUA_OK) {
    lua_pushlstring(L, (const char *)data, size);
    lua_pcall(L, 1, 0, 0);
  }
  lua_settop(L, top);
  return 0;
}
