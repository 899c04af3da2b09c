/* NVRTC through dlopen, once, from any thread (nvrtc_load.h). */
#include "nvrtc_load.h"
#include "side_thread.h"

#include <stdbool.h>
#include <stdio.h>

static struct wl_toolkit_lib lib = {"NVRTC", "libnvrtc.so.13", "WLRUN_NVRTC"};
static struct wl_nvrtc_api api;
static bool ready;
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define SYMBOL(field, name) WL_TOOLKIT_SYMBOL(&lib, &api, field, name)

static void load_once(void) {
  wl_toolkit_lib_open(&lib);
  if (!lib.handle) return;
  __typeof__(nvrtcVersion) *version;
  bool ok = SYMBOL(error_string, "nvrtcGetErrorString") &&
            SYMBOL(num_archs, "nvrtcGetNumSupportedArchs") &&
            SYMBOL(archs, "nvrtcGetSupportedArchs") && SYMBOL(create, "nvrtcCreateProgram") &&
            SYMBOL(destroy, "nvrtcDestroyProgram") && SYMBOL(add_name, "nvrtcAddNameExpression") &&
            SYMBOL(compile, "nvrtcCompileProgram") && SYMBOL(lowered_name, "nvrtcGetLoweredName") &&
            SYMBOL(log_size, "nvrtcGetProgramLogSize") && SYMBOL(log, "nvrtcGetProgramLog") &&
            SYMBOL(ptx_size, "nvrtcGetPTXSize") && SYMBOL(ptx, "nvrtcGetPTX") &&
            SYMBOL(cubin_size, "nvrtcGetCUBINSize") && SYMBOL(cubin, "nvrtcGetCUBIN") &&
            wl_toolkit_lib_symbol(&lib, (void **)&version, "nvrtcVersion");
  if (ok && version(&api.major, &api.minor) != NVRTC_SUCCESS) {
    snprintf(lib.why, sizeof lib.why, "NVRTC: %s does not say its version (nvrtcVersion failed)",
             lib.path);
    lib.failure = WL_LIB_BAD;
    ok = false;
  }
  if (!ok) {
    (void)wl_toolkit_lib_unload(&lib, NULL, 0, NULL); /* lib.why says why, for wl_nvrtc_load */
    return;
  }
  snprintf(api.path, sizeof api.path, "%s", lib.path);
  ready = true;
}

const struct wl_nvrtc_api *wl_nvrtc_load(char *why, size_t whylen, enum wl_lib_failure *failure) {
  if (pthread_once(&once, load_once) != 0) {
    if (why) snprintf(why, whylen, "NVRTC: cannot load it (pthread_once failed)");
    if (failure) *failure = WL_LIB_BAD;
    return NULL;
  }
  if (ready) return &api;
  return wl_toolkit_lib_failed(&lib, why, whylen, failure);
}

static pthread_t loader;
static bool started;

static void *load_on_thread(void *unused) {
  (void)unused;
  (void)wl_nvrtc_load(NULL, 0, NULL); /* a failure is kept for the first use to report */
  return NULL;
}

void wl_nvrtc_start(void) {
  if (!started) started = wl_side_thread_start(&loader, load_on_thread) == 0;
}

bool wl_nvrtc_finish(int seconds) {
  if (started && wl_side_thread_join(loader, seconds)) started = false;
  return !started;
}
