/* json.decode: JSON text to Lua values through jansson (docs/architecture.md, "JSON"). jansson
 * parses into its tree (refusing duplicate keys, trailing data, invalid UTF-8, lone surrogates,
 * integers beyond 64 bits), then the tree becomes Lua values. The tree is owned by a userdata that
 * is also a to-be-closed slot, so that it is freed on every path, a memory error in Lua included.
 *
 * JSON null becomes nil: an object's key is absent, an array gets a hole (its length is then
 * unreliable), or, with opts.array_nulls = false, the text is refused, naming where the first
 * null of an array is (a strict reader's choice: Lua cannot hold it in place). A table that is
 * empty once built carries the mark of what it was (json.object or json.array), so that it is
 * written back the same way; others carry no metatable. */
#include "json_encode.h" /* MAX_DEPTH: what json.encode writes, json.decode reads */
#include "laux.h"
#include "ljson.h"
#include "lua_guard.h"
#include "wl_exit.h"

#include <jansson.h>
#include <lauxlib.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

struct tree {
  json_t *root;
};

static int tree_close(lua_State *L) {
  struct tree *t = lua_touserdata(L, 1);
  if (t->root) json_decref(t->root);
  t->root = NULL;
  return 0;
}

static void set_mark(lua_State *L, const char *mark) { luaL_setmetatable(L, mark); }

/* Pushes the value of v (nil for null). jansson limits the depth to 2048, hence the recursion. */
static void push_value(lua_State *L, json_t *v) {
  wl_check_stack(L, 4, "json.decode: nesting too deep");
  switch (json_typeof(v)) {
  case JSON_OBJECT: {
    size_t size = json_object_size(v);
    lua_createtable(L, 0, size > INT_MAX ? INT_MAX : (int)size);
    const char *key;
    size_t key_len;
    json_t *value;
    int empty = 1;
    json_object_keylen_foreach(v, key, key_len, value) {
      if (json_is_null(value)) continue;
      lua_pushlstring(L, key, key_len);
      push_value(L, value);
      lua_rawset(L, -3);
      empty = 0;
    }
    if (empty) set_mark(L, WL_JSON_OBJECT_MARK);
    break;
  }
  case JSON_ARRAY: {
    size_t size = json_array_size(v);
    lua_createtable(L, size > INT_MAX ? INT_MAX : (int)size, 0);
    int empty = 1;
    for (size_t i = 0; i < size; i++) {
      json_t *e = json_array_get(v, i);
      if (!e || json_is_null(e)) continue;
      push_value(L, e);
      lua_rawseti(L, -2, (lua_Integer)i + 1);
      empty = 0;
    }
    if (empty) set_mark(L, WL_JSON_ARRAY_MARK);
    break;
  }
  case JSON_STRING: lua_pushlstring(L, json_string_value(v), json_string_length(v)); break;
  case JSON_INTEGER: lua_pushinteger(L, (lua_Integer)json_integer_value(v)); break;
  case JSON_REAL: lua_pushnumber(L, (lua_Number)json_real_value(v)); break;
  case JSON_TRUE: lua_pushboolean(L, 1); break;
  case JSON_FALSE: lua_pushboolean(L, 0); break;
  case JSON_NULL:
  default: lua_pushnil(L); break;
  }
}

/* The path of the first null held by an array in v ("configurations[3].samples[2]") into
 * path[len..]; returns 1 when there is one. The path is cut short past its buffer's end. */
#define PATH_MAX_LEN 400
static int find_array_null(const json_t *v, char *path, size_t len) {
  size_t n = 0;
  if (json_is_array(v)) {
    for (size_t i = 0; i < json_array_size(v); i++) {
      const json_t *e = json_array_get(v, i);
      n = 0;
      if (len < PATH_MAX_LEN)
        n = (size_t)snprintf(path + len, PATH_MAX_LEN + 1 - len, "[%zu]", i + 1);
      if (len + n > PATH_MAX_LEN) n = PATH_MAX_LEN - len;
      if (json_is_null(e) || find_array_null(e, path, len + n)) return 1;
    }
  } else if (json_is_object(v)) {
    const char *key;
    size_t key_len;
    const json_t *e;
    json_object_keylen_foreach((json_t *)v, key, key_len, e) {
      if (!json_is_array(e) && !json_is_object(e)) continue;
      n = 0;
      if (len < PATH_MAX_LEN)
        n = (size_t)snprintf(path + len, PATH_MAX_LEN + 1 - len, "%s%.*s", len ? "." : "",
                             (int)(key_len > 200 ? 200 : key_len), key);
      if (len + n > PATH_MAX_LEN) n = PATH_MAX_LEN - len;
      if (find_array_null(e, path, len + n)) return 1;
    }
  }
  path[len] = '\0';
  return 0;
}

