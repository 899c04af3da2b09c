/* WLRUN_TRACE_STEPS (wlrun trace --steps N): the trace stops after the N-th range named
 * WLRUN_TRACE_STEP closes in one domain (push/pop or start/end; each domain counts its own, so
 * that a program's own steps and the Python hook's are not added). Then, as at an exit, every
 * thread's launches and every range still open are written (O), and nothing more is recorded
 * but the GPU work launched before (K records up to the last correlation noted), what was lost
 * (D) and the exit (X): a long run's trace stays bounded, and the program runs on with its ranges
 * and launches no longer recorded. */
#include "trace_internal.h"
#include "trace_format.h"

#include <stdatomic.h>
#include <stdlib.h>

enum { DOMAINS = 8 };

static long limit;               /* 0: every step */
static void (*write_open)(void); /* the process's: every thread's launches and open ranges */
static struct wt_string *step_name;
static struct {
  const struct wt_string *domain;
  long closed;
} counts[DOMAINS]; /* under the trace lock */
static atomic_int stopped;
static atomic_uint_fast64_t last_noted, stop_correlation;

void wt_steps_init(void (*done)(void)) {
  write_open = done;
  const char *n = getenv(WL_TRACE_ENV_STEPS), *name = getenv(WL_TRACE_ENV_STEP);
  char *end = NULL;
  long v = n ? strtol(n, &end, 10) : 0;
  if (!n || end == n || *end || v <= 0 || !name || !*name) return;
  step_name = wt_intern_cstr(name);
  if (step_name) limit = v;
}

int wt_recording(void) { return !atomic_load_explicit(&stopped, memory_order_relaxed); }

void wt_launch_noted(uint64_t correlation) {
  uint64_t seen = atomic_load_explicit(&last_noted, memory_order_relaxed);
  while (correlation > seen &&
         !atomic_compare_exchange_weak_explicit(&last_noted, &seen, correlation,
                                                memory_order_relaxed, memory_order_relaxed)) {}
}

int wt_work_recorded(uint64_t correlation) {
  return wt_recording() || correlation <= atomic_load(&stop_correlation);
}

/* the count of domain's steps, or NULL where DOMAINS domains have steps already */
static long *count_of(const struct wt_string *domain) {
  for (int i = 0; i < DOMAINS; i++) {
    if (counts[i].domain == domain && counts[i].closed) return &counts[i].closed;
    if (!counts[i].closed) {
      counts[i].domain = domain;
      return &counts[i].closed;
    }
  }
  return NULL;
}

void wt_step_closed(const struct wt_string *name, const struct wt_string *domain) {
  if (!limit || name != step_name || !wt_recording()) return;
  long *n = count_of(domain);
  if (!n || ++*n < limit) return;
  atomic_store(&stop_correlation, atomic_load(&last_noted));
  atomic_store(&stopped, 1); /* first: the ranges ended below count no more steps */
  write_open();
}

void wt_steps_fork_child(void) {
  for (int i = 0; i < DOMAINS; i++) counts[i].domain = NULL, counts[i].closed = 0;
  atomic_store(&stopped, 0);
  atomic_store(&last_noted, 0);
  atomic_store(&stop_correlation, 0);
}
