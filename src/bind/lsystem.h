/* What the two files of wlrun.process share (lsystem.c, lsystem_files.c). */
#ifndef WL_LSYSTEM_H
#define WL_LSYSTEM_H

#include <lua.h>

/* the string argument idx, refused when it holds a NUL byte (C would see it cut short) */
const char *wl_check_cstring(lua_State *L, int idx);

/* nil and the reason (strerror of errno): 2 results, for the functions that return their failure */
int wl_push_failure(lua_State *L);

/* adds the functions of lsystem_files.c to the table on top of the stack */
void wl_open_system_files(lua_State *L);

#endif
