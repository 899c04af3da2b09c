#include "kernel_signature.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* PTX                                                                                        */
/* ------------------------------------------------------------------------------------------ */

enum tok_kind { TK_END, TK_DIRECTIVE, TK_IDENT, TK_NUMBER, TK_STRING, TK_PUNCT };

struct token {
  enum tok_kind kind;
  const char *s;
  size_t len;
};

static bool is_follow(char c) { return isalnum((unsigned char)c) || c == '_' || c == '$'; }

static void skip_blank(const char **pp) {
  const char *p = *pp;
  for (;;) {
    if (isspace((unsigned char)*p)) {
      p++;
    } else if (p[0] == '/' && p[1] == '/') {
      while (*p && *p != '\n') p++;
    } else if (p[0] == '/' && p[1] == '*') {
      const char *end = strstr(p + 2, "*/");
      p = end ? end + 2 : p + strlen(p);
    } else {
      break;
    }
  }
  *pp = p;
}

/* A small PTX tokenizer: comments and strings are skipped whole, so that text inside them is
 * never taken for a directive. ".ptr.global.align" gives three directives. */
static struct token next_token(const char **pp) {
  skip_blank(pp);
  const char *p = *pp;
  struct token t = {TK_PUNCT, p, 1};
  if (!*p) {
    t.kind = TK_END;
    t.len = 0;
  } else if (*p == '.' && is_follow(p[1])) {
    t.kind = TK_DIRECTIVE;
    while (is_follow(p[t.len])) t.len++;
  } else if (isdigit((unsigned char)*p)) {
    t.kind = TK_NUMBER;
    while (is_follow(p[t.len])) t.len++;
  } else if (is_follow(*p) || *p == '%') {
    t.kind = TK_IDENT;
    while (is_follow(p[t.len])) t.len++;
  } else if (*p == '"') {
    t.kind = TK_STRING;
    while (p[t.len] && p[t.len] != '"') t.len += (p[t.len] == '\\' && p[t.len + 1]) ? 2 : 1;
    if (p[t.len]) t.len++;
  }
  *pp = p + t.len;
  return t;
}

static bool tok_is(struct token t, const char *s) {
  return t.len == strlen(s) && memcmp(t.s, s, t.len) == 0;
}

static bool tok_uint(struct token t, unsigned long max, unsigned *out) {
  char buf[24], *end;
  if (t.kind != TK_NUMBER || t.len >= sizeof buf) return false;
  memcpy(buf, t.s, t.len);
  buf[t.len] = '\0';
  unsigned long v = strtoul(buf, &end, 10);
  if (*end || v > max) return false;
  *out = (unsigned)v;
  return true;
}

/* .u8 ... .s64, .f16 .f32 .f64, .b8 ... .b64 */
static bool ptx_scalar_type(struct token t, enum wl_ptx_kind *kind, unsigned *bytes) {
  if (t.len < 3 || t.len > 4) return false;
  switch (t.s[1]) {
  case 'u': *kind = WL_PTX_UNSIGNED; break;
  case 's': *kind = WL_PTX_SIGNED; break;
  case 'f': *kind = WL_PTX_FLOAT; break;
  case 'b': *kind = WL_PTX_BYTES; break;
  default: return false;
  }
  const char *bits = t.s + 2;
  size_t n = t.len - 2;
  if (n == 1 && bits[0] == '8' && *kind != WL_PTX_FLOAT) *bytes = 1;
  else if (n == 2 && !memcmp(bits, "16", 2)) *bytes = 2;
  else if (n == 2 && !memcmp(bits, "32", 2)) *bytes = 4;
  else if (n == 2 && !memcmp(bits, "64", 2)) *bytes = 8;
  else return false;
  return true;
}

/* One `.param [.align N] .type [.ptr [.space] [.align N]] name[[SIZE]]`, in any order of the
 * directives. On failure, says why in why. */
