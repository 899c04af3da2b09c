/* nvcc found, asked its version, and run on a kernel's source (nvcc_run.h). */
#include "nvcc_run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static bool is_program(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* appends "; tried PATH" to the list of places looked at */
static void looked(char *list, size_t len, const char *path) {
  size_t used = strlen(list);
  if (used < len) snprintf(list + used, len - used, "%s%s", used ? ", " : "", path);
}

/* the first nvcc of the search order into path; false with the places looked at in tried */
static bool locate(char *path, size_t len, char *tried, size_t tried_len) {
  const char *explicit = getenv("WLRUN_NVCC");
  if (explicit && *explicit) {
    snprintf(path, len, "%s", explicit);
    looked(tried, tried_len, "WLRUN_NVCC=");
    size_t used = strlen(tried);
    snprintf(tried + used, tried_len - used, "%s", explicit);
    return is_program(path);
  }
  const char *home = getenv("CUDA_HOME");
  if (home && *home) {
    snprintf(path, len, "%s/bin/nvcc", home);
    looked(tried, tried_len, path);
    if (is_program(path)) return true;
  }
  snprintf(path, len, "/usr/local/cuda/bin/nvcc");
  looked(tried, tried_len, path);
  if (is_program(path)) return true;
  const char *dirs = getenv("PATH");
  looked(tried, tried_len, "each directory of $PATH");
  for (const char *p = dirs ? dirs : ""; *p;) {
    size_t n = strcspn(p, ":");
    if (n > 0 && n < len - 6) {
      snprintf(path, len, "%.*s/nvcc", (int)n, p);
      if (is_program(path)) return true;
    }
    p += n + (p[n] == ':');
  }
  return false;
}

/* Runs argv (no shell) with stdin from /dev/null and stdout and stderr into out_fd; *status as
 * waitpid gives it. False with a message when it cannot be started. */
static bool run(char *const argv[], int out_fd, int *status, char *err, size_t errlen) {
  posix_spawn_file_actions_t files;
  posix_spawnattr_t attr;
  if (posix_spawn_file_actions_init(&files) != 0) {
    snprintf(err, errlen, "cannot start %s: out of memory", argv[0]);
    return false;
  }
  if (posix_spawnattr_init(&attr) != 0) {
    posix_spawn_file_actions_destroy(&files);
    snprintf(err, errlen, "cannot start %s: out of memory", argv[0]);
    return false;
  }
  /* a clean start: no blocked signal, and SIGPIPE and SIGCHLD not ignored, whatever wlrun does */
  sigset_t none, deflt;
  sigemptyset(&none);
  sigemptyset(&deflt);
  sigaddset(&deflt, SIGPIPE);
  sigaddset(&deflt, SIGCHLD);
  int rc = posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&files, out_fd, 1);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&files, out_fd, 2);
  if (rc == 0) rc = posix_spawnattr_setsigmask(&attr, &none);
  if (rc == 0) rc = posix_spawnattr_setsigdefault(&attr, &deflt);
  if (rc == 0) rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  if (rc == 0) rc = posix_spawn(&pid, argv[0], &files, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    snprintf(err, errlen, "cannot start %s: %s", argv[0], strerror(rc));
    return false;
  }
  while (waitpid(pid, status, 0) < 0) {
    if (errno != EINTR) {
      snprintf(err, errlen, "waiting for %s: %s", argv[0], strerror(errno));
      return false;
    }
  }
  return true;
}

