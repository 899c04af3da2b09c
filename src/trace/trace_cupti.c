/* The GPU side: InitializeInjection, which the CUDA driver calls through CUDA_INJECTION64_PATH
 * when the program initialises CUDA. CUPTI is loaded with dlopen (WLRUN_TRACE_CUPTI, or the
 * one the program has loaded, or libcupti.so.13, then libcupti.so) and used for two things:
 *   - activity: kernels, copies and sets, with CLOCK_MONOTONIC times (a timestamp callback),
 *     delivered in 8 MiB buffers and written as K records when CUPTI hands a buffer back;
 *   - callbacks on entry to the runtime and driver calls that start GPU work (launches, copies,
 *     sets, graph launches), which note (correlation id, innermost range) as C records.
 * And, where some steps go unrecorded (WLRUN_TRACE_GPU_EVERY), step marks (trace_marks.c): the
 * marks' memsets (or copies, WLRUN_TRACE_MARKS=copy; or CUDA events, =event) are noted as C records
 * and their device times written as K records of kind "event" (a stream found idle is marked by
 * trace_marks.c itself), the streams of launches are kept for the marks, and kernels' activity is
 * turned on and off for a sample of the steps (trace_steps.c), each change a P record; the launch
 * callbacks with it only with quiet steps (without, on a step not recorded they write nothing and
 * only tell the loop's waits that work started).
 * Every CUPTI call's result is checked; a failure is an E record, or G off with the reason, and
 * the program runs on untouched. */
#include <cupti.h>

#include "trace_internal.h"
#include "trace_format.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

enum { BUFFER_SIZE = 8 << 20, SPARE_BUFFERS = 4, MAX_CBID = 4096 };

enum state { CUPTI_NONE, CUPTI_ACTIVE, CUPTI_OFF, CUPTI_INHERITED };

/* the CUPTI functions used, found with dlsym */
#define API(name) __typeof__(cupti##name) *name
static struct {
  API(ActivityEnable);
  API(ActivityDisable);
  API(ActivityEnableCudaEventDeviceTimestamps); /* optional: without it, no step marks */
  API(ActivityRegisterCallbacks);
  API(ActivityRegisterTimestampCallback); /* optional: without it, K times are shifted by an offset
                                           */
  API(ActivityGetNextRecord);
  API(ActivityGetNumDroppedRecords);
  API(ActivityFlushAll);
  API(Subscribe);
  API(EnableCallback);
  API(GetCallbackName);
  API(GetResultString);
  API(GetTimestamp); /* optional */
  API(GetVersion);   /* optional */
} cupti;
#undef API

static atomic_int state = CUPTI_NONE;
static char library[256]; /* the CUPTI loaded */
static int64_t
    clock_offset; /* CUPTI's clock minus CLOCK_MONOTONIC, without the timestamp callback */
static atomic_uint_fast64_t dropped; /* activity records CUPTI dropped */
/* activity records without valid times, left out, by what they were */
enum { UNTIMED_KERNEL, UNTIMED_COPY, UNTIMED_SET, UNTIMED_MARK, UNTIMED_KINDS };
static const char *const untimed_names[UNTIMED_KINDS] = {"kernels", "copies", "sets", "step marks"};
static atomic_uint_fast64_t untimed[UNTIMED_KINDS];
/* kernels' activity was off for some steps: CUPTI then gives the program's sets no times (seen on
 * H100s: one set a step not recorded, every set timed where every step is), which is no error
 * (the sets of the steps not recorded are left out, as their kernels are) */
static atomic_int activity_was_off;
static int sets_recorded, copies_recorded; /* MEMSET, MEMCPY activity could be enabled (start) */
/* under the sampling lock: sets' activity on now; kernels' activity on now (the launches'
 * callbacks read it: on a step not recorded they only tell the loop's waits that work started) */
static int sets_on;
static atomic_int kernels_on = 1;
static int launch_callbacks; /* every launch and copy called back (enable_callbacks) */
static atomic_int buffer_failed, parse_failed;

static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *spare[SPARE_BUFFERS];
static int nspare;

static const char *result_text(CUptiResult r) {
  const char *s = NULL;
  if (cupti.GetResultString && cupti.GetResultString(r, &s) == CUPTI_SUCCESS && s) return s;
  return "unknown CUPTI error";
}

static void error_record(const char *what, CUptiResult r, const char *consequence) {
  char text[512];
  snprintf(text, sizeof text, "%s: %s (%d)%s%s", what, result_text(r), (int)r,
           consequence ? "; " : "", consequence ? consequence : "");
  wt_record_text('E', NULL, text);
}

static uint64_t CUPTIAPI monotonic_ns(void) { return wt_now(); }

/* ---- names of activity records ---- */

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* __cxa_demangle from a libstdc++ the program has loaded (a C++ or PyTorch program); else none */
static demangle_fn find_demangler(void) {
  void *f = dlsym(RTLD_DEFAULT, "__cxa_demangle");
  if (!f) {
    void *cxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD); /* kept: f is used from now on */
    if (cxx) f = dlsym(cxx, "__cxa_demangle");
  }
  return (demangle_fn)f;
}

/* Kernel names by CUPTI's pointer (one per kernel, shared by its records), under names_lock. */
struct kernel_name {
  const char *key;
  struct wt_string *name;
};
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kernel_name *names;
static size_t names_cap, names_used;

static size_t slot_of(const struct kernel_name *table, size_t cap, const char *key) {
  size_t i = ((uintptr_t)key >> 4) * 11400714819323198485ull & (cap - 1);
  while (table[i].key && table[i].key != key) i = (i + 1) & (cap - 1);
  return i;
}

static int grow_names(void) {
  size_t cap = names_cap ? 2 * names_cap : 1024;
  struct kernel_name *t = calloc(cap, sizeof *t);
  if (!t) return 0;
  for (size_t i = 0; i < names_cap; i++)
    if (names[i].key) t[slot_of(t, cap, names[i].key)] = names[i];
  free(names);
  names = t;
  names_cap = cap;
  return 1;
}

