/* The contract between wlrun's trace library (libwlrun_trace.so, loaded into a traced program
 * through NVTX_INJECTION64_PATH and CUDA_INJECTION64_PATH) and `wlrun trace`, which reads what it
 * wrote (lua/wlrun/trace/). docs/trace.md describes the command.
 *
 * Environment, set by `wlrun trace` for the program it starts (inherited by its children):
 *   WLRUN_TRACE_DIR     a directory; without it the library records nothing
 *   WLRUN_TRACE_SYNC    a range name: the device is synchronised (cuCtxSynchronize on the
 *                       calling thread's context) before the start and before the end of
 *                       every range of that name is timed (wlrun trace --sync-steps)
 *   WLRUN_TRACE_CUPTI   the CUPTI library to load (default: the one the program has loaded
 *                       already, as PyTorch does, else libcupti.so.13, then libcupti.so, then
 *                       the toolkit's libcupti.so.13: the build's, /usr/local/cuda's)
 *   WLRUN_TRACE_GPU     "0": no CUPTI at all (CPU times only)
 *   WLRUN_TRACE_STEP    the steps' range name: marks at their starts and ends (below, K event),
 *                       and GPU activity on a sample of them
 *   WLRUN_TRACE_GPU_EVERY  N: kernels' activity (K records of kernels) and the kernel launches'
 *                       callbacks (their C records) on one step in N only, from the fourth step
 *                       on (copies and sets on every step); 1 or unset: on every step; "auto":
 *                       N chosen from the launches' cost (src/trace/trace_steps.c). P records say
 *                       when it changes.
 *   WLRUN_TRACE_MARKS   "event": the step marks are CUDA events (timed by CUPTI's events'
 *                       device times), not memsets of 13 bytes on a scratch buffer of the
 *                       library's (timed by MEMSET activity), the default; "copy": copies of
 *                       13 bytes from pinned host memory to that buffer (MEMCPY activity)
 *   WLRUN_TRACE_QUIET   "1": no CUPTI activity and no API callback on the steps not recorded
 *                       (with sets or copies as marks; trace_quiet.c)
 *   WLRUN_TRACE_STEPS   N, with WLRUN_TRACE_STEP a range name: after the N-th range of that name
 *                       closes in one NVTX domain (each domain counts its own; where the
 *                       Python hook's N-th closes inside the program's own range of that name,
 *                       as the program's range closes, or as the hook's next closes), the process's
 *                       launches and the ranges still open are written (O) as at an exit, and
 *                       nothing more is recorded but the GPU work launched before, D and X
 *                       (wlrun trace --steps)
 *
 * Ranges in the NVTX domain "wlrun.auto" are pushed by wlrun's Python start-up hook
 * (src/trace/python/sitecustomize.py, through trace_auto.c), not by the program.
 *
 * Files: one per process, DIR/<pid>.wltrace, created when the process's first NVTX or CUDA
 * injection initialises (a forked child opens its own on its first record). A program exec'd by
 * a traced process keeps its pid: when that name is taken, the file is DIR/<pid>.<n>.wltrace,
 * n from 2 (read every *.wltrace; the pid is the first line's). UTF-8 text, one
 * record per line, fields separated by one tab, numbers in decimal. Strings are valid UTF-8 (a
 * program's invalid bytes become U+FFFD, wide strings are converted) and escaped:
 * backslash, tab, newline and carriage return as \\ \t \n \r, other bytes below 0x20 and 0x7f
 * as \xHH. A line that does not end in a newline is the end of a file cut short (the process was
 * killed while writing).
 *
 * The first line:
 *   wltrace <TAB> 2 <TAB> <pid> <TAB> <ppid> <TAB> <command line, arguments joined by spaces>
 * Then, in any order except that a string is defined before any line that names it:
 *   S   sid text                 a string (range name, domain, kernel name), ids from 1
 *   T   tid name-sid             a thread's name (nvtxNameOsThread); tid is the kernel's thread id
 *   R   rid tid parent name-sid domain-sid start end payload
 *                                a push/pop range, closed. parent: the rid of the range it was
 *                                pushed inside on that thread (any domain), 0 at the top;
 *                                the parent's parent where the parent was popped first (a
 *                                pop of another domain's range under it).
 *                                domain-sid 0 is the default domain. payload: an integer
 *                                payload given with the range, or - (none)
 *   A   rid tid name-sid domain-sid start end payload
 *                                a start/end range (tid: the thread that started it), closed
 *   O   rid tid parent name-sid domain-sid start payload
 *                                a range still open when the process ended, or when its thread
 *                                ended for a push/pop range (nothing can close it then), or when
 *                                the steps traced were done (WLRUN_TRACE_STEPS)
 *                                (push/pop: parent as for R; start/end: parent -)
 *   C   correlation rid time     a CUDA API call that can start GPU work (a launch, a copy, a
 *                                set, a graph launch), made at time (CLOCK_MONOTONIC ns, on entry
 *                                to the call) while range rid was the innermost push/pop range
 *                                open on the calling thread; correlation is CUPTI's correlation
 *                                id of the runtime or driver call (both, when they differ). A
 *                                call on a thread with no range open names the innermost range
 *                                left by the process's last push or pop (PyTorch launches
 *                                backward's kernels from autograd's own thread while the thread
 *                                that pushed "backward" waits); rid 0 when there is none. Every
 *                                such call is noted, in a range or not: the report bounds an
 *                                iteration by the end of the GPU work launched before it ended
 *                                (version 1 had no time field and no rid 0)
 *   K   correlation kind device stream start end bytes name-sid
 *                                GPU work from CUPTI activity: kind kernel, memcpy or memset;
 *                                bytes 0 for kernels; name-sid: the kernel's (demangled) name or
 *                                the copy's direction ("memcpy HtoD"). Kind event (version 3): a
 *                                step mark of the library's (a memset of 13 bytes, its end; a
 *                                copy of 13 bytes to the GPU, WLRUN_TRACE_MARKS=copy, its end;
 *                                an idle mark, where the stream had nothing left to run when
 *                                the library asked (cuStreamQuery; the legacy stream only where
 *                                every known one had not; not with quiet steps): the library's
 *                                own, its correlation from 2^41, its stream 0 (CUPTI's id for it
 *                                is not known), its time its C record's (a nanosecond before
 *                                the boundary) where the thread's last synchronisation of the
 *                                stream's device returned before the boundary and no kernel,
 *                                graph or set was launched since on any thread, else the time
 *                                the library asked (an upper bound);
 *                                or a CUDA event, WLRUN_TRACE_MARKS=event, the program's own
 *                                events then too), start = end = its device time: the GPU work
 *                                launched on that stream before it had ended then; its C record
 *                                (the memset's, copy's or cuEventRecord call's) is timed a
 *                                nanosecond before the step boundary it marks. A quiet step's
 *                                mark (WLRUN_TRACE_QUIET=1) is the library's own: its C record
 *                                and K record have a correlation above 2^32 (CUPTI's are 32-bit),
 *                                its time its CUDA event's elapsed time after an anchor's mark,
 *                                its device and stream the anchor's mark's
 *   P   time state               version 3: kernels' activity (their K) and the kernel launches'
 *                                C records turned "on" or "off" at time, as a step closes (for
 *                                the next one: WLRUN_TRACE_GPU_EVERY); on before the first P
 *   W   tid rid enter return     version 4: the loop's synchronisation after a step: the first
 *                                synchronising call that thread made after the push/pop range
 *                                rid, a step (WLRUN_TRACE_STEP), closed on it as the thread went
 *                                (not a close dated earlier, wlrun_trace_auto_end_later), where
 *                                that first call is of the device or of a default stream
 *                                (cudaDeviceSynchronize, cuStreamSynchronize of NULL, the legacy
 *                                or the per-thread stream; an event's or another stream's first
 *                                means none) and the thread started no GPU work (no launch, copy
 *                                or set) in between (trace_waits.c); entered at enter, returned
 *                                at return (the outermost call). Written where every launch
 *                                is called back: every step recorded, or a sample of them
 *                                without quiet steps (the launches of a step not recorded are
 *                                called back then, and write no C record); none for
 *                                wlrun's own (WLRUN_TRACE_SYNC) nor after the steps traced are
 *                                done
 *   B   tid rid enter return     version 5: the loop's synchronisation before a step: the last
 *                                synchronising call that thread returned from before the
 *                                push/pop range rid, a step, opened on it, where that call was
 *                                of the device (cudaDeviceSynchronize, cuCtxSynchronize; a
 *                                stream's or an event's last means none) and the thread started
 *                                no GPU work in between (written as the range opens, before its
 *                                R); written where W records are. The same call may be a W's too.
 *                                Where that call was the program's torch.cuda.synchronize(),
 *                                return is where the Python hook's wrapper resumed after it
 *                                (version 6: its caller's time, the interpreter's lock taken back)
 *   Y   tid was now              version 6: the W record of thread tid that returned at was is
 *                                the program's torch.cuda.synchronize(), whose Python caller
 *                                resumed at now (the hook's wrapper, the interpreter's lock taken
 *                                back: trace_waits.c); the reader takes now as the W's return
 *   G   state text               GPU timing in this process: "on" (CUPTI activity enabled) or
 *                                "off" with the reason, e.g. "off	libcupti.so.13: cannot open"
 *   D   what count               records lost: "cupti" (CUPTI dropped activity records),
 *                                "memory" (the library could not allocate), "depth" (push/pop
 *                                ranges opened on a thread already WL_TRACE_MAX_DEPTH deep: not
 *                                recorded, nor their pops); written at exit, one line of each
 *                                with its total, none when nothing was lost
 *   E   text                     an error the library met (a CUPTI call that failed)
 *   X   reason                   the process ended normally ("exit"); absent when it was killed
 *                                or ended with _exit (as Python's multiprocessing workers do)
 * Bounds a reader may rely on: push/pop ranges nest at most WL_TRACE_MAX_DEPTH deep; a string
 * holds at most WL_TRACE_MAX_STRING bytes (a longer name is cut at a character boundary).
 * Times are nanoseconds of CLOCK_MONOTONIC, for CPU records and (through CUPTI's timestamp
 * callback) for K records alike. Record letters and field counts never change within a version
 * (readers take 1 to 6); a reader refuses a line it does not know, naming the file and the line.
 */
