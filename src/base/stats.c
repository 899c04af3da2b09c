#include "stats.h"

#include <math.h>
#include <stdint.h>
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

/* ---- distribution shape (docs/statistics.md, "Distribution shape") ---- */

#define SHAPE_GRID 512   /* KDE grid points over [min, max] of the KDE samples */
#define SHAPE_MIN_KDE 20 /* fewer KDE samples than this: one mode, no KDE */
/* a mode (or a kept group of far outliers) needs 5% of all samples */
#define SHAPE_MODE_FRAC 0.05
#define SHAPE_MODE_COUNT 10    /* and at least 10 samples */
#define SHAPE_EXCESS_FRAC 0.03 /* and 3% of all samples above the level of its higher valley */
#define SHAPE_VALLEY_RATIO 0.6 /* the valley must dip below 60% of the lower of two peaks */
#define SHAPE_KERNEL_REACH 5.0 /* the Gaussian kernel is cut at 5 bandwidths */
#define SHAPE_GROUP_GAP 1.5    /* far outliers more than 1.5 IQR apart, and */
#define SHAPE_GROUP_REL 0.25   /* more than 1/4 of their distance to the median: separate groups */

struct ranked {
  double v;
  size_t i;
};

static int cmp_ranked(const void *a, const void *b) {
  const struct ranked *x = a, *y = b;
  if (x->v != y->v) return (x->v > y->v) - (x->v < y->v);
  return (x->i > y->i) - (x->i < y->i);
}

/* Spearman's rho between the sample index and the value, from the samples sorted by value
 * (ties get the average of their ranks). 0 when undefined (n < 2 or all values equal). */
static double spearman_index(const struct ranked *r, size_t n) {
  if (n < 2) return 0;
  double m = ((double)n + 1) / 2, sxy = 0, syy = 0;
  for (size_t k = 0; k < n;) {
    size_t j = k;
    while (j + 1 < n && r[j + 1].v == r[k].v) j++;
    double dy = ((double)k + (double)j) / 2 + 1 - m; /* average rank of k+1 .. j+1, centred */
    for (size_t t = k; t <= j; t++) {
      sxy += ((double)r[t].i + 1 - m) * dy;
      syy += dy * dy;
    }
    k = j + 1;
  }
  double sxx = (double)n * ((double)n * (double)n - 1) / 12;
  if (!(syy > 0)) return 0;
  double rho = sxy / sqrt(sxx * syy);
  return rho > 1 ? 1 : rho < -1 ? -1 : rho;
}

/* Rearranges x[0..n) so that x[k] is the value that sorting would put there, with no larger
 * value before it and no smaller one after it (quickselect, median-of-3 pivots; sorts instead
 * after too many rounds). */
