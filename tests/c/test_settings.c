/* settings.c, config.c (wlrun.ini), cli.c and cli_params.c: parsing, validation, precedence. */
#include "check.h"
#include "cli.h"
#include "cli_params.h"
#include "config.h"
#include "settings.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char err[1024];

static void test_parsers(void) {
  double v;
  bool b;
  long long i;
  CHECK(wl_parse_duration("1.5", &v) && v == 1.5);
  CHECK(wl_parse_duration("200ms", &v) && fabs(v - 0.2) < 1e-15);
  CHECK(wl_parse_duration("50us", &v) && fabs(v - 50e-6) < 1e-18);
  CHECK(wl_parse_duration("2m", &v) && v == 120);
  CHECK(wl_parse_duration(" 3s ", &v) && v == 3);
  CHECK(!wl_parse_duration("3 parsecs", &v));
  CHECK(!wl_parse_duration("ms", &v));
  CHECK(!wl_parse_duration("nan", &v));
  CHECK(!wl_parse_duration("inf", &v));
  CHECK(!wl_parse_duration("0x10", &v));
  /* a percentage means percent, with or without its sign */
  CHECK(wl_parse_percent("0.5%", &v) && fabs(v - 0.005) < 1e-15);
  CHECK(wl_parse_percent("0.5", &v) && fabs(v - 0.005) < 1e-15);
  CHECK(wl_parse_percent(" 2 % ", &v) && fabs(v - 0.02) < 1e-15);
  CHECK(!wl_parse_percent("5%%", &v));
  CHECK(!wl_parse_percent("%", &v));
  CHECK(!wl_parse_percent("inf%", &v));
  CHECK(wl_parse_bool("ON", &b) && b);
  CHECK(wl_parse_bool("no", &b) && !b);
  CHECK(!wl_parse_bool("maybe", &b));
  CHECK(wl_parse_int("42", &i) && i == 42);
  CHECK(!wl_parse_int("4.2", &i));
  CHECK(!wl_parse_int("", &i));
  CHECK(!wl_parse_int("99999999999999999999999", &i));
}

static const char *fake_name(void) { return "NVRTC 0.0"; }
static int fake_archs(int *archs, int max) {
  if (max < 2) return 0;
  archs[0] = 75;
  archs[1] = 90;
  return 2;
}
static bool fake_accepts(const char *arch) { return strcmp(arch, "sm_90a") == 0; }