static bool read_param(const char **pp, struct wl_param *prm, char *why, size_t whylen) {
  struct token t = next_token(pp);
  if (!tok_is(t, ".param")) {
    snprintf(why, whylen, "expected .param, found '%.*s'", (int)t.len, t.s);
    return false;
  }
  bool have_type = false, is_ptr = false;
  unsigned align = 0, elem = 0, count = 1;
  for (t = next_token(pp); t.kind == TK_DIRECTIVE; t = next_token(pp)) {
    if (tok_is(t, ".align")) {
      if (!tok_uint(next_token(pp), 1u << 16, &align) || !align || (align & (align - 1))) {
        snprintf(why, whylen, "bad .align");
        return false;
      }
    } else if (tok_is(t, ".ptr")) {
      is_ptr = true;
    } else if (is_ptr && (tok_is(t, ".global") || tok_is(t, ".const") || tok_is(t, ".shared") ||
                          tok_is(t, ".local"))) {
      /* the state space the pointer points into: nothing to record */
    } else if (!have_type && ptx_scalar_type(t, &prm->ptx_kind, &elem)) {
      have_type = true;
    } else {
      snprintf(why, whylen, "unexpected '%.*s'", (int)t.len, t.s);
      return false;
    }
  }
  if (!have_type) {
    snprintf(why, whylen, "no type");
    return false;
  }
  if (t.kind != TK_IDENT) {
    snprintf(why, whylen, "expected a name, found '%.*s'", (int)t.len, t.s);
    return false;
  }
  const char *after_name = *pp;
  if (tok_is(next_token(pp), "[")) {
    if (!tok_uint(next_token(pp), 1u << 20, &count) || !count || !tok_is(next_token(pp), "]")) {
      snprintf(why, whylen, "bad array size");
      return false;
    }
    prm->ptx_kind = WL_PTX_BYTES; /* an aggregate passed by value */
  } else {
    *pp = after_name;
  }
  prm->size = elem * count;
  /* After .ptr, .align is the alignment of the memory pointed to (PTX ISA, "Kernel Parameter
   * Attribute: .ptr"), not of the parameter itself. */
  prm->align = (align && !is_ptr) ? align : elem;
  return true;
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || !errlen) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

bool wl_ptx_params(const char *ptx, const char *entry_name, struct wl_signature *sig, char *err,
                   size_t errlen) {
  memset(sig, 0, sizeof *sig);
  set_err(err, errlen, "%s", "");
  const char *p = ptx;
  bool found = false;
  while (!found) {
    struct token t = next_token(&p);
    if (t.kind == TK_END) break;
    if (tok_is(t, ".entry")) {
      struct token name = next_token(&p);
      found = name.kind == TK_IDENT && tok_is(name, entry_name);
    }
  }
  if (!found) {
    set_err(err, errlen, "kernel entry '%s' not found in the PTX", entry_name);
    return false;
  }
  /* PTX also allows `.entry k { ... }` with no parameter list at all. */
  if (!tok_is(next_token(&p), "(")) return true;
  const char *first = p;
  if (tok_is(next_token(&p), ")")) return true;
  p = first;
  for (;;) {
    char why[96];
    int i = sig->nparams;
    if (i == WL_MAX_PARAMS) {
      set_err(err, errlen, "cannot read parameter %d of '%s': more than %d parameters", i,
              entry_name, WL_MAX_PARAMS);
      break;
    }
    if (!read_param(&p, &sig->params[i], why, sizeof why)) {
      set_err(err, errlen, "cannot read parameter %d of '%s': %s", i, entry_name, why);
      break;
    }
    sig->nparams++;
    struct token t = next_token(&p);
    if (tok_is(t, ")")) return true;
    if (!tok_is(t, ",")) {
      set_err(err, errlen, "cannot read parameter %d of '%s': expected ',' or ')', found '%.*s'", i,
              entry_name, (int)t.len, t.s);
      break;
    }
  }
  memset(sig, 0, sizeof *sig);
  return false;
}

/* ------------------------------------------------------------------------------------------ */
/* Itanium C++ ABI names, as far as a kernel's parameter types need                           */
/* ------------------------------------------------------------------------------------------ */

#define NAME_LEN sizeof(((struct wl_param *)0)->ctype_name)
#define MAX_SUBS 128
#define MAX_TARGS 16
#define MAX_DEPTH 32

/* A type, or a name that is not a type (namespace, template name, literal template argument);
 * both kinds are substitution candidates. */
struct dtype {
  bool is_type;
  bool is_const; /* top-level const: makes a pointer to it pointee_const */
  enum wl_ctype ctype, pointee;
  bool pointee_const;
  char name[NAME_LEN];
};

struct demangler {
  const char *p;
  int depth;
  struct dtype subs[MAX_SUBS]; /* S_, S0_, S1_, ... */
  int nsubs;
  struct dtype targs[MAX_TARGS]; /* the kernel template's arguments: T_, T0_, ... */
  int ntargs;
};

