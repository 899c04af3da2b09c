/* A C parameter list read into a signature (c_params.h). */
#include "c_params.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_WORDS 8
#define WORD_LEN 48

/* the named types, as one word each */
static const struct {
  const char *name;
  enum wl_ctype ctype;
} named[] = {
    {"void", WL_C_VOID},
    {"bool", WL_C_BOOL},
    {"float", WL_C_FLOAT},
    {"double", WL_C_DOUBLE},
    {"__half", WL_C_HALF},
    {"half", WL_C_HALF},
    {"__nv_bfloat16", WL_C_BFLOAT16},
    {"nv_bfloat16", WL_C_BFLOAT16},
    {"size_t", WL_C_ULONG},
    {"ptrdiff_t", WL_C_LONG},
    {"ssize_t", WL_C_LONG},
    {"int8_t", WL_C_CHAR},
    {"uint8_t", WL_C_UCHAR},
    {"int16_t", WL_C_SHORT},
    {"uint16_t", WL_C_USHORT},
    {"int32_t", WL_C_INT},
    {"uint32_t", WL_C_UINT},
    {"int64_t", WL_C_LONG},
    {"uint64_t", WL_C_ULONG},
    {"intptr_t", WL_C_LONG},
    {"uintptr_t", WL_C_ULONG},
};

static bool is_qualifier(const char *w) {
  return !strcmp(w, "const") || !strcmp(w, "volatile") || !strcmp(w, "__restrict__") ||
         !strcmp(w, "__restrict") || !strcmp(w, "restrict");
}

static bool is_builtin_word(const char *w) {
  return !strcmp(w, "signed") || !strcmp(w, "unsigned") || !strcmp(w, "short") ||
         !strcmp(w, "long") || !strcmp(w, "int") || !strcmp(w, "char");
}

