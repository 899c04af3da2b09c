/* wlrun.json: a JSON codec for Lua (docs/architecture.md, "JSON"). Decoding goes through jansson
 * (json_decode.c), encoding is wlrun's own (json_encode.c, json_double.c). */
#ifndef WL_LJSON_H
#define WL_LJSON_H

#include <lua.h>
#include <stddef.h>

/* The module table: encode, decode, object, array, is_object, is_array. */
int luaopen_wlrun_json(lua_State *L);

/* ---- inside the module ---- */

/* The registry names of the two marks (shared metatables) of json.object and json.array. */
#define WL_JSON_OBJECT_MARK "wlrun.json.object"
#define WL_JSON_ARRAY_MARK "wlrun.json.array"

int wl_json_encode(lua_State *L); /* json.encode(value [, opts]) */
int wl_json_decode(lua_State *L); /* json.decode(text [, {array_nulls = false}]) */

/* The text of a float as json.encode writes it ("null" for NaN and infinities), into OUT of at
 * least WL_JSON_DOUBLE_MAX bytes, NUL-terminated; returns its length. The _slow one follows the
 * rule to the letter (snprintf and strtod); the tests compare both. */
#define WL_JSON_DOUBLE_MAX 32
size_t wl_json_format_double(double x, char *out);
size_t wl_json_format_double_slow(double x, char *out);

#endif
