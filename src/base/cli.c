#include "cli.h"

#include "cli_params.h"
#include "settings.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
  OPT_SETTING = 1000, /* options that set a wl_setting, see setting_options[] */
  OPT_CONFIG = 2000,
  OPT_FILTER,
  OPT_DRY_RUN,
  OPT_COMPILE_ONLY,
  OPT_RESUME,
  OPT_SHARD,
  OPT_DEVICES,
  OPT_HELP,
  OPT_VERSION,
  OPT_WORKER_CONFIG,
  OPT_WORKER_OUTPUT,
  OPT_WORKER_QUEUE,
  OPT_COMPILE_JOBS
};

/* Command-line options that set a setting; value NULL means the option takes an argument. */
static const struct {
  const char *option, *section, *name, *value;
} setting_options[] = {
    {"mode", "run", "mode", NULL},
    {"warmup", "run", "warmup", NULL},
    {"warmup-time", "run", "warmup_time", NULL},
    {"iters", "run", "iters", NULL},
    {"flush-l2", "run", "flush_l2", "true"},
    {"no-flush-l2", "run", "flush_l2", "false"},
    {"lock-clocks", "run", "lock_clocks", NULL},
    {"seed", "run", "seed", NULL},
    {"device", "run", "device", NULL},
    {"nvtx", "run", "nvtx", NULL},
    {"isolate", "run", "isolate", "true"},
    {"config-timeout", "run", "config_timeout", NULL},
    {"no-prepare", "run", "prepare", "false"},
    {"adaptive", "adaptive", "enabled", "true"},
    {"target-noise", "adaptive", "target_noise", NULL},
    {"min-samples", "adaptive", "min_samples", NULL},
    {"min-time", "adaptive", "min_time", NULL},
    {"max-time", "adaptive", "max_time", NULL},
    {"format", "output", "format", NULL},
    {"quiet", "output", "quiet", "true"},
    {"no-progress", "output", "progress", "false"},
    {"arch", "compile", "arch", NULL},
    {"compiler", "compile", "compiler", NULL},
    {"cache-dir", "compile", "cache_dir", NULL},
    {"no-cache", "compile", "cache", "false"},
};
#define NSETTING_OPTIONS (sizeof setting_options / sizeof setting_options[0])

const char *wl_output_format(const char *path) {
  static const struct {
    const char *ext, *format;
  } formats[] = {{".json", "json"}, {".csv", "csv"}, {".md", "markdown"}, {".txt", "plain"}};
  const char *dot = strrchr(path, '.');
  if (!dot || strchr(dot, '/')) return NULL;
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (strcmp(dot, formats[i].ext) == 0) return formats[i].format;
  return NULL;
}

static bool push_list(const char **list, int *n, const char *v, const char *what, char *err,
                      size_t errlen) {
  if (*n >= WL_MAX_LIST) {
    snprintf(err, errlen, "too many %s (at most %d)", what, WL_MAX_LIST);
    return false;
  }
  list[(*n)++] = v;
  return true;
}

static bool parse_shard(const char *v, struct wl_cli *cli, char *err, size_t errlen) {
  char *end;
  long k = strtol(v, &end, 10), n = 0;
  if (*end == '/') n = strtol(end + 1, &end, 10);
  if (*end || k < 1 || n < 1 || k > n || n > 1000000) {
    snprintf(err, errlen, "--shard '%s': expected K/N with 1 <= K <= N (like 2/8)", v);
    return false;
  }
  cli->shard_k = (int)k;
  cli->shard_n = (int)n;
  return true;
}

/* "0,1,2": device indices from 0 to 1023, digits only, each once */
static bool parse_devices(const char *v, char *err, size_t errlen) {
  static bool seen[1024];
  memset(seen, 0, sizeof seen);
  const char *s = v;
  for (;;) {
    long long d;
    char item[32];
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    if (len == 0 || len >= sizeof item || strspn(s, "0123456789") != len) goto bad;
    memcpy(item, s, len);
    item[len] = '\0';
    if (!wl_parse_int(item, &d) || d > 1023) goto bad;
    if (seen[d]) {
      snprintf(err, errlen, "--devices '%s': device %lld is given twice", v, d);
      return false;
    }
    seen[d] = true;
    if (!comma) return true;
    s = comma + 1;
  }
bad:
  snprintf(err, errlen,
           "--devices '%s': expected device indices from 0 to 1023, each once, like 0,1,2", v);
  return false;
}

/* a parameter given by two -p options: the first would be silently replaced */
static bool param_given_once(const struct wl_cli *cli, char *err, size_t errlen) {
  const struct wl_param_override *last = &cli->overrides[cli->nparams];
  for (int i = 0; i < cli->nparams; i++)
    if (strcmp(cli->overrides[i].name, last->name) == 0) {
      snprintf(err, errlen,
               "-p %s is given twice ('%s' and '%s'): give its values in one -p, like -p %s=1,2",
               last->name, cli->params[i], optarg, last->name);
      return false;
    }
  return true;
}

