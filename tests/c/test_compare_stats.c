/* compare_stats.c: splitmix64's published stream, the rank sum on hand-ranked samples, and the
 * bootstrap against a direct reference (sorted copies of each resample, one thread), which it
 * must equal bit for bit, and the geometric mean's interval. */
#include "check.h"
#include "compare_stats.h"

#include <stdint.h>
#include <stdlib.h>

static void test_splitmix64(void) {
  uint64_t s = 0;
  CHECK(wl_splitmix64_next(&s) == UINT64_C(0xE220A8397B1DCDAF));
  CHECK(wl_splitmix64_next(&s) == UINT64_C(0x6E789E6AA1B965F4));
  CHECK(wl_splitmix64_next(&s) == UINT64_C(0x06C45D188009454F));
}

static void test_median_quantile(void) {
  double odd[] = {1, 2, 10}, even[] = {1, 2, 3, 10};
  CHECK(wl_median_sorted(odd, 3) == 2);
  CHECK(wl_median_sorted(even, 4) == 2.5);
  CHECK(isnan(wl_median_sorted(odd, 0)));
  CHECK(wl_quantile_type7(even, 4, 0) == 1);
  CHECK(wl_quantile_type7(even, 4, 1) == 10);
  CHECK_NEAR(wl_quantile_type7(even, 4, 0.5), 2.5, 1e-15);
  CHECK_NEAR(wl_quantile_type7(even, 4, 0.9), 3 + 0.7 * 7, 1e-12);
  CHECK(isnan(wl_quantile_type7(even, 0, 0.5)));
}

static void test_rank_sum(void) {
  /* a = {1, 2, 2, 5}, b = {2, 3, 5}: ranks 1, 3, 3 (the 2s at 2..4), 6.5 (the 5s at 6..7) */
  double a[] = {1, 2, 2, 5}, b[] = {2, 3, 5};
  struct wl_rank_sum s;
  wl_rank_sum(a, 4, b, 3, &s);
  CHECK(s.r1 == 1 + 3 + 3 + 6.5);
  CHECK(s.ties == (27 - 3) + (8 - 2));
  wl_rank_sum(a, 4, b, 0, &s);
  CHECK(s.r1 == 1 + 2.5 + 2.5 + 4);
  wl_rank_sum(a, 0, b, 3, &s);
  CHECK(s.r1 == 0 && s.ties == 0);
}

static int cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* one resample's median the direct way: draw, copy, sort */
static double reference_median(const double *sorted, size_t n, uint64_t *state, double *tmp) {
  for (size_t i = 0; i < n; i++) tmp[i] = sorted[(wl_splitmix64_next(state) >> 11) % n];
  qsort(tmp, n, sizeof *tmp, cmp);
  return wl_median_sorted(tmp, n);
}

static void test_bootstrap(size_t n1, size_t n2, size_t B, uint64_t seed) {
  double *a = malloc(n1 * sizeof *a), *b = malloc(n2 * sizeof *b),
         *tmp = malloc((n1 + n2) * sizeof *tmp);
  double *logs = malloc(B * sizeof *logs), *ratios = malloc(B * sizeof *ratios);
  CHECK(a && b && tmp && logs && ratios);
  if (!(a && b && tmp && logs && ratios)) return;
  uint64_t g = seed ^ 0x1234;
  for (size_t i = 0; i < n1; i++) a[i] = 1 + (double)(wl_splitmix64_next(&g) % 50) / 100; /* ties */
  for (size_t i = 0; i < n2; i++) b[i] = 1.1 + (double)(wl_splitmix64_next(&g) >> 11) * 0x1p-53;
  qsort(a, n1, sizeof *a, cmp);
  qsort(b, n2, sizeof *b, cmp);
  double lo, hi;
  CHECK(wl_bootstrap_ratio(a, n1, b, n2, B, 0.95, seed, logs, &lo, &hi));
  uint64_t state = seed;
  int same_logs = 1;
  for (size_t r = 0; r < B; r++) {
    double m1 = reference_median(a, n1, &state, tmp);
    ratios[r] = reference_median(b, n2, &state, tmp) / m1;
    same_logs &= log(ratios[r]) == logs[r];
  }
  CHECK(same_logs);
  qsort(ratios, B, sizeof *ratios, cmp);
  CHECK(lo == wl_quantile_type7(ratios, B, 0.025));
  CHECK(hi == wl_quantile_type7(ratios, B, 1 - 0.025));
  CHECK(lo <= hi);
  free(a), free(b), free(tmp), free(logs), free(ratios);
}

/* the geometric mean's replicates: exp of the mean of the log replicates, sorted, quantiles */
static void test_geomean(void) {
  double sums[4] = {log(1.0) + log(4.0), log(2.0) + log(2.0), log(1.0) + log(1.0),
                    log(9.0) + log(1.0)};
  double lo, hi;
  wl_geomean_interval(sums, 2, 4, 0.5, &lo, &hi);
  CHECK_NEAR(sums[0], 1, 1e-15);
  CHECK_NEAR(sums[3], 3, 1e-14);
  CHECK_NEAR(lo, 1.75, 1e-14); /* type 7 at 0.25 of {1, 2, 2, 3} */
  CHECK_NEAR(hi, 2.25, 1e-14);
  wl_geomean_interval(sums, 2, 0, 0.5, &lo, &hi);
  CHECK(isnan(lo) && isnan(hi));
}

static void test_bootstrap_edges(void) {
  double one[] = {2}, same[] = {3, 3, 3, 3};
  double lo, hi;
  CHECK(wl_bootstrap_ratio(one, 1, same, 4, 100, 0.95, 1, NULL, &lo, &hi));
  CHECK(lo == 1.5 && hi == 1.5);
  CHECK(wl_bootstrap_ratio(one, 1, same, 4, 0, 0.95, 1, NULL, &lo, &hi));
  CHECK(isnan(lo) && isnan(hi));
}

int main(void) {
  test_splitmix64();
  test_median_quantile();
  test_rank_sum();
  test_bootstrap(100, 100, 500, 1);
  test_bootstrap(7, 12, 300, UINT64_C(0xFEDCBA9876543210));
  test_bootstrap(1, 2, 50, 42);
  test_bootstrap(1000, 999, 50, 7);
  test_bootstrap(200, 201, 3001,
                 99); /* 1.2 million draws: on several threads where there are CPUs */
  test_geomean();
  test_bootstrap_edges();
  return check_report("test_compare_stats");
}
