/* Start/end ranges (nvtxRangeStart/End): open ones are kept by id, in a hash table under the trace
 * lock, since any thread may end them; A is written when one ends, O at exit for the others. */
#include "trace_internal.h"

#include <stdlib.h>

enum { BUCKETS = 1024, MAX_OPEN = 1 << 20 };

struct async_range {
  uint64_t rid, start;
  pid_t tid;
  struct wt_string *name, *domain;
  struct wt_payload payload;
  int sync;
  struct async_range *next;
};

static struct async_range *buckets[BUCKETS]; /* under the trace lock */
static size_t nopen;

static struct async_range **slot_of(uint64_t rid) {
  struct async_range **p = &buckets[rid % BUCKETS];
  while (*p && (*p)->rid != rid) p = &(*p)->next;
  return p;
}

uint64_t wt_start(struct wt_string *domain, struct wt_string *name, struct wt_payload payload) {
  if (wt_finished() || !wt_recording()) return 0;
  struct async_range *r = malloc(sizeof *r);
  if (!r) {
    wt_lost(1);
    return 0;
  }
  r->tid = wt_gettid();
  r->name = name;
  r->domain = domain;
  r->payload = payload;
  r->sync = wt_sync_wanted(domain, name);
  if (r->sync) wt_sync_device();
  wt_lock();
  if (nopen >= MAX_OPEN) {
    wt_unlock();
    free(r);
    wt_lost(1);
    return 0;
  }
  r->rid = wt_next_rid();
  struct async_range **p = slot_of(r->rid);
  r->next = NULL;
  *p = r;
  nopen++;
  r->start = wt_now();
  wt_step_opened(name, domain, r->start);
  wt_unlock_soon(r->start); /* a start writes nothing: what waits, waits on */
  wt_step_marks();
  return r->rid;
}

void wt_end_range(uint64_t rid) {
  if (!rid || wt_finished() || !wt_recording()) return;
  wt_lock();
  struct async_range *r = *slot_of(rid);
  int sync = r && r->sync;
  wt_unlock();
  if (!r) return; /* never started, or ended already: ignored */
  if (sync) wt_sync_device();
  uint64_t end = wt_now();
  wt_lock();
  struct async_range **p = slot_of(rid);
  r = *p;
  if (r) {
    *p = r->next;
    nopen--;
    if (wt_ready()) {
      wt_define(r->name);
      wt_define(r->domain);
      wt_line('A');
      wt_u64(r->rid);
      wt_u64((uint64_t)r->tid);
      wt_sid(r->name);
      wt_sid(r->domain);
      wt_u64(r->start);
      wt_u64(end);
      wt_payload_field(r->payload);
      wt_end();
      wt_step_closed(r->name, r->domain, end);
    }
  }
  wt_unlock();
  wt_step_marks();
  free(r);
}

void wt_ranges_at_exit(void) {
  for (size_t b = 0; b < BUCKETS; b++) {
    for (const struct async_range *r = buckets[b]; r; r = r->next) {
      wt_define(r->name);
      wt_define(r->domain);
      wt_line('O');
      wt_u64(r->rid);
      wt_u64((uint64_t)r->tid);
      wt_dash();
      wt_sid(r->name);
      wt_sid(r->domain);
      wt_u64(r->start);
      wt_payload_field(r->payload);
      wt_end();
    }
  }
}

/* The child of fork forgets the parent's open ranges. */
void wt_ranges_fork_child(void) {
  for (size_t b = 0; b < BUCKETS; b++) {
    for (struct async_range *r = buckets[b], *next; r; r = next) {
      next = r->next;
      free(r);
    }
    buckets[b] = NULL;
  }
  nopen = 0;
}
