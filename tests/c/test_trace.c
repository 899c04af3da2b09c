/* The trace library's records of GPU work, which CUPTI drives and a machine without a GPU never
 * sees: launches (src/trace/trace_threads.c: what CUPTI's callback gives on entry to a launch,
 * wt_note_launch(correlation), becomes C records naming the innermost range, through each
 * thread's buffer written when full, when the thread ends, at exit) and activity records
 * (src/trace/trace_cupti.c: a kernel, copy or set as a K line, its name demangled where the
 * process has libstdc++). The test calls them as CUPTI does, with records as CUPTI lays them out,
 * in child processes that trace into a temporary directory and exit; the parent reads the files.
 * Last, a write that fails (a file that may grow no more): told once on standard error, the
 * program unharmed. */
#include <cupti.h>

#include "check.h"
#include "trace_format.h"
#include "trace_internal.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/wlrun-test-trace-XXXXXX";

/* the file of process pid, read whole (NULL when there is none) */
static char *trace_of(pid_t pid) {
  char path[128];
  snprintf(path, sizeof path, "%s/%d.wltrace", dir, (int)pid);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char text[1 << 20];
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = 0;
  fclose(f);
  unlink(path);
  return text;
}

/* runs scenario in a traced child process that exits 0 after it; returns the child's file */
static char *traced(void (*scenario)(void)) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    if (setenv("WLRUN_TRACE_DIR", dir, 1) != 0 || !wt_init()) _exit(9);
    scenario();
    exit(0);
  }
  int status = -1;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0);
  return trace_of(pid);
}

static struct wt_payload none(void) {
  struct wt_payload p = {0, 0};
  return p;
}

/* the number of lines of text that start with prefix */
static int lines_with(const char *text, const char *prefix) {
  int n = 0;
  size_t k = strlen(prefix);
  for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
    if (strncmp(p, prefix, k) == 0) n++;
  return n;
}

/* the time of the C record of a correlation (0: none) */
static unsigned long long launch_time(const char *text, unsigned long long correlation) {
  char key[48];
  snprintf(key, sizeof key, "\nC\t%llu\t", correlation);
  const char *p = strstr(text, key);
  unsigned long long corr, rid, time;
  if (!p || sscanf(p + 1, "C\t%llu\t%llu\t%llu", &corr, &rid, &time) != 3) return 0;
  return time;
}

/* the start (which 0) or end (1) of the R record of a range (0: none) */
static unsigned long long range_time(const char *text, unsigned long long rid, int which) {
  char key[48];
  snprintf(key, sizeof key, "\nR\t%llu\t", rid);
  const char *p = strstr(text, key);
  unsigned long long id, tid, parent, name, domain, start, end;
  if (!p || sscanf(p + 1, "R\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu", &id, &tid, &parent, &name,
                   &domain, &start, &end) != 7)
    return 0;
  return which ? end : start;
}

/* the parent of the R record of a range (-1: none) */
static long long range_parent(const char *text, unsigned long long rid) {
  char key[48];
  snprintf(key, sizeof key, "\nR\t%llu\t", rid);
  const char *p = strstr(text, key);
  unsigned long long id, tid, parent;
  if (!p || sscanf(p + 1, "R\t%llu\t%llu\t%llu", &id, &tid, &parent) != 3) return -1;
  return (long long)parent;
}

/* a pop of a range under another domain's: the range above it becomes its parent's */
static void pop_under(void) {
  struct wt_string *app = wt_intern_cstr("app");
  wt_push(NULL, wt_intern_cstr("outer"), none()); /* rid 1 */
  wt_push(app, wt_intern_cstr("inner"), none());  /* rid 2 */
  wt_pop(NULL);                                   /* outer, under inner */
  wt_push(app, wt_intern_cstr("leaf"), none());   /* rid 3 */
  wt_pop(app);
  wt_pop(app);
}

/* the hook's step popped "later" from under a program's range around the optimizer step: the
 * step stays open over that range's end and the program's "log" after it, to the hook's next
 * push */
static void later_under_own(void) {
  struct wt_string *hook = wt_intern_cstr("wlrun.auto");
  wt_push(hook, wt_intern_cstr("train_step"), none()); /* rid 1 */
  wt_push(NULL, wt_intern_cstr("opt"), none());        /* rid 2 */
  wt_push(hook, wt_intern_cstr("optimizer"), none());  /* rid 3 */
  wt_pop(hook);
  wt_pop_later(hook, NULL);
  wt_pop(NULL);                                 /* opt */
  wt_push(NULL, wt_intern_cstr("log"), none()); /* rid 4 */
  wt_pop(NULL);
  wt_push(hook, wt_intern_cstr("data"), none()); /* rid 5: ends the step */
  wt_pop(hook);
}

static void no_range(void) {
  wt_note_launch(1, 0); /* nothing open anywhere: C with rid 0, its time all the same */
  wt_push(NULL, wt_intern_cstr("late"), none());
  wt_pop(NULL);
}

static void many(void) {
  wt_push(NULL, wt_intern_cstr("step"), none()); /* rid 1 */
  for (uint64_t c = 1; c <= 1000; c++) {
    wt_note_launch(c, 0);
    wt_note_launch(c, 0); /* the driver's call inside the runtime's: once */
  }
  wt_push(NULL, wt_intern_cstr("inner"), none()); /* rid 2 */
  wt_note_launch(2000, 0);
  wt_pop(NULL);
  wt_note_launch(2001, 0); /* step again */
  wt_pop(NULL);
}

static void *launches_on_own_range(void *arg) {
  (void)arg;
  wt_push(NULL, wt_intern_cstr("worker"), none());
  for (uint64_t c = 5000; c < 5010; c++) wt_note_launch(c, 0);
  return NULL; /* ends with its range open and its launches buffered */
}

static void *launches_without_range(void *arg) {
  (void)arg;
  wt_note_launch(7000, 0); /* autograd's thread: the main thread's innermost range */
  return NULL;
}

