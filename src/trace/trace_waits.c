/* The loop's own synchronisation right after a step (docs/trace.md, "Iterations"): the
 * methodology's template ends a step where its torch.cuda.synchronize() after the step returns,
 * and so may the report where the first synchronising call a thread makes after a step's range
 * closed on it is of the device or of a default stream, and follows no GPU work started on that
 * thread since the close. Each such wait is a W record: the thread, the step's range id, and when
 * its outermost call (the runtime's, around the driver's) was entered and returned. Any other
 * synchronisation first (an event's, another stream's: a prefetcher waiting for the next batch)
 * means there is none. Only where every launch is called back (no sampled steps, callbacks on):
 * trace_cupti.c says so. The library's own synchronisations (--sync-steps) are not the loop's,
 * nor is any after the steps traced are done. */
#include "trace_internal.h"

static __thread struct {
  uint64_t armed; /* the range id of a step closed on this thread, no GPU work started since */
  pid_t tid;      /* the thread's, as its ranges give it (no system call at a wait) */
  int depth; /* synchronising calls entered and not returned (the driver's inside the runtime's) */
  uint64_t step, enter; /* the outermost call's step and entry, where it is a wait to record */
} wait;

void wt_waits_step_closed(const struct wt_string *name, uint64_t rid, pid_t tid) {
  if (wt_is_step(name)) wait.armed = rid, wait.tid = tid;
}

void wt_waits_work_started(void) { wait.armed = 0; }

void wt_waits_sync_called(int entering, int of_default) {
  if (entering) {
    if (wait.depth++) return;
    int counts = wait.armed && of_default && !wt_sync_own();
    wait.step = counts ? wait.armed : 0;
    wait.enter = counts ? wt_now() : 0;
    wait.armed = 0; /* only the first synchronisation after a step is the step's */
    return;
  }
  if (!wait.depth || --wait.depth || !wait.enter) return; /* (entered before callbacks were on) */
  uint64_t step = wait.step, enter = wait.enter, exit = wt_now();
  wait.enter = wait.step = 0;
  if (wt_finished() || !wt_recording()) return;
  wt_lock();
  if (wt_ready()) {
    wt_line('W');
    wt_u64((uint64_t)wait.tid);
    wt_u64(step);
    wt_u64(enter);
    wt_u64(exit);
    wt_end();
  }
  wt_unlock_soon(exit);
}

/* A forked child starts with no step closed: its parent's are not its own. */
void wt_waits_fork_child(void) { wait.armed = wait.step = wait.enter = 0, wait.depth = 0; }
