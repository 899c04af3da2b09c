/* wlrun.ini, parsed by inih (docs/config.md, "The rules of the file").
 *
 * The file is read whole and handed to inih one whole line per call of the reader, through
 * ini_parse_stream, so that a line is never split and inih's line numbers are the file's.
 * Before inih sees a line, the reader checks that it is text (UTF-8, no NUL, no control
 * character) and, for a section header, that the section is known and not already seen; the
 * handler checks each key (known, not set twice, a value that parses).
 *
 * inih's line buffer: Debian's libinih (libinih-dev's ini.h) reads its options at run time
 * from variables (ini_max_line, ini_use_stack, ...; built with a stack buffer of 200 bytes by
 * default). They are set for the call, a heap buffer as long as the longest line, and put back
 * after it. The reader still refuses, never splits, a line longer than the buffer it is given.
 * The library is also built to pass the line number to the handler (INI_HANDLER_LINENO, which
 * the installed header leaves at 0): the handler is declared as the library calls it. */
#define INI_HANDLER_LINENO 1
#include "config.h"

#include "settings.h"

#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_BYTES (1 << 20) /* a larger file is refused: not a wlrun.ini */
#define COMMENT_CHARS ";#"  /* start a comment: first on a line, or after a blank */

struct header {
  const char *section; /* the settings table's name of the section */
  int line;
};

struct reader {
  const char *path;
  const char *text;       /* the whole file */
  size_t size, pos;       /* its length; where the next line starts */
  int line;               /* the line last handed to inih */
  int error_line;         /* the first line with an error, 0 if none */
  int *key_line;          /* per setting (wl_setting_at order): the line that set it */
  struct header *headers; /* the section headers seen */
  size_t nheaders;
  char *err;
  size_t errlen;
};

static void fail(struct reader *r, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void fail(struct reader *r, int line, const char *fmt, ...) {
  if (r->error_line) return;
  r->error_line = line;
  int n = snprintf(r->err, r->errlen, "%s:%d: ", r->path, line);
  if (n < 0 || (size_t)n >= r->errlen) return;
  va_list ap;
  va_start(ap, fmt);
  int more = vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
  va_end(ap);
  if (more < 0 || (size_t)more < r->errlen - (size_t)n) return;
  /* cut short (a long value quoted): not in the middle of a character */
  size_t len = strlen(r->err), start = len;
  while (start > 0 && ((unsigned char)r->err[start - 1] & 0xC0) == 0x80) start--;
  unsigned char lead = start > 0 ? (unsigned char)r->err[start - 1] : 0;
  size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  if (start > 0 && len - (start - 1) < need) r->err[start - 1] = '\0';
}

/* A piece of the user's text for a message: at most 60 characters (then "..."), cut at a
 * character; the text was checked (UTF-8, no control characters) before it reaches here. */
static const char *shown(const char *s, size_t n, char *buf, size_t len) {
  size_t keep = n, chars = 0;
  for (size_t i = 0; i < n; i++)
    if (((unsigned char)s[i] & 0xC0) != 0x80 && ++chars > 60) {
      keep = i;
      break;
    }
  snprintf(buf, len, "%.*s%s", (int)keep, s, keep < n ? "..." : "");
  return buf;
}

/* ---- the settings table: its sections and keys ---- */

static const char *known_section(const char *name, size_t n, bool ignore_case) {
  for (size_t i = 0; i < wl_settings_count(); i++) {
    const char *s = wl_setting_at(i)->section;
    if (strlen(s) == n && (ignore_case ? strncasecmp(s, name, n) : strncmp(s, name, n)) == 0)
      return s;
  }
  return NULL;
}

/* The sections ("run, adaptive, output, compile"), or the keys of one section. */
static void list_names(char *buf, size_t len, const char *section) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < wl_settings_count(); i++) {
    const struct wl_setting *s = wl_setting_at(i);
    bool listed = false;
    for (size_t j = 0; j < i && !section; j++)
      listed = listed || strcmp(wl_setting_at(j)->section, s->section) == 0;
    if (listed || (section && strcmp(s->section, section) != 0)) continue;
    int n =
        snprintf(buf + used, len - used, "%s%s", used ? ", " : "", section ? s->name : s->section);
    if (n < 0 || (size_t)n >= len - used) return;
    used += (size_t)n;
  }
}

