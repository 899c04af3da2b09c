/* Small host services for the Lua library (wlrun.process): terminals, hashing, time stamps,
 * child processes (argv, never a shell), finding a program; files and directories are in
 * lsystem_files.c. */
#define _GNU_SOURCE /* sched_getaffinity */
#include "embedded.h"
#include "kernel_cache.h"
#include "laux.h"
#include "lsystem.h"
#include "wl_exit.h"
#include "wl_modules.h"

#include <stdbool.h>
#include <stdio.h>

#include <errno.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* core.isatty(fd) -> whether file descriptor fd (1 stdout, 2 stderr) is a terminal */
static int l_isatty(lua_State *L) {
  lua_pushboolean(L, isatty((int)wl_check_integer(L, 1)));
  return 1;
}

/* core.hash(text) -> "fnv1a128:<32 hex digits>" */
static int l_hash(lua_State *L) {
  size_t len;
  const char *s = wl_check_lstring(L, 1, &len);
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

/* A string argument that is a path or an argument of a program: C sees it up to its first NUL,
 * so one holding a NUL is refused rather than cut short. */
static const char *opt_field(lua_State *L, int opts, const char *name) {
  lua_getfield(L, opts, name);
  if (lua_isnil(L, -1)) return NULL;
  const char *s = lua_tostring(L, -1);
  if (!s || strlen(s) != lua_rawlen(L, -1))
    wl_raise(L, WL_EXIT_SCRIPT, "option '%s': a string without NUL bytes expected", name);
  return s; /* kept alive by the options table */
}

/* what a child is started with: strings kept alive by the arguments' tables and the stack */
struct child {
  const char **argv;                /* the command line, NULL-terminated */
  const char *in, *out, *err, *cwd; /* stdin, stdout, stderr (paths), the child's directory */
  bool die_with_parent;             /* SIGKILL when this process ends first */
  int nenv;
  const char *envs[64]; /* NAME=value */
};

/* The command line's length: the list at argument 1 holds a program and its arguments. */
static lua_Integer command_line_length(lua_State *L) {
  wl_check_type(L, 1, LUA_TTABLE);
  lua_Integer n = luaL_len(L, 1);
  wl_arg_check(L, n >= 1 && n < 4096, 1, "a list of program and arguments expected");
  return n;
}

/* The command line of n words: the list at argument 1, each a string without NUL bytes
 * (pushed: its array, a userdata). */
static void read_command_line(lua_State *L, lua_Integer n, struct child *c) {
  c->argv = lua_newuserdatauv(L, sizeof *c->argv * (size_t)(n + 1), 0);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, 1, i);
    size_t len;
    c->argv[i - 1] = lua_tolstring(L, -1, &len); /* kept alive by the table */
    if (!c->argv[i - 1] || strlen(c->argv[i - 1]) != len)
      wl_raise(L, WL_EXIT_SCRIPT,
               "argument %d of the command line: a string without NUL bytes expected", (int)i);
    lua_pop(L, 1);
  }
  c->argv[n] = NULL;
}

/* The environment variables to set (the table at env), as NAME=value strings kept alive in a
 * table (pushed). */
static void read_env(lua_State *L, int env, struct child *c) {
  lua_newtable(L);
  int keep = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, env)) {
    if (c->nenv == 64) wl_raise(L, WL_EXIT_SCRIPT, "at most 64 environment variables");
    c->envs[c->nenv++] =
        lua_pushfstring(L, "%s=%s", wl_check_string(L, -2), wl_check_string(L, -1));
    lua_rawseti(L, keep, c->nenv);
    lua_pop(L, 1); /* the value; the key stays for lua_next */
  }
}

/* The options (the table at argument 2, if any): stdin, stdout, stderr, cwd, die_with_parent;
 * returns the stack index of env (pushed), 0 when none. */
static int read_child_options(lua_State *L, struct child *c) {
  if (!lua_istable(L, 2)) return 0;
  lua_getfield(L, 2, "die_with_parent");
  c->die_with_parent = lua_toboolean(L, -1);
  lua_pop(L, 1);
  c->in = opt_field(L, 2, "stdin");
  c->out = opt_field(L, 2, "stdout");
  c->err = opt_field(L, 2, "stderr");
  c->cwd = opt_field(L, 2, "cwd");
  return lua_getfield(L, 2, "env") == LUA_TTABLE ? lua_gettop(L) : 0;
}