/* The interned string for text, its S line written (the K lines that name it come after). */
static struct wt_string *defined(struct wt_string *s) {
  if (!s) return NULL;
  wt_lock();
  if (wt_ready()) wt_define(s);
  wt_unlock();
  return s;
}

static struct wt_string *demangled(const char *mangled) {
  static demangle_fn demangle;
  static int looked;
  if (!looked) demangle = find_demangler(), looked = 1;
  char *plain = NULL;
  int status = -1;
  if (demangle && strncmp(mangled, "_Z", 2) == 0) plain = demangle(mangled, NULL, NULL, &status);
  struct wt_string *s = wt_intern_cstr(status == 0 && plain ? plain : mangled);
  free(plain);
  return defined(s);
}

static struct wt_string *kernel_name(const char *key) {
  if (!key) key = "(unnamed kernel)";
  wt_mutex_lock(&names_lock);
  struct wt_string *s = NULL;
  if (names_cap) {
    size_t i = slot_of(names, names_cap, key);
    if (names[i].key) s = names[i].name;
  }
  if (!s && (s = demangled(key)) && (2 * (names_used + 1) <= names_cap || grow_names())) {
    size_t i = slot_of(names, names_cap, key);
    names[i].key = key;
    names[i].name = s;
    names_used++;
  }
  wt_mutex_unlock(&names_lock);
  return s;
}

static struct wt_string *copy_name(unsigned kind) {
  static const char *const text[] = {"memcpy",      "memcpy HtoD", "memcpy DtoH", "memcpy HtoA",
                                     "memcpy AtoH", "memcpy AtoA", "memcpy AtoD", "memcpy DtoA",
                                     "memcpy DtoD", "memcpy HtoH", "memcpy PtoP"};
  static struct wt_string *known[sizeof text / sizeof text[0]];
  if (kind >= sizeof text / sizeof text[0]) kind = 0;
  wt_mutex_lock(&names_lock);
  if (!known[kind]) known[kind] = defined(wt_intern_cstr(text[kind]));
  struct wt_string *s = known[kind];
  wt_mutex_unlock(&names_lock);
  return s;
}

static struct wt_string *set_name(void) {
  static struct wt_string *known;
  wt_mutex_lock(&names_lock);
  if (!known) known = defined(wt_intern_cstr("memset"));
  struct wt_string *s = known;
  wt_mutex_unlock(&names_lock);
  return s;
}

/* ---- activity buffers ---- */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  void *b = NULL;
  wt_mutex_lock(&spare_lock);
  if (nspare) b = spare[--nspare];
  wt_mutex_unlock(&spare_lock);
  if (!b && posix_memalign(&b, ACTIVITY_RECORD_ALIGNMENT, BUFFER_SIZE) != 0) b = NULL;
  *buffer = b;
  *size = b ? BUFFER_SIZE : 0;
  *max_records = 0;
  if (!b) {
    wt_lost(1);
    if (!atomic_exchange(&buffer_failed, 1))
      wt_record_text(
          'E', NULL,
          "cannot allocate an activity buffer of 8 MiB: CUPTI drops GPU activity records");
  }
}

size_t wt_activity_line(char *out, size_t room, const void *record) {
  const CUpti_Activity *rec = record;
  uint64_t correlation, start, end, bytes = 0;
  uint32_t device, stream;
  const char *kind;
  struct wt_string *name;
  int what = UNTIMED_KERNEL;
  switch (rec->kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
    const CUpti_ActivityKernel10 *k = (const void *)rec;
    kind = "kernel", correlation = k->correlationId, device = k->deviceId, stream = k->streamId;
    start = k->start, end = k->end, name = kernel_name(k->name);
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY: {
    const CUpti_ActivityMemcpy6 *m = (const void *)rec;
    kind = "memcpy", correlation = m->correlationId, device = m->deviceId, stream = m->streamId;
    start = m->start, end = m->end, bytes = m->bytes, name = copy_name(m->copyKind);
    what = UNTIMED_COPY;
    if (bytes == WL_TRACE_MARK_BYTES && m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD &&
        m->srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED &&
        m->dstKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE && wt_marks_kind() == WT_MARK_COPY)
      kind = "event", start = m->end, bytes = 0, name = wt_mark_name(), what = UNTIMED_MARK;
    break;
  }
  case CUPTI_ACTIVITY_KIND_MEMSET: {
    const CUpti_ActivityMemset4 *m = (const void *)rec;
    kind = "memset", correlation = m->correlationId, device = m->deviceId, stream = m->streamId;
    start = m->start, end = m->end, bytes = m->bytes, name = set_name();
    what = UNTIMED_SET;
    /* a mark: where the work launched before it ended */
    if (bytes == WL_TRACE_MARK_BYTES && wt_marks_kind() == WT_MARK_SET)
      kind = "event", start = m->end, bytes = 0, name = wt_mark_name(), what = UNTIMED_MARK;
    break;
  }
  case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
    const CUpti_ActivityCudaEvent2 *e = (const void *)rec;
    if (!e->deviceTimestamp) return 0; /* an event recorded without timing */
    kind = "event", correlation = e->correlationId, device = e->deviceId, stream = e->streamId;
    start = end = e->deviceTimestamp, name = wt_mark_name(), what = UNTIMED_MARK;
    break;
  }
  default: return 0;
  }
  if (!name) return 0;                          /* counted as lost by the interning */
  if (!wt_work_recorded(correlation)) return 0; /* launched after the steps traced */
  int anchor = what == UNTIMED_MARK && rec->kind != CUPTI_ACTIVITY_KIND_CUDA_EVENT &&
               wt_quiet_wanted(); /* perhaps a quiet step's anchor's mark */
  if (start == 0 || end < start) {
    atomic_fetch_add(&untimed[what], 1);
    if (anchor) wt_quiet_anchor_timed(correlation, 0, device, stream, 0);
    return 0;
  }
  start -= (uint64_t)clock_offset, end -= (uint64_t)clock_offset;
  if (anchor) wt_quiet_anchor_timed(correlation, end, device, stream, 1);
  int n = snprintf(out, room, "K\t%llu\t%s\t%u\t%u\t%llu\t%llu\t%llu\t%u\n",
                   (unsigned long long)correlation, kind, device, stream, (unsigned long long)start,
                   (unsigned long long)end, (unsigned long long)bytes, name->sid);
  return n > 0 && (size_t)n < room ? (size_t)n : 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid) {
  (void)size;
  char lines[32768];
  size_t n = 0;
  CUpti_Activity *rec = NULL;
  CUptiResult r;
  while (buffer && (r = cupti.ActivityGetNextRecord(buffer, valid, &rec)) == CUPTI_SUCCESS) {
    if (sizeof lines - n < 512) {
      wt_write_lines(lines, n);
      n = 0;
    }
    n += wt_activity_line(lines + n, sizeof lines - n, rec);
  }
  if (n) wt_write_lines(lines, n);
  if (buffer && r != CUPTI_ERROR_MAX_LIMIT_REACHED && !atomic_exchange(&parse_failed, 1))
    error_record("cuptiActivityGetNextRecord", r, "the rest of an activity buffer is left out");
  size_t lost = 0;
  r = cupti.ActivityGetNumDroppedRecords(ctx, stream, &lost);
  if (r == CUPTI_SUCCESS) atomic_fetch_add(&dropped, lost);
  wt_mutex_lock(&spare_lock);
  if (buffer && nspare < SPARE_BUFFERS) spare[nspare++] = buffer, buffer = NULL;
  wt_mutex_unlock(&spare_lock);
  free(buffer);
}

