/* The process's trace file, DIR/<pid>.wltrace (trace_format.h): opened at the first
 * initialisation (a forked child opens its own on its first record), written under the trace
 * lock. Records are gathered in a buffer while the lock is held and put into the file when it is
 * released, so that what the program has done is in the file even if it is killed the next
 * moment; only a range closed inside another may wait (wt_unlock_soon). Launches and GPU
 * activity come in batches (trace_threads.c, trace_cupti.c).
 *
 * The file is written through a shared mapping of it: putting records in is a copy to memory,
 * with no system call on the program's thread. (A system call costs far more than its own few
 * microseconds: on a virtual machine with page-table isolation, one write and one fstat a step
 * made a launch-bound PyTorch step 40 us longer, the program's own code running slower after
 * them.) The mapping is a window of the file (64 KiB first, then twice the last, up to 1 MiB),
 * reserved ahead with posix_fallocate, so that a full disk is an error told here rather than a
 * fault in the program where the file system allocates its blocks then; the pages stay in the
 * file when the process is killed. The file's length is cut to its text at the end; a process
 * that ends without its exit handler (killed, _exit) leaves the reserved rest as NUL bytes, which
 * the reader drops (lua/wlrun/trace/read.lua). Where a file system refuses the mapping, or the
 * file may not grow so far (RLIMIT_FSIZE, past which the kernel sends SIGXFSZ), the records are
 * written with write(2).
 *
 * The descriptor is the program's to close or reuse: programs close every descriptor above 2,
 * or dup2 a file of theirs over any number. So the file is moved to a high number (a closed one
 * is not handed out again soon), and fstat says whether it is still the trace file before each
 * use of the descriptor. Where it is not, the descriptor, now the program's, is left alone: a
 * window is reserved, or the length cut, through the file opened anew by its name; a write
 * stops the trace there. */
#include "trace_internal.h"
#include "trace_format.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum state { OUT_NONE, OUT_OPEN, OUT_FAILED, OUT_DONE };
enum { HIGH_FD = 768 }; /* the trace file's descriptor, at or above (below 1024, a common limit) */
/* the part of the file mapped at a time, and reserved ahead: the first, and the most */
enum { FIRST_WINDOW = 64 << 10, WINDOW = 1 << 20 };

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static char dir[PATH_MAX];
static char path[PATH_MAX + 64];
static int fd = -1;
static dev_t file_dev; /* what fd is: the trace file, as long as fstat says so */
static ino_t file_ino;
static enum state state = OUT_NONE;
static uint32_t generation = 1; /* one per file: a forked child's file defines its strings again */
static char buf[65536];
static size_t len;
static char *map;           /* the window of the file mapped, or NULL (write(2): mapped is 0) */
static int mapped;          /* whether the file is written through mappings */
static off_t map_at;        /* the file offset of map, a multiple of the page size */
static size_t map_len;      /* its length */
static off_t written;       /* the text's length in the file */
static off_t reserved;      /* the file's length: the text and the room reserved after it */
static uint64_t last_write; /* wt_now() of the last drain */
static atomic_int finished;
static atomic_uint_fast64_t lost;

uint64_t wt_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

pid_t wt_gettid(void) { return (pid_t)syscall(SYS_gettid); }

void wt_lost(uint64_t n) { atomic_fetch_add(&lost, n); }
uint64_t wt_lost_count(void) { return atomic_load(&lost); }
int wt_finished(void) { return atomic_load_explicit(&finished, memory_order_relaxed); }

/* ---- writing ---- */

/* whether fd is still the trace file (the program may have closed it, or put its own file there) */
static int still_ours(void) {
  struct stat st;
  return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == file_dev && st.st_ino == file_ino;
}

static void unmap(void) {
  if (map) munmap(map, map_len);
  map = NULL;
  map_len = 0;
}

/* The trace stops: the file is closed when fd is still it, else left to the program. */
static void give_up(const char *why) {
  fprintf(stderr, "wlrun trace: %s: %s; the trace of process %d stops here\n", path, why,
          (int)getpid());
  unmap();
  if (still_ours()) {
    if (mapped) (void)!ftruncate(fd, written); /* else NUL bytes, which the reader drops */
    close(fd);
  }
  fd = -1;
  state = OUT_FAILED;
}

