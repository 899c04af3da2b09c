/* A program with NVTX3 ranges, run by tests/spec/trace_library_spec.lua under the trace library
 * (NVTX_INJECTION64_PATH=libwlrun_trace.so WLRUN_TRACE_DIR=dir trace_nvtx_program MODE). NVTX3 is
 * header-only: the program loads the library itself on its first NVTX call. Modes:
 *
 *   steps      3 steps: data (4 ms), then train_step (payload 32) > forward (6 ms), backward
 *              (12 ms), optimizer (3 ms); the thread named "trainer"
 *   threads    main > 4 threads "worker<i>", each 200 x (worker > inner) and one worker_sleep (2
 * ms) fork       parent > a child that pops (nothing of its own), pushes child (5 ms) and exits 0
 *   startend   start/end ranges: same thread, ended on another thread, wide, in a domain; bad ends
 *   domains    ranges of a domain interleaved with the default domain's, a registered string,
 *              a domain's range popped out of order, pops with nothing pushed
 *   payloads   int32, uint32, int64, uint64, double and no payload
 *   names      wide strings and names with tabs, newlines, control and non-ASCII bytes
 *   open       ranges left open: pushed, started, and on a thread that ends
 *   exit3      a range left open, then exit(3)
 *   kill       a range closed, one open, then SIGKILL
 *   gpu_init   calls the library's InitializeInjection as the CUDA driver would, then one range
 *   loop N     N push/pop pairs at the top of the stack, N inside a range; prints the mean ns
 *   backdate L the Python hook's entry points of the trace library L (dlopen): "data" pushed, a
 *              time T taken 2 ms later, "data" popped and "train_step" pushed at T 2 ms after
 *              that, "forward" pushed at 1 ns (before everything: bounded), all popped; prints T
 * Hostile programs (tests/spec/trace_hostile_spec.lua): the library must leave them unharmed.
 *   closefds F closes every descriptor above 2, opens its own file F (the lowest number, maybe the
 *              trace file's), writes "user\n" in it between ranges; exits 1 if F holds more
 *   dup2 F     opens F and dup2s it over the trace file's descriptor (found in /proc/self/fd),
 *              writes "user\n", pushes ranges; exits 1 if F holds more
 *   sigexit    push/pop pairs until SIGALRM (every 50 us) calls exit(0) from its handler
 *   deep N     N ranges nested in one another (never more than the reader's 256 recorded), all
 *              popped, then steps as in `steps` without sleeps
 *   longname N a range whose name has N bytes, then steps as in `steps` without sleeps
 *   nulls      NULL messages, attributes, domains and thread names; then steps without sleeps
 *   forkstress 4 threads push, pop, start and end ranges while the main thread forks 20 children
 *              that do the same and exit (a lock held by another thread at fork must not hang)
 */
#include <nvtx3/nvToolsExt.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

static uint32_t tid(void) { return (uint32_t)syscall(SYS_gettid); }

static void range(const char *name, int ms) {
  nvtxRangePushA(name);
  sleep_ms(ms);
  nvtxRangePop();
}

static nvtxEventAttributes_t attributes(const char *name) {
  nvtxEventAttributes_t a;
  memset(&a, 0, sizeof a);
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  return a;
}

static int steps(void) {
  nvtxNameOsThreadA(tid(), "trainer");
  for (int i = 0; i < 3; i++) {
    range("data", 4);
    nvtxEventAttributes_t a = attributes("train_step");
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = 32;
    nvtxRangePushEx(&a);
    range("forward", 6);
    range("backward", 12);
    range("optimizer", 3);
    nvtxRangePop();
  }
  return 0;
}

static void *worker(void *arg) {
  char name[32];
  snprintf(name, sizeof name, "worker%d", (int)(intptr_t)arg);
  nvtxNameOsThreadA(tid(), name);
  for (int i = 0; i < 200; i++) {
    nvtxRangePushA("worker");
    nvtxRangePushA("inner");
    nvtxRangePop();
    nvtxRangePop();
  }
  range("worker_sleep", 2);
  return NULL;
}

