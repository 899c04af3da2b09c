/* The timed loops of the measurement engine (docs/measuring.md), in C so that nothing of Lua
 * sits between the events of a sample when the work is a bound launch or a graph (wlrun.engine;
 * wl_open_timing registers them, "core" below):
 *   core.time_cold(work, n, flush, blocked [, in_flight])
 *                                         an event pair per launch, one synchronize at the end;
 *                                         blocked: queued behind a blocking kernel, 16 at a time,
 *                                         two such blocks in flight (or one)
 *   core.time_batch(work, n, per)         an event pair around `per` launches
 *   core.time_graph(work, n, per, warmup) `per` launches captured in a graph, one replay a sample
 *   core.time_host(work, n)               host clock with a device synchronize before and after
 *   core.timing_floor(n)                  the event pair and empty-kernel floors of this device
 *   core.count_nonzero(tensor)            nonzero bytes of a device tensor (zero-input check)
 *   core.set_measuring(on), core.watch()  what the Lua API saw while measuring
 * work: a bound launch, a wl.graph, a Lua function, or a list of them (rotated per sample).
 * Each returns {gpu = {seconds...}, enqueue = {seconds...}} (host mode: gpu is the host time).
 * The work is checked once per timed call (a bound launch's kernel, stream and tensors, a graph
 * and what it captured), with the messages of a call from Lua: nothing of Lua runs in between,
 * unless the work holds a function, and then every item is checked each time it is queued.
 * Under --compile-only the loops run on the do-nothing backend: the same checks, times of 0;
 * the timing floor and count_nonzero need a real device. */
#include "count_nonzero.h"
#include "cuda_graph.h"
#include "cuda_launch.h"
#include "cuda_stream.h"
#include "cuda_tensor.h"
#include "l2_flush.h"
#include "laux.h"
#include "lua_guard.h"
#include "wl_exit.h"
#include "wl_modules.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <time.h>

/* events are created once and reused: creating them inside a measurement would be an
 * allocation in the timed region */
static cudaEvent_t *events;
static size_t nevents;

