/* libFuzzer target: results documents as every reader takes them: the bytes go through the one
 * strict loader (wlrun.results.load) inside a real wlrun Lua host. Its errors are fine (they are
 * the clear messages); crashes, PANICs and sanitizer reports are not, nor is a document the
 * loader accepted that a printer then fails on (abort). */
#include "cli.h"
#include "lhost.h"
#include "settings.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const check =
    "local text = ...\n"
    "local ok, doc = pcall(require('wlrun.results').decode, text, 'fuzz')\n"
    "if not ok then return end\n"
    "local results, report = require('wlrun.results'), require('wlrun.report')\n"
    "for _, c in ipairs(doc.configurations) do\n"
    "  if c.params then results.key(c.params) end\n"
    "end\n"
    "for _, f in ipairs(report.formats) do\n"
    "  local fine, err = pcall(report.render, doc, f)\n"
    "  if not fine then return 'the ' .. f .. ' printer failed on an accepted document: ' .. "
    "tostring(err) end\n"
    "end\n";

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
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING) {
      fprintf(stderr, "%s\n", lua_tostring(L, -1));
      abort();
    }
  }
  lua_settop(L, top);
  return 0;
}
