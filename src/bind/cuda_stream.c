/* Streams, events and synchronisation for Lua: wl.stream(), wl.current_stream(), wl.event(),
 * wl.sync(), wl.elapsed(); the current stream and graph capture (cuda_stream.h). Every method
 * checks its object first (check_event, wl_check_stream); destroy, __gc and __close share one
 * close path that clears the handle. */
#include "cuda_stream.h"
#include "laux.h"
#include "wl_exit.h"
#include "wl_modules.h"

#include <lauxlib.h>
#include <limits.h>
#include <string.h>

#define STREAM_MT "wlrun.stream"
#define EVENT_MT "wlrun.event"
#define HOLDS_KEY "wlrun.capture_holds" /* registry: what the capture under way uses */

/* A stream object stands for a stream of its own (s) or for the current stream (current);
 * destroyed, it is neither. */
struct wl_stream {
  cudaStream_t s;
  bool current;
};

/* An event; destroyed when e is NULL. */
struct wl_event {
  cudaEvent_t e;
  bool recorded, timing;
};

static cudaStream_t own_stream;     /* wlrun's stream: created at first use */
static cudaStream_t capture_stream; /* non-NULL while a graph is captured */

/* ---- the current stream and capture ---- */

bool wl_capturing(void) { return capture_stream != NULL; }

void wl_refuse_in_capture(lua_State *L, const char *what) {
  if (capture_stream)
    wl_raise(L, WL_EXIT_SCRIPT, "%s inside wl.graph() capture: a graph cannot synchronise", what);
}

cudaStream_t wl_current_stream(lua_State *L) {
  if (capture_stream) return capture_stream;
  if (!own_stream) {
    wl_device_ready(L);
    cudaStream_t s = NULL;
    /* a blocking stream: ordered with the legacy default stream, like cudaMemcpy users expect */
    WL_CUDA(L, wl_backend->stream_create(&s, true, 0), "creating wlrun's stream");
    own_stream = s;
  }
  return own_stream;
}

cudaStream_t wl_capture_begin(lua_State *L) {
  if (capture_stream) wl_raise(L, WL_EXIT_SCRIPT, "graph captures cannot nest");
  wl_device_ready(L);
  cudaStream_t s = NULL;
  WL_CUDA(L, wl_backend->stream_create(&s, false, 0), "creating the capture stream");
  cudaError_t err = wl_backend->capture_begin(s);
  if (err != cudaSuccess) {
    (void)wl_backend->stream_destroy(s); /* the capture's error is the one to report */
    wl_cuda_raise(L, err, "cudaStreamBeginCapture");
  }
  capture_stream = s;
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, HOLDS_KEY);
  return s;
}

void wl_capture_hold(lua_State *L, int idx) {
  if (!capture_stream) return;
  idx = lua_absindex(L, idx);
  if (lua_getfield(L, LUA_REGISTRYINDEX, HOLDS_KEY) == LUA_TTABLE) {
    lua_pushvalue(L, idx);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
  }
  lua_pop(L, 1);
}

void wl_capture_push_holds(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, HOLDS_KEY) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
  }
  lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, HOLDS_KEY);
}

cudaGraph_t wl_capture_end(cudaError_t *err) {
  cudaStream_t s = capture_stream;
  cudaGraph_t graph = NULL;
  capture_stream = NULL;
  *err = wl_backend->capture_end(s, &graph);
  cudaError_t destroyed = wl_backend->stream_destroy(s);
  if (*err == cudaSuccess) *err = destroyed;
  if (*err != cudaSuccess) {
    wl_backend->clear_error();
    if (graph) (void)wl_backend->graph_destroy(graph); /* *err is the error to report */
    return NULL;
  }
  return graph;
}

/* ---- streams ---- */

struct wl_stream *wl_check_stream(lua_State *L, int arg, const char *fn) {
  struct wl_stream *s = wl_check_udata(L, arg, STREAM_MT);
  if (!s->s && !s->current) wl_closed_error(L, arg, fn, "stream", "destroy");
  return s;
}

struct wl_stream *wl_test_stream(lua_State *L, int arg) {
  return luaL_testudata(L, arg, STREAM_MT);
}

cudaStream_t wl_stream_get(lua_State *L, const struct wl_stream *s) {
  return s->current ? wl_current_stream(L) : s->s;
}

cudaStream_t wl_opt_stream(lua_State *L, int arg, const char *fn) {
  if (lua_isnoneornil(L, arg)) return wl_current_stream(L);
  return wl_stream_get(L, wl_check_stream(L, arg, fn));
}

/* the one close path: destroy, __gc, __close */
static cudaError_t stream_close(struct wl_stream *s) {
  cudaError_t err = s->s ? wl_backend->stream_destroy(s->s) : cudaSuccess;
  s->s = NULL;
  s->current = false;
  return err;
}

static int stream_gc(lua_State *L) {
  (void)stream_close(wl_check_udata(L, 1, STREAM_MT)); /* nothing can be raised from __gc */
  return 0;
}

