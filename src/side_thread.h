/* wlrun's own threads beside the main one (side_thread.c): NVML's and NVRTC's loaders,
 * wl.cublas.prepare's. Started with every signal masked, so that Ctrl-C's and the time limit's
 * handlers stay the main thread's, which acts on the Lua state; joined within a time limit at the
 * process's end, which must not hang on a library that does. Pure C: no Lua, no device. */
#ifndef WL_SIDE_THREAD_H
#define WL_SIDE_THREAD_H

#include <pthread.h>
#include <stdbool.h>

/* pthread_create(t, fn) with every signal masked in the new thread: pthread_create's result */
int wl_side_thread_start(pthread_t *t, void *(*fn)(void *));

/* Joins t, waiting at most seconds: true once joined, false while it still works. */
bool wl_side_thread_join(pthread_t t, int seconds);

#endif