static void threads(void) {
  pthread_t t;
  wt_push(NULL, wt_intern_cstr("backward"), none()); /* rid 1 */
  if (pthread_create(&t, NULL, launches_without_range, NULL) != 0 || pthread_join(t, NULL) != 0)
    _exit(8);
  if (pthread_create(&t, NULL, launches_on_own_range, NULL) != 0 || pthread_join(t, NULL) != 0)
    _exit(8);
  wt_note_launch(8000, 0);
  /* exits with backward open and 8000 buffered */
}

/* a kernel record as CUPTI gives it */
static CUpti_ActivityKernel10 kernel(uint32_t correlation, uint64_t start, uint64_t end,
                                     const char *name) {
  CUpti_ActivityKernel10 k;
  memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.correlationId = correlation;
  k.deviceId = 1;
  k.streamId = 7;
  k.start = start;
  k.end = end;
  k.name = name;
  return k;
}

/* K lines of synthetic records, written to the file as CUPTI's completion callback writes them */
static void activity(void) {
  static const char mangled[] = "_Z12forward_spinm", plain[] = "extern_c_kernel";
  char again[sizeof mangled];
  memcpy(again, mangled, sizeof mangled); /* the same name at another address */
  CUpti_ActivityKernel10 k[] = {kernel(42, 1000, 3000, mangled), kernel(43, 3000, 4000, mangled),
                                kernel(44, 5000, 6000, again),   kernel(45, 7000, 8000, plain),
                                kernel(46, 9000, 8999, plain),   kernel(47, 0, 10, plain)};
  CUpti_ActivityMemcpy6 copy;
  memset(&copy, 0, sizeof copy);
  copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  copy.bytes = 8 << 20;
  copy.correlationId = 50, copy.start = 100, copy.end = 200, copy.streamId = 3;
  CUpti_ActivityMemset4 set;
  memset(&set, 0, sizeof set);
  set.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  set.bytes = 1 << 20;
  set.correlationId = 51, set.start = 300, set.end = 400, set.streamId = 3;
  CUpti_Activity other = {CUPTI_ACTIVITY_KIND_MARKER};
  char lines[4096];
  size_t n = 0;
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
    n += wt_activity_line(lines + n, sizeof lines - n, &k[i]);
  n += wt_activity_line(lines + n, sizeof lines - n, &copy);
  n += wt_activity_line(lines + n, sizeof lines - n, &set);
  n += wt_activity_line(lines + n, sizeof lines - n, &other);
  wt_write_lines(lines, n);
}

/* the same, in a process that has libstdc++ (a C++ or PyTorch program) */
static void activity_with_cxx(void) {
  if (!dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL)) _exit(7);
  activity();
}

/* the sid of the S line whose text is text, or -1 */
static long sid_of(const char *t, const char *text) {
  char want[256];
  snprintf(want, sizeof want, "\t%s\n", text);
  for (const char *p = t; p && (p = strstr(p, "\nS\t")); p++) {
    const char *end = strchr(p + 1, '\n');
    const char *tab = strchr(p + 3, '\t');
    if (tab && end && (size_t)(end - tab + 1) == strlen(want) &&
        strncmp(tab, want, strlen(want)) == 0)
      return strtol(p + 3, NULL, 10);
  }
  return -1;
}

static void test_activity(void) {
  char line[256];
  char *t = traced(activity);
  long mangled = sid_of(t, "_Z12forward_spinm"), plain = sid_of(t, "extern_c_kernel");
  /* without libstdc++: the name as CUPTI gave it (a sanitizer's runtime has its own demangler) */
  if (mangled < 0 && dlsym(RTLD_DEFAULT, "__cxa_demangle"))
    mangled = sid_of(t, "forward_spin(unsigned long)");
  CHECK(mangled > 0 && plain > 0);
  snprintf(line, sizeof line, "\nK\t42\tkernel\t1\t7\t1000\t3000\t0\t%ld\n", mangled);
  CHECK_CONTAINS(t, line);
  snprintf(line, sizeof line, "\nK\t44\tkernel\t1\t7\t5000\t6000\t0\t%ld\n",
           mangled); /* one string */
  CHECK_CONTAINS(t, line);
  snprintf(line, sizeof line, "\nK\t45\tkernel\t1\t7\t7000\t8000\t0\t%ld\n", plain);
  CHECK_CONTAINS(t, line);
  CHECK(!strstr(t, "\nK\t46\t") && !strstr(t, "\nK\t47\t")); /* no valid times */
  snprintf(line, sizeof line, "\nK\t50\tmemcpy\t0\t3\t100\t200\t8388608\t%ld\n",
           sid_of(t, "memcpy HtoD"));
  CHECK_CONTAINS(t, line);
  snprintf(line, sizeof line, "\nK\t51\tmemset\t0\t3\t300\t400\t1048576\t%ld\n",
           sid_of(t, "memset"));
  CHECK_CONTAINS(t, line);
  CHECK(lines_with(t, "K\t") == 6);
  CHECK(lines_with(t, "S\t") == 4); /* two kernels, a copy, a set: each once, before its K */
  CHECK(strstr(t, "\tmemset\n") < strstr(t, "\nK\t51\t"));

  t = traced(activity_with_cxx);
  long demangled = sid_of(t, "forward_spin(unsigned long)");
  CHECK(demangled > 0);
  snprintf(line, sizeof line, "\nK\t43\tkernel\t1\t7\t3000\t4000\t0\t%ld\n", demangled);
  CHECK_CONTAINS(t, line);
  CHECK(sid_of(t, "extern_c_kernel") > 0); /* not mangled: kept */
}

/* the step marks' records: a set of 13 bytes is a mark where marks are sets, a copy of 13 bytes
 * from pinned host memory to the GPU where they are copies (not one from pageable memory), and
 * nothing else is */
static CUpti_ActivityMemcpy6 small_copy(uint32_t correlation, uint8_t src_kind) {
  CUpti_ActivityMemcpy6 c;
  memset(&c, 0, sizeof c);
  c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  c.srcKind = src_kind, c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  c.bytes = WL_TRACE_MARK_BYTES;
  c.correlationId = correlation, c.start = 1000 + correlation, c.end = 2000 + correlation;
  return c;
}