/* s:destroy(); as t:free(), the runtime's answer is not raised (a lost context answers with its
 * sticky error, and the stream is gone either way) */
static int stream_destroy(lua_State *L) {
  (void)stream_close(wl_check_stream(L, 1, "stream:destroy"));
  return 0;
}

/* wl.stream{priority = n, blocking = false} */
static int l_stream(lua_State *L) {
  static const char *const known[] = {"priority", "blocking", NULL};
  int priority = 0;
  bool blocking = false;
  if (!lua_isnoneornil(L, 1)) {
    if (!lua_istable(L, 1))
      wl_raise(L, WL_EXIT_SCRIPT, "wl.stream: expected a table of options, got a %s",
               luaL_typename(L, 1));
    wl_check_fields(L, 1, "wl.stream", known, false);
    int whole = 0, t = lua_getfield(L, 1, "priority");
    lua_Integer p = lua_tointegerx(L, -1, &whole);
    if (t != LUA_TNIL && (t != LUA_TNUMBER || !whole || p < INT_MIN || p > INT_MAX))
      wl_raise(L, WL_EXIT_SCRIPT,
               "wl.stream: priority must be a whole number (0, or below 0 for a higher priority), "
               "got '%s'",
               luaL_tolstring(L, -1, NULL));
    priority = t == LUA_TNIL ? 0 : (int)p;
    lua_pop(L, 1);
    blocking = wl_bool_field(L, 1, "blocking", "wl.stream", false);
  }
  wl_refuse_in_capture(L, "creating a stream");
  struct wl_stream *s = lua_newuserdatauv(L, sizeof *s, 0);
  s->s = NULL;
  s->current = false;
  luaL_setmetatable(L, STREAM_MT);
  wl_device_ready(L);
  cudaStream_t h = NULL;
  WL_CUDA(L, wl_backend->stream_create(&h, blocking, priority), "cudaStreamCreateWithPriority");
  s->s = h;
  return 1;
}

/* wl.current_stream(): a stream object that stands for the current stream (wlrun's own, or
 * the capture stream inside wl.graph), for asynchronous copies that a measurement must see */
static int l_current_stream(lua_State *L) {
  struct wl_stream *s = lua_newuserdatauv(L, sizeof *s, 0);
  s->s = NULL;
  s->current = true;
  luaL_setmetatable(L, STREAM_MT);
  return 1;
}

static int stream_sync(lua_State *L) {
  struct wl_stream *s = wl_check_stream(L, 1, "stream:sync");
  wl_refuse_in_capture(L, "stream:sync()");
  cudaStream_t h = wl_stream_get(L, s);
  WL_WATCH_SYNC();
  WL_CUDA(L, wl_backend->stream_sync(h), "synchronising a stream");
  return 0;
}

/* s:query() -> true when all its work is done */
static int stream_query(lua_State *L) {
  struct wl_stream *s = wl_check_stream(L, 1, "stream:query");
  wl_refuse_in_capture(L, "stream:query()");
  cudaError_t err = wl_backend->stream_query(wl_stream_get(L, s));
  if (err != cudaSuccess && err != cudaErrorNotReady) wl_cuda_raise(L, err, "querying a stream");
  lua_pushboolean(L, err == cudaSuccess);
  return 1;
}

/* ---- events ---- */

static struct wl_event *check_event(lua_State *L, int arg, const char *fn) {
  struct wl_event *e = wl_check_udata(L, arg, EVENT_MT);
  if (!e->e) wl_closed_error(L, arg, fn, "event", "destroy");
  return e;
}

/* s:wait(event): work queued on s after this waits for the event */
static int stream_wait(lua_State *L) {
  struct wl_stream *s = wl_check_stream(L, 1, "stream:wait");
  struct wl_event *e = check_event(L, 2, "stream:wait");
  WL_CUDA(L, wl_backend->stream_wait(wl_stream_get(L, s), e->e), "cudaStreamWaitEvent");
  return 0;
}

/* wl.sync(): the whole device */
static int l_sync(lua_State *L) {
  wl_refuse_in_capture(L, "wl.sync()");
  WL_WATCH_SYNC();
  wl_device_ready(L);
  WL_CUDA(L, wl_backend->device_sync(), "wl.sync()");
  return 0;
}

/* the one close path: destroy, __gc, __close */
static cudaError_t event_close(struct wl_event *e) {
  cudaError_t err = e->e ? wl_backend->event_destroy(e->e) : cudaSuccess;
  e->e = NULL;
  e->recorded = false;
  return err;
}

static int event_gc(lua_State *L) {
  (void)event_close(wl_check_udata(L, 1, EVENT_MT)); /* nothing can be raised from __gc */
  return 0;
}

/* e:destroy(); as s:destroy() */
static int event_destroy(lua_State *L) {
  (void)event_close(check_event(L, 1, "event:destroy"));
  return 0;
}

