/* The traced process's life: the first initialisation (NVTX's or CUDA's, whichever comes first),
 * fork (the child starts its own file, without the parent's open ranges, launches or CUDA) and
 * exit (GPU activity flushed, the ranges still open, what was lost, then X). */
#include "trace_internal.h"
#include "trace_format.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct wt_string *wt_empty;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int tracing;
static atomic_int exited;
static const struct wt_activity_hooks *activity; /* the GPU's, where CUDA is traced */

static void losses(const char *what, uint64_t n) {
  if (!n) return;
  wt_line('D');
  wt_text(what);
  wt_u64(n);
  wt_end();
}

static void at_exit(void) {
  if (atomic_exchange(&exited, 1)) return;
  /* exit() from a signal handler that interrupted the library on this thread: what it was doing
   * is half done and its lock held; the file ends where it is, without X */
  if (wt_inside()) return;
  if (activity) activity->at_exit(); /* K records from the last buffers, before the file closes */
  wt_lock();
  if (wt_is_open()) {
    if (wt_recording()) { /* else written when the steps traced were done */
      wt_threads_at_exit();
      if (wt_recording()) wt_ranges_at_exit(); /* (else the last step's end wrote them) */
    }
    if (activity) losses("cupti", activity->dropped());
    losses("memory", wt_lost_count());
    losses("depth", wt_depth_lost());
  }
  wt_finish();
  wt_unlock();
}

/* the steps traced are done (WLRUN_TRACE_STEPS): what is open is written as at an exit */
static void steps_done(void) {
  wt_threads_at_exit();
  wt_ranges_at_exit();
}

static void register_exit(void) {
  if (atexit(at_exit) != 0)
    fprintf(
        stderr,
        "wlrun trace: cannot register the exit handler; process %d's trace will end without X\n",
        (int)getpid());
}

static void fork_prepare(void) {
  wt_out_fork_prepare();
  wt_strings_fork_prepare();
}

static void fork_parent(void) {
  wt_strings_fork_parent();
  wt_out_fork_parent();
}

static void fork_child(void) {
  wt_strings_fork_child();
  wt_out_fork_child();
  wt_threads_fork_child();
  wt_ranges_fork_child();
  wt_sync_fork_child();
  wt_waits_fork_child();
  wt_steps_fork_child();
  wt_marks_fork_child();
  if (activity) activity->fork_child();
}

/* The file first: when it cannot be made, NVTX unloads the library (InitializeInjectionNvtx2
 * returned 0), and anything allocated before would be lost with it. */
static void init_once(void) {
  const char *dir = getenv(WL_TRACE_ENV_DIR);
  if (!dir || !*dir || !wt_out_open(dir) || !(wt_empty = wt_intern_cstr(""))) return;
  wt_threads_init();
  wt_sync_init();
  wt_steps_init(steps_done);
  /* without the fork handlers a child would write into its parent's file */
  if (pthread_atfork(fork_prepare, fork_parent, fork_child) != 0) {
    fprintf(stderr, "wlrun trace: cannot register the fork handlers; process %d is not traced\n",
            (int)getpid());
    return;
  }
  register_exit();
  tracing = 1;
}

int wt_init(void) {
  pthread_once(&once, init_once);
  return tracing;
}

void wt_use_activity(const struct wt_activity_hooks *hooks) {
  activity = hooks;
  register_exit();
}
