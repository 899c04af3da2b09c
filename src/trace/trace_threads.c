/* Each thread's stack of open push/pop ranges (across domains: a range's parent is the innermost
 * range open on its thread, whatever its domain) and its buffer of launches (C records).
 *
 * A launch is cheap: the calling thread reads its own innermost range and adds (correlation,
 * range) to its own buffer, under its own lock, which nobody else takes but the exit handler; the
 * buffer is written out when it fills, when the thread ends (the key's destructor) and at exit.
 * The stack changes only on its own thread, under the trace lock, so that the exit handler can
 * read every thread's stack. */
#include "trace_internal.h"
#include "trace_format.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  LAUNCHES = 512,
  MAX_DEPTH = WL_TRACE_MAX_DEPTH,
  LAUNCH_LINE = 68 /* "C", three numbers, tabs, newline */
};

struct open_range {
  uint64_t rid, parent, start;
  struct wt_string *name, *domain;
  struct wt_payload payload;
  int sync; /* WLRUN_TRACE_SYNC's range: the device is synchronised before its end is timed */
};

struct launch {
  uint64_t correlation, rid, time; /* rid 0: no range open in the process */
};

struct thread {
  pid_t tid;
  int depth, cap;
  uint64_t overflow; /* pushes past MAX_DEPTH (the reader's bound), not recorded: as many pops are
                        ignored */
  struct open_range *stack;
  pthread_mutex_t launch_lock;
  unsigned nlaunch;
  uint64_t last_correlation, last_rid;
  /* not 0: the range at later_at was ended then (wt_pop_later) and is written, ended now, at the
   * thread's next push or pop in its domain, or at a pop of a range around it; another domain's
   * ranges opened meanwhile nest inside it (a program's own "log" after the optimizer is the
   * step's) and are moved out to its parent when it ends. Where the thread or the process ends
   * first, it is ended then. */
  uint64_t later;
  int later_at;
  /* not 0: where the range left open ends, if a next push or pop ends it (wt_end_later: the loop
   * went on to work of no range, a checkpoint); where the thread or the process ends first, it
   * still ends at `later` (after the last step, that work is not the step's) */
  uint64_t later_end;
  /* not 0: where the range left open ends if the thread or the process ends first, where later
   * than `later` (wt_left_open_to: the step's tail seen so far) */
  uint64_t later_tail;
  uint64_t last_end; /* the latest end of a range popped on the thread: no start is backdated
                        before it (wt_push_at) */
  /* not 0: the range left open ended where the loop's synchronisation after it returned; the
   * hook's data range pushed next begins there (the template's data runs from its t1) */
  uint64_t synced_end;
  struct launch launch[LAUNCHES];
  char text[LAUNCHES * LAUNCH_LINE]; /* the owner's flush formats here */
  struct thread *prev, *next;
};

static __thread struct thread *self;
static struct thread *threads; /* every thread with a state, under the trace lock */
static pthread_key_t key;
static uint64_t next_rid = 1; /* under the trace lock */
/* The innermost range after the process's last push or pop: a launch from a thread with no range
 * open is attributed to it (PyTorch's autograd launches backward's kernels from its own thread
 * while the thread that pushed "backward" waits). */
static atomic_uint_fast64_t last_innermost;
static atomic_uint_fast64_t too_deep; /* pushes past MAX_DEPTH: D depth */

uint64_t wt_depth_lost(void) { return atomic_load(&too_deep); }

uint64_t wt_next_rid(void) { return next_rid++; }

void wt_payload_field(struct wt_payload p) {
  if (p.kind == 1) wt_i64((int64_t)p.bits);
  else if (p.kind == 2) wt_u64(p.bits);
  else wt_dash();
}

/* ---- records (under the trace lock, the file ready) ---- */

static void launch_records(struct thread *t) {
  wt_mutex_lock(&t->launch_lock);
  for (unsigned i = 0; i < t->nlaunch; i++) {
    wt_line('C');
    wt_u64(t->launch[i].correlation);
    wt_u64(t->launch[i].rid);
    wt_u64(t->launch[i].time);
    wt_end();
  }
  t->nlaunch = 0;
  wt_mutex_unlock(&t->launch_lock);
}