/* ---- callbacks: the calls that start GPU work, record events, destroy streams ---- */

static void sampled_activity(int on, uint64_t at);
static void sampling_stop(void);
static struct wt_sampling sampling = {sampled_activity, sampling_stop, 0};

/* what a call is to the library, by domain (0 runtime, 1 driver) and callback id */
enum call_kind {
  CALL_NONE,
  CALL_LAUNCH, /* kernels and graphs: their callbacks on for every step (with quiet steps, for the
                  steps recorded only); C records on the steps recorded */
  CALL_COPY,   /* copies and sets: always on (a batch's copy ends its data loading) */
  CALL_SYNC,   /* synchronisations (device, stream, event), entry and return: where every launch
                  is called back, no quiet steps (trace_waits.c) */
  CALL_EVENT,  /* from here on, the marks' kinds */
  CALL_STREAM_GONE,
  CALL_CONTEXT_GONE,
  CALL_CAPTURE_BEGIN,
  CALL_CAPTURE_END
};
static uint8_t call_kinds[2][MAX_CBID];
static CUpti_SubscriberHandle subscriber;

/* The stream a launch, copy or set went to, where the call is one whose parameters are known to
 * name it; 0 where not. A runtime _ptsz form has its plain form's parameters, and NULL there is
 * the calling thread's per-thread default stream. */
static int runtime_stream(CUpti_CallbackId cbid, const void *params, void **stream) {
  int per_thread = 0;
  const cudaLaunchConfig_t *c;
  switch (cbid) {
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
    per_thread = 1;
    __attribute__((fallthrough));
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    *stream = ((const cudaLaunchKernel_v7000_params *)params)->stream;
    break;
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
    per_thread = 1;
    __attribute__((fallthrough));
  case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    if (!(c = ((const cudaLaunchKernelExC_v11060_params *)params)->config)) return 0;
    *stream = c->stream;
    break;
  case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000:
    per_thread = 1;
    __attribute__((fallthrough));
  case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020:
    *stream = ((const cudaMemcpyAsync_v3020_params *)params)->stream;
    break;
  case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000:
    per_thread = 1;
    __attribute__((fallthrough));
  case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020:
    *stream = ((const cudaMemsetAsync_v3020_params *)params)->stream;
    break;
  case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000:
    per_thread = 1;
    __attribute__((fallthrough));
  case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000:
    *stream = ((const cudaGraphLaunch_v10000_params *)params)->stream;
    break;
  default: return 0;
  }
  if (per_thread && !*stream) *stream = WL_PER_THREAD_STREAM;
  return 1;
}

static int stream_of(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *params,
                     void **stream) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) return runtime_stream(cbid, params, stream);
  switch (cbid) {
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    *stream = ((const cuLaunchKernel_params *)params)->hStream;
    return 1;
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: {
    const CUlaunchConfig *c = ((const cuLaunchKernelEx_params *)params)->config;
    if (!c) return 0;
    *stream = c->hStream;
    return 1;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
    *stream = ((const cuGraphLaunch_params *)params)->hStream;
    return 1;
  default: return 0;
  }
}

/* With marks: the stream a launch, copy or set went to. A runtime call's stream that is not read
 * (cooperative launches, the asynchronous copies of arrays and symbols) leaves the marks
 * unusable; a synchronous copy or set is the legacy stream's. The driver's calls inside the
 * runtime's fire callbacks too: theirs are read where known and otherwise passed over. */
static void note_stream(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                        const CUpti_CallbackData *call) {
  void *stream = NULL;
  if (call->functionParams && stream_of(domain, cbid, call->functionParams, &stream))
    wt_marks_stream_used(call->context, stream);
  else if (domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
  else if (call_kinds[0][cbid] == CALL_COPY && call->functionName &&
           !strstr(call->functionName, "Async"))
    wt_marks_stream_used(call->context, NULL);
  else wt_marks_unreadable(call->functionName ? call->functionName : "a launch");
}

/* WT_SYNC_DEVICE for a synchronisation of the device (context), WT_SYNC_STREAM for one of a
 * default stream (NULL, the legacy one, the per-thread one: NULL in a _ptsz form), 0 for an
 * event's or another stream's */
static int sync_of(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *params) {
  void *stream;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020 ||
        cbid == CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020)
      return WT_SYNC_DEVICE;
    if (!params) return 0;
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020)
      stream = ((const cudaStreamSynchronize_v3020_params *)params)->stream;
    else if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000)
      stream = ((const cudaStreamSynchronize_ptsz_v7000_params *)params)->stream;
    else return 0;
  } else {
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize ||
        cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2)
      return WT_SYNC_DEVICE;
    if (!params) return 0;
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize)
      stream = ((const cuStreamSynchronize_params *)params)->hStream;
    else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz)
      stream = ((const cuStreamSynchronize_ptsz_params *)params)->hStream;
    else return 0;
  }
  return !stream || stream == (void *)0x1 || stream == WL_PER_THREAD_STREAM ? WT_SYNC_STREAM : 0;
}

