/* The command line: subcommands, options and their validation (docs/cli.md). */
#ifndef WL_CLI_H
#define WL_CLI_H

#include "cli_params.h"

#include <stdbool.h>
#include <stddef.h>

enum wl_command {
  WL_CMD_RUN,
  WL_CMD_INFO,
  WL_CMD_TOOL /* compare, merge, plot, export: Lua modules that parse their own arguments */
};

#define WL_MAX_LIST 64

struct wl_cli {
  int argc; /* the whole command line, for the results document */
  char **argv;
  enum wl_command command;
  bool help, version;
  const char *config; /* --config FILE */
  const char *script; /* SCRIPT for run */
  const char **script_args;
  int nscript_args;
  const char **owned_args; /* script_args when allocated (arguments after "--"); wl_cli_free */
  const char *params[WL_MAX_LIST];                 /* -p NAME=VALUES, raw */
  struct wl_param_override overrides[WL_MAX_LIST]; /* the same, parsed once (wl_cli_free) */
  int nparams;
  const char *outputs[WL_MAX_LIST]; /* -o FILE */
  int noutputs;
  const char *inputs[WL_MAX_LIST]; /* files of compare and merge */
  int ninputs;
  const char *filter;
  const char *resume;
  const char *devices;
  int shard_k, shard_n; /* 0/0 when not given */
  bool dry_run, compile_only;
  int worker_config; /* --worker-config N (internal, for --isolate): run configuration N only */
  const char *worker_output; /* --worker-output FILE: where that configuration's result goes */
  const char
      *worker_queue; /* --worker-queue DIR (internal, for --devices): run from a shared queue */
  const char *compile_jobs; /* --compile-jobs FILE (internal, for wl.prepare_kernels): compile the
                               kernels FILE lists into the cache, and nothing else */
  const char *tool;         /* WL_CMD_TOOL: its name; its arguments follow */
  const char **tool_args;
  int ntool_args;
  /* options given on the command line, in order, for settings (applied after wlrun.ini) */
  struct {
    const char *option;
    const char *section, *name, *value;
  } sets[WL_MAX_LIST];
  int nsets;
};

/* Parses argv. On error writes a message into err and returns false (exit WL_EXIT_USAGE). */
bool wl_cli_parse(int argc, char **argv, struct wl_cli *cli, char *err, size_t errlen);

/* Frees what wl_cli_parse allocated. */
void wl_cli_free(struct wl_cli *cli);

/* Applies the settings given on the command line (after wlrun.ini was read). */
bool wl_cli_apply_settings(const struct wl_cli *cli, char *err, size_t errlen);

/* An output file's format from its extension: "json", "csv", "markdown", "plain"; NULL if
 * the extension is not known. */
const char *wl_output_format(const char *path);

#endif
