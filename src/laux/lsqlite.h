/* wlrun.sqlite: SQLite databases for the Lua library (the history tool, docs/history.md),
 * through SQLite's C library; values reach SQL only as bound parameters. */
#ifndef WL_LSQLITE_H
#define WL_LSQLITE_H

#include <lua.h>

/* The module table: open, version. */
int luaopen_wlrun_sqlite(lua_State *L);

#endif