static void CUPTIAPI api_called(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void *data) {
  (void)userdata;
  const CUpti_CallbackData *call = data;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) { /* quiet steps: streams and contexts destroyed */
    const CUpti_ResourceData *res = data;
    if (cbid == CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING)
      wt_marks_gone_later(res->context, res->resourceHandle.stream, 0);
    else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
      wt_marks_gone_later(res->context, NULL, 1);
    return;
  }
  if ((domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) ||
      cbid >= MAX_CBID)
    return;
  uint8_t kind = call_kinds[domain == CUPTI_CB_DOMAIN_DRIVER_API][cbid];
  if (kind == CALL_SYNC) {
    wt_waits_sync_called(call->callbackSite == CUPTI_API_ENTER,
                         sync_of(domain, cbid, call->functionParams), call->context);
    return;
  }
  if (call->callbackSite != CUPTI_API_ENTER) return;
  void *stream = NULL;
  int noted;
  switch (kind) {
  case CALL_LAUNCH:
  case CALL_COPY:
    /* a kernel launch of a step not recorded (sampled, no quiet steps): no C record, no count;
     * the loop's waits, the idle marks and the marks' streams still hear of it */
    noted = kind == CALL_COPY || atomic_load_explicit(&kernels_on, memory_order_relaxed);
    if (noted)
      wt_note_launch(call->correlationId, wt_marking()); /* a mark's set: at its boundary */
    if (wt_marking()) wt_marks_correlation(call->correlationId);
    else wt_waits_work_started();
    /* for the idle marks (a set of a step not recorded gets no time from CUPTI; a copy does) */
    if (sampling.marks && !wt_marking() &&
        (kind == CALL_LAUNCH || (call->functionName && strstr(call->functionName, "emset"))))
      wt_waits_untimed_started();
    /* a runtime call's launch is the driver's call inside it too: each counted once; a mark's
     * memset is the library's, not the program's */
    if (noted && domain == CUPTI_CB_DOMAIN_DRIVER_API && !wt_marking()) wt_launch_counted();
    if (sampling.marks) note_stream(domain, cbid, call);
    break;
  case CALL_EVENT: wt_note_launch(call->correlationId, wt_marking()); break;
  case CALL_STREAM_GONE:
    if (!call->functionParams) break;
    stream = domain == CUPTI_CB_DOMAIN_DRIVER_API
                 ? (void *)((const cuStreamDestroy_v2_params *)call->functionParams)->hStream
                 : (void *)((const cudaStreamDestroy_v5050_params *)call->functionParams)->stream;
    wt_marks_stream_gone(stream);
    break;
  case CALL_CONTEXT_GONE:
    wt_marks_context_gone(cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2 && call->functionParams
                              ? ((const cuCtxDestroy_v2_params *)call->functionParams)->ctx
                              : NULL);
    break;
  case CALL_CAPTURE_BEGIN: wt_marks_capturing(1); break;
  case CALL_CAPTURE_END: wt_marks_capturing(-1); break;
  default: break;
  }
}

/* Launches (Ex, cooperative, _ptsz forms) and graph launches: CALL_LAUNCH; copies and sets:
 * CALL_COPY; not host functions. */
static enum call_kind starts_gpu_work(CUpti_CallbackDomain domain, const char *name) {
  static const char *const runtime[] = {"cudaLaunch", "cudaGraphLaunch", "cudaMemcpy",
                                        "cudaMemset"};
  static const char *const driver[] = {"cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset"};
  const char *const *prefixes = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? runtime : driver;
  if (strstr(name, "HostFunc")) return CALL_NONE;
  for (size_t i = 0; i < 4; i++)
    if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
      return i < 2 ? CALL_LAUNCH : CALL_COPY;
  return CALL_NONE;
}

static int has_prefix(const char *name, const char *prefix) {
  return strncmp(name, prefix, strlen(prefix)) == 0;
}

/* what the library does on a call of that name: every launch; with step marks, event records
 * (the marks' and the program's own: each is where the work before it ended), the destruction
 * of streams and contexts (whose streams the marks must forget) and graph captures (no mark
 * while one is made: it would join the graph, or break the capture) */
static enum call_kind kind_of_call(CUpti_CallbackDomain domain, const char *name) {
  int rt = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  enum call_kind work = starts_gpu_work(domain, name);
  if (work != CALL_NONE) return work;
  static const char *const waits[2][4] = {
      {"cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize", NULL},
      {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
       "cudaThreadSynchronize"}};
  for (size_t i = 0; i < 4 && waits[rt][i]; i++)
    if (has_prefix(name, waits[rt][i])) return CALL_SYNC;
  if (has_prefix(name, rt ? "cudaEventRecord" : "cuEventRecord")) return CALL_EVENT;
  if (has_prefix(name, rt ? "cudaStreamBeginCapture" : "cuStreamBeginCapture"))
    return CALL_CAPTURE_BEGIN;
  if (has_prefix(name, rt ? "cudaStreamEndCapture" : "cuStreamEndCapture")) return CALL_CAPTURE_END;
  if (rt) {
    if (has_prefix(name, "cudaStreamDestroy")) return CALL_STREAM_GONE;
    return has_prefix(name, "cudaDeviceReset") ? CALL_CONTEXT_GONE : CALL_NONE;
  }
  if (has_prefix(name, "cuStreamDestroy")) return CALL_STREAM_GONE;
  return has_prefix(name, "cuCtxDestroy") || has_prefix(name, "cuDevicePrimaryCtxRelease") ||
                 has_prefix(name, "cuDevicePrimaryCtxReset")
             ? CALL_CONTEXT_GONE
             : CALL_NONE;
}

