/* Kernel-only time through CUPTI (wlrun.engine; docs/measuring.md, "Kernel time through CUPTI"):
 *   core.time_cupti(work, n, flush) -> {gpu = {s...}, span = {s...}, enqueue = {s...},
 *                                kernels = {{name =, durations = {s...}}...}, unattributed = k}
 * n samples of the work (a bound launch, a wl.graph, a Lua function, or a list of them, rotated),
 * queued back to back with no event; CUPTI's kernel records (CONCURRENT_KERNEL) give the time.
 * Each sample is tagged with its own external correlation id
 * (cuptiActivityPushExternalCorrelationId), which CUPTI attaches to every runtime and driver call
 * made inside it (the launches of a function, a library's kernels, a graph's launch), so that each
 * kernel record is given to its sample whatever stream or order it ran in. A sample's gpu time is
 * the sum of its kernels' durations (the gaps between them left out); span is its first kernel's
 * start to its last kernel's end; kernels lists every kernel name in the order of first launch,
 * with the duration of each launch. Copies and sets are not kernels and are not counted. CUPTI is
 * loaded at the first call (cupti_load.c) and its activity is on only during the call; another tool
 * using CUPTI (wlrun trace, Nsight) is an error of kind no_device naming it, as is a CUPTI that
 * does not load. flush: the L2 flushed before each sample (l2_flush.h), outside its tag: a set, not
 * counted. Under --compile-only the work is queued n times with its checks and the times are 0. */
#include "cupti_load.h"

#include "cuda_graph.h"
#include "cuda_launch.h"
#include "cuda_stream.h"
#include "l2_flush.h"
#include "laux.h"
#include "wl_exit.h"
#include "wl_modules.h"

#include <lauxlib.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* libstdc++'s demangler (linked for cudart), declared here for C */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

enum { BUFFER_SIZE = 4 << 20, MAX_ITEMS = 64 };
static const CUpti_ExternalCorrelationKind TAG_KIND = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;

/* ---- what CUPTI delivers, from its own thread or from the flush ---- */

struct kernel_record {
  uint64_t start, end;
  uint32_t correlation;
  const char *name; /* CUPTI's, one pointer per kernel */
};

struct tag_record {
  uint32_t correlation;
  uint64_t id;
};

static const struct wl_cupti_api *cupti;
static pthread_mutex_t got_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  struct kernel_record *kernels;
  size_t nkernels, kernels_cap;
  struct tag_record *tags;
  size_t ntags, tags_cap;
  size_t dropped;
  bool out_of_memory, unreadable;
} got;

static bool grow(void **array, size_t *cap, size_t used, size_t size) {
  if (used < *cap) return true;
  size_t want = *cap ? 2 * *cap : 4096;
  void *p = realloc(*array, want * size);
  if (!p) return false;
  *array = p;
  *cap = want;
  return true;
}

static void keep(const CUpti_Activity *rec) {
  if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
      rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
    const CUpti_ActivityKernel10 *k = (const void *)rec;
    if (!grow((void **)&got.kernels, &got.kernels_cap, got.nkernels, sizeof *got.kernels)) {
      got.out_of_memory = true;
      return;
    }
    got.kernels[got.nkernels++] =
        (struct kernel_record){k->start, k->end, k->correlationId, k->name};
  } else if (rec->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
    const CUpti_ActivityExternalCorrelation *c = (const void *)rec;
    if (c->externalKind != TAG_KIND) return;
    if (!grow((void **)&got.tags, &got.tags_cap, got.ntags, sizeof *got.tags)) {
      got.out_of_memory = true;
      return;
    }
    got.tags[got.ntags++] = (struct tag_record){c->correlationId, c->externalId};
  }
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  void *b = NULL;
  if (posix_memalign(&b, ACTIVITY_RECORD_ALIGNMENT, BUFFER_SIZE) != 0) b = NULL;
  *buffer = b;
  *size = b ? BUFFER_SIZE : 0;
  *max_records = 0;
  if (!b) {
    pthread_mutex_lock(&got_lock);
    got.out_of_memory = true;
    pthread_mutex_unlock(&got_lock);
  }
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid) {
  (void)size;
  CUpti_Activity *rec = NULL;
  CUptiResult r = CUPTI_ERROR_MAX_LIMIT_REACHED;
  size_t lost = 0;
  pthread_mutex_lock(&got_lock);
  while (buffer && (r = cupti->next_record(buffer, valid, &rec)) == CUPTI_SUCCESS) keep(rec);
  if (r != CUPTI_ERROR_MAX_LIMIT_REACHED) got.unreadable = true;
  if (cupti->dropped(ctx, stream, &lost) == CUPTI_SUCCESS) got.dropped += lost;
  pthread_mutex_unlock(&got_lock);
  free(buffer);
}

