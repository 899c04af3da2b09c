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
    {"run", "mode", WL_ENUM, "auto", 0, 0, "cold|batch|graph|host|auto|cupti",
     "timing mode: cold, batch, graph, host, auto or cupti (kernel time through CUPTI)"},
    {"run", "warmup", WL_INT, "50", 0, 1e9, NULL, "warmup iterations per configuration"},
    {"run", "warmup_time", WL_DURATION, "0", 0, 86400, NULL,
     "minimum warmup time per configuration"},
    {"run", "iters", WL_INT, "100", 1, 1e9, NULL, "measured iterations per configuration"},
    {"run", "flush_l2", WL_BOOL, "false", 0, 0, NULL, "flush the L2 cache before each cold sample"},
    {"run", "lock_clocks", WL_CLOCKS, "off", 100, 10000, NULL,
     "lock the SM clock for the run: off, base, max or MHz (NVML, where permitted)"},
    {"run", "seed", WL_INT, "0", 0, 9007199254740991.0, NULL,
     "seed of random tensor initialisation"},
    {"run", "device", WL_INT, "0", 0, 1023, NULL, "CUDA device index"},
    {"run", "nvtx", WL_BOOL, "true", 0, 0, NULL, "emit automatic NVTX ranges"},
    {"run", "isolate", WL_BOOL, "false", 0, 0, NULL, "run each configuration in a child process"},
    {"run", "config_timeout", WL_DURATION, "0", 0, 604800, NULL,
     "per-configuration timeout (0: none)"},
    {"run", "prepare", WL_BOOL, "true", 0, 0, NULL,
     "call the scenario's prepare (libraries' first-use costs paid ahead, on a thread)"},
    {"adaptive", "enabled", WL_BOOL, "false", 0, 0, NULL, "adaptive stopping"},
    {"adaptive", "target_noise", WL_PERCENT, "0.5%", 1e-6, 1, NULL,
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
    {"compile", "compiler", WL_ENUM, "nvrtc", 0, 0, "nvrtc|nvcc",
     "compiler of wl.kernel's source where it names none: nvrtc or nvcc"},
    {"compile", "cache_dir", WL_STRING, NULL, 0, 0, NULL, "directory of the compiled-kernel cache"},
    {"compile", "cache", WL_BOOL, "true", 0, 0, NULL, "use the compiled-kernel cache"},
    {"history", "db", WL_STRING, NULL, 0, 0, NULL,
     "the history database (wlrun history; docs/history.md)"},
};

#define NSETTINGS (sizeof defaults / sizeof defaults[0])
static struct wl_setting table[NSETTINGS];
static const struct wl_arch_support *arch_support;

void wl_settings_set_arch_support(const struct wl_arch_support *support) { arch_support = support; }

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
    if (defaults[i].fallback &&
        !wl_setting_assign(&table[i], defaults[i].fallback, WL_FROM_DEFAULT, "", err, sizeof err)) {
      fprintf(stderr, "wlrun: internal error: default of %s.%s: %s\n", defaults[i].section,
              defaults[i].name, err);
      abort();
    }
  }
}

size_t wl_settings_count(void) { return NSETTINGS; }
struct wl_setting *wl_setting_at(size_t i) {
  return i < NSETTINGS ? &table[i] : NULL;
}

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
  static const struct {
    const char *unit;
    double scale;
  } units[] = {{"", 1},      {"s", 1},  {"ms", 1e-3}, {"us", 1e-6},
               {"ns", 1e-9}, {"m", 60}, {"min", 60},  {"h", 3600}};
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

/* A percentage means percent, with or without its sign: "0.5" and "0.5%" are both 0.005. */
bool wl_parse_percent(const char *text, double *fraction) {
  const char *rest;
  double v;
  if (!number_with_suffix(text, &v, &rest)) return false;
  if (rest[0] == '%') rest = skip_space(rest + 1);
  if (*rest != '\0') return false;
  *fraction = v / 100.0;
  return true;
}

