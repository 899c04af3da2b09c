/* NVTX for Lua, within the module (nvtx.c: the account of ranges, colours, kinds, categories,
 * scopes; nvtx_api.c: wl.nvtx; nvtx_auto.c: the automatic ranges). docs/nvtx.md. */
#ifndef WL_NVTX_H
#define WL_NVTX_H

#include <nvtx3/nvToolsExt.h>

#include <lua.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DOMAIN_MT "wlrun.nvtx.domain"
#define STRING_MT "wlrun.nvtx.string"
#define SCOPE_MT "wlrun.nvtx.scope"
#define SENTINEL_MT "wlrun.nvtx.sentinel"
#define SENTINEL_KEY \
  "wlrun.nvtx.the_sentinel" /* registry: the sentinel (its metatable is at SENTINEL_MT) */
#define DOMAINS_KEY \
  "wlrun.nvtx.domains" /* registry: name -> domain; [i] -> domain, in creation order */
#define AUTO_DOMAIN "wlrun"

/* the user values of a domain */
enum { UV_NAME = 1, UV_STACK, UV_RANGES, UV_CATEGORIES, UV_STRINGS, DOMAIN_NUV = UV_STRINGS };

struct wl_nvtx_domain {
  nvtxDomainHandle_t h; /* NULL for the default domain (and for every domain without a tool) */
  bool is_default, is_auto;
  int depth;              /* ranges pushed and not popped; their names are in UV_STACK */
  uint32_t next_category; /* the next id that category(name) hands out */
  uint32_t named_kinds;   /* automatic domain: a bit per kind whose category has been named */
};

/* a registered string; user value: its text */
struct wl_nvtx_rstring {
  nvtxStringHandle_t h;
  const struct wl_nvtx_domain *dom;
};

/* an open range that closes itself: wl.nvtx.range, the automatic ranges; user values: the
 * domain and the range's name */
struct wl_nvtx_scope {
  int depth_before;
  bool closed;
  const char *what;
};

/* colours by name; the kinds of automatic range (the category of kind i is i + 1 in the
 * domain "wlrun") */
struct wl_nvtx_color {
  const char *name;
  uint32_t rgb;
};
struct wl_nvtx_kind {
  const char *kind, *color;
};
extern const struct wl_nvtx_color wl_nvtx_colors[];
extern const size_t wl_nvtx_ncolors;
extern const struct wl_nvtx_kind wl_nvtx_kinds[];
extern const int wl_nvtx_nkinds;
uint32_t wl_nvtx_color_rgb(const char *name); /* 0 for an unknown name (and black) */
int wl_nvtx_kind_index(const char *kind);     /* -1 for an unknown kind */

void wl_nvtx_attr_init(nvtxEventAttributes_t *a); /* event attributes, empty */

/* ---- domains (the domain is at stack index didx) ---- */

/* "wl.nvtx.push" or "wl.nvtx domain 'x': push", for messages (pushed) */
const char *wl_nvtx_fname(lua_State *L, int didx, const char *fn);
/* "the default domain" or "domain 'x'" (pushed) */
const char *wl_nvtx_domain_label(lua_State *L, int didx);
/* pushes the domain called name (NULL: the default one), creating it on first use */
struct wl_nvtx_domain *wl_nvtx_push_domain(lua_State *L, const char *name);
void wl_nvtx_name_category(lua_State *L, int didx, uint32_t id, const char *name);
/* the id of the category called name in the domain; a new one is named on first use */
uint32_t wl_nvtx_category_by_name(lua_State *L, int didx, const char *name);

/* ---- ranges ---- */

void wl_nvtx_range_push(const struct wl_nvtx_domain *d, const nvtxEventAttributes_t *a);
/* records the push of the name at tidx; returns the new depth */
int wl_nvtx_track_push(lua_State *L, int didx, int tidx);
/* pops the innermost range of the domain (there is one), leaving its name on the stack */
void wl_nvtx_pop_one(lua_State *L, int didx);
/* ends the started range whose {name, id} table is at info */
void wl_nvtx_end_range(lua_State *L, const struct wl_nvtx_domain *d, int info);

/* ---- scopes ---- */

/* pushes a scope over the range just pushed (name at tidx) in the domain at didx */
void wl_nvtx_push_scope(lua_State *L, int didx, int tidx, int depth_before, const char *what);
/* calls the function at fn with the arguments above it up to top; the scope at top + 1 closes
 * when this C function returns or the error unwinds it. Returns the function's results. */
int wl_nvtx_call_in_scope(lua_State *L, int fn, int top);
bool wl_nvtx_callable(lua_State *L, int idx);

/* the metatables of scopes and the account of domains, kept for the whole run */
void wl_nvtx_open_account(lua_State *L);
/* nvtx_auto.c: adds auto_scope, auto_range, auto_enabled, kinds, auto_domain to the table on top */
void wl_nvtx_open_auto(lua_State *L);

#endif