static size_t setting_index(const struct wl_setting *s) {
  size_t i = 0;
  while (wl_setting_at(i) != s) i++;
  return i;
}

/* ---- the checks of each line, before inih reads it ---- */

/* Length of the UTF-8 character at p (n bytes there) and its code point; 0 if invalid. */
static size_t utf8_char(const unsigned char *p, size_t n, unsigned *cp) {
  size_t len = p[0] < 0x80                    ? 1
               : p[0] >= 0xC2 && p[0] <= 0xDF ? 2
               : (p[0] & 0xF0) == 0xE0        ? 3
               : p[0] >= 0xF0 && p[0] <= 0xF4 ? 4
                                              : 0;
  static const unsigned lowest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (len == 0 || len > n) return 0;
  *cp = len == 1 ? p[0] : p[0] & (0x7F >> len);
  for (size_t i = 1; i < len; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    *cp = *cp << 6 | (p[i] & 0x3F);
  }
  if (*cp < lowest[len] || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF)) return 0;
  return len;
}

/* The line is text: UTF-8 without NUL or control characters but the tab; a CR only at its end
 * (CRLF); a byte order mark only at the start of the file (inih skips it there). */
static bool check_text(struct reader *r, const unsigned char *p, size_t n) {
  size_t col = 1;
  for (size_t i = 0; i < n; col++) {
    unsigned cp = p[i];
    size_t len = utf8_char(p + i, n - i, &cp);
    bool crlf = i + len + 1 == n && p[n - 1] == '\n'; /* a CR only before the line's LF */
    if (len == 0) {
      bool utf16 = r->line == 1 && i == 0 && n >= 2 &&
                   ((p[0] == 0xFF && p[1] == 0xFE) || (p[0] == 0xFE && p[1] == 0xFF));
      fail(r, r->line, "byte 0x%02X at column %zu is not UTF-8: wlrun.ini is UTF-8 text%s", p[i],
           col, utf16 ? " (this file is UTF-16)" : "");
    } else if (cp == '\n' && i + 1 == n) {
      return true;
    } else if (cp == '\r' && !crlf) {
      fail(r, r->line, "a carriage return (CR) %s, at column %zu: lines end with LF or CR LF",
           i + len == n ? "that ends the file" : "inside the line", col);
    } else if (cp == 0) {
      fail(r, r->line, "a NUL byte at column %zu: wlrun.ini is text, not binary data", col);
    } else if ((cp < 0x20 && cp != '\t' && cp != '\r') || (cp >= 0x7F && cp <= 0x9F)) {
      fail(r, r->line, "control character U+%04X at column %zu: wlrun.ini is text", cp, col);
    } else if (cp == 0xFEFF && !(r->line == 1 && i == 0)) {
      fail(r, r->line,
           "a byte order mark (U+FEFF) at column %zu: only the file may start with "
           "one",
           col);
    } else {
      i += len;
      continue;
    }
    return false;
  }
  return true;
}

/* A section header as inih reads it (values on one line): the first non-blank character is
 * '[' and the name runs to the first ']'. Without one (or with a comment before it), inih
 * reports the syntax error itself. After the ']', only blanks and a comment. */
