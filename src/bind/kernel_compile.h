/* A kernel's source compiled, for wl.kernel (cuda_kernel.c), by NVRTC or by nvcc (the
 * `compiler` field, else --compiler / [compile] compiler), through the on-disk cache
 * (kernel_compile.c, docs/kernels.md). */
#ifndef WL_KERNEL_COMPILE_H
#define WL_KERNEL_COMPILE_H

#include "cuda_kernel.h"
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
 * '#', by which text would become code. nvcc gets the same name in the same way. */
const char *wl_kernel_name_problem(const char *name, size_t len, size_t *at);

/* Compiles code (the source of wl.kernel's table at index spec: its defines, options and
 * compiler) into k, whose name, source and arch are set: k->code, k->sig, k->from_cache,
 * k->compiler and k->compiler_version. dir is the source's directory (its local headers), or
 * NULL. Raises on every error (exit 6 for the compiler's, 1 for the table's). */
void wl_kernel_build(lua_State *L, int spec, struct wl_kernel *k, const char *code,
                     const char *dir);

/* compiler runs and cache hits in this run, for wl.compile_stats */
void wl_kernel_compile_counts(long *compiles, long *cache_hits);

#endif