/* In the child: its standard input and outputs (stderr the same file as stdout when the same
 * path); false when one cannot be opened. */
static bool redirect_child(const struct child *c) {
  if (c->in) {
    int fd = open(c->in, O_RDONLY);
    if (fd < 0 || dup2(fd, 0) < 0) return false;
    if (fd != 0) close(fd);
  }
  const char *files[2] = {c->out, c->err};
  for (int i = 0; i < 2; i++) {
    if (!files[i]) continue;
    if (i == 1 && c->out && strcmp(c->out, c->err) == 0) {
      if (dup2(1, 2) < 0) return false;
      continue;
    }
    int fd = open(files[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, i + 1) < 0) return false;
    if (fd != i + 1) close(fd);
  }
  return true;
}

/* In the child (after fork): the environment, redirections, directory, signals, exec; never
 * returns (127 for a child that cannot do its part). */
static void exec_child(const struct child *c, pid_t parent) {
  /* a program that must not outlive wlrun (wl.command's): killed if wlrun ends first */
  if (c->die_with_parent && (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent))
    _exit(127);
  for (int i = 0; i < c->nenv; i++)
    if (putenv((char *)c->envs[i]) != 0) _exit(127);
  if (!redirect_child(c)) _exit(127);
  if (c->cwd && chdir(c->cwd) != 0) _exit(127);
  /* a clean start whatever wlrun inherited: SIGCHLD ignored makes a program's waitpid fail
   * (its children are reaped for it), SIGPIPE ignored hides a closed pipe, a blocked signal
   * stays blocked across exec; a deliberate SIGHUP of nohup stays ignored */
  signal(SIGINT, SIG_DFL);
  for (int i = 0; i < WL_NSTOP_SIGNALS; i++) { /* wlrun's handlers, before the signals are let in */
    struct sigaction old;
    if (sigaction(wl_stop_signals[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
      signal(wl_stop_signals[i], SIG_DFL);
  }
  signal(SIGCHLD, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  if (sigprocmask(SIG_SETMASK, &none, NULL) != 0) _exit(127);
  execvp(c->argv[0], (char *const *)c->argv);
  _exit(127);
}

/* Reads a child's command line (table at arg 1) and its options (table at arg 2: stdin, stdout,
 * stderr: paths, opened before the change of directory, stderr the same file as stdout when the
 * same path; cwd: the child's directory; env; die_with_parent: SIGKILL when this process ends
 * first); what it pushes keeps the strings alive. Raises on a bad argument. */
static void read_child(lua_State *L, struct child *c) {
  lua_Integer n = command_line_length(L);
  int env = read_child_options(L, c);
  read_command_line(L, n, c);
  if (env) read_env(L, env, c);
}

/* Starts the child that read_child read: fork, redirections, directory, environment, exec (no
 * shell). Returns its pid, or -1 (errno) when fork fails; a child that cannot do its part exits
 * 127. Raises nothing. */
static pid_t fork_child(const struct child *c) {
  fflush(stdout);
  fflush(stderr);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) exec_child(c, parent);
  return pid;
}

/* the error of a fork that failed (errno e) */
static int start_failed(lua_State *L, const struct child *c, int e) {
  return wl_raise(L, WL_EXIT_IO, "cannot start %s: %s", c->argv[0], strerror(e));
}

/* the child of the arguments at 1 and 2, started: its pid */
static pid_t start_child(lua_State *L) {
  struct child c = {0};
  read_child(L, &c);
  pid_t pid = fork_child(&c);
  if (pid < 0) start_failed(L, &c, errno);
  return pid;
}

/* spawn's forward_signals: the child that the signals which end a run (wl_stop_signals) are
 * passed on to, and the first such signal that came */
static volatile sig_atomic_t forward_to, forwarded;

static void forward_signal(int sig, siginfo_t *info, void *context) {
  (void)context;
  if (!forwarded) forwarded = sig;
  if (!wl_stop_signal || wl_stop_signal == SIGPIPE)
    wl_stop_signal = sig; /* the run's message and exit code name it */
  /* Ctrl-C at the terminal (si_code SI_KERNEL) went to the whole foreground process group,
   * the child included: passing it on would deliver it twice */
  if (forward_to > 0 && !(sig == SIGINT && info && info->si_code == SI_KERNEL))
    kill((pid_t)forward_to, sig);
}

struct forwarding {
  bool on;
  int n; /* the handlers set, in wl_stop_signals' order */
  struct sigaction old[WL_NSTOP_SIGNALS];
};

static void forwarding_end(struct forwarding *f) {
  if (!f->on) return;
  f->on = false;
  forward_to = 0;
  for (int i = 0; i < f->n; i++) sigaction(wl_stop_signals[i], &f->old[i], NULL);
}

/* starts the child (argv and options at 1 and 2) with the run's stop signals passed on to it;
 * its arguments are read before the handlers are set, so that a bad one raises with none set */
static pid_t start_forwarding(lua_State *L, struct forwarding *f) {
  struct child c = {0};
  read_child(L, &c);
  struct sigaction sa = {.sa_sigaction = forward_signal, .sa_flags = SA_SIGINFO | SA_RESTART};
  sigemptyset(&sa.sa_mask);
  forward_to = 0;
  /* a stop signal that came before this child existed (wlrun is stopping): the child gets it too,
   * as soon as it starts, instead of running to its end while wlrun waits for it */
  forwarded = wl_stop_requested == WL_STOP_INTERRUPT && wl_stop_signal ? wl_stop_signal : 0;
  if (forwarded == SIGPIPE) forwarded = SIGTERM; /* a closed standard output: asked to end */
  f->on = true;
  sigset_t stops, before;
  sigemptyset(&stops);
  for (f->n = 0; f->n < WL_NSTOP_SIGNALS; f->n++) {
    int sig = wl_stop_signals[f->n];
    sigaddset(&stops, sig);
    /* one ignored on purpose (nohup's SIGHUP) stays ignored, here and in the child */
    bool set = sigaction(sig, NULL, &f->old[f->n]) == 0 &&
               (f->old[f->n].sa_handler == SIG_IGN || sigaction(sig, &sa, NULL) == 0);
    if (!set) {
      int e = errno;
      forwarding_end(f);
      wl_raise(L, WL_EXIT_SCRIPT, "cannot pass signals on to a child: %s", strerror(e));
    }
  }
  /* held until the child is known: one that comes meanwhile is passed on to it, not swallowed by
   * the child's copy of the handler before its exec (exec_child puts the default back first) */
  (void)pthread_sigmask(SIG_BLOCK, &stops, &before);
  pid_t pid = fork_child(&c);
  int e = errno;
  if (pid > 0) forward_to = pid;
  if (pid > 0 && forwarded) kill(pid, forwarded); /* one that came before there was a child */
  (void)pthread_sigmask(SIG_SETMASK, &before, NULL);
  if (pid < 0) {
    forwarding_end(f);
    start_failed(L, &c, e);
  }
  return pid;
}

/* into the table on top: how = "exit" with code, or "signal" with signal, from a wait status */
static void set_how(lua_State *L, int status) {
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
}

/* {pid, how = "exit"|"signal", code, signal}: how the child pid ended */
static void push_ended(lua_State *L, pid_t pid, int status) {
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, pid);
  lua_setfield(L, -2, "pid");
  set_how(L, status);
}

/* a descriptor that becomes readable when child pid ends (Linux's pidfd), or -1 where the kernel
 * has none: the wait below then naps 2 ms at a time */
static int child_fd(pid_t pid) {
#ifdef SYS_pidfd_open
  return (int)syscall(SYS_pidfd_open, pid, 0);
#else
  (void)pid;
  return -1;
#endif
}

/* sleeps until the child behind *fd ends, a signal comes or s seconds pass: a traced program's
 * steps are timed while wlrun waits, and a wake-up every 2 ms would share their CPUs */
static void nap_for_child(int *fd, double s) {
  if (*fd >= 0) {
    struct pollfd p = {.fd = *fd, .events = POLLIN};
    int ms = s > 0 ? (int)(s * 1000) + 1 : 1;
    if (poll(&p, 1, ms) >= 0 || errno == EINTR) return;
    close(*fd);
    *fd = -1;
  }
  struct timespec nap = {0, 2000000}; /* 2 ms */
  nanosleep(&nap, NULL);
}

/* core.spawn(argv, {timeout = s, stdin, stdout, stderr = path, cwd = dir, env, forward_signals})
 * -> {how = "exit"|"signal"|"timeout", code = n, signal = n, time = s, interrupted = n}: runs a
 * child process (no shell), waits at most timeout seconds (0: no limit), then kills it (SIGTERM,
 * and SIGKILL a second later). Ctrl-C in the parent reaches the child too (same process group);
 * the parent waits for it. With forward_signals, SIGINT and SIGTERM sent to the parent while it
 * waits are passed on to the child instead of stopping the parent, which goes on waiting;
 * `interrupted` is the first such signal; `waited`: "pidfd" (the child's end polled) or "naps"
 * (2 ms at a time, where the kernel gives no pidfd). */
static int l_spawn(lua_State *L) {
  double timeout = 0;
  bool forward = false;
  if (lua_istable(L, 2)) {
    lua_getfield(L, 2, "timeout");
    timeout = wl_opt_number(L, -1, 0);
    lua_getfield(L, 2, "forward_signals");
    forward = lua_toboolean(L, -1);
    lua_pop(L, 2);
  }
  double t0 = monotonic();
  struct forwarding fw = {.on = false};
  pid_t pid = forward ? start_forwarding(L, &fw) : start_child(L);
  int fd = child_fd(pid);
  int status = 0;
  bool timed_out = false, killed = false;
  double killed_at = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      int e = errno;
      forwarding_end(&fw);
      if (fd >= 0) close(fd);
      return wl_raise(L, WL_EXIT_SCRIPT, "waiting for a child process: %s", strerror(e));
    }
    double now = monotonic(), until = now + 0.1;
    if (timeout > 0 && !timed_out && now - t0 > timeout) {
      timed_out = true;
      killed_at = now;
      kill(pid, SIGTERM);
    } else if (timed_out && !killed && now - killed_at > 1.0) {
      kill(pid, SIGKILL);
      killed = true;
    }
    if (timeout > 0 && !timed_out && t0 + timeout < until) until = t0 + timeout;
    if (timed_out && !killed && killed_at + 1.0 < until) until = killed_at + 1.0;
    nap_for_child(&fd, until - now);
  }
  forwarding_end(&fw);
  bool polled = fd >= 0;
  if (fd >= 0) close(fd);
  lua_createtable(L, 0, 6);
  lua_pushstring(L, polled ? "pidfd" : "naps");
  lua_setfield(L, -2, "waited");
  if (forward && forwarded) {
    lua_pushinteger(L, forwarded);
    lua_setfield(L, -2, "interrupted");
  }
  lua_pushnumber(L, monotonic() - t0);
  lua_setfield(L, -2, "time");
  if (timed_out) {
    lua_pushliteral(L, "timeout");
    lua_setfield(L, -2, "how");
  } else {
    set_how(L, status);
  }
  return 1;
}