static bool check_header(struct reader *r, const char *p, const char *end) {
  const char *close = p + 1;
  char a[80], b[80], names[128];
  for (bool blank = false; close < end && *close != ']'; close++) {
    if (blank && strchr(COMMENT_CHARS, *close)) return true;
    blank = *close == ' ' || *close == '\t';
  }
  if (close == end) return true;
  const char *name = p + 1, *rest = close + 1;
  size_t n = (size_t)(close - name);
  while (rest < end && strchr(" \t\r\n", *rest)) rest++;
  while (end > rest && strchr(" \t\r\n", end[-1])) end--;
  if (rest < end && !strchr(COMMENT_CHARS, *rest)) {
    fail(r, r->line, "text after the section header [%s]: '%s'", shown(name, n, b, sizeof b),
         shown(rest, (size_t)(end - rest), a, sizeof a));
    return false;
  }
  const char *section = known_section(name, n, false);
  if (!section) {
    const char *other = known_section(name, n, true);
    list_names(names, sizeof names, NULL);
    if (other)
      fail(r, r->line, "unknown section [%s] (section names are lower case: [%s])",
           shown(name, n, a, sizeof a), other);
    else
      fail(r, r->line, "unknown section [%s] (sections: %s)", shown(name, n, a, sizeof a), names);
    return false;
  }
  for (size_t i = 0; i < r->nheaders; i++)
    if (strcmp(r->headers[i].section, section) == 0) {
      fail(r, r->line, "duplicate section [%s] (first on line %d): each section appears once",
           section, r->headers[i].line);
      return false;
    }
  r->headers[r->nheaders++] = (struct header){section, r->line};
  return true;
}

/* The reader given to inih: the next whole line, checked. */
static char *next_line(char *buf, int size, void *stream) {
  struct reader *r = stream;
  if (r->error_line || r->pos >= r->size) return NULL;
  const char *p = r->text + r->pos, *nl = memchr(p, '\n', r->size - r->pos);
  size_t n = nl ? (size_t)(nl - p) + 1 : r->size - r->pos;
  r->pos += n;
  r->line++;
  if (!check_text(r, (const unsigned char *)p, n)) return NULL;
  if (n + 1 > (size_t)size) { /* never: the buffer is as long as the longest line */
    fail(r, r->line, "the line is %zu bytes long, longer than inih's buffer of %d", n, size);
    return NULL;
  }
  const char *q = p, *end = p + n;
  if (r->line == 1 && n >= 3 && memcmp(q, "\xEF\xBB\xBF", 3) == 0) q += 3;
  while (q < end && (*q == ' ' || *q == '\t')) q++;
  if (q < end && *q == '[' && !check_header(r, q, end)) return NULL;
  memcpy(buf, p, n);
  buf[n] = '\0';
  return buf;
}

/* ---- each key, from inih ---- */

static void unknown_key(struct reader *r, const char *section, const char *name) {
  char a[80], names[256];
  const struct wl_setting *same = NULL, *other = NULL;
  for (size_t i = 0; i < wl_settings_count(); i++) {
    const struct wl_setting *s = wl_setting_at(i);
    if (strcasecmp(s->name, name) != 0) continue;
    if (strcmp(s->section, section) == 0) same = s;
    else other = s;
  }
  if (!*name) {
    fail(r, r->line, "a value without a key before its '='");
  } else if (!*section) {
    list_names(names, sizeof names, NULL);
    if (other)
      fail(r, r->line, "'%s' comes before any section header (it belongs in [%s])",
           shown(name, strlen(name), a, sizeof a), other->section);
    else
      fail(r, r->line, "'%s' comes before any section header (sections: %s)",
           shown(name, strlen(name), a, sizeof a), names);
  } else if (!known_section(section, strlen(section), false)) {
    fail(r, r->line, "unknown section [%s]", section); /* never: the reader refuses it first */
  } else if (same) {
    fail(r, r->line, "unknown key '%s' in section [%s] (keys are lower case: '%s')",
         shown(name, strlen(name), a, sizeof a), section, same->name);
  } else if (other) {
    fail(r, r->line, "unknown key '%s' in section [%s] ('%s' is a key of [%s])",
         shown(name, strlen(name), a, sizeof a), section, other->name, other->section);
  } else {
    list_names(names, sizeof names, section);
    fail(r, r->line, "unknown key '%s' in section [%s] (its keys: %s)",
         shown(name, strlen(name), a, sizeof a), section, names);
  }
}