static void marks_of(enum wt_mark_kind kind) {
  wt_marks_made_as(kind);
  CUpti_ActivityMemcpy6 pinned = small_copy(60, CUPTI_ACTIVITY_MEMORY_KIND_PINNED),
                        pageable = small_copy(61, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
  CUpti_ActivityMemset4 set;
  memset(&set, 0, sizeof set);
  set.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  set.bytes = WL_TRACE_MARK_BYTES;
  set.correlationId = 62, set.start = 3000, set.end = 3100;
  char lines[2048];
  size_t n = wt_activity_line(lines, sizeof lines, &pinned);
  n += wt_activity_line(lines + n, sizeof lines - n, &pageable);
  n += wt_activity_line(lines + n, sizeof lines - n, &set);
  wt_write_lines(lines, n);
}

static void copy_marks(void) { marks_of(WT_MARK_COPY); }
static void set_marks(void) { marks_of(WT_MARK_SET); }
static void event_marks(void) { marks_of(WT_MARK_EVENT); }

static void test_mark_records(void) {
  char *t = traced(copy_marks);
  CHECK_CONTAINS(t, "\nK\t60\tevent\t0\t0\t2060\t2060\t0\t"); /* at the copy's end */
  CHECK_CONTAINS(t, "\nK\t61\tmemcpy\t");
  CHECK_CONTAINS(t, "\nK\t62\tmemset\t");
  t = traced(set_marks);
  CHECK_CONTAINS(t, "\nK\t60\tmemcpy\t");
  CHECK_CONTAINS(t, "\nK\t62\tevent\t0\t0\t3100\t3100\t0\t");
  t = traced(event_marks);
  CHECK_CONTAINS(t, "\nK\t60\tmemcpy\t");
  CHECK_CONTAINS(t, "\nK\t62\tmemset\t");
  CHECK(!strstr(t, "\tevent\t"));
}

/* Quiet steps (src/trace/trace_quiet.c) on tests/fixtures/fake_driver, two streams: a recorded
 * step's set marks, the anchor recorded behind each (again behind the second: no quiet mark
 * measured from it yet), whose set's time CUPTI gives; quiet marks written once their events have
 * run (at the next boundary, or at exit), each its elapsed time after the anchor; at exit, one
 * whose event never runs waited for a second, then counted lost; while a stream is captured, no
 * mark and no event asked; the thread's capture mode put back. */
static void quiet_marks(void) {
  void *lib = dlopen(FAKE_DRIVER, RTLD_NOW | RTLD_GLOBAL);
  if (!lib) _exit(8);
  void (*hook)(void (*)(uint64_t)) = (void (*)(void (*)(uint64_t)))dlsym(lib, "fake_driver_hook");
  void (*run)(uint64_t, int) = (void (*)(uint64_t, int))dlsym(lib, "fake_driver_run");
  uint64_t (*device_clock)(void) = (uint64_t(*)(void))dlsym(lib, "fake_driver_clock");
  int (*queries)(void) = (int (*)(void))dlsym(lib, "fake_driver_queries");
  int (*mode)(void) = (int (*)(void))dlsym(lib, "fake_driver_mode");
  if (!hook || !run || !device_clock || !queries || !mode) _exit(8);
  hook(wt_marks_correlation);
  wt_marks_made_as(WT_MARK_SET);
  if (!wt_quiet_start(NULL, wt_note_launch)) _exit(8);
  wt_marks_stream_used((void *)0x1, (void *)0x7);
  wt_marks_stream_used((void *)0x1, (void *)0x9);
  run(UINT64_MAX, 0);
  wt_marks_record(1000); /* recorded: sets 100 (stream 7) and 101 (9), the anchor behind each */
  uint64_t anchor = device_clock();
  wt_quiet_anchor_timed(101, 50000, 0, 9, 1); /* CUPTI's record of set 101: it ended at 50000 */
  wt_quiet_steps(1);
  run(anchor + 2000, 0); /* the first two quiet marks' events will have run, not the next two */
  wt_marks_record(2000); /* quiet: an event on each stream, 1 and 2 us after the anchor */
  wt_marks_record(3000); /* those written; two more, 3 and 4 us after */
  run(0, 1);             /* nothing runs; a stream is captured */
  wt_marks_record(4000); /* no mark, no event asked */
  if (queries() != 0 || mode() != 0) _exit(10);
  run(anchor + 3000, 0); /* the third has run; the fourth never will */
  uint64_t t0 = wt_now();
  wt_marks_settle();
  uint64_t waited = wt_now() - t0;
  if (waited < 900000000u || waited > 10000000000u) _exit(11); /* a second, not for ever */
  wt_marks_flush();
}

static void test_quiet_marks(void) {
  char *t = traced(quiet_marks);
  long event = sid_of(t, "event");
  char line[160];
  unsigned long long first = 1ull << 40;
  CHECK(launch_time(t, first) == 1999 && launch_time(t, first + 1) == 1999);
  CHECK(launch_time(t, first + 2) == 2999 && launch_time(t, first + 3) == 2999);
  CHECK(launch_time(t, first + 4) == 0); /* none while captured */
  for (unsigned long long k = 0; k < 3; k++) {
    snprintf(line, sizeof line, "\nK\t%llu\tevent\t0\t9\t%llu\t%llu\t0\t%ld\n", first + k,
             51000 + 1000 * k, 51000 + 1000 * k, event);
    CHECK_CONTAINS(t, line);
  }
  CHECK(!strstr(t, "\tevent\t0\t9\t54000\t"));
  CHECK_CONTAINS(
      t, "\nE\t1 marks of quiet steps could not be made or timed (1 still waiting at the exit)");
}

/* Idle marks (src/trace/trace_marks.c) on tests/fixtures/fake_driver: streams 7 and the legacy
 * one in context 1, stream 9 in context 3. At a boundary where they have nothing left to run, the
 * library writes its own marks (C and K records, correlations from 2^41, the context's device, no
 * set made): at the return of the synchronisation for the streams of the context whose device the
 * thread last synchronised before the boundary (a stream's synchronisation since changes
 * nothing), where no kernel, graph or set was launched since on any thread; else at the time it
 * asked them; the legacy stream idle only where every known one is; a set where a stream is
 * busy. */
static int sets_made;
static void set_made(uint64_t correlation) {
  sets_made++;
  wt_marks_correlation(correlation);
}

static void *launch_elsewhere(void *unused) {
  (void)unused;
  wt_waits_untimed_started();
  return NULL;
}

static void device_synchronised(void) {
  wt_waits_sync_called(1, WT_SYNC_DEVICE, (void *)0x1);
  wt_waits_sync_called(0, WT_SYNC_DEVICE, (void *)0x1);
}

static void idle_marks(void) {
  void *lib = dlopen(FAKE_DRIVER, RTLD_NOW | RTLD_GLOBAL);
  if (!lib) _exit(8);
  void (*hook)(void (*)(uint64_t)) = (void (*)(void (*)(uint64_t)))dlsym(lib, "fake_driver_hook");
  void (*idle)(int) = (void (*)(int))dlsym(lib, "fake_driver_idle");
  void (*busy)(void *) = (void (*)(void *))dlsym(lib, "fake_driver_busy");
  if (!hook || !idle || !busy) _exit(8);
  hook(set_made);
  wt_marks_made_as(WT_MARK_SET);
  wt_marks_idle_with(wt_note_launch, wt_waits_synced);
  wt_marks_stream_used((void *)0x1, (void *)0x7);
  wt_marks_stream_used((void *)0x1, NULL);
  wt_marks_stream_used((void *)0x3, (void *)0x9);
  idle(1);
  /* no synchronisation yet: at the time asked */
  if (wt_marks_record(1000) != 3 || sets_made != 0) _exit(9);
  /* a second ahead: a time asked comes before the boundary */
  device_synchronised();
  if (wt_marks_record(wt_now() + 1000000000u) != 3 || sets_made != 0) _exit(10);
  pthread_t other;
  if (pthread_create(&other, NULL, launch_elsewhere, NULL) != 0 || pthread_join(other, NULL) != 0)
    _exit(11);
  if (wt_marks_record(wt_now() + 1000000000u) != 3 || sets_made != 0) _exit(12);
  device_synchronised();
  wt_waits_sync_called(1, WT_SYNC_STREAM, (void *)0x1);
  wt_waits_sync_called(0, WT_SYNC_STREAM, (void *)0x1);
  if (wt_marks_record(wt_now() + 1000000000u) != 3 || sets_made != 0) _exit(13);
  /* a kernel after the device's synchronisation, then a stream's: the device's return no longer
   * bounds the work before the boundary */
  device_synchronised();
  wt_waits_untimed_started();
  wt_waits_sync_called(1, WT_SYNC_STREAM, (void *)0x1);
  wt_waits_sync_called(0, WT_SYNC_STREAM, (void *)0x1);
  if (wt_marks_record(wt_now() + 1000000000u) != 3 || sets_made != 0) _exit(16);
  busy((void *)0x7); /* and so the legacy stream is not taken for idle either */
  if (wt_marks_record(wt_now() + 1000000000u) != 3 || sets_made != 2) _exit(14);
  idle(0);
  if (wt_marks_record(wt_now() + 1000000000u) != 3 || sets_made != 5) _exit(15);
}

/* the K record's time of the idle mark with correlation corr, or 0 */
static unsigned long long idle_time(const char *t, unsigned long long corr) {
  char key[64];
  snprintf(key, sizeof key, "\nK\t%llu\tevent\t2\t0\t", corr);
  const char *at = strstr(t, key);
  return at ? strtoull(at + strlen(key), NULL, 10) : 0;
}

static void test_idle_marks(void) {
  char *t = traced(idle_marks);
  unsigned long long own = 1ull << 41;
  CHECK(lines_with(t, "K\t") == 16);
  for (unsigned long long k = 0; k < 3; k++) /* before any synchronisation: when asked */
    CHECK(launch_time(t, own + k) == 999 && idle_time(t, own + k) > 999);
  /* at the synchronisation's return (the context synchronised: S), or when asked (A), both before
   * the boundary a second ahead; marks of one boundary in threes, the last alone */
  const char *want = "SSA"
                     "AAA"
                     "SSA"
                     "AAA"
                     "A";
  for (unsigned long long k = 3; k < 16; k++) {
    unsigned long long at = launch_time(t, own + k), when = idle_time(t, own + k);
    CHECK(at > 999 && when > 0 && when < at);
    unsigned long long first = own + 3 + (k - 3) / 3 * 3; /* the boundary's first mark */
    unsigned long long asked = idle_time(t, first + 2);   /* its third stream's: asked (A) */
    /* S: the same return for both, before the streams were asked; A: asked once a boundary */
    if (want[k - 3] == 'S') CHECK(when == idle_time(t, first) && when < asked);
    else if (k < 15) CHECK(when == asked);
  }
  CHECK(launch_time(t, own + 16) == 0); /* none where every stream was busy */
}

/* The hook's step left open after its optimizer's step, then the loop's synchronisation, its
 * own range "log" and the hook's next data range: how tail_mode shapes what comes between */
enum {
  TAIL_PLAIN,
  TAIL_NO_LOG,
  TAIL_WORK_BEFORE,
  TAIL_WORK_AFTER,
  TAIL_CHECKPOINT,
  TAIL_OTHER_SYNC
};
static int tail_mode;

static void tail_sync(void) {
  struct wt_string *hook = wt_intern_cstr(WL_TRACE_AUTO_DOMAIN);
  wt_push(hook, wt_intern_cstr("train_step"), none()); /* rid 1 */
  wt_pop_later(hook, NULL);
  if (tail_mode == TAIL_WORK_BEFORE) wt_waits_work_started();
  int of = tail_mode == TAIL_OTHER_SYNC ? 0 : WT_SYNC_DEVICE;
  wt_waits_sync_called(1, of, (void *)0x1);
  usleep(2000);
  wt_waits_sync_called(0, of, (void *)0x1);
  usleep(2000);
  if (tail_mode == TAIL_WORK_AFTER) wt_waits_work_started();
  if (tail_mode == TAIL_CHECKPOINT) wt_end_later(0);
  if (tail_mode != TAIL_NO_LOG) {
    wt_push(NULL, wt_intern_cstr("log"), none()); /* rid 2 */
    wt_pop(NULL);
  }
  usleep(2000);
  wt_push(hook, wt_intern_cstr(WL_TRACE_AUTO_DATA), none()); /* rid 3 (2): ends the step */
  wt_pop(hook);
}

static void test_tail_sync(void) {
  setenv("WLRUN_TRACE_STEP", "train_step", 1);
  for (tail_mode = TAIL_PLAIN; tail_mode <= TAIL_OTHER_SYNC; tail_mode++) {
    char *t = traced(tail_sync);
    int logged = tail_mode != TAIL_NO_LOG;
    unsigned long long step_end = range_time(t, 1, 1),
                       data_start = range_time(t, logged ? 3 : 2, 0);
    unsigned long long log_start = range_time(t, 2, 0), log_end = range_time(t, 2, 1);
    int synced =
        tail_mode == TAIL_PLAIN || tail_mode == TAIL_NO_LOG || tail_mode == TAIL_CHECKPOINT;
    CHECK(step_end > range_time(t, 1, 0) && log_end >= log_start);
    /* the synchronisation that ended the step is its W record (step 1, returned at its end); none
     * where a checkpoint came after it (the step ended there first) or the step ran on */
    int waited = tail_mode == TAIL_PLAIN || tail_mode == TAIL_NO_LOG;
    const char *w = strstr(t, "\nW\t");
    unsigned long long tid, rid, entered, returned;
    CHECK(lines_with(t, "W\t") == waited);
    CHECK(!waited ||
          (w && sscanf(w + 1, "W\t%llu\t%llu\t%llu\t%llu", &tid, &rid, &entered, &returned) == 4 &&
           rid == 1 && returned == step_end && entered + 2000000 <= returned));
    if (!logged) { /* the step ends where the synchronisation returned, the data begins there */
      CHECK(data_start == step_end && step_end + 2000000 < range_time(t, 2, 1));
      continue;
    }
    /* the step ends where the synchronisation returned (the log after it is not the step's), else
     * at the hook's next range */
    CHECK(synced ? step_end < log_start : step_end > log_end);
    /* the data loading after it begins there, or where the program's range after it ended; but
     * after a checkpoint (the loop's other work) where it is pushed */
    CHECK(tail_mode == TAIL_PLAIN ? data_start == log_end : data_start > log_end + 1000000);
  }
  unsetenv("WLRUN_TRACE_STEP");
}

/* The hook's step left open after its optimizer's step, its tail's calls seen (wt_left_open_to,
 * the last 4 ms after it was left open; an earlier time after it changes nothing), a range of the
 * program's after them (rid 2), then the thread's end before any push of the hook's: the step
 * (rid 1) ends at the tail's last call, before that range, not where it was left open nor at the
 * thread's end; the step of a second thread told nothing (rid 3) ends where it was left open. The
 * main thread has none left open to tell. */
static void *tail_then_end(void *told) {
  struct wt_string *hook = wt_intern_cstr(WL_TRACE_AUTO_DOMAIN);
  wt_push(hook, wt_intern_cstr("train_step"), none());
  wt_pop_later(hook, NULL);
  usleep(2000);
  if (told) {
    wt_left_open_to(0);
    usleep(2000);
    uint64_t at = wt_now();
    wt_left_open_to(at);
    wt_left_open_to(at - 1000000);
    usleep(1000);
    wt_push(NULL, wt_intern_cstr("log"), none());
    wt_pop(NULL);
  }
  usleep(2000);
  return NULL;
}

static void tail_told_then_end(void) {
  if (wt_left_open_to(0) != -1) _exit(8);
  for (int told = 1; told >= 0; told--) {
    pthread_t th;
    if (pthread_create(&th, NULL, tail_then_end, told ? (void *)1 : NULL) != 0) _exit(7);
    pthread_join(th, NULL);
  }
}

static void test_left_open_to(void) {
  char *t = traced(tail_told_then_end);
  unsigned long long start = range_time(t, 1, 0), end = range_time(t, 1, 1);
  CHECK(start && end >= start + 4000000 && end < range_time(t, 2, 0));
  start = range_time(t, 3, 0), end = range_time(t, 3, 1);
  CHECK(start && end >= start && end < start + 1000000);
}

/* The program's torch.cuda.synchronize() returning to its Python caller later than the driver's
 * call did (the interpreter's lock held by another thread): wt_waits_resumed moves the loop's
 * synchronisation's return there. Own steps: step 1, the synchronisation after it (W, and a Y
 * naming its new return), then step 2 (its B the same call's, returning there); a stream's
 * synchronisation after step 2 and a resumption (nothing moved: not the device's); step 3 with
 * work started between the synchronisation and the resumption (nothing moved). Then the hook's
 * step left open (rid 4): its end moves with the resumption. */
static void resumed_syncs(void) {
  struct wt_string *step = wt_intern_cstr("train_step");
  wt_push(NULL, step, none()); /* rid 1 */
  wt_pop(NULL);
  device_synchronised();
  usleep(2000);
  wt_waits_resumed();
  wt_waits_resumed();          /* once only */
  wt_push(NULL, step, none()); /* rid 2: B */
  wt_pop(NULL);
  wt_waits_sync_called(1, WT_SYNC_STREAM, (void *)0x1);
  wt_waits_sync_called(0, WT_SYNC_STREAM, (void *)0x1);
  usleep(2000);
  wt_waits_resumed();
  wt_push(NULL, step, none()); /* rid 3 */
  wt_pop(NULL);
  device_synchronised();
  wt_waits_work_started();
  usleep(2000);
  wt_waits_resumed();
  struct wt_string *hook = wt_intern_cstr(WL_TRACE_AUTO_DOMAIN);
  wt_push(hook, step, none()); /* rid 4 */
  wt_pop_later(hook, NULL);
  device_synchronised();
  usleep(2000);
  wt_waits_resumed();
  usleep(2000);
  wt_push(hook, wt_intern_cstr(WL_TRACE_AUTO_DATA), none()); /* rid 5: ends the step */
  wt_pop(hook);
}

static void test_resumed_syncs(void) {
  setenv("WLRUN_TRACE_STEP", "train_step", 1);
  char *t = traced(resumed_syncs);
  unsigned long long tid, rid, entered, returned, ytid, was, now, btid, brid, benter, breturn;
  const char *w = strstr(t, "\nW\t"), *y = strstr(t, "\nY\t"), *b = strstr(t, "\nB\t");
  CHECK(lines_with(t, "Y\t") == 1 && lines_with(t, "B\t") == 1);
  CHECK(w && sscanf(w + 1, "W\t%llu\t%llu\t%llu\t%llu", &tid, &rid, &entered, &returned) == 4);
  CHECK(y && sscanf(y + 1, "Y\t%llu\t%llu\t%llu", &ytid, &was, &now) == 3);
  CHECK(b && sscanf(b + 1, "B\t%llu\t%llu\t%llu\t%llu", &btid, &brid, &benter, &breturn) == 4);
  /* step 1's W returned at `was`; its caller resumed 2 ms later, where step 2's B returns */
  CHECK(rid == 1 && ytid == tid && was == returned && now >= returned + 2000000);
  CHECK(brid == 2 && benter == entered && breturn == now && breturn < range_time(t, 2, 0));
  /* the hook's step ends where its synchronisation's caller resumed (the data after it begins
   * there), and its W returns there */
  unsigned long long end = range_time(t, 4, 1);
  CHECK(end >= range_time(t, 4, 0) + 2000000 && end == range_time(t, 5, 0));
  CHECK(range_time(t, 5, 1) >= end + 2000000);
  char key[64];
  snprintf(key, sizeof key, "\nW\t%llu\t4\t", tid);
  const char *tail = strstr(t, key);
  CHECK(tail &&
        sscanf(tail + 1, "W\t%llu\t%llu\t%llu\t%llu", &tid, &rid, &entered, &returned) == 4 &&
        returned == end);
  unsetenv("WLRUN_TRACE_STEP");
}

/* The file's descriptor made to fail (as a full disk does), standard error kept in dir/stderr. */
/* a file that may not grow past 256 KiB (RLIMIT_FSIZE, SIGXFSZ at its default: a write past it
 * would kill the process), and the ranges need more: the library stops its trace before. Putting
 * /dev/full in the descriptor's place would be the program's own file, which the library leaves
 * alone (tests/e2e/trace_hostile_spec.lua). */
static void full_disk(void) {
  char err[300];
  snprintf(err, sizeof err, "%s/stderr", dir);
  int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  struct rlimit small = {256 << 10, 256 << 10};
  if (e < 0 || dup2(e, 2) < 0 || setrlimit(RLIMIT_FSIZE, &small) != 0) _exit(6);
  for (int i = 0; i < 20000; i++) {
    wt_push(NULL, wt_intern_cstr("lost"), none());
    wt_pop(NULL);
  }
}

/* the program closes every descriptor (the trace file's among them) and goes on: the library
 * writes through its mapping, and opens the file anew by its name when it needs more room */
static void closed_descriptor(void) {
  wt_push(NULL, wt_intern_cstr("before"), none());
  wt_pop(NULL);
  for (int fd = 3; fd < 1024; fd++) close(fd);
  for (int i = 0; i < 15000; i++) {
    wt_push(NULL, wt_intern_cstr("after"), none());
    wt_pop(NULL);
  }
}

static void test_closed_descriptor(void) {
  char *t = traced(closed_descriptor);
  CHECK(t && lines_with(t, "R\t") == 15001 && lines_with(t, "X\texit") == 1);
  CHECK(t && strlen(t) > (256u << 10)); /* past the first windows */
}

/* a file-size limit below the first room the library reserves (ulimit -f 32), SIGXFSZ at its
 * default (the process killed): the library writes with write(2) instead of reserving room, and
 * the process ends as it would untraced */
static void test_small_file_limit(void) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    struct rlimit small = {32 << 10, 32 << 10};
    if (setrlimit(RLIMIT_FSIZE, &small) != 0 || setenv("WLRUN_TRACE_DIR", dir, 1) != 0 ||
        !wt_init())
      _exit(9);
    for (int i = 0; i < 10; i++) {
      wt_push(NULL, wt_intern_cstr("step"), none());
      wt_pop(NULL);
    }
    exit(0);
  }
  int status = -1;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0);
  char *t = trace_of(pid);
  CHECK(t && lines_with(t, "R\t") == 10 && lines_with(t, "X\texit") == 1);
}

