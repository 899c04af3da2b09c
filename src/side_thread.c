/* wlrun's own threads: masked signals, a bounded join (side_thread.h). */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include "side_thread.h"

#include <signal.h>
#include <time.h>

int wl_side_thread_start(pthread_t *t, void *(*fn)(void *)) {
  sigset_t all, old;
  sigfillset(&all);
  bool masked = pthread_sigmask(SIG_SETMASK, &all, &old) == 0; /* the new thread inherits the mask */
  int err = pthread_create(t, NULL, fn, NULL);
  if (masked) (void)pthread_sigmask(SIG_SETMASK, &old, NULL);
  return err;
}

bool wl_side_thread_join(pthread_t t, int seconds) {
  struct timespec until;
  if (clock_gettime(CLOCK_REALTIME, &until) != 0) return pthread_join(t, NULL) == 0; /* cannot fail on Linux */
  until.tv_sec += seconds;
  return pthread_timedjoin_np(t, NULL, &until) == 0;
}
