#include "kernel_cache.h"

#include "file_beside.h"
#include "settings.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "WLRUN-KERNEL-1\n"

void wl_compiled_free(struct wl_compiled *c) {
  free(c->lowered);
  free(c->ptx);
  free(c->cubin);
  free(c->log);
  memset(c, 0, sizeof *c);
}

static char *join(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  char *s = malloc(la + lb + 2);
  if (!s) return NULL;
  memcpy(s, a, la);
  s[la] = '/';
  memcpy(s + la + 1, b, lb + 1);
  return s;
}

char *wl_cache_dir(void) {
  const struct wl_setting *s = wl_setting_find("compile", "cache_dir");
  const char *v;
  if (s && s->set) return strdup(s->text);
  if ((v = getenv("WLRUN_CACHE_DIR")) && *v) return strdup(v);
  if ((v = getenv("XDG_CACHE_HOME")) && *v) return join(v, "wlrun");
  if ((v = getenv("HOME")) && *v) return join(v, ".cache/wlrun");
  return NULL;
}

void wl_cache_hash(const void *data, size_t len, char hex[33]) {
  /* two 64-bit FNV-1a lanes with different offsets; the second also folds in the length */
  uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x84222325cbf29ce4ULL ^ len;
  const unsigned char *p = data;
  for (size_t i = 0; i < len; i++) {
    h1 = (h1 ^ p[i]) * 0x100000001b3ULL;
    h2 = (h2 ^ p[i] ^ (i & 0xff)) * 0x100000001b3ULL;
  }
  snprintf(hex, 33, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
}

static char *named_path(const char *dir, const char *key, size_t keylen, const char *suffix) {
  char hex[33], name[48];
  wl_cache_hash(key, keylen, hex);
  snprintf(name, sizeof name, "%s%s", hex, suffix);
  return join(dir, name);
}

static char *entry_path(const char *dir, const char *key, size_t keylen) {
  return named_path(dir, key, keylen, ".wlk");
}

static bool write_field(FILE *f, const void *data, size_t len) {
  uint64_t n = len;
  return fwrite(&n, sizeof n, 1, f) == 1 && (len == 0 || fwrite(data, 1, len, f) == len);
}

/* reads a length-prefixed field; NUL-terminates it (the NUL is not counted) */
static void *read_field(FILE *f, size_t *len) {
  uint64_t n;
  if (fread(&n, sizeof n, 1, f) != 1 || n > (1ULL << 32)) return NULL;
  char *buf = malloc((size_t)n + 1);
  if (!buf) return NULL;
  if (n && fread(buf, 1, (size_t)n, f) != n) {
    free(buf);
    return NULL;
  }
  buf[n] = '\0';
  if (len) *len = (size_t)n;
  return buf;
}

bool wl_cache_load(const char *dir, const char *key, size_t keylen, struct wl_compiled *out) {
  char *path = entry_path(dir, key, keylen);
  if (!path) return false;
  FILE *f = fopen(path, "rb");
  free(path);
  if (!f) return false;
  char magic[sizeof MAGIC - 1];
  size_t stored_len = 0;
  char *stored = NULL;
  bool ok = fread(magic, 1, sizeof magic, f) == sizeof magic &&
            memcmp(magic, MAGIC, sizeof magic) == 0 && (stored = read_field(f, &stored_len)) &&
            stored_len == keylen && memcmp(stored, key, keylen) == 0;
  free(stored);
  memset(out, 0, sizeof *out);
  if (ok) {
    out->lowered = read_field(f, NULL);
    out->ptx = read_field(f, &out->ptx_len);
    out->cubin = read_field(f, &out->cubin_len);
    out->log = read_field(f, NULL);
    ok = out->lowered && out->ptx && out->cubin && out->log;
    if (!ok) wl_compiled_free(out);
  }
  fclose(f);
  return ok;
}

static bool make_dirs(const char *dir) {
  char *p = strdup(dir);
  if (!p) return false;
  for (char *s = p + 1; *s; s++)
    if (*s == '/') {
      *s = '\0';
      if (mkdir(p, 0777) != 0 && errno != EEXIST) {
        free(p);
        return false;
      }
      *s = '/';
    }
  bool ok = mkdir(p, 0777) == 0 || errno == EEXIST;
  free(p);
  return ok;
}

/* A process killed while it stored an entry leaves its HASH.wlk.XXXXXX.tmp (wl_create_beside);
 * the lock's holder is the one process that writes that entry, so such a file is a dead writer's */
static void remove_dead_writes(const char *dir, const char *key, size_t keylen) {
  char hex[33], prefix[48];
  wl_cache_hash(key, keylen, hex);
  size_t plen = (size_t)snprintf(prefix, sizeof prefix, "%s.wlk.", hex);
  DIR *d = opendir(dir);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d));) {
    size_t n = strlen(e->d_name);
    if (n == plen + 6 + 4 && strncmp(e->d_name, prefix, plen) == 0 &&
        strcmp(e->d_name + n - 4, ".tmp") == 0)
      unlinkat(dirfd(d), e->d_name, 0); /* gone already, or not ours to remove: left */
  }
  closedir(d);
}