static void test_assign(void) {
  wl_settings_reset();
  struct wl_setting *s = wl_setting_find("run", "iters");
  CHECK(s && s->number == 100 && s->source == WL_FROM_DEFAULT);
  CHECK(!wl_setting_assign(s, "0", WL_FROM_CLI, "--iters", err, sizeof err));
  CHECK_CONTAINS(err, "a whole number from 1 to 1000000000");
  CHECK(s->number == 100);
  CHECK(wl_setting_assign(s, "7", WL_FROM_CLI, "--iters", err, sizeof err) && s->number == 7);
  s = wl_setting_find("run", "mode");
  CHECK(!wl_setting_assign(s, "fast", WL_FROM_CLI, "--mode", err, sizeof err));
  CHECK_CONTAINS(err, "cold|batch|graph|host");
  CHECK(wl_setting_find("run", "nope") == NULL);
  /* found by scripts/fuzz.sh: architectures shorter than "sm_" were read past their end */
  s = wl_setting_find("compile", "arch");
  const char *bad_arch[] = {"50", "s", "", "sm_", "sm_9", "sm_9000", "sm_90x", "SM_90"};
  for (size_t i = 0; i < sizeof bad_arch / sizeof bad_arch[0]; i++)
    CHECK(!wl_setting_assign(s, bad_arch[i], WL_FROM_CLI, "--arch", err, sizeof err));
  CHECK(wl_setting_assign(s, "sm_90a", WL_FROM_CLI, "--arch", err, sizeof err));
  CHECK(wl_setting_assign(s, "sm_100f", WL_FROM_CLI, "--arch", err, sizeof err));
  /* with a compiler to ask: what it does not list, or refuses with a suffix, is refused */
  static const struct wl_arch_support fake = {fake_name, fake_archs, fake_accepts};
  wl_settings_set_arch_support(&fake);
  double v;
  CHECK(wl_setting_check(s, "sm_90", &v, err, sizeof err));
  CHECK(wl_setting_check(s, "sm_90a", &v, err, sizeof err));
  CHECK(!wl_setting_check(s, "sm_75a", &v, err, sizeof err));
  CHECK(!wl_setting_check(s, "sm_10", &v, err, sizeof err));
  CHECK_STR(err, "expected a GPU architecture like sm_90 that NVRTC 0.0 compiles for (sm_75, "
                 "sm_90; a or f after the number "
                 "where it has one), got 'sm_10'");
  CHECK(!wl_setting_check(s, "compute_90", &v, err, sizeof err));
  CHECK_CONTAINS(err, "(sm_75, sm_90;");
  wl_settings_set_arch_support(NULL);
  CHECK(wl_setting_check(s, "sm_10", &v, err, sizeof err)); /* nothing to ask: the form alone */
  /* the one validator: checks without storing */
  s = wl_setting_find("adaptive", "target_noise");
  CHECK(wl_setting_check(s, "2", &v, err, sizeof err) && fabs(v - 0.02) < 1e-15 &&
        fabs(s->number - 0.005) < 1e-15);
  CHECK(!wl_setting_check(s, "-3", &v, err, sizeof err));
  CHECK_STR(err, "expected a percentage from 0.0001% to 100% (like 0.5 or 0.5%), got '-3'");
  char what[128];
  wl_setting_describe(wl_setting_find("run", "warmup_time"), what, sizeof what);
  CHECK_STR(what, "a duration from 0s to 86400s (like 2s, 500ms, 50us)");
}

static void test_ini(void) {
  bool io;
  wl_settings_reset();
  CHECK(wl_config_load("ini/good.ini", err, sizeof err, &io));
  struct wl_setting *s = wl_setting_find("run", "warmup");
  CHECK(s->number == 10 && s->source == WL_FROM_INI);
  CHECK_STR(s->origin, "ini/good.ini:4");
  CHECK_STR(wl_setting_find("run", "mode")->text, "graph");
  CHECK_NEAR(wl_setting_find("run", "warmup_time")->number, 0.2, 1e-15);
  CHECK_NEAR(wl_setting_find("adaptive", "target_noise")->number, 0.01, 1e-15);
  CHECK(wl_setting_find("output", "quiet")->number == 1);
  CHECK(wl_setting_find("run", "device")->source == WL_FROM_DEFAULT);

  wl_settings_reset();
  CHECK(!wl_config_load("ini/unknown_key.ini", err, sizeof err, &io) && !io);
  CHECK_CONTAINS(
      err, "ini/unknown_key.ini:5: unknown key 'warmpu' in section [run] (its keys: mode, warmup,");
  CHECK(!wl_config_load("ini/unknown_section.ini", err, sizeof err, &io));
  CHECK_CONTAINS(err, "ini/unknown_section.ini:3: unknown section [runn] (sections: run, adaptive, "
                      "output, compile, history)");
  CHECK(!wl_config_load("ini/bad_value.ini", err, sizeof err, &io));
  CHECK_CONTAINS(
      err,
      "ini/bad_value.ini:3: run.iters: expected a whole number from 1 to 1000000000, got '-3'");
  CHECK(!wl_config_load("ini/syntax.ini", err, sizeof err, &io));
  CHECK_CONTAINS(err, "ini/syntax.ini:3: syntax error: expected [section] or key = value, got "
                      "'this line has no equals sign'");
  CHECK(!wl_config_load("ini/no_section.ini", err, sizeof err, &io));
  CHECK_CONTAINS(
      err, "ini/no_section.ini:1: 'warmup' comes before any section header (it belongs in [run])");
  CHECK(!wl_config_load("ini/missing.ini", err, sizeof err, &io) && io);
  CHECK_CONTAINS(err, "ini/missing.ini: cannot read configuration: No such file");
}

