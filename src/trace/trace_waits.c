/* The loop's own synchronisations right after a step and right before one (docs/trace.md,
 * "Iterations"): the methodology's template ends a step where its torch.cuda.synchronize() after
 * the step returns, and begins one where its synchronisation before the step returns, and so may
 * the report. After: the first synchronising call a thread makes after a step's range closed on
 * it, where that call is of the device or of a default stream and follows no GPU work started on
 * that thread since the close: a W record. Before: the last synchronising call a thread returned
 * from before a step's range opened on it, where that call is of the device and no GPU work was
 * started on that thread since it returned: a B record (a default stream's is PyTorch's own too:
 * a blocking copy's, .item()'s, right after their copy). Each names the
 * thread, the step's range id, and when the outermost call (the runtime's, around the driver's)
 * was entered and returned. Any other synchronisation (an event's, another stream's: a prefetcher
 * waiting for the next batch) means there is none. Only where every launch is called back (every
 * step recorded, or a sample without quiet steps): trace_cupti.c says so. The library's own
 * synchronisations (--sync-steps) are not the loop's, nor is any after the steps traced are
 * done.
 *
 * A step the Python hook left open after its optimizer's step (wt_pop_later: it ends at the
 * loop's next range of the hook's) ends instead where the loop's first synchronisation after that
 * step returns, of the device or of a default stream, where no GPU work was started on the thread
 * before it nor after it until the step's end: the template's t1 (trace_threads.c takes it), and
 * that call is the step's W record (its return the range's end), written as the range ends.
 *
 * Where the call was the program's torch.cuda.synchronize(), the Python hook says when its caller
 * resumed (wt_waits_resumed), after the interpreter's lock was taken back: another thread (a
 * DataLoader's pin-memory thread) may hold it for a millisecond. The template's t0 and t1 come
 * after that, so the B record's return and a tail's end are moved there, and an own step's W,
 * already written, gets a Y record naming the new return. */
#include "trace_internal.h"

#include <stdatomic.h>

static __thread struct {
  uint64_t armed; /* the range id of a step closed on this thread, no GPU work started since */
  pid_t tid;      /* the thread's, as its ranges give it (no system call at a wait) */
  int depth; /* synchronising calls entered and not returned (the driver's inside the runtime's) */
  uint64_t step, enter; /* the outermost call's step and entry, where it is a wait to record */
  int of;               /* the outermost call's: WT_SYNC_DEVICE, WT_SYNC_STREAM or 0 */
  uint64_t entered;     /* the outermost call's entry */
  /* the last synchronising call returned on this thread, where it was of the device and no GPU
   * work started since: entered, returned (0: none) */
  uint64_t before_enter, before_exit;
  /* the return of this thread's last synchronisation of the device (its context), and the count of
   * untimed launches when it was entered: a stream of that context found idle at a boundary after
   * it, with no untimed launch since on any thread, is marked at the boundary (trace_marks.c) */
  uint64_t synced, synced_untimed;
  void *synced_ctx;
  uint64_t entered_untimed; /* the count when the outermost call was entered */
  /* a step left open on this thread, no GPU work started and no synchronisation entered since;
   * the outermost call entered so; the return of that call where no GPU work started since */
  int tail, tail_call;
  uint64_t tail_entered, tail_synced;
  /* the return of the synchronisation of the device this thread made last, where nothing started
   * or was entered since (0: none), and of its W record where it wrote one */
  uint64_t returned, returned_w;
} wait;

/* the program's launches whose ends a step not recorded does not time (kernels, graphs, sets: not
 * its copies), on every thread */
static atomic_uint_fast64_t untimed;

void wt_waits_step_closed(const struct wt_string *name, uint64_t rid, pid_t tid) {
  if (wt_is_step(name)) wait.armed = rid, wait.tid = tid;
}

void wt_waits_step_left_open(const struct wt_string *name) {
  if (wt_is_step(name)) wait.tail = 1, wait.tail_synced = 0;
}

uint64_t wt_waits_tail_taken(uint64_t *entered) {
  uint64_t synced = wait.tail_synced;
  if (entered) *entered = wait.tail_entered;
  wait.tail = 0, wait.tail_synced = 0;
  return synced;
}