/* the lock file at path, opened (made where missing); -1 where it is no regular file */
static int open_lock(const char *path) {
  int fd = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                0666); /* flock needs no write access */
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
    close(fd);
    fd = -1;
  }
  return fd;
}

/* whether the file fd locked is still the one at path: a holder removes the name as it lets go
 * (wl_cache_unlock), and a flock taken on the file it removed holds nothing */
static bool still_named(int fd, const char *path) {
  struct stat held, named;
  return fstat(fd, &held) == 0 && lstat(path, &named) == 0 && held.st_dev == named.st_dev &&
         held.st_ino == named.st_ino;
}

int wl_cache_lock(const char *dir, const char *key, size_t keylen, bool (*stop_pending)(void),
                  void (*waiting)(void *ctx, const char *path), void *ctx) {
  char *path = make_dirs(dir) ? named_path(dir, key, keylen, ".lock") : NULL;
  if (!path) return -1;
  int fd = open_lock(path);
  const struct timespec step = {0, 10 * 1000 * 1000};
  for (long steps = 0; fd >= 0; steps++) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      if (still_named(fd, path)) break;
      close(fd);
      fd = open_lock(path);
      continue;
    }
    if ((errno != EWOULDBLOCK && errno != EINTR) || stop_pending()) {
      close(fd);
      fd = -1;
      break;
    }
    if (steps == WL_CACHE_LOCK_NOTE * 100L && waiting) waiting(ctx, path);
    nanosleep(&step, NULL);
  }
  if (fd >= 0) remove_dead_writes(dir, key, keylen);
  free(path);
  return fd;
}

/* the lock's name goes before the lock: a process that opens it later makes a new one, takes it
 * at once and finds the entry stored */
void wl_cache_unlock(const char *dir, const char *key, size_t keylen, int fd) {
  if (fd < 0) return;
  char *path = named_path(dir, key, keylen, ".lock");
  if (path) unlink(path);
  free(path);
  close(fd);
}

bool wl_cache_store(const char *dir, const char *key, size_t keylen, const struct wl_compiled *c,
                    char *err, size_t errlen) {
  if (!make_dirs(dir)) {
    snprintf(err, errlen, "cannot create the kernel cache directory %s: %s", dir, strerror(errno));
    return false;
  }
  char *path = entry_path(dir, key, keylen);
  if (!path) {
    snprintf(err, errlen, "out of memory");
    return false;
  }
  size_t plen = strlen(path);
  char *tmp = malloc(plen + 32);
  if (!tmp) {
    free(path);
    snprintf(err, errlen, "out of memory");
    return false;
  }
  int fd = wl_create_beside(path, tmp, plen + 32);
  FILE *f = fd < 0 ? NULL : fdopen(fd, "wb");
  if (fd >= 0 && !f) close(fd);
  bool made = fd >= 0;
  bool ok = f && fwrite(MAGIC, 1, sizeof MAGIC - 1, f) == sizeof MAGIC - 1 &&
            write_field(f, key, keylen) && write_field(f, c->lowered, strlen(c->lowered)) &&
            write_field(f, c->ptx, c->ptx_len) && write_field(f, c->cubin, c->cubin_len) &&
            write_field(f, c->log, strlen(c->log));
  if (f && fclose(f) != 0) ok = false;
  if (ok && rename(tmp, path) != 0) ok = false;
  if (!ok) {
    snprintf(err, errlen, "cannot write the kernel cache entry %s: %s", path, strerror(errno));
    if (made) unlink(tmp);
  }
  free(tmp);
  free(path);
  return ok;
}
