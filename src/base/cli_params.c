#include "cli_params.h"

#include "settings.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool push(struct wl_param_override *p, const char *text, size_t len, size_t *cap) {
  if (p->nvalues >= WL_PARAM_MAX_VALUES) return false;
  if (p->nvalues == *cap) {
    size_t ncap = *cap ? *cap * 2 : 8;
    char **nv = realloc(p->values, ncap * sizeof *nv);
    if (!nv) return false;
    p->values = nv;
    *cap = ncap;
  }
  char *v = malloc(len + 1);
  if (!v) return false;
  memcpy(v, text, len);
  v[len] = '\0';
  p->values[p->nvalues++] = v;
  return true;
}

/* An integer range (LO, HI and the step integers; the checks of expand_range passed): expanded in
 * int64, exactly, where a double would round past 2^53. Returns 0 when the parts are not all
 * integers, 1 when it expanded, -1 on error. */
static int expand_int_range(struct wl_param_override *p, const char *item, char **parts, int n,
                            bool mul, size_t *cap, char *err, size_t errlen) {
  long long lo, hi, step = mul ? 2 : 1;
  const char *st = n == 3 ? parts[2] + (parts[2][0] == '*' || parts[2][0] == '+') : "1";
  if (!wl_parse_int(parts[0], &lo) || !wl_parse_int(parts[1], &hi) || !wl_parse_int(st, &step))
    return 0;
  if (hi < lo) { /* the check in doubles cannot tell ends that round to one double */
    snprintf(err, errlen, "range '%s': the end is below the start", item);
    return -1;
  }
  unsigned long long count = 0;
  if (mul) {
    for (long long v = lo;; v *= step) {
      count++;
      if (v > hi / step) break; /* the next would pass hi (or overflow) */
    }
  } else { /* the steps after lo fit in 64 bits unsigned; the values, one more, may not */
    unsigned long long steps =
        ((unsigned long long)hi - (unsigned long long)lo) / (unsigned long long)step;
    if (steps >= WL_PARAM_MAX_VALUES) {
      char values[32] = "18446744073709551616"; /* 2^64: every int64 */
      if (steps < ULLONG_MAX) snprintf(values, sizeof values, "%llu", steps + 1);
      snprintf(err, errlen, "range '%s' has %s values (at most %d)", item, values,
               WL_PARAM_MAX_VALUES);
      return -1;
    }
    count = steps + 1;
  }
  if (count > WL_PARAM_MAX_VALUES) {
    snprintf(err, errlen, "range '%s' has %llu values (at most %d)", item, count,
             WL_PARAM_MAX_VALUES);
    return -1;
  }
  long long v = lo;
  for (unsigned long long i = 0; i < count; i++) {
    char num[32];
    int len = snprintf(num, sizeof num, "%lld", v);
    if (!push(p, num, (size_t)len, cap)) {
      snprintf(err, errlen, "too many values (at most %d)", WL_PARAM_MAX_VALUES);
      return -1;
    }
    if (i + 1 < count) v = mul ? v * step : v + step; /* within [lo, hi]: no overflow */
  }
  return 1;
}

/* "LO:HI" or "LO:HI:STEP" with numeric LO and HI; returns 0 when item is not a range,
 * 1 when it expanded, -1 on error (message in err). */
