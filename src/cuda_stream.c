/* Streams, events, synchronisation and CUDA graphs for Lua: wl.stream(), wl.event(),
 * wl.sync(), wl.elapsed(), wl.graph(fn). */
#include "cuda_common.h"
#include "lhost.h"
#include "wl_exit.h"

#include <lauxlib.h>
#include <string.h>

#define STREAM_MT "wlrun.stream"
#define EVENT_MT "wlrun.event"
#define GRAPH_MT "wlrun.graph"

struct wl_stream { cudaStream_t s; bool owned, borrowed; };
struct wl_event { cudaEvent_t e; bool created, recorded; };
struct wl_graph { cudaGraph_t graph; cudaGraphExec_t exec; size_t nodes; };

static cudaStream_t own_stream;     /* wlrun's stream: created at first use */
static cudaStream_t capture_stream; /* non-NULL while wl.graph() captures */

bool wl_capturing(void) { return capture_stream != NULL; }

struct wl_watch wl_watch;

cudaStream_t wl_capture_begin(lua_State *L) {
  if (capture_stream) wl_raise(L, WL_EXIT_SCRIPT, "graph captures cannot nest");
  wl_cuda_require_device(L);
  cudaStream_t s;
  WL_CUDA(L, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "creating the capture stream");
  cudaError_t err = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  if (err != cudaSuccess) {
    cudaStreamDestroy(s);
    wl_cuda_raise(L, err, "cudaStreamBeginCapture");
  }
  capture_stream = s;
  return s;
}

cudaGraphExec_t wl_capture_end(cudaGraph_t *graph, cudaError_t *err) {
  cudaStream_t s = capture_stream;
  cudaGraphExec_t exec = NULL;
  capture_stream = NULL;
  *graph = NULL;
  *err = cudaStreamEndCapture(s, graph);
  cudaStreamDestroy(s);
  if (*err == cudaSuccess) *err = cudaGraphInstantiate(&exec, *graph, 0);
  if (*err != cudaSuccess) {
    cudaGetLastError();
    if (*graph) cudaGraphDestroy(*graph);
    *graph = NULL;
    return NULL;
  }
  return exec;
}

cudaGraphExec_t wl_test_graph(lua_State *L, int arg) {
  struct wl_graph *g = luaL_testudata(L, arg, GRAPH_MT);
  return g ? g->exec : NULL;
}

cudaStream_t wl_current_stream(lua_State *L) {
  if (capture_stream) return capture_stream;
  if (wl_compile_only()) return NULL;
  if (!own_stream) {
    wl_cuda_require_device(L);
    /* a blocking stream: ordered with the legacy default stream, like cudaMemcpy users expect */
    WL_CUDA(L, cudaStreamCreate(&own_stream), "creating wlrun's stream");
  }
  return own_stream;
}

cudaStream_t wl_opt_stream(lua_State *L, int arg) {
  if (lua_isnoneornil(L, arg)) return wl_current_stream(L);
  struct wl_stream *s = luaL_checkudata(L, arg, STREAM_MT);
  if (s->borrowed) return wl_current_stream(L);
  if (!s->owned && !wl_compile_only()) luaL_argerror(L, arg, "stream was destroyed");
  return s->s;
}

static void refuse_in_capture(lua_State *L, const char *what) {
  if (capture_stream)
    wl_raise(L, WL_EXIT_SCRIPT, "%s inside wl.graph() capture: a graph cannot synchronise", what);
}

/* ---- streams ---- */

static int stream_gc(lua_State *L) {
  struct wl_stream *s = luaL_checkudata(L, 1, STREAM_MT);
  if (s->owned) cudaStreamDestroy(s->s);
  s->owned = false;
  return 0;
}

/* wl.stream{priority = n, blocking = false} */
static int l_stream(lua_State *L) {
  int priority = 0;
  bool blocking = false;
  if (lua_istable(L, 1)) {
    lua_getfield(L, 1, "priority");
    priority = (int)luaL_optinteger(L, -1, 0);
    lua_getfield(L, 1, "blocking");
    blocking = lua_toboolean(L, -1);
    lua_pop(L, 2);
  }
  refuse_in_capture(L, "creating a stream");
  struct wl_stream *s = lua_newuserdatauv(L, sizeof *s, 0);
  s->owned = s->borrowed = false;
  luaL_setmetatable(L, STREAM_MT);
  if (wl_compile_only()) { /* a stand-in: the default stream, never used */
    s->s = NULL;
    return 1;
  }
  wl_cuda_require_device(L);
  WL_CUDA(L, cudaStreamCreateWithPriority(&s->s, blocking ? cudaStreamDefault : cudaStreamNonBlocking, priority),
          "cudaStreamCreateWithPriority");
  s->owned = true;
  return 1;
}

/* wl.current_stream(): a stream object that stands for the current stream (wlrun's own, or
 * the capture stream inside wl.graph), for asynchronous copies that a measurement must see */