static void need_events(lua_State *L, size_t n) {
  if (n <= nevents) return;
  cudaEvent_t *grown = realloc(events, n * sizeof *grown);
  if (!grown) wl_raise(L, WL_EXIT_SCRIPT, "out of memory for %d events", (int)n);
  events = grown;
  for (; nevents < n; nevents++) {
    if (wl_stop_pending()) wl_stop_check(L); /* a million samples ask for two million events */
    WL_CUDA(L, wl_backend->event_create(&events[nevents], true, false), "creating timing events");
  }
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- work items ---- */

struct work {
  int index; /* stack index of the item */
  struct wl_bound *bound;
  cudaGraphExec_t graph;
  cudaStream_t stream; /* a bound launch's */
};

struct work_list {
  int n;
  bool lua; /* a function among the items: Lua runs between launches */
  struct work items[64];
  cudaStream_t stream;
};

/* reads and checks the item at idx */
static void read_item(lua_State *L, int idx, struct work *w) {
  w->index = lua_absindex(L, idx);
  w->bound = wl_test_bound(L, idx);
  w->graph =
      w->bound ? NULL : wl_graph_exec(L, idx, "graph:launch"); /* the messages of a call from Lua */
  w->stream = w->bound ? wl_bound_check(L, w->bound, "launch") : NULL;
  if (!w->bound && !w->graph && lua_type(L, idx) != LUA_TFUNCTION)
    wl_raise(L, WL_EXIT_SCRIPT,
             "wl.bench: the work must be a bound launch, a wl.graph or a function, got %s",
             luaL_typename(L, idx));
}

/* work at arg: one item, or a list (rotated). The items of a list stay on the stack. */
static void read_work(lua_State *L, int arg, struct work_list *wl) {
  wl->n = 0;
  wl->lua = false;
  if (lua_type(L, arg) == LUA_TTABLE && !lua_getmetatable(L, arg)) {
    lua_Integer n = luaL_len(L, arg);
    if (n < 1 || n > 64)
      wl_raise(L, WL_EXIT_SCRIPT, "wl.bench: a rotation list holds 1 to 64 items");
    for (lua_Integer i = 1; i <= n; i++) {
      lua_geti(L, arg, i);
      read_item(L, -1, &wl->items[wl->n++]);
    }
  } else {
    if (lua_type(L, arg) == LUA_TTABLE) lua_pop(L, 1); /* the metatable */
    read_item(L, arg, &wl->items[wl->n++]);
  }
  wl->stream = wl->items[0].bound ? wl->items[0].stream : wl_current_stream(L);
  for (int i = 0; i < wl->n; i++) {
    wl->lua = wl->lua || (!wl->items[i].bound && !wl->items[i].graph);
    if (wl->items[i].bound &&
        wl->items[i].stream != wl->stream) /* a sample's events: on its work's stream */
      wl_raise(L, WL_EXIT_SCRIPT,
               "wl.bench: the launches of a rotation list must share one stream");
  }
}

/* queues the item; recheck: Lua ran since it was read, which may have freed what it uses */
static void enqueue(lua_State *L, const struct work *w, cudaStream_t stream, long times,
                    bool recheck) {
  if (w->bound) {
    if (recheck) wl_bound_check(L, w->bound, "launch");
    wl_bound_enqueue(L, w->bound, stream, times);
  } else if (w->graph) {
    cudaGraphExec_t g = recheck ? wl_graph_exec(L, w->index, "graph:launch") : w->graph;
    for (long i = 0; i < times; i++) {
      if (wl_stop_pending()) wl_stop_check(L);
      WL_CUDA(L, wl_backend->graph_launch(g, stream), "launching a graph");
    }
  } else {
    for (long i = 0; i < times; i++) {
      lua_pushvalue(L, w->index);
      lua_call(L, 0, 0);
    }
  }
}

/* ---- results ---- */

static void push_results(lua_State *L, const double *gpu, const double *enq, int n) {
  lua_createtable(L, 0, 2);
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushnumber(L, gpu[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "gpu");
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushnumber(L, enq[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "enqueue");
}

static int check_count(lua_State *L, int arg) {
  lua_Integer n = wl_check_integer(L, arg);
  wl_arg_check(L, n >= 1 && n <= 10000000, arg, "sample count from 1 to 1e7 expected");
  return (int)n;
}

/* the elapsed times of event pairs (ev[2i], ev[2i+1]), divided by per; waits for the last */
static void read_pairs_of(lua_State *L, const cudaEvent_t *ev, double *gpu, int n, long per) {
  WL_CUDA(L, wl_backend->event_sync(ev[2 * n - 1]), "waiting for the measurement");
  for (int i = 0; i < n; i++) {
    float ms;
    WL_CUDA(L, wl_backend->event_elapsed(&ms, ev[2 * i], ev[2 * i + 1]), "cudaEventElapsedTime");
    gpu[i] = ms * 1e-3 / (double)per;
  }
}

static void read_pairs(lua_State *L, double *gpu, int n, long per) {
  read_pairs_of(L, events, gpu, n, per);
}

/* buffers of doubles that an error cannot leak: userdata */
static double *scratch(lua_State *L, int n) {
  return lua_newuserdatauv(L, sizeof(double) * (size_t)n, 0);
}

/* ---- the blocking kernel (nvbench's technique) ---- */

/* Cold samples with the L2 flushed, free of launch overhead: a kernel holds the stream while up
 * to BLOCK_SAMPLES samples are queued behind it (each a flush, the start event, the launch, the
 * stop event), then the host releases it and the GPU runs them back to back, without waiting for
 * the host between an event and its launch. Few enough per block that the queue never fills (a
 * full queue would make the host wait on a GPU that waits on the host); the kernel gives up after
 * BLOCK_TIMEOUT_NS, and a block whose kernel gave up is queued again, at most BLOCK_RETRIES times
 * (an error that ends the loop releases it at once, struct blocked_end).
 *
 * A kernel gives up where the host cannot queue its block: descheduled, or waiting in the driver
 * for another thread's call that waits for the device, which the blocking kernel holds (cuBLASLt's
 * handle and first heuristics on wl.cublas.prepare's thread do: each waited 100 ms, the former
 * timeout, in tests/bench/stall_probe.lua). A block's queueing takes well under a millisecond,
 * so the kernel gives up after 10 ms, and the caller sizes blocks to a few milliseconds of
 * samples, so that one queued again costs little.
 *
 * Two blocks are in flight: the host queues the next block while the GPU runs the one before, on
 * a second stream, behind the last event of the block before. On the same stream the host's
 * submissions reached into the samples running (+0.16-0.22 us on the H200); on another stream
 * they do not, and the GPU no longer waits while each block is queued (tests/bench/pipeline_raw.cu,
 * docs/benchmarks.md). */
enum { BLOCK_SAMPLES = 16, BLOCK_RETRIES = 3, SLOTS = 2 };
static const unsigned long long BLOCK_TIMEOUT_NS = 10000000ull; /* 10 ms */

static struct {
  volatile int
      *flag; /* [0]: the generation released; [1 + slot]: timeouts counted by the kernels */
  int generation;
  cudaEvent_t settled; /* for an error's end: the work's stream waits for the second one */
} blocker;

static void need_blocker(lua_State *L) {
  if (blocker.flag) return;
  if (!blocker.settled)
    WL_CUDA(L, wl_backend->event_create(&blocker.settled, false, false),
            "creating the blocking kernel's event");
  void *p;
  WL_CUDA(L, wl_backend->alloc_pinned(&p, (1 + SLOTS) * sizeof(int)),
          "allocating the blocking kernel's flag");
  blocker.flag = p;
  for (int i = 0; i < 1 + SLOTS; i++) blocker.flag[i] = 0;
}

/* The second stream for work on a stream with these flags and this priority, on the current
 * device: made at first use and kept (a few; the oldest made gives way). Any work's stream may
 * share it: its blocks are all waited for before the timed call returns. */
enum { PARTNERS = 8 };
static struct partner {
  int device, priority;
  bool blocking;
  cudaStream_t stream;
} partners[PARTNERS];

static cudaStream_t partner_of(lua_State *L, cudaStream_t s) {
  struct partner want = {.device = wl_device_index()};
  WL_CUDA(L, wl_backend->stream_properties(s, &want.blocking, &want.priority),
          "reading the work's stream's flags");
  for (int i = 0; i < PARTNERS; i++) {
    struct partner *p = &partners[i];
    if (p->stream && p->device == want.device && p->blocking == want.blocking &&
        p->priority == want.priority)
      return p->stream;
  }
  static int next;
  struct partner *p = &partners[next];
  next = (next + 1) % PARTNERS;
  if (p->stream) { /* its blocks were all waited for; a failure to destroy it is only a leak */
    (void)wl_backend->stream_destroy(p->stream);
    p->stream = NULL;
  }
  WL_CUDA(L, wl_backend->stream_create(&want.stream, want.blocking, want.priority),
          "creating the second stream of the blocked samples");
  wl_backend->name_stream(want.stream, "wlrun: blocked samples, second stream");
  *p = want;
  return p->stream;
}

struct block {
  int done, k, attempt; /* samples [done, done + k), queued attempt + 1 times */
  int timeouts;         /* its slot's timeouts counted before it was queued */
};

/* the events of slot 0 or 1 */
static cudaEvent_t *slot_events(int slot) { return events + 2 * BLOCK_SAMPLES * slot; }

/* queues block b in its slot on stream s, behind the stop event `after` of the block queued
 * before (none for the first), and releases it */
static void queue_block(lua_State *L, const struct work_list *w, struct block *b, int slot,
                        cudaStream_t s, cudaEvent_t after, double *enq) {
  cudaEvent_t *ev = slot_events(slot);
  int generation = ++blocker.generation;
  b->timeouts = __atomic_load_n(blocker.flag + 1 + slot, __ATOMIC_SEQ_CST);
  if (after) WL_CUDA(L, wl_backend->stream_wait(s, after), "cudaStreamWaitEvent");
  WL_CUDA(L,
          wl_backend->block_stream(blocker.flag, blocker.flag + 1 + slot, generation,
                                   BLOCK_TIMEOUT_NS, s),
          "launching the blocking kernel");
  for (int j = 0; j < b->k; j++) {
    int i = b->done + j;
    wl_flush_l2(L, s, i);
    WL_CUDA(L, wl_backend->event_record(ev[2 * j], s), "cudaEventRecord");
    double t0 = now();
    enqueue(L, &w->items[i % w->n], s, 1, false);
    enq[i] = now() - t0;
    WL_CUDA(L, wl_backend->event_record(ev[2 * j + 1], s), "cudaEventRecord");
  }
  __atomic_store_n(blocker.flag, generation, __ATOMIC_SEQ_CST); /* release */
}

/* waits for block b of its slot and reads its samples; false when its kernel gave up */
static bool finish_block(lua_State *L, const struct block *b, int slot, double *gpu) {
  read_pairs_of(L, slot_events(slot), gpu + b->done, b->k, 1);
  return __atomic_load_n(blocker.flag + 1 + slot, __ATOMIC_SEQ_CST) == b->timeouts;
}

/* What an error (a failed launch or host work, Ctrl-C) leaves of a blocked measurement: a block
 * held by its kernel, and blocks on the second stream that the work's stream is not ordered
 * after. Its close releases every block at once and orders the work's stream after the second
 * one, as the measurement's own end does (best effort: the error is the one to report). */
struct blocked_end {
  cudaStream_t work, second;
  bool open;
};

static int blocked_end_close(lua_State *L) {
  struct blocked_end *e = lua_touserdata(L, 1);
  if (!e || !e->open) return 0;
  e->open = false;
  __atomic_store_n(blocker.flag, blocker.generation, __ATOMIC_SEQ_CST);
  if (e->second != e->work && wl_backend->event_record(blocker.settled, e->second) == cudaSuccess)
    (void)wl_backend->stream_wait(e->work, blocker.settled);
  return 0;
}

/* cold samples behind blocking kernels, in_flight (2) blocks at a time on the work's stream and
 * its second stream in turn, or one (1) on the work's stream, each waited for before the next is
 * queued (tests/bench/blocks_in_flight.lua compares them); *gave_up: blocks whose kernel timed
 * out (each queued again, after the block in flight), *kept: samples kept although their block's
 * kernel gave up each time (they may hold launch overhead) */
static void time_cold_blocked(lua_State *L, const struct work_list *w, int n, int in_flight,
                              int per_block, double *gpu, double *enq, int *gave_up, int *kept) {
  need_blocker(L);
  need_events(L, 2 * SLOTS * BLOCK_SAMPLES);
  wl_flush_l2_ready(L);
  cudaStream_t streams[SLOTS] = {w->stream, in_flight == 2 ? partner_of(L, w->stream) : w->stream};
  struct blocked_end *end = wl_guard_new(L, sizeof *end, "wlrun.blocked_end", blocked_end_close);
  *end = (struct blocked_end){.work = streams[0], .second = streams[1], .open = true};
  lua_toclose(L, -1);
  int guard = lua_gettop(L);
  *gave_up = *kept = 0;
  struct block blocks[SLOTS], retry = {0};
  bool busy[SLOTS] = {false, false}, have_retry = false;
  cudaEvent_t last = NULL; /* the stop event of the block queued last */
  int slot = 0, done = 0;
  for (;;) {
    bool more = have_retry || done < n;
    if (more) {
      if (wl_stop_pending()) wl_stop_check(L);
      struct block *b = &blocks[slot];
      if (have_retry) {
        *b = retry, have_retry = false;
      } else {
        *b = (struct block){.done = done, .k = n - done < per_block ? n - done : per_block};
        done += b->k;
      }
      queue_block(L, w, b, slot, streams[slot], in_flight == 2 ? last : NULL, enq);
      last = slot_events(slot)[2 * b->k - 1];
      busy[slot] = true;
    }
    if (in_flight == 2)
      slot = 1 - slot; /* two in flight: the other slot's block, queued before; one: this one */
    if (busy[slot]) {
      busy[slot] = false;
      struct block *b = &blocks[slot];
      if (!finish_block(L, b, slot, gpu)) {
        ++*gave_up;
        if (b->attempt < BLOCK_RETRIES) {
          retry = *b, retry.attempt++, have_retry = true;
        } else {
          *kept += b->k;
        }
      }
    } else if (!more) {
      break;
    }
  }
  /* work queued on the work's stream after this runs after the samples */
  if (last && in_flight == 2)
    WL_CUDA(L, wl_backend->stream_wait(streams[0], last), "cudaStreamWaitEvent");
  end->open = false;
  lua_settop(L, guard - 1); /* the guard, which now does nothing */
}

/* core.time_cold(work, n, flush, blocked [, in_flight [, per_block]]): blocked (with flush) queues
 * the samples behind blocking kernels, for bound launches and graphs only (a function may wait for
 * the stream the kernel holds), in_flight (1 or 2, default 2) blocks at a time of per_block samples
 * (1 to 16, default 16; both checked, and unused when not blocked); the result then has blocked =
 * {gave_up =, kept =} */
static int l_time_cold(lua_State *L) {
  int n = check_count(L, 2);
  bool flush = lua_toboolean(L, 3), blocked = lua_toboolean(L, 4);
  lua_Integer in_flight = wl_opt_integer(L, 5, 2), per_block = wl_opt_integer(L, 6, BLOCK_SAMPLES);
  wl_arg_check(L, in_flight == 1 || in_flight == 2, 5, "1 or 2 blocks in flight expected");
  wl_arg_check(L, per_block >= 1 && per_block <= BLOCK_SAMPLES, 6,
               "1 to 16 samples a block expected");
  lua_settop(L, 4);
  wl_device_ready(L);
  struct work_list w;
  read_work(L, 1, &w);
  if (blocked && (!flush || w.lua))
    wl_raise(L, WL_EXIT_SCRIPT,
             "wl.bench: blocked cold samples need the L2 flush and bound launches or graphs");
  double *gpu = scratch(L, n), *enq = scratch(L, n);
  cudaStream_t s = w.stream;
  if (blocked) {
    int gave_up, kept;
    time_cold_blocked(L, &w, n, (int)in_flight, (int)per_block, gpu, enq, &gave_up, &kept);
    push_results(L, gpu, enq, n);
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, gave_up);
    lua_setfield(L, -2, "gave_up");
    lua_pushinteger(L, kept);
    lua_setfield(L, -2, "kept");
    lua_setfield(L, -2, "blocked");
    return 1;
  }
  need_events(L, 2 * (size_t)n);
  for (int i = 0; i < n; i++) {
    if (wl_stop_pending()) wl_stop_check(L);
    if (flush) wl_flush_l2(L, s, i);
    WL_CUDA(L, wl_backend->event_record(events[2 * i], s), "cudaEventRecord");
    double t0 = now();
    enqueue(L, &w.items[i % w.n], s, 1, w.lua);
    enq[i] = now() - t0;
    WL_CUDA(L, wl_backend->event_record(events[2 * i + 1], s), "cudaEventRecord");
  }
  read_pairs(L, gpu, n, 1);
  push_results(L, gpu, enq, n);
  return 1;
}

static int l_time_batch(lua_State *L) {
  int n = check_count(L, 2);
  lua_Integer per = wl_check_integer(L, 3);
  wl_arg_check(L, per >= 1 && per <= 1000000, 3, "launches per sample from 1 to 1e6 expected");
  lua_settop(L, 3);
  wl_device_ready(L);
  struct work_list w;
  read_work(L, 1, &w);
  need_events(L, 2 * (size_t)n);
  double *gpu = scratch(L, n), *enq = scratch(L, n);
  cudaStream_t s = w.stream;
  for (int i = 0; i < n; i++) {
    if (wl_stop_pending()) wl_stop_check(L);
    WL_CUDA(L, wl_backend->event_record(events[2 * i], s), "cudaEventRecord");
    double t0 = now();
    for (long j = 0; j < per; j++) enqueue(L, &w.items[(i * per + j) % w.n], s, 1, w.lua);
    enq[i] = (now() - t0) / (double)per;
    WL_CUDA(L, wl_backend->event_record(events[2 * i + 1], s), "cudaEventRecord");
  }
  read_pairs(L, gpu, n, per);
  push_results(L, gpu, enq, n);
  return 1;
}

/* graph mode: per launches captured once; warmup replays, then n timed replays */
static int l_time_graph(lua_State *L) {
  int n = check_count(L, 2);
  lua_Integer per = wl_check_integer(L, 3), warmup = wl_opt_integer(L, 4, 3);
  wl_arg_check(L, per >= 1 && per <= 100000, 3, "launches per graph from 1 to 1e5 expected");
  lua_settop(L, 4);
  wl_device_ready(L);
  struct work_list w;
  read_work(L, 1, &w);
  for (int i = 0; i < w.n; i++)
    if (w.items[i].graph)
      wl_raise(L, WL_EXIT_SCRIPT, "graph mode times bound launches or functions, not a wl.graph");
  need_events(L, 2 * (size_t)n);
  double *gpu = scratch(L, n), *enq = scratch(L, n);
  cudaStream_t s = w.stream;
  /* capture: the launches go to the capture stream, whatever stream they were bound to */
  cudaStream_t cs = wl_capture_begin(L);
  int status = LUA_OK;
  for (long j = 0; j < per && status == LUA_OK; j++) {
    const struct work *it = &w.items[j % w.n];
    lua_getfield(L, LUA_REGISTRYINDEX, "wlrun.graph_enqueue");
    lua_pushvalue(L, it->index);
    lua_pushlightuserdata(L, cs);
    status = lua_pcall(L, 2, 0, 0);
  }
  cudaError_t err;
  cudaGraph_t graph = wl_capture_end(&err);
  wl_capture_push_holds(L); /* its graph lives within this call: nothing to keep */
  lua_pop(L, 1);
  cudaGraphExec_t exec = NULL;
  if (status != LUA_OK) { /* the error of the work is the one to report */
    if (graph) (void)wl_backend->graph_destroy(graph);
    return lua_error(L);
  }
  if (!graph) return wl_cuda_raise(L, err, "capturing the graph of the measured work");
  err = wl_backend->graph_instantiate(&exec, graph);
  if (err != cudaSuccess) {
    (void)wl_backend->graph_destroy(graph); /* the instantiation's error is the one to report */
    return wl_cuda_raise(L, err, "instantiating the graph of the measured work");
  }
  const struct wl_backend *be = wl_backend;
  cudaError_t run = cudaSuccess;
  /* Ctrl-C ends the replays; the graph is destroyed before the stop is raised */
  for (lua_Integer i = 0; i < warmup && run == cudaSuccess && !wl_stop_pending(); i++)
    run = be->graph_launch(exec, s);
  for (int i = 0; i < n && run == cudaSuccess && !wl_stop_pending(); i++) {
    run = be->event_record(events[2 * i], s);
    double t0 = now();
    if (run == cudaSuccess) run = be->graph_launch(exec, s);
    enq[i] = (now() - t0) / (double)per;
    if (run == cudaSuccess) run = be->event_record(events[2 * i + 1], s);
  }
  if (run == cudaSuccess && !wl_stop_pending()) run = be->event_sync(events[2 * n - 1]);
  cudaError_t freed = be->graph_exec_destroy(exec);
  if (run == cudaSuccess) run = freed;
  freed = be->graph_destroy(graph);
  if (run == cudaSuccess) run = freed;
  if (run != cudaSuccess) return wl_cuda_raise(L, run, "replaying the measured graph");
  wl_stop_check(L);
  read_pairs(L, gpu, n, per);
  push_results(L, gpu, enq, n);
  return 1;
}

/* registry helper for graph capture: enqueue(item, stream) through the Lua API so that a
 * function item runs under the error handling of lua_pcall */
static int graph_enqueue(lua_State *L) {
  cudaStream_t cs = lua_touserdata(L, 2);
  struct work w;
  read_item(L, 1, &w); /* checked: Lua may have run since */
  enqueue(L, &w, cs, 1, false);
  return 0;
}

static int l_time_host(lua_State *L) {
  int n = check_count(L, 2);
  lua_settop(L, 2);
  wl_device_ready(L);
  struct work_list w;
  read_work(L, 1, &w);
  double *host = scratch(L, n), *enq = scratch(L, n);
  for (int i = 0; i < n; i++) {
    if (wl_stop_pending()) wl_stop_check(L);
    WL_CUDA(L, wl_backend->device_sync(), "synchronising before a host-timed iteration");
    double t0 = now();
    enqueue(L, &w.items[i % w.n], w.stream, 1, w.lua);
    double t1 = now();
    WL_CUDA(L, wl_backend->device_sync(), "synchronising after a host-timed iteration");
    host[i] = now() - t0;
    enq[i] = t1 - t0;
  }
  push_results(L, host, enq, n);
  return 1;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* core.timing_floor([n]) -> {event_pair = s, empty_kernel = s}: medians of n back-to-back
 * event pairs and of n empty kernels each between its own pair (cold), on this device */
static int l_timing_floor(lua_State *L) {
  int n = (int)wl_opt_integer(L, 1, 200);
  wl_arg_check(L, n >= 1 && n <= 100000, 1, "count from 1 to 1e5 expected");
  wl_device_needed(L, "wl.timing_floor()");
  cudaStream_t s = wl_current_stream(L);
  need_events(L, 2 * (size_t)n);
  double *t = scratch(L, n), medians[2];
  for (int pass = 0; pass < 2; pass++) {
    for (int i = -n / 4; i < n; i++) { /* the first quarter warms up and is overwritten */
      int k = i < 0 ? 0 : i;
      WL_CUDA(L, wl_backend->event_record(events[2 * k], s), "cudaEventRecord");
      if (pass == 1) WL_CUDA(L, wl_backend->empty_kernel(s), "launching the empty kernel");
      WL_CUDA(L, wl_backend->event_record(events[2 * k + 1], s), "cudaEventRecord");
      if (i < 0) WL_CUDA(L, wl_backend->event_sync(events[1]), "floor warmup");
    }
    read_pairs(L, t, n, 1);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    medians[pass] = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
  }
  lua_createtable(L, 0, 2);
  lua_pushnumber(L, medians[0]);
  lua_setfield(L, -2, "event_pair");
  lua_pushnumber(L, medians[1]);
  lua_setfield(L, -2, "empty_kernel");
  return 1;
}

static int l_set_measuring(lua_State *L) {
  wl_watch.measuring = lua_toboolean(L, 1);
  if (wl_watch.measuring) wl_watch.syncs = wl_watch.allocs = 0;
  return 0;
}

static int l_watch(lua_State *L) {
  lua_createtable(L, 0, 2);
  lua_pushinteger(L, wl_watch.syncs);
  lua_setfield(L, -2, "syncs");
  lua_pushinteger(L, wl_watch.allocs);
  lua_setfield(L, -2, "allocs");
  return 1;
}

void wl_open_timing(lua_State *L) {
  static const luaL_Reg fns[] = {{"time_cold", l_time_cold},
                                 {"time_batch", l_time_batch},
                                 {"time_graph", l_time_graph},
                                 {"time_host", l_time_host},
                                 {"timing_floor", l_timing_floor},
                                 {"count_nonzero", wl_l_count_nonzero},
                                 {"set_measuring", l_set_measuring},
                                 {"watch", l_watch},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  lua_pushcfunction(L, graph_enqueue);
  lua_setfield(L, LUA_REGISTRYINDEX, "wlrun.graph_enqueue");
}
