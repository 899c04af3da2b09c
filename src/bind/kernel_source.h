/* The files a kernel's code comes from: regular files only (a FIFO would block, a device never
 * ends), at most 64 MiB, and the local headers a source includes, each once. */
#ifndef WL_KERNEL_SOURCE_H
#define WL_KERNEL_SOURCE_H

#include <lauxlib.h>
#include <stdbool.h>
#include <stddef.h>

/* The whole of the file at path, NUL-terminated (malloc'd; *len its length); or NULL with *why. */
char *wl_read_source_file(const char *path, size_t *len, const char **why);

/* Appends to key the text of the local headers that code #includes "like/this.h" (relative to
 * dir), recursively, each once; false, with why, when one of them is not a regular file. */
bool wl_add_local_headers(luaL_Buffer *key, const char *code, const char *dir, char *why,
                          size_t size);

#endif