/* wl.event{timing = true, blocking = false} */
static int l_event(lua_State *L) {
  static const char *const known[] = {"timing", "blocking", NULL};
  bool timing = true, blocking = false;
  if (!lua_isnoneornil(L, 1)) {
    if (!lua_istable(L, 1))
      wl_raise(L, WL_EXIT_SCRIPT, "wl.event: expected a table of options, got a %s",
               luaL_typename(L, 1));
    wl_check_fields(L, 1, "wl.event", known, false);
    timing = wl_bool_field(L, 1, "timing", "wl.event", true);
    blocking = wl_bool_field(L, 1, "blocking", "wl.event", false);
  }
  struct wl_event *e = lua_newuserdatauv(L, sizeof *e, 0);
  memset(e, 0, sizeof *e);
  luaL_setmetatable(L, EVENT_MT);
  wl_device_ready(L);
  cudaEvent_t h = NULL;
  WL_CUDA(L, wl_backend->event_create(&h, timing, blocking), "cudaEventCreateWithFlags");
  e->e = h;
  e->timing = timing;
  return 1;
}

/* e:record([stream]) */
static int event_record(lua_State *L) {
  struct wl_event *e = check_event(L, 1, "event:record");
  WL_CUDA(L, wl_backend->event_record(e->e, wl_opt_stream(L, 2, "event:record")),
          "cudaEventRecord");
  e->recorded = true;
  lua_settop(L, 1);
  return 1;
}

static int event_sync(lua_State *L) {
  struct wl_event *e = check_event(L, 1, "event:sync");
  wl_refuse_in_capture(L, "event:sync()");
  WL_WATCH_SYNC();
  WL_CUDA(L, wl_backend->event_sync(e->e), "cudaEventSynchronize");
  return 0;
}

static int event_query(lua_State *L) {
  struct wl_event *e = check_event(L, 1, "event:query");
  wl_refuse_in_capture(L, "event:query()");
  cudaError_t err = wl_backend->event_query(e->e);
  if (err != cudaSuccess && err != cudaErrorNotReady) wl_cuda_raise(L, err, "cudaEventQuery");
  lua_pushboolean(L, err == cudaSuccess);
  return 1;
}

/* seconds between two recorded events, waiting for stop; under --compile-only, where nothing ran,
 * no number: nil and why (after the same checks as on a GPU), so that a script cannot print a
 * made-up time ("0.0 us, inf GB/s") */
static int elapsed(lua_State *L, const char *fn) {
  struct wl_event *a = check_event(L, 1, fn), *b = check_event(L, 2, fn);
  if (!a->timing || !b->timing)
    return wl_raise(L, WL_EXIT_SCRIPT, "%s: an event made with timing = false has no time", fn);
  if (!a->recorded || !b->recorded)
    return wl_raise(L, WL_EXIT_SCRIPT, "%s: both events must have been recorded", fn);
  wl_refuse_in_capture(L, "elapsed()");
  if (wl_backend->no_device) {
    lua_pushnil(L);
    lua_pushstring(L, WL_NOT_MEASURED);
    return 2;
  }
  WL_WATCH_SYNC();
  WL_CUDA(L, wl_backend->event_sync(b->e), "cudaEventSynchronize");
  float ms = 0;
  WL_CUDA(L, wl_backend->event_elapsed(&ms, a->e, b->e), "cudaEventElapsedTime");
  lua_pushnumber(L, ms * 1e-3);
  return 1;
}

/* wl.elapsed(start, stop), start:elapsed(stop) */
static int l_elapsed(lua_State *L) { return elapsed(L, "wl.elapsed"); }
static int event_elapsed(lua_State *L) { return elapsed(L, "event:elapsed"); }

static void new_class(lua_State *L, const char *name, const luaL_Reg *meta,
                      const luaL_Reg *methods) {
  luaL_newmetatable(L, name);
  luaL_setfuncs(L, meta, 0);
  lua_newtable(L);
  luaL_setfuncs(L, methods, 0);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}

void wl_open_stream(lua_State *L) {
  static const luaL_Reg stream_meta[] = {{"__gc", stream_gc}, {"__close", stream_gc}, {NULL, NULL}};
  static const luaL_Reg stream_methods[] = {{"sync", stream_sync},
                                            {"query", stream_query},
                                            {"wait", stream_wait},
                                            {"destroy", stream_destroy},
                                            {NULL, NULL}};
  static const luaL_Reg event_meta[] = {{"__gc", event_gc}, {"__close", event_gc}, {NULL, NULL}};
  static const luaL_Reg event_methods[] = {{"record", event_record},   {"sync", event_sync},
                                           {"query", event_query},     {"elapsed", event_elapsed},
                                           {"destroy", event_destroy}, {NULL, NULL}};
  static const luaL_Reg fns[] = {{"stream", l_stream},   {"current_stream", l_current_stream},
                                 {"event", l_event},     {"sync", l_sync},
                                 {"elapsed", l_elapsed}, {NULL, NULL}};
  new_class(L, STREAM_MT, stream_meta, stream_methods);
  new_class(L, EVENT_MT, event_meta, event_methods);
  luaL_setfuncs(L, fns, 0);
}
