/* Small host services for the Lua library: terminals, hashing, time stamps, the directory. */
#include "kernel_cache.h"
#include "wl_modules.h"

#include <stdbool.h>
#include <stdio.h>

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

static double monotonic(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Reads a child's command line (table at arg 1) and its options (table at arg 2: stdout,
 * stderr, env) and starts it: fork, redirections, environment, exec. Returns its pid. */
static pid_t start_child(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_Integer n = luaL_len(L, 1);
  luaL_argcheck(L, n >= 1 && n < 4096, 1, "a list of program and arguments expected");
  const char *out = NULL, *err = NULL;
  int env = 0;
  if (lua_istable(L, 2)) {
    lua_getfield(L, 2, "stdout");
    out = luaL_optstring(L, -1, NULL);
    lua_getfield(L, 2, "stderr");
    err = luaL_optstring(L, -1, NULL);
    if (lua_getfield(L, 2, "env") == LUA_TTABLE) env = lua_gettop(L);
  }
  const char **argv = lua_newuserdatauv(L, sizeof *argv * (size_t)(n + 1), 0);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, 1, i);
    argv[i - 1] = luaL_checkstring(L, -1); /* kept alive by the table */
    lua_pop(L, 1);
  }
  argv[n] = NULL;
  /* the environment variables to set, as NAME=value strings kept alive in a table */
  int nenv = 0;
  const char *envs[64];
  if (env) {
    lua_newtable(L);
    int keep = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, env)) {
      if (nenv == 64) return luaL_error(L, "at most 64 environment variables");
      envs[nenv++] = lua_pushfstring(L, "%s=%s", luaL_checkstring(L, -2), luaL_checkstring(L, -1));
      lua_rawseti(L, keep, nenv);
      lua_pop(L, 1); /* the value; the key stays for lua_next */
    }
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return luaL_error(L, "cannot start %s: %s", argv[0], strerror(errno));
  if (pid == 0) {
    for (int i = 0; i < nenv; i++) putenv((char *)envs[i]);
    const char *files[2] = {out, err};
    for (int i = 0; i < 2; i++) {
      if (!files[i]) continue;
      int fd = open(files[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0 || dup2(fd, i + 1) < 0) _exit(127);
      close(fd);
    }
    signal(SIGINT, SIG_DFL);
    execvp(argv[0], (char *const *)argv);
    _exit(127);
  }
  return pid;
}

/* core.spawn(argv, {timeout = s, stdout = path, stderr = path}) -> {how = "exit"|"signal"|
 * "timeout", code = n, signal = n, time = s}: runs a child process (no shell), waits at most
 * timeout seconds (0: no limit), then kills it (SIGTERM, and SIGKILL a second later). Ctrl-C in
 * the parent reaches the child too (same process group); the parent waits for it. */
static int l_spawn(lua_State *L) {
  double timeout = 0;
  if (lua_istable(L, 2)) {
    lua_getfield(L, 2, "timeout");
    timeout = luaL_optnumber(L, -1, 0);
    lua_pop(L, 1);
  }
  double t0 = monotonic();
  pid_t pid = start_child(L);
  int status = 0;
  bool timed_out = false;
  double killed_at = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return luaL_error(L, "waiting for a child process: %s", strerror(errno));
    double now = monotonic();
    if (timeout > 0 && !timed_out && now - t0 > timeout) {
      timed_out = true;
      killed_at = now;
      kill(pid, SIGTERM);
    } else if (timed_out && now - killed_at > 1.0) {
      kill(pid, SIGKILL);
    }
    struct timespec nap = {0, 2000000}; /* 2 ms */
    nanosleep(&nap, NULL);
  }
  lua_createtable(L, 0, 4);
  lua_pushnumber(L, monotonic() - t0);
  lua_setfield(L, -2, "time");
  if (timed_out) {
    lua_pushliteral(L, "timeout");
  } else if (WIFSIGNALED(status)) {
    lua_pushinteger(L, WTERMSIG(status));
    lua_setfield(L, -2, "signal");
    lua_pushliteral(L, "signal");
  } else {
    lua_pushinteger(L, WEXITSTATUS(status));
    lua_setfield(L, -2, "code");
    lua_pushliteral(L, "exit");
  }
  lua_setfield(L, -2, "how");
  return 1;
}

/* core.spawn_async(argv, {stdout = path, stderr = path, env = {NAME = value}}) -> pid: starts a
 * child and returns at once; core.wait_any(seconds) collects one that ended. */
static int l_spawn_async(lua_State *L) {
  lua_pushinteger(L, start_child(L));
  return 1;
}

/* core.wait_any([seconds]) -> {pid, how = "exit"|"signal", code, signal} for a child that
 * ended, or nil when none ended within seconds (default: wait as long as it takes) */
static int l_wait_any(lua_State *L) {
  double limit = luaL_optnumber(L, 1, -1), t0 = monotonic();
  for (;;) {
    int status;
    pid_t r = waitpid(-1, &status, WNOHANG);
    if (r > 0) {
      lua_createtable(L, 0, 4);
      lua_pushinteger(L, r);
      lua_setfield(L, -2, "pid");
      if (WIFSIGNALED(status)) {
        lua_pushinteger(L, WTERMSIG(status));
        lua_setfield(L, -2, "signal");
        lua_pushliteral(L, "signal");
      } else {
        lua_pushinteger(L, WEXITSTATUS(status));
        lua_setfield(L, -2, "code");
        lua_pushliteral(L, "exit");
      }
      lua_setfield(L, -2, "how");
      return 1;
    }
    if (r < 0 && errno == ECHILD) return 0;
    if (limit >= 0 && monotonic() - t0 > limit) return 0;
    struct timespec nap = {0, 2000000};
    nanosleep(&nap, NULL);
  }
}

/* core.kill(pid, signal) */
static int l_kill(lua_State *L) {
  lua_pushboolean(L, kill((pid_t)luaL_checkinteger(L, 1), (int)luaL_optinteger(L, 2, SIGTERM)) == 0);
  return 1;
}

/* core.list_dir(path) -> the names in a directory (without . and ..), or nil and the error */
static int l_list_dir(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  DIR *d = opendir(path);
  if (!d) {
    lua_pushnil(L);
    lua_pushstring(L, strerror(errno));
    return 2;
  }
  lua_newtable(L);
  lua_Integer n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
      lua_pushstring(L, e->d_name);
      lua_rawseti(L, -2, ++n);
    }
  closedir(d);
  return 1;
}

/* core.make_dir(path) -> true, or nil and the error */
static int l_make_dir(lua_State *L) {
  if (mkdir(luaL_checkstring(L, 1), 0700) != 0 && errno != EEXIST) {
    lua_pushnil(L);
    lua_pushstring(L, strerror(errno));
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* core.getpid() */
static int l_getpid(lua_State *L) {
  lua_pushinteger(L, getpid());
  return 1;
}

/* core.self_exe() -> the path of the running wlrun binary */
static int l_self_exe(lua_State *L) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return 0;
  buf[n] = '\0';
  lua_pushstring(L, buf);
  return 1;
}

void wl_open_system(lua_State *L) {
  static const luaL_Reg fns[] = {{"isatty", l_isatty}, {"hash", l_hash}, {"utc_now", l_utc_now},
                                 {"cwd", l_cwd}, {"spawn", l_spawn}, {"self_exe", l_self_exe},
                                 {"spawn_async", l_spawn_async}, {"wait_any", l_wait_any}, {"kill", l_kill},
                                 {"list_dir", l_list_dir}, {"make_dir", l_make_dir}, {"getpid", l_getpid},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
