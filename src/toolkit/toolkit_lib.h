/* A CUDA toolkit library opened with dlopen at its first use (toolkit_lib.c): cuBLAS,
 * cuBLASLt, NVRTC. Looked for, in order:
 *   1. an environment variable (WLRUN_CUBLAS, ...): an explicit path, the only place tried when
 * set;
 *   2. the loader's own search (LD_LIBRARY_PATH, wlrun's run path, ld.so.cache);
 *   3. $CUDA_HOME/lib64, /usr/local/cuda/lib64, /usr/local/cuda/targets/x86_64-linux/lib.
 * A failure says where it looked and how to point wlrun at the library. Pure C: no Lua, no
 * device. */
#ifndef WL_TOOLKIT_LIB_H
#define WL_TOOLKIT_LIB_H

#include <stdbool.h>
#include <stddef.h>

/* What a failed load was: the library is not anywhere wlrun looked (a missing optional
 * dependency; under --compile-only only a note), or something is wrong with what was found or
 * pointed at (an explicit path that does not load, a library without a symbol). */
enum wl_lib_failure { WL_LIB_NOT_FOUND = 1, WL_LIB_BAD };

/* one library: its names, where it was found, and what a failure said */
struct wl_toolkit_lib {
  const char *what;   /* "cuBLAS" */
  const char *soname; /* "libcublas.so.13" */
  const char *env;    /* "WLRUN_CUBLAS" */
  bool tried;
  void *handle;
  enum wl_lib_failure failure;
  char path[512]; /* as dlopen was given it */
  char why[1536];
  char load_error[512]; /* the first dlerror of a candidate that is there but did not load */
  char last_error[512]; /* the last dlerror */
};

/* Opens lib once (RTLD_NOW | RTLD_LOCAL); on failure lib->handle is NULL, lib->why and
 * lib->failure say why. */
void wl_toolkit_lib_open(struct wl_toolkit_lib *lib);

/* *fn = the symbol name; false (lib->why and failure set) when lib lacks it */
bool wl_toolkit_lib_symbol(struct wl_toolkit_lib *lib, void **fn, const char *name);
#define WL_TOOLKIT_SYMBOL(lib, api, field, name) \
  wl_toolkit_lib_symbol(lib, (void **)&(api)->field, name)

/* NULL, with lib's reason in why and its kind in *failure (why and failure may be NULL) */
const void *wl_toolkit_lib_failed(const struct wl_toolkit_lib *lib, char *why, size_t whylen,
                                  enum wl_lib_failure *failure);

/* a library that lacks what wlrun needs: closed, and wl_toolkit_lib_failed's NULL */
const void *wl_toolkit_lib_unload(struct wl_toolkit_lib *lib, char *why, size_t whylen,
                                  enum wl_lib_failure *failure);

#endif
