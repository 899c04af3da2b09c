/* wlrun.json from C: the fast float text against the literal rule (%.15g, %.16g, %.17g and
 * strtod) on millions of doubles, the C locale, and the paths that must free what they hold when
 * Lua runs out of memory in the middle of encode or decode (LeakSanitizer checks these). The
 * behaviour seen from Lua is in tests/spec/json_spec.lua. */
#include "check.h"
#include "ljson.h"

#include <lauxlib.h>
#include <locale.h>
#include <lualib.h>
#include <stdint.h>
#include <stdlib.h>

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next_random(void) { /* xorshift64 */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static double from_bits(uint64_t bits) {
  double x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

static long mismatches;
static void compare_float(double x) {
  char fast[WL_JSON_DOUBLE_MAX], slow[WL_JSON_DOUBLE_MAX];
  wl_json_format_double(x, fast);
  wl_json_format_double_slow(x, slow);
  if (strcmp(fast, slow) != 0 && mismatches++ < 10)
    fprintf(stderr, "%a: fast '%s', literal rule '%s'\n", x, fast, slow);
}

static void test_float_rule(void) {
  long n = getenv("WLRUN_JSON_FLOATS") ? atol(getenv("WLRUN_JSON_FLOATS")) : 300000;
  for (long i = 0; i < n; i++) compare_float(from_bits(next_random())); /* every exponent */
  for (long i = 0; i < n / 4; i++) {
    compare_float((double)(next_random() % 1000000) / 1000.0);        /* short decimals */
    compare_float((double)(next_random() % 100000000) * 1e-9);        /* times in seconds */
    compare_float((double)(int64_t)next_random());                    /* large integers */
    compare_float((double)(next_random() >> 11) / (double)(1 << 20)); /* binary fractions */
    float f = (float)(next_random() % 10000000) * 1e-7f;              /* float32 timings */
    compare_float((double)f * 1e-3);
  }
  for (int e = -1074; e <= 1023; e++) { /* powers of two and their neighbours */
    double p = ldexp(1.0, e);
    compare_float(p);
    compare_float(nextafter(p, 0));
    compare_float(nextafter(p, INFINITY));
  }
  CHECK(mismatches == 0);
}

static const char *format(double x) {
  static char text[WL_JSON_DOUBLE_MAX];
  wl_json_format_double(x, text);
  return text;
}

static void test_float_texts(void) {
  CHECK_STR(format(0.1), "0.1");
  CHECK_STR(format(1.0 / 3), "0.3333333333333333");
  CHECK_STR(format(1e-300), "1e-300");
  CHECK_STR(format(5e-324), "4.94065645841247e-324"); /* %.15g reads back */
  CHECK_STR(format(9007199254740993.0), "9007199254740992.0");
  CHECK_STR(format(-0.0), "-0.0");
  CHECK_STR(format(0.0), "0.0");
  CHECK_STR(format(1.0), "1.0");
  CHECK_STR(format(-2.5), "-2.5");
  CHECK_STR(format(123456789012.0), "123456789012.0");
  CHECK_STR(format(1e300), "1e+300");
  CHECK_STR(format(1e15), "1e+15");
  CHECK_STR(format(123456789012345.0), "123456789012345.0");
  CHECK_STR(format(1e-5), "1e-05");
  CHECK_STR(format(1e-4), "0.0001");
  CHECK_STR(format(1.7976931348623157e308), "1.7976931348623157e+308");
  CHECK_STR(format(2.2250738585072014e-308), "2.2250738585072014e-308");
  CHECK_STR(format(NAN), "null");
  CHECK_STR(format(INFINITY), "null");
  CHECK_STR(format(-INFINITY), "null");
}

/* A locale with a decimal comma, where one is installed: the text must not change. */
static void test_locale(void) {
  static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8",
                                      "nl_NL.UTF-8"};
  const char *found = NULL;
  for (size_t i = 0; !found && i < sizeof names / sizeof *names; i++)
    found = setlocale(LC_NUMERIC, names[i]);
  if (!found) {
    printf("test_json: no locale with a decimal comma installed; the locale check is skipped\n");
    return;
  }
  CHECK_STR(format(0.1), "0.1");
  CHECK_STR(format(1024.0), "1024.0"); /* a power of two: the snprintf path */
  CHECK_STR(format(0.5), "0.5");
  CHECK_STR(format(5e-324), "4.94065645841247e-324");
  setlocale(LC_NUMERIC, "C");
}

/* ---- through Lua ---- */

struct budget {
  size_t used, limit;
};

static void *limited_alloc(void *ud, void *p, size_t old, size_t size) {
  struct budget *b = ud;
  size_t before = p ? old : 0;
  if (size == 0) {
    free(p);
    b->used -= before;
    return NULL;
  }
  if (size > before && b->used + (size - before) > b->limit) return NULL;
  void *q = realloc(p, size);
  if (q) b->used = b->used - before + size;
  return q;
}

static lua_State *new_state(struct budget *b) {
  lua_State *L = lua_newstate(limited_alloc, b);
  if (!L) return NULL;
  luaL_openlibs(L);
  luaL_requiref(L, "wlrun.json", luaopen_wlrun_json, 1);
  lua_pop(L, 1);
  return L;
}

/* The text of the value at idx: a string, or the message of an error raised with a kind
 * (wl_raise: {kind =, message =}); NULL for anything else. */
static const char *text_at(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) == LUA_TTABLE) {
    lua_getfield(L, idx, "message");
    lua_replace(L, idx);
  }
  return lua_tostring(L, idx);
}

