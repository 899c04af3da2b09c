#include "settings.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BIG 1e18

/* Defaults follow the methodology: warmup 50, iters 100, cold mode. */
static const struct wl_setting defaults[] = {
    {"run", "mode", WL_ENUM, "auto", 0, 0, "cold|batch|graph|host|auto",
     "timing mode: cold, batch, graph, host or auto"},
    {"run", "warmup", WL_INT, "50", 0, 1e9, NULL, "warmup iterations per configuration"},
    {"run", "warmup_time", WL_DURATION, "0", 0, 86400, NULL,
     "minimum warmup time per configuration"},
    {"run", "iters", WL_INT, "100", 1, 1e9, NULL, "measured iterations per configuration"},
    {"run", "flush_l2", WL_BOOL, "false", 0, 0, NULL, "flush the L2 cache before each cold sample"},
    {"run", "seed", WL_INT, "0", 0, 9007199254740991.0, NULL, "seed of random tensor initialisation"},
    {"run", "device", WL_INT, "0", 0, 1023, NULL, "CUDA device index"},
    {"run", "nvtx", WL_BOOL, "true", 0, 0, NULL, "emit automatic NVTX ranges"},
    {"run", "isolate", WL_BOOL, "false", 0, 0, NULL, "run each configuration in a child process"},
    {"run", "config_timeout", WL_DURATION, "0", 0, 604800, NULL,
     "per-configuration timeout (0: none)"},
    {"adaptive", "enabled", WL_BOOL, "false", 0, 0, NULL, "adaptive stopping"},
    {"adaptive", "target_noise", WL_PERCENT, "0.005", 1e-6, 1, NULL,
     "relative noise of the estimate to reach"},
    {"adaptive", "min_samples", WL_INT, "10", 1, 1e9, NULL, "minimum samples"},
    {"adaptive", "min_time", WL_DURATION, "0", 0, 86400, NULL, "minimum measuring time"},
    {"adaptive", "max_time", WL_DURATION, "15", 0, 86400, NULL, "measuring time limit"},
    {"output", "format", WL_ENUM, "table", 0, 0, "table|plain|csv|markdown|json",
     "format of standard output"},
    {"output", "quiet", WL_BOOL, "false", 0, 0, NULL, "print only results and errors"},
    {"output", "progress", WL_BOOL, "true", 0, 0, NULL, "progress on stderr when it is a terminal"},
    {"compile", "arch", WL_ARCH, NULL, 0, 0, NULL,
     "target architecture (sm_90) when compiling without a device"},
    {"compile", "cache_dir", WL_STRING, NULL, 0, 0, NULL, "directory of the compiled-kernel cache"},
    {"compile", "cache", WL_BOOL, "true", 0, 0, NULL, "use the compiled-kernel cache"},
};

#define NSETTINGS (sizeof defaults / sizeof defaults[0])
static struct wl_setting table[NSETTINGS];

const char *wl_source_name(enum wl_source s) {
  switch (s) {
  case WL_FROM_INI: return "ini";
  case WL_FROM_CLI: return "cli";
  default: return "default";
  }
}

void wl_settings_reset(void) {
  char err[256];
  for (size_t i = 0; i < NSETTINGS; i++) {
    table[i] = defaults[i];
    table[i].set = false;
    if (defaults[i].fallback && !wl_setting_assign(&table[i], defaults[i].fallback,
                                                   WL_FROM_DEFAULT, "", err, sizeof err)) {
      fprintf(stderr, "wlrun: internal error: default of %s.%s: %s\n", defaults[i].section,
              defaults[i].name, err);
      abort();
    }
  }
}

size_t wl_settings_count(void) { return NSETTINGS; }
struct wl_setting *wl_setting_at(size_t i) { return i < NSETTINGS ? &table[i] : NULL; }

struct wl_setting *wl_setting_find(const char *section, const char *name) {
  for (size_t i = 0; i < NSETTINGS; i++)
    if (strcmp(table[i].section, section) == 0 && strcmp(table[i].name, name) == 0)
      return &table[i];
  return NULL;
}

struct wl_setting *wl_setting_find_name(const char *name) {
  for (size_t i = 0; i < NSETTINGS; i++)
    if (strcmp(table[i].name, name) == 0) return &table[i];
  return NULL;
}

static const char *skip_space(const char *p) {
  while (isspace((unsigned char)*p)) p++;
  return p;
}

/* Whole-string conversions: leading/trailing spaces allowed, nothing else. */
bool wl_parse_int(const char *text, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (end == text || errno == ERANGE || *skip_space(end) != '\0') return false;
  *out = v;
  return true;
}

static bool number_with_suffix(const char *text, double *out, const char **suffix) {
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (end == text || errno == ERANGE || !isfinite(v)) return false;
  /* strtod accepts "nan", "inf" and hex floats; only plain decimals are settings */
  for (const char *p = skip_space(text); p < end; p++)
    if (!(isdigit((unsigned char)*p) || *p == '.' || *p == '-' || *p == '+' || *p == 'e' ||
          *p == 'E'))
      return false;
  *out = v;
  *suffix = skip_space(end);
  return true;
}

