/* Streams and events (cuda_stream.c): the current stream that work goes to when none is named,
 * graph capture on it, and the check functions of the stream and event classes. */
#ifndef WL_CUDA_STREAM_H
#define WL_CUDA_STREAM_H

#include "cuda_device.h"

struct wl_stream; /* a wl.stream() or a wl.current_stream() */

/* The stream at arg; raises when it is not one, or was destroyed ("FN: stream used after
 * destroy", wl_closed_error). */
struct wl_stream *wl_check_stream(lua_State *L, int arg, const char *fn);
/* The stream at arg (destroyed or not), or NULL if the value is not a stream. */
struct wl_stream *wl_test_stream(lua_State *L, int arg);

/* The CUDA stream a stream object stands for (the current one for wl.current_stream()), or
 * NULL when it was destroyed: for objects held by others (a bound launch's stream), checked
 * each time they are used. */
cudaStream_t wl_stream_get(lua_State *L, const struct wl_stream *s);

/* The stream that wlrun's work goes to when none is named: wlrun's own stream (created at
 * first use), or the capture stream inside wl.graph(). */
cudaStream_t wl_current_stream(lua_State *L);
/* arg is a live wl.stream, or none/nil for the current stream; FN names the call for errors */
cudaStream_t wl_opt_stream(lua_State *L, int arg, const char *fn);

/* True while a graph is captured (wl.graph, graph-mode timing): synchronising calls, stream
 * creation and allocations are refused then. */
bool wl_capturing(void);
/* Raises "WHAT inside wl.graph() capture: a graph cannot synchronise" while capturing. */
void wl_refuse_in_capture(lua_State *L, const char *what);

/* Graph capture on a new current stream, for wl.graph() and graph-mode timing. */
cudaStream_t wl_capture_begin(lua_State *L);
/* Ends the capture begun above: the captured graph, not instantiated (NULL on failure, with
 * the error in *err). */
cudaGraph_t wl_capture_end(cudaError_t *err);
/* While capturing: keeps the object at idx (a bound launch, a tensor) with the capture, so that
 * the graph holds it alive and checks it before each replay. No-op otherwise. */
void wl_capture_hold(lua_State *L, int idx);
/* Pushes the set {object = true} of what the last capture held, and forgets it. */
void wl_capture_push_holds(lua_State *L);

#endif