#ifndef WL_TRACE_FORMAT_H
#define WL_TRACE_FORMAT_H

#define WL_TRACE_VERSION 6
#define WL_TRACE_MAGIC "wltrace"
#define WL_TRACE_SUFFIX ".wltrace"
#define WL_TRACE_MAX_DEPTH 256 /* lua/wlrun/trace/read.lua's LIMITS.depth */
/* bytes; escaped, an S line stays far below the reader's 1 MiB */
#define WL_TRACE_MAX_STRING 65536

#define WL_TRACE_ENV_DIR "WLRUN_TRACE_DIR"
#define WL_TRACE_ENV_SYNC "WLRUN_TRACE_SYNC"
#define WL_TRACE_ENV_CUPTI "WLRUN_TRACE_CUPTI"
#define WL_TRACE_ENV_GPU "WLRUN_TRACE_GPU"
#define WL_TRACE_ENV_STEPS "WLRUN_TRACE_STEPS"
#define WL_TRACE_ENV_STEP "WLRUN_TRACE_STEP"
#define WL_TRACE_ENV_GPU_EVERY "WLRUN_TRACE_GPU_EVERY"

/* The domain of the ranges that wlrun's Python start-up hook pushes (src/trace/trace_auto.c) */
#define WL_TRACE_AUTO_DOMAIN "wlrun.auto"
/* and the name of its ranges around the loading of a batch (src/trace/python/sitecustomize.py) */
#define WL_TRACE_AUTO_DATA "data"

#endif
