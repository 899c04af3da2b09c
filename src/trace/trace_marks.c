/* Step marks: a CUDA event recorded at a step's start and end on each stream the program's launches
 * used, whose device time CUPTI gives (K records of kind "event"). The report bounds an
 * iteration by the GPU work launched before its range closed; on a step whose kernels CUPTI did
 * not record (GPU activity on a sample of the steps, trace_steps.c), a mark is where that work
 * ended: an event on a stream completes when everything launched on it before has.
 *
 * The streams are those of launches seen while the launch callbacks were on (trace_cupti.c), each
 * forgotten when it or its context is destroyed. CUDA is not loaded for this: the driver's
 * functions come from the libcuda.so.1 the program has loaded. One event per context, recorded on
 * each of its streams in turn (each record is its own K record).
 *
 * No mark is made while a graph is being captured (the event would join the graph, or a record
 * on the legacy stream would break the capture): the steps then have their GPU work recorded.
 *
 * The marks' lock is held while events are recorded: a stream's destruction, seen by CUPTI's
 * callback at the call's entry, waits for a mark being recorded on it. Nothing but the calling
 * thread's launch buffer (through CUPTI's callback on the record) is taken under it. */
#include "trace_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

enum { MAX_STREAMS = 32, MAX_CONTEXTS = 8 };

typedef int (*event_create_fn)(void **event, unsigned flags);
typedef int (*event_record_fn)(void *event, void *stream);
typedef int (*ctx_push_fn)(void *ctx);
typedef int (*ctx_pop_fn)(void **ctx);

static struct {
  event_create_fn event_create;
  event_record_fn event_record;
  ctx_push_fn ctx_push;
  ctx_pop_fn ctx_pop;
} cu;

struct stream {
  void *ctx, *stream;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct stream streams[MAX_STREAMS];
static int nstreams;
static struct { void *ctx, *event; } events[MAX_CONTEXTS];
static int nevents;
static atomic_int usable = 1; /* 0 once a call failed, or the driver's functions are missing */
static atomic_int known;      /* streams known: marks can be recorded */
static atomic_int capturing;  /* graph captures begun and not ended (per call: a runtime's and its
                                 driver's both count) */
static __thread uint64_t marking; /* while this thread records marks: the time they stand for */

/* the driver's functions, from the libcuda.so.1 the program has loaded; 0 where one is missing */
static int find_driver(void) {
  if (cu.event_record) return 1;
  void *cuda = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
  if (!cuda) return 0;
  cu.event_create = (event_create_fn)dlsym(cuda, "cuEventCreate");
  cu.ctx_push = (ctx_push_fn)dlsym(cuda, "cuCtxPushCurrent_v2");
  cu.ctx_pop = (ctx_pop_fn)dlsym(cuda, "cuCtxPopCurrent_v2");
  event_record_fn record = (event_record_fn)dlsym(cuda, "cuEventRecord");
  dlclose(cuda); /* the program's own reference keeps it loaded */
  if (!cu.event_create || !cu.ctx_push || !cu.ctx_pop || !record) return 0;
  cu.event_record = record;
  return 1;
}

void wt_marks_stream_used(void *ctx, void *stream) {
  if (!ctx) return;
  wt_mutex_lock(&lock);
  int i = 0;
  while (i < nstreams && (streams[i].ctx != ctx || streams[i].stream != stream)) i++;
  if (i == nstreams && nstreams < MAX_STREAMS) {
    streams[nstreams].ctx = ctx, streams[nstreams].stream = stream;
    nstreams++;
    atomic_store(&known, 1);
  }
  wt_mutex_unlock(&lock);
}

/* stream destroyed (ctx NULL: any context's), or every stream of ctx (stream NULL, all set) */
static void forget(void *ctx, void *stream, int all) {
  wt_mutex_lock(&lock);
  int kept = 0;
  for (int i = 0; i < nstreams; i++) {
    int gone = all ? (!ctx || streams[i].ctx == ctx) : streams[i].stream == stream;
    if (!gone) streams[kept++] = streams[i];
  }
  nstreams = kept;
  if (all) /* the context's event goes with it */
    for (int i = 0; i < nevents; i++)
      if (!ctx || events[i].ctx == ctx) events[i] = events[--nevents], i--;
  if (!nstreams) atomic_store(&known, 0);
  wt_mutex_unlock(&lock);
}

void wt_marks_stream_gone(void *stream) {
  if (stream) forget(NULL, stream, 0); /* the legacy stream (NULL) is never destroyed */
}

void wt_marks_context_gone(void *ctx) { forget(ctx, NULL, 1); }

void wt_marks_capturing(int change) {
  if (atomic_fetch_add(&capturing, change) + change < 0) atomic_store(&capturing, 0);
}

int wt_marks_ready(void) {
  return atomic_load(&usable) && atomic_load(&known) && !atomic_load(&capturing);
}

static void failed(const char *what, int r) {
  if (!atomic_exchange(&usable, 0)) return;
  char text[160];
  snprintf(text, sizeof text,
           "%s failed (CUresult %d): no more step marks; GPU activity on every step from now on",
           what, r);
  wt_record_text('E', NULL, text);
}

/* the context's event, made in it (ctx current on this thread) */
static void *event_of(void *ctx) {
  for (int i = 0; i < nevents; i++)
    if (events[i].ctx == ctx) return events[i].event;
  if (nevents == MAX_CONTEXTS) return NULL;
  void *ev = NULL;
  int r = cu.event_create(&ev, 0); /* CU_EVENT_DEFAULT: timed */
  if (r != 0) {
    failed("cuEventCreate", r);
    return NULL;
  }
  events[nevents].ctx = ctx, events[nevents].event = ev;
  nevents++;
  return ev;
}

uint64_t wt_marking(void) { return marking; }

int wt_marks_record(uint64_t at) {
  if (!wt_marks_ready() || !find_driver()) return 0;
  int recorded = 0;
  wt_mutex_lock(&lock);
  /* a nanosecond before the boundary: the report counts the work launched before a step's start
   * or end (and nothing was launched on this thread since) */
  marking = at ? at - 1 : wt_now();
  for (int i = 0; i < nstreams && atomic_load(&usable); i++) {
    void *ctx = streams[i].ctx, *popped = NULL;
    int r = cu.ctx_push(ctx);
    if (r != 0) {
      failed("cuCtxPushCurrent", r);
      break;
    }
    void *ev = event_of(ctx);
    if (ev && (r = cu.event_record(ev, streams[i].stream)) != 0) failed("cuEventRecord", r);
    else if (ev) recorded++;
    if ((r = cu.ctx_pop(&popped)) != 0) failed("cuCtxPopCurrent", r);
  }
  marking = 0;
  wt_mutex_unlock(&lock);
  return recorded;
}

/* A forked child does nothing CUDA-related: its parent's streams are not its own. */
void wt_marks_fork_child(void) {
  pthread_mutex_init(&lock, NULL);
  nstreams = nevents = 0;
  atomic_store(&known, 0);
  atomic_store(&usable, 0);
  atomic_store(&capturing, 0);
}
