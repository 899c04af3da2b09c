/* The loop's own synchronisation right after a step (docs/trace.md, "Iterations"): the
 * methodology's template ends a step where its torch.cuda.synchronize() after the step returns,
 * and so does the report where the first synchronising call a thread makes after a step's range
 * closed on it (of the device, a stream or an event) follows no GPU work started on that thread
 * since the close, with the kernel launches' callbacks on meanwhile (else a launch could have gone
 * unseen). Each such wait is a W record: the thread, and when its outermost call (the runtime's,
 * around the driver's) was entered and returned. The library's own synchronisations
 * (--sync-steps) are not the loop's, nor is any after the steps traced are done. */
#include "trace_internal.h"

static __thread struct {
  int armed; /* a step closed on this thread, no GPU work started on it since */
  int depth; /* synchronising calls entered and not returned (the driver's inside the runtime's) */
  uint64_t enter; /* the outermost call's entry, where it is a wait to record; else 0 */
} wait;

void wt_waits_step_closed(const struct wt_string *name) {
  if (wt_is_step(name)) wait.armed = 1;
}

void wt_waits_work_started(void) { wait.armed = 0; }

void wt_waits_sync_called(int entering) {
  if (entering) {
    if (wait.depth++) return;
    wait.enter = wait.armed && wt_launches_seen() && !wt_sync_own() ? wt_now() : 0;
    wait.armed = 0; /* only the first synchronisation after a step is the step's */
    return;
  }
  if (!wait.depth || --wait.depth || !wait.enter) return; /* (entered before callbacks were on) */
  uint64_t enter = wait.enter, exit = wt_now();
  wait.enter = 0;
  if (wt_finished() || !wt_recording()) return;
  wt_lock();
  if (wt_ready()) {
    wt_line('W');
    wt_u64((uint64_t)wt_gettid());
    wt_u64(enter);
    wt_u64(exit);
    wt_end();
  }
  wt_unlock_soon(exit);
}

/* A forked child starts with no step closed: its parent's are not its own. */
void wt_waits_fork_child(void) { wait.armed = 0, wait.depth = 0, wait.enter = 0; }
