/* The stop signals, SIGPIPE and the time limit (lhost_signals.h). */
#include "lhost_signals.h"

#include "laux.h"
#include "side_thread.h"
#include "wl_exit.h"

#include <lauxlib.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static lua_State *running_state; /* the state inside lua_pcall, for the stop handler */
static volatile sig_atomic_t interrupt_pending;
static volatile sig_atomic_t
    ending; /* in the process's end: its waits (wl_host_finish_threads on) */

/* Ctrl-C or the time limit: stop the running Lua code at its next instruction with an
 * "interrupted" or "timeout" error (the pattern of lua.c's laction/lstop), unless a C loop of
 * the bindings raised it first (wl_stop_check). */
static void stop_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  wl_stop_check(L);
}

static void stop_lua(void) {
  if (running_state)
    lua_sethook(running_state, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

/* The signals that end a run as Ctrl-C does (wl_stop_signals; docs/reliability.md, "Interrupts"):
 * a terminal's (SIGINT, SIGQUIT, SIGHUP) and a scheduler's (SIGTERM at a time limit or scancel,
 * SIGUSR1/2 as a warning before it). The first of them stops the Lua code cleanly: the finished
 * configurations are written, and the run exits 130 for Ctrl-C, else 128 + the signal. Another one
 * more than a second later (the first did not get through, say a kernel that never ends) exits at
 * once; one sooner is the same signal delivered twice (to the process and to its group, as
 * timeout(1) does). In the process's end, where no Lua code runs, the first gives up its waits
 * (wl_side_thread_abandon), which then end the process with the clocks unlocked and the streams
 * flushed. */
static void on_stop_signal(int sig) {
  static struct timespec first;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (!wl_stop_signal || wl_stop_signal == SIGPIPE) wl_stop_signal = sig;
  if (ending && !wl_side_thread_abandon) {
    first = now;
    interrupt_pending = 1;
    wl_side_thread_abandon = 1;
    return;
  }
  if (interrupt_pending) {
    if (now.tv_sec - first.tv_sec + (now.tv_nsec - first.tv_nsec) * 1e-9 > 1.0) {
      static const char msg[] = "\nwlrun: interrupted again, exiting at once\n";
      if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) { /* nothing more to do */
      }
      _exit(wl_stop_exit_code());
    }
    return;
  }
  first = now;
  interrupt_pending = 1;
  wl_stop_request(WL_STOP_INTERRUPT);
  stop_lua();
}

/* The time limit of core.time_limit: the first SIGALRM stops the code like Ctrl-C, with an error
 * of kind timeout; the next, a second later (the stop did not get through: a call that never
 * returns, a pcall that swallowed it), exits at once. */
static char limit_exit_message[600];
static volatile sig_atomic_t limit_stopped;
static bool limit_armed;

static void on_alarm(int sig) {
  (void)sig;
  if (limit_stopped) {
    if (write(STDERR_FILENO, limit_exit_message, strlen(limit_exit_message)) <
        0) { /* nothing more to do */
    }
    _exit(WL_EXIT_CUDA); /* the exit code of kind timeout */
  }
  limit_stopped = 1;
  wl_stop_request(WL_STOP_TIMEOUT);
  stop_lua();
}

/* SIGPIPE: the write that raised it fails with EPIPE. One to standard output whose reader is
 * gone (`| head -1`) stops the run as a stop signal does, once; nothing more can reach that
 * reader, so the run ends with what it finished (exit 9). A broken pipe of the script's own (a
 * program of io.popen that ended) is only the error of its write. In the process's end no Lua
 * code runs: the check of standard output there says so. */
static volatile sig_atomic_t stdout_closed;

static void on_sigpipe(int sig) {
  (void)sig;
  if (stdout_closed || !wl_stdout_broken()) return;
  stdout_closed = 1;
  if (wl_stop_signal) return; /* a signal's stop is under way: it names the end */
  wl_stop_signal = SIGPIPE;
  if (ending) return;
  wl_stop_request(WL_STOP_INTERRUPT);
  stop_lua();
}

/* core.stop_signal() -> "Ctrl-C", "SIGTERM", ... : the signal that interrupted the run, or nil */
static int core_stop_signal(lua_State *L) {
  const char *name = wl_stop_signal_name();
  if (name) lua_pushstring(L, name);
  else lua_pushnil(L);
  return 1;
}

/* core.stdout_closed() -> closed, stopped: whether a write found standard output's reader gone,
 * and whether that asked for the run's stop (no signal came before it) */
static int core_stdout_closed(lua_State *L) {
  lua_pushboolean(L, stdout_closed);
  lua_pushboolean(L, stdout_closed && wl_stop_signal == SIGPIPE);
  return 2;
}

/* core.time_limit(seconds, message): from now, the running code is stopped after seconds with
 * an error of kind timeout and this message, and the process exits (code 5) a second later if
 * it still runs; core.time_limit(0) cancels. */
static int core_time_limit(lua_State *L) {
  lua_Number s = wl_check_number(L, 1);
  wl_arg_check(L, s >= 0 && s <= 1e7, 1, "seconds from 0 to 1e7 expected");
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  limit_stopped = 0;
  limit_armed = s > 0;
  if (s == 0) return 0;
  const char *msg = wl_check_string(L, 2);
  wl_stop_set_timeout_message(msg);
  snprintf(limit_exit_message, sizeof limit_exit_message,
           "\nwlrun: %s; still running a second later, exiting at once\n", msg);
  struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, NULL);
  long us = (long)(s * 1e6) % 1000000;
  struct itimerval t = {{1, 0}, {(time_t)s, us > 0 || s >= 1 ? us : 1}};
  setitimer(ITIMER_REAL, &t, NULL);
  return 0;
}

void wl_signals_install(bool worker) {
  struct sigaction sa = {.sa_handler = on_stop_signal};
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < WL_NSTOP_SIGNALS; i++) {
    struct sigaction old;
    /* nohup's ignored SIGHUP stays ignored: a run kept alive past its terminal on purpose */
    if (wl_stop_signals[i] == SIGHUP && sigaction(SIGHUP, NULL, &old) == 0 &&
        old.sa_handler == SIG_IGN)
      continue;
    if (worker && wl_stop_signals[i] != SIGINT) continue;
    sigaction(wl_stop_signals[i], &sa, NULL);
  }
  /* a closed pipe is a write that fails (EPIPE; on standard output a stop, exit 9, every -o
   * still written), not a silent death. A handler, not SIG_IGN: an ignored signal would stay
   * ignored in every program the script starts (os.execute, io.popen), a handler goes back to the
   * default at exec */
  struct sigaction pipe_sa = {.sa_handler = on_sigpipe};
  sigemptyset(&pipe_sa.sa_mask);
  sigaction(SIGPIPE, &pipe_sa, NULL);
}

void wl_signals_running(lua_State *L) {
  running_state = L;
  if (L && (interrupt_pending || stdout_closed)) /* the stop came between two protected calls */
    lua_sethook(L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
  if (!L && limit_armed) {
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    limit_armed = false;
  }
}

void wl_signals_ending(void) { ending = 1; }

void wl_signals_open(lua_State *L) {
  lua_pushcfunction(L, core_time_limit);
  lua_setfield(L, -2, "time_limit");
  lua_pushcfunction(L, core_stop_signal);
  lua_setfield(L, -2, "stop_signal");
  lua_pushcfunction(L, core_stdout_closed);
  lua_setfield(L, -2, "stdout_closed");
}