static const struct {
  char code;
  enum wl_ctype ctype;
  const char *name;
  const char *literal_suffix; /* NULL: a literal of this type prints as (type)value */
} builtins[] = {
    {'v', WL_C_VOID, "void", NULL},
    {'b', WL_C_BOOL, "bool", NULL},
    {'c', WL_C_CHAR, "char", NULL},
    {'a', WL_C_CHAR, "signed char", NULL},
    {'h', WL_C_UCHAR, "unsigned char", NULL},
    {'s', WL_C_SHORT, "short", NULL},
    {'t', WL_C_USHORT, "unsigned short", NULL},
    {'i', WL_C_INT, "int", ""},
    {'j', WL_C_UINT, "unsigned int", "u"},
    {'l', WL_C_LONG, "long", "l"},
    {'m', WL_C_ULONG, "unsigned long", "ul"},
    {'x', WL_C_LONGLONG, "long long", "ll"},
    {'y', WL_C_ULONGLONG, "unsigned long long", "ull"},
    {'f', WL_C_FLOAT, "float", NULL},
    {'d', WL_C_DOUBLE, "double", NULL},
};

static int builtin_index(char c) {
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
    if (builtins[i].code == c) return (int)i;
  return -1;
}

/* Formats into a name buffer (which may also be an argument); false if it does not fit. */
static bool name_printf(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool name_printf(char *out, const char *fmt, ...) {
  char tmp[NAME_LEN];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof tmp) return false;
  memcpy(out, tmp, (size_t)n + 1);
  return true;
}

static bool eat(struct demangler *d, char c) {
  if (*d->p != c) return false;
  d->p++;
  return true;
}

static bool add_sub(struct demangler *d, const struct dtype *t) {
  if (d->nsubs == MAX_SUBS) return false;
  d->subs[d->nsubs++] = *t;
  return true;
}

/* <len><identifier> */
static bool source_name(struct demangler *d, char *out) {
  size_t len = 0;
  if (!isdigit((unsigned char)*d->p)) return false;
  while (isdigit((unsigned char)*d->p)) {
    len = len * 10 + (size_t)(*d->p++ - '0');
    if (len >= NAME_LEN) return false;
  }
  if (len == 0 || strnlen(d->p, len) < len) return false;
  memcpy(out, d->p, len);
  out[len] = '\0';
  d->p += len;
  return true;
}

/* S_ is entry 0, S<base-36 seq>_ entry seq + 1. St, Sa, Ss... (std::) are not read. */
static const struct dtype *substitution(struct demangler *d) {
  size_t idx = 0;
  d->p++;
  if (*d->p != '_') {
    size_t seq = 0;
    for (; isdigit((unsigned char)*d->p) || isupper((unsigned char)*d->p); d->p++) {
      seq = seq * 36 + (size_t)(isdigit((unsigned char)*d->p) ? *d->p - '0' : *d->p - 'A' + 10);
      if (seq >= MAX_SUBS) return NULL;
    }
    if (*d->p != '_') return NULL;
    idx = seq + 1;
  }
  d->p++;
  return idx < (size_t)d->nsubs ? &d->subs[idx] : NULL;
}

/* T_ is argument 0, T<n>_ argument n + 1 (decimal). */
static const struct dtype *template_param(struct demangler *d) {
  size_t idx = 0;
  d->p++;
  if (*d->p != '_') {
    if (!isdigit((unsigned char)*d->p)) return NULL;
    for (; isdigit((unsigned char)*d->p); d->p++) {
      idx = idx * 10 + (size_t)(*d->p - '0');
      if (idx >= MAX_TARGS) return NULL;
    }
    idx++;
  }
  if (*d->p != '_') return NULL;
  d->p++;
  return idx < (size_t)d->ntargs ? &d->targs[idx] : NULL;
}

/* L <integer type> [n] <digits> E, a non-type template argument such as Li32E. */
static bool literal(struct demangler *d, struct dtype *out) {
  memset(out, 0, sizeof *out);
  d->p++;
  int b = builtin_index(*d->p);
  if (b < 0 || strchr("vfd", builtins[b].code)) return false;
  d->p++;
  const char *sign = *d->p == 'n' ? "-" : "";
  if (*sign) d->p++;
  const char *digits = d->p;
  while (isdigit((unsigned char)*d->p)) d->p++;
  int n = (int)(d->p - digits);
  if (n == 0 || n > 20 || *d->p++ != 'E') return false;
  if (builtins[b].code == 'b') {
    if (n != 1 || *sign || (*digits != '0' && *digits != '1')) return false;
    return name_printf(out->name, "%s", *digits == '1' ? "true" : "false");
  }
  if (builtins[b].literal_suffix)
    return name_printf(out->name, "%s%.*s%s", sign, n, digits, builtins[b].literal_suffix);
  return name_printf(out->name, "(%s)%s%.*s", builtins[b].name, sign, n, digits);
}

