/* CUPTI through dlopen: the search, the functions, the messages (cupti_load.h). */
#include "cupti_load.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
  bool tried;
  void *handle;
  char why[1536];
} lib;

static bool try_open(struct wl_cupti_api *api, const char *path, int flags) {
  lib.handle = dlopen(path, flags);
  if (lib.handle) snprintf(api->path, sizeof api->path, "%s", path);
  return lib.handle != NULL;
}

/* Opens CUPTI once; on failure fills lib.why. */
static void open_cupti(struct wl_cupti_api *api) {
  static const char *const sonames[] = {"libcupti.so.13", "libcupti.so"};
  const char *explicit_path = getenv("WLRUN_CUPTI");
  if (explicit_path && *explicit_path) {
    if (try_open(api, explicit_path, RTLD_NOW | RTLD_LOCAL)) return;
    const char *err = dlerror();
    snprintf(lib.why, sizeof lib.why,
             "CUPTI: WLRUN_CUPTI=%s does not load: %s; point WLRUN_CUPTI at libcupti.so.13",
             explicit_path, err ? err : "unknown error");
    return;
  }
  for (size_t i = 0; i < sizeof sonames / sizeof *sonames; i++)
    if (try_open(api, sonames[i], RTLD_NOW | RTLD_NOLOAD)) {
      api->preloaded = true;
      return;
    }
  for (size_t i = 0; i < sizeof sonames / sizeof *sonames; i++)
    if (try_open(api, sonames[i], RTLD_NOW | RTLD_LOCAL)) return;
  const char *cuda_home = getenv("CUDA_HOME");
  char home_lib[400] = "", path[512];
  if (cuda_home && *cuda_home) snprintf(home_lib, sizeof home_lib, "%s/lib64", cuda_home);
  const char *const dirs[] = {home_lib, "/usr/local/cuda/lib64",
                              "/usr/local/cuda/extras/CUPTI/lib64"};
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
    if (!*dirs[i]) continue;
    snprintf(path, sizeof path, "%s/libcupti.so.13", dirs[i]);
    if (try_open(api, path, RTLD_NOW | RTLD_LOCAL)) return;
  }
  snprintf(lib.why, sizeof lib.why,
           "CUPTI (libcupti.so.13) not found; looked in the loader's path (LD_LIBRARY_PATH, "
           "ld.so.cache)%s%s, "
           "/usr/local/cuda/lib64, /usr/local/cuda/extras/CUPTI/lib64; install the CUDA toolkit's "
           "CUPTI or set "
           "WLRUN_CUPTI=/path/to/libcupti.so.13",
           *home_lib ? ", " : "", home_lib);
}

static bool resolve(const struct wl_cupti_api *api, void **fn, const char *name) {
  *fn = dlsym(lib.handle, name);
  if (*fn) return true;
  snprintf(lib.why, sizeof lib.why, "CUPTI: %s has no function %s (a CUPTI older than CUDA 12?)",
           api->path, name);
  return false;
}

#define RESOLVE(api, field, name) resolve(api, (void **)&(api)->field, name)

const struct wl_cupti_api *wl_cupti_load(char *why, size_t whylen) {
  static struct wl_cupti_api api;
  static bool ready;
  if (ready) return &api;
  if (!lib.tried) {
    lib.tried = true;
    open_cupti(&api);
    bool ok = lib.handle && RESOLVE(&api, result_string, "cuptiGetResultString") &&
              RESOLVE(&api, subscribe, "cuptiSubscribe") &&
              RESOLVE(&api, unsubscribe, "cuptiUnsubscribe") &&
              RESOLVE(&api, register_callbacks, "cuptiActivityRegisterCallbacks") &&
              RESOLVE(&api, enable, "cuptiActivityEnable") &&
              RESOLVE(&api, disable, "cuptiActivityDisable") &&
              RESOLVE(&api, next_record, "cuptiActivityGetNextRecord") &&
              RESOLVE(&api, dropped, "cuptiActivityGetNumDroppedRecords") &&
              RESOLVE(&api, flush_all, "cuptiActivityFlushAll") &&
              RESOLVE(&api, push_id, "cuptiActivityPushExternalCorrelationId") &&
              RESOLVE(&api, pop_id, "cuptiActivityPopExternalCorrelationId");
    if (ok) {
      ready = true;
      return &api;
    }
    if (lib.handle)
      (void)dlclose(lib.handle); /* not used again: a failure to close changes nothing */
    lib.handle = NULL;
  }
  snprintf(why, whylen, "%s", lib.why);
  return NULL;
}

const char *wl_cupti_result(const struct wl_cupti_api *api, CUptiResult r) {
  const char *s = NULL;
  if (api && api->result_string && api->result_string(r, &s) == CUPTI_SUCCESS && s) return s;
  return "unknown CUPTI error";
}