static void test_write_error(void) {
  char *t = traced(full_disk);
  CHECK(t && lines_with(t, "R\t") < 20000 && lines_with(t, "X\t") == 0);
  char path[300];
  snprintf(path, sizeof path, "%s/stderr", dir);
  FILE *f = fopen(path, "rb");
  char text[1024] = "";
  if (f) {
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    fclose(f);
  }
  unlink(path);
  CHECK(strncmp(text, "wlrun trace: ", 13) == 0);
  CHECK_CONTAINS(text, ".wltrace: the file would pass the process's file-size limit "
                       "(RLIMIT_FSIZE, ulimit -f); the trace of process ");
  CHECK(strchr(text, '\n') == text + strlen(text) - 1); /* once */
}

/* ---- GPU activity on a sample of the steps (src/trace/trace_steps.c) ---- */

static long step_now; /* the step being opened, as the sampling sees it */
static char changes[512];

static void fake_activity(int on, uint64_t at) {
  (void)at;
  size_t n = strlen(changes);
  snprintf(changes + n, sizeof changes - n, "%s%s@%ld", n ? " " : "", on ? "on" : "off", step_now);
}
static void fake_stop(void) {}

/* steps of `launches` launches each under a fake activity: the changes it was told, as an E */
static void sampled_steps_paced(int steps, int launches, long step_ns) {
  static struct wt_sampling fake = {fake_activity, fake_stop, 1};
  wt_use_sampling(&fake);
  wt_marks_stream_used((void *)0x1, NULL); /* a stream known: marks can be made */
  struct wt_string *step = wt_intern_cstr("train_step");
  for (step_now = 0; step_now < steps; step_now++) {
    wt_push(NULL, step, none());
    for (int i = 0; i < launches; i++) { /* as CUPTI's callback on a launch does */
      wt_note_launch((uint64_t)(step_now * 1000 + i + 1), 0);
      wt_launch_counted();
    }
    struct timespec d = {0, step_ns};
    if (step_ns) nanosleep(&d, NULL);
    wt_pop(NULL);
  }
  wt_record_text('E', NULL, changes[0] ? changes : "none");
}

