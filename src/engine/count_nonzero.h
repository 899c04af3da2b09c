/* core.count_nonzero(tensor): the nonzero bytes of a tensor (the zero-input check), registered
 * by wl_open_timing (cuda_timing.c). */
#ifndef WL_COUNT_NONZERO_H
#define WL_COUNT_NONZERO_H

#include <lua.h>

int wl_l_count_nonzero(lua_State *L);

#endif