static int threads(void) {
  pthread_t t[4];
  nvtxRangePushA("main");
  for (int i = 0; i < 4; i++)
    if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) != 0) return 1;
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  nvtxRangePop();
  return 0;
}

static int forked(void) {
  nvtxRangePushA("parent");
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    nvtxRangePop(); /* the parent's range is not the child's: ignored */
    range("child", 5);
    exit(0);
  }
  int status;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  range("after_fork", 1);
  nvtxRangePop();
  return 0;
}

static void *end_it(void *id) {
  sleep_ms(5);
  nvtxRangeEnd(*(nvtxRangeId_t *)id);
  return NULL;
}

static int startend(void) {
  nvtxRangeId_t same = nvtxRangeStartA("async_same");
  sleep_ms(5);
  nvtxRangeEnd(same);
  nvtxRangeId_t cross = nvtxRangeStartA("async_cross");
  pthread_t t;
  if (pthread_create(&t, NULL, end_it, &cross) != 0) return 1;
  pthread_join(t, NULL);
  nvtxRangeId_t wide = nvtxRangeStartW(L"async_wide");
  nvtxRangeEnd(wide);
  nvtxDomainHandle_t d = nvtxDomainCreateA("dom");
  nvtxEventAttributes_t a = attributes("async_domain");
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT32;
  a.payload.uiValue = 7;
  nvtxRangeId_t in_domain = nvtxDomainRangeStartEx(d, &a);
  nvtxDomainRangeEnd(d, in_domain);
  nvtxRangeEnd(same);      /* ended already: ignored */
  nvtxRangeEnd(987654321); /* never started: ignored */
  return 0;
}

static int domains(void) {
  nvtxDomainHandle_t d = nvtxDomainCreateA("dom");
  nvtxDomainHandle_t w = nvtxDomainCreateW(L"wdom");
  nvtxStringHandle_t reg = nvtxDomainRegisterStringA(d, "registered_name");
  nvtxRangePop();        /* nothing pushed: ignored */
  nvtxDomainRangePop(d); /* nothing pushed in dom: ignored */
  nvtxRangePushA("outer");
  nvtxEventAttributes_t a = attributes(NULL);
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = reg;
  nvtxDomainRangePushEx(d, &a);
  nvtxRangePushA("inner");
  sleep_ms(1);
  nvtxDomainRangePop(d); /* dom's range, under inner: closed, inner stays open */
  nvtxEventAttributes_t b = attributes("in_wdom");
  nvtxDomainRangePushEx(w, &b);
  nvtxDomainRangePop(w);
  nvtxRangePop(); /* inner */
  nvtxRangePop(); /* outer */
  return 0;
}

static void payload_range(const char *name, int type, uint64_t bits) {
  nvtxEventAttributes_t a = attributes(name);
  a.payloadType = type;
  switch (type) {
  case NVTX_PAYLOAD_TYPE_INT32: a.payload.iValue = (int32_t)(int64_t)bits; break;
  case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32: a.payload.uiValue = (uint32_t)bits; break;
  case NVTX_PAYLOAD_TYPE_INT64: a.payload.llValue = (int64_t)bits; break;
  case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64: a.payload.ullValue = bits; break;
  case NVTX_PAYLOAD_TYPE_DOUBLE: a.payload.dValue = 2.5; break;
  default: break;
  }
  nvtxRangePushEx(&a);
  nvtxRangePop();
}

static int payloads(void) {
  payload_range("p_int32", NVTX_PAYLOAD_TYPE_INT32, (uint64_t)(int64_t)-5);
  payload_range("p_uint32", NVTX_PAYLOAD_TYPE_UNSIGNED_INT32, 4000000000u);
  payload_range("p_int64", NVTX_PAYLOAD_TYPE_INT64, (uint64_t)INT64_MIN);
  payload_range("p_uint64", NVTX_PAYLOAD_TYPE_UNSIGNED_INT64, UINT64_MAX);
  payload_range("p_double", NVTX_PAYLOAD_TYPE_DOUBLE, 0);
  payload_range("p_none", NVTX_PAYLOAD_UNKNOWN, 0);
  return 0;
}

