/* The Lua host: state, the wlrun.core module, the embedded Lua library, protected calls with
 * tracebacks, and the mapping of errors to exit codes. */
#ifndef WL_LHOST_H
#define WL_LHOST_H

#include "cli.h"
#include "wl_exit.h"

#include <lua.h>

/* Creates the state with the standard libraries and wlrun's modules. NULL on failure (the
 * message is printed). */
lua_State *wl_host_new(const struct wl_cli *cli);

/* Runs SCRIPT with its arguments as the Lua interpreter would (global arg, varargs); when the
 * script returns a scenario, runs it. Errors are printed with file:line and a traceback. */
enum wl_exit wl_host_run_script(lua_State *L, const struct wl_cli *cli);

/* Calls require(module)[fn](cli) protected; for subcommands implemented in Lua. */
enum wl_exit wl_host_run_command(lua_State *L, const char *module, const char *fn);

/* Runs the tool subcommand NAME (wlrun.tools.NAME's main(args)). */
enum wl_exit wl_host_run_tool(lua_State *L, const char *name);

void wl_host_close(lua_State *L);

/* The files embedded at build time (lua/wlrun/... and docs/cli.md). */
struct wl_embedded_file {
  const char *path;
  const unsigned char *data;
  size_t size;
};
extern const struct wl_embedded_file wl_embedded_files[];
extern const size_t wl_embedded_count;
const struct wl_embedded_file *wl_embedded_find(const char *path);

#endif
