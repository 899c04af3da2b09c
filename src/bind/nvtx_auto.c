/* NVTX for Lua, the automatic ranges (docs/nvtx.md): scenario, configuration, setup, ... go to
 * the domain "wlrun", with a colour and a category per kind; [run] nvtx = off (--nvtx off)
 * turns them off. wl.nvtx.auto_scope, auto_range, auto_enabled, kinds. */
#include "nvtx.h"
#include "laux.h"
#include "settings.h"
#include "wl_exit.h"

#include <lauxlib.h>

static const struct wl_setting *auto_setting;

static bool auto_on(void) { return !auto_setting || auto_setting->number != 0; }

static int l_auto_enabled(lua_State *L) {
  lua_pushboolean(L, auto_on());
  return 1;
}

/* pushes the automatic range of kind (arg 1), name (arg 2, default: the kind), payload (arg 3)
 * and its scope; returns the scope's index */
static int auto_push(lua_State *L, int payload) {
  const char *kind = wl_check_string(L, 1);
  int k = wl_nvtx_kind_index(kind);
  if (k < 0) {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0; i < wl_nvtx_nkinds; i++) {
      luaL_addstring(&b, i ? ", " : "");
      luaL_addstring(&b, wl_nvtx_kinds[i].kind);
    }
    luaL_pushresult(&b);
    return wl_raise(L, WL_EXIT_SCRIPT, "wl.nvtx: unknown kind of automatic range '%s' (kinds: %s)",
                    kind, lua_tostring(L, -1));
  }
  if (!lua_isnoneornil(L, 2) && lua_type(L, 2) != LUA_TSTRING)
    return wl_raise(L, WL_EXIT_SCRIPT,
                    "wl.nvtx: the name of an automatic range must be a string, got %s",
                    luaL_typename(L, 2));
  const char *name = lua_isnoneornil(L, 2) ? kind : lua_tostring(L, 2);
  struct wl_nvtx_domain *d = wl_nvtx_push_domain(L, AUTO_DOMAIN);
  int didx = lua_gettop(L);
  if (!(d->named_kinds & (1u << k))) {
    d->named_kinds |= 1u << k;
    wl_nvtx_name_category(L, didx, (uint32_t)k + 1, kind);
  }
  nvtxEventAttributes_t a;
  wl_nvtx_attr_init(&a);
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  a.category = (uint32_t)k + 1;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xFF000000u | wl_nvtx_color_rgb(wl_nvtx_kinds[k].color);
  if (payload && lua_isinteger(L, payload)) {
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = (int64_t)lua_tointeger(L, payload);
  } else if (payload && lua_type(L, payload) == LUA_TNUMBER) {
    a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
    a.payload.dValue = lua_tonumber(L, payload);
  } else if (payload && !lua_isnoneornil(L, payload)) {
    return wl_raise(L, WL_EXIT_SCRIPT,
                    "wl.nvtx: the payload of an automatic range must be a number, got %s",
                    luaL_typename(L, payload));
  }
  lua_pushstring(L, name);
  int tidx = lua_gettop(L);
  wl_nvtx_range_push(d, &a);
  int depth = wl_nvtx_track_push(L, didx, tidx);
  wl_nvtx_push_scope(L, didx, tidx, depth - 1, "automatic range");
  return lua_gettop(L);
}

/* auto_scope(kind [, name [, payload]]) -> a to-be-closed value (nil when --nvtx off):
 *   local r <close> = wl.nvtx.auto_scope("phase", "forward") */
static int l_auto_scope(lua_State *L) {
  if (!auto_on()) return 0;
  lua_settop(L, 3);
  auto_push(L, 3);
  return 1;
}

/* auto_range(kind, name, fn, ...) -> fn(...)'s results, inside an automatic range */
static int l_auto_range(lua_State *L) {
  if (!wl_nvtx_callable(L, 3))
    return wl_raise(
        L, WL_EXIT_SCRIPT,
        "wl.nvtx.auto_range: expected (kind, name, function, ...), got %s for the function",
        luaL_typename(L, 3));
  int top = lua_gettop(L);
  if (!auto_on()) {
    lua_call(L, top - 3, LUA_MULTRET);
    return lua_gettop(L) - 2;
  }
  auto_push(L, 0);
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
  return wl_nvtx_call_in_scope(L, 3, top);
}

void wl_nvtx_open_auto(lua_State *L) {
  static const luaL_Reg fns[] = {{"auto_scope", l_auto_scope},
                                 {"auto_range", l_auto_range},
                                 {"auto_enabled", l_auto_enabled},
                                 {NULL, NULL}};
  auto_setting = wl_setting_find("run", "nvtx");
  luaL_setfuncs(L, fns, 0);
  lua_createtable(L, 0, wl_nvtx_nkinds);
  for (int i = 0; i < wl_nvtx_nkinds; i++) {
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, wl_nvtx_color_rgb(wl_nvtx_kinds[i].color));
    lua_setfield(L, -2, "color");
    lua_pushstring(L, wl_nvtx_kinds[i].color);
    lua_setfield(L, -2, "color_name");
    lua_pushinteger(L, i + 1);
    lua_setfield(L, -2, "category");
    lua_setfield(L, -2, wl_nvtx_kinds[i].kind);
  }
  lua_setfield(L, -2, "kinds");
  lua_pushliteral(L, AUTO_DOMAIN);
  lua_setfield(L, -2, "auto_domain");
}