static int names(void) {
  nvtxRangePushW(L"wide \u00e9 \u2713 \U0001D11E");
  nvtxRangePop();
  nvtxEventAttributes_t a = attributes(NULL);
  a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  a.message.unicode = L"wide_ex";
  nvtxRangePushEx(&a);
  nvtxRangePop();
  static const char *const odd[] = {"tab\there",
                                    "new\nline",
                                    "cr\rx",
                                    "back\\slash",
                                    "bell\a|del\x7f|",
                                    "utf8 \xc3\xa9 \xe2\x9c\x93",
                                    "bad\xff\xfe"
                                    "bytes",
                                    ""};
  for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) range(odd[i], 0);
  return 0;
}

static void *leave_open(void *arg) {
  (void)arg;
  nvtxRangePushA("thread_open");
  return NULL;
}

static int open_at_exit(void) {
  nvtxRangePushA("left_open");
  nvtxRangePushA("inner_open");
  nvtxRangeStartA("async_open");
  pthread_t t;
  if (pthread_create(&t, NULL, leave_open, NULL) != 0) return 1;
  pthread_join(t, NULL);
  return 0;
}

static int exit3(void) {
  range("before_exit", 1);
  nvtxRangePushA("open_at_exit");
  exit(3);
}

static int killed(void) {
  range("before_kill", 2);
  nvtxRangePushA("killed_inside");
  raise(SIGKILL);
  return 1;
}

/* What the CUDA driver does on cuInit under CUDA_INJECTION64_PATH: the library is the one NVTX
 * loaded (the same path), its InitializeInjection called once. */
static int gpu_init(void) {
  range("before_gpu_init", 0); /* loads the library */
  const char *path = getenv("NVTX_INJECTION64_PATH");
  void *lib = path ? dlopen(path, RTLD_NOLOAD | RTLD_LAZY) : NULL;
  int (*init)(void) = lib ? (int (*)(void))dlsym(lib, "InitializeInjection") : NULL;
  if (!init) {
    fprintf(stderr, "nvtx_program: no InitializeInjection in %s\n",
            path ? path : "(NVTX_INJECTION64_PATH unset)");
    return 1;
  }
  if (init() != 1) return 1;
  range("after_gpu_init", 0);
  return 0;
}

/* the mean ns of n push/pop pairs, at the top of the thread's stack or inside a range */
static double pairs(long n, int nested) {
  struct timespec a, b;
  if (nested) nvtxRangePushA("outer");
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < n; i++) {
    nvtxRangePushA("loop");
    nvtxRangePop();
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  if (nested) nvtxRangePop();
  double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
  return n > 0 ? ns / (double)n : 0.0;
}

static int loop(long n) {
  double top = pairs(n, 0), nested = pairs(n, 1);
  printf("%.1f ns per push/pop pair at the top, %.1f ns inside a range\n", top, nested);
  return 0;
}

/* ---- hostile programs ---- */

/* steps as in `steps`, without sleeps: what the report needs after a hostile start */
static int quick_steps(int n) {
  for (int i = 0; i < n; i++) {
    range("data", 0);
    nvtxRangePushA("train_step");
    range("forward", 0);
    range("backward", 0);
    nvtxRangePop();
  }
  return 0;
}

/* 0 when path holds exactly "user\n" */
static int holds_only_user(const char *path) {
  char text[64] = "";
  FILE *f = fopen(path, "rb");
  size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
  if (f) fclose(f);
  text[n] = 0;
  if (strcmp(text, "user\n") == 0) return 0;
  fprintf(stderr, "nvtx_program: %s holds %zu bytes, not only \"user\\n\"\n", path, n);
  return 1;
}

