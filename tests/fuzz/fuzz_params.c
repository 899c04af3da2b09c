/* libFuzzer target: -p NAME=VALUES parsing and range expansion (src/base/cli_params.c). */
#include "cli_params.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  struct wl_param_override p;
  char err[512];
  if (wl_param_parse(text, &p, err, sizeof err)) {
    for (size_t i = 0; i < p.nvalues; i++)
      if (!p.values[i] || strlen(p.values[i]) > size + 64) abort();
    wl_param_free(&p);
  }
  free(text);
  return 0;
}
