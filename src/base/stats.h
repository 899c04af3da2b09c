/* Statistics on sample arrays (docs/statistics.md). Pure C, no Lua, unit-tested by ctest. */
#ifndef WL_STATS_H
#define WL_STATS_H

#include <stdbool.h>
#include <stddef.h>

struct wl_summary {
  size_t n;
  double mean, std; /* std: sample standard deviation (n - 1); 0 when n = 1 */
  double min, max, median;
  double p10, p25, p75, p90, p99; /* linear interpolation between closest ranks */
  double iqr;                     /* p75 - p25 */
  double cv;                      /* std / mean; NaN when the mean is 0 */
};

/* Summarises n >= 1 finite samples. Returns false (and leaves out alone) when n is 0, a
 * sample is not finite, or memory runs out. The input is not modified. */
bool wl_stats_summarize(const double *samples, size_t n, struct wl_summary *out);

/* The p-th percentile (0..100) of an ascending array, by linear interpolation between the
 * closest ranks (the definition of NumPy's default and of R's type 7). */
double wl_percentile_sorted(const double *sorted, size_t n, double p);

void wl_sort_doubles(double *x, size_t n);

/* The relative half-width of the distribution-free 95 % confidence interval of the median of n
 * samples (order statistics j = max(1, floor(n/2 - h)) and k = min(n, ceil(n/2 + h + 1)),
 * h = 1.96 sqrt(n) / 2, 1-based, of the samples sorted): (x_k - x_j) / 2 / median; HUGE_VAL
 * when n < 6 or the median is not above 0. What adaptive stopping compares with its target
 * (docs/measuring.md). Reorders x: the four order statistics are selected in place, in O(n). */
double wl_median_noise(double *x, size_t n);

/* Shape diagnostics of a sample sequence (docs/statistics.md, "Distribution shape"): Tukey
 * outliers, a trend in sample order (warm-up, throttling) and modes of a kernel density
 * estimate (bimodality). */
struct wl_shape {
  size_t n;
  double median, iqr; /* as in wl_summary (type 7 percentiles) */

  /* Tukey fences: Q1 - 1.5 IQR, Q3 + 1.5 IQR; the far fences at 3 IQR. A sample is an outlier
   * when strictly beyond a fence, so with IQR = 0 every sample unequal to the median is one. */
  double fence_low, fence_high;
  double far_fence_low, far_fence_high;
  size_t outliers_low, outliers_high; /* beyond fence_low, beyond fence_high */
  size_t far_outliers;                /* beyond either far fence (also counted above) */

  /* Trend in sample order: Spearman's rho between index and value (average ranks for ties; 0
   * when undefined: n < 2 or all samples equal), trend_z = rho * sqrt(n - 1), and
   * trend_change = (median of the first ceil(n/5) samples - median of the last ceil(n/2))
   * / |median|, positive when early samples are slower; NaN when the median is 0. */
  double trend_rho, trend_z, trend_change;

  /* Significant modes of a Gaussian KDE (Silverman bandwidth, 512-point grid) over the samples
   * without the far outliers, except groups of them large enough to be a mode (the rules are in
   * docs/statistics.md). modes >= 1; bimodal = modes >= 2. mode_low <= mode_high
   * are the locations of the two modes with the most samples when bimodal, otherwise both the
   * location of the single mode (the median when no KDE was made: fewer than 20 samples, or all
   * equal). bandwidth is 0 when no KDE was made; kde_n counts the samples in the KDE. */
  int modes;
  bool bimodal;
  double mode_low, mode_high;
  double bandwidth;
  size_t kde_n;
};

/* Computes the shape of n >= 1 finite samples, in O(n log n). Returns false (and leaves out
 * alone) when n is 0, a sample is not finite, or memory runs out. The input is not modified. */
bool wl_stats_shape(const double *samples, size_t n, struct wl_shape *out);

#endif
