/* The bootstrap and the rank sum of `wlrun compare` (compare_stats.h). Built with
 * -ffp-contract=off: a fused multiply-add would change the last digit of an interval. */
#include "compare_stats.h"
#include "stats.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* A range of resamples [r0, r1): splitmix64 is a counter, so the state before resample r is the
 * seed advanced by r (n1 + n2) draws, and ranges run on their own threads with the stream of
 * one sequential run. */
struct span {
  const double *base, *new;
  size_t n1, n2, r0, r1;
  uint64_t seed;
  double *ratios, *logs;
  uint32_t *counts;
};

static void *run_span(void *arg) {
  struct span *s = arg;
  uint64_t state =
      s->seed + (uint64_t)s->r0 * (uint64_t)(s->n1 + s->n2) * UINT64_C(0x9E3779B97F4A7C15);
  for (size_t r = s->r0; r < s->r1; r++) {
    double m1 = resample_median(s->base, s->n1, s->counts, &state);
    double q = resample_median(s->new, s->n2, s->counts, &state) / m1;
    s->ratios[r] = q;
    if (s->logs) s->logs[r] = log(q);
  }
  return NULL;
}

#define MAX_THREADS 8
#define DRAWS_PER_THREAD 100000 /* below this a thread costs more than it saves */

static size_t thread_count(size_t draws) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t t = cpus > 1 ? (size_t)cpus : 1, by_work = draws / DRAWS_PER_THREAD;
  if (t > by_work) t = by_work;
  if (t > MAX_THREADS) t = MAX_THREADS;
  return t ? t : 1;
}

bool wl_bootstrap_ratio(const double *sorted_base, size_t n1, const double *sorted_new, size_t n2,
                        size_t resamples, double confidence, uint64_t seed, double *log_replicates,
                        double *lo, double *hi) {
  size_t threads = thread_count(resamples * (n1 + n2)), longest = n1 > n2 ? n1 : n2;
  uint32_t *counts = malloc(threads * longest * sizeof *counts);
  double *ratios = malloc((resamples ? resamples : 1) * sizeof *ratios);
  if (!counts || !ratios) {
    free(counts);
    free(ratios);
    return false;
  }
  struct span spans[MAX_THREADS];
  pthread_t ids[MAX_THREADS];
  bool started[MAX_THREADS] = {false};
  for (size_t t = 0; t < threads; t++) {
    spans[t] = (struct span){.base = sorted_base, .new = sorted_new, .n1 = n1, .n2 = n2};
    spans[t].r0 = resamples * t / threads;
    spans[t].r1 = resamples * (t + 1) / threads;
    spans[t].seed = seed;
    spans[t].ratios = ratios;
    spans[t].logs = log_replicates;
    spans[t].counts = counts + t * longest;
    /* the last range on this thread; a thread that cannot start leaves its range here too */
    if (t + 1 < threads) started[t] = pthread_create(&ids[t], NULL, run_span, &spans[t]) == 0;
  }
  for (size_t t = 0; t < threads; t++)
    if (!started[t]) run_span(&spans[t]);
  for (size_t t = 0; t < threads; t++)
    if (started[t]) pthread_join(ids[t], NULL);
  free(counts);
  wl_sort_doubles(ratios, resamples);
  double tail = (1 - confidence) / 2;
  *lo = wl_quantile_type7(ratios, resamples, tail);
  *hi = wl_quantile_type7(ratios, resamples, 1 - tail);
  free(ratios);
  return true;
}

void wl_geomean_interval(double *log_sums, size_t lists, size_t resamples, double confidence,
                         double *lo, double *hi) {
  for (size_t r = 0; r < resamples; r++) log_sums[r] = exp(log_sums[r] / (double)lists);
  wl_sort_doubles(log_sums, resamples);
  double tail = (1 - confidence) / 2;
  *lo = wl_quantile_type7(log_sums, resamples, tail);
  *hi = wl_quantile_type7(log_sums, resamples, 1 - tail);
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