/* O for each range still open on t, outermost first */
static void open_records(const struct thread *t) {
  for (int i = 0; i < t->depth; i++) {
    const struct open_range *o = &t->stack[i];
    wt_define(o->name);
    wt_define(o->domain);
    wt_line('O');
    wt_u64(o->rid);
    wt_u64((uint64_t)t->tid);
    wt_u64(o->parent);
    wt_sid(o->name);
    wt_sid(o->domain);
    wt_u64(o->start);
    wt_payload_field(o->payload);
    wt_end();
  }
}

static int same_domain_below(const struct thread *t, int top, const struct wt_string *domain) {
  int n = 0;
  for (int i = 0; i < top; i++) n += t->stack[i].domain == domain;
  return n;
}

/* R for the range at i of t, ended at end, taken off the stack (payload: a new payload, or NULL);
 * the range's level among its domain's. A range above it (another domain's, still open: NVTX's
 * stacks are per domain) becomes its parent's, so that no range outlives its parent. now: the
 * thread closes it as it goes (a step's close arms the loop's wait after it, trace_waits.c), not
 * at an earlier time set for it */
static int pop_record(struct thread *t, int i, const struct wt_payload *payload, uint64_t end,
                      int now) {
  struct open_range o = t->stack[i];
  if (payload) o.payload = *payload;
  memmove(&t->stack[i], &t->stack[i + 1], (size_t)(t->depth - i - 1) * sizeof o);
  t->depth--;
  if (end > t->last_end) t->last_end = end;
  if (i < t->depth && t->stack[i].parent == o.rid) t->stack[i].parent = o.parent;
  atomic_store_explicit(&last_innermost, t->depth ? t->stack[t->depth - 1].rid : 0,
                        memory_order_relaxed);
  if (wt_ready()) {
    wt_define(o.name);
    wt_define(o.domain);
    wt_line('R');
    wt_u64(o.rid);
    wt_u64((uint64_t)t->tid);
    wt_u64(o.parent);
    wt_sid(o.name);
    wt_sid(o.domain);
    wt_u64(o.start);
    wt_u64(end);
    wt_payload_field(o.payload);
    wt_end();
    wt_step_closed(o.name, o.domain, end);
  }
  if (t == self && now)
    wt_waits_step_closed(o.name, o.rid, t->tid); /* (not a close dated earlier) */
  return same_domain_below(t, i, o.domain);
}

/* The range wt_pop_later left open on t, ended at end (the trace lock held), or earlier: where
 * the loop's checkpoint came (wt_end_later) or its synchronisation after the step returned
 * (trace_waits.c), the first of them; the ranges opened inside it since, still open, become its
 * parent's */
static void end_later(struct thread *t, uint64_t end) {
  if (!t->later || t->later_at >= t->depth) return;
  uint64_t entered = 0, synced = t == self ? wt_waits_tail_taken(&entered) : 0;
  uint64_t first = t->later_end;
  if (first) synced = 0; /* (a checkpoint came first: wt_end_later took it) */
  if (synced) first = synced;
  int earlier = first && first < end;
  if (earlier) end = first;
  t->synced_end = earlier && synced ? synced : 0;
  if (t->synced_end) wt_waits_tail_record(t->tid, t->stack[t->later_at].rid, entered, synced);
  t->later = t->later_end = t->later_tail = 0;
  pop_record(t, t->later_at, NULL, end, !earlier);
}

/* where the range left open on t ends if the thread or the process ends first */
static uint64_t last_of_later(const struct thread *t) {
  return t->later_tail > t->later ? t->later_tail : t->later;
}

/* the range left open on t (the calling thread's) ends now */
static void end_later_now(struct thread *t) {
  wt_lock();
  end_later(t, wt_now());
  wt_unlock_soon(wt_now());
  wt_step_marks();
}

/* the index of the innermost range of domain on t's stack, -1 where there is none */
static int innermost(const struct thread *t, const struct wt_string *domain) {
  int i = t->depth - 1;
  while (i >= 0 && t->stack[i].domain != domain) i--;
  return i;
}

/* whether a push or pop of domain (a pop of the range at i) ends the range left open: one of
 * its domain, or a range around it that closes */
static bool ends_later(const struct thread *t, const struct wt_string *domain, int i) {
  return t->later && (domain == t->stack[t->later_at].domain || i < t->later_at);
}

