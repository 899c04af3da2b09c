/* NVRTC through dlopen (nvrtc_load.c, docs/install.md): loaded at its first use — a compile, the
 * kernel cache's key (NVRTC's version), --arch's check, --version — never at start. Linked, its
 * relocations cost every process 15-35 ms before main, and a machine without the toolkit could
 * not start wlrun at all, not even to compare two results. Looked for as toolkit_lib.h says,
 * WLRUN_NVRTC its explicit path. wl_nvrtc_start loads it on a thread of its own meanwhile (a run
 * starts it once the CUDA driver is loaded, while the context is made: a library's load holds
 * the loader's lock, which the driver's own load needs); a wl_nvrtc_load while that thread
 * works waits for it. Pure C: no Lua, no device. */
#ifndef WL_NVRTC_LOAD_H
#define WL_NVRTC_LOAD_H

#include "toolkit_lib.h"

#include <nvrtc.h>
#include <stdbool.h>
#include <stddef.h>

struct wl_nvrtc_api {
  char path[512];   /* where it was loaded from, as dlopen was given it */
  int major, minor; /* nvrtcVersion */
  __typeof__(nvrtcGetErrorString) *error_string;
  __typeof__(nvrtcGetNumSupportedArchs) *num_archs;
  __typeof__(nvrtcGetSupportedArchs) *archs;
  __typeof__(nvrtcCreateProgram) *create;
  __typeof__(nvrtcDestroyProgram) *destroy;
  __typeof__(nvrtcAddNameExpression) *add_name;
  __typeof__(nvrtcCompileProgram) *compile;
  __typeof__(nvrtcGetLoweredName) *lowered_name;
  __typeof__(nvrtcGetProgramLogSize) *log_size;
  __typeof__(nvrtcGetProgramLog) *log;
  __typeof__(nvrtcGetPTXSize) *ptx_size;
  __typeof__(nvrtcGetPTX) *ptx;
  __typeof__(nvrtcGetCUBINSize) *cubin_size;
  __typeof__(nvrtcGetCUBIN) *cubin;
};

/* The loaded library, or NULL with the reason (where it looked, how to point wlrun at it) in
 * why and its kind in *failure (either may be NULL). Loads once per process, from any thread; a
 * failure is remembered and reported again the same way. */
const struct wl_nvrtc_api *wl_nvrtc_load(char *why, size_t whylen, enum wl_lib_failure *failure);

/* Begins wl_nvrtc_load on a thread (once; nothing when it has run already or the thread cannot
 * start: the first use then loads it). */
void wl_nvrtc_start(void);

/* Waits for wl_nvrtc_start's thread, at most seconds: before the process ends, so that no exit
 * handler runs while it is inside the library. False when it still works (a load that hangs: the
 * caller ends the process without the exit handlers). */
bool wl_nvrtc_finish(int seconds);

#endif