/* the callbacks of calls of kind `which` (CALL_NONE: the marks' kinds, CALL_EVENT on) on or off;
 * the count that failed, the first failure's result in *first */
static int switch_callbacks(int on, enum call_kind which, CUptiResult *first) {
  int failed = 0;
  for (int d = 0; d < 2; d++) {
    CUpti_CallbackDomain domain = d ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
    for (uint32_t cbid = 1; cbid < MAX_CBID; cbid++) {
      uint8_t k = call_kinds[d][cbid];
      if (k == CALL_NONE || (which == CALL_NONE ? k < CALL_EVENT : k != which)) continue;
      CUptiResult r = cupti.EnableCallback(on, subscriber, domain, cbid);
      if (r != CUPTI_SUCCESS && !failed++) *first = r;
    }
  }
  return failed;
}

/* The loop's waits after and before its steps (trace_waits.c): the synchronisations' callbacks,
 * where every launch is called back, on every step (recorded or not, where steps are not quiet) */
static void waits_on(void) {
  CUptiResult waits = CUPTI_SUCCESS;
  if (!switch_callbacks(1, CALL_SYNC, &waits)) return;
  error_record("cuptiEnableCallback (synchronisations)", waits,
               "a step ends before the loop's synchronisation after it");
  switch_callbacks(0, CALL_SYNC, &waits);
  for (int d = 0; d < 2; d++) /* any left on (a switch off that failed too) is ignored */
    for (uint32_t cbid = 1; cbid < MAX_CBID; cbid++)
      if (call_kinds[d][cbid] == CALL_SYNC) call_kinds[d][cbid] = CALL_NONE;
}

/* the callbacks on; 0 where those the marks need could not be had (no marks then) */
static int enable_callbacks(int marks) {
  static const CUpti_CallbackDomain domains[] = {CUPTI_CB_DOMAIN_RUNTIME_API,
                                                 CUPTI_CB_DOMAIN_DRIVER_API};
  int launches = 0;
  for (size_t d = 0; d < 2; d++) {
    for (uint32_t cbid = 1; cbid < MAX_CBID; cbid++) {
      const char *name = NULL;
      if (cupti.GetCallbackName(domains[d], cbid, &name) != CUPTI_SUCCESS || !name)
        continue; /* no such id */
      enum call_kind k = kind_of_call(domains[d], name);
      int work = k == CALL_LAUNCH || k == CALL_COPY;
      if (work || k == CALL_SYNC || marks) call_kinds[d][cbid] = (uint8_t)k;
      launches += work;
    }
  }
  CUptiResult first = CUPTI_SUCCESS;
  int failed = switch_callbacks(1, CALL_LAUNCH, &first) + switch_callbacks(1, CALL_COPY, &first);
  launch_callbacks = launches && !failed;
  /* the loop's waits after its steps: where every step is recorded (else start() decides, once
   * it is known whether steps are quiet) */
  if (launch_callbacks && !wt_steps_sampled()) waits_on();
  if (failed) {
    char what[128];
    snprintf(what, sizeof what, "cuptiEnableCallback failed for %d of %d calls", failed, launches);
    error_record(what, first, "GPU work they start is not attributed to ranges");
  }
  if (!launches)
    wt_record_text(
        'E', NULL,
        "cuptiGetCallbackName named no launch, copy or set: GPU work is not attributed to ranges");
  if (marks && (failed || switch_callbacks(1, CALL_NONE, &first))) {
    error_record("cuptiEnableCallback (launches, event records, streams destroyed, captures)",
                 first, "no step marks: GPU activity on every step");
    switch_callbacks(0, CALL_NONE, &first);
    return 0;
  }
  return marks;
}

/* ---- GPU activity on a sample of the steps ---- */

/* one kind of activity on or off; a failure counted in *failed, the first kept in *first */
static void switch_kind(CUpti_ActivityKind kind, int on, int *failed, CUptiResult *first) {
  CUptiResult r = on ? cupti.ActivityEnable(kind) : cupti.ActivityDisable(kind);
  if (r != CUPTI_SUCCESS && !(*failed)++) *first = r;
}

/* kernels' activity on or off, and with quiet steps the callbacks of kernel and graph launches
 * (without, they stay on and only tell the loop's waits that work started: api_called); copies
 * stay recorded: few, and the data loading's end; so do sets: turning the sets' activity off turns
 * the copies' records off with it on an H100 with CUDA 13, copy marks and the batch's copies too,
 * so only quiet steps, which record neither, do; the number of CUPTI calls that failed */
static int switch_activity(int on) {
  CUptiResult first = CUPTI_SUCCESS;
  /* on: the launches' C records before their activity (a C without its K is harmless, a K
   * without its C is work of no range); off: the other way round */
  if (on) atomic_store(&kernels_on, 1);
  int failed =
      wt_quiet_wanted() || !wt_steps_sampled() ? switch_callbacks(on, CALL_LAUNCH, &first) : 0;
  switch_kind(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, on, &failed, &first);
  if (!on) atomic_store(&kernels_on, 0);
  if (wt_quiet_wanted()) { /* nothing recorded, nothing called back: sets, copies, other calls */
    if (sets_recorded) switch_kind(CUPTI_ACTIVITY_KIND_MEMSET, on, &failed, &first), sets_on = on;
    if (copies_recorded) switch_kind(CUPTI_ACTIVITY_KIND_MEMCPY, on, &failed, &first);
    failed += switch_callbacks(on, CALL_COPY, &first) + switch_callbacks(on, CALL_NONE, &first);
    wt_quiet_steps(!on);
  }
  if (failed)
    error_record(on ? "turning GPU activity on" : "turning GPU activity off", first,
                 "some steps' GPU work may be missing or recorded");
  return failed;
}

