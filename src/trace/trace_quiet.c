/* Quiet steps (WLRUN_TRACE_QUIET=1, with marks made as sets or copies): on the steps whose GPU
 * work is not recorded, CUPTI records nothing and calls nothing back (trace_cupti.c turns every
 * activity and every API callback off), which leaves a launch there about 0.1 us dearer than
 * untraced instead of about 1 us (docs/trace.md, "What tracing costs a launch"). CUPTI cannot
 * time their marks then, so each is a CUDA event, and its device time is its elapsed time from an
 * anchor: an event recorded right after a mark of a recorded step (a set or copy that CUPTI times),
 * in the same context. The anchor's time comes with its mark's K record (wt_quiet_anchor_timed,
 * on CUPTI's buffer thread); an event's elapsed time once it has run (wt_quiet_poll, at each
 * step's boundary and at exit). Each quiet mark is written as the other marks are: a C record at
 * its boundary (a correlation id of the library's own, above CUPTI's 32-bit ones) and a K record
 * of kind "event" once both times are known.
 *
 * Where marks wait for an anchor's time, CUPTI is asked for its completed buffers on a thread of
 * the library's (trace_cupti.c's, given to wt_quiet_start). At exit the events still running are
 * waited for, a second at most (wt_marks_settle), before CUPTI's last buffers.
 *
 * Everything here runs under the marks' lock (trace_marks.c) but wt_quiet_anchor_timed, which
 * takes only anchor_lock, never held across a driver call: CUPTI may hand a buffer back on a
 * thread that is inside a driver call. */
#include "trace_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

enum { MAX_ANCHORS = 64, MAX_PENDING = 16384, MAX_SPARE = 256 };
#define CUDA_ERROR_NOT_READY 600

typedef int (*event_create_fn)(void **event, unsigned flags);
typedef int (*event_record_fn)(void *event, void *stream);
typedef int (*event_query_fn)(void *event);
typedef int (*event_elapsed_fn)(float *ms, void *start, void *end);
typedef int (*event_destroy_fn)(void *event);
typedef int (*is_capturing_fn)(void *stream, int *status);

static struct {
  event_create_fn create;
  event_record_fn record;
  event_query_fn query;
  event_elapsed_fn elapsed;
  event_destroy_fn destroy;
  is_capturing_fn capturing;
} cu;

/* an anchor: its event (in ctx) and, under anchor_lock, its mark's correlation and time */
struct anchor {
  void *ctx, *event;
  int refs;   /* quiet marks measured from it, not yet written */
  int latest; /* the one new quiet marks of ctx are measured from */
};
static struct anchor anchors[MAX_ANCHORS];
static pthread_mutex_t anchor_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  uint64_t corr, time;
  uint32_t device, stream;
  int timed; /* 1: time known; -1: CUPTI gave its mark none (its quiet marks are lost) */
} anchor_times[MAX_ANCHORS], /* under anchor_lock */
    recent[8];               /* under anchor_lock: the last marks' times no anchor took yet (a
                                record can come before its anchor's correlation is stored) */
static unsigned next_recent;

struct pending {
  int anchor;
  void *ctx, *event; /* event: NULL once measured (back among the spares) */
  uint64_t corr;
  int64_t offset; /* ns from the anchor */
};
static struct pending pending[MAX_PENDING];
static int npending;
static struct { void *ctx, *event; } spare[MAX_SPARE];
static int nspare;

static atomic_int wanted, quiet;
static void (*flush_soon)(void); /* trace_cupti.c's: CUPTI's completed buffers handed back soon */
static void (*note)(uint64_t correlation, uint64_t at); /* a mark's C record (wt_note_launch) */
static pthread_mutex_t name_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_corr = (uint64_t)1 << 40;
/* quiet marks that could not be made or timed, by why */
enum { LOST_UNMADE, LOST_FAILED, LOST_ANCHOR_UNTIMED, LOST_AT_EXIT, LOST_CONTEXT_GONE, LOST_WHYS };
static uint64_t lost[LOST_WHYS];
static uint64_t flush_asked; /* when CUPTI's buffers were last asked for (wt_now) */
#define FLUSH_EVERY_NS 20000000