static int write_user(int fd) { return write(fd, "user\n", 5) == 5 ? 0 : 1; }

static int closefds(const char *path) {
  range("before_close", 0); /* the trace file is open from here */
  for (int fd = 3; fd < 1024; fd++) close(fd);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write_user(fd)) return 1;
  for (int i = 0; i < 100; i++) range("after_close", 0);
  quick_steps(8);
  close(fd);
  return holds_only_user(path);
}

/* the descriptor of this process's trace file, from /proc/self/fd; -1 when there is none */
static int trace_fd(void) {
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  int found = -1;
  while (d && (e = readdir(d)) != NULL) {
    char link[300], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = 0;
    if (strstr(target, ".wltrace")) found = atoi(e->d_name);
  }
  if (d) closedir(d);
  return found;
}

static int dup2_over(const char *path) {
  range("before_dup2", 0);
  int tfd = trace_fd();
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (tfd < 0 || fd < 0 || dup2(fd, tfd) != tfd || write_user(fd)) return 1;
  for (int i = 0; i < 100; i++) range("after_dup2", 0);
  quick_steps(8);
  close(fd);
  close(tfd);
  return holds_only_user(path);
}

static void exit_now(int sig) {
  (void)sig;
  exit(0); /* not async-signal-safe, and common all the same */
}

static int sigexit(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = exit_now;
  struct itimerval every = {{0, 50}, {0, 50}};
  /* the library is loaded, its file open and one step closed before the first signal: a
   * signal that came before any "outer" closed would leave the report nothing to show */
  range("loaded", 0);
  range("outer", 0);
  if (sigaction(SIGALRM, &sa, NULL) != 0 || setitimer(ITIMER_REAL, &every, NULL) != 0) return 1;
  for (;;) {
    nvtxRangePushA("outer");
    nvtxRangePushA("inner");
    nvtxRangePop();
    nvtxRangePop();
  }
}

static int deep(int n) {
  for (int i = 0; i < n; i++) nvtxRangePushA("deep");
  for (int i = 0; i < n; i++) nvtxRangePop();
  return quick_steps(8);
}

static int longname(long n) {
  char *name = malloc((size_t)n + 1);
  if (!name) return 1;
  for (long i = 0; i < n; i++) name[i] = (char)('a' + i % 26);
  name[n] = 0;
  range(name, 0);
  free(name);
  return quick_steps(8);
}

static int nulls(void) {
  nvtxRangePushA(NULL);
  nvtxRangePop();
  nvtxRangePushW(NULL);
  nvtxRangePop();
  nvtxRangePushEx(NULL);
  nvtxRangePop();
  nvtxEventAttributes_t a = attributes(NULL);
  nvtxRangePushEx(&a);
  nvtxRangePop();
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = NULL;
  nvtxRangePushEx(&a);
  nvtxRangePop();
  a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  a.message.unicode = NULL;
  nvtxRangePushEx(&a);
  nvtxRangePop();
  nvtxRangeEnd(nvtxRangeStartA(NULL));
  nvtxRangeEnd(nvtxRangeStartEx(NULL));
  nvtxDomainHandle_t d = nvtxDomainCreateA(NULL);
  nvtxDomainRangePushEx(d, NULL);
  nvtxDomainRangePop(d);
  nvtxDomainRangePushEx(NULL, NULL);
  nvtxDomainRangePop(NULL);
  nvtxDomainRangeEnd(NULL, nvtxDomainRangeStartEx(NULL, NULL));
  nvtxDomainRegisterStringA(NULL, NULL);
  nvtxDomainRegisterStringW(NULL, NULL);
  nvtxNameOsThreadA(tid(), NULL);
  nvtxNameOsThreadW(tid(), NULL);
  return quick_steps(8);
}

static atomic_int stop_spinning;

