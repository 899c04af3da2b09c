/* json.encode: Lua values to JSON text (docs/architecture.md, "JSON"). One pass over the value,
 * writing into a growing buffer; tables are read raw (no metamethods), objects' keys are sorted
 * so that the text does not depend on the hash order.
 *
 * The buffer is not a luaL_Buffer: that one must sit at the top of the stack whenever it grows,
 * and the walk keeps the tables and lua_next's keys there. It is malloc'ed, owned by a userdata
 * that is also a to-be-closed slot, so that an error (raised with the path in the document)
 * frees it at once. */
#include "json_encode.h"
#include "laux.h"
#include "ljson.h"
#include "lua_guard.h"
#include "wl_exit.h"

#include <lauxlib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int encoder_close(lua_State *L) {
  struct wl_json_encoder *e = lua_touserdata(L, 1);
  free(e->out);
  free(e->keys);
  free(e->path);
  e->out = NULL;
  e->keys = NULL;
  e->path = NULL;
  return 0;
}

/* ---- errors: "json.encode: ... at a.b[3].c" ---- */

static int is_identifier(const char *s, size_t len) {
  if (len == 0 || len > 64 || !(s[0] == '_' || ((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z')))
    return 0;
  for (size_t i = 1; i < len; i++) {
    char c = s[i];
    if (!(c == '_' || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'))) return 0;
  }
  return 1;
}

static void add_member(luaL_Buffer *b, const struct wl_json_level *l, int first) {
  if (l->in_array || !l->member.s) {
    lua_pushfstring(b->L, "[%I]", (LUAI_UACINT)l->member.i);
    luaL_addvalue(b);
  } else if (is_identifier(l->member.s, l->member.len)) {
    if (!first) luaL_addchar(b, '.');
    luaL_addlstring(b, l->member.s, l->member.len);
  } else {
    luaL_addstring(b, "[\"");
    luaL_addlstring(b, l->member.s, l->member.len > 40 ? 40 : l->member.len);
    luaL_addstring(b, l->member.len > 40 ? "...\"]" : "\"]");
  }
}

/* Pushes the path made of the members of the first LEVELS open tables; long ones are cut in
 * the middle. */
static const char *push_path(struct wl_json_encoder *e, int levels) {
  lua_State *L = e->L;
  if (levels <= 0) return lua_pushliteral(L, "the top level");
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int d = 1; d <= levels; d++) {
    if (levels > 16 && d == 6) {
      luaL_addstring(&b, "(...)");
      d = levels - 8;
    }
    add_member(&b, &e->path[d], d == 1);
  }
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}


/* ---- the output buffer ---- */

static void grow(struct wl_json_encoder *e, size_t need) {
  size_t cap = e->cap ? e->cap : 4096;
  while (cap - e->n < need) {
    if (cap > SIZE_MAX / 2) wl_raise(e->L, WL_EXIT_SCRIPT, "json.encode: the text is too large");
    cap *= 2;
  }
  char *p = realloc(e->out, cap);
  if (!p)
    wl_raise(e->L, WL_EXIT_SCRIPT, "json.encode: not enough memory for %zu bytes of text", cap);
  e->out = p;
  e->cap = cap;
}

static inline void reserve(struct wl_json_encoder *e, size_t need) {
  if (e->cap - e->n < need) grow(e, need);
}

static void put(struct wl_json_encoder *e, const char *s, size_t len) {
  reserve(e, len);
  memcpy(e->out + e->n, s, len);
  e->n += len;
}

static void put_char(struct wl_json_encoder *e, char c) {
  reserve(e, 1);
  e->out[e->n++] = c;
}

static void put_newline(struct wl_json_encoder *e, int level) {
  reserve(e, 1 + 2 * (size_t)level);
  e->out[e->n++] = '\n';
  memset(e->out + e->n, ' ', 2 * (size_t)level);
  e->n += 2 * (size_t)level;
}

static void put_integer(struct wl_json_encoder *e, lua_Integer v) {
  char text[24], *p = text + sizeof text;
  lua_Unsigned u = v < 0 ? 0u - (lua_Unsigned)v : (lua_Unsigned)v;
  do {
    *--p = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0) *--p = '-';
  put(e, p, (size_t)(text + sizeof text - p));
}

static void put_float(struct wl_json_encoder *e, double v) {
  reserve(e, WL_JSON_DOUBLE_MAX);
  e->n += wl_json_format_double(v, e->out + e->n);
}

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0 (Unicode's table 3-7). */
static size_t utf8_length(const unsigned char *s, size_t left) {
  unsigned char c = s[0];
  size_t n;
  unsigned char lo = 0x80, hi = 0xbf; /* the range of the second byte */
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f; /* not a surrogate */
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f; /* not beyond U+10FFFF */
  } else return 0;
  if (left < n || s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < n; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  return n;
}

/* Escaped; every byte that is not part of valid UTF-8 becomes \u00XX (its Latin-1 reading). */
static void put_string(struct wl_json_encoder *e, const char *str, size_t len) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *s = (const unsigned char *)str;
  put_char(e, '"');
  size_t run = 0; /* bytes of s before i still to copy */
  for (size_t i = 0; i < len;) {
    unsigned char c = s[i];
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      i++;
      continue;
    }
    size_t n = c >= 0x80 ? utf8_length(s + i, len - i) : 0;
    if (n) {
      i += n;
      continue;
    }
    put(e, str + run, i - run);
    static const char named[] = "\"\"\\\\\nn\tt\rr\bb\ff"; /* byte, then its letter */
    const char *m = c < 0x80 ? memchr(named, c, sizeof named - 1) : NULL;
    char esc[6] = {'\\', m ? m[1] : 'u', '0', '0', hex[c >> 4], hex[c & 15]};
    size_t esc_len = m ? 2 : 6;
    put(e, esc, esc_len);
    run = ++i;
  }
  put(e, str + run, len - run);
  put_char(e, '"');
}

/* ---- tables ---- */

static void encode_value(struct wl_json_encoder *e);


static int key_compare(const void *pa, const void *pb) {
  const struct wl_json_key *a = pa, *b = pb;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  if (!a->s || !b->s) {
    if (a->s || b->s) return a->s ? 1 : -1; /* integers first */
    return a->i < b->i ? -1 : a->i > b->i;
  }
  int c = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);
  return c ? c : (a->len > b->len) - (a->len < b->len);
}

static void push_key(struct wl_json_encoder *e, struct wl_json_key k) {
  if (e->nkeys == e->keys_cap) {
    size_t cap = e->keys_cap ? 2 * e->keys_cap : 256;
    struct wl_json_key *p = cap <= SIZE_MAX / sizeof *p ? realloc(e->keys, cap * sizeof *p) : NULL;
    if (!p)
      wl_raise(e->L, WL_EXIT_SCRIPT, "json.encode: not enough memory for the keys of a table");
    e->keys = p;
    e->keys_cap = cap;
  }
  e->keys[e->nkeys++] = k;
}

/* The canonical decimal text of an integer, as integer keys are written */
static int integer_text(const char *s, size_t len, lua_Integer *out) {
  size_t i = s[0] == '-';
  if (len == i || len > 20 || (s[i] == '0' && len != 1)) return 0;
  lua_Unsigned v = 0, limit = i ? (lua_Unsigned)LUA_MAXINTEGER + 1 : (lua_Unsigned)LUA_MAXINTEGER;
  for (size_t j = i; j < len; j++) {
    unsigned d = (unsigned)(s[j] - '0');
    if (d > 9 || v > (limit - d) / 10) return 0;
    v = v * 10 + d;
  }
  *out = i ? (lua_Integer)(0u - v) : (lua_Integer)v;
  return 1;
}

/* Keys 1 and "1" would both be written "1"; the integer keys are together after sorting. */
static void check_collision(struct wl_json_encoder *e, size_t base, size_t count) {
  size_t lo = base, hi;
  while (lo < base + count && e->keys[lo].s) lo++;
  for (hi = lo; hi < base + count && !e->keys[hi].s; hi++) {}
  if (lo == hi || hi - lo == count) return;
  for (size_t j = base; j < base + count; j++) {
    lua_Integer v;
    if (!e->keys[j].s || !integer_text(e->keys[j].s, e->keys[j].len, &v)) continue;
    size_t a = lo, b = hi;
    while (a < b) {
      size_t m = a + (b - a) / 2;
      if (e->keys[m].i < v) a = m + 1;
      else b = m;
    }
    if (a < hi && e->keys[a].i == v)
      wl_raise(e->L, WL_EXIT_SCRIPT,
               "json.encode: the keys %lld and \"%lld\" in %s would both be written as \"%lld\"",
               (long long)v, (long long)v, push_path(e, e->depth - 1), (long long)v);
  }
}

static struct wl_json_names ranks_for(struct wl_json_encoder *e, struct wl_json_name owner) {
  for (size_t i = 0; owner.s && i < e->norders; i++)
    if (wl_json_same(e->orders[i].key, owner.s, owner.len)) return e->orders[i].order;
  return e->order;
}

/* The strings of the list at idx (a table's own __jsonorder) as ranks, in a userdata pushed to
 * anchor them while the object is written. */
static struct wl_json_names own_ranks(lua_State *L, int idx) {
  size_t n = lua_rawlen(L, idx), got = 0;
  struct wl_json_name *v = lua_newuserdatauv(L, (n ? n : 1) * sizeof *v, 0);
  for (size_t i = 1; i <= n; i++) {
    if (lua_rawgeti(L, idx, (lua_Integer)i) == LUA_TSTRING)
      v[got].s = lua_tolstring(L, -1, &v[got].len), got++;
    lua_pop(L, 1); /* the list keeps the string alive */
  }
  return (struct wl_json_names){v, got};
}

/* order_idx: the stack index of the table's own key order (its metatable's __jsonorder), or 0 */
static void write_object(struct wl_json_encoder *e, int t, int order_idx) {
  lua_State *L = e->L;
  struct wl_json_level *l = &e->path[e->depth];
  struct wl_json_names ranks = order_idx ? own_ranks(L, order_idx) : ranks_for(e, l->owner);
  size_t base = e->nkeys, count = 0;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    struct wl_json_key k = {NULL, 0, 0, NOT_LISTED};
    if (lua_type(L, -2) == LUA_TSTRING) {
      k.s = lua_tolstring(L, -2, &k.len);
      for (size_t r = 0; r < ranks.n && k.rank == NOT_LISTED; r++)
        if (wl_json_same(ranks.v[r], k.s, k.len)) k.rank = r;
    } else if (lua_isinteger(L, -2)) {
      k.i = lua_tointeger(L, -2);
    } else {
      const char *type = wl_json_type_name(L, -2);
      wl_raise(L, WL_EXIT_SCRIPT, "json.encode: a key of type %s in %s", type,
               push_path(e, e->depth - 1));
    }
    push_key(e, k);
    count++;
    lua_pop(L, 1);
  }
  qsort(e->keys + base, count, sizeof *e->keys, key_compare);
  check_collision(e, base, count);
  put_char(e, '{');
  for (size_t j = 0; j < count; j++) {
    struct wl_json_key k = e->keys[base + j]; /* a copy: the array moves when children add keys */
    if (j) put_char(e, ',');
    if (e->indent) put_newline(e, e->depth);
    if (k.s) {
      put_string(e, k.s, k.len);
      lua_pushlstring(L, k.s, k.len);
    } else {
      put_char(e, '"');
      put_integer(e, k.i);
      put_char(e, '"');
      lua_pushinteger(L, k.i);
    }
    if (e->indent) put(e, ": ", 2);
    else put_char(e, ':');
    lua_rawget(L, t);
    l->member = k;
    encode_value(e);
    lua_pop(L, 1);
  }
  if (e->indent) put_newline(e, e->depth - 1);
  put_char(e, '}');
  e->nkeys = base;
  if (order_idx) lua_pop(L, 1); /* the ranks */
}

/* The table as an array if t[1..count] are all there, count being its number of keys; else
 * nothing is written and 0 returned. */
static int write_array(struct wl_json_encoder *e, int t, lua_Integer count) {
  lua_State *L = e->L;
  struct wl_json_level *l = &e->path[e->depth];
  size_t start = e->n;
  int lines = 0; /* indented, one element a line, unless all are scalars */
  for (lua_Integer i = 1; e->indent && i <= count && !lines; i++) {
    int type = lua_rawgeti(L, t, i);
    lua_pop(L, 1);
    lines = type != LUA_TNUMBER && type != LUA_TSTRING && type != LUA_TBOOLEAN;
  }
  l->in_array = 1;
  put_char(e, '[');
  for (lua_Integer i = 1; i <= count; i++) {
    if (i > 1) put_char(e, ',');
    if (lines) put_newline(e, e->depth);
    l->member.i = i;
    int type = lua_rawgeti(L, t, i);
    if (type == LUA_TNUMBER && !lua_isinteger(L, -1))
      put_float(e, lua_tonumber(L, -1)); /* samples */
    else if (type != LUA_TNIL) encode_value(e);
    lua_pop(L, 1);
    if (type == LUA_TNIL) { /* a hole: other keys make up the count */
      e->n = start;
      l->in_array = 0;
      return 0;
    }
  }
  if (lines) put_newline(e, e->depth - 1);
  put_char(e, ']');
  return 1;
}

/* The table on top of the stack. */
static void encode_table(struct wl_json_encoder *e) {
  lua_State *L = e->L;
  int t = lua_gettop(L);
  const void *p = lua_topointer(L, t);
  for (int d = 1; d <= e->depth; d++)
    if (e->path[d].table == p)
      wl_raise(L, WL_EXIT_SCRIPT, "json.encode: a reference cycle at %s", push_path(e, e->depth));
  if (e->depth >= MAX_DEPTH)
    wl_raise(L, WL_EXIT_SCRIPT, "json.encode: nesting deeper than %d levels at %s", MAX_DEPTH,
             push_path(e, e->depth));
  wl_check_stack(L, 8, "json.encode: nesting too deep");
  struct wl_json_level *parent = &e->path[e->depth];
  struct wl_json_level *l = &e->path[++e->depth];
  l->table = p;
  l->owner = (struct wl_json_name){NULL, 0};
  if (e->depth > 1) {
    if (parent->member.s && !parent->in_array)
      l->owner = (struct wl_json_name){parent->member.s, parent->member.len};
    else l->owner = parent->owner;
  }
  l->member = (struct wl_json_key){NULL, 0, 0, 0};
  l->in_array = 0;
  size_t count = 0;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    count++;
    lua_pop(L, 1);
  }
  int mark = 0, order_idx = 0;
  if (lua_getmetatable(L, t)) {
    if (lua_rawequal(L, -1, e->mark_object)) mark = 'o';
    else if (lua_rawequal(L, -1, e->mark_array)) mark = 'a';
    else { /* a metatable of its own may say the same with __jsontype, and give __jsonorder */
      lua_pushliteral(L, "__jsontype");
      if (lua_rawget(L, -2) == LUA_TSTRING)
        mark = strcmp(lua_tostring(L, -1), "object") == 0  ? 'o'
               : strcmp(lua_tostring(L, -1), "array") == 0 ? 'a'
                                                           : 0;
      lua_pop(L, 1);
      lua_pushliteral(L, "__jsonorder");
      if (lua_rawget(L, -2) == LUA_TTABLE) {
        lua_replace(L, -2);
        order_idx = lua_gettop(L);
      } else {
        lua_pop(L, 1);
      }
    }
    if (!order_idx) lua_pop(L, 1);
  }
  if (count == 0) {
    int object = mark == 'o' || (mark != 'a' && wl_json_listed(e->objects, l->owner));
    put(e, object ? "{}" : "[]", 2);
  } else if (mark == 'o' || count != lua_rawlen(L, t) || !write_array(e, t, (lua_Integer)count)) {
    write_object(e, t, order_idx);
  }
  if (order_idx) lua_pop(L, 1);
  e->depth--;
}

static void encode_value(struct wl_json_encoder *e) {
  lua_State *L = e->L;
  switch (lua_type(L, -1)) {
  case LUA_TNIL: put(e, "null", 4); break;
  case LUA_TBOOLEAN:
    put(e, lua_toboolean(L, -1) ? "true" : "false", lua_toboolean(L, -1) ? 4 : 5);
    break;
  case LUA_TNUMBER:
    if (lua_isinteger(L, -1)) put_integer(e, lua_tointeger(L, -1));
    else put_float(e, lua_tonumber(L, -1));
    break;
  case LUA_TSTRING: {
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    put_string(e, s, len);
    break;
  }
  case LUA_TTABLE: encode_table(e); break;
  default: {
    const char *type = wl_json_type_name(L, -1);
    wl_raise(L, WL_EXIT_SCRIPT, "json.encode: a %s at %s cannot be written as JSON", type,
             push_path(e, e->depth));
  }
  }
}

int wl_json_encode(lua_State *L) {
  wl_check_any(L, 1);
  if (!lua_isnoneornil(L, 2)) wl_check_type(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  struct wl_json_encoder *e = wl_guard_new(L, sizeof *e, "wlrun.json.encoder", encoder_close);
  e->L = L;
  lua_toclose(L, 3);
  e->path = malloc((MAX_DEPTH + 1) * sizeof *e->path);
  if (!e->path) return wl_raise(L, WL_EXIT_SCRIPT, "json.encode: not enough memory");
  e->path[0] = (struct wl_json_level){NULL, {NULL, 0}, {NULL, 0, 0, 0}, 0};
  if (lua_istable(L, 2)) wl_json_read_options(L, e, 2);
  luaL_getmetatable(L, WL_JSON_OBJECT_MARK);
  e->mark_object = lua_gettop(L);
  luaL_getmetatable(L, WL_JSON_ARRAY_MARK);
  e->mark_array = lua_gettop(L);
  lua_pushvalue(L, 1);
  encode_value(e);
  lua_pushlstring(L, e->out ? e->out : "", e->n);
  lua_closeslot(L, 3); /* frees the buffer now */
  return 1;
}