struct wt_string *wt_mark_name(void) {
  static struct wt_string *known;
  wt_mutex_lock(&name_lock);
  if (!known && (known = wt_intern_cstr("event")) != NULL) {
    wt_lock(); /* its S record, once */
    if (wt_ready()) wt_define(known);
    wt_unlock();
  }
  struct wt_string *s = known;
  wt_mutex_unlock(&name_lock);
  return s;
}

int wt_mark_write(uint64_t correlation, uint32_t device, uint32_t stream, uint64_t t) {
  struct wt_string *name = wt_mark_name();
  if (!name) return 0;
  char line[160];
  int n = snprintf(line, sizeof line, "K\t%llu\tevent\t%u\t%u\t%llu\t%llu\t0\t%u\n",
                   (unsigned long long)correlation, device, stream, (unsigned long long)t,
                   (unsigned long long)t, name->sid);
  if (n <= 0 || (size_t)n >= sizeof line) return 0;
  wt_write_lines(line, (size_t)n);
  return 1;
}

int wt_quiet_start(void (*flush)(void), void (*note_launch)(uint64_t, uint64_t)) {
  flush_soon = flush, note = note_launch;
  cu.create = (event_create_fn)wt_driver_fn("cuEventCreate");
  cu.record = (event_record_fn)wt_driver_fn("cuEventRecord");
  cu.query = (event_query_fn)wt_driver_fn("cuEventQuery");
  cu.elapsed = (event_elapsed_fn)wt_driver_fn("cuEventElapsedTime_v2");
  if (!cu.elapsed) cu.elapsed = (event_elapsed_fn)wt_driver_fn("cuEventElapsedTime");
  cu.destroy = (event_destroy_fn)wt_driver_fn("cuEventDestroy_v2");
  cu.capturing = (is_capturing_fn)wt_driver_fn("cuStreamIsCapturing");
  int ok = cu.create && cu.record && cu.query && cu.elapsed && cu.destroy && cu.capturing;
  atomic_store(&wanted, ok);
  return ok;
}

int wt_quiet_wanted(void) { return atomic_load_explicit(&wanted, memory_order_relaxed); }

void wt_quiet_steps(int on) { atomic_store(&quiet, on && wt_quiet_wanted()); }

int wt_quiet_now(void) { return atomic_load_explicit(&quiet, memory_order_relaxed); }

/* ctx current: whether stream is being captured (or cannot be asked): no mark then */
int wt_quiet_capturing(void *stream) {
  int status = 0;
  return cu.capturing(stream, &status) != 0 || status != 0;
}

static int latest_anchor(void *ctx) {
  for (int i = 0; i < MAX_ANCHORS; i++)
    if (anchors[i].event && anchors[i].ctx == ctx && anchors[i].latest) return i;
  return -1;
}

/* ctx current, after a mark (corr: its correlation) on stream: an anchor recorded right behind
 * it (the latest of ctx recorded again where no quiet mark is measured from it) */
