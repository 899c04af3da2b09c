/* wlrun: entry point. Parses the command line, reads wlrun.ini, and runs a script or a
 * subcommand. Exit codes: wl_exit.h and docs/cli.md. */
#include "backend.h"
#include "cli.h"
#include "config.h"
#include "lhost.h"
#include "nvrtc_load.h"
#include "settings.h"
#include "wl_exit.h"
#include "wl_modules.h"

#include <lua.h>
#include <stdio.h>
#include <string.h>

static int usage_error(const char *msg) {
  fprintf(stderr, "wlrun: %s\nTry 'wlrun --help'.\n", msg);
  return WL_EXIT_USAGE;
}

static void print_help(void) {
  const struct wl_embedded_file *f = wl_embedded_find("docs/cli.md");
  if (f) fwrite(f->data, 1, f->size, stdout);
}

static void print_version(void) {
  int driver = 0, runtime = 0;
  if (wl_backend->versions(&driver, &runtime) !=
      cudaSuccess) { /* the linked runtime's: needs no driver */
    wl_backend->clear_error();
  }
  char why[1536];
  const struct wl_nvrtc_api *nv = wl_nvrtc_load(why, sizeof why, NULL);
  if (nv)
    printf("wlrun %s (%s, CUDA runtime %d.%d, NVRTC %d.%d)\n", WLRUN_VERSION, LUA_RELEASE,
           runtime / 1000, runtime % 1000 / 10, nv->major, nv->minor);
  else
    printf("wlrun %s (%s, CUDA runtime %d.%d, NVRTC not found: %s)\n", WLRUN_VERSION, LUA_RELEASE,
           runtime / 1000, runtime % 1000 / 10, why);
}

/* What this NVRTC compiles for, so that --arch and [compile] arch are checked up front (NVRTC is
 * loaded for it: only where an architecture is given). */
static const struct wl_nvrtc_api *nvrtc(void) { return wl_nvrtc_load(NULL, 0, NULL); }

static int nvrtc_archs(int *archs, int max) {
  const struct wl_nvrtc_api *nv = nvrtc();
  int n = 0;
  if (!nv || nv->num_archs(&n) != NVRTC_SUCCESS || n <= 0 || n > max) return 0;
  return nv->archs(archs) == NVRTC_SUCCESS ? n : 0;
}

/* an architecture with a suffix (sm_90a, sm_100f): whether NVRTC compiles an empty program */
static bool nvrtc_accepts(const char *arch) {
  const struct wl_nvrtc_api *nv = nvrtc();
  char option[48];
  const char *options[] = {option};
  nvrtcProgram p;
  snprintf(option, sizeof option, "-arch=%s", arch);
  if (!nv || nv->create(&p, "", "probe", 0, NULL, NULL) != NVRTC_SUCCESS)
    return true; /* cannot tell */
  nvrtcResult r = nv->compile(p, 1, options);
  (void)nv->destroy(&p); /* the probe's answer is known; nothing to do if freeing fails */
  return r == NVRTC_SUCCESS;
}

static const char *nvrtc_name(void) {
  static char name[32];
  const struct wl_nvrtc_api *nv = nvrtc();
  snprintf(name, sizeof name, "NVRTC %d.%d", nv ? nv->major : 0, nv ? nv->minor : 0);
  return name;
}

static void install_arch_support(void) {
  static const struct wl_arch_support support = {nvrtc_name, nvrtc_archs, nvrtc_accepts};
  wl_settings_set_arch_support(&support);
}

static int run(int argc, char **argv, struct wl_cli *cli_out);

#if defined(__SANITIZE_ADDRESS__)
/* The sanitized build (-DWLRUN_SANITIZE=ON): Debian 12's GCC 12 runtime records the dynamic TLS
 * blocks of dlopen'd libraries (NVRTC's) through __tls_get_addr, at times at an address that is
 * not one, and LeakSanitizer's check at exit then crashes reading it ("Tracer caught signal
 * 11"), depending on the heap's layout (docs/reliability.md). Not intercepting it keeps the leak
 * check; ASAN_OPTIONS adds to this. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "intercept_tls_get_addr=0"; }
#endif

int main(int argc, char **argv) {
  wl_clock_mark_start();
  struct wl_cli cli;
  memset(&cli, 0, sizeof cli);
  int code = run(argc, argv, &cli);
  wl_cli_free(&cli);
  return wl_host_check_stdout(code);
}

static int run(int argc, char **argv, struct wl_cli *cli_out) {
  struct wl_cli cli;
  char err[1024];
  bool io_error;

  wl_settings_reset();
  install_arch_support();
  bool parsed = wl_cli_parse(argc, argv, &cli, err, sizeof err);
  *cli_out = cli; /* main frees what the parse allocated, whatever path returns */
  if (!parsed) return usage_error(err);
  if (cli.help) {
    print_help();
    return WL_EXIT_OK;
  }
  if (cli.version) {
    print_version();
    return WL_EXIT_OK;
  }
  const char *config = wl_config_locate(cli.config);
  if (config && !wl_config_load(config, err, sizeof err, &io_error)) {
    fprintf(stderr, "wlrun: %s\n", err);
    return io_error ? WL_EXIT_IO : WL_EXIT_CONFIG;
  }
  if (!wl_cli_apply_settings(&cli, err, sizeof err)) return usage_error(err);
  wl_backend_select(cli.compile_only); /* once: the device backend of the whole run */

  lua_State *L = wl_host_new(&cli);
  if (!L) return WL_EXIT_SCRIPT;
  enum wl_exit code = wl_host_main(L);
  wl_host_finish_threads((int)code); /* before the state's close and the exit handlers */
  code = (enum wl_exit)wl_host_finish_device((int)code);
  wl_host_close(L);
  return wl_host_end((int)code);
}
