/* wlrun.ini: defaults per section, read with inih (docs/config.md). */
#ifndef WL_CONFIG_H
#define WL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* Reads path into the settings table. On error writes "path:line: message" into err and
 * returns false; exit code WL_EXIT_CONFIG (or WL_EXIT_IO when the file cannot be read). */
bool wl_config_load(const char *path, char *err, size_t errlen, bool *io_error);

/* The file to read: the one given with --config, else the first wlrun.ini from the working
 * directory up to its git repository's root (config.c), else NULL. */
const char *wl_config_locate(const char *given);

#endif
