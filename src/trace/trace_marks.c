/* Step marks: a memset of WL_TRACE_MARK_BYTES on a scratch buffer (WLRUN_TRACE_MARKS=copy: a copy
 * of that size to it from pinned host memory; =event: a CUDA event) recorded at a step's start and
 * end on each stream the program's launches used, whose device time CUPTI gives (K records of
 * kind "event"). The report bounds an iteration by the GPU work launched before its range closed;
 * on a step whose kernels CUPTI did not record (GPU activity on a sample of the steps,
 * trace_steps.c), a mark is where that work ended: a set (a copy, an event) on a stream runs when
 * everything launched on it before has ended.
 *
 * The streams are those of launches seen while the launch callbacks were on (trace_cupti.c), each
 * forgotten when it or its context is destroyed; one event (or scratch buffer, and for copies a
 * pinned host buffer) each, made in its context and kept when the stream is destroyed (a context's
 * go with it). CUDA is not
 * loaded for this: the driver's functions come from the libcuda.so.1 the program has loaded.
 * Marks cannot be made (wt_marks_ready() is 0, and every step is recorded) before a stream is
 * known, once the set of streams is known to be incomplete (more than MAX_STREAMS; a launch on the
 * per-thread default stream, which no other thread can record on), after a driver call failed,
 * and while a graph is being captured (the mark would join the graph, or one on the legacy
 * stream would break the capture).
 *
 * The marks' lock is held while marks are recorded: a stream's destruction and a capture's
 * start, seen by CUPTI's callbacks at the calls' entry, wait for a mark being recorded. Nothing but
 * the calling thread's launch buffer, the marks' name's lock (wt_mark_name) and the trace lock
 * (through CUPTI's callback on the mark, and an idle mark's K record) is taken under it. */
#include "trace_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

enum { MAX_STREAMS = 64 };

typedef int (*mem_alloc_fn)(unsigned long long *ptr, size_t bytes);
typedef int (*memset_fn)(unsigned long long ptr, unsigned char value, size_t n, void *stream);
typedef int (*host_alloc_fn)(void **ptr, size_t bytes);
typedef int (*copy_fn)(unsigned long long dst, const void *src, size_t n, void *stream);
typedef int (*event_create_fn)(void **event, unsigned flags);
typedef int (*event_record_fn)(void *event, void *stream);
typedef int (*ctx_push_fn)(void *ctx);
typedef int (*ctx_pop_fn)(void **ctx);
typedef int (*capture_mode_fn)(int *mode);
typedef int (*stream_query_fn)(void *stream);
typedef int (*ctx_get_device_fn)(int *device);

static struct {
  mem_alloc_fn mem_alloc;
  memset_fn memset;
  host_alloc_fn host_alloc;
  copy_fn copy;
  event_create_fn event_create;
  event_record_fn event_record;
  ctx_push_fn ctx_push;
  ctx_pop_fn ctx_pop;
  capture_mode_fn capture_mode; /* cuThreadExchangeStreamCaptureMode (quiet steps) */
  stream_query_fn stream_query; /* cuStreamQuery: a stream with nothing left to run (idle marks) */
  ctx_get_device_fn ctx_get_device;
} cu;

struct stream {
  void *ctx, *stream, *event; /* event: NULL until the first mark */
  unsigned long long scratch; /* with set or copy marks: WL_TRACE_MARK_BYTES of device memory */
  void *pinned;               /* with copy marks: WL_TRACE_MARK_BYTES of pinned host memory */
};
/* read by CUPTI's buffer thread (trace_cupti.c): set once, at CUPTI's start */
static atomic_int made_as = WT_MARK_EVENT;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct stream streams[MAX_STREAMS]; /* under lock */
static int nstreams;
static int capturing;             /* under lock: graph captures begun and not ended (a runtime
                                     call and its driver call each count) */
static atomic_int usable = 1;     /* 0 once a call failed, or the stream set is incomplete */
static atomic_int known;          /* streams known */
static __thread uint64_t marking; /* while this thread records marks: the time they stand for */
static __thread uint64_t marked;  /* the correlation of the mark this thread made last */