/* A path setting (a directory, a file) of a wlrun.ini found above the working directory is
 * relative to the file's directory, as a path in git's config is: "../wlrun.ini" with
 * cache_dir = .cache gives ../.cache. Other values, and absolute paths, are as written. */
static const char *relative_to_file(const char *ini, const struct wl_setting *s, const char *value,
                                    char *buf, size_t size) {
  bool is_path = (strcmp(s->section, "compile") == 0 && strcmp(s->name, "cache_dir") == 0) ||
                 (strcmp(s->section, "history") == 0 && strcmp(s->name, "db") == 0);
  const char *slash = strrchr(ini, '/');
  if (!is_path || value[0] == '/' || !slash) return value;
  int n = snprintf(buf, size, "%.*s/%s", (int)(slash - ini), ini, value);
  return n > 0 && (size_t)n < size ? buf : value;
}

static int on_entry(void *user, const char *section, const char *name, const char *value,
                    int lineno) {
  struct reader *r = user;
  char origin[sizeof((struct wl_setting *)0)->origin], why[1024];
  size_t n = strlen(value);
  (void)lineno; /* r->line: the reader hands inih one line per call */
  if (r->error_line) return 0;
  struct wl_setting *s = wl_setting_find(section, name);
  if (!s) {
    unknown_key(r, section, name);
    return 0;
  }
  size_t i = setting_index(s);
  if (r->key_line[i]) {
    fail(r, r->line, "duplicate key '%s' in section [%s] (first on line %d)", name, section,
         r->key_line[i]);
    return 0;
  }
  if (n == 0) {
    fail(r, r->line, "%s.%s: empty value (delete the line to keep the default)", section, name);
    return 0;
  }
  if (n >= 2 && (value[0] == '"' || value[0] == '\'') && value[n - 1] == value[0]) {
    fail(r, r->line, "%s.%s: values are written without quotes: %s = %.*s, not %s = %s", section,
         name, name, (int)(n - 2), value + 1, name, value);
    return 0;
  }
  snprintf(origin, sizeof origin, "%s:%d", r->path, r->line);
  char beside[4096];
  value = relative_to_file(r->path, s, value, beside, sizeof beside);
  if (!wl_setting_assign(s, value, WL_FROM_INI, origin, why, sizeof why)) {
    fail(r, r->line, "%s.%s: %s", section, name, why);
    return 0;
  }
  r->key_line[i] = r->line;
  return 1;
}

/* ---- the file ---- */

static const char *file_kind(mode_t mode) {
  return S_ISDIR(mode)    ? "a directory"
         : S_ISFIFO(mode) ? "a FIFO (a pipe)"
         : S_ISSOCK(mode) ? "a socket"
         : S_ISCHR(mode)  ? "a character device"
         : S_ISBLK(mode)  ? "a block device"
                          : "not a regular file";
}

/* /dev/null reads as an empty file (--config /dev/null: no configuration). */
static bool null_device(const struct stat *st) {
  struct stat null;
  return S_ISCHR(st->st_mode) && stat("/dev/null", &null) == 0 && S_ISCHR(null.st_mode) &&
         st->st_rdev == null.st_rdev;
}

/* Reads a regular file whole (up to MAX_BYTES + 1 bytes) into *text. A FIFO is opened without
 * waiting for a writer, then refused, like anything else that is not a regular file. */
