/* The effective settings and command line, for the Lua library (wl.settings, wl.cli). */
#include "cli_params.h"
#include "settings.h"
#include "wl_modules.h"

#include <lauxlib.h>

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

/* settings = {section = {name = value}}, settings_origin = {section = {name = {source=, origin=}}} */
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
  push_settings(L);
  lua_newtable(L);
  static const char *const commands[] = {[WL_CMD_RUN] = "run", [WL_CMD_INFO] = "info", [WL_CMD_TOOL] = "tool"};
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
