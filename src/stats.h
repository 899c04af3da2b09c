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

#endif
