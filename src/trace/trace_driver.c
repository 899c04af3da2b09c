/* The CUDA driver's functions for the library's own calls (step marks, quiet steps), from the
 * libcuda.so.1 the program has loaded: CUDA is never loaded for them. */
#include "trace_internal.h"

#include <dlfcn.h>

void *wt_driver_fn(const char *name) {
  void *cuda = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
  if (!cuda) return NULL;
  void *fn = dlsym(cuda, name);
  dlclose(cuda); /* the program's own reference keeps it loaded */
  return fn;
}
