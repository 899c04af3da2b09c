/* The parts of libwlrun_trace.so (trace_format.h is what it writes; docs/trace.md). Everything here
 * is hidden in the shared library; only InitializeInjectionNvtx2 and InitializeInjection are
 * exported.
 *
 * Locks: the trace lock (trace_output.c) guards the file, the thread registry, every thread's
 * stack of open ranges, the start/end ranges and the counters; the string table has its own lock,
 * never taken while the trace lock is held; a thread's launch buffer has its own, taken after the
 * trace lock when both are needed. Nothing is called into CUDA or CUPTI while a lock is held, but
 * under the sampling lock (trace_steps.c: CUPTI's activity and callbacks turned on and off, the
 * marks made) and the marks' lock (trace_marks.c: marks recorded), each taken with no other
 * lock held; CUPTI's callback on a mark's call takes the thread's launch buffer and the trace
 * lock under them, never the other way round. */
#ifndef WL_TRACE_INTERNAL_H
#define WL_TRACE_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <wchar.h>

/* ---- strings (trace_strings.c) ---- */

/* An interned string: one per distinct text, never freed; NVTX domain and registered-string
 * handles point at these. */
struct wt_string {
  uint32_t sid;
  uint32_t defined; /* the file generation whose file holds its S line (under the trace lock) */
  uint32_t hash;
  uint32_t len;
  struct wt_string *next; /* the hash chain */
  char text[];            /* valid UTF-8, NUL-terminated */
};

/* The interned string of text[0..len) (invalid UTF-8 replaced by U+FFFD); NULL when out of memory.
 */
struct wt_string *wt_intern(const char *text, size_t len);
struct wt_string *wt_intern_cstr(const char *text); /* NULL text: "" */
/* The interned UTF-8 form of a wide (UTF-32) string. */
struct wt_string *wt_intern_wide(const wchar_t *text);
void wt_strings_fork_prepare(void);
void wt_strings_fork_parent(void);
void wt_strings_fork_child(void);

/* ---- the file (trace_output.c) ---- */

uint64_t wt_now(void); /* CLOCK_MONOTONIC, ns */
pid_t wt_gettid(void);

int wt_out_open(
    const char *dir); /* at the first initialisation: the file of this process; 0: none */
/* Every lock of the library is taken and released through these, which count the locks the
 * calling thread holds or is taking: the exit handler, run by exit() from a signal handler that
 * interrupted the library on that thread, must not wait for a lock that thread holds. */
void wt_mutex_lock(pthread_mutex_t *m);
void wt_mutex_unlock(pthread_mutex_t *m);
int wt_inside(void); /* locks of the library held (or being taken) by the calling thread */
void wt_lock(void);
void wt_unlock(void); /* writes out what was added under the lock, then unlocks */
/* The same for a range closed inside another: written when 16 KiB have gathered or 100 ms have
 * passed since the last write (now: wt_now()), else with the next record written out. */
void wt_unlock_soon(uint64_t now);
int wt_ready(void);    /* under the lock: records can be written (opens a forked child's file) */
int wt_is_open(void);  /* under the lock: this process's file is open */
int wt_finished(void); /* the X record is written: no more records */
void wt_finish(void);  /* under the lock: X, then the file closed */
void wt_out_fork_child(
    void); /* the child forgets the parent's file and starts its own on its first record */
void wt_out_fork_prepare(void);
void wt_out_fork_parent(void);

/* A record, under the lock and after wt_ready(): wt_define every string it names, then
 * wt_line(letter), its fields, wt_end(). */
void wt_define(struct wt_string *s);
void wt_line(char letter);
void wt_u64(uint64_t v);
void wt_i64(int64_t v);
void wt_sid(const struct wt_string *s); /* 0 for NULL (the default domain) */
void wt_text(const char *s);            /* escaped */
void wt_dash(void);                     /* "-" */
void wt_end(void);

/* A record of one text field (E, or G with its state) written whole, taking the lock. */
void wt_record_text(char letter, const char *state, const char *text);
/* Lines made elsewhere (launch and activity batches), written whole, taking the lock. */
void wt_write_lines(const char *lines, size_t len);

/* Records lost for want of memory, written as "D memory" at exit. */
void wt_lost(uint64_t n);
uint64_t wt_lost_count(void);

/* ---- ranges (trace_threads.c: per-thread push/pop; trace_ranges.c: start/end) ---- */

/* An integer payload given with a range */
struct wt_payload {
  int kind; /* 0 none, 1 signed, 2 unsigned */
  uint64_t bits;
};