/* under the sampling lock (trace_steps.c), whose order the P records keep */
static void sampled_activity(int on, uint64_t at) {
  static uint64_t last;
  if (at < last) at = last; /* a step of another thread's, timed before the last change */
  last = at;
  switch_activity(on);
  if (!on) atomic_store(&activity_was_off, 1);
  wt_lock();
  if (wt_ready()) {
    wt_line('P');
    wt_u64(at);
    wt_text(on ? "on" : "off");
    wt_end();
  }
  wt_unlock();
}

/* the steps traced are done: CUPTI off for the rest of the process (the work launched before
 * still gives its records) */
static void sampling_stop(void) {
  CUptiResult first = CUPTI_SUCCESS;
  if (atomic_load(&kernels_on)) switch_activity(0);
  if (wt_steps_sampled()) atomic_store(&activity_was_off, 1);
  /* sampled without quiet steps, the launches' callbacks were on whatever the kernels' activity */
  if (wt_steps_sampled() && !wt_quiet_wanted() && switch_callbacks(0, CALL_LAUNCH, &first))
    error_record("turning GPU activity off", first,
                 "some steps' GPU work may be missing or recorded");
  switch_callbacks(0, CALL_COPY, &first);
  switch_callbacks(0, CALL_SYNC, &first);
  switch_callbacks(0, CALL_NONE, &first);
  cupti.ActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
  if (sets_on) cupti.ActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
  cupti.ActivityDisable(CUPTI_ACTIVITY_KIND_CUDA_EVENT);
}


/* ---- start ---- */

/* A CUPTI the program has loaded already (PyTorch links its own): two in one process would
 * both drive the same driver. */
static void *loaded_cupti(void) {
  static const char *const sonames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
  for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++) {
    void *lib = dlopen(sonames[i], RTLD_NOW | RTLD_NOLOAD);
    if (lib) {
      snprintf(library, sizeof library, "%s", sonames[i]);
      return lib;
    }
  }
  return NULL;
}

#ifndef WLRUN_TRACE_TOOLKIT_LIB
#define WLRUN_TRACE_TOOLKIT_LIB "/usr/local/cuda/lib64"
#endif

/* Loads CUPTI and finds its functions; on failure, why in reason. Without WLRUN_TRACE_CUPTI: the
 * CUPTI loaded already, else the loader's, else the toolkit's copies (not always on its path). */
