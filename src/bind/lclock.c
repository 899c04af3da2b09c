/* Host clock primitives for Lua: wl.clock(), wl.clock_ns(), wl.sleep(); core.started. */
#include "wl_exit.h"
#include "laux.h"
#include "wl_modules.h"

#include <errno.h>
#include <lauxlib.h>
#include <math.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static struct timespec now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); /* cannot fail for CLOCK_MONOTONIC on Linux */
  return ts;
}

static double seconds(struct timespec ts) { return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9; }

static double started; /* the process's start on the monotonic clock (0: not marked) */

/* The process's start (its creation, before its exec and the libraries' initialisers, which
 * take tens of milliseconds with NVRTC's) on the monotonic clock, from /proc/self/stat's
 * starttime (clock ticks since boot, rounded down: up to 10 ms early); main's own start where
 * that cannot be read. */
void wl_clock_mark_start(void) {
  struct timespec mono = now(), boot;
  started = seconds(mono);
  char line[1024];
  FILE *f = fopen("/proc/self/stat", "r");
  if (!f) return;
  size_t n = fread(line, 1, sizeof line - 1, f);
  fclose(f);
  line[n] = '\0';
  const char *p = strrchr(line, ')'); /* the command's name may hold spaces and parentheses */
  unsigned long long ticks;
  long hz = sysconf(_SC_CLK_TCK);
  /* after the name: field 3 (state) to 21, then 22, starttime */
  if (!p || hz <= 0 ||
      sscanf(p + 1,
             " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
             &ticks) != 1 ||
      clock_gettime(CLOCK_BOOTTIME, &boot) != 0)
    return;
  double age = seconds(boot) - (double)ticks / (double)hz;
  if (age >= 0 && age < 60) started -= age;
}

/* seconds on the monotonic clock, as a float (resolution ~ns at the epoch of the boot) */
static int l_clock(lua_State *L) {
  lua_pushnumber(L, (lua_Number)seconds(now()));
  return 1;
}

/* nanoseconds on the monotonic clock, as an integer: exact differences */
static int l_clock_ns(lua_State *L) {
  struct timespec ts = now();
  lua_pushinteger(L, (lua_Integer)ts.tv_sec * 1000000000 + ts.tv_nsec);
  return 1;
}

/* sleeps for the given seconds, until a deadline on the monotonic clock, in slices of at most
 * 20 ms: Ctrl-C (or the time limit) stops it within a slice, at once when the signal comes to
 * this thread (EINTR) */
static int l_sleep(lua_State *L) {
  lua_Number s = wl_check_number(L, 1);
  wl_arg_check(L, s >= 0 && s <= 1e7 && !isnan(s), 1, "seconds from 0 to 1e7 expected");
  const long long slice = 20000000; /* ns */
  struct timespec t0 = now();
  long long end = (long long)t0.tv_sec * 1000000000 + t0.tv_nsec + (long long)(s * 1e9);
  for (;;) {
    wl_stop_check(L);
    struct timespec t = now();
    long long at = (long long)t.tv_sec * 1000000000 + t.tv_nsec;
    if (at >= end) return 0;
    long long next = end - at > slice ? at + slice : end;
    struct timespec until = {(time_t)(next / 1000000000), (long)(next % 1000000000)};
    int err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
    if (err != 0 && err != EINTR) return wl_raise(L, WL_EXIT_SCRIPT, "wl.sleep: %s", strerror(err));
  }
}

void wl_open_clock(lua_State *L) {
  static const luaL_Reg fns[] = {
      {"clock", l_clock}, {"clock_ns", l_clock_ns}, {"sleep", l_sleep}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  lua_pushnumber(L, (lua_Number)(started > 0 ? started : seconds(now())));
  lua_setfield(L, -2, "started"); /* where a run's own wall account begins (doc.wall) */
}