static const char *const REPLACED =
    "the program closed the trace file's descriptor, or put another file in its place";

/* fd is the trace file again, or -1: where the program closed it or put its own file in its
 * place, the file is opened anew by its name (the old number is the program's now) */
static int reopened(void) {
  if (still_ours()) return 1;
  int f = open(path, O_RDWR | O_CLOEXEC);
  struct stat st;
  if (f >= 0 && fstat(f, &st) == 0 && st.st_dev == file_dev && st.st_ino == file_ino) {
    int high = fcntl(f, F_DUPFD_CLOEXEC, HIGH_FD);
    if (high >= 0) {
      close(f);
      f = high;
    }
    fd = f;
    return 1;
  }
  if (f >= 0) close(f);
  fd = -1;
  return 0;
}

/* whether the file may grow to size: RLIMIT_FSIZE, past which the kernel sends SIGXFSZ (which
 * kills by default) for a reservation as for a write */
static int may_grow_to(off_t size) {
  struct rlimit l;
  return getrlimit(RLIMIT_FSIZE, &l) != 0 || l.rlim_cur == RLIM_INFINITY ||
         (rlim_t)size <= l.rlim_cur;
}

enum window { WINDOW_OK, WINDOW_NONE, WINDOW_FAILED };

/* Maps a window of the file that holds the next n bytes after the text, the room reserved
 * first. WINDOW_NONE: no mapping (the file system refuses it, or the file may not grow that
 * far), write(2) instead; WINDOW_FAILED: the trace stops (why: the reason). Windows grow from
 * FIRST_WINDOW to WINDOW, so that a short process leaves little room unused where it ends
 * without its exit handler (_exit, a signal) and the file is not cut. */
static enum window map_window(size_t n, const char **why) {
  if (map && written + (off_t)n <= map_at + (off_t)map_len) return WINDOW_OK;
  off_t page = (off_t)sysconf(_SC_PAGESIZE);
  off_t at = written / page * page;
  off_t least = map_len ? (off_t)map_len * 2 : FIRST_WINDOW;
  if (least > WINDOW) least = WINDOW;
  off_t size = (written + (off_t)n - at + page - 1) / page * page;
  if (size < least) size = least;
  if (at + size > reserved) {
    if (!may_grow_to(at + size)) return WINDOW_NONE;
    if (!reopened()) {
      *why = REPLACED;
      return WINDOW_FAILED;
    }
    int e;
    while ((e = posix_fallocate(fd, reserved, at + size - reserved)) == EINTR) continue;
    if (e != 0) {
      *why = strerror(e);
      return WINDOW_FAILED;
    }
    reserved = at + size;
  }
  unmap();
  void *m = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, at);
  if (m == MAP_FAILED) return WINDOW_NONE;
  map = m, map_at = at, map_len = (size_t)size;
  return WINDOW_OK;
}

/* From the mapping to write(2), the text so far kept: the room reserved after it cut, the
 * descriptor's offset at its end. 0 where the descriptor is no longer the file's. */
static int to_writes(void) {
  unmap();
  mapped = 0;
  if (!reopened()) return 0;
  if (ftruncate(fd, written) == 0) reserved = written;
  return lseek(fd, written, SEEK_SET) == written;
}

/* Puts the buffer into the mapped file, or leaves it to write(2) (put_written) from there on;
 * a failure is told once, and ends this process's trace. */
static void put_mapped(void) {
  const char *why = NULL;
  switch (map_window(len, &why)) {
  case WINDOW_OK:
    memcpy(map + (written - map_at), buf, len);
    written += (off_t)len;
    return;
  case WINDOW_NONE:
    if (!to_writes()) give_up(REPLACED);
    return;
  case WINDOW_FAILED: {
    char text[160];
    snprintf(text, sizeof text, "cannot reserve room in the file: %s", why);
    give_up(why == REPLACED ? why : text);
    return;
  }
  }
}