static const char *subcommands[] = {"run", "info"};
static const char *tools[] = {"compare", "merge", "plot",   "export",
                              "history", "trace", "report", "init"};

/* edit distance between two short words (longer ones are never close) */
static size_t edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b), row[33];
  if (la > 32 || lb > 32) return 99;
  for (size_t j = 0; j <= lb; j++) row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      diag = up;
      row[j] = best;
    }
  }
  return row[lb];
}

/* a first word that is no file but a subcommand mistyped (wlrun comapre): the subcommand */
static const char *mistyped_command(const char *word) {
  if (word[0] == '-' || strchr(word, '/') || strchr(word, '.') || access(word, F_OK) == 0)
    return NULL;
  const char *best = NULL;
  size_t best_d = 3; /* at most 2 edits */
  for (size_t i = 0;
       i < sizeof subcommands / sizeof subcommands[0] + sizeof tools / sizeof tools[0]; i++) {
    const char *name = i < sizeof subcommands / sizeof subcommands[0]
                           ? subcommands[i]
                           : tools[i - sizeof subcommands / sizeof subcommands[0]];
    size_t d = edit_distance(word, name);
    if (d == 0) return NULL; /* the subcommand itself */
    if (d < best_d && d < strlen(name)) best = name, best_d = d;
  }
  return best;
}

/* The options that set no setting: the rest of wlrun's own (setting_options[] comes first). */
static const struct option other_options[] = {
    {"config", required_argument, NULL, OPT_CONFIG},
    {"filter", required_argument, NULL, OPT_FILTER},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {"compile-only", no_argument, NULL, OPT_COMPILE_ONLY},
    {"resume", required_argument, NULL, OPT_RESUME},
    {"shard", required_argument, NULL, OPT_SHARD},
    {"devices", required_argument, NULL, OPT_DEVICES},
    {"worker-config", required_argument, NULL, OPT_WORKER_CONFIG},
    {"worker-output", required_argument, NULL, OPT_WORKER_OUTPUT},
    {"worker-queue", required_argument, NULL, OPT_WORKER_QUEUE},
    {"compile-jobs", required_argument, NULL, OPT_COMPILE_JOBS},
    {"param", required_argument, NULL, 'p'},
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
};
#define NOTHER_OPTIONS (sizeof other_options / sizeof other_options[0])

/* getopt_long's table: the setting options, the others, the end mark */
static const struct option *long_options(void) {
  static struct option longopts[NSETTING_OPTIONS + NOTHER_OPTIONS + 1];
  size_t nl = 0;
  for (size_t i = 0; i < NSETTING_OPTIONS; i++)
    longopts[nl++] = (struct option){setting_options[i].option,
                                     setting_options[i].value ? no_argument : required_argument,
                                     NULL, OPT_SETTING + (int)i};
  for (size_t i = 0; i < NOTHER_OPTIONS; i++) longopts[nl++] = other_options[i];
  longopts[nl] = (struct option){0};
  return longopts;
}

/* A tool's name as the first word (wlrun compare ...): its arguments go to its Lua module
 * untouched. */
static bool take_tool(int argc, char **argv, struct wl_cli *cli) {
  for (size_t i = 0; argc > 1 && i < sizeof tools / sizeof tools[0]; i++)
    if (strcmp(argv[1], tools[i]) == 0) {
      cli->command = WL_CMD_TOOL;
      cli->tool = tools[i];
      cli->tool_args = (const char **)(argv + 2);
      cli->ntool_args = argc - 2;
      return true;
    }
  return false;
}

/* A subcommand is the first word: the index of the first word after it (1 when none). */
static int take_subcommand(int argc, char **argv, struct wl_cli *cli) {
  int first = 1;
  if (argc > 1)
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
      if (strcmp(argv[1], subcommands[i]) == 0) {
        cli->command = (enum wl_command)i;
        first = 2;
      }
  return first;
}

/* -p NAME=VALUES: parsed once, each name given once */
static bool take_param(struct wl_cli *cli, char *err, size_t errlen) {
  char why[256];
  if (cli->nparams == WL_MAX_LIST) /* push_list says too many */
    return push_list(cli->params, &cli->nparams, optarg, "-p options", err, errlen);
  if (!wl_param_parse(optarg, &cli->overrides[cli->nparams], why, sizeof why)) {
    snprintf(err, errlen, "%s", why);
    return false;
  }
  if (!param_given_once(cli, err, errlen)) {
    wl_param_free(&cli->overrides[cli->nparams]);
    return false;
  }
  return push_list(cli->params, &cli->nparams, optarg, "-p options", err, errlen);
}

