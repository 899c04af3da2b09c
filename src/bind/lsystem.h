/* wlrun.process's second file (lsystem_files.c), which lsystem.c registers. */
#ifndef WL_LSYSTEM_H
#define WL_LSYSTEM_H

#include <lua.h>

/* adds the functions of lsystem_files.c to the table on top of the stack */
void wl_open_system_files(lua_State *L);

#endif