static bool read_file(const char *path, char **text, size_t *size, char *err, size_t errlen) {
  struct stat st;
  if (strcmp(path, "-") == 0) { /* the tools' name of standard input, which this is not read from */
    snprintf(err, errlen,
             "-: the configuration is not read from standard input: give a file (./- for a file "
             "named -)");
    return false;
  }
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
      snprintf(err, errlen, "%s: cannot read configuration: it is %s, not a file", path,
               file_kind(st.st_mode));
    else snprintf(err, errlen, "%s: cannot read configuration: %s", path, strerror(e));
    return false;
  }
  if (fstat(fd, &st) != 0) {
    snprintf(err, errlen, "%s: cannot read configuration: %s", path, strerror(errno));
    close(fd);
    return false;
  }
  if (!S_ISREG(st.st_mode) && !null_device(&st)) {
    snprintf(err, errlen, "%s: cannot read configuration: it is %s, not a file", path,
             file_kind(st.st_mode));
    close(fd);
    return false;
  }
  size_t cap = st.st_size > 0 && st.st_size <= MAX_BYTES ? (size_t)st.st_size + 1 : 4096, len = 0;
  char *buf = malloc(cap + 1);
  const char *why = buf ? NULL : strerror(ENOMEM);
  while (!why && len <= MAX_BYTES) {
    if (len == cap) {
      cap = cap * 2 > MAX_BYTES + 1 ? MAX_BYTES + 1 : cap * 2;
      char *bigger = realloc(buf, cap + 1);
      if (!bigger) why = strerror(ENOMEM);
      else buf = bigger;
      if (!bigger) break;
    }
    ssize_t got = read(fd, buf + len, cap - len);
    if (got < 0 && errno != EINTR) why = strerror(errno);
    if (got == 0) break;
    if (got > 0) len += (size_t)got;
  }
  if (close(fd) != 0 && !why) why = strerror(errno);
  if (why) {
    snprintf(err, errlen, "%s: cannot read configuration: %s", path, why);
    free(buf);
    return false;
  }
  buf[len] = '\0';
  *text = buf;
  *size = len;
  return true;
}

/* Debian's libinih: the options of the next parse, and what they were before. */
struct inih_options {
  bool use_stack, allow_realloc, multiline, bom, inline_comments, stop_on_first_error, no_value;
  int max_line, initial_alloc;
  char *start_prefixes, *inline_prefixes;
};

static struct inih_options inih_options(int buffer) {
  static char start[] = COMMENT_CHARS, inline_[] = COMMENT_CHARS;
  struct inih_options old = {ini_use_stack,
                             ini_allow_realloc,
                             ini_allow_multiline,
                             ini_allow_bom,
                             ini_allow_inline_comments,
                             ini_stop_on_first_error,
                             ini_allow_no_value,
                             ini_max_line,
                             ini_initial_alloc,
                             ini_start_comment_prefixes,
                             ini_inline_comment_prefixes};
  ini_use_stack = false;     /* a heap buffer of `buffer` bytes, not 200 on the stack */
  ini_allow_realloc = false; /* the buffer is long enough already */
  ini_max_line = ini_initial_alloc = buffer;
  ini_allow_multiline = false; /* an indented line is a line, not the value of the last key */
  ini_allow_bom = true;
  ini_allow_inline_comments = true;
  ini_start_comment_prefixes = start;
  ini_inline_comment_prefixes = inline_;
  ini_stop_on_first_error = true;
  ini_allow_no_value = false;
  return old;
}

static void inih_restore(const struct inih_options *o) {
  ini_use_stack = o->use_stack;
  ini_allow_realloc = o->allow_realloc;
  ini_allow_multiline = o->multiline;
  ini_allow_bom = o->bom;
  ini_allow_inline_comments = o->inline_comments;
  ini_stop_on_first_error = o->stop_on_first_error;
  ini_allow_no_value = o->no_value;
  ini_max_line = o->max_line;
  ini_initial_alloc = o->initial_alloc;
  ini_start_comment_prefixes = o->start_prefixes;
  ini_inline_comment_prefixes = o->inline_prefixes;
}

