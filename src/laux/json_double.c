/* The text of a float as json.encode writes it: the shortest of %.15g, %.16g and %.17g that
 * reads back to the same double, in the C locale, with ".0" appended when it would read as an
 * integer.
 *
 * Trying the three precisions with snprintf and strtod costs about 1.7 us a number (1.7 s for a
 * million samples), so the digits come from the Schubfach algorithm (R. Giulietti, "The
 * Schubfach way to render doubles", 2020): the shortest decimal inside the double's rounding
 * interval, the closest to it among those. Where that interval is symmetric this is the same
 * text as the rule above: the nearest n-digit decimal lies inside whenever any n-digit one does.
 * It is asymmetric only for powers of two (the gap below is half the gap above); those take the
 * literal rule (wl_json_format_double_slow), as do subnormals, whose shortest text can have
 * fewer than 15 digits where %.15g's does not. tests/c/test_json.c compares both on millions of
 * doubles. */
#include "json_pow10.h"
#include "ljson.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct decimal {
  uint64_t digits; /* value = digits * 10^exp10 */
  int exp10;
};

/* floor(a / 2^b) for negative a too */
static int floor_shift(int a, int b) { return a >= 0 ? a >> b : -((-a + (1 << b) - 1) >> b); }

/* The top 64 bits of g * cp / 2^64, with the lowest bit set when any bit below them is (round
 * to odd); g over-estimates by less than one unit of its last bit, hence "> 1". */
static uint64_t round_to_odd(const uint64_t g[2], uint64_t cp) {
  unsigned __int128 x = (unsigned __int128)g[1] * cp;
  unsigned __int128 y = (unsigned __int128)g[0] * cp + (uint64_t)(x >> 64);
  return (uint64_t)(y >> 64) | ((uint64_t)y > 1);
}

/* c * 2^q, a normal double that is not a power of two, as the shortest decimal that reads back
 * to it (Schubfach) */
static struct decimal to_decimal(uint64_t c, int q) {
  int even = (c % 2) == 0;
  uint64_t cbl = 4 * c - 2, cb = 4 * c, cbr = 4 * c + 2;
  int k = floor_shift(q * 1262611, 22);          /* floor(log10(2^q)) */
  int h = q + floor_shift(-k * 1741647, 19) + 1; /* + floor(log2(10^-k)) */
  const uint64_t *g = wl_pow10_g[-k - WL_POW10_MIN];
  uint64_t vbl = round_to_odd(g, cbl << h), vb = round_to_odd(g, cb << h);
  uint64_t vbr = round_to_odd(g, cbr << h);
  uint64_t lower = vbl + !even, upper = vbr - !even;
  uint64_t s = vb / 4;
  if (s >= 10) { /* one digit fewer: at most one of the two candidates is inside */
    uint64_t sp = s / 10;
    int up_in = lower <= 40 * sp, wp_in = 40 * sp + 40 <= upper;
    if (up_in != wp_in) return (struct decimal){sp + (uint64_t)wp_in, k + 1};
  }
  int u_in = lower <= 4 * s, w_in = 4 * s + 4 <= upper;
  if (u_in != w_in) return (struct decimal){s + (uint64_t)w_in, k};
  uint64_t mid = 4 * s + 2; /* both inside: the closer, ties to even */
  int up = vb > mid || (vb == mid && (s & 1) != 0);
  return (struct decimal){s + (uint64_t)up, k};
}

static const char two_digits[] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "6869707172737475767778798081828384858687888990919293949596979899";

/* Writes DIGITS * 10^EXP10 as %.Pg would, P = max(15, number of digits). */
static size_t write_decimal(char *out, int negative, struct decimal d) {
  static const struct {
    uint64_t power;
    int zeros;
  } strip[] = {{100000000, 8}, {10000, 4}, {100, 2}, {10, 1}}; /* the trailing zeros */
  for (int i = 0; i < 4; i++)
    while (d.digits % strip[i].power == 0) {
      d.digits /= strip[i].power;
      d.exp10 += strip[i].zeros;
    }
  char buffer[24], *digits = buffer + sizeof buffer;
  uint64_t v = d.digits;
  for (; v >= 100; v /= 100) {
    digits -= 2;
    memcpy(digits, two_digits + 2 * (v % 100), 2);
  }
  if (v >= 10) {
    digits -= 2;
    memcpy(digits, two_digits + 2 * v, 2);
  } else {
    *--digits = (char)('0' + v);
  }
  int n = (int)(buffer + sizeof buffer - digits);
  int x = d.exp10 + n - 1; /* the exponent in d.ddde+x */
  int precision = n > 15 ? n : 15;
  char *p = out;
  if (negative) *p++ = '-';
  if (x < -4 || x >= precision) {
    *p++ = digits[0];
    if (n > 1) {
      *p++ = '.';
      memcpy(p, digits + 1, (size_t)n - 1);
      p += n - 1;
    }
    p += sprintf(p, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
  } else if (x < 0) {
    *p++ = '0';
    *p++ = '.';
    for (int i = 0; i < -x - 1; i++) *p++ = '0';
    memcpy(p, digits, (size_t)n);
    p += n;
  } else {
    for (int i = 0; i <= x; i++) *p++ = i < n ? digits[i] : '0';
    *p++ = '.';
    if (n > x + 1) {
      memcpy(p, digits + x + 1, (size_t)(n - x - 1));
      p += n - x - 1;
    } else {
      *p++ = '0';
    }
  }
  *p = '\0';
  return (size_t)(p - out);
}

/* snprintf and strtod agree on the current locale's decimal point; the result then gets '.' */
size_t wl_json_format_double_slow(double x, char *out) {
  if (isnan(x) || isinf(x)) return (size_t)sprintf(out, "null");
  char text[WL_JSON_DOUBLE_MAX];
  for (int precision = 15; precision <= 17; precision++) {
    snprintf(text, sizeof text, "%.*g", precision, x);
    if (strtod(text, NULL) == x) break;
  }
  const char *point = localeconv()->decimal_point;
  size_t point_len = point && *point ? strlen(point) : 1;
  char *p = out;
  int fraction = 0;
  for (const char *t = text; *t;) {
    if (point && *point && strncmp(t, point, point_len) == 0) {
      *p++ = '.';
      t += point_len;
      fraction = 1;
      continue;
    }
    if (*t == 'e' || *t == '.') fraction = 1;
    *p++ = *t++;
  }
  if (!fraction) {
    *p++ = '.';
    *p++ = '0';
  }
  *p = '\0';
  return (size_t)(p - out);
}

size_t wl_json_format_double(double x, char *out) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  int negative = (int)(bits >> 63);
  uint64_t significand = bits & ((UINT64_C(1) << 52) - 1);
  int exponent = (int)((bits >> 52) & 0x7ff);
  if (exponent == 0x7ff) return (size_t)sprintf(out, "null"); /* NaN, inf */
  if (exponent == 0 && significand == 0) return (size_t)sprintf(out, negative ? "-0.0" : "0.0");
  if (exponent == 0) return wl_json_format_double_slow(x, out); /* subnormal: see above */
  uint64_t c = significand | (UINT64_C(1) << 52);
  int q = exponent - 1075;
  /* an integer below 2^53: its digits as they are */
  if (q <= 0 && -q < 53 && (c & ((UINT64_C(1) << -q) - 1)) == 0)
    return write_decimal(out, negative, (struct decimal){c >> -q, 0});
  if (significand == 0) return wl_json_format_double_slow(x, out); /* a power of two */
  return write_decimal(out, negative, to_decimal(c, q));
}