/* "13.0.88" from nvcc --version's "Cuda compilation tools, release 13.0, V13.0.88" */
static bool ask_version(struct wl_nvcc *nv, char *why, size_t whylen) {
  int pipe_fd[2];
  if (pipe(pipe_fd) != 0) {
    snprintf(why, whylen, "nvcc: %s --version: %s", nv->path, strerror(errno));
    return false;
  }
  /* the answer is short (a few hundred bytes): it fits the pipe, so reading after the wait is safe */
  char *argv[] = {nv->path, "--version", NULL}, err[600];
  int status = 0;
  bool ran = run(argv, pipe_fd[1], &status, err, sizeof err);
  close(pipe_fd[1]);
  char out[4096];
  size_t got = 0;
  ssize_t n;
  while (got < sizeof out - 1 && ((n = read(pipe_fd[0], out + got, sizeof out - 1 - got)) > 0 || (n < 0 && errno == EINTR)))
    if (n > 0) got += (size_t)n;
  close(pipe_fd[0]);
  out[got] = '\0';
  const char *v = strstr(out, ", V");
  size_t len = v ? strspn(v + 3, "0123456789.") : 0;
  if (!ran || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || len == 0 || len >= sizeof nv->version) {
    snprintf(why, whylen, "nvcc: %.300s --version %.300s", nv->path,
             !ran ? err : "does not say its version (expected 'Cuda compilation tools, release X.Y, VX.Y.Z')");
    return false;
  }
  memcpy(nv->version, v + 3, len);
  nv->version[len] = '\0';
  return true;
}

static struct wl_nvcc found;
static bool found_ok;
static char found_why[1024];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void find_once(void) {
  char tried[700] = "";
  if (!locate(found.path, sizeof found.path, tried, sizeof tried)) {
    snprintf(found_why, sizeof found_why, "nvcc not found (looked at %s): install the CUDA toolkit, set CUDA_HOME, "
             "or give its path in WLRUN_NVCC", tried);
    return;
  }
  found_ok = ask_version(&found, found_why, sizeof found_why);
}

const struct wl_nvcc *wl_nvcc_find(char *why, size_t whylen) {
  if (pthread_once(&once, find_once) != 0) {
    snprintf(why, whylen, "nvcc: cannot look for it (pthread_once failed)");
    return NULL;
  }
  if (found_ok) return &found;
  snprintf(why, whylen, "%s", found_why);
  return NULL;
}

/* ---- one compile in a temporary directory ---- */

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *data = NULL;
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && st.st_size >= 0 && st.st_size < (1L << 30) &&
      (data = malloc((size_t)st.st_size + 1))) {
    *len = fread(data, 1, (size_t)st.st_size, f);
    if (*len != (size_t)st.st_size) {
      free(data);
      data = NULL;
    } else {
      data[*len] = '\0';
    }
  }
  fclose(f);
  return data;
}

/* text with every "from" replaced by "to" (malloc'd); text itself when there is none or no memory */
static char *replace_all(char *text, const char *from, const char *to) {
  size_t nfrom = strlen(from), nto = strlen(to), count = 0;
  for (const char *p = text; (p = strstr(p, from)); p += nfrom) count++;
  char *out = count ? malloc(strlen(text) + count * nto + 1) : NULL;
  if (!out) return text;
  char *w = out;
  for (const char *p = text, *hit; *p; p = hit + nfrom) {
    if (!(hit = strstr(p, from))) {
      strcpy(w, p);
      w += strlen(p);
      break;
    }
    memcpy(w, p, (size_t)(hit - p));
    w += hit - p;
    memcpy(w, to, nto);
    w += nto;
  }
  *w = '\0';
  free(text);
  return out;
}

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    char path[4200];
    while ((e = readdir(d)))
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        (void)unlink(path); /* a file left in the temporary directory harms nothing */
      }
    closedir(d);
  }
  (void)rmdir(dir);
}

/* The file nvcc compiles: the code under its own name (#line, the name's quotes and backslashes
 * escaped, control characters shown as '?'), then the reference that instantiates the kernel. */
static bool write_source(const char *path, const struct wl_nvcc_job *job) {
  FILE *f = fopen(path, "w");
  if (!f) return false;
  fputs("#line 1 \"", f);
  for (const unsigned char *p = (const unsigned char *)job->source_name; *p; p++)
    if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
  fprintf(f, "\"\n%s\n", job->code);
  if (job->ref) /* a host variable: nvcc instantiates the kernel for it, as NVRTC does a name expression */
    fprintf(f, "#line 1 \"<wl.kernel's name>\"\nconst void *wlrun_kernel_reference_ = (const void *)&%s;\n", job->ref);
  bool written = !ferror(f);
  return fclose(f) == 0 && written;
}

