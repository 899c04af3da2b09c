/* CUDA graphs for Lua: wl.graph(fn) captures the work that fn queues on the current stream
 * (the capture stream inside fn) into an executable graph; g() or g:launch([stream]) replays
 * it, g.nodes counts its nodes. The same under --compile-only, where the backend counts what
 * was queued and replays nothing. */
#include "cuda_graph.h"
#include "cuda_launch.h"
#include "cuda_stream.h"
#include "cuda_tensor.h"
#include "laux.h"
#include "wl_exit.h"
#include "wl_modules.h"

#include <lauxlib.h>
#include <string.h>

#define GRAPH_MT "wlrun.graph"

/* destroyed when exec is NULL; user value: the set of what its capture used (bound launches,
 * tensors), kept alive and checked before each replay */
struct wl_graph {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  size_t nodes;
};

/* what the graph at arg replays is still there: its kernels and tensors not freed since */
static void check_uses(lua_State *L, int arg, const char *fn) {
  lua_getiuservalue(L, arg, 1);
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    struct wl_tensor *t = wl_test_tensor(L, -1);
    struct wl_bound *b = t ? NULL : wl_test_bound(L, -1);
    if (t && !t->data)
      wl_raise(L, WL_EXIT_SCRIPT, "%s: a tensor captured in the graph used after free", fn);
    if (b) wl_bound_check_alive(L, b, fn);
  }
  lua_pop(L, 1);
}

static struct wl_graph *check_graph(lua_State *L, int arg, const char *fn) {
  struct wl_graph *g = wl_check_udata(L, arg, GRAPH_MT);
  if (!g->exec) wl_closed_error(L, arg, fn, "graph", "destroy");
  return g;
}

cudaGraphExec_t wl_graph_exec(lua_State *L, int arg, const char *fn) {
  struct wl_graph *g = luaL_testudata(L, arg, GRAPH_MT);
  if (!g) return NULL;
  if (!g->exec) wl_raise(L, WL_EXIT_SCRIPT, "%s: graph used after destroy", fn);
  check_uses(L, arg, fn);
  return g->exec;
}

/* the one close path: destroy, __gc, __close, and a failed capture */
static cudaError_t graph_close(struct wl_graph *g) {
  cudaError_t a = g->exec ? wl_backend->graph_exec_destroy(g->exec) : cudaSuccess;
  cudaError_t b = g->graph ? wl_backend->graph_destroy(g->graph) : cudaSuccess;
  g->exec = NULL;
  g->graph = NULL;
  return a != cudaSuccess ? a : b;
}

static int graph_gc(lua_State *L) {
  (void)graph_close(wl_check_udata(L, 1, GRAPH_MT)); /* nothing can be raised from __gc */
  return 0;
}

/* g:destroy(); as s:destroy(), the runtime's answer is not raised (a lost context answers
 * with its sticky error, and the graph is gone either way) */
static int graph_destroy(lua_State *L) {
  (void)graph_close(check_graph(L, 1, "graph:destroy"));
  return 0;
}

/* wl.graph(fn) -> an executable graph of the work fn queued */
static int l_graph(lua_State *L) {
  wl_check_type(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  if (wl_capturing()) return wl_raise(L, WL_EXIT_SCRIPT, "wl.graph() cannot nest");
  struct wl_graph *g = lua_newuserdatauv(L, sizeof *g, 1);
  memset(g, 0, sizeof *g);
  luaL_setmetatable(L, GRAPH_MT);
  wl_capture_begin(L);
  lua_pushvalue(L, 1);
  int status = lua_pcall(L, 0, 0, 0);
  cudaError_t err;
  g->graph = wl_capture_end(&err); /* released by __gc from here on */
  wl_capture_push_holds(L);
  if (status != LUA_OK) { /* the error from fn, now that the capture has ended */
    (void)graph_close(g); /* fn's error is the one to report */
    lua_pop(L, 1);
    return lua_error(L);
  }
  lua_setiuservalue(L, 2, 1);
  if (!g->graph) return wl_cuda_raise(L, err, "capturing a graph");
  WL_CUDA(L, wl_backend->graph_nodes(g->graph, &g->nodes), "cudaGraphGetNodes");
  if (g->nodes == 0)
    return wl_raise(L, WL_EXIT_SCRIPT, "wl.graph(): the function queued no GPU work");
  cudaGraphExec_t exec = NULL;
  WL_CUDA(L, wl_backend->graph_instantiate(&exec, g->graph), "cudaGraphInstantiate");
  g->exec = exec;
  lua_settop(L, 2);
  return 1;
}

/* g() or g:launch([stream]) */
static int graph_launch(lua_State *L) {
  struct wl_graph *g = check_graph(L, 1, "graph:launch");
  check_uses(L, 1, "graph:launch");
  wl_refuse_in_capture(L, "launching a graph");
  WL_CUDA(L, wl_backend->graph_launch(g->exec, wl_opt_stream(L, 2, "graph:launch")),
          "cudaGraphLaunch");
  return 0;
}

static int graph_index(lua_State *L) {
  struct wl_graph *g = wl_check_udata(L, 1, GRAPH_MT);
  const char *k = wl_check_string(L, 2);
  if (strcmp(k, "nodes") == 0) lua_pushinteger(L, (lua_Integer)g->nodes);
  else if (strcmp(k, "launch") == 0) lua_pushcfunction(L, graph_launch);
  else if (strcmp(k, "destroy") == 0) lua_pushcfunction(L, graph_destroy);
  else lua_pushnil(L);
  return 1;
}

void wl_open_graph(lua_State *L) {
  static const luaL_Reg meta[] = {{"__gc", graph_gc},
                                  {"__close", graph_gc},
                                  {"__call", graph_launch},
                                  {"__index", graph_index},
                                  {NULL, NULL}};
  luaL_newmetatable(L, GRAPH_MT);
  luaL_setfuncs(L, meta, 0);
  lua_pop(L, 1);
  lua_pushcfunction(L, l_graph);
  lua_setfield(L, -2, "graph");
}
