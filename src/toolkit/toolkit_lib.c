/* A CUDA toolkit library through dlopen: the search, the symbols, the messages (toolkit_lib.h). */
#include "toolkit_lib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Opens path; where it is there but does not load (no memory under ulimit -v, a missing
 * dependency, the wrong architecture), keeps the first such reason: that is not "not found". */
static bool try_open(struct wl_toolkit_lib *lib, const char *path) {
  lib->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib->handle) {
    snprintf(lib->path, sizeof lib->path, "%s", path);
    return true;
  }
  const char *err = dlerror();
  if (!err) err = "unknown error";
  snprintf(lib->last_error, sizeof lib->last_error, "%s", err);
  if (!strstr(err, "No such file or directory") && !lib->load_error[0])
    snprintf(lib->load_error, sizeof lib->load_error, "%s", err);
  return false;
}

void wl_toolkit_lib_open(struct wl_toolkit_lib *lib) {
  if (lib->tried) return;
  lib->tried = true;
  const char *explicit_path = getenv(lib->env);
  if (explicit_path && *explicit_path) {
    if (try_open(lib, explicit_path)) return;
    snprintf(lib->why, sizeof lib->why,
             "%s: %s=%s does not load: %s; point %s at %s (or unset it to search the usual places)",
             lib->what, lib->env, explicit_path, lib->last_error, lib->env, lib->soname);
    lib->failure = WL_LIB_BAD;
    return;
  }
  if (try_open(lib, lib->soname)) return;
  char tried[1024], path[512];
  int used = snprintf(tried, sizeof tried, "the loader's path (LD_LIBRARY_PATH, ld.so.cache)");
  const char *cuda_home = getenv("CUDA_HOME");
  char home_lib[512] = "";
  if (cuda_home && *cuda_home) snprintf(home_lib, sizeof home_lib, "%s/lib64", cuda_home);
  const char *const dirs[] = {home_lib, "/usr/local/cuda/lib64",
                              "/usr/local/cuda/targets/x86_64-linux/lib"};
  bool found = false;
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs && !found; i++) {
    if (!*dirs[i] || (i > 0 && strcmp(dirs[i], dirs[0]) == 0))
      continue; /* empty, or $CUDA_HOME's again */
    snprintf(path, sizeof path, "%s/%s", dirs[i], lib->soname);
    found = try_open(lib, path);
    if (!found && used > 0 && (size_t)used < sizeof tried)
      used += snprintf(tried + used, sizeof tried - (size_t)used, ", %s", dirs[i]);
  }
  if (found) return;
  if (lib->load_error[0]) {
    snprintf(lib->why, sizeof lib->why, "%s (%s) is there but does not load: %s%s", lib->what,
             lib->soname, lib->load_error,
             strstr(lib->load_error, "failed to map segment")
                 ? " (no memory to map it: a limit such as ulimit -v?)"
                 : "");
    lib->failure = WL_LIB_BAD;
    return;
  }
  snprintf(lib->why, sizeof lib->why,
           "%s (%s) not found; looked in %s; install the CUDA toolkit's %s or set %s=/path/to/%s",
           lib->what, lib->soname, tried, lib->what, lib->env, lib->soname);
  lib->failure = WL_LIB_NOT_FOUND;
}

bool wl_toolkit_lib_symbol(struct wl_toolkit_lib *lib, void **fn, const char *name) {
  *fn = dlsym(lib->handle, name);
  if (*fn) return true;
  snprintf(lib->why, sizeof lib->why, "%s: %s has no symbol %s (is it %s of CUDA 13?)", lib->what,
           lib->path, name, lib->soname);
  lib->failure = WL_LIB_BAD;
  return false;
}

const void *wl_toolkit_lib_failed(const struct wl_toolkit_lib *lib, char *why, size_t whylen,
                                  enum wl_lib_failure *failure) {
  if (why) snprintf(why, whylen, "%s", lib->why);
  if (failure) *failure = lib->failure;
  return NULL;
}

const void *wl_toolkit_lib_unload(struct wl_toolkit_lib *lib, char *why, size_t whylen,
                                  enum wl_lib_failure *failure) {
  (void)dlclose(lib->handle); /* it is not used again: a failure to close changes nothing */
  lib->handle = NULL;
  return wl_toolkit_lib_failed(lib, why, whylen, failure);
}
