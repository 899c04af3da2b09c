/* The files embedded in the binary at build time (cmake/embed.cmake): the Lua library
 * (lua/wlrun/...), the CLI help (docs/cli.md) and wlrun trace's Python start-up hook
 * (src/trace/python/sitecustomize.py). */
#ifndef WL_EMBEDDED_H
#define WL_EMBEDDED_H

#include <stddef.h>

struct wl_embedded_file {
  const char *path;
  const unsigned char *data;
  size_t size;
};
extern const struct wl_embedded_file wl_embedded_files[];
extern const size_t wl_embedded_count;
const struct wl_embedded_file *wl_embedded_find(const char *path);

#endif
