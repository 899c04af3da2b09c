/* CUPTI through dlopen for cupti mode (cupti_load.c, docs/measuring.md "Kernel time through
 * CUPTI"): loaded at its first use, never at start, so that wlrun runs where it is not
 * installed. The toolkit's headers give the types only; wlrun does not link CUPTI. Looked for,
 * in order:
 *   1. WLRUN_CUPTI: an explicit path; when set, the only place tried;
 *   2. a CUPTI the process has loaded already (a profiler's: the one in use);
 *   3. the loader's own search for libcupti.so.13, then libcupti.so;
 *   4. $CUDA_HOME/lib64, /usr/local/cuda/lib64, /usr/local/cuda/extras/CUPTI/lib64.
 * Every function used is resolved with dlsym and checked. Pure C: no Lua, no device. */
#ifndef WL_CUPTI_LOAD_H
#define WL_CUPTI_LOAD_H

#include <cupti.h>
#include <stdbool.h>
#include <stddef.h>

struct wl_cupti_api {
  char path[512]; /* where it was loaded from, as dlopen was given it */
  bool preloaded; /* the process had loaded it before wlrun looked (a profiler, wlrun trace) */
  __typeof__(cuptiGetResultString) *result_string;
  __typeof__(cuptiSubscribe) *subscribe;
  __typeof__(cuptiUnsubscribe) *unsubscribe;
  __typeof__(cuptiActivityRegisterCallbacks) *register_callbacks;
  __typeof__(cuptiActivityEnable) *enable;
  __typeof__(cuptiActivityDisable) *disable;
  __typeof__(cuptiActivityGetNextRecord) *next_record;
  __typeof__(cuptiActivityGetNumDroppedRecords) *dropped;
  __typeof__(cuptiActivityFlushAll) *flush_all;
  __typeof__(cuptiActivityPushExternalCorrelationId) *push_id;
  __typeof__(cuptiActivityPopExternalCorrelationId) *pop_id;
};

/* The loaded library, or NULL with the reason (where it looked, how to point wlrun at it) in
 * why. Loads once per process; a failure is remembered and reported again the same way. */
const struct wl_cupti_api *wl_cupti_load(char *why, size_t whylen);

/* CUPTI's text for a result code ("CUPTI_ERROR_...") */
const char *wl_cupti_result(const struct wl_cupti_api *api, CUptiResult r);

#endif
