/* Inside json.encode: the encoder's state, shared by the walk (json_encode.c) and the reading
 * of its options (json_encode_options.c). */
#ifndef WL_JSON_ENCODE_H
#define WL_JSON_ENCODE_H

#include <lua.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_DEPTH 1000
#define NOT_LISTED SIZE_MAX

struct wl_json_name { /* a string of an option's list, anchored by the options table */
  const char *s;
  size_t len;
};

struct wl_json_names {
  const struct wl_json_name *v;
  size_t n;
};

struct wl_json_orders_entry { /* opts.orders[key] */
  struct wl_json_name key;
  struct wl_json_names order;
};

struct wl_json_key { /* a key of the object being written: s (string) or i (integer) */
  const char *s;
  size_t len;
  lua_Integer i;
  size_t rank;
};

struct wl_json_level { /* an open table, and the key of the member being written in it */
  const void *table;
  struct wl_json_name owner; /* the key the table sits under (an array's key for its elements) */
  struct wl_json_key member;
  int in_array;
};

struct wl_json_encoder {
  lua_State *L;
  char *out;
  size_t n, cap;
  struct wl_json_key *keys; /* a stack: each open object's keys */
  size_t nkeys, keys_cap;
  int depth, indent, mark_object, mark_array;
  struct wl_json_names order, objects, arrays;
  const struct wl_json_orders_entry *orders;
  size_t norders;
  struct wl_json_level *path; /* MAX_DEPTH + 1 levels; path[0] stands for the outside */
};

/* "integer" or "float" for numbers, else the type's name */
const char *wl_json_type_name(lua_State *L, int idx);
/* key equals the name a */
int wl_json_same(struct wl_json_name a, const char *s, size_t len);
/* key is one of list */
int wl_json_listed(struct wl_json_names list, struct wl_json_name key);

/* Reads the options table at opts into e; what the lists need stays on the stack. */
void wl_json_read_options(lua_State *L, struct wl_json_encoder *e, int opts);

#endif