/* core.spawn_async(argv, {stdout = path, stderr = path, env = {NAME = value}}) -> pid: starts a
 * child and returns at once; core.wait_any(seconds) collects one that ended. */
static int l_spawn_async(lua_State *L) {
  lua_pushinteger(L, start_child(L));
  return 1;
}

/* waits for the child pid (-1: any child), at most limit seconds (< 0: as long as it takes):
 * pushes how it ended and returns 1, or returns 0 (nothing pushed) when none ended in time;
 * where there is no such child, pushes nil and "no such child" for a pid (returns 2), nothing
 * for any (returns 0). A stop asked meanwhile (Ctrl-C, the time limit) raises its error at once. */
static int wait_child(lua_State *L, pid_t pid, double limit, bool stops) {
  double t0 = monotonic();
  for (;;) {
    int status;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r > 0) {
      push_ended(L, r, status);
      return 1;
    }
    if (r < 0 && errno == ECHILD) {
      if (pid < 0) return 0;
      lua_pushnil(L);
      lua_pushliteral(L, "no such child");
      return 2;
    }
    if (limit >= 0 && monotonic() - t0 > limit) return 0;
    if (stops && wl_stop_pending())
      wl_stop_check(L); /* Ctrl-C: the caller's error now, not after the wait */
    struct timespec nap = {0, 1000000};
    nanosleep(&nap, NULL);
  }
}

