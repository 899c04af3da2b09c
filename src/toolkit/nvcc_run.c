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
  /* the answer is short (a few hundred bytes): it fits the pipe, so reading after the wait is safe
   */
  char *argv[] = {nv->path, "--version", NULL}, err[600];
  int status = 0;
  bool ran = run(argv, pipe_fd[1], &status, err, sizeof err);
  close(pipe_fd[1]);
  char out[4096];
  size_t got = 0;
  ssize_t n;
  while (got < sizeof out - 1 &&
         ((n = read(pipe_fd[0], out + got, sizeof out - 1 - got)) > 0 || (n < 0 && errno == EINTR)))
    if (n > 0) got += (size_t)n;
  close(pipe_fd[0]);
  out[got] = '\0';
  const char *v = strstr(out, ", V");
  size_t len = v ? strspn(v + 3, "0123456789.") : 0;
  if (!ran || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || len == 0 ||
      len >= sizeof nv->version) {
    snprintf(
        why, whylen, "nvcc: %.300s --version %.300s", nv->path,
        !ran ? err
             : "does not say its version (expected 'Cuda compilation tools, release X.Y, VX.Y.Z')");
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
    snprintf(found_why, sizeof found_why,
             "nvcc not found (looked at %s): install the CUDA toolkit, set CUDA_HOME, "
             "or give its path in WLRUN_NVCC",
             tried);
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

/* text with every "from" replaced by "to" (malloc'd); text itself when there is none or no memory
 */
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
  if (job->ref) /* a host variable: nvcc instantiates the kernel for it, as NVRTC does a name
                   expression */
    fprintf(f,
            "#line 1 \"<wl.kernel's name>\"\nconst void *wlrun_kernel_reference_ = (const void "
            "*)&%s;\n",
            job->ref);
  bool written = !ferror(f);
  return fclose(f) == 0 && written;
}

/* the files of one nvcc run, in a temporary directory of its own */
struct nvcc_files {
  char dir[1024], src[1100], cubin[1100], ptx[1100], log[1100];
};

/* Makes the run's directory in $TMPDIR (or /tmp) and names its files. */
static bool make_files(struct nvcc_files *f, char *err, size_t errlen) {
  const char *tmp = getenv("TMPDIR");
  snprintf(f->dir, sizeof f->dir, "%s/wlrun-nvcc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(f->dir)) {
    snprintf(err, errlen, "nvcc: cannot make a temporary directory %s: %s", f->dir,
             strerror(errno));
    return false;
  }
  snprintf(f->src, sizeof f->src, "%s/kernel.cu", f->dir);
  snprintf(f->cubin, sizeof f->cubin, "%s/kernel.cubin", f->dir);
  snprintf(f->ptx, sizeof f->ptx, "%s/kernel.ptx", f->dir);
  snprintf(f->log, sizeof f->log, "%s/log", f->dir);
  return true;
}

/* nvcc's command line, NULL-terminated (calloc'd; its strings are the caller's): the cubin for
 * arch and code, the job's options, the PTX kept beside it; NULL when out of memory */
static char **nvcc_argv(const struct wl_nvcc *nv, const struct wl_nvcc_job *job,
                        struct nvcc_files *f, char *arch, char *code) {
  char **argv = calloc((size_t)job->nopts + 16, sizeof *argv);
  if (!argv) return NULL;
  int n = 0;
  argv[n++] = (char *)nv->path;
  argv[n++] = "-cubin";
  argv[n++] = arch;
  argv[n++] = code;
  for (int i = 0; i < job->nopts; i++) argv[n++] = (char *)job->opts[i];
  argv[n++] = "-keep"; /* the PTX beside the cubin, from the one compile */
  argv[n++] = "-keep-dir";
  argv[n++] = f->dir;
  argv[n++] = "-o";
  argv[n++] = f->cubin;
  argv[n++] = f->src;
  argv[n] = NULL;
  return argv;
}

/* What nvcc made in a run that ended with status: its log (the source's name for kernel.cu),
 * and the cubin and PTX when it exited with 0. */
static enum wl_nvcc_result collect(const struct wl_nvcc_job *job, const struct nvcc_files *f,
                                   int status, struct wl_compiled *c, char *err, size_t errlen) {
  size_t len = 0;
  c->log = read_file(f->log, &len);
  if (c->log)
    c->log =
        replace_all(c->log, f->src, job->source_name); /* "... in the compilation of kernel.cu" */
  else c->log = calloc(1, 1);
  if (WIFSIGNALED(status)) {
    snprintf(err, errlen, "nvcc ended by signal %d", WTERMSIG(status));
    return WL_NVCC_STOPPED;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    snprintf(err, errlen, "nvcc exited with %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return WL_NVCC_FAILED;
  }
  c->cubin = (unsigned char *)read_file(f->cubin, &c->cubin_len);
  c->ptx = read_file(f->ptx, &c->ptx_len);
  if (!c->cubin || !c->ptx || !c->log) {
    snprintf(err, errlen, "nvcc: cannot read what it made (%s, %s)", f->cubin, f->ptx);
    return WL_NVCC_NOT_RUN;
  }
  return WL_NVCC_OK;
}

/* Writes the job's source into the run's directory, runs nvcc on it with its output into the
 * log, and collects what it made. */
static enum wl_nvcc_result run_nvcc(const struct wl_nvcc *nv, const struct wl_nvcc_job *job,
                                    struct nvcc_files *f, struct wl_compiled *c, char *err,
                                    size_t errlen) {
  char arch[40], code[40];
  /* "sm_90a" -> -arch=compute_90a -code=sm_90a: that architecture alone, and its PTX kept */
  snprintf(arch, sizeof arch, "-arch=compute_%s", job->arch + 3);
  snprintf(code, sizeof code, "-code=%s", job->arch);
  enum wl_nvcc_result result = WL_NVCC_NOT_RUN;
  int log_fd = -1, status = 0;
  char **argv = nvcc_argv(nv, job, f, arch, code);
  if (!argv) snprintf(err, errlen, "nvcc: out of memory");
  else if (!write_source(f->src, job))
    snprintf(err, errlen, "nvcc: cannot write %s: %s", f->src, strerror(errno));
  else if ((log_fd = open(f->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
    snprintf(err, errlen, "nvcc: cannot write %s: %s", f->log, strerror(errno));
  else if (run(argv, log_fd, &status, err, errlen))
    result = collect(job, f, status, c, err, errlen);
  if (log_fd >= 0) close(log_fd);
  free(argv);
  return result;
}

enum wl_nvcc_result wl_nvcc_compile(const struct wl_nvcc *nv, const struct wl_nvcc_job *job,
                                    struct wl_compiled *c, char *err, size_t errlen) {
  memset(c, 0, sizeof *c);
  struct nvcc_files f;
  if (!make_files(&f, err, errlen)) return WL_NVCC_NOT_RUN;
  enum wl_nvcc_result result = run_nvcc(nv, job, &f, c, err, errlen);
  remove_dir(f.dir);
  if (result != WL_NVCC_OK) { /* the log stays, for the message */
    char *keep_log = c->log;
    c->log = NULL;
    wl_compiled_free(c);
    c->log = keep_log;
  }
  return result;
}