static void forget_records(void) {
  pthread_mutex_lock(&got_lock);
  got.nkernels = got.ntags = got.dropped = 0;
  got.out_of_memory = got.unreadable = false;
  pthread_mutex_unlock(&got_lock);
}

/* ---- CUPTI for the length of one timed call ---- */

/* The API records are never read, but CUPTI writes an external correlation record only beside
 * one: RUNTIME for wlrun's own launches and graph launches (cudaLaunchKernel, cudaGraphLaunch),
 * DRIVER for work that calls the driver itself (a library's cuLaunchKernel). */
static const CUpti_ActivityKind KINDS[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};
static const char *const KIND_NAMES[] = {"CONCURRENT_KERNEL", "RUNTIME", "DRIVER",
                                         "EXTERNAL_CORRELATION"};
enum { NKINDS = sizeof KINDS / sizeof KINDS[0] };

static void CUPTIAPI no_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data) {
  (void)userdata, (void)domain, (void)cbid, (void)data;
}

static void release(CUpti_SubscriberHandle sub, int enabled) {
  for (int k = 0; k < enabled; k++)
    (void)cupti->disable(KINDS[k]); /* nothing more to do if it fails */
  (void)cupti->unsubscribe(sub);
}

/* CUPTI loaded, subscribed (no other tool using it), its activity on; raises no_device with why */
static CUpti_SubscriberHandle claim(lua_State *L) {
  static bool registered;
  char why[1600];
  if (!cupti && !(cupti = wl_cupti_load(why, sizeof why)))
    wl_raise(L, WL_EXIT_NO_DEVICE, "wl.bench: cupti mode: %s", why);
  CUpti_SubscriberHandle sub;
  CUptiResult r = cupti->subscribe(&sub, no_callback, NULL);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    wl_raise(
        L, WL_EXIT_NO_DEVICE,
        "wl.bench: cupti mode: another tool is using CUPTI in this process (wlrun trace, Nsight "
        "Systems, Nsight "
        "Compute, a profiler; %s): cupti mode needs it alone; time in cold mode under a profiler",
        wl_cupti_result(cupti, r));
  if (r != CUPTI_SUCCESS)
    wl_raise(L, WL_EXIT_NO_DEVICE, "wl.bench: cupti mode: cuptiSubscribe (%s): %s (%d)",
             cupti->path, wl_cupti_result(cupti, r), (int)r);
  if (!registered &&
      (r = cupti->register_callbacks(buffer_requested, buffer_completed)) != CUPTI_SUCCESS) {
    release(sub, 0);
    wl_raise(L, WL_EXIT_NO_DEVICE, "wl.bench: cupti mode: cuptiActivityRegisterCallbacks: %s (%d)",
             wl_cupti_result(cupti, r), (int)r);
  }
  registered = true;
  forget_records();
  for (int k = 0; k < NKINDS; k++) {
    if ((r = cupti->enable(KINDS[k])) == CUPTI_SUCCESS) continue;
    release(sub, k);
    wl_raise(L, WL_EXIT_NO_DEVICE, "wl.bench: cupti mode: cuptiActivityEnable(%s): %s (%d)",
             KIND_NAMES[k], wl_cupti_result(cupti, r), (int)r);
  }
  return sub;
}