/* Writes the buffer with write(2); a failure is told once, and ends this process's trace. */
static void put_written(void) {
  if (!still_ours()) {
    give_up(REPLACED);
    return;
  }
  if (!may_grow_to(written + (off_t)len)) { /* SIGXFSZ would kill the program */
    give_up("the file would pass the process's file-size limit (RLIMIT_FSIZE, ulimit -f)");
    return;
  }
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(fd, buf + done, len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      char why[128];
      snprintf(why, sizeof why, "write failed: %s", n < 0 ? strerror(errno) : "nothing written");
      give_up(why);
      return;
    }
    done += (size_t)n;
    written += n;
  }
}

/* Puts the buffer into the file: through the mapping, or with write(2) where there is none. */
static void drain(void) {
  last_write = wt_now();
  if (state == OUT_OPEN && len && mapped) put_mapped();
  if (state == OUT_OPEN && len && !mapped) put_written();
  len = 0;
}

static void append(const char *s, size_t n) {
  while (n) {
    if (len == sizeof buf) drain();
    size_t k = sizeof buf - len < n ? sizeof buf - len : n;
    memcpy(buf + len, s, k);
    len += k, s += k, n -= k;
  }
}

static void append_char(char c) {
  if (len == sizeof buf) drain();
  buf[len++] = c;
}

/* backslash, tab, newline, carriage return as \\ \t \n \r; other control bytes as \xHH */
static void append_escaped(const char *s, size_t n) {
  static const char hex[] = "0123456789ABCDEF";
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    const char *esc = c == '\\'   ? "\\\\"
                      : c == '\t' ? "\\t"
                      : c == '\n' ? "\\n"
                      : c == '\r' ? "\\r"
                                  : NULL;
    if (esc) {
      append(esc, 2);
    } else if (c < 0x20 || c == 0x7f) {
      char x[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
      append(x, 4);
    } else {
      append_char((char)c);
    }
  }
}

void wt_line(char letter) { append_char(letter); }
void wt_dash(void) { append("\t-", 2); }
void wt_end(void) { append_char('\n'); }
void wt_sid(const struct wt_string *s) { wt_u64(s ? s->sid : 0); }

/* a field: tab, then v in decimal, with a minus sign when negative */
static void append_number(uint64_t v, int negative) {
  char d[24];
  size_t i = sizeof d;
  do d[--i] = (char)('0' + v % 10);
  while (v /= 10);
  if (negative) d[--i] = '-';
  d[--i] = '\t';
  append(d + i, sizeof d - i);
}

void wt_u64(uint64_t v) { append_number(v, 0); }
void wt_i64(int64_t v) { append_number(v < 0 ? 0 - (uint64_t)v : (uint64_t)v, v < 0); }

void wt_text(const char *s) {
  append_char('\t');
  append_escaped(s, strlen(s));
}

void wt_define(struct wt_string *s) {
  if (!s || s->defined == generation) return;
  s->defined = generation;
  append_char('S');
  wt_u64(s->sid);
  append_char('\t');
  append_escaped(s->text, s->len);
  append_char('\n');
}

/* ---- the file ---- */

/* the command line from /proc/self/cmdline, its arguments joined by spaces (escaped) */
static void append_command_line(void) {
  char cmd[16384];
  int f = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  ssize_t n = f >= 0 ? read(f, cmd, sizeof cmd) : -1;
  if (f >= 0) close(f);
  if (n <= 0) return;
  while (n > 0 && cmd[n - 1] == 0) n--;
  for (ssize_t i = 0; i < n; i++)
    if (cmd[i] == 0) cmd[i] = ' ';
  append_escaped(cmd, (size_t)n);
}

/* Under the lock: creates this process's file and writes its first line. DIR/<pid>.wltrace, or,
 * when a file of that name is there (a program exec'd by a traced process keeps its pid),
 * DIR/<pid>.<n>.wltrace. */