/* the driver's functions, from the libcuda.so.1 the program has loaded; 0 where one is missing */
static int find_driver(void) {
  if (cu.event_record) return 1;
  cu.mem_alloc = (mem_alloc_fn)wt_driver_fn("cuMemAlloc_v2");
  cu.memset = (memset_fn)wt_driver_fn("cuMemsetD8Async");
  cu.host_alloc = (host_alloc_fn)wt_driver_fn("cuMemAllocHost_v2");
  cu.copy = (copy_fn)wt_driver_fn("cuMemcpyHtoDAsync_v2");
  cu.event_create = (event_create_fn)wt_driver_fn("cuEventCreate");
  cu.ctx_push = (ctx_push_fn)wt_driver_fn("cuCtxPushCurrent_v2");
  cu.ctx_pop = (ctx_pop_fn)wt_driver_fn("cuCtxPopCurrent_v2");
  cu.capture_mode = (capture_mode_fn)wt_driver_fn("cuThreadExchangeStreamCaptureMode");
  cu.stream_query = (stream_query_fn)wt_driver_fn("cuStreamQuery");
  cu.ctx_get_device = (ctx_get_device_fn)wt_driver_fn("cuCtxGetDevice");
  event_record_fn record = (event_record_fn)wt_driver_fn("cuEventRecord");
  if (!cu.event_create || !cu.ctx_push || !cu.ctx_pop || !record || !cu.mem_alloc || !cu.memset ||
      !cu.host_alloc || !cu.copy)
    return 0;
  cu.event_record = record;
  return 1;
}

static void unusable(const char *why) {
  if (!atomic_exchange(&usable, 0))
    wt_record_text('E', NULL, why); /* once: GPU activity on every step from now on */
}

void wt_marks_unreadable(const char *call) {
  if (!atomic_load_explicit(&usable, memory_order_relaxed)) return;
  char text[256];
  snprintf(text, sizeof text,
           "%.100s: a launch whose stream wlrun does not read: no step marks; GPU activity on "
           "every step",
           call);
  unusable(text);
}

static void drain_gone(void);

void wt_marks_stream_used(void *ctx, void *stream) {
  if (!ctx || !atomic_load_explicit(&usable, memory_order_relaxed)) return;
  if (stream == WL_PER_THREAD_STREAM) {
    unusable("a launch on the per-thread default stream: no step marks (no other thread can mark "
             "it); GPU activity on every step");
    return;
  }
  wt_mutex_lock(&lock);
  drain_gone(); /* a handle destroyed before, and made again: not to be forgotten later */
  int i = 0;
  while (i < nstreams && (streams[i].ctx != ctx || streams[i].stream != stream)) i++;
  if (i == nstreams) {
    if (nstreams < MAX_STREAMS) {
      streams[nstreams].ctx = ctx, streams[nstreams].stream = stream,
      streams[nstreams].event = NULL, streams[nstreams].scratch = 0,
      streams[nstreams].pinned = NULL;
      nstreams++;
      atomic_store(&known, 1);
    } else {
      wt_mutex_unlock(&lock);
      unusable("launches on more than 64 streams: no step marks; GPU activity on every step");
      return;
    }
  }
  wt_mutex_unlock(&lock);
}

/* stream destroyed (ctx NULL: any context's), or every stream of ctx (stream NULL, all set; ctx
 * NULL: of every context). A stream's event goes with its context. */
static void forget_locked(void *ctx, void *stream, int all) {
  int kept = 0;
  for (int i = 0; i < nstreams; i++) {
    int gone = all ? (!ctx || streams[i].ctx == ctx) : streams[i].stream == stream;
    if (!gone) streams[kept++] = streams[i];
  }
  nstreams = kept;
  if (!nstreams) atomic_store(&known, 0);
  if (all) wt_quiet_context_gone(ctx);
}

static void forget(void *ctx, void *stream, int all) {
  wt_mutex_lock(&lock);
  forget_locked(ctx, stream, all);
  wt_mutex_unlock(&lock);
}

/* Streams and contexts destroyed, as CUPTI's resource callbacks (quiet steps) tell them: from
 * inside the driver's call, which must not wait for the marks' lock (a marking thread holds it
 * across driver calls), so they wait here for the next boundary's marks (drain_gone). */
