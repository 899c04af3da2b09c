#include "wl_exit.h"

#include <errno.h>
#include <lauxlib.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const struct {
  enum wl_exit code;
  const char *kind;
} kinds[] = {
    {WL_EXIT_OK, "ok"},
    {WL_EXIT_SCRIPT, "script"},
    {WL_EXIT_SCRIPT, "crash"}, /* an isolated configuration's process died */
    {WL_EXIT_USAGE, "usage"},
    {WL_EXIT_CONFIG, "config"},
    {WL_EXIT_NO_DEVICE, "no_device"},
    {WL_EXIT_CUDA, "cuda"},
    {WL_EXIT_CUDA, "timeout"}, /* a configuration that hung and was stopped */
    {WL_EXIT_COMPILE, "compile"},
    {WL_EXIT_REGRESSION, "regression"},
    {WL_EXIT_IO, "io"},
    {WL_EXIT_INTERRUPTED, "interrupted"},
};

const char *wl_exit_kind_name(enum wl_exit code) {
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (kinds[i].code == code) return kinds[i].kind;
  return "script";
}

enum wl_exit wl_exit_from_kind(const char *kind) {
  if (kind)
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
      if (strcmp(kinds[i].kind, kind) == 0) return kinds[i].code;
  return WL_EXIT_SCRIPT;
}

int wl_user_level(lua_State *L, int level) {
  lua_Debug ar;
  int library =
      lua_getfield(L, LUA_REGISTRYINDEX, WL_LIBRARY_CHUNKS) == LUA_TTABLE ? lua_gettop(L) : 0;
  while (library && lua_getstack(L, level, &ar) && lua_getinfo(L, "S", &ar) && ar.what[0] != 'C') {
    bool own = lua_getfield(L, library, ar.source) != LUA_TNIL;
    lua_pop(L, 1);
    if (!own) break;
    level++;
  }
  lua_pop(L, 1);
  return lua_getstack(L, level, &ar) && lua_getinfo(L, "S", &ar) && ar.what[0] != 'C' ? level : 0;
}

/* Pushes "chunk:line: " as luaL_where(L, level) does, for the first level from the caller up
 * that is not a frame of wlrun's own Lua library: an error of a bound launch timed by wl.bench
 * names the script's wl.bench line, not bench.lua's. A C frame there (pcall), or no frame of
 * the script's at all, gives nothing, as luaL_where does for a C function. */
static void push_where(lua_State *L) {
  int level = wl_user_level(L, 1);
  if (level) luaL_where(L, level);
  else lua_pushliteral(L, ""); /* as luaL_where says of a C function's level */
}

int wl_raise(lua_State *L, enum wl_exit kind, const char *fmt, ...) {
  va_list ap;
  (void)lua_checkstack(L,
                       8); /* room for the error, from a caller deep in its own use of the stack */
  lua_createtable(L, 0, 2);
  lua_pushstring(L, wl_exit_kind_name(kind));
  lua_setfield(L, -2, "kind");
  push_where(L);
  /* vsnprintf, not lua_pushvfstring: callers use the whole printf syntax (%zu, %.1f, ...) */
  char small[512];
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  if ((size_t)n < sizeof small) {
    lua_pushstring(L, small);
  } else {
    char *big = lua_newuserdatauv(L, (size_t)n + 1, 0);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    lua_pushstring(L, big);
    lua_remove(L, -2);
  }
  bool bare = lua_rawlen(L, -2) == 0; /* raised with no Lua code to point at: no traceback */
  lua_concat(L, 2);
  lua_setfield(L, -2, "message");
  if (bare) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "bare");
  }
  luaL_getmetatable(L, "wlrun.error");
  lua_setmetatable(L, -2);
  return lua_error(L);
}

volatile sig_atomic_t wl_stop_requested = WL_STOP_NONE;
static char timeout_message[512] = "ran past its time limit and was stopped";

volatile sig_atomic_t wl_stop_signal;
const int wl_stop_signals[WL_NSTOP_SIGNALS] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

const char *wl_stop_signal_name(void) {
  switch (wl_stop_signal) {
  case 0: return NULL;
  case SIGINT: return "Ctrl-C";
  case SIGTERM: return "SIGTERM";
  case SIGHUP: return "SIGHUP";
  case SIGQUIT: return "SIGQUIT";
  case SIGUSR1: return "SIGUSR1";
  case SIGUSR2: return "SIGUSR2";
  case SIGPIPE: {
    static char pipe_name[128];
    snprintf(pipe_name, sizeof pipe_name, "cannot write to standard output: %s", strerror(EPIPE));
    return pipe_name;
  }
  default: return "a signal";
  }
}

volatile sig_atomic_t wl_stdout_held = -1;

bool wl_stdout_broken(void) {
  struct pollfd p = {.fd = wl_stdout_held >= 0 ? (int)wl_stdout_held : STDOUT_FILENO};
  return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) && !(p.revents & POLLNVAL);
}

int wl_stop_exit_code(void) {
  if (wl_stop_signal == SIGPIPE) return WL_EXIT_IO;
  return wl_stop_signal && wl_stop_signal != SIGINT ? 128 + wl_stop_signal : WL_EXIT_INTERRUPTED;
}

void wl_stop_request(enum wl_stop why) {
  if (wl_stop_requested == WL_STOP_NONE) wl_stop_requested = why;
}

void wl_stop_set_timeout_message(const char *message) {
  snprintf(timeout_message, sizeof timeout_message, "%s", message);
}

void wl_stop_check(lua_State *L) {
  sig_atomic_t why = wl_stop_requested;
  if (why == WL_STOP_NONE) return;
  wl_stop_requested = WL_STOP_NONE;
  lua_createtable(L, 0, 2);
  lua_pushstring(L, why == WL_STOP_TIMEOUT ? "timeout" : "interrupted");
  lua_setfield(L, -2, "kind");
  if (why == WL_STOP_TIMEOUT) lua_pushstring(L, timeout_message);
  else
    lua_pushfstring(L, "interrupted (%s)",
                    wl_stop_signal_name() ? wl_stop_signal_name() : "Ctrl-C");
  lua_setfield(L, -2, "message");
  luaL_getmetatable(L, "wlrun.error");
  lua_setmetatable(L, -2);
  lua_error(L);
}

void wl_warn(lua_State *L, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (lua_checkstack(L, 3) &&
      lua_getfield(L, LUA_REGISTRYINDEX, WL_WARNING_HANDLER) == LUA_TFUNCTION) {
    lua_pushstring(L, msg);
    if (lua_pcall(L, 1, 0, 0) == LUA_OK) return;
    lua_pop(L, 1); /* the handler's error: the warning still gets out below */
  } else {
    lua_pop(L, 1);
  }
  fprintf(stderr, "wlrun: warning: %s\n", msg);
  fflush(stderr);
}
