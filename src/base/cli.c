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
  OPT_CONFIG = 2000, OPT_FILTER, OPT_DRY_RUN, OPT_COMPILE_ONLY, OPT_RESUME, OPT_SHARD,
  OPT_DEVICES, OPT_HELP, OPT_VERSION, OPT_WORKER_CONFIG, OPT_WORKER_OUTPUT, OPT_WORKER_QUEUE
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
  static const struct { const char *ext, *format; } formats[] = {
      {".json", "json"}, {".csv", "csv"}, {".md", "markdown"}, {".txt", "plain"}};
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
  snprintf(err, errlen, "--devices '%s': expected device indices from 0 to 1023, each once, like 0,1,2", v);
  return false;
}

/* a parameter given by two -p options: the first would be silently replaced */
static bool param_given_once(const struct wl_cli *cli, char *err, size_t errlen) {
  const struct wl_param_override *last = &cli->overrides[cli->nparams];
  for (int i = 0; i < cli->nparams; i++)
    if (strcmp(cli->overrides[i].name, last->name) == 0) {
      snprintf(err, errlen, "-p %s is given twice ('%s' and '%s'): give its values in one -p, like -p %s=1,2",
               last->name, cli->params[i], optarg, last->name);
      return false;
    }
  return true;
}

static const char *subcommands[] = {"run", "info"};
static const char *tools[] = {"compare", "merge", "plot", "export", "history", "trace", "report", "init"};

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
  if (word[0] == '-' || strchr(word, '/') || strchr(word, '.') || access(word, F_OK) == 0) return NULL;
  const char *best = NULL;
  size_t best_d = 3; /* at most 2 edits */
  for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0] + sizeof tools / sizeof tools[0]; i++) {
    const char *name = i < sizeof subcommands / sizeof subcommands[0] ? subcommands[i]
                                                                       : tools[i - sizeof subcommands / sizeof subcommands[0]];
    size_t d = edit_distance(word, name);
    if (d == 0) return NULL; /* the subcommand itself */
    if (d < best_d && d < strlen(name)) best = name, best_d = d;
  }
  return best;
}