/* ---- the samples ---- */

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

struct run {
  int n;
  double *enqueue;
  uint64_t base; /* the tag of sample i is base + i; 0: no tags (--compile-only) */
  bool tagged;   /* a tag is pushed now */
  bool flush;    /* the L2 flushed before each sample */
};

/* checks the item at idx as a timed loop does; raises for what is not work */
static void check_item(lua_State *L, int idx) {
  struct wl_bound *b = wl_test_bound(L, idx);
  if (b) wl_bound_check(L, b, "launch");
  else if (!wl_graph_exec(L, idx, "graph:launch") && lua_type(L, idx) != LUA_TFUNCTION)
    wl_raise(L, WL_EXIT_SCRIPT,
             "wl.bench: the work must be a bound launch, a wl.graph or a function, got %s",
             luaL_typename(L, idx));
}

/* the stream the item at idx queues its work on: a bound launch's own, else the current one */
static cudaStream_t item_stream(lua_State *L, int idx) {
  struct wl_bound *b = wl_test_bound(L, idx);
  return b ? wl_bound_check(L, b, "launch") : wl_current_stream(L);
}

/* queues the item at idx once, checked again: Lua may have run since */
static void queue_item(lua_State *L, int idx) {
  struct wl_bound *b = wl_test_bound(L, idx);
  cudaGraphExec_t g = b ? NULL : wl_graph_exec(L, idx, "graph:launch");
  if (b) {
    wl_bound_enqueue(L, b, wl_bound_check(L, b, "launch"), 1);
  } else if (g) {
    WL_CUDA(L, wl_backend->graph_launch(g, wl_current_stream(L)), "launching a graph");
  } else {
    lua_pushvalue(L, idx);
    lua_call(L, 0, 0);
  }
}

static void push_tag(lua_State *L, struct run *run, uint64_t id) {
  CUptiResult r = cupti->push_id(TAG_KIND, id);
  if (r != CUPTI_SUCCESS)
    wl_raise(L, WL_EXIT_NO_DEVICE,
             "wl.bench: cupti mode: cuptiActivityPushExternalCorrelationId: %s (%d)",
             wl_cupti_result(cupti, r), (int)r);
  run->tagged = true;
}

static void pop_tag(struct run *run) {
  if (run->tagged) (void)cupti->pop_id(TAG_KIND, NULL); /* only ours is pushed: nothing to check */
  run->tagged = false;
}

/* (work, run): the n samples queued, each under its tag, then the device synchronised; called
 * protected, so that the caller turns CUPTI off whatever the work raises */
static int queue_samples(lua_State *L) {
  struct run *run = lua_touserdata(L, 2);
  lua_settop(L, 1);
  int first = 1, count = 1;
  if (lua_type(L, 1) == LUA_TTABLE && !lua_getmetatable(L, 1)) {
    lua_Integer len = luaL_len(L, 1);
    if (len < 1 || len > MAX_ITEMS)
      wl_raise(L, WL_EXIT_SCRIPT, "wl.bench: a rotation list holds 1 to 64 items");
    wl_check_stack(L, (int)len, "the items of a rotation list");
    for (lua_Integer i = 1; i <= len; i++) lua_geti(L, 1, i);
    first = 2, count = (int)len;
  }
  lua_settop(L, first + count - 1);
  for (int i = 0; i < count; i++) check_item(L, first + i);
  for (int i = 0; i < run->n; i++) {
    if (wl_stop_pending()) wl_stop_check(L);
    if (run->flush) wl_flush_l2(L, item_stream(L, first + i % count), i);
    if (run->base) push_tag(L, run, run->base + (uint64_t)i);
    double t0 = now();
    queue_item(L, first + i % count);
    run->enqueue[i] = now() - t0;
    pop_tag(run);
  }
  WL_CUDA(L, wl_backend->device_sync(), "waiting for the measured work");
  return 0;
}

/* ---- from records to samples ---- */