/* -o FILE: a known extension, or - for standard output */
static bool take_output(struct wl_cli *cli, char *err, size_t errlen) {
  if (strcmp(optarg, "-") != 0 && !wl_output_format(optarg)) {
    snprintf(err, errlen,
             "-o '%s': unknown output format; the extension chooses it: .json, .csv, .md, .txt (or "
             "- for standard output)",
             optarg);
    return false;
  }
  return push_list(cli->outputs, &cli->noutputs, optarg, "-o files", err, errlen);
}

static bool take_worker_config(struct wl_cli *cli, char *err, size_t errlen) {
  long long v;
  if (!wl_parse_int(optarg, &v) || v < 1 || v > 100000000) {
    snprintf(err, errlen, "--worker-config '%s': expected a configuration number >= 1", optarg);
    cli->worker_config = 0;
    return false;
  }
  cli->worker_config = (int)v;
  return true;
}

/* the option setting_options[i], its value kept for wl_cli_apply_settings */
static bool take_setting(size_t i, struct wl_cli *cli, char *err, size_t errlen) {
  if (i >= NSETTING_OPTIONS) {
    snprintf(err, errlen, "internal error: option %d", (int)(i + OPT_SETTING));
    return false;
  }
  if (cli->nsets >= WL_MAX_LIST) {
    snprintf(err, errlen, "too many options");
    return false;
  }
  cli->sets[cli->nsets].option = setting_options[i].option;
  cli->sets[cli->nsets].section = setting_options[i].section;
  cli->sets[cli->nsets].name = setting_options[i].name;
  cli->sets[cli->nsets].value = setting_options[i].value ? setting_options[i].value : optarg;
  cli->nsets++;
  return true;
}

/* what getopt_long refused ('?'): an unknown option, or one without its value */
static bool refuse_option(char **av, char *err, size_t errlen) {
  if (optopt == 0) snprintf(err, errlen, "unknown option '%s'", av[optind - 1]);
  else if (optopt == 'p' || optopt == 'o' || optopt > 255)
    snprintf(err, errlen, "option '%s' needs a value", av[optind - 1]);
  else snprintf(err, errlen, "unknown option '-%c'", optopt);
  return false;
}

/* -q is --quiet, which is a setting */
static size_t quiet_setting(void) {
  for (size_t i = 0; i < NSETTING_OPTIONS; i++)
    if (strcmp(setting_options[i].option, "quiet") == 0) return i;
  return NSETTING_OPTIONS;
}

/* One option that getopt_long returned (c), its value in optarg. */
static bool take_option(int c, char **av, struct wl_cli *cli, char *err, size_t errlen) {
  switch (c) {
  case 'h': cli->help = true; return true;
  case 'V': cli->version = true; return true;
  case 'q': return take_setting(quiet_setting(), cli, err, errlen);
  case 'p': return take_param(cli, err, errlen);
  case 'o': return take_output(cli, err, errlen);
  case OPT_CONFIG: cli->config = optarg; return true;
  case OPT_FILTER: cli->filter = optarg; return true;
  case OPT_DRY_RUN: cli->dry_run = true; return true;
  case OPT_COMPILE_ONLY: cli->compile_only = true; return true;
  case OPT_RESUME: cli->resume = optarg; return true;
  case OPT_WORKER_CONFIG: return take_worker_config(cli, err, errlen);
  case OPT_WORKER_OUTPUT: cli->worker_output = optarg; return true;
  case OPT_WORKER_QUEUE: cli->worker_queue = optarg; return true;
  case OPT_COMPILE_JOBS: cli->compile_jobs = optarg; return true;
  case OPT_SHARD: return parse_shard(optarg, cli, err, errlen);
  case OPT_DEVICES: cli->devices = optarg; return parse_devices(optarg, err, errlen);
  case '?': return refuse_option(av, err, errlen);
  default: return take_setting((size_t)(c - OPT_SETTING), cli, err, errlen);
  }
}

/* The options of av[1 .. ac) (av[0]: the program or subcommand). getopt_long permutes them:
 * optind is then the first positional word. */
static bool parse_options(int ac, char **av, struct wl_cli *cli, char *err, size_t errlen) {
  const struct option *longopts = long_options();
  optind = 0; /* full reinitialisation (GNU) so that parse can be called again by tests */
  opterr = 0;
  int c;
  while ((c = getopt_long(ac, av, "hVqp:o:", longopts, NULL)) != -1)
    if (!take_option(c, av, cli, err, errlen)) return false;
  return true;
}

/* The positional words of a run, av[pos .. ac): the script and its arguments, those after "--"
 * (argv[end + 1 ..]) following them. */
