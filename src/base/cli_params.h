/* -p NAME=VALUES overrides: a list of values and numeric ranges (docs/cli.md, "Parameters"). */
#ifndef WL_CLI_PARAMS_H
#define WL_CLI_PARAMS_H

#include <stdbool.h>
#include <stddef.h>

#define WL_PARAM_MAX_VALUES 100000

struct wl_param_override {
  char name[64];
  char **values; /* each value as text; numbers from ranges printed with %.17g */
  size_t nvalues;
};

/* Parses "NAME=V1,V2,LO:HI[:STEP]" where STEP is N, +N or *N. Returns false with a message. */
bool wl_param_parse(const char *text, struct wl_param_override *out, char *err, size_t errlen);
void wl_param_free(struct wl_param_override *p);

#endif