int wt_push(struct wt_string *domain, struct wt_string *name, struct wt_payload payload);
int wt_pop(struct wt_string *domain);
/* the same, the range's payload replaced by *payload (a step's batch size, known at its end) */
int wt_pop_with(struct wt_string *domain, const struct wt_payload *payload);
/* the same, timed at `at` (CLOCK_MONOTONIC ns; 0: now) where that is earlier than now and no
 * earlier than the thread's last end and the start of the range on top of its stack (wlrun's
 * Python hook: the time its wrapper was entered, before its own work) */
int wt_push_at(struct wt_string *domain, struct wt_string *name, struct wt_payload payload,
               uint64_t at);
int wt_pop_at(struct wt_string *domain, const struct wt_payload *payload, uint64_t at);
/* the same, for the thread's top range, its end left to the thread's next push or pop in its
 * domain, or a pop of a range around it (ended then: ranges of other domains opened meanwhile
 * nest inside it); where the thread or the process ends first, it ends at the time of this call.
 * A range timed with a synchronisation (WLRUN_TRACE_SYNC), or not on top, is popped at once. */
int wt_pop_later(struct wt_string *domain, const struct wt_payload *payload);
int wt_end_later(uint64_t at);
int wt_left_open(void);
int wt_end_left_open(void);
int wt_left_open_to(uint64_t at);
int wt_ranges_above(const struct wt_string *domain);
uint64_t wt_start(struct wt_string *domain, struct wt_string *name, struct wt_payload payload);
void wt_end_range(uint64_t rid);
void wt_name_thread(uint32_t tid, struct wt_string *name);

/* A CUDA call that can start GPU work, made on the calling thread: its C record, timed `at` (0:
 * now; a step mark's, the step boundary it stands for). */
void wt_note_launch(uint64_t correlation, uint64_t at);

uint64_t wt_next_rid(void);   /* under the lock */
uint64_t wt_depth_lost(void); /* pushes not recorded: the thread's ranges were nested too deep */
void wt_payload_field(struct wt_payload p);

void wt_threads_init(void);    /* the key whose destructor flushes a thread that ends */
void wt_threads_at_exit(void); /* under the lock: every thread's launches, O for its open ranges */
void wt_threads_fork_child(void); /* only the forking thread remains, with nothing open */
void wt_ranges_at_exit(void);     /* under the lock: O for the open start/end ranges */
void wt_ranges_fork_child(void);

/* ---- the steps traced (trace_steps.c: WLRUN_TRACE_STEPS) ---- */

/* done: under the trace lock, writes every thread's launches and open ranges (as at an exit) */
void wt_steps_init(void (*done)(void));
int wt_recording(void); /* 0 once the steps traced are done: no more ranges or launches */
void wt_launch_noted(uint64_t correlation);
void wt_launch_counted(void); /* a launch's callback (the cost of recording a step) */
/* under the trace lock: a range opened at `at`; a range closed at `end` (its R or A written),
 * the N-th step of its domain stopping the recording, writing every thread's launches and open
 * ranges as at an exit. A step's start or end waits on the thread for wt_step_marks. */
void wt_step_opened(const struct wt_string *name, const struct wt_string *domain, uint64_t at);
/* under the trace lock: a range left open (wt_pop_later) is to end at `end` (wt_end_later): a
 * step's marks are made now, not when it is closed */
void wt_step_ending(const struct wt_string *name, const struct wt_string *domain, uint64_t end);
void wt_step_closed(const struct wt_string *name, const struct wt_string *domain, uint64_t end);
/* outside every lock, after a push or pop: the marks of a step's start or end on this thread, and
 * GPU activity turned on or off for the next step (WLRUN_TRACE_GPU_EVERY) */
void wt_step_marks(void);
/* What the GPU's activity (trace_cupti.c) gives the steps once CUPTI is on: kernels' activity (and
 * with quiet steps the launch callbacks) on or off from `at`, its P record written; stop:
 * everything off, for the rest of the process (the steps traced are done); marks: step marks can be
 * made (CUPTI times the marks' memsets or events). */
struct wt_sampling {
  void (*activity)(int on, uint64_t at);
  void (*stop)(void);
  int marks;
};
void wt_use_sampling(const struct wt_sampling *s);
/* 1 where some steps may go unrecorded (WLRUN_TRACE_GPU_EVERY not 1): marks are wanted */
int wt_steps_sampled(void);
/* --gpu-every auto's choice: one step in how many recorded, where a recorded step of `length` ns
 * launched `noted` kernels and the steps recorded may cost `of_step` of a step (0.01: 1 %) */
