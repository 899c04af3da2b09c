/* nvcc as wl.kernel's second compiler (docs/kernels.md, "nvcc"): the toolkit's nvcc, found
 * where NVRTC's toolkit is, run as a process (no shell) on a copy of the kernel's source in a
 * temporary directory; it gives the cubin and PTX that `nvcc -cubin` gives a user's build. Pure
 * C: no Lua, no device. */
#ifndef WL_NVCC_RUN_H
#define WL_NVCC_RUN_H

#include "kernel_cache.h"

#include <stdbool.h>
#include <stddef.h>

struct wl_nvcc {
  char path[512];   /* the nvcc that runs */
  char version[48]; /* "13.0.88": `nvcc --version`'s V13.0.88 */
};

/* nvcc, looked for (once per process) in this order: $WLRUN_NVCC (an explicit path, the only
 * place tried when set), $CUDA_HOME/bin/nvcc, /usr/local/cuda/bin/nvcc, then each directory of
 * $PATH. NULL with the reason (every place looked at, or why the one found does not say its
 * version) in why. */
const struct wl_nvcc *wl_nvcc_find(char *why, size_t whylen);

/* What to compile: code (a C string) as source_name says (in nvcc's messages, through #line),
 * for arch ("sm_90", "sm_90a"), with opts (nvcc's options, after the architecture). Where ref
 * is not NULL, a host reference to the kernel it names is compiled after the code, so that a
 * template kernel is instantiated as NVRTC's name expressions do. */
struct wl_nvcc_job {
  const char *code, *source_name, *ref, *arch;
  const char *const *opts;
  int nopts;
};

enum wl_nvcc_result {
  WL_NVCC_OK,
  WL_NVCC_FAILED,  /* the code did not compile: nvcc's messages in c->log */
  WL_NVCC_NOT_RUN, /* nvcc could not be run, or its output not read: err says why */
  WL_NVCC_STOPPED, /* nvcc ended by a signal (a Ctrl-C reaches it too) */
};

/* Compiles job; fills c->cubin, c->ptx and c->log (nvcc's messages, maybe empty); c->lowered is
 * left NULL for the caller, which finds the kernel in the cubin. On any result but OK, c holds
 * nothing but maybe the log. */
enum wl_nvcc_result wl_nvcc_compile(const struct wl_nvcc *nv, const struct wl_nvcc_job *job,
                                    struct wl_compiled *c, char *err, size_t errlen);

#endif
