/* libFuzzer target: wlrun.ini files (src/base/config.c through inih). */
#include "config.h"
#include "settings.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char path[64];
  if (!path[0]) snprintf(path, sizeof path, "/tmp/wlrun-fuzz-%d.ini", (int)getpid());
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  fwrite(data, 1, size, f);
  fclose(f);
  wl_settings_reset();
  char err[1024];
  bool io;
  wl_config_load(path, err, sizeof err, &io);
  return 0;
}
