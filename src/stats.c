#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void wl_sort_doubles(double *x, size_t n) { qsort(x, n, sizeof *x, cmp_double); }

double wl_percentile_sorted(const double *sorted, size_t n, double p) {
  if (n == 0) return NAN;
  if (p <= 0) return sorted[0];
  if (p >= 100) return sorted[n - 1];
  double rank = p / 100.0 * (double)(n - 1);
  size_t lo = (size_t)floor(rank);
  double frac = rank - (double)lo;
  if (lo + 1 >= n) return sorted[n - 1];
  return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

bool wl_stats_summarize(const double *samples, size_t n, struct wl_summary *out) {
  if (n == 0) return false;
  for (size_t i = 0; i < n; i++)
    if (!isfinite(samples[i])) return false;
  double *x = malloc(n * sizeof *x);
  if (!x) return false;
  memcpy(x, samples, n * sizeof *x);
  wl_sort_doubles(x, n);

  /* two passes: the mean, then squared deviations from it (stable for tight samples) */
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += x[i];
  double mean = sum / (double)n, ss = 0;
  for (size_t i = 0; i < n; i++) ss += (x[i] - mean) * (x[i] - mean);

  struct wl_summary s = {.n = n, .mean = mean, .min = x[0], .max = x[n - 1]};
  s.std = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
  s.median = wl_percentile_sorted(x, n, 50);
  s.p10 = wl_percentile_sorted(x, n, 10);
  s.p25 = wl_percentile_sorted(x, n, 25);
  s.p75 = wl_percentile_sorted(x, n, 75);
  s.p90 = wl_percentile_sorted(x, n, 90);
  s.p99 = wl_percentile_sorted(x, n, 99);
  s.iqr = s.p75 - s.p25;
  s.cv = mean != 0 ? s.std / fabs(mean) : NAN;
  free(x);
  *out = s;
  return true;
}