static int expand_range(struct wl_param_override *p, const char *item, size_t *cap, char *err,
                        size_t errlen) {
  char buf[256], *parts[3] = {0};
  if (strlen(item) >= sizeof buf) return 0;
  snprintf(buf, sizeof buf, "%s", item);
  int n = 0;
  for (char *s = buf, *c; n < 3; s = c + 1) {
    parts[n++] = s;
    if (!(c = strchr(s, ':'))) break;
    *c = '\0';
  }
  if (n < 2 || strchr(parts[n - 1], ':')) return 0;
  double lo, hi, step = 1;
  bool mul = false;
  if (!wl_parse_number(parts[0], &lo) || !wl_parse_number(parts[1], &hi)) return 0;
  if (n == 3) {
    const char *s = parts[2];
    if (*s == '*') mul = true;
    if (*s == '*' || *s == '+') s++;
    if (!wl_parse_number(s, &step)) {
      snprintf(err, errlen, "range '%s': step '%s' is not a number (use N, +N or *N)", item,
               parts[2]);
      return -1;
    }
  }
  if (mul ? step <= 1 : step <= 0) {
    snprintf(err, errlen, "range '%s': the step must be %s", item,
             mul ? "a factor above 1 (like *2)" : "above 0");
    return -1;
  }
  if (hi < lo || (mul && lo <= 0)) {
    snprintf(err, errlen, "range '%s': %s", item,
             hi < lo ? "the end is below the start" : "a multiplicative range must start above 0");
    return -1;
  }
  int exact = expand_int_range(p, item, parts, n, mul, cap, err, errlen);
  if (exact) return exact;
  /* count first so that a huge range is refused before anything is allocated */
  double count =
      mul ? floor(log(hi / lo) / log(step) + 1e-9) + 1 : floor((hi - lo) / step + 1e-9) + 1;
  if (count > WL_PARAM_MAX_VALUES) {
    snprintf(err, errlen, "range '%s' has %.0f values (at most %d)", item, count,
             WL_PARAM_MAX_VALUES);
    return -1;
  }
  for (long i = 0; i < (long)count; i++) {
    double v = mul ? lo * pow(step, (double)i) : lo + step * (double)i;
    char num[64];
    int len = snprintf(num, sizeof num, "%.17g", v);
    if (v == floor(v) && fabs(v) < 9007199254740992.0) len = snprintf(num, sizeof num, "%.0f", v);
    if (!push(p, num, (size_t)len, cap)) {
      snprintf(err, errlen, "too many values (at most %d)", WL_PARAM_MAX_VALUES);
      return -1;
    }
  }
  return 1;
}

bool wl_param_parse(const char *text, struct wl_param_override *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  char shown[80]; /* the option as the messages show it: its start, so that the reason fits after it
                   */
  snprintf(shown, sizeof shown, "%.60s%s", text, strlen(text) > 60 ? "..." : "");
  const char *eq = strchr(text, '=');
  if (!eq) {
    snprintf(err, errlen, "-p '%s': expected NAME=VALUE[,VALUE...]", shown);
    return false;
  }
  size_t nlen = (size_t)(eq - text);
  bool ident =
      nlen > 0 && nlen < sizeof out->name && (isalpha((unsigned char)text[0]) || text[0] == '_');
  for (size_t i = 0; ident && i < nlen; i++)
    ident = isalnum((unsigned char)text[i]) || text[i] == '_';
  if (!ident) {
    snprintf(err, errlen, "-p '%s': '%.*s' is not a parameter name (letters, digits, _)", shown,
             (int)(nlen > 60 ? 60 : nlen), text);
    return false;
  }
  memcpy(out->name, text, nlen);
  size_t cap = 0;
  const char *s = eq + 1;
  for (size_t nvalue = 1;; nvalue++) {
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    char item[256];
    if (len == 0 || len >= sizeof item) {
      if (len)
        snprintf(err, errlen, "-p '%s': value %zu is %zu bytes long (at most %zu)", shown, nvalue,
                 len, sizeof item - 1);
      else snprintf(err, errlen, "-p '%s': value %zu is empty", shown, nvalue);
      wl_param_free(out);
      return false;
    }
    memcpy(item, s, len);
    item[len] = '\0';
    int r = expand_range(out, item, &cap, err, errlen);
    if (r < 0 || (r == 0 && !push(out, item, len, &cap))) {
      if (r == 0) snprintf(err, errlen, "-p '%s': too many values", shown);
      wl_param_free(out);
      return false;
    }
    if (!comma) break;
    s = comma + 1;
  }
  return true;
}

void wl_param_free(struct wl_param_override *p) {
  for (size_t i = 0; i < p->nvalues; i++) free(p->values[i]);
  free(p->values);
  p->values = NULL;
  p->nvalues = 0;
}