static bool take_script(int pos, int ac, char **av, int end, int argc, char **argv,
                        struct wl_cli *cli, char *err, size_t errlen) {
  if (pos < ac) cli->script = av[pos++];
  cli->script_args = (const char **)(av + pos);
  cli->nscript_args = ac - pos;
  if (end < argc) { /* arguments after "--" follow the positional ones */
    int n = cli->nscript_args + (argc - end - 1);
    const char **args = malloc(sizeof *args * (size_t)(n + 1));
    if (!args) {
      snprintf(err, errlen, "out of memory");
      return false;
    }
    for (int i = 0; i < cli->nscript_args; i++) args[i] = cli->script_args[i];
    for (int i = end + 1; i < argc; i++) args[cli->nscript_args++] = argv[i];
    args[n] = NULL;
    cli->script_args = cli->owned_args = args;
  }
  return true;
}

/* The positional words of another subcommand: input files, and nothing after "--". */
static bool take_inputs(int pos, int ac, char **av, bool after_dashes, struct wl_cli *cli,
                        char *err, size_t errlen) {
  for (; pos < ac; pos++)
    if (!push_list(cli->inputs, &cli->ninputs, av[pos], "input files", err, errlen)) return false;
  if (after_dashes) {
    snprintf(err, errlen, "'wlrun %s' takes no script arguments after --",
             subcommands[cli->command]);
    return false;
  }
  return true;
}

/* What the subcommand needs: a run its script, info no files. */
static bool check_command(const struct wl_cli *cli, char *err, size_t errlen) {
  if (cli->command == WL_CMD_RUN && !cli->script) {
    snprintf(err, errlen, "no script given (usage: wlrun [options] SCRIPT.lua [-- args])");
    return false;
  }
  if (cli->command == WL_CMD_INFO && cli->ninputs > 0) {
    snprintf(err, errlen, "'wlrun info' takes no files, got '%s'", cli->inputs[0]);
    return false;
  }
  return true;
}

/* The setting values checked now, so that a bad value is a usage error before anything runs. */
static bool check_settings(const struct wl_cli *cli, char *err, size_t errlen) {
  for (int i = 0; i < cli->nsets; i++) {
    double value;
    char why[1024];
    if (!wl_setting_check(wl_setting_find(cli->sets[i].section, cli->sets[i].name),
                          cli->sets[i].value, &value, why, sizeof why)) {
      snprintf(err, errlen, "--%s: %s", cli->sets[i].option, why);
      return false;
    }
  }
  return true;
}

bool wl_cli_parse(int argc, char **argv, struct wl_cli *cli, char *err, size_t errlen) {
  memset(cli, 0, sizeof *cli);
  cli->argc = argc;
  cli->argv = argv;
  if (take_tool(argc, argv, cli)) return true;
  const char *meant = argc > 1 ? mistyped_command(argv[1]) : NULL;
  if (meant) {
    snprintf(err, errlen, "'%s' is neither a subcommand nor a file: did you mean %s?", argv[1],
             meant);
    return false;
  }
  int first = take_subcommand(argc, argv, cli);
  int end = argc; /* everything after "--" belongs to the script */
  for (int i = first; i < argc; i++)
    if (strcmp(argv[i], "--") == 0) {
      end = i;
      break;
    }

  /* getopt_long permutes; hand it argv[first-1 .. end) */
  char **av = argv + first - 1;
  int ac = end - (first - 1);
  char *saved = ac < argc - (first - 1) ? av[ac] : NULL;
  if (saved) av[ac] = NULL;
  bool ok = parse_options(ac, av, cli, err, errlen);
  if (saved) av[ac] = saved;
  if (!ok) return false;

  if (cli->command == WL_CMD_RUN ? !take_script(optind, ac, av, end, argc, argv, cli, err, errlen)
                                 : !take_inputs(optind, ac, av, end < argc, cli, err, errlen))
    return false;
  if (cli->help || cli->version) return true;
  return check_command(cli, err, errlen) && check_settings(cli, err, errlen);
}

void wl_cli_free(struct wl_cli *cli) {
  free(cli->owned_args);
  cli->owned_args = NULL;
  for (int i = 0; i < cli->nparams; i++) wl_param_free(&cli->overrides[i]);
  cli->nparams = 0;
}

bool wl_cli_apply_settings(const struct wl_cli *cli, char *err, size_t errlen) {
  for (int i = 0; i < cli->nsets; i++) {
    struct wl_setting *s = wl_setting_find(cli->sets[i].section, cli->sets[i].name);
    char origin[80], why[1024];
    snprintf(origin, sizeof origin, "--%s", cli->sets[i].option);
    if (!wl_setting_assign(s, cli->sets[i].value, WL_FROM_CLI, origin, why, sizeof why)) {
      snprintf(err, errlen, "--%s: %s", cli->sets[i].option, why);
      return false;
    }
  }
  return true;
}