static bool parse_type(struct demangler *d, struct dtype *out);

/* I <arg>+ E: appends "<a, b>" to name; stores the arguments in args unless it is NULL. */
static bool template_args(struct demangler *d, char *name, struct dtype *args, int *nargs) {
  char list[NAME_LEN] = "";
  int n = 0;
  for (d->p++; *d->p != 'E'; n++) {
    struct dtype a;
    if (!(*d->p == 'L' ? literal(d, &a) : parse_type(d, &a))) return false;
    if (!name_printf(list, "%s%s%s", list, n ? ", " : "", a.name)) return false;
    if (args) {
      if (n == MAX_TARGS) return false;
      args[n] = a;
    }
  }
  d->p++;
  if (nargs) *nargs = n;
  return n > 0 && name_printf(name, "%s<%s>", name, list);
}

/* N [<substitution>] (<source name> | <template args>)+ E. Every prefix but the whole name
 * is a substitution candidate (the caller adds the whole name when it is a type). When the
 * name ends with template arguments, they go to args (a kernel template's T_). */
static bool nested_name(struct demangler *d, struct dtype *out, struct dtype *args, int *nargs) {
  bool have = false;
  memset(out, 0, sizeof *out);
  if (nargs) *nargs = 0;
  d->p++;
  if (*d->p == 'S') {
    const struct dtype *s = substitution(d);
    if (!s) return false;
    *out = *s;
    have = true;
  }
  while (*d->p != 'E') {
    char id[NAME_LEN];
    if (*d->p == 'I' && have) {
      if (!template_args(d, out->name, args, nargs)) return false;
    } else if (source_name(d, id)) {
      if (!name_printf(out->name, "%s%s%s", have ? out->name : "", have ? "::" : "", id))
        return false;
      if (nargs) *nargs = 0; /* earlier arguments belonged to a prefix */
      have = true;
    } else {
      return false;
    }
    out->is_type = false;
    if (*d->p != 'E' && !add_sub(d, out)) return false;
  }
  d->p++;
  return have;
}

/* out->name names a class, struct or enum type: finish it and make it a candidate. */
static bool class_type(struct demangler *d, struct dtype *out) {
  out->is_type = true;
  out->is_const = false;
  out->ctype = !strcmp(out->name, "__half")          ? WL_C_HALF
               : !strcmp(out->name, "__nv_bfloat16") ? WL_C_BFLOAT16
                                                     : WL_C_OTHER;
  return add_sub(d, out);
}

/* Substitution candidates are added in the ABI's order: a compound type after its parts
 * (Kf before PKf), never builtin types nor a substitution itself. */
static bool read_type(struct demangler *d, struct dtype *out) {
  char c = *d->p;
  int b = builtin_index(c);
  memset(out, 0, sizeof *out);
  if (b >= 0) {
    d->p++;
    out->is_type = true;
    out->ctype = builtins[b].ctype;
    return name_printf(out->name, "%s", builtins[b].name);
  }
  switch (c) {
  case 'P': {
    struct dtype inner;
    d->p++;
    if (!parse_type(d, &inner) || !name_printf(out->name, "%s*", inner.name)) return false;
    out->is_type = true;
    out->ctype = WL_C_POINTER;
    out->pointee = inner.ctype == WL_C_POINTER ? WL_C_UNKNOWN : inner.ctype;
    out->pointee_const = inner.is_const;
    return add_sub(d, out);
  }
  case 'r':
  case 'V':
  case 'K': {
    bool r = eat(d, 'r'), v = eat(d, 'V'), k = eat(d, 'K'); /* the ABI's order */
    if (!parse_type(d, out)) return false;
    if (out->ctype == WL_C_POINTER) {
      if (!name_printf(out->name, "%s%s%s%s", out->name, k ? " const" : "", v ? " volatile" : "",
                       r ? " __restrict__" : ""))
        return false;
    } else if (r || !name_printf(out->name, "%s%s%s", k ? "const " : "", v ? "volatile " : "",
                                 out->name)) {
      return false;
    }
    out->is_const = out->is_const || k;
    return add_sub(d, out);
  }
  case 'T': {
    const struct dtype *t = template_param(d);
    if (!t || !t->is_type) return false;
    *out = *t;
    return add_sub(d, out);
  }
  case 'S': {
    const struct dtype *s = substitution(d);
    if (!s) return false;
    *out = *s;
    if (!out->is_type && *d->p == 'I') /* a substituted template name, given arguments */
      return template_args(d, out->name, NULL, NULL) && class_type(d, out);
    return out->is_type;
  }
  case 'N': return nested_name(d, out, NULL, NULL) && class_type(d, out);
  default:
    if (!source_name(d, out->name)) return false;
    if (*d->p == 'I' && !(add_sub(d, out) && template_args(d, out->name, NULL, NULL))) return false;
    return class_type(d, out);
  }
}