static int by_correlation(const void *a, const void *b) {
  uint32_t x = ((const struct tag_record *)a)->correlation,
           y = ((const struct tag_record *)b)->correlation;
  return (x > y) - (x < y);
}

static int by_start(const void *a, const void *b) {
  uint64_t x = ((const struct kernel_record *)a)->start,
           y = ((const struct kernel_record *)b)->start;
  return (x > y) - (x < y);
}

/* the sample of a kernel record, or -1 when it carries no tag of this call */
static long sample_of(const struct kernel_record *k, uint64_t base, int n) {
  struct tag_record key = {k->correlation, 0};
  const struct tag_record *t = bsearch(&key, got.tags, got.ntags, sizeof *got.tags, by_correlation);
  if (!t || t->id < base || t->id >= base + (uint64_t)n) return -1;
  return (long)(t->id - base);
}

static void push_name(lua_State *L, const char *mangled) {
  int status = -1;
  char *plain = mangled && strncmp(mangled, "_Z", 2) == 0
                    ? __cxa_demangle(mangled, NULL, NULL, &status)
                    : NULL;
  lua_pushstring(L, status == 0 && plain ? plain : mangled ? mangled : "(unnamed kernel)");
  free(plain);
}

/* kernels: the table at the top; names: CUPTI's name pointer -> its entry (a table at names) */
static void add_launch(lua_State *L, int names, const struct kernel_record *k) {
  int kernels = lua_gettop(L);
  if (lua_rawgetp(L, names, k->name ? k->name : "") != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_createtable(L, 0, 2);
    push_name(L, k->name);
    lua_setfield(L, -2, "name");
    lua_newtable(L);
    lua_setfield(L, -2, "durations");
    lua_pushvalue(L, -1);
    lua_rawseti(L, kernels, (lua_Integer)lua_rawlen(L, kernels) + 1);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, names, k->name ? k->name : "");
  }
  lua_getfield(L, -1, "durations");
  lua_pushnumber(L, (double)(k->end - k->start) * 1e-9);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  lua_settop(L, kernels);
}

static void push_numbers(lua_State *L, const double *v, int n, const char *field) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushnumber(L, v[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, field);
}

/* the records of this call into the result table at the top; raises when a sample has none */
static void attribute(lua_State *L, const struct run *run, double *gpu, double *span) {
  int n = run->n, result = lua_gettop(L);
  qsort(got.tags, got.ntags, sizeof *got.tags, by_correlation);
  qsort(got.kernels, got.nkernels, sizeof *got.kernels, by_start);
  uint64_t *first = lua_newuserdatauv(L, 2 * sizeof(uint64_t) * (size_t)n, 0), *last = first + n;
  for (int i = 0; i < n; i++) first[i] = UINT64_MAX, last[i] = 0, gpu[i] = 0;
  lua_newtable(L); /* names */
  lua_newtable(L); /* kernels */
  int names = result + 2;
  lua_Integer unattributed = 0;
  for (size_t j = 0; j < got.nkernels; j++) {
    const struct kernel_record *k = &got.kernels[j];
    long s = sample_of(k, run->base, n);
    if (s < 0 || k->start == 0 || k->end < k->start) {
      unattributed++;
      continue;
    }
    gpu[s] += (double)(k->end - k->start) * 1e-9;
    if (k->start < first[s]) first[s] = k->start;
    if (k->end > last[s]) last[s] = k->end;
    add_launch(L, names, k);
  }
  for (int i = 0; i < n; i++) {
    if (first[i] == UINT64_MAX)
      wl_raise(L, WL_EXIT_SCRIPT,
               "wl.bench: cupti mode: sample %d of %d ran no kernel that CUPTI recorded (%zu "
               "kernel records in all, "
               "%lld outside the samples): cupti mode times kernels, not copies or sets",
               i + 1, n, got.nkernels, (long long)unattributed);
    span[i] = (double)(last[i] - first[i]) * 1e-9;
  }
  lua_setfield(L, result, "kernels");
  lua_pushinteger(L, unattributed);
  lua_setfield(L, result, "unattributed");
  lua_settop(L, result);
}

