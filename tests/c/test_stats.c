/* stats.c against hand-computed values, and the shape diagnostics against synthetic samples. */
#include "check.h"
#include "stats.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

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

/* noise of n samples 1..n, given in the order step * i mod n (step prime to n: every value once) */
static double noise_of(int n, int step) {
  double x[100];
  for (int i = 0; i < n; i++) x[i] = 1 + (i * step) % n;
  return wl_median_noise(x, (size_t)n);
}

static void test_median_noise(void) {
  CHECK(noise_of(5, 1) == HUGE_VAL);
  for (int step = 1; step <= 13; step += 6) { /* 1, 7, 13: ascending and two shuffles */
    /* n = 10: h = 3.099, order statistics 1 and 10, median 5.5 */
    CHECK_NEAR(noise_of(10, step == 7 ? 3 : step), 9.0 / 2 / 5.5, EPS);
    /* n = 100: h = 9.8, order statistics 40 and 61 (ceil(60.8)), median 50.5 */
    CHECK_NEAR(noise_of(100, step), 21.0 / 2 / 50.5, EPS);
    /* n = 7 (odd): h = 2.593, order statistics 1 and 7, median 4 */
    CHECK_NEAR(noise_of(7, step == 7 ? 3 : step), 6.0 / 2 / 4, EPS);
  }
  double zero[8] = {0};
  CHECK(wl_median_noise(zero, 8) == HUGE_VAL); /* no median above 0 */
  double ties[12] = {3, 1, 3, 3, 2, 3,
                     3, 1, 3, 3, 2, 3}; /* sorted: 1 1 2 2 3 ... ; j = 2, k = 11 */
  CHECK_NEAR(wl_median_noise(ties, 12), (3.0 - 1.0) / 2 / 3, EPS);
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

/* ---- distribution shape ---- */

/* deterministic samples: xorshift64* and Box-Muller, so that every platform sees the same data */
static uint64_t rng_state;

static void rng_seed(uint64_t seed) { rng_state = seed * 0x9E3779B97F4A7C15ull + 1; }

static uint64_t rng_next(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1Dull;
}

static double rng_uniform(void) { /* in (0, 1) */
  return ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0;
}

static double rng_normal(double mean, double sd) {
  double u = rng_uniform(), v = rng_uniform();
  return mean + sd * sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

static void shuffle(double *x, size_t n) {
  for (size_t i = n - 1; i > 0; i--) {
    size_t j = (size_t)(rng_next() % (i + 1));
    double t = x[i];
    x[i] = x[j];
    x[j] = t;
  }
}

static double buf[100000];

static void test_shape_hand(void) {
  /* quartiles 3.25 and 7.75 (type 7), IQR 4.5: fences -3.5 and 14.5, far fences -10.25, 21.25 */
  double x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 100};
  struct wl_shape s;
  CHECK(wl_stats_shape(x, 10, &s));
  CHECK(s.n == 10);
  CHECK_NEAR(s.median, 5.5, EPS);
  CHECK_NEAR(s.iqr, 4.5, EPS);
  CHECK_NEAR(s.fence_low, -3.5, EPS);
  CHECK_NEAR(s.fence_high, 14.5, EPS);
  CHECK_NEAR(s.far_fence_low, -10.25, EPS);
  CHECK_NEAR(s.far_fence_high, 21.25, EPS);
  CHECK(s.outliers_low == 0 && s.outliers_high == 1 && s.far_outliers == 1);
  CHECK_NEAR(s.trend_rho, 1, EPS); /* increasing: the ranks are the indices */
  CHECK_NEAR(s.trend_z, 3, EPS);
  /* first ceil(10/5) = 2 samples: median 1.5; last 5: median 8; over the median 5.5 */
  CHECK_NEAR(s.trend_change, (1.5 - 8) / 5.5, EPS);
  CHECK(s.modes == 1 && !s.bimodal); /* fewer than 20 samples */
  CHECK(x[9] == 100 && x[0] == 1);   /* input untouched */

  /* ties get average ranks: values 1, 2, 2, 3 rank 1, 2.5, 2.5, 4, rho = 4.5 / sqrt(5 * 4.5) */
  double t[] = {1, 2, 2, 3};
  CHECK(wl_stats_shape(t, 4, &s));
  CHECK_NEAR(s.trend_rho, 3 / sqrt(10), EPS);
  CHECK_NEAR(s.trend_z, 3 / sqrt(10) * sqrt(3), EPS);
  double d[] = {4, 3, 2, 1, 0.5};
  CHECK(wl_stats_shape(d, 5, &s));
  CHECK_NEAR(s.trend_rho, -1, EPS);
  CHECK_NEAR(s.trend_z, -2, EPS);
  CHECK_NEAR(s.trend_change, (4 - 1) / 2.0, EPS); /* first 1: 4; last 3: 2, 1, 0.5 */
}

static void test_shape_small(void) {
  struct wl_shape s = {.n = 77};
  double nan_in[] = {1, NAN}, inf_in[] = {-INFINITY};
  CHECK(!wl_stats_shape(NULL, 0, &s));
  CHECK(!wl_stats_shape(nan_in, 2, &s));
  CHECK(!wl_stats_shape(inf_in, 1, &s));
  CHECK(s.n == 77); /* untouched on failure */

  double one[] = {5};
  CHECK(wl_stats_shape(one, 1, &s));
  CHECK(s.n == 1 && s.outliers_low == 0 && s.outliers_high == 0 && s.far_outliers == 0);
  CHECK_NEAR(s.fence_low, 5, EPS);
  CHECK_NEAR(s.fence_high, 5, EPS);
  CHECK_NEAR(s.trend_rho, 0, EPS);
  CHECK_NEAR(s.trend_z, 0, EPS);
  CHECK_NEAR(s.trend_change, 0, EPS);
  CHECK(s.modes == 1 && !s.bimodal);
  CHECK_NEAR(s.mode_low, 5, EPS);
  CHECK_NEAR(s.mode_high, 5, EPS);

  double two[] = {2, 1};
  CHECK(wl_stats_shape(two, 2, &s));
  CHECK_NEAR(s.trend_rho, -1, EPS);
  CHECK_NEAR(s.trend_z, -1, EPS);
  CHECK_NEAR(s.trend_change, (2 - 1) / 1.5, EPS);
  CHECK(s.outliers_low + s.outliers_high == 0 && s.modes == 1 && !s.bimodal);

  double same[19];
  for (int i = 0; i < 19; i++) same[i] = 3.25;
  CHECK(wl_stats_shape(same, 19, &s));
  CHECK_NEAR(s.iqr, 0, EPS);
  CHECK(s.outliers_low == 0 && s.outliers_high == 0 && s.far_outliers == 0);
  CHECK_NEAR(s.trend_rho, 0, EPS); /* undefined: all ranks tie */
  CHECK_NEAR(s.trend_change, 0, EPS);
  CHECK(s.modes == 1 && !s.bimodal);
  CHECK_NEAR(s.mode_low, 3.25, EPS);

  /* two clear clusters, but fewer than 20 samples: too few to say */
  double few[19];
  for (int i = 0; i < 19; i++) few[i] = i % 2 ? 10 + 0.01 * i : 20 + 0.01 * i;
  CHECK(wl_stats_shape(few, 19, &s));
  CHECK(s.modes == 1 && !s.bimodal);

  /* IQR = 0: every sample unequal to the median is an outlier, nothing equal to it is */
  double flat[21];
  for (int i = 0; i < 21; i++) flat[i] = 5;
  flat[7] = 7;
  CHECK(wl_stats_shape(flat, 20, &s));
  CHECK_NEAR(s.iqr, 0, EPS);
  CHECK_NEAR(s.fence_low, 5, EPS);
  CHECK_NEAR(s.fence_high, 5, EPS);
  CHECK(s.outliers_low == 0 && s.outliers_high == 1 && s.far_outliers == 1);
  CHECK(s.modes == 1 && !s.bimodal);
  CHECK_NEAR(s.mode_low, 5, EPS);
  flat[20] = 4.999;
  CHECK(wl_stats_shape(flat, 21, &s));
  CHECK(s.outliers_low == 1 && s.outliers_high == 1 && s.far_outliers == 2);
  CHECK(s.modes == 1 && !s.bimodal);
}

/* (a) clean normal samples */
static void test_shape_normal(void) {
  rng_seed(1);
  for (int i = 0; i < 1000; i++) buf[i] = rng_normal(100, 1);
  struct wl_shape s;
  CHECK(wl_stats_shape(buf, 1000, &s));
  CHECK(fabs(s.trend_rho) < 0.1);
  CHECK(fabs(s.trend_z) < 3);
  CHECK(fabs(s.trend_change) < 0.01);
  CHECK(s.modes == 1 && !s.bimodal);
  /* at most 1 %: a normal has 0.70 % beyond the fences, so about one seed in six has more */
  CHECK(s.outliers_low + s.outliers_high <= 10);
  CHECK(s.far_outliers <= 1);       /* 4.7 standard deviations */
  CHECK_NEAR(s.mode_low, 100, 0.6); /* a KDE's mode moves by about 0.2 from seed to seed */
  CHECK(s.mode_low == s.mode_high);
  CHECK(s.kde_n >= 999 && s.bandwidth > 0);

  /* (b) the same plus 5 samples at 150, anywhere in the sequence */
  for (int i = 1000; i < 1005; i++) buf[i] = 150;
  shuffle(buf, 1005);
  CHECK(wl_stats_shape(buf, 1005, &s));
  CHECK(s.outliers_high >= 5);
  CHECK(s.far_outliers >= 5);
  CHECK(s.modes == 1 && !s.bimodal);
  CHECK(s.kde_n <= 1000); /* the 5 far outliers stay out of the density estimate */
}

/* (c) two clusters of equal size */
static void test_shape_two_clusters(void) {
  rng_seed(2);
  for (int i = 0; i < 1000; i++) buf[i] = rng_normal(i < 500 ? 100 : 110, 1);
  shuffle(buf, 1000);
  struct wl_shape s;
  CHECK(wl_stats_shape(buf, 1000, &s));
  CHECK(s.bimodal);
  CHECK(s.modes == 2);
  CHECK_NEAR(s.mode_low, 100, 1);
  CHECK_NEAR(s.mode_high, 110, 1);
  CHECK(fabs(s.trend_rho) < 0.1); /* shuffled: no trend */
  CHECK(s.outliers_low + s.outliers_high == 0);
}

/* (d) 90 % and 10 %: a second population, although all of it lies beyond the far fence */
static void test_shape_minor_cluster(void) {
  rng_seed(3);
  for (int i = 0; i < 1000; i++) buf[i] = rng_normal(i < 900 ? 100 : 120, 1);
  shuffle(buf, 1000);
  struct wl_shape s;
  CHECK(wl_stats_shape(buf, 1000, &s));
  CHECK(s.bimodal);
  CHECK(s.modes == 2);
  CHECK_NEAR(s.mode_low, 100, 1);
  CHECK_NEAR(s.mode_high, 120, 1.5);
  CHECK(s.far_outliers >= 100);
  CHECK(s.kde_n >= 990); /* the far cluster is in the density estimate */

  /* (e) 97 % and 3 %: the small cluster is outliers, not a mode */
  rng_seed(4);
  for (int i = 0; i < 1000; i++) buf[i] = rng_normal(i < 970 ? 100 : 120, 1);
  shuffle(buf, 1000);
  CHECK(wl_stats_shape(buf, 1000, &s));
  CHECK(!s.bimodal);
  CHECK(s.modes == 1);
  CHECK(s.outliers_high >= 30 && s.far_outliers >= 30);
  CHECK(s.kde_n <= 970);
  CHECK_NEAR(s.mode_low, 100, 0.6);

  /* a far-away 10 % (ten times slower) is still a mode of its own */
  rng_seed(5);
  for (int i = 0; i < 1000; i++) buf[i] = i < 900 ? rng_normal(100, 1) : rng_normal(1000, 10);
  shuffle(buf, 1000);
  CHECK(wl_stats_shape(buf, 1000, &s));
  CHECK(s.bimodal);
  CHECK_NEAR(s.mode_low, 100, 5);
  CHECK_NEAR(s.mode_high, 1000, 20);
}

/* (f) warm-up: 200 samples decaying from 130 towards 100 (time constant 70 samples), then 800 at
 * 100; (g) throttling: a slow linear rise from 100 to 110 */
static void test_shape_trend(void) {
  rng_seed(6);
  for (int i = 0; i < 1000; i++)
    buf[i] = (i < 200 ? 100 + 30 * exp(-i / 70.0) : 100) + rng_normal(0, 1);
  struct wl_shape s;
  CHECK(wl_stats_shape(buf, 1000, &s));
  CHECK(s.trend_rho < -0.2);
  CHECK(s.trend_z < -5);
  CHECK(s.trend_change > 0.05);

  rng_seed(7);
  for (int i = 0; i < 1000; i++) buf[i] = 100 + 10.0 * i / 999 + rng_normal(0, 1);
  CHECK(wl_stats_shape(buf, 1000, &s));
  CHECK(s.trend_rho > 0.5);
  CHECK(s.trend_z > 5);
  CHECK(s.trend_change < -0.03); /* later samples slower */
  CHECK(!s.bimodal);
}

/* (h) right-skewed timing-like samples; quantised ones (a timer's resolution) */
static void test_shape_skewed(void) {
  rng_seed(8);
  for (int i = 0; i < 1000; i++) buf[i] = 100 * exp(rng_normal(0, 0.05));
  struct wl_shape s;
  CHECK(wl_stats_shape(buf, 1000, &s));
  CHECK(!s.bimodal);
  CHECK(s.modes == 1);
  CHECK(fabs(s.trend_rho) < 0.1);

  rng_seed(9);
  for (int i = 0; i < 1000; i++) buf[i] = 5 - 0.5 * log(rng_uniform()); /* exponential tail */
  CHECK(wl_stats_shape(buf, 1000, &s));
  CHECK(!s.bimodal);

  /* timer steps of 0.5 with a spread of about one step: each step is not a mode */
  rng_seed(10);
  for (int i = 0; i < 1000; i++) buf[i] = 0.5 * round(rng_normal(10, 0.3) / 0.5);
  CHECK(wl_stats_shape(buf, 1000, &s));
  CHECK(!s.bimodal);
  for (int i = 0; i < 1000; i++) buf[i] = 0.5 * round(rng_normal(i % 2 ? 10 : 15, 1) / 0.5);
  CHECK(wl_stats_shape(buf, 1000, &s));
  CHECK(s.bimodal);
  CHECK_NEAR(s.mode_low, 10, 1);
  CHECK_NEAR(s.mode_high, 15, 1);
}

/* (j) 100000 samples: O(n log n), well under a second (printed, not asserted) */
static void test_shape_large(void) {
  rng_seed(11);
  for (int i = 0; i < 100000; i++) buf[i] = 100 * exp(rng_normal(0, 0.05));
  struct timespec t0, t1;
  struct wl_shape s;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  CHECK(wl_stats_shape(buf, 100000, &s));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("wl_stats_shape, 100000 samples: %.1f ms\n",
         (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
  CHECK(s.n == 100000);
  CHECK(!s.bimodal);
  CHECK(fabs(s.trend_rho) < 0.02);
  CHECK_NEAR(s.mode_low, 100, 0.5);
}

int main(void) {
  test_single();
  test_odd();
  test_even();
  test_ten();
  test_median_noise();
  test_precision();
  test_edges();
  test_shape_hand();
  test_shape_small();
  test_shape_normal();
  test_shape_two_clusters();
  test_shape_minor_cluster();
  test_shape_trend();
  test_shape_skewed();
  test_shape_large();
  return check_report("test_stats");
}