/* ---- thread states ---- */

static void unlink_thread(struct thread *t) {
  if (t->prev) t->prev->next = t->next;
  else threads = t->next;
  if (t->next) t->next->prev = t->prev;
}

/* The key's destructor: a thread that ends writes its launches and, as open, its ranges left open
 * (nothing can close them now). */
static void thread_ended(void *p) {
  struct thread *t = p;
  wt_lock();
  end_later(t, last_of_later(t));
  if (wt_ready() && wt_recording()) { /* else written when the steps traced were done */
    launch_records(t);
    open_records(t);
  }
  unlink_thread(t);
  wt_unlock();
  self = NULL;
  pthread_mutex_destroy(&t->launch_lock);
  free(t->stack);
  free(t);
}

void wt_threads_init(void) {
  if (pthread_key_create(&key, thread_ended) != 0) key = (pthread_key_t)-1;
}

static struct thread *self_state(void) {
  if (self) return self;
  struct thread *t = calloc(1, sizeof *t);
  if (!t) {
    wt_lost(1);
    return NULL;
  }
  t->tid = wt_gettid();
  pthread_mutex_init(&t->launch_lock, NULL);
  wt_lock();
  t->next = threads;
  if (threads) threads->prev = t;
  threads = t;
  wt_unlock();
  if (key != (pthread_key_t)-1) pthread_setspecific(key, t);
  self = t;
  return t;
}


/* ---- push and pop ---- */

/* at, where not 0 and earlier than now, no earlier than the thread's last end and than the range
 * at the top of its stack began: when a range timed with it began or ended */
static uint64_t backdated(const struct thread *t, uint64_t at, uint64_t now) {
  if (!at || at >= now) return now;
  uint64_t lower = t->last_end;
  if (t->depth && t->stack[t->depth - 1].start > lower) lower = t->stack[t->depth - 1].start;
  if (t->later > lower) lower = t->later;
  return at > lower ? at : lower;
}

int wt_push(struct wt_string *domain, struct wt_string *name, struct wt_payload payload) {
  return wt_push_at(domain, name, payload, 0);
}

int wt_push_at(struct wt_string *domain, struct wt_string *name, struct wt_payload payload,
               uint64_t at) {
  if (wt_finished() || !wt_recording()) return -1;
  struct thread *t = self_state();
  if (!t) return -1;
  int sync = wt_sync_wanted(domain, name);
  if (sync) wt_sync_device(), at = 0; /* a synchronised start is timed after the synchronisation */
  int level = -1;
  uint64_t now = 0;
  wt_lock();
  if (ends_later(t, domain, t->depth)) end_later(t, backdated(t, at, wt_now()));
  if (!wt_recording()) { /* that was the last step traced */
    wt_unlock();
    wt_step_marks();
    return -1;
  }
  if (t->synced_end && wt_is_hook_data(domain, name)) at = t->synced_end;
  t->synced_end = 0;
  if (t->depth == t->cap && t->depth < MAX_DEPTH) {
    int cap = t->cap ? 2 * t->cap : 16;
    struct open_range *s = realloc(t->stack, (size_t)cap * sizeof *s);
    if (s) t->stack = s, t->cap = cap;
  }
  if (t->depth == MAX_DEPTH) {
    t->overflow++;
    atomic_fetch_add(&too_deep, 1);
  } else if (t->depth == t->cap) {
    t->overflow++;
    wt_lost(1);
  } else {
    level = same_domain_below(t, t->depth, domain);
    struct open_range *o = &t->stack[t->depth];
    o->rid = wt_next_rid();
    o->parent = t->depth ? t->stack[t->depth - 1].rid : 0;
    o->name = name;
    o->domain = domain;
    o->payload = payload;
    o->sync = sync;
    o->start = now = backdated(t, at, wt_now());
    t->depth++;
    atomic_store_explicit(&last_innermost, o->rid, memory_order_relaxed);
    wt_step_opened(name, domain, now);
    wt_waits_step_opened(name, o->rid, t->tid);
  }
  wt_unlock_soon(now ? now : wt_now()); /* a push writes nothing: what waits, waits on */
  wt_step_marks();
  return level;
}