/* The error inih found itself on line n: a header without ']', a line without '=' or ':'. */
static void syntax_error(struct reader *r, int n) {
  const char *p = r->text, *end = r->text + r->size;
  char a[80];
  for (int i = 1; i < n && p < end; i++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    p = nl ? nl + 1 : end;
  }
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  const char *stop = nl ? nl : end;
  if (n == 1 && stop - p >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3;
  while (p < stop && (*p == ' ' || *p == '\t')) p++;
  while (stop > p && strchr(" \t\r", stop[-1])) stop--;
  shown(p, (size_t)(stop - p), a, sizeof a);
  if (p < stop && *p == '[' && memchr(p, ']', (size_t)(stop - p)))
    fail(r, n,
         "syntax error: the comment (a ';' or '#' after a blank) in the section header "
         "'%s' starts before its ']'",
         a);
  else if (p < stop && *p == '[')
    fail(r, n, "syntax error: the section header '%s' has no closing ']'", a);
  else fail(r, n, "syntax error: expected [section] or key = value, got '%s'", a);
}

bool wl_config_load(const char *path, char *err, size_t errlen, bool *io_error) {
  char *text;
  size_t size, longest = 0;
  *io_error = true;
  if (!read_file(path, &text, &size, err, errlen)) return false;
  struct reader r = {.path = path, .text = text, .size = size, .err = err, .errlen = errlen};
  for (size_t at = 0; at < size;) {
    const char *nl = memchr(text + at, '\n', size - at);
    size_t n = nl ? (size_t)(nl - (text + at)) + 1 : size - at;
    longest = n > longest ? n : longest;
    if (at + n > MAX_BYTES) {
      *io_error = false;
      fail(&r, r.line + 1,
           "the file is over %d bytes (1 MiB, the most a wlrun.ini may have) "
           "by this line",
           MAX_BYTES);
      free(text);
      return false;
    }
    at += n;
    r.line++;
  }
  r.line = 0;
  r.key_line = calloc(wl_settings_count(), sizeof *r.key_line);
  r.headers = calloc(wl_settings_count(), sizeof *r.headers);
  int rc = -2;
  if (r.key_line && r.headers) {
    struct inih_options old = inih_options((int)longest + 3);
    rc = ini_parse_stream(next_line, &r, on_entry, &r);
    inih_restore(&old);
  }
  if (rc == -2 || rc == -1) {
    snprintf(err, errlen, "%s: cannot read configuration: %s", path, strerror(ENOMEM));
  } else {
    *io_error = false;
    if (rc > 0 && (r.error_line == 0 || rc < r.error_line)) {
      r.error_line = 0;
      syntax_error(&r, rc);
    }
  }
  free(r.key_line);
  free(r.headers);
  free(text);
  return rc == 0 && r.error_line == 0;
}

/* The wlrun.ini of a run, as git finds its config: in the working directory, else in the
 * directories above it up to the root of the git repository holding it (the one with .git),
 * named relative to the working directory ("../../wlrun.ini"); outside a repository, the working
 * directory's only. A wlrun.ini that is there but cannot be read (a directory, a broken link) is
 * an error, not the absence of one. */
const char *wl_config_locate(const char *given) {
  enum { MAX_UP = 64 };
  static char found[3 * MAX_UP + 16];
  char up[3 * MAX_UP + 1] = "", probe[3 * MAX_UP + 16];
  struct stat st, here, parent;
  if (given) return given;
  if (lstat("wlrun.ini", &st) == 0) return "wlrun.ini";
  int root = -1; /* how many levels up the repository's root is (the directory holding .git) */
  for (int d = 0; d < MAX_UP && root < 0; d++) {
    snprintf(probe, sizeof probe, "%s.git", up);
    if (lstat(probe, &st) == 0) {
      root = d;
      break;
    }
    snprintf(probe, sizeof probe, "%s.", up);
    if (stat(probe, &here) != 0) break;
    snprintf(probe, sizeof probe, "%s..", up);
    if (stat(probe, &parent) != 0 || (here.st_ino == parent.st_ino && here.st_dev == parent.st_dev))
      break;
    memcpy(up + 3 * d, "../", 4); /* the file system's root is its own parent: stopped above */
  }
  for (int d = 1; d <= root; d++) {
    snprintf(found, sizeof found, "%.*swlrun.ini", 3 * d, up);
    if (lstat(found, &st) == 0) return found;
  }
  return NULL;
}
