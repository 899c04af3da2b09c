/* One kernel compiled by NVRTC (kernel_compile.c), for wl.kernel (cuda_kernel.c) */
#ifndef WL_KERNEL_COMPILE_H
#define WL_KERNEL_COMPILE_H

#include "kernel_cache.h"
#include "nvrtc_load.h"

#include <lua.h>
#include <stdbool.h>

/* NVRTC, loaded at its first use; an error (exit 6) naming fn (and the kernel, where not NULL)
 * where it is not found */
const struct wl_nvrtc_api *wl_nvrtc_or_raise(lua_State *L, const char *fn, const char *kernel);

/* NULL where name (len bytes) can be given to NVRTC as a name expression, else what is wrong
 * with it (the offending byte's offset in *at). NVRTC pastes the expression into the program
 * it compiles, so a name is a C++ name with its template arguments and nothing else: letters,
 * digits, _, blanks and the punctuation of a name expression ('a' and 1'000 included); never a
 * newline (a line of its own, like an #include), a ';', braces, a double quote, a backslash or
 * '#', by which text would become code. */
const char *wl_kernel_name_problem(const char *name, size_t len, size_t *at);

/* Compiles name (an NVRTC name expression) from code with opts; fills c (its code, lowered name
 * and log). On an error returns false with the message (and NVRTC's log) pushed, for the caller
 * to raise once it has let go of the cache's lock. */
bool wl_kernel_compile(lua_State *L, const struct wl_nvrtc_api *nv, const char *code, const char *source_name,
                       const char *name, const char **opts, int nopts, struct wl_compiled *c);

#endif