/* Loads n bytes of wlrun.ini text from a temporary file; the message names it "T.ini". */
static bool load_text(const char *text, size_t n, bool *io) {
  char path[] = "/tmp/wlrun-test-XXXXXX.ini";
  int fd = mkstemps(path, 4);
  CHECK(fd >= 0);
  if (fd < 0) return false;
  CHECK(write(fd, text, n) == (ssize_t)n);
  CHECK(close(fd) == 0);
  wl_settings_reset();
  bool ok = wl_config_load(path, err, sizeof err, io);
  CHECK(unlink(path) == 0);
  size_t len = strlen(path); /* "/tmp/wlrun-test-abc123.ini:3: ..." -> "T.ini:3: ..." */
  if (!ok && strncmp(err, path, len) == 0) {
    memmove(err + 5, err + len, strlen(err + len) + 1);
    memcpy(err, "T.ini", 5);
  }
  return ok;
}
#define LOAD(text) load_text(text, sizeof text - 1, &io)

/* docs/config.md, "The rules of the file": line length, duplicates, comments, encodings. */
static void test_ini_rules(void) {
  bool io;
  char text[4096];
  /* lines of any length, read whole and numbered as in the file: around inih's default
   * buffer of 200 bytes, and a long comment before a key */
  for (size_t len = 190; len <= 210; len++) {
    int n = snprintf(text, sizeof text, "[run]\n;%*s\niters = 7 ;%*s\nwarmpu = 1\n", (int)len, "x",
                     (int)len, "y");
    CHECK(!load_text(text, (size_t)n, &io) && !io);
    CHECK_CONTAINS(err, "T.ini:4: unknown key 'warmpu'");
  }
  wl_settings_reset();
  CHECK(wl_config_load("ini/long_lines.ini", err, sizeof err, &io));
  CHECK(wl_setting_find("run", "iters")->number == 7);
  CHECK_STR(wl_setting_find("run", "iters")->origin, "ini/long_lines.ini:4");
  CHECK(strlen(wl_setting_find("compile", "cache_dir")->text) == 312);
  CHECK_STR(wl_setting_find("compile", "cache_dir")->origin, "ini/long_lines.ini:6");
  CHECK_STR(wl_setting_find("output", "quiet")->origin, "ini/long_lines.ini:10");
  static char huge[300001]; /* one comment line of 299982 bytes */
  int n = snprintf(huge, sizeof huge, "[run]\n;%299980s\nmode = cold\n", "z");
  CHECK(load_text(huge, (size_t)n, &io));
  CHECK_STR(wl_setting_find("run", "mode")->origin +
                strlen(wl_setting_find("run", "mode")->origin) - 2,
            ":3");
  static char
      big[4 * (sizeof huge + 1)]; /* over 1 MiB: refused, naming the line where it goes over */
  memset(big, ';', sizeof big);
  for (size_t i = 1; i <= 4; i++) big[i * (sizeof huge + 1) - 1] = '\n';
  CHECK(!load_text(big, sizeof big, &io) && !io);
  CHECK_CONTAINS(err, "T.ini:4: the file is over 1048576 bytes");

  /* duplicates: both lines named */
  CHECK(!wl_config_load("ini/duplicate_key.ini", err, sizeof err, &io) && !io);
  CHECK_STR(err,
            "ini/duplicate_key.ini:4: duplicate key 'iters' in section [run] (first on line 2)");
  CHECK(!wl_config_load("ini/duplicate_section.ini", err, sizeof err, &io) && !io);
  CHECK_CONTAINS(err, "ini/duplicate_section.ini:8: duplicate section [run] (first on line 1)");
  CHECK(!LOAD("[run]\n[output]\n[run]\n") && !io); /* empty ones too */
  CHECK_CONTAINS(err, "T.ini:3: duplicate section [run] (first on line 1)");
  CHECK(!LOAD("[run]\niters = 5\nITERS = 6\n")); /* keys differ by case: the second is unknown */
  CHECK_CONTAINS(err,
                 "T.ini:3: unknown key 'ITERS' in section [run] (keys are lower case: 'iters')");
  CHECK(!LOAD("[Run]\niters = 5\n"));
  CHECK_CONTAINS(err, "T.ini:1: unknown section [Run] (section names are lower case: [run])");
  CHECK(!LOAD("[run]\nmin_time = 5\n"));
  CHECK_CONTAINS(
      err, "T.ini:2: unknown key 'min_time' in section [run] ('min_time' is a key of [adaptive])");

  /* syntax: an unclosed header on its own line, not the next key's */
  CHECK(!wl_config_load("ini/unclosed.ini", err, sizeof err, &io) && !io);
  CHECK_STR(err, "ini/unclosed.ini:1: syntax error: the section header '[run' has no closing ']'");
  CHECK(!LOAD("[run ; [x]\n"));
  CHECK_CONTAINS(
      err, "T.ini:1: syntax error: the comment (a ';' or '#' after a blank) in the section header");
  CHECK(!LOAD("[run] iters = 5\n"));
  CHECK_CONTAINS(err, "T.ini:1: text after the section header [run]: 'iters = 5'");
  CHECK(!LOAD("[run]\n= 5\n"));
  CHECK_CONTAINS(err, "T.ini:2: a value without a key");
  CHECK(!LOAD("[run]\niters\n"));
  CHECK_CONTAINS(err, "T.ini:2: syntax error: expected [section] or key = value, got 'iters'");

  /* comments, blanks, empty values, quotes */
  CHECK(LOAD("  # a comment\n[run] ; the run\n\titers=10 ; ten\n  warmup   :  3   # three\n"
             "[compile]\ncache_dir = /tmp/a#b;c\n"));
  CHECK(wl_setting_find("run", "iters")->number == 10 &&
        wl_setting_find("run", "warmup")->number == 3);
  CHECK_STR(wl_setting_find("compile", "cache_dir")->text, "/tmp/a#b;c");
  CHECK(!LOAD("[run]\nseed = 4;5\n")); /* no blank before ';': part of the value */
  CHECK_CONTAINS(err, "T.ini:2: run.seed: expected a whole number");
  CHECK(!LOAD("[run]\nseed = 9007199254740992\n")); /* the message names the largest seed */
  CHECK_CONTAINS(err, "T.ini:2: run.seed: expected a whole number from 0 to 9007199254740991");
  CHECK(!LOAD("[run]\nlock_clocks = abc\n")); /* checked when the file is read, like every key */
  CHECK_CONTAINS(err, "T.ini:2: run.lock_clocks: expected off, base, max or a clock in MHz (100 to "
                      "10000), got 'abc'");
  CHECK(!LOAD("[run]\nlock_clocks = 99\n"));
  CHECK(!LOAD("[run]\nlock_clocks = 1500.5\n"));
  CHECK(LOAD("[run]\nlock_clocks = 1500\n") && LOAD("[run]\nlock_clocks = max\n"));
  CHECK(!LOAD("[run]\nseed = 4\niters =   ; none\n"));
  CHECK_CONTAINS(err, "T.ini:3: run.iters: empty value (delete the line to keep the default)");
  CHECK(!LOAD("[run]\nmode = \"cold\"\n"));
  CHECK_CONTAINS(
      err,
      "T.ini:2: run.mode: values are written without quotes: mode = cold, not mode = \"cold\"");

  /* encodings: UTF-8 text, CRLF and a byte order mark accepted */
  CHECK(LOAD("\xEF\xBB\xBF[run]\r\niters = 9\r\n; caf\xC3\xA9 \xE2\x82\xAC "
             "\xF0\x9F\x98\x80\r\n[output]\r\nquiet = on"));
  CHECK(wl_setting_find("run", "iters")->number == 9 &&
        wl_setting_find("output", "quiet")->number == 1);
#define TEXT(s) s, sizeof s - 1
  static const struct {
    const char *text;
    size_t n;
    const char *why;
  } bad[] = {
      {TEXT("[run]\niters = 1\0 2\n"), "T.ini:2: a NUL byte at column 10"},
      {TEXT("[run]\n; \xFF\n"), "T.ini:2: byte 0xFF at column 3 is not UTF-8"},
      {TEXT("[run]\n; \xC0\xAF overlong\n"), "T.ini:2: byte 0xC0 at column 3 is not UTF-8"},
      {TEXT("[run]\n; \xED\xA0\x80 surrogate\n"), "T.ini:2: byte 0xED at column 3 is not UTF-8"},
      {TEXT("[run]\n; cut \xE2\x82"), "T.ini:2: byte 0xE2 at column 7 is not UTF-8"},
      {TEXT("\xFF\xFE[\0r\0"), "T.ini:1: byte 0xFF at column 1 is not UTF-8: wlrun.ini is UTF-8 "
                               "text (this file is UTF-16)"},
      {TEXT("[run]\riters = 5\r"), "T.ini:1: a carriage return (CR) inside the line, at column 6"},
      {TEXT("[run]\n; \x1B[31m red\n"), "T.ini:2: control character U+001B at column 3"},
      {TEXT("[run]\n; \xC2\x9B\n"), "T.ini:2: control character U+009B at column 3"},
      {TEXT("[run]\n\xEF\xBB\xBFiters = 1\n"), "T.ini:2: a byte order mark (U+FEFF) at column 1"},
      {TEXT("\x7F"
            "ELF\x02\x01\x01\0\0"),
       "T.ini:1: control character U+007F at column 1"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK(!load_text(bad[i].text, bad[i].n, &io) && !io);
    CHECK_CONTAINS(err, bad[i].why);
  }
}

/* What cannot be read is an I/O error (exit 9) naming the path; a FIFO is not waited on. */
static void test_ini_files(void) {
  bool io;
  char dir[] = "/tmp/wlrun-test-XXXXXX", path[64];
  CHECK(mkdtemp(dir) != NULL);
  CHECK(!wl_config_load(dir, err, sizeof err, &io) && io);
  CHECK_CONTAINS(err, ": cannot read configuration: it is a directory, not a file");
  CHECK(strncmp(err, dir, strlen(dir)) == 0);
  snprintf(path, sizeof path, "%s/fifo.ini", dir);
  CHECK(mkfifo(path, 0600) == 0);
  CHECK(!wl_config_load(path, err, sizeof err, &io) && io);
  CHECK_CONTAINS(err, "fifo.ini: cannot read configuration: it is a FIFO (a pipe), not a file");
  CHECK(unlink(path) == 0);
  snprintf(path, sizeof path, "%s/loop.ini", dir);
  CHECK(symlink("loop.ini", path) == 0);
  CHECK(!wl_config_load(path, err, sizeof err, &io) && io);
  CHECK_CONTAINS(err, "loop.ini: cannot read configuration: Too many levels of symbolic links");
  CHECK(unlink(path) == 0);
  snprintf(path, sizeof path, "%s/locked.ini", dir);
  FILE *f = fopen(path, "w");
  CHECK(f && fputs("[run]\n", f) >= 0 && fclose(f) == 0 && chmod(path, 0) == 0);
  if (geteuid() != 0) { /* root reads it anyway */
    CHECK(!wl_config_load(path, err, sizeof err, &io) && io);
    CHECK_CONTAINS(err, "locked.ini: cannot read configuration: Permission denied");
  }
  CHECK(unlink(path) == 0);
  CHECK(rmdir(dir) == 0);
  CHECK(wl_config_load("/dev/null", err, sizeof err, &io)); /* no configuration */
  CHECK(!wl_config_load("/dev/zero", err, sizeof err, &io) && io);
  CHECK_CONTAINS(err, "/dev/zero: cannot read configuration: it is a character device, not a file");
}
/* Parses argv into cli; the previous parse's allocations are freed first (through a copy of
 * that result: the struct it went into may be gone, or be cli itself). */
static bool parse(struct wl_cli *cli, char **argv) {
  static struct wl_cli last;
  wl_cli_free(&last);
  int argc = 0;
  while (argv[argc]) argc++;
  bool ok = wl_cli_parse(argc, argv, cli, err, sizeof err);
  last = *cli;
  return ok;
}

static void test_cli(void) {
  struct wl_cli cli;
  char *a1[] = {"wlrun", "s.lua", "--iters", "5", "x", "-p", "M=1,2", "--", "--iters", NULL};
  CHECK(parse(&cli, a1));
  CHECK(cli.command == WL_CMD_RUN);
  CHECK_STR(cli.script, "s.lua");
  CHECK(cli.nscript_args == 2);
  CHECK_STR(cli.script_args[0], "x");
  CHECK_STR(cli.script_args[1], "--iters"); /* after --: the script's */
  CHECK(cli.nsets == 1 && strcmp(cli.sets[0].value, "5") == 0);
  CHECK(cli.nparams == 1);

  char *a2[] = {"wlrun", "compare", "a.json", "b.json", "--fail-above", "5%", NULL};
  CHECK(parse(&cli, a2)); /* a tool: its arguments go to its Lua module untouched */
  CHECK(cli.command == WL_CMD_TOOL && strcmp(cli.tool, "compare") == 0 && cli.ntool_args == 4);
  CHECK_STR(cli.tool_args[3], "5%");

  char *bad[][7] = {
      {"wlrun", "s.lua", "--iters", "zero", NULL},
      {"wlrun", "s.lua", "--bogus", NULL},
      {"wlrun", "s.lua", "--iters", NULL},
      {"wlrun", NULL},
      {"wlrun", "s.lua", "-o", "out.xlsx", NULL},
      {"wlrun", "s.lua", "--shard", "3/2", NULL},
      {"wlrun", "info", "x.json", NULL},
      {"wlrun", "s.lua", "--fail-above", "5%", NULL},
      {"wlrun", "s.lua", "-p", "1M=3", NULL},
      {"wlrun", "s.lua", "--mode", "warp", NULL},
      {"wlrun", "s.lua", "-p", "M=1", "-p", "M=2", NULL},
      {"wlrun", "s.lua", "--devices", "0,1,0", NULL},
      {"wlrun", "s.lua", "--devices", "+1", NULL},
      {"wlrun", "s.lua", "--devices", "1024", NULL},
      {"wlrun", "s.lua", "--target-noise", "0", NULL},
  };
  const char *why[] = {"--iters: expected a whole number from 1 to 1000000000, got 'zero'",
                       "unknown option '--bogus'",
                       "option '--iters' needs a value",
                       "no script given",
                       "-o 'out.xlsx': unknown output format",
                       "--shard '3/2'",
                       "'wlrun info' takes no files",
                       "unknown option '--fail-above'",
                       "'1M' is not a parameter name",
                       "--mode: expected one of cold|batch|graph|host|auto|cupti, got 'warp'",
                       "-p M is given twice ('M=1' and 'M=2')",
                       "--devices '0,1,0': device 0 is given twice",
                       "--devices '+1': expected device indices from 0 to 1023",
                       "--devices '1024': expected device indices",
                       "--target-noise: expected a percentage from 0.0001% to 100%"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK(!parse(&cli, bad[i]));
    CHECK_CONTAINS(err, why[i]);
  }
}

static void test_params(void) {
  struct wl_param_override p;
  CHECK(wl_param_parse("M=1024:8192:*2,100", &p, err, sizeof err));
  CHECK_STR(p.name, "M");
  CHECK(p.nvalues == 5);
  CHECK_STR(p.values[0], "1024");
  CHECK_STR(p.values[3], "8192");
  CHECK_STR(p.values[4], "100");
  wl_param_free(&p);
  CHECK(wl_param_parse("K=1:3", &p, err, sizeof err) && p.nvalues == 3);
  CHECK_STR(p.values[2], "3");
  wl_param_free(&p);
  CHECK(wl_param_parse("x=0:1:0.25", &p, err, sizeof err) && p.nvalues == 5);
  CHECK_STR(p.values[1], "0.25");
  wl_param_free(&p);
  /* integer ranges in int64, exactly, up to its largest value */
  CHECK(wl_param_parse("n=9223372036854775806:9223372036854775807", &p, err, sizeof err) &&
        p.nvalues == 2);
  CHECK_STR(p.values[1], "9223372036854775807");
  wl_param_free(&p);
  CHECK(wl_param_parse("n=1:9223372036854775807:*2", &p, err, sizeof err) && p.nvalues == 63);
  CHECK_STR(p.values[62], "4611686018427387904");
  wl_param_free(&p);
  CHECK(wl_param_parse("n=9007199254740993:9007199254740997:2", &p, err, sizeof err) &&
        p.nvalues == 3);
  CHECK_STR(p.values[1], "9007199254740995"); /* a double would read 9007199254740996 */
  wl_param_free(&p);
  CHECK(!wl_param_parse("n=0:9223372036854775807", &p, err, sizeof err));
  CHECK_CONTAINS(err, "has 9223372036854775808 values (at most");
  CHECK(!wl_param_parse("n=-9223372036854775808:9223372036854775807", &p, err, sizeof err));
  CHECK_CONTAINS(err, "has 18446744073709551616 values (at most");
  /* ends that round to one double: the end below the start is still seen */
  CHECK(!wl_param_parse("n=9007199254740993:9007199254740992", &p, err, sizeof err));
  CHECK_CONTAINS(err, "the end is below the start");
  CHECK(!wl_param_parse("n=9007199254740993:9007199254740992:*2", &p, err, sizeof err));
  CHECK_CONTAINS(err, "the end is below the start");
  CHECK(wl_param_parse("n=1:100000", &p, err, sizeof err) && p.nvalues == 100000);
  wl_param_free(&p);
  CHECK(!wl_param_parse("n=0:100000", &p, err, sizeof err));
  CHECK_CONTAINS(err, "has 100001 values (at most 100000)");
  CHECK(wl_param_parse("variant=naive,tiled", &p, err, sizeof err) && p.nvalues == 2);
  CHECK_STR(p.values[1], "tiled");
  wl_param_free(&p);
  CHECK(wl_param_parse("t=a:b", &p, err, sizeof err) && p.nvalues == 1); /* not numeric: a string */
  wl_param_free(&p);
  CHECK(!wl_param_parse("M", &p, err, sizeof err));
  CHECK(!wl_param_parse("M=", &p, err, sizeof err));
  CHECK(!wl_param_parse("M=1,,2", &p, err, sizeof err));
  CHECK_CONTAINS(err, "-p 'M=1,,2': value 2 is empty");
  {
    char long_value[400] = "M=1,";
    memset(long_value + 4, 'a', 300);
    CHECK(!wl_param_parse(long_value, &p, err,
                          sizeof err)); /* the reason is never cut off by the value */
    CHECK_CONTAINS(err, "...': value 2 is 300 bytes long (at most 255)");
  }
  CHECK(!wl_param_parse("M=8:1", &p, err, sizeof err));
  CHECK_CONTAINS(err, "below the start");
  CHECK(!wl_param_parse("M=1:8:*1", &p, err, sizeof err));
  CHECK(!wl_param_parse("M=1:8:-1", &p, err, sizeof err));
  CHECK(!wl_param_parse("M=1:1e12", &p, err, sizeof err));
  CHECK_CONTAINS(err, "at most");
}

static void test_precedence(void) {
  struct wl_cli cli;
  bool io;
  char *argv[] = {"wlrun", "s.lua", "--warmup", "3", NULL};
  wl_settings_reset();
  CHECK(parse(&cli, argv));
  CHECK(wl_config_load("ini/good.ini", err, sizeof err, &io));
  CHECK(wl_cli_apply_settings(&cli, err, sizeof err));
  struct wl_setting *w = wl_setting_find("run", "warmup"), *i = wl_setting_find("run", "iters");
  CHECK(w->number == 3 && w->source == WL_FROM_CLI);               /* command line over ini */
  CHECK(i->number == 500 && i->source == WL_FROM_INI);             /* ini over built-in */
  CHECK(wl_setting_find("adaptive", "min_samples")->number == 10); /* built-in */
}

int main(void) {
  test_parsers();
  test_assign();
  test_ini();
  test_ini_rules();
  test_ini_files();
  test_cli();
  test_params();
  test_precedence();
  return check_report("test_settings");
}