enum wl_nvcc_result wl_nvcc_compile(const struct wl_nvcc *nv, const struct wl_nvcc_job *job, struct wl_compiled *c,
                                    char *err, size_t errlen) {
  memset(c, 0, sizeof *c);
  const char *tmp = getenv("TMPDIR");
  char dir[1024], src[1100], cubin[1100], ptx[1100], log[1100], arch[40], code[40];
  snprintf(dir, sizeof dir, "%s/wlrun-nvcc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    snprintf(err, errlen, "nvcc: cannot make a temporary directory %s: %s", dir, strerror(errno));
    return WL_NVCC_NOT_RUN;
  }
  snprintf(src, sizeof src, "%s/kernel.cu", dir);
  snprintf(cubin, sizeof cubin, "%s/kernel.cubin", dir);
  snprintf(ptx, sizeof ptx, "%s/kernel.ptx", dir);
  snprintf(log, sizeof log, "%s/log", dir);
  /* "sm_90a" -> -arch=compute_90a -code=sm_90a: that architecture alone, and its PTX kept */
  snprintf(arch, sizeof arch, "-arch=compute_%s", job->arch + 3);
  snprintf(code, sizeof code, "-code=%s", job->arch);
  enum wl_nvcc_result result = WL_NVCC_NOT_RUN;
  int log_fd = -1;
  char **argv = calloc((size_t)job->nopts + 16, sizeof *argv);
  if (!argv) {
    snprintf(err, errlen, "nvcc: out of memory");
    goto done;
  }
  if (!write_source(src, job)) {
    snprintf(err, errlen, "nvcc: cannot write %s: %s", src, strerror(errno));
    goto done;
  }
  log_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (log_fd < 0) {
    snprintf(err, errlen, "nvcc: cannot write %s: %s", log, strerror(errno));
    goto done;
  }
  int n = 0;
  argv[n++] = (char *)nv->path;
  argv[n++] = "-cubin";
  argv[n++] = arch;
  argv[n++] = code;
  for (int i = 0; i < job->nopts; i++) argv[n++] = (char *)job->opts[i];
  argv[n++] = "-keep"; /* the PTX beside the cubin, from the one compile */
  argv[n++] = "-keep-dir";
  argv[n++] = dir;
  argv[n++] = "-o";
  argv[n++] = cubin;
  argv[n++] = src;
  argv[n] = NULL;
  int status = 0;
  if (!run(argv, log_fd, &status, err, errlen)) goto done;
  size_t len = 0;
  c->log = read_file(log, &len);
  if (c->log) c->log = replace_all(c->log, src, job->source_name); /* "... in the compilation of kernel.cu" */
  else c->log = calloc(1, 1);
  if (WIFSIGNALED(status)) {
    result = WL_NVCC_STOPPED;
    snprintf(err, errlen, "nvcc ended by signal %d", WTERMSIG(status));
    goto done;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    result = WL_NVCC_FAILED;
    snprintf(err, errlen, "nvcc exited with %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    goto done;
  }
  c->cubin = (unsigned char *)read_file(cubin, &c->cubin_len);
  c->ptx = read_file(ptx, &c->ptx_len);
  if (!c->cubin || !c->ptx || !c->log) {
    snprintf(err, errlen, "nvcc: cannot read what it made (%s, %s)", cubin, ptx);
    goto done;
  }
  result = WL_NVCC_OK;
done:
  if (log_fd >= 0) close(log_fd);
  free(argv);
  remove_dir(dir);
  if (result != WL_NVCC_OK) {
    char *keep_log = c->log;
    c->log = NULL;
    wl_compiled_free(c);
    c->log = keep_log;
  }
  return result;
}