/* core.wait_any([seconds]) -> {pid, how = "exit"|"signal", code, signal} for a child that
 * ended, or nil when none ended within seconds (default: wait as long as it takes) */
static int l_wait_any(lua_State *L) { return wait_child(L, -1, wl_opt_number(L, 1, -1), true); }

/* core.wait_pid(pid [, seconds [, through_stops]]) -> the same for the child pid (started by
 * spawn_async); nil when it did not end within seconds; nil, "no such child" when it is no child
 * of this process (collected already, or never one). through_stops: a stop asked meanwhile does
 * not end the wait (a child that is ending on its own is waited for) */
static int l_wait_pid(lua_State *L) {
  lua_Integer pid = wl_check_integer(L, 1);
  wl_arg_check(L, pid > 0, 1, "a process id expected");
  return wait_child(L, (pid_t)pid, wl_opt_number(L, 2, -1), !lua_toboolean(L, 3));
}

/* core.cpu_count() -> the CPUs this process may run on (its affinity: the share of the machine a
 * cgroup or taskset gives it), at least 1 */
static int l_cpu_count(lua_State *L) {
  cpu_set_t set;
  long n =
      sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
  lua_pushinteger(L, n > 0 ? n : 1);
  return 1;
}

/* core.kill(pid, signal) */
static int l_kill(lua_State *L) {
  lua_pushboolean(L, kill((pid_t)wl_check_integer(L, 1), (int)wl_opt_integer(L, 2, SIGTERM)) == 0);
  return 1;
}

