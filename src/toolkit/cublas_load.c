/* cuBLAS and cuBLASLt through dlopen: the search, the symbols, the messages (cublas_load.h). */
#include "cublas_load.h"

#include <stdio.h>

#define SYMBOL(api, field, name) WL_TOOLKIT_SYMBOL(&lib, api, field, name)

const struct wl_cublas_api *wl_cublas_load(char *why, size_t whylen, enum wl_lib_failure *failure) {
  static struct wl_toolkit_lib lib = {"cuBLAS", "libcublas.so.13", "WLRUN_CUBLAS"};
  static struct wl_cublas_api api;
  static bool ready;
  if (ready) return &api;
  if (lib.tried) return wl_toolkit_lib_failed(&lib, why, whylen, failure);
  wl_toolkit_lib_open(&lib);
  if (!lib.handle) return wl_toolkit_lib_failed(&lib, why, whylen, failure);
  __typeof__(cublasGetProperty) *property;
  bool ok =
      SYMBOL(&api, create, "cublasCreate_v2") && SYMBOL(&api, set_stream, "cublasSetStream_v2") &&
      SYMBOL(&api, set_workspace, "cublasSetWorkspace_v2") &&
      SYMBOL(&api, set_math_mode, "cublasSetMathMode") && SYMBOL(&api, gemm_ex, "cublasGemmEx") &&
      SYMBOL(&api, status_string, "cublasGetStatusString") &&
      wl_toolkit_lib_symbol(&lib, (void **)&property, "cublasGetProperty");
  int major = 0, minor = 0, patch = 0;
  if (ok && (property(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
             property(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
             property(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)) {
    snprintf(lib.why, sizeof lib.why,
             "cuBLAS: %s does not say its version (cublasGetProperty failed)", lib.path);
    lib.failure = WL_LIB_BAD;
    ok = false;
  }
  if (!ok) return wl_toolkit_lib_unload(&lib, why, whylen, failure);
  api.version = major * 10000 + minor * 100 + patch;
  snprintf(api.path, sizeof api.path, "%s", lib.path);
  ready = true;
  return &api;
}

const struct wl_cublaslt_api *wl_cublaslt_load(char *why, size_t whylen,
                                               enum wl_lib_failure *failure) {
  static struct wl_toolkit_lib lib = {"cuBLASLt", "libcublasLt.so.13", "WLRUN_CUBLASLT"};
  static struct wl_cublaslt_api api;
  static bool ready;
  if (ready) return &api;
  if (lib.tried) return wl_toolkit_lib_failed(&lib, why, whylen, failure);
  wl_toolkit_lib_open(&lib);
  if (!lib.handle) return wl_toolkit_lib_failed(&lib, why, whylen, failure);
  __typeof__(cublasLtGetVersion) *version;
  bool ok = SYMBOL(&api, create, "cublasLtCreate") &&
            SYMBOL(&api, desc_create, "cublasLtMatmulDescCreate") &&
            SYMBOL(&api, desc_destroy, "cublasLtMatmulDescDestroy") &&
            SYMBOL(&api, desc_set, "cublasLtMatmulDescSetAttribute") &&
            SYMBOL(&api, layout_create, "cublasLtMatrixLayoutCreate") &&
            SYMBOL(&api, layout_destroy, "cublasLtMatrixLayoutDestroy") &&
            SYMBOL(&api, pref_create, "cublasLtMatmulPreferenceCreate") &&
            SYMBOL(&api, pref_destroy, "cublasLtMatmulPreferenceDestroy") &&
            SYMBOL(&api, pref_set, "cublasLtMatmulPreferenceSetAttribute") &&
            SYMBOL(&api, heuristic, "cublasLtMatmulAlgoGetHeuristic") &&
            SYMBOL(&api, matmul, "cublasLtMatmul") &&
            SYMBOL(&api, status_string, "cublasLtGetStatusString") &&
            wl_toolkit_lib_symbol(&lib, (void **)&version, "cublasLtGetVersion");
  if (!ok) return wl_toolkit_lib_unload(&lib, why, whylen, failure);
  api.version = version();
  snprintf(api.path, sizeof api.path, "%s", lib.path);
  ready = true;
  return &api;
}