static int load(char *reason, size_t room) {
  static const char *const defaults[] = {
      "libcupti.so.13", "libcupti.so", WLRUN_TRACE_TOOLKIT_LIB "/libcupti.so.13",
      "/usr/local/cuda/lib64/libcupti.so.13", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"};
  const char *chosen = getenv(WL_TRACE_ENV_CUPTI);
  const char *const *candidates = chosen && *chosen ? &chosen : defaults;
  size_t n = chosen && *chosen ? 1 : sizeof defaults / sizeof defaults[0];
  void *lib = chosen && *chosen ? NULL : loaded_cupti();
  char why[256] = "";
  for (size_t i = 0; i < n && !lib; i++) {
    lib = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
    if (lib) snprintf(library, sizeof library, "%s", candidates[i]);
    else if (i == 0) {
      const char *e = dlerror();
      snprintf(why, sizeof why, "%s", e ? e : "dlopen failed");
    }
  }
  if (!lib) {
    snprintf(reason, room, "%s: cannot open (%s)%s", candidates[0], why,
             n > 1 ? "; nor libcupti.so, nor the toolkit's (set " WL_TRACE_ENV_CUPTI ")" : "");
    return 0;
  }
#define FIND(name, required)                                                                  \
  do {                                                                                        \
    cupti.name = (__typeof__(cupti.name))dlsym(lib, "cupti" #name);                           \
    if (!cupti.name && (required)) {                                                          \
      snprintf(reason, room, "%s: no cupti" #name " (a CUPTI older than CUDA 12?)", library); \
      return 0;                                                                               \
    }                                                                                         \
  } while (0)
  FIND(GetResultString, 1);
  FIND(ActivityEnable, 1);
  FIND(ActivityDisable, 1);
  FIND(ActivityEnableCudaEventDeviceTimestamps, 0);
  FIND(ActivityRegisterCallbacks, 1);
  FIND(ActivityGetNextRecord, 1);
  FIND(ActivityGetNumDroppedRecords, 1);
  FIND(ActivityFlushAll, 1);
  FIND(Subscribe, 1);
  FIND(EnableCallback, 1);
  FIND(GetCallbackName, 1);
  FIND(ActivityRegisterTimestampCallback, 0);
  FIND(GetTimestamp, 0);
  FIND(GetVersion, 0);
#undef FIND
  return 1;
}

/* K times in CLOCK_MONOTONIC ns: CUPTI asks us for its timestamps; failing that, the offset of its
 * own clock (CLOCK_REALTIME on Linux) is measured once and taken off. */
static void choose_clock(void) {
  CUptiResult r = CUPTI_ERROR_NOT_SUPPORTED;
  if (cupti.ActivityRegisterTimestampCallback) {
    r = cupti.ActivityRegisterTimestampCallback(monotonic_ns);
    if (r == CUPTI_SUCCESS) return;
  }
  uint64_t before = wt_now(), theirs = 0;
  if (!cupti.GetTimestamp || cupti.GetTimestamp(&theirs) != CUPTI_SUCCESS) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    theirs = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  }
  uint64_t after = wt_now();
  clock_offset = (int64_t)(theirs - (before + (after - before) / 2));
  error_record(cupti.ActivityRegisterTimestampCallback
                   ? "cuptiActivityRegisterTimestampCallback"
                   : "cuptiActivityRegisterTimestampCallback not in CUPTI",
               r, "K times are CUPTI's clock less an offset measured once");
}

/* How the step marks are timed; 0 where they cannot be (an E record says why). By default they
 * are memsets of 13 bytes, timed by the MEMSET activity that is on anyway (sets: whether it is):
 * CUDA_EVENT activity with device timestamps costs the program about 1 us on every launch,
 * recorded step or not (docs/trace.md, "What tracing costs a launch"). WLRUN_TRACE_MARKS=copy
 * (with MEMCPY activity, copies: whether it is on): copies of 13 bytes from pinned host memory.
 * WLRUN_TRACE_MARKS=event, or no MEMSET activity: CUDA events, timed by CUPTI's CUDA_EVENT
 * activity. */
static int event_marks(void) {
  if (!cupti.ActivityEnableCudaEventDeviceTimestamps) {
    wt_record_text('E', NULL,
                   "no cuptiActivityEnableCudaEventDeviceTimestamps in CUPTI: no step marks, GPU "
                   "activity on every step");
    return 0;
  }
  CUptiResult r = cupti.ActivityEnableCudaEventDeviceTimestamps(1);
  if (r == CUPTI_SUCCESS) r = cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_CUDA_EVENT);
  if (r == CUPTI_SUCCESS) return 1;
  error_record("cuptiActivityEnable(CUDA_EVENT)", r, "no step marks: GPU activity on every step");
  return 0;
}

/* what the marks are, by enum wt_mark_kind */
static const char *const mark_names[] = {"CUDA events", "sets", "copies"};

static int mark_times(int copies, int sets) {
  const char *how = getenv("WLRUN_TRACE_MARKS");
  int event = how && strcmp(how, "event") == 0, copy = how && strcmp(how, "copy") == 0;
  int set = how && strcmp(how, "set") == 0, marks = 1;
  if (copy && copies) wt_marks_made_as(WT_MARK_COPY);
  else if (sets && !event) wt_marks_made_as(WT_MARK_SET);
  else marks = event_marks();
  if (how && *how && !event && !(copy && copies) && !(set && sets)) {
    char text[200];
    snprintf(text, sizeof text, "WLRUN_TRACE_MARKS=%.40s not heeded (%s): the step marks are %s",
             how,
             copy  ? "CUPTI does not record copies"
             : set ? "CUPTI does not record sets"
                   : "not set, copy or event",
             marks ? mark_names[wt_marks_kind()] : "none (GPU activity on every step)");
    wt_record_text('E', NULL, text);
  }
  return marks;
}

/* With quiet steps, a thread of the library's hands CUPTI's completed buffers back when asked (a
 * quiet mark waits for its anchor's time, which CUPTI keeps until a buffer is full otherwise):
 * cuptiActivityFlushAll on the program's thread would charge its steps; no signal of the
 * program's goes to that thread. */
static pthread_mutex_t flush_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flush_cond = PTHREAD_COND_INITIALIZER;
static int flush_wanted, flusher_on, flushing; /* under flush_lock */
static atomic_int flush_failed;

static void *flusher(void *arg) {
  (void)arg;
  for (;;) {
    wt_mutex_lock(&flush_lock);
    while (!flush_wanted) pthread_cond_wait(&flush_cond, &flush_lock);
    flush_wanted = 0;
    flushing = flusher_on; /* none once the exit has begun */
    wt_mutex_unlock(&flush_lock);
    if (!flushing) continue;
    CUptiResult r = cupti.ActivityFlushAll(0);
    if (r != CUPTI_SUCCESS && !atomic_exchange(&flush_failed, 1))
      error_record("cuptiActivityFlushAll", r, "quiet marks wait for the exit to be timed");
    wt_mutex_lock(&flush_lock);
    flushing = 0;
    pthread_cond_broadcast(&flush_cond);
    wt_mutex_unlock(&flush_lock);
  }
  return NULL;
}

static int start_flusher(void) {
  sigset_t all, old;
  pthread_t t;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread starts with every signal blocked */
  int ok = pthread_create(&t, NULL, flusher, NULL) == 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (ok) pthread_detach(t);
  wt_mutex_lock(&flush_lock);
  flusher_on = ok;
  wt_mutex_unlock(&flush_lock);
  return ok;
}

/* at exit: no more flushes, the one under way finished */
static void stop_flusher(void) {
  wt_mutex_lock(&flush_lock);
  flusher_on = 0;
  while (flushing) pthread_cond_wait(&flush_cond, &flush_lock);
  wt_mutex_unlock(&flush_lock);
}

static void flush_soon(void) {
  wt_mutex_lock(&flush_lock);
  if (flusher_on) {
    flush_wanted = 1;
    pthread_cond_signal(&flush_cond);
  }
  wt_mutex_unlock(&flush_lock);
}

/* WLRUN_TRACE_QUIET=1: quiet steps (trace_quiet.c), where marks are sets or copies; the ends of
 * streams and contexts then come from the resource callbacks, which cost the program's calls
 * nothing */
static void quiet_steps(void) {
  const char *q = getenv("WLRUN_TRACE_QUIET");
  if (!q || !*q || strcmp(q, "0") == 0) return;
  if (strcmp(q, "1") != 0) {
    char text[120];
    snprintf(text, sizeof text, "WLRUN_TRACE_QUIET=%.40s is not 0 or 1: no quiet steps", q);
    wt_record_text('E', NULL, text);
    return;
  }
  if (!sampling.marks || wt_marks_kind() == WT_MARK_EVENT) {
    wt_record_text('E', NULL,
                   "WLRUN_TRACE_QUIET=1 needs step marks made as sets or copies: no quiet steps");
    return;
  }
  CUptiResult r = cupti.EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                       CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING);
  if (r == CUPTI_SUCCESS)
    r = cupti.EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                             CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  if (r != CUPTI_SUCCESS) {
    error_record("cuptiEnableCallback (streams and contexts destroyed)", r, "no quiet steps");
    return;
  }
  if (!wt_quiet_start(flush_soon, wt_note_launch))
    wt_record_text('E', NULL,
                   "the driver lacks an event function that quiet steps need: no quiet steps");
  else if (!start_flusher())
    wt_record_text('E', NULL,
                   "no thread to hand CUPTI's buffers back: quiet marks wait for the exit to be "
                   "timed");
}