static void sampled_steps(int steps, int launches) { sampled_steps_paced(steps, launches, 0); }

static void every_fourth(void) { sampled_steps(12, 2); }
/* 1000 launches a step of a few hundred microseconds: auto would record every step only where a
 * step lasted 0.3 s (the machine held the process up that long); with 100, a 30 ms stall on a
 * loaded machine did so once */
static void chosen(void) { sampled_steps(12, 1000); }
/* 200 launches in a step of at least 1 ms: recorded, they cost it at most 60 %, at least 1 % unless
 * the step lasts 60 ms */
static void paced(void) { sampled_steps_paced(12, 200, 1000000); }

/* the last step traced (WLRUN_TRACE_STEPS=2) left open by a pop_later until the exit, inside a
 * range still open: its end at exit stops the trace, which writes what is open once */
static void last_step_at_exit(void) {
  struct wt_string *step = wt_intern_cstr("train_step");
  wt_push(NULL, wt_intern_cstr("epoch"), none()); /* rid 1, open at exit */
  for (int i = 0; i < 2; i++) {
    wt_push(NULL, step, none());
    wt_note_launch((uint64_t)(100 + i), 0);
    wt_pop_later(NULL, NULL);
  }
}

static void test_last_step_at_exit(void) {
  setenv("WLRUN_TRACE_STEP", "train_step", 1);
  setenv("WLRUN_TRACE_STEPS", "2", 1);
  char *t = traced(last_step_at_exit);
  CHECK(lines_with(t, "O\t1\t") == 1); /* the epoch's O, once */
  CHECK(lines_with(t, "C\t101\t") == 1);
  CHECK(lines_with(t, "R\t3\t") == 1); /* the second step, ended at exit */
  unsetenv("WLRUN_TRACE_STEPS");
  unsetenv("WLRUN_TRACE_STEP");
}

