/* A minimal assertion helper for the C unit tests: counts failures, prints where. */
#ifndef WL_CHECK_H
#define WL_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_failures, check_count;

#define CHECK(cond)                                                            \
  do {                                                                         \
    check_count++;                                                             \
    if (!(cond)) {                                                             \
      check_failures++;                                                        \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                                  \
  do {                                                                                         \
    double check_a_ = (a), check_b_ = (b);                                                     \
    check_count++;                                                                             \
    if (!(fabs(check_a_ - check_b_) <= (tol))) {                                               \
      check_failures++;                                                                        \
      fprintf(stderr, "%s:%d: %s = %.17g, expected %.17g\n", __FILE__, __LINE__, #a, check_a_, \
              check_b_);                                                                       \
    }                                                                                          \
  } while (0)

#define CHECK_STR(a, b)                                                            \
  do {                                                                             \
    const char *check_a_ = (a), *check_b_ = (b);                                   \
    check_count++;                                                                 \
    if (!check_a_ || strcmp(check_a_, check_b_) != 0) {                            \
      check_failures++;                                                            \
      fprintf(stderr, "%s:%d: %s = '%s', expected '%s'\n", __FILE__, __LINE__, #a, \
              check_a_ ? check_a_ : "(null)", check_b_);                           \
    }                                                                              \
  } while (0)

#define CHECK_CONTAINS(hay, needle)                                              \
  do {                                                                           \
    const char *check_h_ = (hay);                                                \
    check_count++;                                                               \
    if (!check_h_ || !strstr(check_h_, (needle))) {                              \
      check_failures++;                                                          \
      fprintf(stderr, "%s:%d: '%s' does not contain '%s'\n", __FILE__, __LINE__, \
              check_h_ ? check_h_ : "(null)", (needle));                         \
    }                                                                            \
  } while (0)

static int check_report(const char *name) {
  printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
  return check_failures ? 1 : 0;
}

#endif
