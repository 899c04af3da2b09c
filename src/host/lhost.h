/* The Lua host: state, the wlrun.core module, the embedded Lua library, protected calls with
 * tracebacks, and the mapping of errors to exit codes. */
#ifndef WL_LHOST_H
#define WL_LHOST_H

#include "cli.h"
#include "embedded.h"
#include "wl_exit.h"

#include <lua.h>

/* Creates the state with the standard libraries and wlrun's modules. NULL on failure (the
 * message is printed). */
lua_State *wl_host_new(const struct wl_cli *cli);

/* Runs what the command line asks for through the one entry point into Lua, wlrun.host's
 * main(): a script (and the scenario it returns), info, or a tool. Errors are printed with
 * file:line and a traceback; returns the exit code of the error's kind. */
enum wl_exit wl_host_main(lua_State *L);

void wl_host_close(lua_State *L);

/* Before the process ends with code (main's return, os.exit, a panic): the process's end begins
 * (a Ctrl-C from now on gives up the end's waits: side_thread.h); finishes wlrun's own threads
 * (nvrtc_load.h, cublas_prepare.h, nvml.h); one still at work after its time, or a Ctrl-C, ends
 * the process here with a message: with code (130 for a Ctrl-C where code was 0), standard
 * output checked, the clocks unlocked and every stream flushed, without the exit handlers. */
void wl_host_finish_threads(int code);

/* Before the state's close, once the threads are finished: waits for the work queued on the
 * device, at most WL_PREPARE_EXIT_WAIT_S, on a thread of its own (the state's close would wait
 * for it in its frees, unbounded). An error of that work fails a run that succeeded (exit 5,
 * with a message); work still running then (or a Ctrl-C) ends the process here as
 * wl_host_finish_threads does, without the state's close (exit 5, or 130, for a run that
 * succeeded). Returns the code. */
int wl_host_finish_device(int code);

/* After the state's close, at main's return (docs/architecture.md, "The end of a run"): checks
 * standard output (wl_host_check_stdout), then ends the process with the code at once, without
 * the exit handlers of the libraries wlrun keeps loaded (cuBLAS's and cuBLASLt's static
 * destructors take about 30 ms on the CPU machine), the clocks unlocked and every stream
 * flushed. Returns the code (the exit handlers then run) where a tool put code of its own into
 * the process (LD_PRELOAD, LD_AUDIT, CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH), where
 * WLRUN_EXIT_HANDLERS is set, and where a sanitizer, gcov or gprof runtime is in the process. */
int wl_host_end(int code);

/* What went to standard output and could not be written (a full disk, a closed pipe) fails the
 * run, whatever wrote it (the help, a report, a script's print): the message, once, and exit 9
 * for a run that succeeded. Returns the code. */
int wl_host_check_stdout(int code);

#endif