int wt_pop(struct wt_string *domain) { return wt_pop_at(domain, NULL, 0); }

int wt_pop_with(struct wt_string *domain, const struct wt_payload *payload) {
  return wt_pop_at(domain, payload, 0);
}

int wt_pop_at(struct wt_string *domain, const struct wt_payload *payload, uint64_t at) {
  struct thread *t = self;
  if (!t || wt_finished() || !wt_recording()) return -1;
  int i = innermost(t, domain);
  if (ends_later(t, domain, i < 0 ? t->depth : i)) {
    wt_lock();
    end_later(t, backdated(t, at, wt_now()));
    wt_unlock_soon(wt_now());
    wt_step_marks();
    /* that was the last step traced: what was open is written as open, this range among them */
    if (!wt_recording()) return -1;
    i = innermost(t, domain);
  }
  if (t->overflow) {
    t->overflow--;
    return -1;
  }
  if (i < 0) return -1; /* a pop with nothing pushed in that domain: ignored */
  if (t->stack[i].sync) wt_sync_device(), at = 0;
  uint64_t end = backdated(t, at, wt_now());
  if (end < t->stack[i].start) end = t->stack[i].start;
  wt_lock();
  if (!wt_recording()) { /* another thread's last step traced closed meanwhile: written as open */
    wt_unlock();
    return -1;
  }
  int level = pop_record(t, i, payload, end, 1);
  if (t->depth) wt_unlock_soon(end);
  else wt_unlock(); /* the thread's outermost range: written at once */
  wt_step_marks();
  return level;
}

/* The innermost range of domain is left open, as ended now; other domains' ranges above it (a
 * program's own range around the optimizer step) are inside it already and stay there */
int wt_pop_later(struct wt_string *domain, const struct wt_payload *payload) {
  struct thread *t = self;
  if (!t || wt_finished() || !wt_recording() || t->overflow || !t->depth)
    return wt_pop_with(domain, payload);
  if (t->later) { /* two in a row: the first ends at the second's time */
    end_later_now(t);
    return wt_pop_later(domain, payload);
  }
  int i = innermost(t, domain);
  if (i < 0 || t->stack[i].sync) return wt_pop_with(domain, payload);
  uint64_t now = wt_now();
  wt_lock();
  if (payload) t->stack[i].payload = *payload;
  t->later = now;
  t->later_at = i;
  wt_waits_step_left_open(t->stack[i].name);
  wt_unlock_soon(now);
  return same_domain_below(t, i, domain);
}

/* whether a range wt_pop_later left open on this thread is still open */
int wt_left_open(void) { return self && self->later && self->later_at < self->depth; }

/* The range wt_pop_later left open on this thread ends now, its close the thread's own (the loop's
 * synchronisation after it is the step's), or where wt_end_later said; -1 where none is open */
int wt_end_left_open(void) {
  if (!wt_left_open() || wt_finished() || !wt_recording()) return -1;
  end_later_now(self);
  return 0;
}

/* The range wt_pop_later left open on this thread ends no earlier than `at` (0: now) where the
 * thread or the process ends before a push or pop ends it: the step's tail seen so far (its
 * GradScaler's update, its scheduler's step), which the next push would have kept in it */
int wt_left_open_to(uint64_t at) {
  struct thread *t = self;
  if (!wt_left_open() || wt_finished() || !wt_recording()) return -1;
  uint64_t now = wt_now();
  if (!at || at > now) at = now;
  wt_lock();
  if (t->later && at > t->later_tail) t->later_tail = at;
  wt_unlock_soon(now);
  return 0;
}

/* the ranges open on this thread above its innermost range of domain (other domains': a program's
 * own range around the optimizer step), or -1 where it has none of domain */
int wt_ranges_above(const struct wt_string *domain) {
  const struct thread *t = self;
  if (!t) return -1;
  int i = innermost(t, domain);
  return i < 0 ? -1 : t->depth - 1 - i + (int)t->overflow;
}

/* The range wt_pop_later left open on this thread ends at `at` (0: now, else bounded as a push's)
 * where the thread's next push or pop ends it: the loop's next work is none of the hook's ranges
 * (a checkpoint saved). The first such time holds. */