enum { MAX_GONE = 64 };
static pthread_mutex_t gone_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  void *ctx, *stream;
  int all;
} gone[MAX_GONE]; /* under gone_lock */
static atomic_int ngone, gone_overflow;

void wt_marks_gone_later(void *ctx, void *stream, int all) {
  if (!all && !stream) return; /* the legacy stream is never destroyed */
  wt_mutex_lock(&gone_lock);
  int n = atomic_load(&ngone);
  if (n < MAX_GONE) {
    gone[n].ctx = ctx, gone[n].stream = stream, gone[n].all = all;
    atomic_store(&ngone, n + 1);
  } else atomic_store(&gone_overflow, 1);
  wt_mutex_unlock(&gone_lock);
}

/* under lock: the streams and contexts destroyed since forgotten; after an overflow, every one
 * (which were destroyed is not known), and no more marks */
static void drain_gone(void) {
  if (!atomic_load_explicit(&ngone, memory_order_relaxed) && !atomic_load(&gone_overflow)) return;
  wt_mutex_lock(&gone_lock);
  for (int i = 0; i < atomic_load(&ngone); i++)
    forget_locked(gone[i].ctx, gone[i].stream, gone[i].all);
  atomic_store(&ngone, 0);
  wt_mutex_unlock(&gone_lock);
  if (atomic_load(&gone_overflow)) {
    forget_locked(NULL, NULL, 1);
    unusable("more than 64 streams or contexts destroyed between two step boundaries: no more "
             "step marks; GPU activity on every step");
  }
}

void wt_marks_stream_gone(void *stream) {
  if (stream) forget(NULL, stream, 0); /* the legacy stream (NULL) is never destroyed */
}

void wt_marks_context_gone(void *ctx) { forget(ctx, NULL, 1); }

void wt_marks_capturing(int change) {
  wt_mutex_lock(&lock);
  capturing += change;
  if (capturing < 0) capturing = 0;
  wt_mutex_unlock(&lock);
}

int wt_marks_ready(void) {
  wt_mutex_lock(&lock);
  /* with quiet steps the captures' callbacks are off on them: the streams are asked instead, at
   * each boundary (wt_marks_record) */
  int ready = atomic_load(&usable) && atomic_load(&known) && (!capturing || wt_quiet_wanted());
  wt_mutex_unlock(&lock);
  return ready;
}

uint64_t wt_marking(void) { return marking; }

void wt_marks_correlation(uint64_t correlation) { marked = correlation; }

void wt_marks_made_as(enum wt_mark_kind kind) { atomic_store(&made_as, (int)kind); }

enum wt_mark_kind wt_marks_kind(void) {
  return (enum wt_mark_kind)atomic_load_explicit(&made_as, memory_order_relaxed);
}

static void failed(const char *what, int r) {
  char text[192];
  snprintf(text, sizeof text,
           "%s failed (CUresult %d): no more step marks; GPU activity on every step from now on",
           what, r);
  unusable(text);
}

/* under lock, ctx current: one stream's mark; 0 when a call failed */
static int mark(struct stream *s) {
  int r;
  enum wt_mark_kind kind = wt_marks_kind();
  if (kind != WT_MARK_EVENT) {
    if (!s->scratch && (r = cu.mem_alloc(&s->scratch, WL_TRACE_MARK_BYTES)) != 0) {
      s->scratch = 0;
      failed("cuMemAlloc", r);
      return 0;
    }
  }
  marked = 0;
  if (kind == WT_MARK_SET) {
    if ((r = cu.memset(s->scratch, 0, WL_TRACE_MARK_BYTES, s->stream)) != 0) {
      failed("cuMemsetD8Async", r);
      return 0;
    }
    if (wt_quiet_wanted()) wt_quiet_anchor(s->ctx, s->stream, marked);
    return 1;
  }
  if (kind == WT_MARK_COPY) {
    if (!s->pinned && (r = cu.host_alloc(&s->pinned, WL_TRACE_MARK_BYTES)) != 0) {
      s->pinned = NULL;
      failed("cuMemAllocHost", r);
      return 0;
    }
    if ((r = cu.copy(s->scratch, s->pinned, WL_TRACE_MARK_BYTES, s->stream)) != 0) {
      failed("cuMemcpyHtoDAsync", r);
      return 0;
    }
    if (wt_quiet_wanted()) wt_quiet_anchor(s->ctx, s->stream, marked);
    return 1;
  }
  if (!s->event && (r = cu.event_create(&s->event, 0)) != 0) { /* CU_EVENT_DEFAULT: timed */
    s->event = NULL;
    failed("cuEventCreate", r);
    return 0;
  }
  if ((r = cu.event_record(s->event, s->stream)) != 0) {
    failed("cuEventRecord", r);
    return 0;
  }
  return 1;
}

