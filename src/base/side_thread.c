/* wlrun's own threads: masked signals, a bounded join (side_thread.h). */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include "side_thread.h"

#include <errno.h>
#include <signal.h>
#include <time.h>

int wl_side_thread_start(pthread_t *t, void *(*fn)(void *)) {
  sigset_t all, old;
  sigfillset(&all);
  bool masked =
      pthread_sigmask(SIG_SETMASK, &all, &old) == 0; /* the new thread inherits the mask */
  int err = pthread_create(t, NULL, fn, NULL);
  if (masked) (void)pthread_sigmask(SIG_SETMASK, &old, NULL);
  return err;
}

volatile sig_atomic_t wl_side_thread_abandon;

static double seconds_of(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts); /* cannot fail for these clocks on Linux */
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* in slices of SLICE_NS, each timed by the real-time clock as pthread_timedjoin_np wants, the
 * whole by the monotonic one (a step of the wall clock changes nothing), looking at the
 * abandon flag between slices */
enum { SLICE_NS = 50 * 1000 * 1000 };

bool wl_side_thread_join(pthread_t t, int seconds) {
  double until = seconds_of(CLOCK_MONOTONIC) + seconds;
  for (;;) {
    if (wl_side_thread_abandon)
      return pthread_tryjoin_np(t, NULL) == 0; /* one done is still joined */
    struct timespec slice;
    clock_gettime(CLOCK_REALTIME, &slice);
    slice.tv_nsec += SLICE_NS;
    if (slice.tv_nsec >= 1000000000L) {
      slice.tv_sec += 1;
      slice.tv_nsec -= 1000000000L;
    }
    int err = pthread_timedjoin_np(t, NULL, &slice);
    if (err == 0) return true;
    if (err != ETIMEDOUT || seconds_of(CLOCK_MONOTONIC) >= until) return false;
  }
}
