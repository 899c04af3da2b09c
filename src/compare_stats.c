/* The bootstrap and the rank sum of `wlrun compare` (compare_stats.h). Built with
 * -ffp-contract=off: a fused multiply-add would change the last digit of an interval. */
#include "compare_stats.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t wl_splitmix64_next(uint64_t *state) {
  uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

double wl_median_sorted(const double *sorted, size_t n) {
  if (n == 0) return NAN;
  if (n % 2 == 1) return sorted[n / 2];
  return (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

double wl_quantile_type7(const double *sorted, size_t n, double p) {
  if (n == 0) return NAN;
  double h = (double)(n - 1) * p + 1;
  double lo = floor(h);
  if (lo >= (double)n) return sorted[n - 1];
  if (lo < 1) return sorted[0];
  size_t i = (size_t)lo; /* 1-based, as in Lua */
  return sorted[i - 1] + (h - lo) * (sorted[i] - sorted[i - 1]);
}

/* The median of one resample of an ascending array: n draws counted per index, then the k-th
 * smallest index drawn (no values copied or sorted). `counts` has n entries. */
static double resample_median(const double *sorted, size_t n, uint32_t *counts, uint64_t *state) {
  memset(counts, 0, n * sizeof *counts);
  /* a plain division: faster here than Lemire's fastmod or a floating-point reciprocal */
  for (size_t i = 0; i < n; i++) counts[(wl_splitmix64_next(state) >> 11) % n]++;
  size_t k = (n + 1) / 2, c = 0, j = 0;
  for (;; j++) {
    c += counts[j];
    if (c >= k) break;
  }
  /* odd n: the k-th; even n: the mean of the k-th and the (k+1)-th, the same index when more
   * than k draws reach it */
  if (n % 2 == 1 || c > k) return sorted[j];
  double lo = sorted[j];
  do j++;
  while (counts[j] == 0);
  return (lo + sorted[j]) / 2;
}

bool wl_bootstrap_ratio(const double *sorted_base, size_t n1, const double *sorted_new, size_t n2,
                        size_t resamples, double confidence, uint64_t seed, double *log_replicates,
                        double *lo, double *hi) {
  uint32_t *counts = malloc((n1 > n2 ? n1 : n2) * sizeof *counts);
  double *ratios = malloc((resamples ? resamples : 1) * sizeof *ratios);
  if (!counts || !ratios) {
    free(counts);
    free(ratios);
    return false;
  }
  uint64_t state = seed;
  for (size_t r = 0; r < resamples; r++) {
    double m1 = resample_median(sorted_base, n1, counts, &state);
    double q = resample_median(sorted_new, n2, counts, &state) / m1;
    ratios[r] = q;
    if (log_replicates) log_replicates[r] = log(q);
  }
  free(counts);
  wl_sort_doubles(ratios, resamples);
  double tail = (1 - confidence) / 2;
  *lo = wl_quantile_type7(ratios, resamples, tail);
  *hi = wl_quantile_type7(ratios, resamples, 1 - tail);
  free(ratios);
  return true;
}

void wl_rank_sum(const double *sorted_a, size_t n1, const double *sorted_b, size_t n2,
                 struct wl_rank_sum *out) {
  double r1 = 0;
  int64_t ties = 0;
  size_t i = 0, j = 0, below = 0; /* values ranked so far */
  while (i < n1 || j < n2) {
    double v = i == n1 ? sorted_b[j] : j == n2 ? sorted_a[i] : fmin(sorted_a[i], sorted_b[j]);
    size_t ta = 0, tb = 0;
    while (i < n1 && sorted_a[i] == v) i++, ta++;
    while (j < n2 && sorted_b[j] == v) j++, tb++;
    int64_t t = (int64_t)(ta + tb);
    double rank = (double)(2 * below + 1 + (size_t)t) / 2; /* (first + last) / 2, 1-based */
    if (t > 1) ties += t * t * t - t;
    for (size_t k = 0; k < ta; k++) r1 += rank;
    below += (size_t)t;
  }
  out->r1 = r1;
  out->ties = ties;
}