static void *spin(void *arg) {
  (void)arg;
  while (!atomic_load(&stop_spinning)) {
    nvtxRangePushA("spin");
    nvtxRangeEnd(nvtxRangeStartA("spin_async"));
    nvtxRangePop();
  }
  return NULL;
}

static int forkstress(void) {
  pthread_t t[4];
  range("before_threads", 0);
  for (int i = 0; i < 4; i++)
    if (pthread_create(&t[i], NULL, spin, NULL) != 0) return 1;
  for (int i = 0; i < 20; i++) {
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      for (int k = 0; k < 100; k++) range("in_child", 0);
      exit(0);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  }
  atomic_store(&stop_spinning, 1);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  return 0;
}

/* n quick steps inside an "epoch" push/pop range and a "run" start/end range, both still open
 * when --steps N stops the trace (wlrun trace --steps) */
static int many(long n) {
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "run";
  nvtxRangeId_t run = nvtxRangeStartEx(&a);
  nvtxRangePushA("epoch");
  quick_steps((int)n);
  nvtxRangePop();
  nvtxRangeEnd(run);
  return 0;
}

static int64_t monotonic_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int backdate(const char *path) {
  void *lib = dlopen(path, RTLD_NOW);
  if (!lib) return 2;
  int (*push_at)(const char *, int64_t, int64_t) =
      (int (*)(const char *, int64_t, int64_t))dlsym(lib, "wlrun_trace_auto_push_at");
  int (*pop_at)(int64_t, int64_t) =
      (int (*)(int64_t, int64_t))dlsym(lib, "wlrun_trace_auto_pop_at");
  if (!push_at || !pop_at) return 3;
  push_at("data", 0, 0);
  sleep_ms(2);
  int64_t t = monotonic_ns();
  sleep_ms(2);
  pop_at(0, t);
  push_at("train_step", 32, t);
  push_at("forward", 0, 1);
  sleep_ms(1);
  pop_at(0, 0);
  pop_at(0, 0);
  printf("%lld\n", (long long)t);
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "steps") == 0) return steps();
  if (strcmp(mode, "threads") == 0) return threads();
  if (strcmp(mode, "fork") == 0) return forked();
  if (strcmp(mode, "startend") == 0) return startend();
  if (strcmp(mode, "domains") == 0) return domains();
  if (strcmp(mode, "payloads") == 0) return payloads();
  if (strcmp(mode, "names") == 0) return names();
  if (strcmp(mode, "open") == 0) return open_at_exit();
  if (strcmp(mode, "exit3") == 0) return exit3();
  if (strcmp(mode, "kill") == 0) return killed();
  if (strcmp(mode, "gpu_init") == 0) return gpu_init();
  if (strcmp(mode, "loop") == 0 && argc > 2) return loop(strtol(argv[2], NULL, 10));
  if (strcmp(mode, "backdate") == 0 && argc > 2) return backdate(argv[2]);
  if (strcmp(mode, "closefds") == 0 && argc > 2) return closefds(argv[2]);
  if (strcmp(mode, "dup2") == 0 && argc > 2) return dup2_over(argv[2]);
  if (strcmp(mode, "sigexit") == 0) return sigexit();
  if (strcmp(mode, "deep") == 0 && argc > 2) return deep((int)strtol(argv[2], NULL, 10));
  if (strcmp(mode, "longname") == 0 && argc > 2) return longname(strtol(argv[2], NULL, 10));
  if (strcmp(mode, "nulls") == 0) return nulls();
  if (strcmp(mode, "forkstress") == 0) return forkstress();
  if (strcmp(mode, "many") == 0 && argc > 2) return many(strtol(argv[2], NULL, 10));
  fprintf(
      stderr,
      "usage: %s steps|threads|fork|startend|domains|payloads|names|open|exit3|kill|gpu_init|loop "
      "N|closefds F|"
      "dup2 F|sigexit|deep N|longname N|nulls|forkstress|many N\n",
      argv[0]);
  return 2;
}