static int open_file(void) {
  int pid = (int)getpid();
  for (int n = 1; n < 100; n++) {
    if (n == 1) snprintf(path, sizeof path, "%s/%d%s", dir, pid, WL_TRACE_SUFFIX);
    else snprintf(path, sizeof path, "%s/%d.%d%s", dir, pid, n, WL_TRACE_SUFFIX);
    fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) break;
  }
  if (fd < 0) {
    fprintf(stderr, "wlrun trace: cannot create %s: %s; process %d is not traced\n", path,
            strerror(errno), pid);
    state = OUT_FAILED;
    return 0;
  }
  int high = fcntl(fd, F_DUPFD_CLOEXEC, HIGH_FD); /* fails past RLIMIT_NOFILE: the number stays */
  if (high >= 0) {
    close(fd);
    fd = high;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    fprintf(stderr, "wlrun trace: %s: fstat failed: %s; process %d is not traced\n", path,
            strerror(errno), pid);
    close(fd);
    fd = -1;
    state = OUT_FAILED;
    return 0;
  }
  file_dev = st.st_dev;
  file_ino = st.st_ino;
  state = OUT_OPEN;
  generation++;
  len = 0;
  written = reserved = 0;
  /* no window (a file system without shared mappings, a small RLIMIT_FSIZE, no room at all):
   * write(2), after the room a reservation made before the mapping failed */
  const char *why = NULL;
  mapped = map_window(1, &why) == WINDOW_OK;
  if (!mapped && ftruncate(fd, 0) == 0) reserved = 0;
  append(WL_TRACE_MAGIC, strlen(WL_TRACE_MAGIC));
  wt_u64(WL_TRACE_VERSION);
  wt_u64((uint64_t)pid);
  wt_u64((uint64_t)getppid());
  append_char('\t');
  append_command_line();
  append_char('\n');
  drain();
  return state == OUT_OPEN;
}

int wt_out_open(const char *d) {
  wt_lock();
  int ok = state == OUT_OPEN;
  if (state == OUT_NONE) {
    if (strlen(d) >= sizeof dir) {
      fprintf(stderr,
              "wlrun trace: %s: the directory's name is too long; process %d is not traced\n",
              WL_TRACE_ENV_DIR, (int)getpid());
      state = OUT_FAILED;
    } else {
      strcpy(dir, d);
      ok = open_file();
    }
  }
  wt_unlock();
  return ok;
}

static __thread int inside; /* counted before a lock is taken and after it is released */

void wt_mutex_lock(pthread_mutex_t *m) {
  inside++;
  pthread_mutex_lock(m);
}

void wt_mutex_unlock(pthread_mutex_t *m) {
  pthread_mutex_unlock(m);
  inside--;
}

int wt_inside(void) { return inside; }

void wt_lock(void) { wt_mutex_lock(&trace_lock); }

void wt_unlock(void) {
  if (len) drain();
  wt_mutex_unlock(&trace_lock);
}

void wt_unlock_soon(uint64_t now) {
  if (len >= 16384 || now - last_write >= 100000000u) drain();
  wt_mutex_unlock(&trace_lock);
}

int wt_ready(void) {
  if (state == OUT_NONE && dir[0] && !wt_finished()) open_file();
  return state == OUT_OPEN && !wt_finished();
}

int wt_is_open(void) { return state == OUT_OPEN; }

void wt_finish(void) {
  if (state == OUT_OPEN) {
    wt_line('X');
    wt_text("exit");
    wt_end();
    drain();
    unmap();
    /* the room reserved after the text (the file opened anew where the program closed it);
     * where that fails, NUL bytes the reader drops */
    if (state == OUT_OPEN && mapped && reopened()) (void)!ftruncate(fd, written);
    if (state == OUT_OPEN && still_ours()) close(fd);
    fd = -1;
  }
  state = OUT_DONE;
  atomic_store(&finished, 1);
}

void wt_record_text(char letter, const char *st, const char *text) {
  wt_lock();
  if (wt_ready()) {
    wt_line(letter);
    if (st) wt_text(st);
    wt_text(text);
    wt_end();
  }
  wt_unlock();
}

void wt_write_lines(const char *lines, size_t n) {
  wt_lock();
  if (wt_ready()) append(lines, n);
  wt_unlock();
}

/* ---- fork ---- */

void wt_out_fork_prepare(void) { pthread_mutex_lock(&trace_lock); }
void wt_out_fork_parent(void) { pthread_mutex_unlock(&trace_lock); }

/* The child: the parent's file and what was waiting for it are the parent's. */
void wt_out_fork_child(void) {
  pthread_mutex_init(&trace_lock, NULL);
  unmap(); /* the parent's window: only the child's own mapping goes */
  if (still_ours()) close(fd);
  fd = -1;
  len = 0;
  mapped = 0;
  if (state == OUT_OPEN) state = OUT_NONE;
  atomic_store(&lost, 0);
}
