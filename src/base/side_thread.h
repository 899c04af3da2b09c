/* wlrun's own threads beside the main one (side_thread.c): NVML's and NVRTC's loaders,
 * wl.cublas.prepare's. Started with every signal masked, so that Ctrl-C's and the time limit's
 * handlers stay the main thread's, which acts on the Lua state; joined within a time limit at the
 * process's end, which must not hang on a library that does. Pure C: no Lua, no device. */
#ifndef WL_SIDE_THREAD_H
#define WL_SIDE_THREAD_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

/* pthread_create(t, fn) with every signal masked in the new thread: pthread_create's result */
int wl_side_thread_start(pthread_t *t, void *(*fn)(void *));

/* Joins t, waiting at most seconds (by the monotonic clock): true once joined, false while it
 * still works; once wl_side_thread_abandon is set, it waits no more (true if t is done). */
bool wl_side_thread_join(pthread_t t, int seconds);

/* Set from a signal handler (Ctrl-C during the process's end, lhost.c): every join waiting, and
 * every join to come, gives up at once. */
extern volatile sig_atomic_t wl_side_thread_abandon;

#endif