static int l_current_stream(lua_State *L) {
  struct wl_stream *s = lua_newuserdatauv(L, sizeof *s, 0);
  s->s = NULL;
  s->owned = false;
  s->borrowed = true;
  luaL_setmetatable(L, STREAM_MT);
  return 1;
}

static int stream_sync(lua_State *L) {
  cudaStream_t s = wl_opt_stream(L, 1);
  if (wl_compile_only()) return 0;
  refuse_in_capture(L, "stream:sync()");
  WL_WATCH_SYNC();
  WL_CUDA(L, cudaStreamSynchronize(s), "synchronising a stream");
  return 0;
}

/* s:query() -> true when all its work is done */
static int stream_query(lua_State *L) {
  if (wl_compile_only()) { lua_pushboolean(L, 1); return 1; }
  cudaError_t err = cudaStreamQuery(wl_opt_stream(L, 1));
  if (err != cudaSuccess && err != cudaErrorNotReady) wl_cuda_raise(L, err, "querying a stream");
  lua_pushboolean(L, err == cudaSuccess);
  return 1;
}

/* s:wait(event): work queued on s after this waits for the event */
static int stream_wait(lua_State *L) {
  cudaStream_t s = wl_opt_stream(L, 1);
  struct wl_event *e = luaL_checkudata(L, 2, EVENT_MT);
  if (wl_compile_only()) return 0;
  WL_CUDA(L, cudaStreamWaitEvent(s, e->e, 0), "cudaStreamWaitEvent");
  return 0;
}

/* wl.sync(): the whole device */
static int l_sync(lua_State *L) {
  refuse_in_capture(L, "wl.sync()");
  WL_WATCH_SYNC();
  if (wl_compile_only()) return 0;
  wl_cuda_require_device(L);
  WL_CUDA(L, cudaDeviceSynchronize(), "wl.sync()");
  return 0;
}

/* ---- events ---- */

static int event_gc(lua_State *L) {
  struct wl_event *e = luaL_checkudata(L, 1, EVENT_MT);
  if (e->created && e->e) cudaEventDestroy(e->e);
  e->created = false;
  return 0;
}

/* wl.event{timing = true, blocking = false} */
static int l_event(lua_State *L) {
  bool timing = true, blocking = false;
  if (lua_istable(L, 1)) {
    if (lua_getfield(L, 1, "timing") != LUA_TNIL) timing = lua_toboolean(L, -1);
    lua_getfield(L, 1, "blocking");
    blocking = lua_toboolean(L, -1);
    lua_pop(L, 2);
  }
  struct wl_event *e = lua_newuserdatauv(L, sizeof *e, 0);
  memset(e, 0, sizeof *e);
  luaL_setmetatable(L, EVENT_MT);
  if (wl_compile_only()) { /* a stand-in that records nothing */
    e->created = true;
    return 1;
  }
  wl_cuda_require_device(L);
  unsigned flags = (timing ? 0 : cudaEventDisableTiming) | (blocking ? cudaEventBlockingSync : 0);
  WL_CUDA(L, cudaEventCreateWithFlags(&e->e, flags), "cudaEventCreateWithFlags");
  e->created = true;
  return 1;
}

static struct wl_event *check_event(lua_State *L, int arg) {
  struct wl_event *e = luaL_checkudata(L, arg, EVENT_MT);
  if (!e->created) luaL_argerror(L, arg, "event was destroyed");
  return e;
}

/* e:record([stream]) */
static int event_record(lua_State *L) {
  struct wl_event *e = check_event(L, 1);
  if (wl_compile_only()) { e->recorded = true; lua_settop(L, 1); return 1; }
  WL_CUDA(L, cudaEventRecord(e->e, wl_opt_stream(L, 2)), "cudaEventRecord");
  e->recorded = true;
  lua_settop(L, 1);
  return 1;
}

static int event_sync(lua_State *L) {
  struct wl_event *e = check_event(L, 1);
  if (wl_compile_only()) return 0;
  refuse_in_capture(L, "event:sync()");
  WL_WATCH_SYNC();
  WL_CUDA(L, cudaEventSynchronize(e->e), "cudaEventSynchronize");
  return 0;
}

static int event_query(lua_State *L) {
  if (wl_compile_only()) { lua_pushboolean(L, 1); return 1; }
  cudaError_t err = cudaEventQuery(check_event(L, 1)->e);
  if (err != cudaSuccess && err != cudaErrorNotReady) wl_cuda_raise(L, err, "cudaEventQuery");
  lua_pushboolean(L, err == cudaSuccess);
  return 1;
}

/* wl.elapsed(start, stop) or start:elapsed(stop) -> seconds between two recorded events,
 * waiting for stop */
static int l_elapsed(lua_State *L) {
  struct wl_event *a = check_event(L, 1), *b = check_event(L, 2);
  if (!a->recorded || !b->recorded)
    return wl_raise(L, WL_EXIT_SCRIPT, "elapsed: both events must have been recorded");
  refuse_in_capture(L, "elapsed()");
  WL_WATCH_SYNC();
  if (wl_compile_only()) { lua_pushnumber(L, 0); return 1; }
  WL_CUDA(L, cudaEventSynchronize(b->e), "cudaEventSynchronize");
  float ms = 0;
  WL_CUDA(L, cudaEventElapsedTime(&ms, a->e, b->e), "cudaEventElapsedTime");
  lua_pushnumber(L, ms * 1e-3);
  return 1;
}

