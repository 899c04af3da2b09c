/* Interned strings: every name the trace writes (ranges, domains, threads, kernels) is stored once
 * and known by its string id; its S line is written the first time a record of the current file
 * names it (trace_output.c). Texts are kept as valid UTF-8: a program's invalid bytes become
 * U+FFFD, wide strings are converted. */
#include "trace_internal.h"
#include "trace_format.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Distinct strings kept at most: a program naming each range anew ("step 1", "step 2", ...)
 * would otherwise grow the table for ever; past it, a new name is lost (D memory). */
enum { MAX_STRINGS = 1 << 20 };

static pthread_mutex_t strings_lock = PTHREAD_MUTEX_INITIALIZER;
static struct wt_string **buckets;
static size_t nbuckets, count;
static uint32_t next_sid = 1;

static uint32_t hash_of(const char *s, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

/* The length of the valid UTF-8 sequence at s (n bytes left), 0 when it is not one. */
static size_t utf8_sequence(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned min;
  if (c >= 0xc2 && c <= 0xdf) len = 2, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef) len = 3, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4) len = 4, min = 0x10000;
  else return 0;
  if (n < len) return 0;
  unsigned cp = c & (0x7f >> len);
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

static int valid_utf8(const char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    size_t k = utf8_sequence((const unsigned char *)s + i, n - i);
    if (!k) return 0;
    i += k;
  }
  return 1;
}

/* Appends code point cp as UTF-8 at out, returns the bytes written (U+FFFD for what is not one). */
static size_t put_utf8(char *out, uint32_t cp) {
  if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) cp = 0xfffd;
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xc0 | cp >> 6);
    out[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xe0 | cp >> 12);
    out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
    out[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  out[0] = (char)(0xf0 | cp >> 18);
  out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
  out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
  out[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

/* text with each invalid byte replaced by U+FFFD (malloc'd, *out_len set), NULL without memory */
static char *repaired(const char *s, size_t n, size_t *out_len) {
  char *r = malloc(3 * n + 1);
  if (!r) return NULL;
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    size_t k = utf8_sequence((const unsigned char *)s + i, n - i);
    if (k) {
      memcpy(r + o, s + i, k);
      o += k, i += k;
    } else {
      o += put_utf8(r + o, 0xfffd);
      i++;
    }
  }
  r[o] = 0;
  *out_len = o;
  return r;
}

static int grow(void) {
  size_t n = nbuckets ? 2 * nbuckets : 1024;
  struct wt_string **b = calloc(n, sizeof *b);
  if (!b) return 0;
  for (size_t i = 0; i < nbuckets; i++) {
    for (struct wt_string *s = buckets[i], *next; s; s = next) {
      next = s->next;
      s->next = b[s->hash & (n - 1)];
      b[s->hash & (n - 1)] = s;
    }
  }
  free(buckets);
  buckets = b;
  nbuckets = n;
  return 1;
}

/* under strings_lock: the entry of valid UTF-8 text[0..n) */
static struct wt_string *lookup_or_add(const char *text, size_t n) {
  uint32_t h = hash_of(text, n);
  if (nbuckets) {
    for (struct wt_string *s = buckets[h & (nbuckets - 1)]; s; s = s->next)
      if (s->hash == h && s->len == n && memcmp(s->text, text, n) == 0) return s;
  }
  if (n > UINT32_MAX - 1 || count >= MAX_STRINGS) return NULL;
  if (count + 1 > 2 * nbuckets && !grow() && !nbuckets)
    return NULL; /* a full table still takes more */
  struct wt_string *s = malloc(sizeof *s + n + 1);
  if (!s) return NULL;
  s->sid = next_sid++;
  s->defined = 0;
  s->hash = h;
  s->len = (uint32_t)n;
  memcpy(s->text, text, n);
  s->text[n] = 0;
  s->next = buckets[h & (nbuckets - 1)];
  buckets[h & (nbuckets - 1)] = s;
  count++;
  return s;
}

struct wt_string *wt_intern(const char *text, size_t len) {
  char *fixed = NULL;
  if (len > WL_TRACE_MAX_STRING) { /* cut, not inside a character (3 continuation bytes at most) */
    size_t cut = WL_TRACE_MAX_STRING;
    while (cut > WL_TRACE_MAX_STRING - 3 && ((unsigned char)text[cut] & 0xc0) == 0x80) cut--;
    len = cut;
  }
  if (!valid_utf8(text, len)) {
    fixed = repaired(text, len, &len);
    if (!fixed) {
      wt_lost(1);
      return NULL;
    }
    text = fixed;
  }
  wt_mutex_lock(&strings_lock);
  struct wt_string *s = lookup_or_add(text, len);
  wt_mutex_unlock(&strings_lock);
  free(fixed);
  if (!s) wt_lost(1);
  return s;
}

struct wt_string *wt_intern_cstr(const char *text) {
  if (!text) text = "";
  return wt_intern(text, strlen(text));
}

struct wt_string *wt_intern_wide(const wchar_t *text) {
  size_t n = text ? wcslen(text) : 0;
  char small[256];
  char *buf = n * 4 + 1 <= sizeof small ? small : malloc(n * 4 + 1);
  if (!buf) {
    wt_lost(1);
    return NULL;
  }
  size_t o = 0;
  for (size_t i = 0; i < n; i++) o += put_utf8(buf + o, (uint32_t)text[i]);
  buf[o] = 0;
  struct wt_string *s = wt_intern(buf, o);
  if (buf != small) free(buf);
  return s;
}

/* the forked child: the lock, taken by trace_process.c's prepare handler, is made anew */
void wt_strings_fork_child(void) { pthread_mutex_init(&strings_lock, NULL); }
void wt_strings_fork_prepare(void) { pthread_mutex_lock(&strings_lock); }
void wt_strings_fork_parent(void) { pthread_mutex_unlock(&strings_lock); }
