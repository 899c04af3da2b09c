/* The signals that stop a run and the script's time limit (docs/reliability.md, "Interrupts"):
 * the handlers of SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 (a stop, as Ctrl-C) and
 * SIGPIPE (a failed write; a stop where standard output's reader is gone), and SIGALRM for
 * core.time_limit; the Lua state whose code a stop interrupts at its next instruction. Part of
 * the host (lhost.c). */
#ifndef WL_LHOST_SIGNALS_H
#define WL_LHOST_SIGNALS_H

#include <lua.h>
#include <stdbool.h>

/* The handlers, once, at the state's creation. A worker of --devices (worker: true) takes only
 * SIGINT as a stop: the run that started it ends it with SIGTERM (then SIGKILL) and writes its
 * outputs itself, so the other signals keep their default there and end it at once. */
void wl_signals_install(bool worker);

/* The state running a protected call (NULL when it returned): a stop asked meanwhile, or before,
 * stops its Lua code; at NULL the time limit, if armed, is cancelled (the code it limited ended).
 */
void wl_signals_running(lua_State *L);

/* The process's end has begun: a stop signal from now gives up the end's waits (side_thread.h). */
void wl_signals_ending(void);

/* core.time_limit, core.stop_signal and core.stdout_closed into the table on top of the stack
 * (wlrun.core). */
void wl_signals_open(lua_State *L);

#endif
