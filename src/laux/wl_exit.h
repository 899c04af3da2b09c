/* Exit codes of wlrun and the error kinds that map to them (docs/cli.md, "Exit codes"). */
#ifndef WL_EXIT_H
#define WL_EXIT_H

#include <lua.h>
#include <signal.h>
#include <stdbool.h>

enum wl_exit {
  WL_EXIT_OK = 0,
  WL_EXIT_SCRIPT = 1,     /* Lua syntax or runtime error, invalid scenario */
  WL_EXIT_USAGE = 2,      /* bad command line */
  WL_EXIT_CONFIG = 3,     /* bad wlrun.ini */
  WL_EXIT_NO_DEVICE = 4,  /* no CUDA device or driver */
  WL_EXIT_CUDA = 5,       /* a CUDA call failed (launch, fault, out of memory) */
  WL_EXIT_COMPILE = 6,    /* NVRTC compile error */
  WL_EXIT_REGRESSION = 7, /* compare found a regression */
  WL_EXIT_IO = 9,         /* a file could not be read or written */
  WL_EXIT_INTERRUPTED = 130
};

/* Error kinds carried by errors raised from C into Lua; each maps to one exit code. */
const char *wl_exit_kind_name(enum wl_exit code);
enum wl_exit wl_exit_from_kind(const char *kind);

/* The first stack level from level up that is a function of the script's, not of wlrun's own
 * Lua library; 0 when a C function or the end of the stack comes first (a tail call left no
 * frame of the script's). */
int wl_user_level(lua_State *L, int level);

/* Registry table of the chunk names of wlrun's own Lua library ({["@lua/wlrun/measure/bench.lua"]
 * = true, ...}), filled as its modules load (lhost.c): wl_raise places an error at the first
 * frame above that is not the library's, the script line that led there. */
#define WL_LIBRARY_CHUNKS "wlrun.library_chunks"

/* Raises a Lua error whose value is a table {kind=, message=} (metatable "wlrun.error"); the
 * message is prefixed with the position of the script's line that led there (luaL_where at
 * wl_user_level(L, 1)), or with none where a C function comes first, and the error is then
 * "bare": printed without a traceback. Never returns. Argument errors: laux.h. */
int wl_raise(lua_State *L, enum wl_exit kind, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A warning for the user from C ("the kernel cache is not writable"): handed to the Lua function
 * that core.on_warning(fn) registered (during a scenario, the sink: the one writer of stderr),
 * or written to stderr as "wlrun: warning: ..." when none is. Never raises. */
void wl_warn(lua_State *L, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
#define WL_WARNING_HANDLER "wlrun.warning_handler" /* its registry key */

/* Stopping the running code from a signal handler (docs/reliability.md, "Interrupts"): the
 * host (lhost.c) asks for a stop when Ctrl-C comes or the script's time limit passes, and
 * stops the Lua code at its next instruction; the long loops and waits of the bindings in C
 * (launch loops, the timed loops, graph replays, wl.sleep) look at wl_stop_pending() between
 * steps and call wl_stop_check. A stop is raised once: the code that runs after it (teardown,
 * the outputs) runs normally. */
enum wl_stop { WL_STOP_NONE, WL_STOP_INTERRUPT, WL_STOP_TIMEOUT };
extern volatile sig_atomic_t wl_stop_requested;
/* The signal that asked for the interrupt (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2:
 * the signals of a terminal and of a cluster's scheduler, each ending a run as Ctrl-C does), 0
 * before any; kept after the stop is raised, for the message and the exit code. */
extern volatile sig_atomic_t wl_stop_signal;

/* Those signals, for the host's handlers (lhost_signals.c) and the children they are passed on
 * to (lsystem.c) */
enum { WL_NSTOP_SIGNALS = 6 };
extern const int wl_stop_signals[WL_NSTOP_SIGNALS];

/* "Ctrl-C" for SIGINT, else the signal's name ("SIGTERM"); for SIGPIPE, a write to a closed
 * standard output, "cannot write to standard output: Broken pipe"; NULL before any signal */
const char *wl_stop_signal_name(void);

/* A closed standard output stops a run as the signals above do (wl_stop_signal SIGPIPE, exit
 * 9): standard output's descriptor, which process.hold_stdout moves (-1: 1), and whether its
 * reader is gone (a pipe or socket that poll says is broken; async-signal-safe). */
extern volatile sig_atomic_t wl_stdout_held;
bool wl_stdout_broken(void);

/* The exit code of a run interrupted by wl_stop_signal: 130 for Ctrl-C (and before any signal),
 * 9 (an io error) for a closed standard output, else 128 + the signal, as a shell reports a
 * process that a signal ended. */
int wl_stop_exit_code(void);
static inline bool wl_stop_pending(void) { return wl_stop_requested != WL_STOP_NONE; }

/* Asks for a stop (async-signal-safe); the first one asked wins until it is raised. */
void wl_stop_request(enum wl_stop why);

/* The message of a timeout stop ("script.lua ran past ..."); copied. */
void wl_stop_set_timeout_message(const char *message);

/* Raises the pending stop, if any, and forgets it: an error {kind = "interrupted", message =
 * "interrupted (Ctrl-C)"} or {kind = "timeout", message = the timeout message}. Returns when
 * no stop is pending. */
void wl_stop_check(lua_State *L);

#endif
