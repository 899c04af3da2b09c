/* The effective settings and command line, for the Lua library (wl.settings, wl.cli). */
#include "cli_params.h"
#include "laux.h"
#include "settings.h"
#include "wl_exit.h"
#include "wl_modules.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>

static void push_value(lua_State *L, const struct wl_setting *s) {
  if (!s->set) {
    lua_pushnil(L);
    return;
  }
  switch (s->type) {
  case WL_INT: lua_pushinteger(L, (lua_Integer)s->number); break;
  case WL_BOOL: lua_pushboolean(L, s->number != 0); break;
  case WL_NUMBER:
  case WL_DURATION:
  case WL_PERCENT: lua_pushnumber(L, s->number); break;
  default: lua_pushstring(L, s->text);
  }
}

/* a number as text that reads back to the same double (the shortest of %.15g..%.17g) */
static void number_text(lua_State *L, int arg, char *buf, size_t len) {
  if (lua_isinteger(L, arg)) {
    snprintf(buf, len, LUA_INTEGER_FMT, lua_tointeger(L, arg));
    return;
  }
  double v = lua_tonumber(L, arg);
  for (int digits = 15; digits <= 17; digits++) {
    snprintf(buf, len, "%.*g", digits, v);
    if (strtod(buf, NULL) == v) return;
  }
}

/* core.setting_value(section, name, value) -> the value as wl.settings holds it (a percentage
 * as a fraction, a duration in seconds), or nil and what was expected. A Lua value goes
 * through the setting's own parser and range (wl_setting_check), as the command line and
 * wlrun.ini do: a number or a text with its unit for durations and percentages (0.5 is
 * 0.5 %), a whole number for counts, a boolean for switches, a string for words. */
static int l_setting_value(lua_State *L) {
  const char *section = wl_check_string(L, 1), *name = wl_check_string(L, 2);
  const struct wl_setting *s = wl_setting_find(section, name);
  if (!s) return wl_raise(L, WL_EXIT_SCRIPT, "unknown setting %s.%s", section, name);
  bool numeric = s->type == WL_INT || s->type == WL_NUMBER || s->type == WL_DURATION ||
                 s->type == WL_PERCENT || s->type == WL_CLOCKS; /* a clock in MHz */
  bool text = s->type != WL_INT && s->type != WL_NUMBER && s->type != WL_BOOL;
  char buf[64], err[1024];
  const char *given = NULL;
  int t = lua_type(L, 3);
  if (t == LUA_TNUMBER && numeric) {
    number_text(L, 3, buf, sizeof buf);
    given = buf;
  } else if (t == LUA_TSTRING && text) {
    given = lua_tostring(L, 3);
  } else if (t == LUA_TBOOLEAN && s->type == WL_BOOL) {
    given = lua_toboolean(L, 3) ? "true" : "false";
  }
  struct wl_setting probe = *s;
  if (!given) {
    if (s->type == WL_BOOL) snprintf(err, sizeof err, "a boolean (true or false)");
    else wl_setting_describe(s, err, sizeof err);
    lua_pushnil(L);
    if (t == LUA_TSTRING)
      lua_pushfstring(L, "expected %s, got a string ('%s')", err, lua_tostring(L, 3));
    else lua_pushfstring(L, "expected %s, got a %s", err, luaL_typename(L, 3));
    return 2;
  }
  if (!wl_setting_check(s, given, &probe.number, err, sizeof err)) {
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
  }
  snprintf(probe.text, sizeof probe.text, "%s", given); /* checked: it fits */
  probe.set = true;
  push_value(L, &probe);
  return 1;
}

/* core.percent(text) -> the fraction (0.5 and "0.5%" are both 0.005), or nil: the rule of every
 * percentage wlrun reads (settings.c) */
static int l_percent(lua_State *L) {
  double v;
  char buf[64];
  const char *text = NULL;
  if (lua_type(L, 1) == LUA_TNUMBER) {
    number_text(L, 1, buf, sizeof buf);
    text = buf;
  } else if (lua_type(L, 1) == LUA_TSTRING) {
    text = lua_tostring(L, 1);
  }
  if (text && wl_parse_percent(text, &v)) lua_pushnumber(L, v);
  else lua_pushnil(L);
  return 1;
}