/* WLRUN_TRACE_STEPS=2, the hook's steps left open by a pop_later and ended by the program's pop of
 * the range around each: the program's own step ranges (OWN_STEPS), its "epoch" ranges (OWN_NONE),
 * or one step range of the program's around them all, never closed (OWN_ENCLOSING). With the
 * program's steps, its second step stops the trace, recorded whole (R), and nothing after it
 * (the hook's second, closing inside it, defers the stop to it). Without, the hook's second stops
 * it as it closes inside the program's other range, written once, as open (O), and the push after
 * it writes nothing (no B). Around them all, the hook's third stops it (its second deferred). */
enum { OWN_STEPS, OWN_NONE, OWN_ENCLOSING };
static int own_mode;
static void last_step_inside_own(void) {
  struct wt_string *step = wt_intern_cstr("train_step");
  struct wt_string *hook = wt_intern_cstr(WL_TRACE_AUTO_DOMAIN);
  struct wt_string *outer = own_mode == OWN_STEPS ? step : wt_intern_cstr("epoch");
  if (own_mode == OWN_ENCLOSING) wt_push(NULL, step, none()); /* rid 1, never closed */
  for (int i = 0; i < 4; i++) {
    if (own_mode != OWN_ENCLOSING) wt_push(NULL, outer, none()); /* rids 1, 3, 5, 7 */
    wt_push(hook, step, none());                                 /* rids 2, 4, 6, 8 */
    wt_pop_later(hook, NULL);
    device_synchronised();
    if (own_mode != OWN_ENCLOSING) wt_pop(NULL); /* ends the hook's first */
    device_synchronised();
  }
}