void wt_quiet_anchor(void *ctx, void *stream, uint64_t corr) {
  int old = latest_anchor(ctx), a = old >= 0 && anchors[old].refs == 0 ? old : -1;
  for (int i = 0; a < 0 && i < MAX_ANCHORS; i++)
    if (!anchors[i].refs && !anchors[i].latest && (!anchors[i].event || anchors[i].ctx == ctx))
      a = i;
  if (a < 0 || !corr) return; /* every anchor still measures marks: the latest one stays */
  if (!anchors[a].event && cu.create(&anchors[a].event, 0) != 0) {
    anchors[a].event = NULL;
    return;
  }
  wt_mutex_lock(&anchor_lock); /* before the event: the set's record may come at any time */
  anchor_times[a].corr = corr, anchor_times[a].timed = 0;
  for (size_t k = 0; k < sizeof recent / sizeof recent[0]; k++)
    if (recent[k].corr == corr) anchor_times[a] = recent[k], recent[k].corr = 0; /* come already */
  wt_mutex_unlock(&anchor_lock);
  if (cu.record(anchors[a].event, stream) != 0) {
    wt_mutex_lock(&anchor_lock);
    anchor_times[a].corr = 0;
    wt_mutex_unlock(&anchor_lock);
    if (old >= 0 && old == a) anchors[a].latest = 0; /* its event's last record is not the mark's */
    return;
  }
  anchors[a].ctx = ctx;
  if (old >= 0) anchors[old].latest = 0;
  anchors[a].latest = 1;
}

void wt_quiet_anchor_timed(uint64_t corr, uint64_t time, uint32_t device, uint32_t stream,
                           int timed) {
  wt_mutex_lock(&anchor_lock);
  int taken = 0;
  for (int i = 0; i < MAX_ANCHORS; i++) {
    if (anchor_times[i].corr == corr && !anchor_times[i].timed) {
      anchor_times[i].time = time, anchor_times[i].device = device;
      anchor_times[i].stream = stream, anchor_times[i].timed = timed ? 1 : -1;
      taken = 1;
    }
  }
  if (!taken) {
    unsigned k = next_recent++ % (sizeof recent / sizeof recent[0]);
    recent[k].corr = corr, recent[k].time = time, recent[k].device = device;
    recent[k].stream = stream, recent[k].timed = timed ? 1 : -1;
  }
  wt_mutex_unlock(&anchor_lock);
}

static void *spare_event(void *ctx) {
  for (int i = nspare - 1; i >= 0; i--) {
    if (spare[i].ctx == ctx) {
      void *e = spare[i].event;
      spare[i] = spare[--nspare];
      return e;
    }
  }
  void *e = NULL;
  return cu.create(&e, 0) == 0 ? e : NULL; /* CU_EVENT_DEFAULT: timed */
}

static void put_back(void *ctx, void *event) {
  if (nspare < MAX_SPARE) spare[nspare].ctx = ctx, spare[nspare++].event = event;
  else cu.destroy(event);
}

/* ctx current: a quiet mark on stream, its C record at `at`; 0 where none could be made */
int wt_quiet_mark(void *ctx, void *stream, uint64_t at) {
  int a = latest_anchor(ctx);
  void *e = a >= 0 && npending < MAX_PENDING ? spare_event(ctx) : NULL;
  if (!e || cu.record(e, stream) != 0) {
    if (e) put_back(ctx, e);
    lost[LOST_UNMADE]++;
    return 0;
  }
  anchors[a].refs++;
  pending[npending].anchor = a, pending[npending].ctx = ctx, pending[npending].event = e;
  pending[npending].corr = next_corr++, pending[npending].offset = 0;
  if (note) note(pending[npending].corr, at);
  npending++;
  return 1;
}

/* an entry measured: its K record written where its anchor's time has come (the anchor's device
 * and CUPTI stream id: the mark's own stream is not known to CUPTI's ids); 1 when done with */
static int write_timed(struct pending *p) {
  wt_mutex_lock(&anchor_lock);
  int timed = anchor_times[p->anchor].timed;
  uint64_t t = anchor_times[p->anchor].time + (uint64_t)p->offset;
  uint32_t device = anchor_times[p->anchor].device, stream = anchor_times[p->anchor].stream;
  wt_mutex_unlock(&anchor_lock);
  if (!timed) return 0;
  if (timed < 0) return lost[LOST_ANCHOR_UNTIMED]++, 1;
  wt_mark_write(p->corr, device, stream, t);
  return 1;
}

