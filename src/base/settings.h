/* wlrun's settings: one table of descriptors shared by the command line (cli.c), wlrun.ini
 * (config.c) and Lua (lhost.c). Each setting remembers where its value came from so that the
 * precedence built-in < wlrun.ini < scenario < command line can be applied and reported. */
#ifndef WL_SETTINGS_H
#define WL_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

enum wl_setting_type {
  WL_INT,      /* whole number within [min, max] */
  WL_NUMBER,   /* real number within [min, max] */
  WL_DURATION, /* seconds; accepts 1.5, 1.5s, 200ms, 50us, 10ns, 2m */
  WL_PERCENT,  /* a percentage, kept as a fraction: 0.5 and 0.5% are both 0.005 */
  WL_BOOL,     /* true/false, on/off, yes/no, 1/0 */
  WL_ENUM,     /* one of a fixed list of words */
  WL_STRING,   /* free text (paths) */
  WL_ARCH,     /* a GPU architecture: sm_90, sm_90a, sm_100f */
  WL_CLOCKS    /* a clock lock: off, base, max, or a clock in MHz within [min, max] */
};

enum wl_source { WL_FROM_DEFAULT, WL_FROM_INI, WL_FROM_CLI };

struct wl_setting {
  const char *section; /* wlrun.ini section */
  const char *name;    /* key in the section, field in wl.settings */
  enum wl_setting_type type;
  const char *fallback; /* built-in default, as text; NULL for none */
  double min, max;      /* bounds for WL_INT, WL_NUMBER, WL_DURATION, WL_PERCENT */
  const char *words;    /* WL_ENUM: the allowed words, separated by '|' */
  const char *help;

  /* current value */
  enum wl_source source;
  char origin[320]; /* "wlrun.ini:12" or "--warmup"; empty for the default */
  char text[512];   /* the value as given */
  double number;    /* parsed value for numeric and bool types */
  bool set;         /* has a value (a default or given) */
};

/* The settings table, reset to built-in defaults. */
void wl_settings_reset(void);
size_t wl_settings_count(void);
struct wl_setting *wl_setting_at(size_t i);
struct wl_setting *wl_setting_find(const char *section, const char *name);
struct wl_setting *wl_setting_find_name(const char *name);

/* Parses text into the setting's type and checks its range: the one validator of values from
 * the command line, wlrun.ini and Lua. On success stores the parsed number (numeric and bool
 * types) in *value; on error writes "expected ..., got '...'" into err and returns false. */
bool wl_setting_check(const struct wl_setting *s, const char *text, double *value, char *err,
                      size_t errlen);

/* What the setting takes, as in the messages: "a whole number from 1 to 1000000000". */
void wl_setting_describe(const struct wl_setting *s, char *buf, size_t len);

/* Checks text (wl_setting_check) and stores it. On error writes a message (what was expected)
 * into err and returns false; the setting is unchanged. */
bool wl_setting_assign(struct wl_setting *s, const char *text, enum wl_source source,
                       const char *origin, char *err, size_t errlen);

/* Parsers, exposed for the tests and for other modules. */
bool wl_parse_int(const char *text, long long *out);
bool wl_parse_number(const char *text, double *out);
bool wl_parse_duration(const char *text, double *seconds);
bool wl_parse_percent(const char *text, double *fraction);
bool wl_parse_bool(const char *text, bool *out);

const char *wl_source_name(enum wl_source s);

/* The architectures the kernel compiler supports, for WL_ARCH values; main installs NVRTC's.
 * Without it only the form sm_NN[a|f] is checked. list: the numbers (75, 90, 100), 0 when
 * unknown; accepts: whether the compiler takes this architecture with its suffix. */
struct wl_arch_support {
  const char *(*name)(void); /* "NVRTC 13.0" */
  int (*list)(int *archs, int max);
  bool (*accepts)(const char *arch);
};
void wl_settings_set_arch_support(const struct wl_arch_support *support);

#endif