static void test_last_step_inside_own(void) {
  setenv("WLRUN_TRACE_STEP", "train_step", 1);
  setenv("WLRUN_TRACE_STEPS", "2", 1);
  own_mode = OWN_STEPS;
  char *t = traced(last_step_inside_own);
  CHECK(lines_with(t, "R\t") == 4 && lines_with(t, "R\t3\t") == 1 && lines_with(t, "O\t") == 0);
  unsigned long long tid = 0, rid = 0;
  const char *b = strstr(t, "\nB\t");
  CHECK(lines_with(t, "B\t") == 1 && b && sscanf(b + 1, "B\t%llu\t%llu", &tid, &rid) == 2 &&
        rid == 3); /* the second step's: none after the last */
  own_mode = OWN_NONE;
  t = traced(last_step_inside_own);
  CHECK(lines_with(t, "O\t3\t") == 1 && lines_with(t, "R\t3\t") == 0);
  CHECK(lines_with(t, "R\t4\t") == 1 && lines_with(t, "R\t") == 3);
  CHECK(lines_with(t, "B\t") == 1); /* the second step's: none after the last */
  own_mode = OWN_ENCLOSING; /* the hook's steps end at their next push: rids 2, 3, 4 recorded */
  t = traced(last_step_inside_own);
  CHECK(lines_with(t, "O\t1\t") == 1 && lines_with(t, "R\t") == 3 && lines_with(t, "R\t4\t") == 1);
  unsetenv("WLRUN_TRACE_STEPS");
  unsetenv("WLRUN_TRACE_STEP");
}

static void test_sampling(void) {
  setenv("WLRUN_TRACE_STEP", "train_step", 1);
  setenv("WLRUN_TRACE_GPU_EVERY", "4", 1);
  char *t = traced(every_fourth);
  /* the first three steps recorded, then one in four: steps 6 and 10 (each turned on or off
   * when the step before closes) */
  CHECK_CONTAINS(t, "\nE\toff@2 on@5 off@6 on@9 off@10\n");
  /* auto: 1000 launches of a short step cost far more than 1 %: one step in many */
  setenv("WLRUN_TRACE_GPU_EVERY", "auto", 1);
  t = traced(chosen);
  CHECK_CONTAINS(t, "\nE\toff@2");
  CHECK(!strstr(t, "on@3 ") && !strstr(t, "on@4 ")); /* not the next steps */
  unsetenv("WLRUN_TRACE_GPU_EVERY"); /* the default: every step recorded, never turned off */
  t = traced(chosen);
  CHECK_CONTAINS(t, "\nE\tnone\n");
  setenv("WLRUN_TRACE_GPU_EVERY", "1", 1);
  t = traced(every_fourth);
  CHECK_CONTAINS(t, "\nE\tnone\n");
  unsetenv("WLRUN_TRACE_GPU_EVERY");
  unsetenv("WLRUN_TRACE_STEP");
}

