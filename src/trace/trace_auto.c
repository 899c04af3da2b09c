/* The entry points of wlrun's Python start-up hook (src/trace/python/sitecustomize.py), called
 * through ctypes: push/pop ranges in the domain "wlrun.auto" (WL_TRACE_AUTO_DOMAIN), which the
 * report takes as the program's steps, data loading and phases when the program has no step
 * ranges of its own (docs/trace.md, "No annotation needed"). They are ordinary push/pop ranges:
 * the same records, the same nesting with the program's own ranges on the thread. */
#include "trace_internal.h"
#include "trace_format.h"

#include <stdatomic.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

static _Atomic(struct wt_string *) domain;

static struct wt_string *auto_domain(void) {
  struct wt_string *d = atomic_load(&domain);
  if (!d && (d = wt_intern_cstr(WL_TRACE_AUTO_DOMAIN))) atomic_store(&domain, d);
  return d;
}

EXPORT int wlrun_trace_auto_enabled(void);
EXPORT int wlrun_trace_auto_push(const char *name, int64_t payload);
EXPORT int wlrun_trace_auto_push_at(const char *name, int64_t payload, int64_t at);
EXPORT int wlrun_trace_auto_pop(int64_t payload);
EXPORT int wlrun_trace_auto_pop_at(int64_t payload, int64_t at);
EXPORT int wlrun_trace_auto_pop_later(int64_t payload);
EXPORT int wlrun_trace_auto_end_later(int64_t at);
EXPORT int wlrun_trace_auto_left_open(void);
EXPORT int wlrun_trace_auto_end_left_open(void);
EXPORT int wlrun_trace_auto_left_open_to(int64_t at);
EXPORT int wlrun_trace_auto_recording(void);
EXPORT int wlrun_trace_auto_above(void);
EXPORT int wlrun_trace_auto_resumed(void);

/* 1 when this process is traced (WLRUN_TRACE_DIR names a directory the file could be made in) */
int wlrun_trace_auto_enabled(void) { return wt_init() && auto_domain() != NULL; }

/* 0 once the steps traced are done (WLRUN_TRACE_STEPS): the hook can stop */
int wlrun_trace_auto_recording(void) { return wt_recording(); }

/* the ranges open on the calling thread above the hook's innermost (the program's own), or -1
 * where the hook has none open there */
int wlrun_trace_auto_above(void) {
  return wlrun_trace_auto_enabled() ? wt_ranges_above(auto_domain()) : -1;
}

static struct wt_payload payload_of(int64_t n) {
  struct wt_payload p = {n > 0 ? 1 : 0, n > 0 ? (uint64_t)n : 0};
  return p;
}

/* payload: an integer payload (a step's batch size), 0 for none; returns the range's level, -1
 * when nothing was recorded */
int wlrun_trace_auto_push(const char *name, int64_t payload) {
  return wlrun_trace_auto_push_at(name, payload, 0);
}

/* the same, the range begun at `at` (CLOCK_MONOTONIC ns, > 0: the time the hook's wrapper was
 * entered, before the hook's own work; wt_push_at bounds it) */
int wlrun_trace_auto_push_at(const char *name, int64_t payload, int64_t at) {
  if (!wlrun_trace_auto_enabled() || !name) return -1;
  struct wt_string *s = wt_intern_cstr(name);
  if (!s) return -1;
  return wt_push_at(auto_domain(), s, payload_of(payload), at > 0 ? (uint64_t)at : 0);
}

/* pops the innermost of the hook's ranges on this thread; payload > 0 replaces its payload (the
 * samples of a step are known when it ends) */
int wlrun_trace_auto_pop(int64_t payload) { return wlrun_trace_auto_pop_at(payload, 0); }

/* the same, the range ended at `at` (as wlrun_trace_auto_push_at) */
int wlrun_trace_auto_pop_at(int64_t payload, int64_t at) {
  if (!wlrun_trace_auto_enabled()) return -1;
  struct wt_payload p = payload_of(payload);
  return wt_pop_at(auto_domain(), payload > 0 ? &p : NULL, at > 0 ? (uint64_t)at : 0);
}

/* the same, the range ended at the thread's next push or pop of the hook's (the loop's next work;
 * the program's own ranges opened meanwhile nest inside it), or, where the thread or the process
 * ends first, now (wt_pop_later) */
int wlrun_trace_auto_pop_later(int64_t payload) {
  if (!wlrun_trace_auto_enabled()) return -1;
  struct wt_payload p = payload_of(payload);
  return wt_pop_later(auto_domain(), payload > 0 ? &p : NULL);
}

/* the range wlrun_trace_auto_pop_later left open ends at `at` (as wlrun_trace_auto_push_at; 0:
 * now) if a range of the hook's follows on the thread: the loop's next work is none of them (a
 * checkpoint saved); where the thread or the process ends first, it ends where it was left open.
 * -1 where none is left open */
int wlrun_trace_auto_end_later(int64_t at) {
  if (!wlrun_trace_auto_enabled()) return -1;
  return wt_end_later(at > 0 ? (uint64_t)at : 0);
}

/* 1 where wlrun_trace_auto_pop_later left a range open on this thread that is still open (it
 * pops at once where it cannot: a range wlrun synchronises, --sync-steps), else 0 */
int wlrun_trace_auto_left_open(void) { return wlrun_trace_auto_enabled() && wt_left_open(); }

/* the range wlrun_trace_auto_pop_later left open ends now (a GradScaler's update after the
 * optimizer step that ended the step, where the loop makes its batches); -1 where none is open */
int wlrun_trace_auto_end_left_open(void) {
  return wlrun_trace_auto_enabled() ? wt_end_left_open() : -1;
}

/* the range wlrun_trace_auto_pop_later left open ends no earlier than `at` (CLOCK_MONOTONIC ns;
 * 0: now) where the thread or the process ends before the hook's next range: the step's tail seen
 * so far (a made batch's step kept open through the calls after its optimizer's step); -1 where
 * none is open */
int wlrun_trace_auto_left_open_to(int64_t at) {
  return wlrun_trace_auto_enabled() ? wt_left_open_to(at > 0 ? (uint64_t)at : 0) : -1;
}

/* the program's torch.cuda.synchronize() returned to its Python caller (the hook's wrapper, once
 * the interpreter's lock is back): the loop's synchronisation before or after a step returned
 * here, not where the driver's call did (trace_waits.c) */
int wlrun_trace_auto_resumed(void) {
  if (!wlrun_trace_auto_enabled()) return -1;
  wt_waits_resumed();
  return 0;
}
