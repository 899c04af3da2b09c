/* cuBLAS and cuBLASLt through dlopen: the search, the symbols, the messages (cublas_load.h). */
#include "cublas_load.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* one library: its names, where it may be, and what a failure said */
struct library {
  const char *what;   /* "cuBLAS" */
  const char *soname; /* "libcublas.so.13" */
  const char *env;    /* "WLRUN_CUBLAS" */
  bool tried;
  void *handle;
  enum wl_lib_failure failure;
  char path[512];
  char why[1536];
};

static bool try_open(struct library *lib, const char *path) {
  lib->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib->handle) snprintf(lib->path, sizeof lib->path, "%s", path);
  return lib->handle != NULL;
}

/* Opens lib once; on failure fills lib->why and lib->failure. */
static void open_library(struct library *lib) {
  if (lib->tried) return;
  lib->tried = true;
  const char *explicit_path = getenv(lib->env);
  if (explicit_path && *explicit_path) {
    if (try_open(lib, explicit_path)) return;
    const char *err = dlerror();
    snprintf(lib->why, sizeof lib->why, "%s: %s=%s does not load: %s; point %s at %s (or unset it to search the usual places)",
             lib->what, lib->env, explicit_path, err ? err : "unknown error", lib->env, lib->soname);
    lib->failure = WL_LIB_BAD;
    return;
  }
  if (try_open(lib, lib->soname)) return;
  char tried[1024], path[512];
  int used = snprintf(tried, sizeof tried, "the loader's path (LD_LIBRARY_PATH, ld.so.cache)");
  const char *cuda_home = getenv("CUDA_HOME");
  char home_lib[512] = "";
  if (cuda_home && *cuda_home) snprintf(home_lib, sizeof home_lib, "%s/lib64", cuda_home);
  const char *const dirs[] = {home_lib, "/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"};
  bool found = false;
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs && !found; i++) {
    if (!*dirs[i] || (i > 0 && strcmp(dirs[i], dirs[0]) == 0)) continue; /* empty, or $CUDA_HOME's again */
    snprintf(path, sizeof path, "%s/%s", dirs[i], lib->soname);
    found = try_open(lib, path);
    if (!found && used > 0 && (size_t)used < sizeof tried)
      used += snprintf(tried + used, sizeof tried - (size_t)used, ", %s", dirs[i]);
  }
  if (found) return;
  snprintf(lib->why, sizeof lib->why,
           "%s (%s) not found; looked in %s; install the CUDA toolkit's %s or set %s=/path/to/%s",
           lib->what, lib->soname, tried, lib->what, lib->env, lib->soname);
  lib->failure = WL_LIB_NOT_FOUND;
}

/* Resolves name into *fn; on failure records which symbol lib lacks. */
static bool resolve(struct library *lib, void **fn, const char *name) {
  *fn = dlsym(lib->handle, name);
  if (*fn) return true;
  snprintf(lib->why, sizeof lib->why, "%s: %s has no symbol %s (is it %s of CUDA 13?)", lib->what, lib->path, name,
           lib->soname);
  lib->failure = WL_LIB_BAD;
  return false;
}

#define RESOLVE(lib, api, field, name) resolve(lib, (void **)&(api)->field, name)

static const void *failed(struct library *lib, char *why, size_t whylen, enum wl_lib_failure *failure) {
  snprintf(why, whylen, "%s", lib->why);
  *failure = lib->failure;
  return NULL;
}

/* a library that lacks what wlrun needs: closed, and its failure reported */
static const void *unload(struct library *lib, char *why, size_t whylen, enum wl_lib_failure *failure) {
  (void)dlclose(lib->handle); /* it is not used again: a failure to close changes nothing */
  lib->handle = NULL;
  return failed(lib, why, whylen, failure);
}

const struct wl_cublas_api *wl_cublas_load(char *why, size_t whylen, enum wl_lib_failure *failure) {
  static struct library lib = {"cuBLAS", "libcublas.so.13", "WLRUN_CUBLAS"};
  static struct wl_cublas_api api;
  static bool ready;
  if (ready) return &api;
  if (lib.tried) return failed(&lib, why, whylen, failure);
  open_library(&lib);
  if (!lib.handle) return failed(&lib, why, whylen, failure);
  __typeof__(cublasGetProperty) *property;
  bool ok = RESOLVE(&lib, &api, create, "cublasCreate_v2") && RESOLVE(&lib, &api, set_stream, "cublasSetStream_v2") &&
            RESOLVE(&lib, &api, set_workspace, "cublasSetWorkspace_v2") &&
            RESOLVE(&lib, &api, set_math_mode, "cublasSetMathMode") && RESOLVE(&lib, &api, gemm_ex, "cublasGemmEx") &&
            RESOLVE(&lib, &api, status_string, "cublasGetStatusString") &&
            resolve(&lib, (void **)&property, "cublasGetProperty");
  int major = 0, minor = 0, patch = 0;
  if (ok && (property(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
             property(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
             property(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)) {
    snprintf(lib.why, sizeof lib.why, "cuBLAS: %s does not say its version (cublasGetProperty failed)", lib.path);
    lib.failure = WL_LIB_BAD;
    ok = false;
  }
  if (!ok) return unload(&lib, why, whylen, failure);
  api.version = major * 10000 + minor * 100 + patch;
  snprintf(api.path, sizeof api.path, "%s", lib.path);
  ready = true;
  return &api;
}

const struct wl_cublaslt_api *wl_cublaslt_load(char *why, size_t whylen, enum wl_lib_failure *failure) {
  static struct library lib = {"cuBLASLt", "libcublasLt.so.13", "WLRUN_CUBLASLT"};
  static struct wl_cublaslt_api api;
  static bool ready;
  if (ready) return &api;
  if (lib.tried) return failed(&lib, why, whylen, failure);
  open_library(&lib);
  if (!lib.handle) return failed(&lib, why, whylen, failure);
  __typeof__(cublasLtGetVersion) *version;
  bool ok = RESOLVE(&lib, &api, create, "cublasLtCreate") && RESOLVE(&lib, &api, destroy, "cublasLtDestroy") &&
            RESOLVE(&lib, &api, desc_create, "cublasLtMatmulDescCreate") &&
            RESOLVE(&lib, &api, desc_destroy, "cublasLtMatmulDescDestroy") &&
            RESOLVE(&lib, &api, desc_set, "cublasLtMatmulDescSetAttribute") &&
            RESOLVE(&lib, &api, layout_create, "cublasLtMatrixLayoutCreate") &&
            RESOLVE(&lib, &api, layout_destroy, "cublasLtMatrixLayoutDestroy") &&
            RESOLVE(&lib, &api, pref_create, "cublasLtMatmulPreferenceCreate") &&
            RESOLVE(&lib, &api, pref_destroy, "cublasLtMatmulPreferenceDestroy") &&
            RESOLVE(&lib, &api, pref_set, "cublasLtMatmulPreferenceSetAttribute") &&
            RESOLVE(&lib, &api, heuristic, "cublasLtMatmulAlgoGetHeuristic") &&
            RESOLVE(&lib, &api, matmul, "cublasLtMatmul") &&
            RESOLVE(&lib, &api, status_string, "cublasLtGetStatusString") &&
            resolve(&lib, (void **)&version, "cublasLtGetVersion");
  if (!ok) return unload(&lib, why, whylen, failure);
  api.version = version();
  snprintf(api.path, sizeof api.path, "%s", lib.path);
  ready = true;
  return &api;
}
