/* WLRUN_TRACE_SYNC (wlrun trace --sync-steps): before the start and before the end of a range of
 * that name is timed, the calling thread's CUDA context is synchronised, as the methodology's
 * manual template does around a step (the Python hook's steps, domain "wlrun.auto", only while the
 * program has pushed none of its own). CUDA is not loaded for this: cuCtxSynchronize comes from a
 * libcuda.so.1 the program has loaded already, and before it has, there is no GPU work to wait for.
 */
#include "trace_internal.h"
#include "trace_format.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*ctx_synchronize_fn)(void); /* CUresult cuCtxSynchronize(void) */

enum { CUDA_ERROR_NOT_INITIALIZED = 3, CUDA_ERROR_INVALID_CONTEXT = 201 };

static struct wt_string *sync_name;   /* NULL: no range is synchronised */
static struct wt_string *hook_domain; /* WL_TRACE_AUTO_DOMAIN: the Python hook's ranges */
static atomic_int program_steps;      /* a range of that name outside the hook's domain was seen */
static int enabled = 1;
static _Atomic(ctx_synchronize_fn) synchronize;
static atomic_int reported;
static __thread int own; /* this thread is in fn(): the library's synchronisation */

int wt_sync_own(void) { return own; }

void wt_sync_init(void) {
  const char *name = getenv(WL_TRACE_ENV_SYNC);
  if (name && *name) {
    sync_name = wt_intern_cstr(name);
    hook_domain = wt_intern_cstr(WL_TRACE_AUTO_DOMAIN);
  }
}

/* The hook's steps are synchronised only while the program has pushed no step range of its own:
 * where it has, those are the steps (docs/trace.md), and the hook's, which opens inside the
 * program's forward, would add a synchronisation there. */
int wt_sync_wanted(const struct wt_string *domain, const struct wt_string *name) {
  if (!enabled || !sync_name || name != sync_name) return 0;
  if (domain != hook_domain) {
    atomic_store(&program_steps, 1);
    return 1;
  }
  return !atomic_load(&program_steps);
}

void wt_sync_device(void) {
  ctx_synchronize_fn fn = atomic_load(&synchronize);
  if (!fn) {
    void *cuda = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
    if (!cuda) return; /* CUDA not loaded: nothing runs on a GPU */
    fn = (ctx_synchronize_fn)dlsym(cuda, "cuCtxSynchronize");
    dlclose(cuda); /* the program's own reference keeps it loaded */
    if (!fn) return;
    atomic_store(&synchronize, fn);
  }
  own = 1;
  int r = fn();
  own = 0;
  /* no context on this thread yet, or CUDA not initialised: nothing to wait for */
  if (r == 0 || r == CUDA_ERROR_NOT_INITIALIZED || r == CUDA_ERROR_INVALID_CONTEXT) return;
  if (atomic_exchange(&reported, 1)) return;
  char text[128];
  snprintf(text, sizeof text,
           "%s: cuCtxSynchronize failed (CUresult %d); ranges are timed without it",
           WL_TRACE_ENV_SYNC, r);
  wt_record_text('E', NULL, text);
}

/* A forked child does nothing CUDA-related: its parent's CUDA is not its own. */
void wt_sync_fork_child(void) { enabled = 0; }