/* Runs CODE; its result (a string, or "true"), or the error message, into OUT. */
static const char *run(lua_State *L, const char *code, char *out, size_t size) {
  int status = luaL_dostring(L, code); /* its first result at 1 */
  const char *r = lua_isboolean(L, 1) ? (lua_toboolean(L, 1) ? "true" : "false") : text_at(L, 1);
  snprintf(out, size, "%s%s", status == LUA_OK ? "" : "error: ", r ? r : "(nil)");
  lua_settop(L, 0);
  return out;
}

static const char *const make_document =
    "local json = require 'wlrun.json'\n"
    "local c = {}\n"
    "for i = 1, 40 do\n"
    "  local s = {}\n"
    "  for j = 1, 50 do s[j] = i / j end\n"
    "  c[i] = {index = i, params = {n = i, name = 'x' .. i}, samples = s, empty = {}, warnings = "
    "json.array()}\n"
    "end\n"
    "doc = {configurations = c, scenario = {name = 'mem', axes = {'n'}}}\n"
    "text = json.encode(doc, {indent = true})\n";

static void test_lua(void) {
  struct budget b = {0, SIZE_MAX};
  lua_State *L = new_state(&b);
  CHECK(L != NULL);
  if (!L) return;
  char out[512];
  CHECK_STR(
      run(L, "return require('wlrun.json').encode({n = 3, m = {1, 2.0, 'x'}})", out, sizeof out),
      "{\"m\":[1,2.0,\"x\"],\"n\":3}");
  CHECK_STR(run(L,
                "local v = require('wlrun.json').decode('{\"a\": [1, 2.5]}') return "
                "math.type(v.a[1]) .. math.type(v.a[2])",
                out, sizeof out),
            "integerfloat");
  CHECK_STR(
      run(L, "return select(2, require('wlrun.json').decode('{\"a\": 1,}'))", out, sizeof out),
      "invalid JSON at line 1, column 9: string or '}' expected near '}'");
  /* decode's depth limit is encode's (1000 levels: what is read can be written again); jansson's
   * own */
  CHECK_STR(run(L,
                "local v = require('wlrun.json').decode(('['):rep(1000) .. (']'):rep(1000))"
                " for i = 1, 999 do v = v[1] end return getmetatable(v) ~= nil and next(v) == nil",
                out, sizeof out),
            "true");
  CHECK_STR(
      run(L, "return select(2, require('wlrun.json').decode(('['):rep(1001) .. (']'):rep(1001)))",
          out, sizeof out),
      "nesting deeper than 1000 levels");
  CHECK_CONTAINS(
      run(L, "return select(2, require('wlrun.json').decode(('['):rep(2049) .. (']'):rep(2049)))",
          out, sizeof out),
      "maximum parsing depth reached");
  CHECK_STR(run(L,
                "local t = {} local c = t for i = 1, 999 do c[1] = {} c = c[1] end"
                " return #require('wlrun.json').encode(t) == 2000",
                out, sizeof out),
            "true");
  CHECK_CONTAINS(run(L,
                     "local t = {} local c = t for i = 1, 1000 do c[1] = {} c = c[1] end"
                     " return require('wlrun.json').encode(t)",
                     out, sizeof out),
                 "json.encode: nesting deeper than 1000 levels at [1][1][1][1][1](...)");
  lua_close(L);
}

/* Out of memory at every point of a decode and of an encode: a clean Lua error, nothing leaked
 * (the jansson tree and the encoder's buffers are freed by their to-be-closed slots). */
static void test_out_of_memory(void) {
  int failures = 0, successes = 0;
  for (size_t extra = 0; extra < 400000; extra += extra < 20000 ? 1500 : 15000) {
    struct budget b = {0, SIZE_MAX};
    lua_State *L = new_state(&b);
    if (!L) continue;
    if (luaL_dostring(L, make_document) != LUA_OK) {
      lua_close(L);
      continue;
    }
    lua_gc(L, LUA_GCCOLLECT);
    b.limit = b.used + extra;
    int status = luaL_dostring(L, "local json = require 'wlrun.json'\n"
                                  "local v = assert(json.decode(text))\n"
                                  "assert(json.encode(v, {indent = true}) == text)\n");
    if (status == LUA_OK) successes++;
    else if (status == LUA_ERRMEM || strstr(text_at(L, -1) ? text_at(L, -1) : "", "memory"))
      failures++;
    else {
      fprintf(stderr, "unexpected error: %s\n", text_at(L, -1));
      CHECK(0);
    }
    b.limit = SIZE_MAX;
    lua_close(L);
  }
  CHECK(failures > 5);
  CHECK(successes > 0);
}

int main(void) {
  test_float_texts();
  test_float_rule();
  test_locale();
  test_lua();
  test_out_of_memory();
  return check_report("test_json");
}
