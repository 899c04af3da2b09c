/* The files a kernel's code comes from (kernel_source.h): a source read whole, and the local
 * headers it includes, for the kernel cache's key. */
#include "kernel_source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SOURCE_BYTES ((size_t)64 << 20)

/* The whole of a regular file of at most MAX_SOURCE_BYTES, NUL-terminated; or NULL with *why
 * set. Opened without blocking and checked before it is read: a FIFO would hang the read, and
 * a device (/dev/zero) never ends. */
char *wl_read_source_file(const char *path, size_t *len, const char **why) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    *why = strerror(errno);
    if (fd >= 0) close(fd);
    return NULL;
  }
  if (!S_ISREG(st.st_mode) || (size_t)st.st_size > MAX_SOURCE_BYTES) {
    *why = S_ISDIR(st.st_mode)    ? "a directory, not a file"
           : !S_ISREG(st.st_mode) ? "not a regular file (a FIFO, a device or a socket)"
                                  : "larger than 64 MiB";
    close(fd);
    return NULL;
  }
  size_t n = 0, size = (size_t)st.st_size;
  char *buf = malloc(size + 1);
  *why = buf ? NULL : "out of memory";
  while (buf && n < size && !*why) {
    ssize_t got = read(fd, buf + n, size - n);
    if (got < 0 && errno != EINTR) *why = strerror(errno);
    if (got == 0) break; /* a file that shrank: what is there */
    if (got > 0) n += (size_t)got;
  }
  close(fd);
  if (*why) {
    free(buf);
    return NULL;
  }
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

/* Appends the text of the local headers that code #includes "like/this.h" (relative to dir),
 * recursively, to the key, so that editing a header changes the key. Each header once (by its
 * real path): headers that include one another would be read exponentially often. */
#define MAX_HEADERS 512
struct headers_seen {
  char *paths[MAX_HEADERS];
  int n;
  char bad[1300]; /* a header there that is not a regular file: NVRTC would block on a FIFO */
};

static bool seen_before(struct headers_seen *seen, const char *path) {
  char *real = realpath(path, NULL);
  if (!real) return true; /* not there: NVRTC will say so if it matters */
  for (int i = 0; i < seen->n; i++)
    if (strcmp(seen->paths[i], real) == 0) {
      free(real);
      return true;
    }
  if (seen->n == MAX_HEADERS) {
    free(real);
    return true;
  }
  seen->paths[seen->n++] = real;
  return false;
}

static void add_headers(luaL_Buffer *key, const char *code, const char *dir,
                        struct headers_seen *seen) {
  if (!dir) return;
  for (const char *p = code; (p = strstr(p, "#include")) != NULL; p += 8) {
    const char *q = p + 8;
    while (*q == ' ' || *q == '\t') q++;
    if (*q != '"') continue;
    const char *end = strchr(q + 1, '"');
    if (!end || end - q > 512) continue;
    char path[1200];
    snprintf(path, sizeof path, "%s/%.*s", dir, (int)(end - q - 1), q + 1);
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !seen->bad[0]) {
      snprintf(seen->bad, sizeof seen->bad, "%s is %s", path,
               S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
      continue;
    }
    if (seen_before(seen, path)) continue;
    const char *why;
    char *text = wl_read_source_file(path, NULL, &why);
    if (!text) continue; /* NVRTC will say so if it matters */
    luaL_addstring(key, "\n#header ");
    luaL_addstring(key, path);
    luaL_addchar(key, '\n');
    luaL_addstring(key, text);
    char *slash = strrchr(path, '/');
    if (slash) *slash = '\0';
    add_headers(key, text, path, seen);
    free(text);
  }
}

/* false, with why, when a header the code includes is not a regular file */
bool wl_add_local_headers(luaL_Buffer *key, const char *code, const char *dir, char *why,
                          size_t size) {
  static struct headers_seen seen; /* a few KiB: not on the stack */
  seen.n = 0;
  seen.bad[0] = '\0';
  add_headers(key, code, dir, &seen);
  for (int i = 0; i < seen.n; i++) free(seen.paths[i]);
  snprintf(why, size, "%s", seen.bad);
  return !seen.bad[0];
}