/* ---- core.time_cupti ---- */

static int l_time_cupti(lua_State *L) {
  lua_Integer count = wl_check_integer(L, 2);
  wl_arg_check(L, count >= 1 && count <= 10000000, 2, "sample count from 1 to 1e7 expected");
  int n = (int)count;
  lua_settop(L, 3);
  wl_device_ready(L);
  double *gpu = lua_newuserdatauv(L, 3 * sizeof(double) * (size_t)n, 0), *span = gpu + n;
  struct run run = {n, span + n, 0, false, lua_toboolean(L, 3)};
  CUpti_SubscriberHandle sub = NULL;
  if (!wl_backend->no_device) {
    static uint64_t calls;
    sub = claim(L);
    run.base = ++calls << 32;
  }
  lua_pushcfunction(L, queue_samples);
  lua_pushvalue(L, 1);
  lua_pushlightuserdata(L, &run);
  int status = lua_pcall(L, 2, 0, 0);
  if (wl_backend->no_device) {
    if (status != LUA_OK) return lua_error(L);
    for (int i = 0; i < n; i++) gpu[i] = span[i] = 0;
    lua_createtable(L, 0, 5);
    lua_newtable(L);
    lua_setfield(L, -2, "kernels");
    lua_pushinteger(L, 0);
    lua_setfield(L, -2, "unattributed");
  } else {
    pop_tag(&run);
    CUptiResult flushed =
        cupti->flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); /* after the device sync */
    release(sub, NKINDS);
    if (status != LUA_OK) return lua_error(L); /* the work's error, with CUPTI off again */
    if (flushed != CUPTI_SUCCESS)
      wl_raise(L, WL_EXIT_CUDA, "wl.bench: cupti mode: cuptiActivityFlushAll: %s (%d)",
               wl_cupti_result(cupti, flushed), (int)flushed);
    pthread_mutex_lock(
        &got_lock); /* CUPTI's thread is done with this call's buffers: the flush returned */
    bool oom = got.out_of_memory, unreadable = got.unreadable;
    size_t dropped = got.dropped;
    pthread_mutex_unlock(&got_lock);
    if (oom)
      wl_raise(L, WL_EXIT_CUDA,
               "wl.bench: cupti mode: out of host memory for CUPTI's activity records");
    if (unreadable || dropped)
      wl_raise(L, WL_EXIT_CUDA, "wl.bench: cupti mode: CUPTI %s; measure fewer samples at a time",
               unreadable ? "gave an activity buffer that does not read to its end"
                          : "dropped activity records");
    lua_createtable(L, 0, 5);
    attribute(L, &run, gpu, span);
  }
  push_numbers(L, gpu, n, "gpu");
  push_numbers(L, span, n, "span");
  push_numbers(L, run.enqueue, n, "enqueue");
  return 1;
}

/* core.cupti_ready() -> true | false, why: whether cupti mode can run here now (CUPTI loads and
 * no other tool holds it), for auto; claims and releases, queues nothing */
static int claim_and_release(lua_State *L) {
  release(claim(L), NKINDS);
  return 0;
}

static int l_cupti_ready(lua_State *L) {
  if (wl_backend->no_device) {
    lua_pushboolean(L, false);
    lua_pushstring(L, "no device");
    return 2;
  }
  lua_pushcfunction(L, claim_and_release);
  if (lua_pcall(L, 0, 0, 0) == LUA_OK) {
    lua_pushboolean(L, true);
    return 1;
  }
  lua_pushboolean(L, false);
  lua_insert(L, -2); /* false, the error */
  return 2;
}

void wl_open_cupti_timing(lua_State *L) {
  lua_pushcfunction(L, l_time_cupti);
  lua_setfield(L, -2, "time_cupti");
  lua_pushcfunction(L, l_cupti_ready);
  lua_setfield(L, -2, "cupti_ready");
}