/* Sets CUPTI up; on failure (GPU timing off), why in reason. */
static int start(char *reason, size_t room) {
  choose_clock();
  CUptiResult r = cupti.ActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS) {
    snprintf(reason, room, "cuptiActivityRegisterCallbacks: %s (%d)", result_text(r), (int)r);
    return 0;
  }
  r = cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) {
    snprintf(reason, room, "cuptiActivityEnable(CONCURRENT_KERNEL): %s (%d)", result_text(r),
             (int)r);
    return 0;
  }
  int copies = copies_recorded =
      (r = cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY)) == CUPTI_SUCCESS;
  if (!copies) error_record("cuptiActivityEnable(MEMCPY)", r, "copies are not timed");
  int sets = sets_recorded = sets_on =
      (r = cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET)) == CUPTI_SUCCESS;
  if (!sets) error_record("cuptiActivityEnable(MEMSET)", r, "sets are not timed");
  /* every step recorded: no marks */
  sampling.marks = wt_steps_sampled() && mark_times(copies, sets);
  if ((r = cupti.Subscribe(&subscriber, api_called, NULL)) != CUPTI_SUCCESS) {
    error_record("cuptiSubscribe", r, "GPU work is not attributed to ranges");
    sampling.marks = 0;
  } else sampling.marks = enable_callbacks(sampling.marks);
  if (!sampling.marks) wt_marks_made_as(WT_MARK_EVENT); /* no set or copy is then a mark */
  if (wt_steps_sampled()) quiet_steps();
  if (wt_steps_sampled() && launch_callbacks && !wt_quiet_wanted()) waits_on();
  if (sampling.marks && !wt_quiet_wanted()) wt_marks_idle_with(wt_note_launch, wt_waits_synced);
  return 1;
}

/* ---- exit and fork ---- */

/* an E record of the activity records left out without valid times, by what they were (not the
 * program's sets where kernels' activity was off for some steps: activity_was_off; nor, with quiet
 * steps, its copies, whose activity was off too) */
static void record_untimed(void) {
  char text[256], parts[160] = "";
  uint64_t total = 0;
  size_t used = 0;
  int off = atomic_load(&activity_was_off); /* and with quiet steps, the copies' activity too */
  for (int k = 0; k < UNTIMED_KINDS; k++) {
    uint64_t n = atomic_load(&untimed[k]);
    if (!n || (off && (k == UNTIMED_SET || (k == UNTIMED_COPY && wt_quiet_wanted())))) continue;
    total += n;
    int w = snprintf(parts + used, sizeof parts - used, "%s%llu %s", used ? ", " : "",
                     (unsigned long long)n, untimed_names[k]);
    if (w > 0 && (size_t)w < sizeof parts - used) used += (size_t)w;
  }
  if (total) {
    snprintf(text, sizeof text, "%llu activity records without valid times were left out (%s)",
             (unsigned long long)total, parts);
    wt_record_text('E', NULL, text);
  }
}

static void cupti_at_exit(void) {
  if (atomic_load(&state) != CUPTI_ACTIVE) return;
  stop_flusher();
  wt_marks_settle(); /* the quiet marks' events (and their anchors' sets) run, a second at most */
  CUptiResult r = cupti.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (r != CUPTI_SUCCESS)
    error_record("cuptiActivityFlushAll", r, "the last GPU activity may be missing");
  wt_marks_flush(); /* after the flush: every anchor's time has come */
  record_untimed();
}

static uint64_t cupti_dropped(void) { return atomic_load(&dropped); }

/* A forked child does nothing CUDA-related: its parent's CUPTI is not its own. */
static void cupti_fork_child(void) {
  if (atomic_load(&state) != CUPTI_NONE) atomic_store(&state, CUPTI_INHERITED);
  pthread_mutex_init(&spare_lock, NULL);
  pthread_mutex_init(&names_lock, NULL);
  for (int i = 0; i < nspare; i++) free(spare[i]);
  nspare = 0;
  atomic_store(&dropped, 0);
  for (int k = 0; k < UNTIMED_KINDS; k++) atomic_store(&untimed[k], 0);
  atomic_store(&activity_was_off, 0);
  pthread_mutex_init(&flush_lock, NULL);
  pthread_cond_init(&flush_cond, NULL);
  flush_wanted = flusher_on = flushing = 0; /* the thread is the parent's */
}

static const struct wt_activity_hooks hooks = {cupti_at_exit, cupti_dropped, cupti_fork_child};

EXPORT int InitializeInjection(void);

/* Called by the CUDA driver, once, while the program initialises CUDA. Returns 1 whatever happens:
 * the program's CUDA must work, traced or not. */
int InitializeInjection(void) {
  if (!wt_init()) return 1;
  int expected = CUPTI_NONE;
  if (!atomic_compare_exchange_strong(&state, &expected, CUPTI_OFF)) return 1;
  const char *gpu = getenv(WL_TRACE_ENV_GPU);
  char reason[768];
  if (gpu && strcmp(gpu, "0") == 0) {
    wt_record_text('G', "off", WL_TRACE_ENV_GPU "=0");
    return 1;
  }
  if (!load(reason, sizeof reason) || !start(reason, sizeof reason)) {
    wt_record_text('G', "off", reason);
    return 1;
  }
  uint32_t version = 0;
  char marks[48] = ""; /* first: the report keeps a reason's first 200 bytes */
  if (sampling.marks)
    snprintf(marks, sizeof marks, "step marks: %s%s; ", mark_names[wt_marks_kind()],
             wt_quiet_wanted() ? ", quiet steps" : "");
  if (cupti.GetVersion && cupti.GetVersion(&version) == CUPTI_SUCCESS)
    snprintf(reason, sizeof reason, "%s%s (CUPTI API %u)", marks, library, version);
  else snprintf(reason, sizeof reason, "%s%s", marks, library);
  wt_record_text('G', "on", reason);
  atomic_store(&state, CUPTI_ACTIVE);
  wt_use_activity(&hooks);
  if (subscriber) wt_use_sampling(&sampling);
  return 1;
}