static enum wl_ctype named_type(const char *w) {
  for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
    if (!strcmp(named[i].name, w)) return named[i].ctype;
  return WL_C_UNKNOWN;
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

/* The type of words[0..n) (no qualifiers): WL_C_UNKNOWN when the words are not one type,
 * WL_C_OTHER for one word that names no type wlrun knows. */
static enum wl_ctype type_of(char words[][WORD_LEN], int n) {
  if (n == 1 && !is_builtin_word(words[0])) {
    enum wl_ctype t = named_type(words[0]);
    return t != WL_C_UNKNOWN ? t : WL_C_OTHER;
  }
  int is_unsigned = 0, is_signed = 0, shorts = 0, longs = 0, ints = 0, chars = 0;
  for (int i = 0; i < n; i++) {
    const char *w = words[i];
    if (!strcmp(w, "unsigned")) is_unsigned++;
    else if (!strcmp(w, "signed")) is_signed++;
    else if (!strcmp(w, "short")) shorts++;
    else if (!strcmp(w, "long")) longs++;
    else if (!strcmp(w, "int")) ints++;
    else if (!strcmp(w, "char")) chars++;
    else return WL_C_UNKNOWN;
  }
  if (is_unsigned + is_signed > 1 || ints > 1 || chars > 1 || shorts > 1 || longs > 2 ||
      (shorts && longs) || (chars && (ints || shorts || longs)))
    return WL_C_UNKNOWN;
  if (chars) return is_unsigned ? WL_C_UCHAR : WL_C_CHAR;
  if (shorts) return is_unsigned ? WL_C_USHORT : WL_C_SHORT;
  if (longs == 2) return is_unsigned ? WL_C_ULONGLONG : WL_C_LONGLONG;
  if (longs == 1) return is_unsigned ? WL_C_ULONG : WL_C_LONG;
  return is_unsigned ? WL_C_UINT : WL_C_INT;
}

/* size and PTX kind of a value of type t (not a pointer) */
static bool layout(enum wl_ctype t, unsigned *size, enum wl_ptx_kind *kind) {
  switch (t) {
  case WL_C_BOOL:
  case WL_C_UCHAR:
    *size = 1;
    *kind = WL_PTX_UNSIGNED;
    return true;
  case WL_C_CHAR:
    *size = 1;
    *kind = WL_PTX_SIGNED;
    return true;
  case WL_C_SHORT:
    *size = 2;
    *kind = WL_PTX_SIGNED;
    return true;
  case WL_C_USHORT:
    *size = 2;
    *kind = WL_PTX_UNSIGNED;
    return true;
  case WL_C_INT:
    *size = 4;
    *kind = WL_PTX_SIGNED;
    return true;
  case WL_C_UINT:
    *size = 4;
    *kind = WL_PTX_UNSIGNED;
    return true;
  case WL_C_LONG:
  case WL_C_LONGLONG:
    *size = 8;
    *kind = WL_PTX_SIGNED;
    return true;
  case WL_C_ULONG:
  case WL_C_ULONGLONG:
    *size = 8;
    *kind = WL_PTX_UNSIGNED;
    return true;
  case WL_C_FLOAT:
    *size = 4;
    *kind = WL_PTX_FLOAT;
    return true;
  case WL_C_DOUBLE:
    *size = 8;
    *kind = WL_PTX_FLOAT;
    return true;
  case WL_C_HALF:
  case WL_C_BFLOAT16:
    *size = 2;
    *kind = WL_PTX_BYTES;
    return true; /* .align 2 .b8[2] */
  default: return false;
  }
}

/* p from the type read: its words (types[0..ntypes)), C type t and the '*'s after them */
static void fill_param(struct wl_param *p, enum wl_ctype t, char types[][WORD_LEN], int ntypes,
                       int stars, bool const_before_star) {
  memset(p, 0, sizeof *p);
  char base[WORD_LEN * MAX_WORDS] = "";
  for (int w = 0; w < ntypes; w++) {
    strcat(base, w ? " " : "");
    strcat(base, types[w]);
  }
  if (stars > 0) {
    p->ctype = WL_C_POINTER;
    p->pointee = stars == 1 ? t : WL_C_POINTER;
    p->pointee_const = stars == 1 && const_before_star;
    p->size = p->align = 8;
    p->ptx_kind = WL_PTX_UNSIGNED;
    snprintf(p->ctype_name, sizeof p->ctype_name, "%s%.48s%.*s", p->pointee_const ? "const " : "",
             base, stars < 8 ? stars : 8, "********");
  } else {
    p->ctype = t;
    layout(t, &p->size, &p->ptx_kind);
    p->align = p->size;
    snprintf(p->ctype_name, sizeof p->ctype_name, "%.60s", base);
  }
}

/* Reads one parameter (index i, from 1) from text[0..len). */
static bool read_one(const char *text, size_t len, int i, struct wl_param *p, char *err,
                     size_t errlen) {
  char words[MAX_WORDS][WORD_LEN], types[MAX_WORDS][WORD_LEN];
  int nwords = 0, word_stars[MAX_WORDS], stars = 0;
  bool const_before_star = false;
  for (size_t at = 0; at < len;) {
    unsigned char c = (unsigned char)text[at];
    if (isspace(c)) {
      at++;
      continue;
    }
    if (c == '*') {
      stars++;
      at++;
      continue;
    }
    if (!isalpha(c) && c != '_') {
      set_err(err, errlen,
              "parameter %d ('%.*s'): cannot read '%c' (a parameter is a type and a name, such as "
              "'const float* x')",
              i, (int)len, text, c);
      return false;
    }
    size_t start = at;
    while (at < len && (isalnum((unsigned char)text[at]) || text[at] == '_')) at++;
    if (nwords == MAX_WORDS || at - start >= WORD_LEN) {
      set_err(err, errlen, "parameter %d ('%.*s'): too long to be a type and a name", i, (int)len,
              text);
      return false;
    }
    memcpy(words[nwords], text + start, at - start);
    words[nwords][at - start] = '\0';
    if (!strcmp(words[nwords], "const") && stars == 0) const_before_star = true;
    word_stars[nwords++] = stars;
  }
  /* the type's words: before the first '*'; a name may follow the type (or the last '*') */
  int ntypes = 0;
  const char *name = NULL;
  for (int w = 0; w < nwords; w++) {
    if (is_qualifier(words[w])) continue;
    if (word_stars[w] == 0) strcpy(types[ntypes++], words[w]);
    else if (word_stars[w] == stars && !name) name = words[w];
    else {
      set_err(err, errlen, "parameter %d ('%.*s'): cannot read '%s' after a '*'", i, (int)len, text,
              words[w]);
      return false;
    }
  }
  if (stars == 0 && ntypes >= 2 && !is_builtin_word(types[ntypes - 1]) &&
      named_type(types[ntypes - 1]) == WL_C_UNKNOWN)
    name = types[--ntypes];
  (void)name;
  enum wl_ctype t = ntypes ? type_of(types, ntypes) : WL_C_UNKNOWN;
  if (t == WL_C_UNKNOWN || (stars == 0 && (t == WL_C_OTHER || t == WL_C_VOID))) {
    set_err(
        err, errlen,
        "parameter %d ('%.*s'): %s; by value wlrun passes bool, char, short, int, long, long long "
        "(signed or unsigned), float, double, __half, __nv_bfloat16, size_t, [u]intN_t, and "
        "pointers to any type",
        i, (int)len, text,
        ntypes == 0         ? "no type"
        : t == WL_C_UNKNOWN ? "not a C type"
                            : "a type wlrun cannot pass by value");
    return false;
  }
  fill_param(p, t, types, ntypes, stars, const_before_star);
  return true;
}

bool wl_c_params(const char *text, struct wl_signature *sig, char *err, size_t errlen) {
  memset(sig, 0, sizeof *sig);
  sig->has_ctypes = true;
  const char *p = text;
  while (isspace((unsigned char)*p)) p++;
  size_t all = strlen(p);
  while (all > 0 && isspace((unsigned char)p[all - 1])) all--;
  if (all == 0 || (all == 4 && !strncmp(p, "void", 4))) return true;
  for (const char *end = p;; p = end + 1) {
    end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    while (len > 0 && isspace((unsigned char)*p)) p++, len--; /* trimmed, for messages */
    while (len > 0 && isspace((unsigned char)p[len - 1])) len--;
    if (sig->nparams == WL_MAX_PARAMS) {
      set_err(err, errlen, "more than %d parameters", WL_MAX_PARAMS);
      return false;
    }
    if (!read_one(p, len, sig->nparams + 1, &sig->params[sig->nparams], err, errlen)) return false;
    sig->nparams++;
    if (!end) return true;
  }
}