static void select_kth(double *x, size_t n, size_t k) {
  size_t lo = 0, hi = n - 1, rounds = 0;
  while (lo < hi) {
    if (++rounds > 64) {
      wl_sort_doubles(x + lo, hi - lo + 1);
      return;
    }
    size_t mid = lo + (hi - lo) / 2;
    double a = x[lo], b = x[mid], c = x[hi];
    double pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
    size_t i = lo, j = hi;
    while (i <= j) { /* Hoare partition: x[lo..j] <= pivot <= x[i..hi] */
      while (x[i] < pivot) i++;
      while (x[j] > pivot) j--;
      if (i <= j) {
        double t = x[i];
        x[i] = x[j];
        x[j] = t;
        i++;
        if (j == 0) break;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return; /* x[j+1..i-1] all equal the pivot */
  }
}

/* Median of x[0..n), n >= 1, by the rule of wl_percentile_sorted; reorders x. O(n). */
static double median_inplace(double *x, size_t n) {
  size_t k = n / 2;
  select_kth(x, n, k);
  if (n % 2) return x[k];
  double below = x[0]; /* the largest of x[0..k) */
  for (size_t i = 1; i < k; i++)
    if (x[i] > below) below = x[i];
  return below + 0.5 * (x[k] - below);
}

double wl_median_noise(double *x, size_t n) {
  if (n < 6) return HUGE_VAL;
  double h = 1.96 * sqrt((double)n) / 2, half = (double)n / 2;
  size_t j = (size_t)fmax(1, floor(half - h)) - 1,
         k = (size_t)fmin((double)n, ceil(half + h + 1)) - 1;
  size_t m_lo = n % 2 ? n / 2 : n / 2 - 1, m_hi = n / 2;
  /* ascending, j <= m_lo <= m_hi <= k: each selected among what lies above the one before (an
   * index equal to the one before is in place already) */
  size_t at[4] = {j, m_lo, m_hi, k}, from = 0;
  for (int i = 0; i < 4; i++) {
    if (at[i] < from) continue;
    select_kth(x + from, n - from, at[i] - from);
    from = at[i] + 1;
  }
  double m = (x[m_lo] + x[m_hi]) / 2;
  return m > 0 ? (x[k] - x[j]) / 2 / m : HUGE_VAL;
}

struct peak {
  size_t s, e; /* first and last grid index of the peak's plateau (usually s == e) */
};

/* Refined location of a peak: the vertex of the parabola through the grid point and its
 * neighbours (for a one-point peak inside the grid), else the plateau's middle. */
static double peak_location(const double *d, struct peak p, double lo, double step) {
  double k = ((double)p.s + (double)p.e) / 2;
  if (p.s == p.e && p.s > 0 && p.s + 1 < SHAPE_GRID) {
    double a = d[p.s - 1], b = d[p.s], c = d[p.s + 1], denom = a - 2 * b + c;
    if (denom < 0) {
      double off = 0.5 * (a - c) / denom;
      k += off > 0.5 ? 0.5 : off < -0.5 ? -0.5 : off;
    }
  }
  return lo + k * step;
}

/* The samples a mode needs: SHAPE_MODE_FRAC of n, and at least SHAPE_MODE_COUNT. */
static double mode_min_count(size_t n) {
  double c = SHAPE_MODE_FRAC * (double)n;
  return c > SHAPE_MODE_COUNT ? c : SHAPE_MODE_COUNT;
}

/* Silverman's rule of thumb for the ascending samples y[0..m), with the IQR term dropped when it
 * is 0; for quantised samples (a timer's resolution) at least half the typical step between
 * distinct values, the median of the positive gaps, or each level would be a mode of its own.
 * gaps: scratch of m doubles. */
static double kde_bandwidth(const double *y, size_t m, double *gaps) {
  double sum = 0, ss = 0;
  for (size_t i = 0; i < m; i++) sum += y[i];
  double mean = sum / (double)m;
  for (size_t i = 0; i < m; i++) ss += (y[i] - mean) * (y[i] - mean);
  double sd = sqrt(ss / (double)(m - 1));
  double iqr = wl_percentile_sorted(y, m, 75) - wl_percentile_sorted(y, m, 25);
  double spread = iqr > 0 && iqr / 1.34 < sd ? iqr / 1.34 : sd;
  double h = 0.9 * spread * pow((double)m, -0.2);
  size_t ng = 0;
  for (size_t i = 1; i < m; i++)
    if (y[i] > y[i - 1]) gaps[ng++] = y[i] - y[i - 1];
  double quantum = ng ? median_inplace(gaps, ng) : 0;
  if (h < 0.5 * quantum) h = 0.5 * quantum;
  return h;
}

/* The KDE on its grid: lo + k * step for k in [0, SHAPE_GRID) */
struct kde_grid {
  double lo, step;
  double c[SHAPE_GRID];       /* the samples binned linearly onto the grid */
  double d[SHAPE_GRID];       /* the binned samples convolved with the kernel */
  double cum[SHAPE_GRID + 1]; /* cum[k]: the binned samples below grid point k */
  double wsum; /* a sample's total weight on the grid: densities into sample counts */
};

/* Linear binning of y[0..m) onto the grid, then the binned samples convolved with the Gaussian
 * kernel of bandwidth h, cut at SHAPE_KERNEL_REACH bandwidths. */
static void kde_density(const double *y, size_t m, double h, struct kde_grid *g) {
  double w[SHAPE_GRID];
  memset(g->c, 0, sizeof g->c);
  for (size_t i = 0; i < m; i++) {
    double pos = (y[i] - g->lo) / g->step;
    size_t j = pos < 0 ? 0 : (size_t)pos;
    if (j >= SHAPE_GRID - 1) {
      g->c[SHAPE_GRID - 1] += 1;
    } else {
      double f = pos - (double)j;
      g->c[j] += 1 - f;
      g->c[j + 1] += f;
    }
  }
  double reach = ceil(SHAPE_KERNEL_REACH * h / g->step);
  size_t L = reach >= SHAPE_GRID - 1 ? SHAPE_GRID - 1 : (size_t)reach;
  g->wsum = 0;
  for (size_t t = 0; t <= L; t++) {
    double u = (double)t * g->step / h;
    w[t] = exp(-0.5 * u * u);
    g->wsum += t ? 2 * w[t] : w[t];
  }
  for (size_t k = 0; k < SHAPE_GRID; k++) {
    size_t a = k > L ? k - L : 0, b = k + L < SHAPE_GRID - 1 ? k + L : SHAPE_GRID - 1;
    double acc = 0;
    for (size_t j = a; j <= b; j++) acc += g->c[j] * w[j > k ? j - k : k - j];
    g->d[k] = acc;
  }
  g->cum[0] = 0;
  for (size_t k = 0; k < SHAPE_GRID; k++) g->cum[k + 1] = g->cum[k] + g->c[k];
}

/* The local maxima of d (a plateau counts once) into pk; their count. */
static size_t kde_peaks(const double *d, struct peak *pk) {
  size_t np = 0;
  for (size_t k = 0; k < SHAPE_GRID;) {
    size_t j = k;
    while (j + 1 < SHAPE_GRID && d[j + 1] == d[k]) j++;
    if (d[k] > 0 && (k == 0 || d[k - 1] < d[k]) && (j == SHAPE_GRID - 1 || d[j + 1] < d[k]))
      pk[np++] = (struct peak){k, j};
    k = j + 1;
  }
  return np;
}

/* valley[i]: the lowest grid point between peaks i and i + 1 */
static void kde_valleys(const double *d, const struct peak *pk, size_t np, size_t *valley) {
  for (size_t i = 0; i + 1 < np; i++) {
    size_t v = pk[i].e + 1;
    for (size_t k = v + 1; k < pk[i + 1].s; k++)
      if (d[k] < d[v]) v = k;
    valley[i] = v;
  }
}

/* The lower peak of the shallowest valley that does not dip below SHAPE_VALLEY_RATIO of it; np
 * when every valley does. */
static size_t shallow_valley_peak(const double *d, const struct peak *pk, size_t np,
                                  const size_t *valley) {
  size_t drop = np;
  double worst = SHAPE_VALLEY_RATIO;
  for (size_t i = 0; i + 1 < np; i++) {
    double hl = d[pk[i].s], hr = d[pk[i + 1].s];
    double r = d[valley[i]] / (hl < hr ? hl : hr);
    if (r >= worst) {
      worst = r;
      drop = hl < hr ? i : i + 1;
    }
  }
  return drop;
}

/* Sets mass[i], the samples between peak i's valleys; returns the peak with the least excess
 * (its samples above the level of its higher valley) among those that hold too few samples
 * (fewer than mode_min_count(n_all), or an excess under SHAPE_EXCESS_FRAC of n_all); np when
 * every peak holds enough. */
static size_t weakest_peak(const struct kde_grid *g, size_t np, const size_t *valley, size_t n_all,
                           double *mass) {
  double need = mode_min_count(n_all), need_excess = SHAPE_EXCESS_FRAC * (double)n_all;
  size_t weakest = np;
  double least = INFINITY;
  for (size_t i = 0; i < np; i++) {
    size_t r0 = i > 0 ? valley[i - 1] : 0, r1 = i + 1 < np ? valley[i] : SHAPE_GRID;
    double level = 0, excess = 0;
    if (i > 0 && g->d[r0] > level) level = g->d[r0];
    if (i + 1 < np && g->d[r1] > level) level = g->d[r1];
    for (size_t k = r0; k < r1; k++)
      if (g->d[k] > level) excess += g->d[k] - level;
    excess /= g->wsum;
    mass[i] = g->cum[r1] - g->cum[r0];
    if ((mass[i] < need || excess < need_excess) && excess < least) {
      least = excess;
      weakest = i;
    }
  }
  return weakest;
}

/* Drops insignificant peaks one at a time until every pair of neighbours is separated by a
 * valley below SHAPE_VALLEY_RATIO of the lower peak (else the lower one goes, shallowest valley
 * first), and then every peak holds enough samples (else the one with the least excess goes:
 * weakest_peak). Returns the peaks left; mass: the samples of each, when two or more are left. */
static size_t prune_peaks(const struct kde_grid *g, struct peak *pk, size_t np, size_t n_all,
                          double *mass) {
  size_t valley[SHAPE_GRID / 2 + 1];
  while (np > 1) {
    kde_valleys(g->d, pk, np, valley);
    size_t drop = shallow_valley_peak(g->d, pk, np, valley);
    size_t weakest = weakest_peak(g, np, valley, n_all, mass);
    if (drop == np) drop = weakest; /* the valleys pass: the least excess that fails goes */
    if (drop == np) break;
    for (size_t i = drop; i + 1 < np; i++) pk[i] = pk[i + 1];
    np--;
  }
  return np;
}

/* out's modes from the np peaks left: their count, and the locations of the two with the most
 * samples (mass), lower first. */
static void set_modes(const struct kde_grid *g, const struct peak *pk, size_t np,
                      const double *mass, struct wl_shape *out) {
  out->modes = (int)np;
  out->bimodal = np >= 2;
  if (np == 1) {
    out->mode_low = out->mode_high = peak_location(g->d, pk[0], g->lo, g->step);
    return;
  }
  size_t a = 0, b = 1; /* the two modes with the most samples */
  if (mass[1] > mass[0]) a = 1, b = 0;
  for (size_t i = 2; i < np; i++) {
    if (mass[i] > mass[a]) b = a, a = i;
    else if (mass[i] > mass[b]) b = i;
  }
  double la = peak_location(g->d, pk[a], g->lo, g->step),
         lb = peak_location(g->d, pk[b], g->lo, g->step);
  out->mode_low = la < lb ? la : lb;
  out->mode_high = la < lb ? lb : la;
}

/* Modes of the Gaussian KDE of the ascending samples y[0..m) (m >= SHAPE_MIN_KDE, y[0] < y[m-1]),
 * with significance judged against n_all samples; gaps: scratch of m doubles. Sets out->modes,
 * bimodal, mode_low, mode_high and bandwidth; leaves them alone when the spread is degenerate. */
static void kde_modes(const double *y, size_t m, size_t n_all, double *gaps, struct wl_shape *out) {
  double h = kde_bandwidth(y, m, gaps);
  struct kde_grid g = {.lo = y[0], .step = (y[m - 1] - y[0]) / (SHAPE_GRID - 1)};
  if (!(h > 0) || !(g.step > 0)) return; /* underflow */
  out->bandwidth = h;
  kde_density(y, m, h, &g);
  struct peak pk[SHAPE_GRID / 2 + 1];
  double mass[SHAPE_GRID / 2 + 1];
  size_t np = prune_peaks(&g, pk, kde_peaks(g.d, pk), n_all, mass);
  set_modes(&g, pk, np, mass, out);
}

bool wl_stats_shape(const double *samples, size_t n, struct wl_shape *out) {
  if (n == 0 || n > SIZE_MAX / (sizeof(struct ranked) + 3 * sizeof(double))) return false;
  for (size_t i = 0; i < n; i++)
    if (!isfinite(samples[i])) return false;
  struct ranked *r = malloc(n * (sizeof *r + 3 * sizeof(double)));
  if (!r) return false;
  double *x = (double *)(r + n), *tmp = x + n, *tmp2 = tmp + n; /* sorted samples, scratch */

  for (size_t i = 0; i < n; i++) r[i] = (struct ranked){samples[i], i};
  qsort(r, n, sizeof *r, cmp_ranked);
  for (size_t i = 0; i < n; i++) x[i] = r[i].v;

  struct wl_shape s = {.n = n};
  double q1 = wl_percentile_sorted(x, n, 25), q3 = wl_percentile_sorted(x, n, 75);
  s.median = wl_percentile_sorted(x, n, 50);
  s.iqr = q3 - q1;
  s.fence_low = q1 - 1.5 * s.iqr;
  s.fence_high = q3 + 1.5 * s.iqr;
  s.far_fence_low = q1 - 3 * s.iqr;
  s.far_fence_high = q3 + 3 * s.iqr;
  for (size_t i = 0; i < n; i++) {
    s.outliers_low += x[i] < s.fence_low;
    s.outliers_high += x[i] > s.fence_high;
    s.far_outliers += x[i] < s.far_fence_low || x[i] > s.far_fence_high;
  }

  /* trend */
  s.trend_rho = spearman_index(r, n);
  s.trend_z = s.trend_rho * sqrt((double)(n - 1));
  size_t k_first = (n + 4) / 5, k_last = (n + 1) / 2;
  memcpy(tmp, samples, k_first * sizeof *tmp);
  double med_first = median_inplace(tmp, k_first);
  memcpy(tmp, samples + (n - k_last), k_last * sizeof *tmp);
  double med_last = median_inplace(tmp, k_last);
  s.trend_change = s.median != 0 ? (med_first - med_last) / fabs(s.median) : NAN;

  /* the KDE's samples: all but the far outliers, except groups of far outliers large enough to
   * be a mode (on each side, the sorted far outliers split where neighbours lie more than
   * SHAPE_GROUP_GAP IQR apart and more than SHAPE_GROUP_REL of the nearer one's distance to the
   * median) */
  size_t a = 0, b = n, m = 0;
  while (a < n && x[a] < s.far_fence_low) a++;
  while (b > a && x[b - 1] > s.far_fence_high) b--;
  double big = mode_min_count(n);
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    if (i < a || i >= b) { /* a group of far outliers */
      size_t end = i < a ? a : n;
      while (j < end) {
        double near = i < a ? x[j] : x[j - 1]; /* of the two, the one nearer the median */
        double gap = SHAPE_GROUP_GAP * s.iqr, rel = SHAPE_GROUP_REL * fabs(near - s.median);
        if (x[j] - x[j - 1] > (gap > rel ? gap : rel)) break;
        j++;
      }
      if ((double)(j - i) < big) {
        i = j;
        continue;
      }
    } else {
      j = b;
    }
    memcpy(tmp + m, x + i, (j - i) * sizeof *tmp);
    m += j - i;
    i = j;
  }
  s.kde_n = m;
  s.modes = 1;
  s.mode_low = s.mode_high = s.median;
  if (m >= SHAPE_MIN_KDE && tmp[0] < tmp[m - 1]) kde_modes(tmp, m, n, tmp2, &s);

  free(r);
  *out = s;
  return true;
}
