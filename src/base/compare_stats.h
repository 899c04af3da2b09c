/* The resampling statistics of `wlrun compare` in C (docs/compare.md, docs/statistics.md): the
 * bootstrap of the ratio of medians and the rank sum of the Mann-Whitney U test. They compute the
 * same numbers, bit for bit, as the Lua definitions they replace in lua/wlrun/compare/stats.lua
 * (same splitmix64 stream, same order of draws, same arithmetic). Pure C, no Lua. */
#ifndef WL_COMPARE_STATS_H
#define WL_COMPARE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* splitmix64: the state advances by the golden gamma, the output is the state mixed. */
uint64_t wl_splitmix64_next(uint64_t *state);

/* The median of an ascending array: the middle value, or the mean of the two middle ones. */
double wl_median_sorted(const double *sorted, size_t n);

/* The p-quantile (p in [0, 1]) of an ascending array, type 7, as lua/wlrun/compare/stats.lua's
 * M.quantile computes it; NaN when n is 0. */
double wl_quantile_type7(const double *sorted, size_t n, double p);

/* Percentile bootstrap of median(new) / median(base): each of `resamples` resamples draws n1
 * indices into the ascending base, then n2 into the ascending new (splitmix64 from `seed`,
 * index = (next >> 11) mod n), and takes the ratio of the two resample medians. Writes the
 * interval at `confidence` to lo and hi and, when log_replicates is not NULL, the log of each
 * resample's ratio in resample order. n1, n2 >= 1 and below 2^31; the samples should be finite
 * and positive (the ratios are then never NaN). Large bootstraps run on up to 8 threads (one per
 * online CPU), each on a range of resamples with the stream's state jumped to its start: the
 * same numbers as one thread. Returns false when memory runs out. */
bool wl_bootstrap_ratio(const double *sorted_base, size_t n1, const double *sorted_new, size_t n2,
                        size_t resamples, double confidence, uint64_t seed, double *log_replicates,
                        double *lo, double *hi);

/* The interval of the geometric mean of several ratios from their bootstrap replicates:
 * log_sums[r] holds the sum of the `lists` configurations' r-th log replicates, added in the
 * configurations' order; it becomes the sorted replicates of the geometric mean. lo and hi are
 * their quantiles at `confidence` (NaN when resamples is 0). */
void wl_geomean_interval(double *log_sums, size_t lists, size_t resamples, double confidence,
                         double *lo, double *hi);

/* Mann-Whitney's rank sum: the sum of the ranks of a's values in a and b together (ties get
 * their average rank) and the tie term, the sum over tied groups of t^3 - t. a and b ascending,
 * without NaN. */
struct wl_rank_sum {
  double r1;
  int64_t ties;
};
void wl_rank_sum(const double *sorted_a, size_t n1, const double *sorted_b, size_t n2,
                 struct wl_rank_sum *out);

#endif