/* ctx of each entry pushed by the caller (push, pop): the entries whose events have run measured,
 * those whose anchors are timed written; finished: at exit, the rest counted as lost */
void wt_quiet_poll(int (*push)(void *ctx), void (*pop)(void), int finished) {
  int kept = 0, waiting = 0;
  for (int i = 0; i < npending; i++) {
    struct pending *p = &pending[i];
    if (p->event && push(p->ctx)) {
      float ms = 0;
      /* the anchor may be on another stream, and not have run yet */
      int r = cu.query(p->event);
      if (r == 0) r = cu.elapsed(&ms, anchors[p->anchor].event, p->event);
      if (r == 0) {
        p->offset = (int64_t)((double)ms * 1e6 + (ms < 0 ? -0.5 : 0.5));
        put_back(p->ctx, p->event);
        p->event = NULL;
      } else if (r != CUDA_ERROR_NOT_READY) { /* failed: not timed */
        put_back(p->ctx, p->event), p->event = NULL, p->anchor = -1 - p->anchor;
        lost[LOST_FAILED]++;
      }
      pop();
    }
    int done = p->anchor < 0 || (!p->event && write_timed(p));
    if (!done && !p->event) waiting = 1; /* for its anchor's time */
    if (finished && !done) done = 1, lost[LOST_AT_EXIT]++;
    if (done) anchors[p->anchor < 0 ? -1 - p->anchor : p->anchor].refs--;
    else pending[kept++] = *p;
  }
  npending = kept;
  uint64_t now = waiting ? wt_now() : 0;
  if (waiting && now - flush_asked > FLUSH_EVERY_NS) {
    flush_asked = now;
    if (flush_soon) flush_soon();
  }
}

/* the quiet marks lost, and why, as text; 0 where none was */
uint64_t wt_quiet_lost(char *why, size_t room) {
  static const char *const whys[LOST_WHYS] = {
      "not made (no anchor, no event)", "their events failed", "their anchor's mark untimed",
      "still waiting at the exit", "their context destroyed"};
  uint64_t total = 0;
  size_t n = 0;
  if (room) why[0] = '\0';
  for (int i = 0; i < LOST_WHYS; i++) {
    total += lost[i];
    int k = lost[i] && n < room ? snprintf(why + n, room - n, "%s%llu %s", n ? ", " : "",
                                           (unsigned long long)lost[i], whys[i])
                                : 0;
    if (k > 0) n += (size_t)k < room - n ? (size_t)k : room - n - 1;
  }
  return total;
}

int wt_quiet_running(void) {
  int n = 0;
  for (int i = 0; i < npending; i++) n += pending[i].event != NULL;
  return n;
}

/* ctx destroyed (NULL: every context): its anchors, events and marks not yet timed go with it */
void wt_quiet_context_gone(void *ctx) {
  int kept = 0;
  for (int i = 0; i < npending; i++) {
    if (!ctx || pending[i].ctx == ctx) lost[LOST_CONTEXT_GONE]++;
    else pending[kept++] = pending[i];
  }
  npending = kept;
  for (int i = 0; i < MAX_ANCHORS; i++)
    if (!ctx || anchors[i].ctx == ctx) memset(&anchors[i], 0, sizeof anchors[i]);
  kept = 0;
  for (int i = 0; i < nspare; i++)
    if (ctx && spare[i].ctx != ctx) spare[kept++] = spare[i];
  nspare = kept;
}

void wt_quiet_fork_child(void) {
  pthread_mutex_init(&anchor_lock, NULL);
  pthread_mutex_init(&name_lock, NULL);
  atomic_store(&wanted, 0);
  atomic_store(&quiet, 0);
  npending = nspare = 0;
  memset(lost, 0, sizeof lost);
  flush_asked = 0;
  next_recent = 0;
  memset(recent, 0, sizeof recent);
  memset(anchors, 0, sizeof anchors);
}