/* ---- graphs ---- */

static int graph_gc(lua_State *L) {
  struct wl_graph *g = luaL_checkudata(L, 1, GRAPH_MT);
  if (g->exec) cudaGraphExecDestroy(g->exec);
  if (g->graph) cudaGraphDestroy(g->graph);
  g->exec = NULL;
  g->graph = NULL;
  return 0;
}

/* wl.graph(fn): captures the work fn queues (on the current stream, which is the
 * capture stream inside fn) into an executable graph; g() or g:launch([stream]) replays it. */
static int l_graph(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  if (capture_stream) return wl_raise(L, WL_EXIT_SCRIPT, "wl.graph() cannot nest");
  struct wl_graph *g = lua_newuserdatauv(L, sizeof *g, 0);
  memset(g, 0, sizeof *g);
  luaL_setmetatable(L, GRAPH_MT);
  if (wl_compile_only()) { /* run fn for its checks; the graph replays nothing */
    lua_pushvalue(L, 1);
    lua_call(L, 0, 0);
    return 1;
  }
  wl_capture_begin(L);
  lua_pushvalue(L, 1);
  int status = lua_pcall(L, 0, 0, 0);
  cudaError_t err;
  cudaGraphExec_t exec = wl_capture_end(&g->graph, &err);
  if (status != LUA_OK) { /* the error from fn, now that the capture has ended */
    if (exec) cudaGraphExecDestroy(exec);
    if (g->graph) cudaGraphDestroy(g->graph);
    g->graph = NULL;
    return lua_error(L);
  }
  if (!exec) return wl_cuda_raise(L, err, "capturing a graph");
  g->exec = exec;
  WL_CUDA(L, cudaGraphGetNodes(g->graph, NULL, &g->nodes), "cudaGraphGetNodes");
  if (g->nodes == 0) return wl_raise(L, WL_EXIT_SCRIPT, "wl.graph(): the function queued no GPU work");
  lua_settop(L, 2);
  return 1;
}

static int graph_launch(lua_State *L) {
  struct wl_graph *g = luaL_checkudata(L, 1, GRAPH_MT);
  if (wl_compile_only()) return 0;
  if (!g->exec) luaL_argerror(L, 1, "graph was destroyed");
  refuse_in_capture(L, "launching a graph");
  WL_CUDA(L, cudaGraphLaunch(g->exec, wl_opt_stream(L, 2)), "cudaGraphLaunch");
  return 0;
}

static int graph_index(lua_State *L) {
  struct wl_graph *g = luaL_checkudata(L, 1, GRAPH_MT);
  const char *k = luaL_checkstring(L, 2);
  if (strcmp(k, "nodes") == 0) {
    lua_pushinteger(L, (lua_Integer)g->nodes);
    return 1;
  }
  if (strcmp(k, "launch") == 0) {
    lua_pushcfunction(L, graph_launch);
    return 1;
  }
  if (strcmp(k, "destroy") == 0) {
    lua_pushcfunction(L, graph_gc);
    return 1;
  }
  return 0;
}

static void new_class(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods) {
  luaL_newmetatable(L, name);
  luaL_setfuncs(L, meta, 0);
  if (methods) {
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
}

void wl_open_stream(lua_State *L) {
  static const luaL_Reg stream_meta[] = {{"__gc", stream_gc}, {"__close", stream_gc}, {NULL, NULL}};
  static const luaL_Reg stream_methods[] = {{"sync", stream_sync}, {"query", stream_query},
                                            {"wait", stream_wait}, {"destroy", stream_gc}, {NULL, NULL}};
  static const luaL_Reg event_meta[] = {{"__gc", event_gc}, {"__close", event_gc}, {NULL, NULL}};
  static const luaL_Reg event_methods[] = {{"record", event_record}, {"sync", event_sync},
                                           {"query", event_query}, {"elapsed", l_elapsed},
                                           {"destroy", event_gc}, {NULL, NULL}};
  static const luaL_Reg graph_meta[] = {{"__gc", graph_gc}, {"__close", graph_gc},
                                        {"__call", graph_launch}, {"__index", graph_index},
                                        {NULL, NULL}};
  static const luaL_Reg fns[] = {{"stream", l_stream}, {"current_stream", l_current_stream}, {"event", l_event}, {"sync", l_sync},
                                 {"elapsed", l_elapsed}, {"graph", l_graph}, {NULL, NULL}};
  new_class(L, STREAM_MT, stream_meta, stream_methods);
  new_class(L, EVENT_MT, event_meta, event_methods);
  new_class(L, GRAPH_MT, graph_meta, NULL);
  luaL_setfuncs(L, fns, 0);
}