/* settings = {section = {name = value}}, settings_origin = {section = {name = {source=, origin=}}}
 */
static void push_settings(lua_State *L) {
  lua_newtable(L); /* values */
  lua_newtable(L); /* origins */
  for (size_t i = 0; i < wl_settings_count(); i++) {
    const struct wl_setting *s = wl_setting_at(i);
    luaL_getsubtable(L, -2, s->section);
    push_value(L, s);
    lua_setfield(L, -2, s->name);
    lua_pop(L, 1);
    luaL_getsubtable(L, -1, s->section);
    lua_createtable(L, 0, 3);
    lua_pushstring(L, wl_source_name(s->source));
    lua_setfield(L, -2, "source");
    lua_pushstring(L, s->origin);
    lua_setfield(L, -2, "origin");
    lua_pushstring(L, s->help);
    lua_setfield(L, -2, "help");
    lua_setfield(L, -2, s->name);
    lua_pop(L, 1);
  }
  lua_setfield(L, -3, "settings_origin");
  lua_setfield(L, -2, "settings");
}

static void push_strings(lua_State *L, const char *const *list, int n, const char *field) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, list[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, field);
}

/* cli.params = {{name=, values={...}}, ...} in command-line order */
static void push_params(lua_State *L, const struct wl_cli *cli) {
  lua_createtable(L, cli->nparams, 0);
  for (int i = 0; i < cli->nparams; i++) {
    const struct wl_param_override *p = &cli->overrides[i]; /* parsed once, by wl_cli_parse */
    lua_createtable(L, 0, 2);
    lua_pushstring(L, p->name);
    lua_setfield(L, -2, "name");
    lua_createtable(L, (int)p->nvalues, 0);
    for (size_t j = 0; j < p->nvalues; j++) {
      lua_pushstring(L, p->values[j]);
      lua_rawseti(L, -2, (lua_Integer)j + 1);
    }
    lua_setfield(L, -2, "values");
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "params");
}

static void set_string(lua_State *L, const char *k, const char *v) {
  if (!v) return;
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}

void wl_open_settings(lua_State *L, const struct wl_cli *cli) {
  static const luaL_Reg fns[] = {
      {"setting_value", l_setting_value}, {"percent", l_percent}, {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
  push_settings(L);
  lua_newtable(L);
  static const char *const commands[] = {
      [WL_CMD_RUN] = "run", [WL_CMD_INFO] = "info", [WL_CMD_TOOL] = "tool"};
  set_string(L, "command", commands[cli->command]);
  set_string(L, "script", cli->script);
  push_strings(L, cli->script_args, cli->nscript_args, "script_args");
  set_string(L, "filter", cli->filter);
  set_string(L, "resume", cli->resume);
  set_string(L, "devices", cli->devices);
  lua_pushboolean(L, cli->dry_run);
  lua_setfield(L, -2, "dry_run");
  lua_pushboolean(L, cli->compile_only);
  lua_setfield(L, -2, "compile_only");
  push_strings(L, cli->outputs, cli->noutputs, "outputs");
  push_strings(L, (const char *const *)cli->argv, cli->argc, "argv");
  push_strings(L, cli->inputs, cli->ninputs, "inputs");
  push_params(L, cli);
  set_string(L, "tool", cli->tool);
  set_string(L, "worker_output", cli->worker_output);
  set_string(L, "worker_queue", cli->worker_queue);
  set_string(L, "compile_jobs", cli->compile_jobs);
  if (cli->shard_n) {
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, cli->shard_k);
    lua_setfield(L, -2, "k");
    lua_pushinteger(L, cli->shard_n);
    lua_setfield(L, -2, "n");
    lua_setfield(L, -2, "shard");
  }
  if (cli->worker_config) {
    lua_pushinteger(L, cli->worker_config);
    lua_setfield(L, -2, "worker_config");
  }
  push_strings(L, cli->tool_args, cli->ntool_args, "tool_args");
  lua_setfield(L, -2, "cli");
}