/* nil and the reason (strerror of errno), for the functions that return their failure */
static bool is_executable(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* core.find_program(name) -> the absolute path of the program `name`: itself when it holds a
 * '/', else the first executable file of that name in $PATH, as execvp(3) looks; or nil and
 * the reason */
static int l_find_program(lua_State *L) {
  const char *name = wl_check_cstring(L, 1);
  char found[PATH_MAX];
  bool ok = false;
  if (*name == '\0') {
    /* nothing to find */
  } else if (strchr(name, '/')) {
    ok = is_executable(name) && snprintf(found, sizeof found, "%s", name) < (int)sizeof found;
  } else {
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; !ok; p++) {
      size_t len = strcspn(p, ":");
      int n = len == 0 ? snprintf(found, sizeof found, "./%s", name)
                       : snprintf(found, sizeof found, "%.*s/%s", (int)len, p, name);
      ok = n > 0 && (size_t)n < sizeof found && is_executable(found);
      p += len;
      if (*p == '\0') break;
    }
  }
  if (!ok) {
    lua_pushnil(L);
    lua_pushstring(L, strchr(name, '/') ? "not an executable file" : "not found in PATH");
    return 2;
  }
  if (found[0] == '/') {
    lua_pushstring(L, found);
    return 1;
  }
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) return wl_push_failure(L);
  lua_pushfstring(L, "%s/%s", cwd, found);
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

/* process.embedded_file(path) -> the text of a file embedded in the binary (embedded.h), or nil */
static int l_embedded_file(lua_State *L) {
  const struct wl_embedded_file *f = wl_embedded_find(wl_check_string(L, 1));
  if (!f) return 0;
  lua_pushlstring(L, (const char *)f->data, f->size);
  return 1;
}

/* process.hold_stdout() -> fd: from now on what anyone writes to standard output (a script's
 * print, a library's printf) goes to standard error; fd is the real standard output, which
 * process.release_stdout(fd) puts back. For reports that must parse (--format json). */
static int l_hold_stdout(lua_State *L) {
  fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  if (saved < 0) return wl_raise(L, WL_EXIT_IO, "cannot hold standard output: %s", strerror(errno));
  if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    int e = errno;
    close(saved);
    return wl_raise(L, WL_EXIT_IO, "cannot hold standard output: %s", strerror(e));
  }
  wl_stdout_held = saved;
  lua_pushinteger(L, saved);
  return 1;
}

static int l_release_stdout(lua_State *L) {
  int saved = (int)wl_check_integer(L, 1);
  fflush(stdout);
  if (dup2(saved, STDOUT_FILENO) < 0)
    return wl_raise(L, WL_EXIT_IO, "cannot give standard output back: %s", strerror(errno));
  wl_stdout_held = -1;
  close(saved);
  return 0;
}

void wl_open_system(lua_State *L) {
  static const luaL_Reg fns[] = {{"isatty", l_isatty},
                                 {"hash", l_hash},
                                 {"utc_now", l_utc_now},
                                 {"cwd", l_cwd},
                                 {"spawn", l_spawn},
                                 {"self_exe", l_self_exe},
                                 {"spawn_async", l_spawn_async},
                                 {"wait_any", l_wait_any},
                                 {"wait_pid", l_wait_pid},
                                 {"kill", l_kill},
                                 {"cpu_count", l_cpu_count},
                                 {"getpid", l_getpid},
                                 {"find_program", l_find_program},
                                 {"hold_stdout", l_hold_stdout},
                                 {"release_stdout", l_release_stdout},
                                 {"embedded_file", l_embedded_file},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  wl_open_system_files(L);
}