static bool parse_type(struct demangler *d, struct dtype *out) {
  if (d->depth == MAX_DEPTH) return false;
  d->depth++;
  bool ok = read_type(d, out);
  d->depth--;
  return ok;
}

/* The kernel's name; for a template, also its return type, which the ABI mangles (only) for
 * templates, before the parameters. */
static bool function_name(struct demangler *d) {
  struct dtype name;
  memset(&name, 0, sizeof name);
  if (*d->p == 'N') {
    if (!nested_name(d, &name, d->targs, &d->ntargs)) return false;
  } else {
    if (*d->p == 'L') d->p++; /* internal linkage (a static kernel) */
    if (!source_name(d, name.name)) return false;
    if (*d->p == 'I' && !(add_sub(d, &name) && template_args(d, name.name, d->targs, &d->ntargs)))
      return false;
  }
  struct dtype ret;
  return d->ntargs == 0 || parse_type(d, &ret);
}

static void clear_ctypes(struct wl_signature *sig) {
  sig->has_ctypes = false;
  for (int i = 0; i < WL_MAX_PARAMS; i++) {
    struct wl_param *p = &sig->params[i];
    p->ctype = p->pointee = WL_C_UNKNOWN;
    p->pointee_const = false;
    p->ctype_name[0] = '\0';
  }
}

bool wl_demangle_params(const char *mangled, struct wl_signature *sig) {
  clear_ctypes(sig);
  if (!mangled || strncmp(mangled, "_Z", 2) != 0) return false;
  if (sig->nparams < 0 || sig->nparams > WL_MAX_PARAMS) return false;

  struct demangler d;
  memset(&d, 0, sizeof d);
  d.p = mangled + 2;
  if (!function_name(&d) || !*d.p) return false;

  struct dtype params[WL_MAX_PARAMS];
  int n = 0;
  if (!strcmp(d.p, "v")) d.p++; /* k(void): no parameters */
  while (*d.p) {
    if (n == WL_MAX_PARAMS || !parse_type(&d, &params[n]) || params[n].ctype == WL_C_VOID)
      return false;
    n++;
  }
  if (n != sig->nparams) return false;

  for (int i = 0; i < n; i++) {
    struct wl_param *p = &sig->params[i];
    p->ctype = params[i].ctype;
    p->pointee = params[i].pointee;
    p->pointee_const = params[i].pointee_const;
    memcpy(p->ctype_name, params[i].name, NAME_LEN);
  }
  sig->has_ctypes = true;
  return true;
}

/* ------------------------------------------------------------------------------------------ */

const char *wl_ctype_describe(const struct wl_param *p) {
  return p->ctype_name[0] ? p->ctype_name : "?";
}

/* Arrays (and .bN scalars, which PTX sizes alike) are described as .b8[SIZE]. */
const char *wl_ptx_describe(const struct wl_param *p, char *buf, size_t len) {
  static const char letter[] = {
      [WL_PTX_UNSIGNED] = 'u', [WL_PTX_SIGNED] = 's', [WL_PTX_FLOAT] = 'f'};
  if (p->ptx_kind == WL_PTX_BYTES || (p->ptx_kind == WL_PTX_UNTYPED && p->size > 8))
    snprintf(buf, len, ".b8[%u]", p->size);
  else if (p->ptx_kind == WL_PTX_UNTYPED) snprintf(buf, len, ".b%u", p->size * 8);
  else snprintf(buf, len, ".%c%u", letter[p->ptx_kind], p->size * 8);
  return buf;
}
