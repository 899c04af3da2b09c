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

/* Whether the kernel (as wl_kernel_build would build it: the table at index spec, name, the target
 * arch, code, dir) has no cache entry yet and was not asked about before in this process, for
 * the processes of wl.prepare_kernels (compile_ahead.lua). False without a cache. Raises as
 * wl_kernel_build on a bad table or a compiler that is not there. */
bool wl_kernel_ahead(lua_State *L, int spec, const char *name, const char *arch, const char *code,
                     const char *dir);

/* The directory of a run's compiles ahead (NULL: none). Where write is true (a process that
 * compiles ahead), each kernel it compiles leaves DIR/HASH.done; else (the run) the
 * wl_kernel_build that finds an entry with its mark takes the mark and counts the kernel as
 * compiled by this run (from_cache false), as it would have been without the preparation. */
void wl_kernel_ahead_markers(const char *dir, bool write);

/* compiler runs (those done ahead included) and cache hits in this run, and of the compiler runs
 * those done ahead (wl.prepare_kernels), for wl.compile_stats */
void wl_kernel_compile_counts(long *compiles, long *cache_hits, long *compiled_ahead);

#endif