bool wl_parse_bool(const char *text, bool *out) {
  static const char *yes[] = {"true", "on", "yes", "1"}, *no[] = {"false", "off", "no", "0"};
  for (size_t i = 0; i < 4; i++) {
    if (strcasecmp(text, yes[i]) == 0) {
      *out = true;
      return true;
    }
    if (strcasecmp(text, no[i]) == 0) {
      *out = false;
      return true;
    }
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
  /* a whole bound in full (2^53 - 1, not 9.00719925474099e+15) */
  const char *lo = s->min == floor(s->min) && fabs(s->min) < 1e17 ? "%.0f" : "%.15g";
  const char *hi = s->max == floor(s->max) && fabs(s->max) < 1e17 ? "%.0f" : "%.15g";
  char a[40], b[40];
  snprintf(a, sizeof a, lo, s->min);
  snprintf(b, sizeof b, hi, s->max);
  if (s->max >= BIG) snprintf(buf, len, "%s >= %s", what, a);
  else snprintf(buf, len, "%s from %s to %s", what, a, b);
}

/* "sm_90", "sm_90a", "sm_100f": the number and the suffix ('\0', 'a' or 'f') */
static bool parse_arch(const char *text, int *number, char *suffix) {
  if (strncmp(text, "sm_", 3) != 0) return false; /* text may be shorter than "sm_" */
  size_t digits = strspn(text + 3, "0123456789");
  if (digits < 2 || digits > 3) return false;
  const char *rest = text + 3 + digits;
  *suffix = *rest == 'a' || *rest == 'f' ? *rest++ : '\0';
  *number = atoi(text + 3);
  return *rest == '\0';
}

/* whether the compiler (main installs NVRTC's answers) compiles for this architecture */
static bool arch_supported(const char *text, int number, char suffix) {
  int archs[128];
  int n = arch_support ? arch_support->list(archs, 128) : 0;
  if (n <= 0) return true; /* nothing to ask: the form alone is checked */
  bool listed = false;
  for (int i = 0; i < n; i++) listed = listed || archs[i] == number;
  return listed && (!suffix || arch_support->accepts(text));
}

static void describe_archs(char *buf, size_t len) {
  int archs[128];
  int n = arch_support ? arch_support->list(archs, 128) : 0;
  if (n <= 0) {
    snprintf(buf, len, "a GPU architecture like sm_90 or sm_90a");
    return;
  }
  size_t used = (size_t)snprintf(buf, len, "a GPU architecture like sm_90 that %s compiles for (",
                                 arch_support->name());
  for (int i = 0; i < n && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%ssm_%d", i ? ", " : "", archs[i]);
  if (used < len) snprintf(buf + used, len - used, "; a or f after the number where it has one)");
}

void wl_setting_describe(const struct wl_setting *s, char *buf, size_t len) {
  switch (s->type) {
  case WL_INT: describe_bounds(s, buf, len, "a whole number"); break;
  case WL_NUMBER: describe_bounds(s, buf, len, "a number"); break;
  case WL_DURATION:
    snprintf(buf, len, "a duration from %gs to %gs (like 2s, 500ms, 50us)", s->min, s->max);
    break;
  case WL_PERCENT:
    snprintf(buf, len, "a percentage from %g%% to %g%% (like 0.5 or 0.5%%)", s->min * 100,
             s->max * 100);
    break;
  case WL_BOOL: snprintf(buf, len, "true/false (on/off, yes/no, 1/0)"); break;
  case WL_ENUM: snprintf(buf, len, "one of %s", s->words); break;
  case WL_ARCH: describe_archs(buf, len); break;
  case WL_STRING: snprintf(buf, len, "a value"); break;
  case WL_CLOCKS:
    snprintf(buf, len, "off, base, max or a clock in MHz (%.0f to %.0f)", s->min, s->max);
    break;
  }
}

bool wl_setting_check(const struct wl_setting *s, const char *text, double *value, char *err,
                      size_t errlen) {
  double v = 0;
  bool ok = true;
  switch (s->type) {
  case WL_INT: {
    long long i = 0;
    ok = wl_parse_int(text, &i) && (double)i >= s->min && (double)i <= s->max;
    v = (double)i;
    break;
  }
  case WL_NUMBER: ok = wl_parse_number(text, &v) && v >= s->min && v <= s->max; break;
  case WL_DURATION: ok = wl_parse_duration(text, &v) && v >= s->min && v <= s->max; break;
  case WL_PERCENT: ok = wl_parse_percent(text, &v) && v >= s->min && v <= s->max; break;
  case WL_BOOL: {
    bool b = false;
    ok = wl_parse_bool(text, &b);
    v = b;
    break;
  }
  case WL_ENUM: ok = enum_has(s->words, text); break;
  case WL_ARCH: {
    int number = 0;
    char suffix = '\0';
    ok = parse_arch(text, &number, &suffix) && arch_supported(text, number, suffix);
    break;
  }
  case WL_STRING: ok = *text != '\0'; break;
  case WL_CLOCKS: {
    size_t digits = strspn(text, "0123456789");
    long mhz = digits > 0 && digits < 6 && text[digits] == '\0' ? strtol(text, NULL, 10) : -1;
    ok = enum_has("off|base|max", text) || (mhz >= s->min && mhz <= s->max);
    break;
  }
  }
  if (!ok) {
    char expected[1024];
    wl_setting_describe(s, expected, sizeof expected);
    snprintf(err, errlen, "expected %s, got '%s'", expected, text);
    return false;
  }
  if (strlen(text) >= sizeof s->text) {
    snprintf(err, errlen, "value longer than %zu characters", sizeof s->text - 1);
    return false;
  }
  *value = v;
  return true;
}

bool wl_setting_assign(struct wl_setting *s, const char *text, enum wl_source source,
                       const char *origin, char *err, size_t errlen) {
  double v;
  if (!wl_setting_check(s, text, &v, err, errlen)) return false;
  snprintf(s->text, sizeof s->text, "%s", text);
  snprintf(s->origin, sizeof s->origin, "%s", origin);
  s->number = v;
  s->source = source;
  s->set = true;
  return true;
}
