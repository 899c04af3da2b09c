/* wl.stats for Lua: summaries, percentiles and shape of sample arrays, computed by stats.c, and
 * the bootstrap and rank sum of `wlrun compare` (compare_stats.c). */
#include "wl_modules.h"
#include "compare_stats.h"
#include "laux.h"
#include "stats.h"
#include "wl_exit.h"

#include <lauxlib.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* Reads the array argument into a C buffer (a userdata, so an error cannot leak it). */
static double *check_samples(lua_State *L, int arg, size_t *n) {
  wl_check_type(L, arg, LUA_TTABLE);
  lua_Integer len = luaL_len(L, arg);
  wl_arg_check(L, len >= 1, arg, "at least one sample expected");
  double *x = lua_newuserdatauv(L, (size_t)len * sizeof *x, 0);
  for (lua_Integer i = 1; i <= len; i++) {
    int isnum;
    lua_geti(L, arg, i);
    x[i - 1] = lua_tonumberx(L, -1, &isnum);
    if (!isnum || !isfinite(x[i - 1]))
      wl_raise(L, WL_EXIT_SCRIPT, "sample %d is %s, expected a finite number", (int)i,
               isnum ? "not finite" : luaL_typename(L, -1));
    lua_pop(L, 1);
  }
  *n = (size_t)len;
  return x;
}

