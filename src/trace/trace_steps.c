/* The steps: ranges named WLRUN_TRACE_STEP, each NVTX domain counting its own (a program's own
 * steps and the Python hook's are not added).
 *
 * WLRUN_TRACE_STEPS (wlrun trace --steps N): the trace stops after the N-th step closes in one
 * domain. Then, as at an exit, every thread's launches and every range still open are written
 * (O), and nothing more is recorded but the GPU work launched before (K records up to the last
 * correlation noted), what was lost (D) and the exit (X): a long run's trace stays bounded, and
 * the program runs on with its ranges and launches no longer recorded and CUPTI's activity and
 * callbacks off.
 *
 * GPU activity on a sample of the steps (WLRUN_TRACE_GPU_EVERY, wlrun trace --gpu-every): CUPTI
 * records each kernel at a cost of a few microseconds a launch, which a launch-bound step of 2 ms
 * (50 launches) pays as 7-10 %. So kernels' activity can be on for every N-th step only (and with
 * quiet steps the kernel launches' callbacks: without, they stay on, writing nothing on a step
 * not recorded but that work started, for the loop's waits; copies and sets stay recorded, neither
 * with quiet steps,
 * WLRUN_TRACE_QUIET=1: P records say when it changes, as the step before closes, so that a step's
 * data loading is recorded with it), and at each step's start and end a mark (trace_marks.c) gives
 * the end of the GPU work launched before it on every step. N=1 (also unset, the default): every
 * step. "auto": every step whose recorded launches would cost it at most 1 %
 * (WLRUN_TRACE_GPU_SHARE, in per cent), else one step in ceil(cost / 1 %), at most one in 32,
 * chosen again at each step recorded (its launches against the time from the close before). The
 * first FULL_FIRST steps are all recorded, so is the last one --steps traces, and every step is
 * where no mark can be made (CUPTI cannot time the marks, no stream known, a graph being captured).
 * A step whose end the Python hook sets before the loop's next work (wt_end_later: a checkpoint) is
 * marked then, before that work is launched. The steps counted are the program's own where it has
 * any (the report's steps then), else the Python hook's.
 */
#include "trace_internal.h"
#include "trace_format.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DOMAINS = 8, FULL_FIRST = 3, MAX_EVERY = 32 };
/* what recording a launch's activity and callback costs (trace_launch_cost.lua: 3-4 us on the
 * H200's and H100's machines), and the share of a step it may take by default */
#define LAUNCH_COST_NS 3000.0
#define COST_TARGET 0.01

static double share = COST_TARGET; /* WLRUN_TRACE_GPU_SHARE / 100 */

static long limit;               /* 0: every step */
static long every;               /* 0: auto */
static void (*write_open)(void); /* the process's: every thread's launches and open ranges */
static struct wt_string *step_name;
static struct {
  const struct wt_string *domain;
  long closed;
} counts[DOMAINS]; /* under the trace lock */
/* the program's own step ranges open now, and whether the hook's last step traced closed inside
 * one (under the trace lock): the hook's steps nest in the program's and close just before them,
 * so the trace stops as that range of the program's closes, recorded whole (the report's steps
 * are the program's), or as the hook's next step closes where it never does */
static int own_open, stop_deferred;
static atomic_int stopped;
static atomic_uint_fast64_t last_noted, stop_correlation;
static atomic_uint_fast64_t launches; /* launch callbacks seen */

/* the sampling's state: changed by the thread at a close of the driver's steps, outside the trace
 * lock (sampling_lock) */
static const struct wt_sampling *sampling;
static pthread_mutex_t sampling_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct wt_string *driver; /* the domain whose steps are counted (NULL: default) */
static int have_driver;
static struct wt_string *hook_domain, *hook_data; /* WL_TRACE_AUTO_DOMAIN, WL_TRACE_AUTO_DATA */
static long closed, last_full, chosen_every = 1;
static int activity_on = 1, finished;
static uint64_t closed_at, launches_at_close;