long wt_auto_every(double of_step, uint64_t length, uint64_t noted);
int wt_is_step(const struct wt_string *name); /* a range of that name is a step */
/* a range of that domain and name is the Python hook's data loading */
int wt_is_hook_data(const struct wt_string *domain, const struct wt_string *name);
int wt_work_recorded(uint64_t correlation); /* GPU work launched while recording */
void wt_steps_fork_child(void);

/* ---- step marks (trace_marks.c): memsets (or CUDA events) at the steps' boundaries ---- */

/* a launch's stream (a CUstream of the CUcontext ctx) */
void wt_marks_stream_used(void *ctx, void *stream);
void wt_marks_unreadable(const char *call); /* a launch on a stream not known: no more marks */
void wt_marks_stream_gone(void *stream);    /* destroyed */
void wt_marks_context_gone(void *ctx);      /* destroyed (NULL: any), its streams with it */
void wt_marks_capturing(int change);        /* a graph capture begun (1) or ended (-1) */
int wt_marks_ready(void); /* streams known, no call failed, no graph being captured */
/* outside every lock: a mark recorded on each stream known, its C record timed a nanosecond
 * before `at` (0: now); the count recorded */
int wt_marks_record(uint64_t at);
uint64_t wt_marking(void); /* on the thread recording marks, the time they stand for; else 0 */
/* what a mark is: a CUDA event (CUDA_EVENT activity), a memset of WL_TRACE_MARK_BYTES (MEMSET
 * activity) or a copy of that size from pinned host memory (MEMCPY activity); a set or copy of
 * that size is then a mark's */
enum wt_mark_kind { WT_MARK_EVENT, WT_MARK_SET, WT_MARK_COPY };
void wt_marks_made_as(enum wt_mark_kind kind);
/* idle marks on (none until then): a stream found idle at a boundary is marked by the library
 * itself, its C record through note (wt_note_launch), its time from synced (wt_waits_synced) */
void wt_marks_idle_with(void (*note)(uint64_t correlation, uint64_t at),
                        uint64_t (*synced)(void *ctx));
enum wt_mark_kind wt_marks_kind(void);
/* CU_STREAM_PER_THREAD, cudaStreamPerThread (also a runtime _ptsz call's NULL stream): no other
 * thread can record on it */
#define WL_PER_THREAD_STREAM ((void *)0x2)
#define WL_TRACE_MARK_BYTES 13 /* a size no program is likely to set: its K record is a mark's */
void wt_marks_fork_child(void);
void *wt_driver_fn(const char *name); /* from the libcuda.so.1 the program has loaded, or NULL */
/* from the launch callback on the marking thread: the correlation of the mark just made */
void wt_marks_correlation(uint64_t correlation);
void wt_marks_settle(
    void); /* at exit, before CUPTI's last buffers: quiet marks' events waited for */
void wt_marks_flush(void); /* at exit, after CUPTI's last buffers: quiet marks written or lost */
/* from CUPTI's resource callbacks, inside the driver's call: a stream (all 0) or every stream of
 * ctx (all 1) destroyed, forgotten at the next boundary's marks */
void wt_marks_gone_later(void *ctx, void *stream, int all);

/* ---- quiet steps (trace_quiet.c): no CUPTI on the steps not recorded, marks timed from anchors;
 * all but wt_quiet_start, wt_quiet_wanted, wt_quiet_steps, wt_quiet_now and
 * wt_quiet_anchor_timed under the marks' lock ---- */
/* quiet steps wanted (the driver has what they need): 1; flush: asks CUPTI for its completed
 * buffers soon (a mark waits for its anchor's time); note: writes a mark's C record
 * (wt_note_launch) */
int wt_quiet_start(void (*flush)(void), void (*note)(uint64_t correlation, uint64_t at));
int wt_quiet_wanted(void);   /* quiet steps on for the process */
void wt_quiet_steps(int on); /* the steps from now are quiet (1) or recorded (0) */
int wt_quiet_now(void);
int wt_quiet_capturing(void *stream); /* its context current */
void wt_quiet_anchor(void *ctx, void *stream, uint64_t correlation);
/* on CUPTI's buffer thread: the time (on the ranges' clock) of the mark of that correlation, or
 * (timed 0) that CUPTI gave it none */
void wt_quiet_anchor_timed(uint64_t correlation, uint64_t time, uint32_t device, uint32_t stream,
                           int timed);