int wt_end_later(uint64_t at) {
  struct thread *t = self;
  if (!t || !t->later || wt_finished() || !wt_recording()) return -1;
  wt_lock();
  if (t->later && !t->later_end) {
    uint64_t synced = wt_waits_tail_taken(NULL); /* the loop's synchronisation came first */
    t->later_end = synced ? synced : backdated(t, at, wt_now());
    if (t->later_at < t->depth)
      wt_step_ending(t->stack[t->later_at].name, t->stack[t->later_at].domain, t->later_end);
  }
  wt_unlock_soon(wt_now());
  wt_step_marks();
  return 0;
}

void wt_name_thread(uint32_t tid, struct wt_string *name) {
  if (!name) return;
  wt_lock();
  if (wt_ready()) {
    wt_define(name);
    wt_line('T');
    wt_u64(tid);
    wt_sid(name);
    wt_end();
  }
  wt_unlock();
}

/* ---- launches ---- */

static void flush_launches(struct thread *t) {
  wt_mutex_lock(&t->launch_lock);
  size_t n = 0;
  for (unsigned i = 0; i < t->nlaunch; i++)
    n += (size_t)snprintf(t->text + n, LAUNCH_LINE, "C\t%llu\t%llu\t%llu\n",
                          (unsigned long long)t->launch[i].correlation,
                          (unsigned long long)t->launch[i].rid,
                          (unsigned long long)t->launch[i].time);
  t->nlaunch = 0;
  wt_mutex_unlock(&t->launch_lock);
  wt_write_lines(t->text, n);
}

/* Every launch is noted with its time, in a range or not: the report bounds an iteration by the
 * end of the GPU work launched before its range closed, wherever that work was launched. */
void wt_note_launch(uint64_t correlation, uint64_t at) {
  if (wt_finished() || !wt_recording()) return;
  /* CUPTI's ids are 32-bit; a quiet mark's (trace_quiet.c) are above them and launch nothing */
  if (correlation <= UINT32_MAX) wt_launch_noted(correlation);
  uint64_t now = at ? at : wt_now();
  struct thread *t = self;
  uint64_t rid = t && t->depth ? t->stack[t->depth - 1].rid : 0;
  if (!rid) rid = atomic_load_explicit(&last_innermost, memory_order_relaxed);
  if (!t && !(t = self_state())) return;
  /* the driver's call inside the runtime's, when CUPTI gives both one correlation id */
  if (correlation == t->last_correlation && rid == t->last_rid) return;
  t->last_correlation = correlation;
  t->last_rid = rid;
  wt_mutex_lock(&t->launch_lock);
  t->launch[t->nlaunch].correlation = correlation;
  t->launch[t->nlaunch].rid = rid;
  t->launch[t->nlaunch].time = now;
  int full = ++t->nlaunch == LAUNCHES;
  wt_mutex_unlock(&t->launch_lock);
  if (full) flush_launches(t);
}

/* ---- exit and fork ---- */

/* Under the lock: every thread's range left open ended, then every thread's launches and open
 * ranges written, once. Ending a left-open step can be the last step traced (WLRUN_TRACE_STEPS),
 * whose stop writes them all from inside the first loop: they are not written again. */
static int open_written;

void wt_threads_at_exit(void) {
  for (struct thread *t = threads; t; t = t->next) end_later(t, last_of_later(t));
  if (open_written) return;
  open_written = 1;
  for (struct thread *t = threads; t; t = t->next) {
    launch_records(t);
    open_records(t);
  }
}

/* The child of fork: the other threads are gone, and this one's ranges and launches are the
 * parent's to write. */
void wt_threads_fork_child(void) {
  open_written = 0;
  for (struct thread *t = threads, *next; t; t = next) {
    next = t->next;
    if (t == self) continue;
    free(t->stack);
    free(t);
  }
  threads = self;
  /* next_rid goes on: an id of the parent's start/end range, ended in the child, names nothing */
  atomic_store(&last_innermost, 0);
  atomic_store(&too_deep, 0);
  if (!self) return;
  self->prev = self->next = NULL;
  self->tid = wt_gettid();
  self->depth = 0;
  self->overflow = 0;
  self->nlaunch = 0;
  self->last_correlation = self->last_rid = 0;
  self->later = self->later_end = self->later_tail = 0;
  pthread_mutex_init(&self->launch_lock, NULL);
}