static int push(void *ctx) {
  int r = cu.ctx_push(ctx);
  if (r != 0) failed("cuCtxPushCurrent", r);
  return r == 0;
}

static void pop(void) {
  void *popped = NULL;
  int r = cu.ctx_pop(&popped);
  if (r != 0) failed("cuCtxPopCurrent", r);
}

/* for the quiet marks' events: a context that cannot be made current leaves them not timed */
static int try_push(void *ctx) { return cu.ctx_push(ctx) == 0; }

/* under lock, with quiet steps: whether a known stream is being captured (a capture begun on a
 * quiet step, whose callbacks are off, is seen so); no mark is made then */
static int any_capturing(void) {
  for (int i = 0; i < nstreams; i++) {
    if (!push(streams[i].ctx)) return 1;
    int c = wt_quiet_capturing(streams[i].stream);
    pop();
    if (c) return 1;
  }
  return 0;
}

/* With quiet steps, this thread's driver calls are made in the relaxed capture mode: a capture
 * in global mode on another thread, begun on a quiet step (no callback saw it), is not broken by
 * them (returns the mode to restore, or -1) */
static int relaxed(void) {
  int mode = 2; /* CU_STREAM_CAPTURE_MODE_RELAXED */
  return cu.capture_mode && cu.capture_mode(&mode) == 0 ? mode : -1;
}

static void restore(int mode) {
  int r;
  if (mode >= 0 && (r = cu.capture_mode(&mode)) != 0)
    failed("cuThreadExchangeStreamCaptureMode", r);
}

/* the library's own marks' correlations: above CUPTI's 32-bit ids and the quiet marks' (from
 * 2^40, trace_quiet.c) */
static atomic_uint_least64_t idle_corr = (uint64_t)1 << 41;
/* set once, before any step (NULL: no idle marks) */
static void (*idle_note)(uint64_t correlation, uint64_t at);
static uint64_t (*idle_synced)(void *ctx);

void wt_marks_idle_with(void (*note)(uint64_t, uint64_t), uint64_t (*synced)(void *)) {
  idle_note = note, idle_synced = synced;
}

/* under lock, ctx current: an idle mark at time t (its C record at the boundary, a K record of
 * kind event at t, which may come before the boundary; stream 0: CUPTI's id for the stream is not
 * known here); 0 where the context's device cannot be had, or the record not written (a set is
 * made instead) */
static int idle_mark(uint64_t t) {
  int device = 0;
  if (!wt_mark_name() || cu.ctx_get_device(&device) != 0 || device < 0) return 0;
  uint64_t corr = atomic_fetch_add(&idle_corr, 1);
  idle_note(corr, marking);
  return wt_mark_write(corr, (uint32_t)device, 0, t);
}

/* Under lock, not with quiet steps: each known stream that has nothing left to run gets its idle
 * mark's time in when[i] (else 0), all asked (cuStreamQuery) before any mark is made; the legacy
 * stream only where every known stream is idle too (a set on it would wait for theirs). Where one
 * is, a set there would end only after the library's own work at the boundary and the launch's
 * latency (32-72 us after it on an H100, the loop having waited for the GPU before each boundary:
 * docs/trace.md), which the report would take for the step's GPU end; so the library marks it
 * itself instead. The time: the return of the calling thread's last synchronisation of the
 * stream's device (context), where that came before the boundary and no kernel, graph or set was
 * launched since, on any thread (the work before had ended by then; copies, recorded on every
 * step, keep their own times); else the time the streams were asked (an upper bound). Not the
 * boundary: a step the loop's synchronisation before it begins (its B record) begins at that
 * return, which a mark at the boundary, after it, would move to the boundary. */