int wt_quiet_mark(void *ctx, void *stream, uint64_t at);
void wt_quiet_poll(int (*push)(void *ctx), void (*pop)(void), int finished);
uint64_t wt_quiet_lost(char *why, size_t room); /* the marks lost, why as text */
int wt_quiet_running(void);                     /* quiet marks whose events have not run yet */
void wt_quiet_context_gone(void *ctx);
void wt_quiet_fork_child(void);
struct wt_string *wt_mark_name(void); /* "event", the marks' K records' name (its S written) */
/* a mark of the library's own: its K record (kind event) at time t; 0 where it could not be
 * written */
int wt_mark_write(uint64_t correlation, uint32_t device, uint32_t stream, uint64_t t);

/* ---- the device (trace_sync.c, trace_cupti.c) ---- */

void wt_sync_init(void); /* reads WLRUN_TRACE_SYNC */
int wt_sync_wanted(const struct wt_string *domain, const struct wt_string *name);
void wt_sync_device(void); /* cuCtxSynchronize where CUDA is loaded; never under a lock */
void wt_sync_fork_child(void);
int wt_sync_own(void); /* the calling thread is in wt_sync_device's synchronisation */

/* ---- the loop's synchronisations after and before a step (trace_waits.c): W, B records ---- */

/* a range popped on the calling thread (a step's arms the next synchronisation) */
void wt_waits_step_closed(const struct wt_string *name, uint64_t rid, pid_t tid);
/* a range pushed on the calling thread, the trace lock held (a step's writes the last
 * synchronisation before it) */
void wt_waits_step_opened(const struct wt_string *name, uint64_t rid, pid_t tid);
void wt_waits_work_started(void); /* a launch, copy or set of the program's */
/* a range left open on the calling thread (wt_pop_later: a step's is ended by the loop's
 * synchronisation after it) */
void wt_waits_step_left_open(const struct wt_string *name);
/* as the range left open on the calling thread ends: the return of the loop's synchronisation
 * after it, where that ends it (0: none), and its entry in *entered (where not NULL); forgotten
 * then */
uint64_t wt_waits_tail_taken(uint64_t *entered);
/* that synchronisation's W record, for the step rid of thread tid (the trace lock held) */
void wt_waits_tail_record(pid_t tid, uint64_t rid, uint64_t entered, uint64_t returned);
/* a launch of the program's whose end a step not recorded does not time: a kernel's, a graph's,
 * a set's (not a copy's), on any thread */
void wt_waits_untimed_started(void);
/* the return of the calling thread's last synchronisation of the device, where that was ctx's
 * and no untimed launch came since it was entered, on any thread; 0: none */
uint64_t wt_waits_synced(void *ctx);
enum { WT_SYNC_STREAM = 1, WT_SYNC_DEVICE = 2 };
/* a synchronising call entered (1) or returned (0); of: WT_SYNC_DEVICE (the device's),
 * WT_SYNC_STREAM (a default stream's) or 0 (an event's, another stream's) */
void wt_waits_sync_called(int entering, int of, void *ctx);
/* the calling thread's caller of its last synchronisation of the device resumed now (the Python
 * hook, after torch.cuda.synchronize() returned to it): that call's B record and tail end move
 * here, its W record gets a Y record; nothing where anything started or was entered since */
void wt_waits_resumed(void);
void wt_waits_fork_child(void);

/* One CUPTI activity record (kernel, memcpy, memset) as a K line at out, its name's S line written
 * first; 0 for another kind or a record without valid times. */
size_t wt_activity_line(char *out, size_t room, const void *record);

/* ---- the process (trace_process.c) ---- */

extern struct wt_string *wt_empty; /* "", for a name that could not be stored */
int wt_init(void);                 /* the first initialisation of NVTX or CUDA: 1 when tracing */

/* What the GPU's activity (trace_cupti.c) does at the process's exit and in a forked child, given
 * to the process's life by the activity itself (the process knows nothing of CUPTI): at_exit
 * flushes the last buffers into K records (never under a lock), dropped counts the records
 * lost, fork_child forgets the parent's CUDA. Given again once CUPTI is loaded, the exit handler
 * is registered again: after CUPTI's own, so that ours runs first, while CUPTI still works. */
struct wt_activity_hooks {
  void (*at_exit)(void);
  uint64_t (*dropped)(void);
  void (*fork_child)(void);
};
void wt_use_activity(const struct wt_activity_hooks *hooks);

#endif