bool wl_cli_parse(int argc, char **argv, struct wl_cli *cli, char *err, size_t errlen) {
  static struct option longopts[NSETTING_OPTIONS + 20];
  size_t nl = 0;
  memset(cli, 0, sizeof *cli);
  cli->argc = argc;
  cli->argv = argv;
  for (size_t i = 0; argc > 1 && i < sizeof tools / sizeof tools[0]; i++)
    if (strcmp(argv[1], tools[i]) == 0) {
      cli->command = WL_CMD_TOOL;
      cli->tool = tools[i];
      cli->tool_args = (const char **)(argv + 2);
      cli->ntool_args = argc - 2;
      return true;
    }
  const char *meant = argc > 1 ? mistyped_command(argv[1]) : NULL;
  if (meant) {
    snprintf(err, errlen, "'%s' is neither a subcommand nor a file: did you mean %s?", argv[1], meant);
    return false;
  }
  for (size_t i = 0; i < NSETTING_OPTIONS; i++)
    longopts[nl++] = (struct option){setting_options[i].option,
                                     setting_options[i].value ? no_argument : required_argument,
                                     NULL, OPT_SETTING + (int)i};
  longopts[nl++] = (struct option){"config", required_argument, NULL, OPT_CONFIG};
  longopts[nl++] = (struct option){"filter", required_argument, NULL, OPT_FILTER};
  longopts[nl++] = (struct option){"dry-run", no_argument, NULL, OPT_DRY_RUN};
  longopts[nl++] = (struct option){"compile-only", no_argument, NULL, OPT_COMPILE_ONLY};
  longopts[nl++] = (struct option){"resume", required_argument, NULL, OPT_RESUME};
  longopts[nl++] = (struct option){"shard", required_argument, NULL, OPT_SHARD};
  longopts[nl++] = (struct option){"devices", required_argument, NULL, OPT_DEVICES};
  longopts[nl++] = (struct option){"worker-config", required_argument, NULL, OPT_WORKER_CONFIG};
  longopts[nl++] = (struct option){"worker-output", required_argument, NULL, OPT_WORKER_OUTPUT};
  longopts[nl++] = (struct option){"worker-queue", required_argument, NULL, OPT_WORKER_QUEUE};
  longopts[nl++] = (struct option){"param", required_argument, NULL, 'p'};
  longopts[nl++] = (struct option){"output", required_argument, NULL, 'o'};
  longopts[nl++] = (struct option){"help", no_argument, NULL, 'h'};
  longopts[nl++] = (struct option){"version", no_argument, NULL, 'V'};
  longopts[nl] = (struct option){0};

  /* a subcommand is the first word; everything after "--" belongs to the script */
  int first = 1;
  if (argc > 1)
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
      if (strcmp(argv[1], subcommands[i]) == 0) {
        cli->command = (enum wl_command)i;
        first = 2;
      }
  int end = argc;
  for (int i = first; i < argc; i++)
    if (strcmp(argv[i], "--") == 0) { end = i; break; }

  /* getopt_long permutes; hand it argv[first-1 .. end) */
  char **av = argv + first - 1;
  int ac = end - (first - 1);
  char *saved = ac < argc - (first - 1) ? av[ac] : NULL;
  if (saved) av[ac] = NULL;
  optind = 0; /* full reinitialisation (GNU) so that parse can be called again by tests */
  opterr = 0;
  int c;
  bool ok = true;
  while (ok && (c = getopt_long(ac, av, "hVqp:o:", longopts, NULL)) != -1) {
    switch (c) {
    case 'h': cli->help = true; break;
    case 'V': cli->version = true; break;
    case 'q': c = OPT_SETTING; /* --quiet is also a setting */
      for (size_t i = 0; i < NSETTING_OPTIONS; i++)
        if (strcmp(setting_options[i].option, "quiet") == 0) c = OPT_SETTING + (int)i;
      goto setting;
    case 'p': {
      char why[256];
      if (cli->nparams == WL_MAX_LIST) {
        ok = push_list(cli->params, &cli->nparams, optarg, "-p options", err, errlen); /* says too many */
        break;
      }
      if (!wl_param_parse(optarg, &cli->overrides[cli->nparams], why, sizeof why)) {
        snprintf(err, errlen, "%s", why);
        ok = false;
        break;
      }
      if (!param_given_once(cli, err, errlen)) {
        wl_param_free(&cli->overrides[cli->nparams]);
        ok = false;
        break;
      }
      ok = push_list(cli->params, &cli->nparams, optarg, "-p options", err, errlen);
      break;
    }
    case 'o':
      if (strcmp(optarg, "-") != 0 && !wl_output_format(optarg)) { /* - is standard output */
        snprintf(err, errlen,
                 "-o '%s': unknown output format; the extension chooses it: .json, .csv, .md, .txt (or - for standard output)",
                 optarg);
        ok = false;
      } else {
        ok = push_list(cli->outputs, &cli->noutputs, optarg, "-o files", err, errlen);
      }
     
      break;
    case OPT_CONFIG: cli->config = optarg; break;
    case OPT_FILTER: cli->filter = optarg; break;
    case OPT_DRY_RUN: cli->dry_run = true; break;
    case OPT_COMPILE_ONLY: cli->compile_only = true; break;
    case OPT_RESUME: cli->resume = optarg; break;
    case OPT_WORKER_CONFIG: {
      long long v;
      if (!wl_parse_int(optarg, &v) || v < 1 || v > 100000000) {
        snprintf(err, errlen, "--worker-config '%s': expected a configuration number >= 1", optarg);
        ok = false;
      }
      cli->worker_config = ok ? (int)v : 0;
      break;
    }
    case OPT_WORKER_OUTPUT: cli->worker_output = optarg; break;
    case OPT_WORKER_QUEUE: cli->worker_queue = optarg; break;
    case OPT_SHARD: ok = parse_shard(optarg, cli, err, errlen); break;
    case OPT_DEVICES:
      ok = parse_devices(optarg, err, errlen);
      cli->devices = optarg;
      break;
    case '?':
      if (optopt == 0)
        snprintf(err, errlen, "unknown option '%s'", av[optind - 1]);
      else if (optopt == 'p' || optopt == 'o' || optopt > 255)
        snprintf(err, errlen, "option '%s' needs a value", av[optind - 1]);
      else
        snprintf(err, errlen, "unknown option '-%c'", optopt);
      ok = false;
      break;
    default:
    setting: {
      size_t i = (size_t)(c - OPT_SETTING);
      if (i >= NSETTING_OPTIONS) {
        snprintf(err, errlen, "internal error: option %d", c);
        ok = false;
        break;
      }
      if (cli->nsets >= WL_MAX_LIST) {
        snprintf(err, errlen, "too many options");
        ok = false;
        break;
      }
      cli->sets[cli->nsets].option = setting_options[i].option;
      cli->sets[cli->nsets].section = setting_options[i].section;
      cli->sets[cli->nsets].name = setting_options[i].name;
      cli->sets[cli->nsets].value = setting_options[i].value ? setting_options[i].value : optarg;
      cli->nsets++;
    }
    }
  }
  if (saved) av[ac] = saved;
  if (!ok) return false;

  /* positional words: the script and its arguments, or the input files */
  int pos = optind;
  if (cli->command == WL_CMD_RUN) {
    if (pos < ac) cli->script = av[pos++];
    cli->script_args = (const char **)(av + pos);
    cli->nscript_args = ac - pos;
    if (end < argc) { /* arguments after "--" follow the positional ones */
      int n = cli->nscript_args + (argc - end - 1);
      const char **args = malloc(sizeof *args * (size_t)(n + 1));
      if (!args) { snprintf(err, errlen, "out of memory"); return false; }
      for (int i = 0; i < cli->nscript_args; i++) args[i] = cli->script_args[i];
      for (int i = end + 1; i < argc; i++) args[cli->nscript_args++] = argv[i];
      args[n] = NULL;
      cli->script_args = cli->owned_args = args;
    }
  } else {
    for (; pos < ac; pos++)
      if (!push_list(cli->inputs, &cli->ninputs, av[pos], "input files", err, errlen)) return false;
    if (end < argc) {
      snprintf(err, errlen, "'wlrun %s' takes no script arguments after --",
               subcommands[cli->command]);
      return false;
    }
  }
  if (cli->help || cli->version) return true;
  if (cli->command == WL_CMD_RUN && !cli->script) {
    snprintf(err, errlen, "no script given (usage: wlrun [options] SCRIPT.lua [-- args])");
    return false;
  }
  if (cli->command == WL_CMD_INFO && cli->ninputs > 0) {
    snprintf(err, errlen, "'wlrun info' takes no files, got '%s'", cli->inputs[0]);
    return false;
  }
  /* validate setting values now, so that a bad value is a usage error before anything runs */
  for (int i = 0; i < cli->nsets; i++) {
    double value;
    char why[1024];
    if (!wl_setting_check(wl_setting_find(cli->sets[i].section, cli->sets[i].name), cli->sets[i].value,
                          &value, why, sizeof why)) {
      snprintf(err, errlen, "--%s: %s", cli->sets[i].option, why);
      return false;
    }
  }
  return true;
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
