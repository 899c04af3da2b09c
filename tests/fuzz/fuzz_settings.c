/* libFuzzer target: setting values (src/base/settings.c), each setting's parser, as the command
 * line and wlrun.ini hand them over. The first byte picks the setting. */
#include "settings.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  static int ready;
  if (!ready) {
    wl_settings_reset();
    ready = 1;
  }
  struct wl_setting *s = wl_setting_at(data[0] % wl_settings_count());
  char *text = malloc(size);
  if (!text) return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  char err[512];
  struct wl_setting copy = *s;
  if (wl_setting_assign(&copy, text, WL_FROM_CLI, "--fuzz", err, sizeof err)) {
    if ((copy.type == WL_INT || copy.type == WL_DURATION) &&
        (copy.number < copy.min || copy.number > copy.max))
      abort(); /* accepted out of its bounds */
  }
  free(text);
  return 0;
}