void wt_waits_work_started(void) {
  wait.armed = 0, wait.before_exit = 0;
  wait.tail = 0, wait.tail_synced = 0;
  wait.returned = 0;
}

/* a W or B record (the trace lock held) */
static void wait_record(char letter, pid_t tid, uint64_t rid, uint64_t enter, uint64_t exit) {
  if (!wt_ready()) return;
  wt_line(letter);
  wt_u64((uint64_t)tid);
  wt_u64(rid);
  wt_u64(enter);
  wt_u64(exit);
  wt_end();
}

void wt_waits_sync_called(int entering, int of, void *ctx) {
  if (entering) {
    if (wait.depth++) return;
    wait.returned = 0;
    wait.entered_untimed = atomic_load_explicit(&untimed, memory_order_relaxed);
    wait.entered = wt_now();
    wait.of = wt_sync_own() ? 0 : of;
    int counts = wait.armed && wait.of;
    wait.step = counts ? wait.armed : 0;
    wait.enter = counts ? wait.entered : 0;
    wait.armed = 0; /* only the first synchronisation after a step is the step's */
    wait.tail_call = wait.tail && wait.of;
    wait.tail = 0;
    return;
  }
  if (!wait.depth || --wait.depth || !wait.entered) return; /* (entered before callbacks were on) */
  uint64_t step = wait.step, enter = wait.enter, exit = wt_now();
  /* any other synchronisation last before a step means none before it */
  wait.before_enter = wait.entered, wait.before_exit = wait.of == WT_SYNC_DEVICE ? exit : 0;
  if (wait.of == WT_SYNC_DEVICE) /* (the outermost call's context and count) */
    wait.synced = exit, wait.synced_ctx = ctx, wait.synced_untimed = wait.entered_untimed;
  if (wait.tail_call) wait.tail_entered = wait.entered, wait.tail_synced = exit, wait.tail_call = 0;
  wait.enter = wait.step = wait.entered = 0;
  wait.returned = wait.of == WT_SYNC_DEVICE ? exit : 0, wait.returned_w = 0;
  if (!enter || wt_finished() || !wt_recording()) return;
  wt_lock();
  wait_record('W', wait.tid, step, enter, exit);
  wt_unlock_soon(exit);
  wait.returned_w = exit;
}

void wt_waits_resumed(void) {
  uint64_t was = wait.returned, now = wt_now();
  wait.returned = 0;
  if (!was || wait.depth || now <= was) return;
  if (wait.before_exit == was) wait.before_exit = now;
  if (wait.tail_synced == was) wait.tail_synced = now;
  if (wait.returned_w != was || wt_finished() || !wt_recording()) return;
  wt_lock();
  if (wt_ready()) {
    wt_line('Y');
    wt_u64((uint64_t)wait.tid);
    wt_u64(was);
    wt_u64(now);
    wt_end();
  }
  wt_unlock_soon(now);
}

void wt_waits_tail_record(pid_t tid, uint64_t rid, uint64_t entered, uint64_t returned) {
  if (entered && !wt_finished() && wt_recording()) wait_record('W', tid, rid, entered, returned);
}

void wt_waits_step_opened(const struct wt_string *name, uint64_t rid, pid_t tid) {
  if (!wt_is_step(name)) return;
  if (wait.before_exit) wait_record('B', tid, rid, wait.before_enter, wait.before_exit);
  wait.before_exit = 0;
}

void wt_waits_untimed_started(void) {
  atomic_fetch_add_explicit(&untimed, 1, memory_order_relaxed);
}

uint64_t wt_waits_synced(void *ctx) {
  int since = atomic_load_explicit(&untimed, memory_order_relaxed) != wait.synced_untimed;
  return wait.synced && wait.synced_ctx == ctx && !since ? wait.synced : 0;
}

/* A forked child starts with no step closed: its parent's are not its own. */
void wt_waits_fork_child(void) {
  wait.armed = wait.step = wait.enter = wait.entered = wait.before_exit = 0, wait.depth = 0;
  wait.synced = 0, wait.synced_ctx = NULL;
  wait.tail = wait.tail_call = 0, wait.tail_synced = 0;
  wait.returned = wait.returned_w = 0;
}