/* a boundary of a step on this thread, waiting for the trace lock to be released; premarked: the
 * end of a step whose marks were made when its end was set (wt_step_ending) */
static __thread struct {
  int open, close, stop; /* stop: the steps traced are done (CUPTI to be turned off) */
  uint64_t at, premarked;
  const struct wt_string *domain;
} pending;

static long number(const char *name) {
  const char *n = getenv(name);
  char *end = NULL;
  long v = n ? strtol(n, &end, 10) : 0;
  return n && end != n && !*end && v > 0 ? v : 0;
}

/* WLRUN_TRACE_GPU_SHARE: the share of a step, in per cent, that --gpu-every auto lets the steps
 * it records cost (more than 0, at most 100); another value is an error the report shows */
static void share_from_env(void) {
  const char *v = getenv("WLRUN_TRACE_GPU_SHARE");
  if (!v || !*v) return;
  char *end = NULL;
  double p = strtod(v, &end);
  if (end != v && !*end && isfinite(p) && p > 0 && p <= 100) {
    share = p / 100;
    return;
  }
  char text[160];
  snprintf(text, sizeof text,
           "WLRUN_TRACE_GPU_SHARE=%.40s is not a per cent above 0 and at most 100: --gpu-every "
           "auto keeps 1 %%",
           v);
  wt_record_text('E', NULL, text);
}

void wt_steps_init(void (*done)(void)) {
  write_open = done;
  const char *name = getenv(WL_TRACE_ENV_STEP);
  if (!name || !*name || !(step_name = wt_intern_cstr(name))) return;
  limit = number(WL_TRACE_ENV_STEPS);
  const char *e = getenv(WL_TRACE_ENV_GPU_EVERY);
  every = e && strcmp(e, "auto") == 0 ? 0 : number(WL_TRACE_ENV_GPU_EVERY);
  if (!every && !(e && strcmp(e, "auto") == 0)) every = 1; /* unset or not a number: every step */
  share_from_env();
  hook_domain = wt_intern_cstr(WL_TRACE_AUTO_DOMAIN);
  hook_data = wt_intern_cstr(WL_TRACE_AUTO_DATA);
}

int wt_steps_sampled(void) { return step_name && every != 1; }

int wt_is_step(const struct wt_string *name) { return step_name && name == step_name; }

int wt_is_hook_data(const struct wt_string *domain, const struct wt_string *name) {
  return hook_data && domain == hook_domain && name == hook_data;
}

void wt_use_sampling(const struct wt_sampling *s) {
  wt_mutex_lock(&sampling_lock);
  sampling = s;
  wt_mutex_unlock(&sampling_lock);
}

int wt_recording(void) { return !atomic_load_explicit(&stopped, memory_order_relaxed); }

void wt_launch_counted(void) { atomic_fetch_add_explicit(&launches, 1, memory_order_relaxed); }

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

void wt_step_opened(const struct wt_string *name, const struct wt_string *domain, uint64_t at) {
  if (name != step_name || !step_name || !wt_recording()) return;
  if (domain != hook_domain) own_open++;
  if (!pending.open && !pending.close) pending.at = at;
  pending.open = 1, pending.domain = domain;
}

static void pend_close(const struct wt_string *domain, uint64_t end) {
  if (!pending.open && !pending.close) pending.at = end;
  pending.close = 1;
  if (!pending.open) pending.domain = domain;
}

void wt_step_ending(const struct wt_string *name, const struct wt_string *domain, uint64_t end) {
  if (name != step_name || !step_name || !wt_recording()) return;
  pend_close(domain, end);
  pending.premarked = end;
}