static void ask_idle(uint64_t when[]) {
  if (!idle_note || !cu.stream_query || !cu.ctx_get_device || wt_quiet_wanted()) return;
  int idle[MAX_STREAMS] = {0}, all = 1;
  for (int i = 0; i < nstreams; i++) {
    if (!push(streams[i].ctx)) return;
    idle[i] = cu.stream_query(streams[i].stream) == 0;
    pop();
    all = all && idle[i];
  }
  uint64_t asked = wt_now();
  for (int i = 0; i < nstreams; i++) {
    if (!idle[i] || (!streams[i].stream && !all)) continue;
    uint64_t synced = idle_synced(streams[i].ctx);
    when[i] = synced && synced <= marking + 1 ? synced : asked;
  }
}

static int mark_streams(int quiet) {
  int recorded = 0;
  uint64_t when[MAX_STREAMS] = {0};
  if (!quiet) ask_idle(when);
  for (int i = 0; i < nstreams && atomic_load(&usable); i++) {
    if (!push(streams[i].ctx)) break;
    if (wt_quiet_now()) recorded += wt_quiet_mark(streams[i].ctx, streams[i].stream, marking);
    else recorded += (when[i] && idle_mark(when[i])) || mark(&streams[i]);
    pop();
  }
  return recorded;
}

int wt_marks_record(uint64_t at) {
  if (!atomic_load(&usable) || !atomic_load(&known) || !find_driver()) return 0;
  int recorded = 0, quiet = wt_quiet_wanted();
  wt_mutex_lock(&lock);
  int mode = quiet ? relaxed() : -1;
  if (quiet) drain_gone();
  /* no mark, and no event asked, while a graph is captured (nor once marks are unusable) */
  if (atomic_load(&usable) && !(quiet ? any_capturing() : capturing)) {
    if (quiet) wt_quiet_poll(try_push, pop, 0);
    /* a nanosecond before the boundary: the report counts the work launched before a step's
     * start or end (and nothing was launched on this thread since) */
    marking = at ? at - 1 : wt_now();
    recorded = mark_streams(quiet);
    marking = 0;
  }
  restore(mode);
  wt_mutex_unlock(&lock);
  return recorded;
}

/* at exit, before CUPTI's last records: the quiet marks' events that are still running waited for,
 * a second at most (work that never ends, a peer gone, must not hold the exit) */
void wt_marks_settle(void) {
  if (!wt_quiet_wanted() || !find_driver()) return;
  uint64_t until = wt_now() + 1000000000u;
  for (;;) {
    wt_mutex_lock(&lock);
    int mode = relaxed(), left = 0;
    drain_gone();
    if (atomic_load(&usable)) wt_quiet_poll(try_push, pop, 0), left = wt_quiet_running();
    restore(mode);
    wt_mutex_unlock(&lock);
    if (!left || wt_now() > until) return;
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
}

void wt_marks_flush(void) {
  if (!wt_quiet_wanted() || !find_driver()) return;
  wt_mutex_lock(&lock);
  int mode = relaxed();
  drain_gone();
  wt_quiet_poll(try_push, pop, 1);
  restore(mode);
  wt_mutex_unlock(&lock);
  char why[160];
  uint64_t lost = wt_quiet_lost(why, sizeof why);
  if (lost) {
    char text[320];
    snprintf(text, sizeof text,
             "%llu marks of quiet steps could not be made or timed (%s): those steps may end "
             "with their ranges",
             (unsigned long long)lost, why);
    wt_record_text('E', NULL, text);
  }
}

/* A forked child does nothing CUDA-related: its parent's streams are not its own. */
void wt_marks_fork_child(void) {
  pthread_mutex_init(&lock, NULL);
  pthread_mutex_init(&gone_lock, NULL);
  atomic_store(&ngone, 0);
  atomic_store(&gone_overflow, 0);
  wt_quiet_fork_child();
  nstreams = capturing = 0;
  atomic_store(&known, 0);
  atomic_store(&usable, 0);
}