static void set_number(lua_State *L, const char *k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

/* wl.stats.summary(samples) -> {n, mean, std, min, max, median, p10, p25, p75, p90, p99, iqr, cv}
 */
static int l_summary(lua_State *L) {
  size_t n;
  double *x = check_samples(L, 1, &n);
  struct wl_summary s;
  if (!wl_stats_summarize(x, n, &s))
    return wl_raise(L, WL_EXIT_SCRIPT, "not enough memory for the summary");
  lua_createtable(L, 0, 13);
  lua_pushinteger(L, (lua_Integer)s.n);
  lua_setfield(L, -2, "n");
  set_number(L, "mean", s.mean);
  set_number(L, "std", s.std);
  set_number(L, "min", s.min);
  set_number(L, "max", s.max);
  set_number(L, "median", s.median);
  set_number(L, "p10", s.p10);
  set_number(L, "p25", s.p25);
  set_number(L, "p75", s.p75);
  set_number(L, "p90", s.p90);
  set_number(L, "p99", s.p99);
  set_number(L, "iqr", s.iqr);
  set_number(L, "cv", s.cv);
  return 1;
}

/* wl.stats.percentile(samples, p) with p in [0, 100] */
static int l_percentile(lua_State *L) {
  size_t n;
  double *x = check_samples(L, 1, &n);
  lua_Number p = wl_check_number(L, 2);
  wl_arg_check(L, p >= 0 && p <= 100, 2, "percentile from 0 to 100 expected");
  wl_sort_doubles(x, n);
  lua_pushnumber(L, wl_percentile_sorted(x, n, p));
  return 1;
}

/* wl.stats.median_noise(samples) -> the relative half-width of the 95 % confidence interval of
 * the median (wl_median_noise); math.huge for fewer than 6 samples, or when one is not a
 * finite number (then nothing can be said of the noise) */
static int l_median_noise(lua_State *L) {
  wl_check_type(L, 1, LUA_TTABLE);
  lua_Integer len = luaL_len(L, 1);
  double noise = HUGE_VAL;
  if (len >= 6) {
    double *x = lua_newuserdatauv(L, (size_t)len * sizeof *x, 0);
    bool finite = true;
    for (lua_Integer i = 1; i <= len && finite; i++) {
      finite = lua_geti(L, 1, i) == LUA_TNUMBER; /* a string is no sample, whatever it reads as */
      x[i - 1] = finite ? lua_tonumber(L, -1) : 0;
      finite = finite && isfinite(x[i - 1]);
      lua_pop(L, 1);
    }
    if (finite) noise = wl_median_noise(x, (size_t)len);
  }
  lua_pushnumber(L, noise);
  return 1;
}

static void set_integer(lua_State *L, const char *k, size_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

/* wl.stats.shape(samples) -> {n, median, iqr, fence_low, fence_high, far_fence_low,
 * far_fence_high, outliers_low, outliers_high, far_outliers, trend_rho, trend_z, trend_change,
 * modes, bimodal, mode_low, mode_high, modes_at, bandwidth, kde_n} (docs/statistics.md) */
static int l_shape(lua_State *L) {
  size_t n;
  double *x = check_samples(L, 1, &n);
  struct wl_shape s;
  if (!wl_stats_shape(x, n, &s))
    return wl_raise(L, WL_EXIT_SCRIPT, "not enough memory for the shape");
  lua_createtable(L, 0, 20);
  set_integer(L, "n", s.n);
  set_number(L, "median", s.median);
  set_number(L, "iqr", s.iqr);
  set_number(L, "fence_low", s.fence_low);
  set_number(L, "fence_high", s.fence_high);
  set_number(L, "far_fence_low", s.far_fence_low);
  set_number(L, "far_fence_high", s.far_fence_high);
  set_integer(L, "outliers_low", s.outliers_low);
  set_integer(L, "outliers_high", s.outliers_high);
  set_integer(L, "far_outliers", s.far_outliers);
  set_number(L, "trend_rho", s.trend_rho);
  set_number(L, "trend_z", s.trend_z);
  set_number(L, "trend_change", s.trend_change);
  set_integer(L, "modes", (size_t)s.modes);
  lua_pushboolean(L, s.bimodal);
  lua_setfield(L, -2, "bimodal");
  set_number(L, "mode_low", s.mode_low);
  set_number(L, "mode_high", s.mode_high);
  /* modes_at: the two largest modes, ascending, when bimodal; else the single mode */
  lua_createtable(L, 2, 0);
  lua_pushnumber(L, s.mode_low);
  lua_rawseti(L, -2, 1);
  if (s.bimodal) {
    lua_pushnumber(L, s.mode_high);
    lua_rawseti(L, -2, 2);
  }
  lua_setfield(L, -2, "modes_at");
  set_number(L, "bandwidth", s.bandwidth);
  set_integer(L, "kde_n", s.kde_n);
  return 1;
}

/* Reads an array of numbers into a C buffer (a userdata) and sorts it; NULL (and nothing pushed)
 * when an element is not a number or fails `accept`: the caller then keeps the Lua definition,
 * whose behaviour on such values C does not reproduce. */
static double *sorted_numbers(lua_State *L, int arg, size_t *n, bool (*accept)(double)) {
  wl_check_type(L, arg, LUA_TTABLE);
  lua_Integer len = luaL_len(L, arg);
  wl_arg_check(L, len >= 0 && len < INT32_MAX, arg, "too many samples");
  double *x = lua_newuserdatauv(L, (len ? (size_t)len : 1) * sizeof *x, 0);
  for (lua_Integer i = 1; i <= len; i++) {
    bool ok = lua_geti(L, arg, i) == LUA_TNUMBER;
    x[i - 1] = lua_tonumber(L, -1);
    lua_pop(L, 1);
    if (!ok || !accept(x[i - 1])) {
      lua_pop(L, 1);
      return NULL;
    }
  }
  wl_sort_doubles(x, (size_t)len);
  *n = (size_t)len;
  return x;
}

static bool finite_positive(double v) { return v > 0 && isfinite(v); }
static bool not_nan(double v) { return !isnan(v); }

/* wl.stats.bootstrap_ratio(base, new, resamples, confidence, seed) -> lo, hi, log_replicates:
 * lua/wlrun/compare/stats.lua's bootstrap_ratio in C; nil when a sample is not a finite positive
 * number. */
static int l_bootstrap_ratio(lua_State *L) {
  lua_Integer resamples = wl_check_integer(L, 3);
  lua_Number confidence = wl_check_number(L, 4);
  lua_Integer seed = wl_check_integer(L, 5);
  wl_arg_check(L, resamples >= 0 && resamples <= INT32_MAX, 3,
               "resamples from 0 to 2^31 - 1 expected");
  size_t n1, n2;
  const double *base = sorted_numbers(L, 1, &n1, finite_positive);
  const double *new = base ? sorted_numbers(L, 2, &n2, finite_positive) : NULL;
  if (!new) return 0;
  wl_arg_check(L, n1 >= 1 && n2 >= 1, n1 >= 1 ? 2 : 1, "at least one sample expected");
  double *logs = lua_newuserdatauv(L, (resamples ? (size_t)resamples : 1) * sizeof *logs, 0);
  double lo, hi;
  if (!wl_bootstrap_ratio(base, n1, new, n2, (size_t)resamples, confidence, (uint64_t)seed, logs,
                          &lo, &hi))
    return wl_raise(L, WL_EXIT_SCRIPT, "not enough memory for a bootstrap of %d resamples",
                    (int)resamples);
  lua_pushnumber(L, lo);
  lua_pushnumber(L, hi);
  lua_createtable(L, (int)resamples, 0);
  for (lua_Integer r = 0; r < resamples; r++) {
    lua_pushnumber(L, logs[r]);
    lua_rawseti(L, -2, r + 1);
  }
  return 3;
}

/* wl.stats.rank_sum(a, b) -> r1, ties: the rank sum of a among a and b and the tie term of the
 * Mann-Whitney U test; nil when a sample is not a number or NaN. */
static int l_rank_sum(lua_State *L) {
  size_t n1, n2;
  const double *a = sorted_numbers(L, 1, &n1, not_nan);
  const double *b = a ? sorted_numbers(L, 2, &n2, not_nan) : NULL;
  if (!b) return 0;
  struct wl_rank_sum s;
  wl_rank_sum(a, n1, b, n2, &s);
  lua_pushnumber(L, s.r1);
  lua_pushinteger(L, (lua_Integer)s.ties);
  return 2;
}

/* wl.stats.geomean_interval(lists, confidence) -> lo, hi: lua/wlrun/compare/stats.lua's
 * geomean_interval in C for one list or more, each of at least one log replicate; nil when an
 * element is not a number. */
static int l_geomean_interval(lua_State *L) {
  wl_check_type(L, 1, LUA_TTABLE);
  lua_Number confidence = wl_check_number(L, 2);
  lua_Integer lists = luaL_len(L, 1), resamples = -1;
  wl_arg_check(L, lists >= 1, 1, "at least one list expected");
  for (lua_Integer i = 1; i <= lists; i++) {
    if (lua_rawgeti(L, 1, i) != LUA_TTABLE) return wl_arg_error(L, 1, "a list of lists expected");
    lua_Integer len = luaL_len(L, -1);
    if (resamples < 0 || len < resamples) resamples = len;
    lua_pop(L, 1);
  }
  wl_arg_check(L, resamples >= 1 && resamples <= INT32_MAX, 1,
               "lists of 1 to 2^31 - 1 replicates expected");
  double *sums = lua_newuserdatauv(L, (size_t)resamples * sizeof *sums, 0);
  for (lua_Integer r = 0; r < resamples; r++) sums[r] = 0;
  for (lua_Integer i = 1; i <= lists;
       i++) { /* the configurations' order: Lua's order of addition */
    lua_rawgeti(L, 1, i);
    for (lua_Integer r = 0; r < resamples; r++) {
      bool ok = lua_rawgeti(L, -1, r + 1) == LUA_TNUMBER;
      sums[r] += lua_tonumber(L, -1);
      lua_pop(L, 1);
      if (!ok) return 0;
    }
    lua_pop(L, 1);
  }
  double lo, hi;
  wl_geomean_interval(sums, (size_t)lists, (size_t)resamples, confidence, &lo, &hi);
  lua_pushnumber(L, lo);
  lua_pushnumber(L, hi);
  return 2;
}

void wl_open_stats(lua_State *L) {
  static const luaL_Reg fns[] = {{"summary", l_summary},
                                 {"percentile", l_percentile},
                                 {"median_noise", l_median_noise},
                                 {"shape", l_shape},
                                 {"bootstrap_ratio", l_bootstrap_ratio},
                                 {"rank_sum", l_rank_sum},
                                 {"geomean_interval", l_geomean_interval},
                                 {NULL, NULL}};
  luaL_newlib(L, fns);
  lua_setfield(L, -2, "stats");
}
