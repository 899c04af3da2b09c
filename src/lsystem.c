/* Small host services for the Lua library: terminals, hashing, time stamps, the directory. */
#include "kernel_cache.h"
#include "lhost.h"

#include <lauxlib.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

/* core.isatty(fd) -> whether file descriptor fd (1 stdout, 2 stderr) is a terminal */
static int l_isatty(lua_State *L) {
  lua_pushboolean(L, isatty((int)luaL_checkinteger(L, 1)));
  return 1;
}

/* core.hash(text) -> "fnv1a128:<32 hex digits>" */
static int l_hash(lua_State *L) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  char hex[33];
  wl_cache_hash(s, len, hex);
  lua_pushfstring(L, "fnv1a128:%s", hex);
  return 1;
}

/* core.utc_now() -> "2026-11-29T22:31:07Z" */
static int l_utc_now(lua_State *L) {
  char buf[32];
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  lua_pushstring(L, buf);
  return 1;
}

static int l_cwd(lua_State *L) {
  char buf[PATH_MAX];
  if (!getcwd(buf, sizeof buf)) return 0;
  lua_pushstring(L, buf);
  return 1;
}

void wl_open_system(lua_State *L) {
  static const luaL_Reg fns[] = {{"isatty", l_isatty}, {"hash", l_hash}, {"utc_now", l_utc_now},
                                 {"cwd", l_cwd}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
