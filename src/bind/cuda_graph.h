/* CUDA graphs for Lua (cuda_graph.c): wl.graph(fn), replayed by g() or g:launch([stream]). */
#ifndef WL_CUDA_GRAPH_H
#define WL_CUDA_GRAPH_H

#include "cuda_device.h"

/* The executable graph of the wl.graph at arg; NULL when the value is not a graph; raises
 * "FN: graph used after destroy" for a destroyed one. */
cudaGraphExec_t wl_graph_exec(lua_State *L, int arg, const char *fn);

#endif