/* nil, message, line, column, position (1-based bytes) */
static int decode_error(lua_State *L, const json_error_t *err, size_t len) {
  int line = err->line > 0 ? err->line : 1, column = err->column > 0 ? err->column : 1;
  lua_Integer position = err->position > 0 ? (lua_Integer)err->position : 1;
  if ((size_t)position > len + 1) position = (lua_Integer)len + 1;
  const char *extra = "";
  if (strstr(err->text, "too big"))
    extra = " (an integer beyond 64 bits: write it with a fraction or an exponent to read it as a "
            "float)";
  lua_pushnil(L);
  lua_pushfstring(L, "invalid JSON at line %d, column %d: %s%s", line, column, err->text, extra);
  lua_pushinteger(L, line);
  lua_pushinteger(L, column);
  lua_pushinteger(L, position);
  return 5;
}

/* opts.array_nulls: true (the default) or false */
static int array_nulls_allowed(lua_State *L) {
  if (lua_isnoneornil(L, 2)) return 1;
  wl_check_type(L, 2, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, 2)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING || strcmp(lua_tostring(L, -1), "array_nulls") != 0)
      return wl_raise(L, WL_EXIT_SCRIPT, "json.decode: unknown option '%s' (options: array_nulls)",
                      luaL_tolstring(L, -1, NULL));
  }
  lua_getfield(L, 2, "array_nulls");
  if (!lua_isnil(L, -1) && !lua_isboolean(L, -1))
    return wl_raise(L, WL_EXIT_SCRIPT,
                    "json.decode: option 'array_nulls' must be a boolean, not a %s",
                    luaL_typename(L, -1));
  int allowed = lua_isnil(L, -1) || lua_toboolean(L, -1);
  lua_pop(L, 1);
  return allowed;
}

/* whether v nests more than levels deep (a scalar: 0 levels; [] and {}: 1) */
static int deeper_than(json_t *v, int levels) {
  if (!json_is_object(v) && !json_is_array(v)) return 0;
  if (levels <= 0) return 1;
  if (json_is_object(v)) {
    const char *key;
    json_t *value;
    json_object_foreach(v, key, value) if (deeper_than(value, levels - 1)) return 1;
  } else {
    for (size_t i = 0; i < json_array_size(v); i++)
      if (deeper_than(json_array_get(v, i), levels - 1)) return 1;
  }
  return 0;
}

int wl_json_decode(lua_State *L) {
  size_t len;
  const char *text = wl_check_lstring(L, 1, &len);
  int nulls_allowed = array_nulls_allowed(L);
  lua_settop(L, 1);
  if (len == 0) {
    lua_pushnil(L);
    lua_pushliteral(L, "invalid JSON at line 1, column 1: the text is empty");
    lua_pushinteger(L, 1);
    lua_pushinteger(L, 1);
    lua_pushinteger(L, 1);
    return 5;
  }
  struct tree *t = wl_guard_new(L, sizeof *t, "wlrun.json.tree", tree_close);
  lua_toclose(L, 2);
  json_error_t err;
  t->root = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
  if (!t->root && json_error_code(&err) == json_error_out_of_memory)
    return wl_raise(L, WL_EXIT_SCRIPT, "json.decode: not enough memory for a document of %zu bytes",
                    len);
  if (!t->root) return decode_error(L, &err, len);
  if (deeper_than(t->root, MAX_DEPTH)) { /* what json.encode could not write back */
    lua_pushnil(L);
    lua_pushfstring(L, "nesting deeper than %d levels", MAX_DEPTH);
    return 2;
  }
  char path[PATH_MAX_LEN + 1] = "";
  if (!nulls_allowed && find_array_null(t->root, path, 0)) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s is null (arrays may not hold null here)", path[0] ? path : "an element");
    return 2;
  }
  push_value(L, t->root);
  lua_closeslot(L, 2); /* frees the tree now */
  return 1;
}
