/* stats.c against hand-computed values. */
#include "check.h"
#include "stats.h"

#define EPS 1e-12

static void test_single(void) {
  double x[] = {5};
  struct wl_summary s;
  CHECK(wl_stats_summarize(x, 1, &s));
  CHECK(s.n == 1);
  CHECK_NEAR(s.mean, 5, EPS);
  CHECK_NEAR(s.std, 0, EPS);
  CHECK_NEAR(s.median, 5, EPS);
  CHECK_NEAR(s.min, 5, EPS);
  CHECK_NEAR(s.max, 5, EPS);
  CHECK_NEAR(s.p10, 5, EPS);
  CHECK_NEAR(s.p99, 5, EPS);
  CHECK_NEAR(s.iqr, 0, EPS);
  CHECK_NEAR(s.cv, 0, EPS);
}

static void test_odd(void) {
  double x[] = {3, 1, 2};
  struct wl_summary s;
  CHECK(wl_stats_summarize(x, 3, &s));
  CHECK_NEAR(s.mean, 2, EPS);
  CHECK_NEAR(s.median, 2, EPS);
  CHECK_NEAR(s.std, 1, EPS); /* sqrt((1 + 0 + 1) / 2) */
  CHECK_NEAR(s.p10, 1.2, EPS);
  CHECK_NEAR(s.p25, 1.5, EPS);
  CHECK_NEAR(s.p75, 2.5, EPS);
  CHECK_NEAR(s.p90, 2.8, EPS);
  CHECK_NEAR(s.p99, 2.98, EPS);
  CHECK_NEAR(s.iqr, 1, EPS);
  CHECK_NEAR(s.cv, 0.5, EPS);
  CHECK(x[0] == 3 && x[1] == 1 && x[2] == 2); /* input untouched */
}

static void test_even(void) {
  double x[] = {4, 1, 3, 2};
  struct wl_summary s;
  CHECK(wl_stats_summarize(x, 4, &s));
  CHECK_NEAR(s.mean, 2.5, EPS);
  CHECK_NEAR(s.median, 2.5, EPS);
  CHECK_NEAR(s.std, sqrt(5.0 / 3.0), EPS); /* (2.25 + 0.25 + 0.25 + 2.25) / 3 */
  CHECK_NEAR(s.min, 1, EPS);
  CHECK_NEAR(s.max, 4, EPS);
  CHECK_NEAR(s.p10, 1.3, EPS);
  CHECK_NEAR(s.p25, 1.75, EPS);
  CHECK_NEAR(s.p75, 3.25, EPS);
  CHECK_NEAR(s.p90, 3.7, EPS);
  CHECK_NEAR(s.p99, 3.97, EPS);
  CHECK_NEAR(s.iqr, 1.5, EPS);
  CHECK_NEAR(s.cv, sqrt(5.0 / 3.0) / 2.5, EPS);
}

static void test_ten(void) {
  double x[10];
  for (int i = 0; i < 10; i++) x[i] = 10 - i; /* 10..1 */
  struct wl_summary s;
  CHECK(wl_stats_summarize(x, 10, &s));
  CHECK_NEAR(s.mean, 5.5, EPS);
  CHECK_NEAR(s.median, 5.5, EPS);
  CHECK_NEAR(s.std, sqrt(82.5 / 9.0), EPS);
  CHECK_NEAR(s.p10, 1.9, EPS);
  CHECK_NEAR(s.p90, 9.1, EPS);
}

static void test_precision(void) {
  /* a naive sum-of-squares formula loses these digits */
  double x[] = {1e9 + 1, 1e9 + 2, 1e9 + 3};
  struct wl_summary s;
  CHECK(wl_stats_summarize(x, 3, &s));
  CHECK_NEAR(s.std, 1, 1e-9);
  CHECK_NEAR(s.mean, 1e9 + 2, 1e-6);
}

static void test_edges(void) {
  struct wl_summary s = {.n = 99};
  double nan_in[] = {1, NAN}, inf_in[] = {INFINITY}, zero_mean[] = {-1, 1};
  CHECK(!wl_stats_summarize(NULL, 0, &s));
  CHECK(!wl_stats_summarize(nan_in, 2, &s));
  CHECK(!wl_stats_summarize(inf_in, 1, &s));
  CHECK(s.n == 99); /* untouched on failure */
  CHECK(wl_stats_summarize(zero_mean, 2, &s));
  CHECK(isnan(s.cv));
  double sorted[] = {1, 2};
  CHECK_NEAR(wl_percentile_sorted(sorted, 2, 0), 1, EPS);
  CHECK_NEAR(wl_percentile_sorted(sorted, 2, 100), 2, EPS);
  CHECK_NEAR(wl_percentile_sorted(sorted, 2, 50), 1.5, EPS);
  CHECK(isnan(wl_percentile_sorted(sorted, 0, 50)));
}

int main(void) {
  test_single();
  test_odd();
  test_even();
  test_ten();
  test_precision();
  test_edges();
  return check_report("test_stats");
}
