#include "config.h"

#include "settings.h"

#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct reader {
  FILE *file;
  const char *path;
  int line;       /* number of the line last handed to inih */
  int error_line; /* first line with an error, 0 if none */
  char *err;
  size_t errlen;
};

/* inih reads through this so that the handler knows the line it is called for. */
static char *read_line(char *buf, int size, void *stream) {
  struct reader *r = stream;
  char *got = fgets(buf, size, r->file);
  if (got) r->line++;
  return got;
}

static void fail(struct reader *r, const char *fmt, const char *a, const char *b, const char *c) {
  if (r->error_line) return;
  r->error_line = r->line;
  int n = snprintf(r->err, r->errlen, "%s:%d: ", r->path, r->line);
  if (n > 0 && (size_t)n < r->errlen) snprintf(r->err + n, r->errlen - (size_t)n, fmt, a, b, c);
}

static int on_entry(void *user, const char *section, const char *name, const char *value) {
  struct reader *r = user;
  char origin[320], why[256];
  if (r->error_line) return 1;
  struct wl_setting *s = wl_setting_find(section, name);
  if (!s) {
    int known_section = 0;
    for (size_t i = 0; i < wl_settings_count(); i++)
      if (strcmp(wl_setting_at(i)->section, section) == 0) known_section = 1;
    if (!known_section)
      fail(r, "unknown section [%s]%s%s (sections: run, adaptive, output, compile)", section,
           *section ? "" : " (a key before any section)", "");
    else
      fail(r, "unknown key '%s' in section [%s]%s", name, section, "");
    return 0;
  }
  snprintf(origin, sizeof origin, "%s:%d", r->path, r->line);
  if (!wl_setting_assign(s, value, WL_FROM_INI, origin, why, sizeof why)) {
    fail(r, "%s.%s: %s", section, name, why);
    return 0;
  }
  return 1;
}

bool wl_config_load(const char *path, char *err, size_t errlen, bool *io_error) {
  struct reader r = {.path = path, .err = err, .errlen = errlen};
  *io_error = false;
  r.file = fopen(path, "r");
  if (!r.file) {
    snprintf(err, errlen, "%s: cannot read configuration: %s", path, strerror(errno));
    *io_error = true;
    return false;
  }
  int rc = ini_parse_stream(read_line, &r, on_entry, &r);
  fclose(r.file);
  if (r.error_line) return false;
  if (rc != 0) {
    /* a line inih itself could not parse: no '=' or ':', or an unclosed section header */
    snprintf(err, errlen, "%s:%d: syntax error (expected [section] or key = value)", path,
             rc > 0 ? rc : r.line);
    *io_error = rc < 0;
    return false;
  }
  return true;
}

const char *wl_config_locate(const char *given) {
  if (given) return given;
  return access("wlrun.ini", F_OK) == 0 ? "wlrun.ini" : NULL;
}
