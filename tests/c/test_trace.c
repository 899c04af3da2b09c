/* The trace library's launch records (src/trace/trace_threads.c): what CUPTI's callback gives it on
 * entry to a launch, wt_note_launch(correlation), becomes C records naming the innermost range,
 * through each thread's buffer (written when full, when the thread ends, at exit). Without a GPU
 * CUPTI never calls it, so this test calls it as the callback does, in a child process that
 * traces into a temporary directory and exits; the parent reads the child's file. */
#include "check.h"
#include "trace_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
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
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
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

static void no_range(void) {
  wt_note_launch(1); /* nothing open anywhere: no C */
  wt_push(NULL, wt_intern_cstr("late"), none());
  wt_pop(NULL);
}

static void many(void) {
  wt_push(NULL, wt_intern_cstr("step"), none()); /* rid 1 */
  for (uint64_t c = 1; c <= 1000; c++) {
    wt_note_launch(c);
    wt_note_launch(c); /* the driver's call inside the runtime's: once */
  }
  wt_push(NULL, wt_intern_cstr("inner"), none()); /* rid 2 */
  wt_note_launch(2000);
  wt_pop(NULL);
  wt_note_launch(2001); /* step again */
  wt_pop(NULL);
}

static void *launches_on_own_range(void *arg) {
  (void)arg;
  wt_push(NULL, wt_intern_cstr("worker"), none());
  for (uint64_t c = 5000; c < 5010; c++) wt_note_launch(c);
  return NULL; /* ends with its range open and its launches buffered */
}

static void *launches_without_range(void *arg) {
  (void)arg;
  wt_note_launch(7000); /* autograd's thread: the main thread's innermost range */
  return NULL;
}

static void threads(void) {
  pthread_t t;
  wt_push(NULL, wt_intern_cstr("backward"), none()); /* rid 1 */
  if (pthread_create(&t, NULL, launches_without_range, NULL) != 0 || pthread_join(t, NULL) != 0) _exit(8);
  if (pthread_create(&t, NULL, launches_on_own_range, NULL) != 0 || pthread_join(t, NULL) != 0) _exit(8);
  wt_note_launch(8000);
  /* exits with backward open and 8000 buffered */
}

int main(void) {
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  char *t = traced(no_range);
  CHECK(t != NULL);
  CHECK_CONTAINS(t, "\nR\t1\t");
  CHECK(lines_with(t, "C\t") == 0);

  t = traced(many);
  CHECK(lines_with(t, "C\t") == 1002);
  CHECK(lines_with(t, "C\t1\t1\n") == 1);
  CHECK_CONTAINS(t, "\nC\t1000\t1\n");
  CHECK_CONTAINS(t, "\nC\t2000\t2\n");
  CHECK_CONTAINS(t, "\nC\t2001\t1\n");
  CHECK(lines_with(t, "X\texit") == 1);

  t = traced(threads);
  CHECK_CONTAINS(t, "\nC\t7000\t1\n"); /* from a thread without a range: backward */
  CHECK_CONTAINS(t, "\nC\t5009\t2\n"); /* written when its thread ended */
  CHECK(lines_with(t, "C\t50") == 10);
  CHECK_CONTAINS(t, "\nC\t8000\t1\n"); /* written at exit */
  CHECK(lines_with(t, "O\t2\t") == 1); /* the worker's range, open when its thread ended */
  CHECK(lines_with(t, "O\t1\t") == 1);
  /* every C before X */
  const char *x = strstr(t, "\nX\texit\n");
  CHECK(x && !strstr(x, "\nC\t"));

  rmdir(dir);
  return check_report("test_trace");
}