/* --gpu-every auto's choice, and the share of a step its recorded steps may cost
 * (WLRUN_TRACE_GPU_SHARE, in per cent) */
static void test_auto_share(void) {
  /* a 2 ms step of 50 launches costs 7.5 % recorded (3 us a launch): one in 8 at 1 %, one in 31
   * at 0.25 %; 5 launches (0.75 %) every step at 1 % */
  CHECK(wt_auto_every(0.01, 2000000, 50) == 8);
  CHECK(wt_auto_every(0.0025, 2000000, 50) == 31);
  CHECK(wt_auto_every(0.01, 2000000, 5) == 1);
  CHECK(wt_auto_every(1.0, 300000, 1000) == 11);
  CHECK(wt_auto_every(0.01, 1000000, 1000) == 32); /* at most one in 32 */
  CHECK(wt_auto_every(0.01, 0, 10) == 32 && wt_auto_every(0.01, 0, 0) == 1);
  setenv("WLRUN_TRACE_STEP", "train_step", 1);
  setenv("WLRUN_TRACE_GPU_EVERY", "auto", 1);
  const char *bad[] = {"abc", "0", "-1", "100.5", "1%", "nan", "inf"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    setenv("WLRUN_TRACE_GPU_SHARE", bad[i], 1);
    char *t = traced(chosen);
    char want[96];
    snprintf(want, sizeof want, "\nE\tWLRUN_TRACE_GPU_SHARE=%s is not a per cent above 0", bad[i]);
    CHECK_CONTAINS(t, want);
    CHECK_CONTAINS(t, "\nE\toff@2"); /* sampled all the same, at 1 % */
  }
  const char *good[] = {"100", "0.25", "1e-3"};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    setenv("WLRUN_TRACE_GPU_SHARE", good[i], 1);
    char *t = traced(chosen);
    CHECK(!strstr(t, "WLRUN_TRACE_GPU_SHARE"));
    if (i > 0) CHECK_CONTAINS(t, "\nE\toff@2"); /* (at 100 %, a step held up 3 ms records all) */
  }
  /* the share taken: at 100 % every step of at least 1 ms with 200 launches is recorded, at the
   * default 1 % one in many */
  setenv("WLRUN_TRACE_GPU_SHARE", "100", 1);
  CHECK_CONTAINS(traced(paced), "\nE\tnone\n");
  unsetenv("WLRUN_TRACE_GPU_SHARE");
  CHECK_CONTAINS(traced(paced), "\nE\toff@2");
  unsetenv("WLRUN_TRACE_GPU_SHARE");
  unsetenv("WLRUN_TRACE_GPU_EVERY");
  unsetenv("WLRUN_TRACE_STEP");
}

int main(void) {
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  char *t = traced(no_range);
  CHECK(t != NULL);
  CHECK_CONTAINS(t, "\nR\t1\t");
  CHECK(lines_with(t, "C\t") == 1);
  CHECK(lines_with(t, "C\t1\t0\t") == 1);
  CHECK(launch_time(t, 1) > 0 &&
        launch_time(t, 1) < range_time(t, 1, 0)); /* before the range "late" */

  t = traced(many);
  CHECK(lines_with(t, "C\t") == 1002);
  CHECK(lines_with(t, "C\t1\t1\t") == 1);
  CHECK_CONTAINS(t, "\nC\t1000\t1\t");
  CHECK_CONTAINS(t, "\nC\t2000\t2\t");
  CHECK_CONTAINS(t, "\nC\t2001\t1\t");
  /* each launch's time lies in the range it names, in the order of the calls */
  CHECK(launch_time(t, 2000) >= range_time(t, 2, 0) && launch_time(t, 2000) <= range_time(t, 2, 1));
  CHECK(launch_time(t, 2001) >= range_time(t, 2, 1) && launch_time(t, 2001) <= range_time(t, 1, 1));
  CHECK(launch_time(t, 1) >= range_time(t, 1, 0) && launch_time(t, 1) <= launch_time(t, 1000));
  CHECK(lines_with(t, "X\texit") == 1);

  t = traced(threads);
  CHECK_CONTAINS(t, "\nC\t7000\t1\t"); /* from a thread without a range: backward */
  CHECK_CONTAINS(t, "\nC\t5009\t2\t"); /* written when its thread ended */
  CHECK(lines_with(t, "C\t50") == 10);
  CHECK_CONTAINS(t, "\nC\t8000\t1\t"); /* written at exit */
  CHECK(lines_with(t, "O\t2\t") == 1); /* the worker's range, open when its thread ended */
  CHECK(lines_with(t, "O\t1\t") == 1);
  /* every C before X */
  const char *x = strstr(t, "\nX\texit\n");
  CHECK(x && !strstr(x, "\nC\t"));

  t = traced(pop_under);
  CHECK(range_parent(t, 2) == 0); /* outer's, which ended before it */
  CHECK(range_parent(t, 3) == 2);

  t = traced(later_under_own);
  CHECK(range_parent(t, 2) == 1 && range_parent(t, 4) == 1 && range_parent(t, 5) == 0);
  CHECK(range_time(t, 1, 1) >= range_time(t, 2, 1)); /* the step holds opt and log */
  CHECK(range_time(t, 1, 1) >= range_time(t, 4, 1));
  CHECK(range_time(t, 1, 1) <= range_time(t, 5, 0));

  test_activity();
  test_mark_records();
  test_quiet_marks();
  test_idle_marks();
  test_tail_sync();
  test_left_open_to();
  test_resumed_syncs();
  test_sampling();
  test_auto_share();
  test_last_step_at_exit();
  test_last_step_inside_own();
  test_write_error();
  test_small_file_limit();
  test_closed_descriptor();
  rmdir(dir);
  return check_report("test_trace");
}