bool wl_parse_number(const char *text, double *out) {
  const char *rest;
  return number_with_suffix(text, out, &rest) && *rest == '\0';
}

bool wl_parse_duration(const char *text, double *seconds) {
  static const struct { const char *unit; double scale; } units[] = {
      {"", 1}, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"m", 60}, {"min", 60}, {"h", 3600}};
  const char *rest;
  double v;
  if (!number_with_suffix(text, &v, &rest)) return false;
  size_t n = strlen(rest);
  while (n > 0 && isspace((unsigned char)rest[n - 1])) n--;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (strlen(units[i].unit) == n && strncmp(rest, units[i].unit, n) == 0) {
      *seconds = v * units[i].scale;
      return true;
    }
  return false;
}

bool wl_parse_percent(const char *text, double *fraction) {
  const char *rest;
  double v;
  if (!number_with_suffix(text, &v, &rest)) return false;
  if (*rest == '\0') { *fraction = v; return true; }
  if (rest[0] == '%' && *skip_space(rest + 1) == '\0') { *fraction = v / 100.0; return true; }
  return false;
}

bool wl_parse_bool(const char *text, bool *out) {
  static const char *yes[] = {"true", "on", "yes", "1"}, *no[] = {"false", "off", "no", "0"};
  for (size_t i = 0; i < 4; i++) {
    if (strcasecmp(text, yes[i]) == 0) { *out = true; return true; }
    if (strcasecmp(text, no[i]) == 0) { *out = false; return true; }
  }
  return false;
}

static bool enum_has(const char *words, const char *w) {
  size_t n = strlen(w);
  for (const char *p = words; *p;) {
    const char *bar = strchr(p, '|');
    size_t len = bar ? (size_t)(bar - p) : strlen(p);
    if (len == n && strncmp(p, w, n) == 0) return true;
    if (!bar) break;
    p = bar + 1;
  }
  return false;
}

static void describe_bounds(const struct wl_setting *s, char *buf, size_t len, const char *what) {
  if (s->max >= BIG || s->max >= 9e15)
    snprintf(buf, len, "%s >= %.15g", what, s->min);
  else
    snprintf(buf, len, "%s from %.15g to %.15g", what, s->min, s->max);
}

bool wl_setting_assign(struct wl_setting *s, const char *text, enum wl_source source,
                       const char *origin, char *err, size_t errlen) {
  double v = 0;
  char bounds[128];
  switch (s->type) {
  case WL_INT: {
    long long i;
    describe_bounds(s, bounds, sizeof bounds, "a whole number");
    if (!wl_parse_int(text, &i) || (double)i < s->min || (double)i > s->max) {
      snprintf(err, errlen, "expected %s, got '%s'", bounds, text);
      return false;
    }
    v = (double)i;
    break;
  }
  case WL_NUMBER:
    describe_bounds(s, bounds, sizeof bounds, "a number");
    if (!wl_parse_number(text, &v) || v < s->min || v > s->max) {
      snprintf(err, errlen, "expected %s, got '%s'", bounds, text);
      return false;
    }
    break;
  case WL_DURATION:
    if (!wl_parse_duration(text, &v) || v < s->min || v > s->max) {
      snprintf(err, errlen,
               "expected a duration from %gs to %gs (like 2s, 500ms, 50us), got '%s'", s->min,
               s->max, text);
      return false;
    }
    break;
  case WL_PERCENT:
    if (!wl_parse_percent(text, &v) || v < s->min || v > s->max) {
      snprintf(err, errlen, "expected a percentage from %g%% to %g%% (like 0.5%%), got '%s'",
               s->min * 100, s->max * 100, text);
      return false;
    }
    break;
  case WL_BOOL: {
    bool b;
    if (!wl_parse_bool(text, &b)) {
      snprintf(err, errlen, "expected true/false (on/off, yes/no, 1/0), got '%s'", text);
      return false;
    }
    v = b;
    break;
  }
  case WL_ENUM:
    if (!enum_has(s->words, text)) {
      snprintf(err, errlen, "expected one of %s, got '%s'", s->words, text);
      return false;
    }
    break;
  case WL_ARCH: {
    size_t n = strlen(text);
    size_t digits = strncmp(text, "sm_", 3) == 0 ? strspn(text + 3, "0123456789") : 0; /* text may be short */
    if (digits < 2 || digits > 3 ||
        n > 3 + digits + (text[3 + digits] == 'a' || text[3 + digits] == 'f')) {
      snprintf(err, errlen, "expected a GPU architecture like sm_90 or sm_90a, got '%s'", text);
      return false;
    }
    break;
  }
  case WL_STRING:
    if (*text == '\0') {
      snprintf(err, errlen, "expected a value, got an empty string");
      return false;
    }
    break;
  }
  if (strlen(text) >= sizeof s->text) {
    snprintf(err, errlen, "value longer than %zu characters", sizeof s->text - 1);
    return false;
  }
  snprintf(s->text, sizeof s->text, "%s", text);
  snprintf(s->origin, sizeof s->origin, "%s", origin);
  s->number = v;
  s->source = source;
  s->set = true;
  return true;
}