void wt_step_closed(const struct wt_string *name, const struct wt_string *domain, uint64_t end) {
  if (name != step_name || !step_name || !wt_recording()) return;
  if (end != pending.premarked || !end) pend_close(domain, end);
  pending.premarked = 0;
  int own = domain != hook_domain;
  if (own && own_open > 0) own_open--;
  if (!limit) return;
  long *n = count_of(domain);
  if (!n) return;
  ++*n;
  if (*n < limit && !(own && stop_deferred)) return;
  if (!own && *n == limit && own_open > 0) {
    stop_deferred = 1;
    return;
  }
  atomic_store(&stop_correlation, atomic_load(&last_noted));
  atomic_store(&stopped, 1); /* first: the ranges ended below count no more steps */
  pending.stop = 1;
  write_open();
}

long wt_auto_every(double of_step, uint64_t length, uint64_t noted) {
  if (!noted) return 1;
  if (!length) return MAX_EVERY;
  double cost = (double)noted * LAUNCH_COST_NS / (double)length;
  if (cost <= of_step) return 1;
  double q = cost / of_step;
  return q >= MAX_EVERY ? MAX_EVERY : (long)q + 1;
}

/* one step in how many recorded, from the step recorded last: its launches' cost against its
 * length */
static long choose_every(uint64_t length, uint64_t noted) {
  if (every) return every;
  if (!length) return chosen_every;
  return wt_auto_every(share, length, noted);
}

static void set_activity(int on, uint64_t at) {
  if (on == activity_on) return;
  activity_on = on;
  sampling->activity(on, at);
}

/* under sampling_lock: a step of the driver's closed at `at`: whether the next one (its data
 * before it too) is recorded. The step just closed, recorded, gives the cost of recording. */
static void sample(uint64_t at) {
  if (activity_on && closed_at && at > closed_at)
    chosen_every = choose_every(at - closed_at, atomic_load(&launches) - launches_at_close);
  long k = ++closed; /* the next step's index, from 0 */
  int full = !sampling->marks || !wt_marks_ready() || k < FULL_FIRST || chosen_every <= 1 ||
             k - last_full >= chosen_every ||
             (limit && k >= limit - 1); /* the last step traced: no mark can end it */
  if (full) last_full = k;
  set_activity(full, at);
  closed_at = at;
  launches_at_close = atomic_load(&launches);
}

void wt_step_marks(void) {
  if (!pending.open && !pending.close && !pending.stop) return;
  pending.stop = 0;
  int open = pending.open, close = pending.close;
  uint64_t at = pending.at;
  const struct wt_string *domain = pending.domain;
  pending.open = pending.close = 0;
  wt_mutex_lock(&sampling_lock);
  if (sampling && !finished) { /* (a forked child's is NULL) */
    if (!wt_recording()) {     /* the steps traced are done: nothing more is recorded */
      finished = 1;
      sampling->stop();
    } else {
      if (open && (!have_driver || (driver == hook_domain && domain != hook_domain))) {
        /* the program's steps, once it has some, count from their first */
        driver = domain, have_driver = 1;
        closed = 0, last_full = 0, closed_at = 0;
        set_activity(1, at);
      }
      int samples = close && have_driver && domain == driver && (every != 1 || !activity_on);
      /* quiet steps: switched first, so that a recorded step's marks (and the anchors behind
       * them) are made and run while CUPTI records, and a quiet step's are events */
      if (samples && wt_quiet_wanted()) sample(at);
      if (sampling->marks) wt_marks_record(at);
      if (samples && !wt_quiet_wanted()) sample(at);
    }
  }
  wt_mutex_unlock(&sampling_lock);
}

void wt_steps_fork_child(void) {
  for (int i = 0; i < DOMAINS; i++) counts[i].domain = NULL, counts[i].closed = 0;
  own_open = stop_deferred = 0;
  atomic_store(&stopped, 0);
  atomic_store(&last_noted, 0);
  atomic_store(&stop_correlation, 0);
  pthread_mutex_init(&sampling_lock, NULL);
  sampling = NULL; /* a forked child does nothing CUDA-related */
  have_driver = 0, closed = 0, last_full = 0, chosen_every = 1, activity_on = 1, finished = 0;
  closed_at = launches_at_close = 0;
  pending.open = pending.close = pending.stop = 0, pending.premarked = 0;
}
