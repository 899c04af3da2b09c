/* The do-nothing backend of --compile-only (backend.h): no device is touched and nothing runs,
 * but every operation succeeds the way the CUDA runtime's does, with the values a script needs
 * to go on (docs/lua-api.md, "Compile only"):
 *   - streams, events, graphs and loaded kernels are handles that stand for them (a small
 *     allocation each, released by their destroy, so that a leak shows under LeakSanitizer);
 *   - device memory is an address that stands for it, never dereferenced; pinned host memory
 *     is real (zeroed) host memory;
 *   - a query says the work is done, an elapsed time is 0;
 *   - a capture counts the operations queued on the capturing stream, so that a graph has as
 *     many nodes as the same capture would have on a GPU;
 *   - limits that depend on a device (threads per block of a compiled kernel, shared memory)
 *     are those of a device without limits: they are checked on a GPU only.
 * Facts of a device (its properties, a kernel's attributes, clocks) are refused by the
 * bindings before they get here (no_device, wl_device_needed in cuda_device.h). */
#include "backend.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* what a handle stands for: a stream, an event, a graph (with its nodes), an executable
 * graph, a library */
struct stand_in {
  char what;
  size_t nodes;
};

static cudaError_t new_stand_in(void **out, char what, size_t nodes) {
  struct stand_in *h = malloc(sizeof *h);
  *out = h;
  if (!h) return cudaErrorMemoryAllocation;
  h->what = what;
  h->nodes = nodes;
  return cudaSuccess;
}

static cudaError_t free_stand_in(void *h) {
  free(h);
  return cudaSuccess;
}

/* the stream being captured, and what was queued on it since the capture began */
static cudaStream_t capturing;
static size_t captured;

static cudaError_t queued(cudaStream_t s) {
  if (capturing && s == capturing) captured++;
  return cudaSuccess;
}

/* ---- the device ---- */

/* the driver's count, as with a device: wl.device_count() answers the same in both modes */
static cudaError_t device_count(int *n) {
  *n = 0;
  cudaError_t err = cudaGetDeviceCount(n);
  if (err != cudaSuccess) *n = 0;
  return err;
}

static cudaError_t open_device(int dev, char *why, size_t whylen) { return cudaSuccess; }
static cudaError_t use_device(int dev) { return cudaSuccess; }
static cudaError_t nothing(void) { return cudaSuccess; }
static void clear_error(void) {}

static cudaError_t attribute(int *value, enum cudaDeviceAttr attr, int dev) {
  switch (attr) {
  case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = INT_MAX; return cudaSuccess;
  case cudaDevAttrMaxThreadsPerBlock: *value = 1024; return cudaSuccess;
  case cudaDevAttrL2CacheSize: *value = 0; return cudaSuccess; /* no cache to flush */
  default: *value = 0; return cudaErrorNotSupported; /* a fact of a device: refused before */
  }
}

static cudaError_t properties(struct cudaDeviceProp *p, int dev) {
  memset(p, 0, sizeof *p);
  return cudaErrorNotSupported;
}

static cudaError_t versions(int *driver, int *runtime) {
  *driver = 0;
  *runtime = CUDART_VERSION; /* the runtime wlrun was built with */
  return cudaSuccess;
}

static cudaError_t pci_bus_id(char *bus, int len, int dev) {
  if (len > 0) bus[0] = '\0';
  return cudaErrorNotSupported;
}

static cudaError_t mem_info(size_t *free_bytes, size_t *total_bytes) {
  *free_bytes = *total_bytes = (size_t)1 << 50; /* nothing is allocated: room for any tensor */
  return cudaSuccess;
}

/* ---- memory ---- */

/* device memory: an address that stands for it, 256-byte aligned, never dereferenced */
static cudaError_t alloc(void **p, size_t n) {
  static uintptr_t next = 0x10000;
  *p = (void *)next;
  next += (n + 511) / 256 * 256;
  return cudaSuccess;
}

static cudaError_t release(void *p) { return cudaSuccess; }

static cudaError_t alloc_pinned(void **p, size_t n) {
  *p = calloc(1, n ? n : 1);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

static cudaError_t release_pinned(void *p) {
  free(p);
  return cudaSuccess;
}

static cudaError_t set_memory(void *p, int value, size_t n, cudaStream_t s) { return queued(s); }
static cudaError_t copy_memory(void *dst, const void *src, size_t n, cudaStream_t s) {
  return queued(s);
}
static cudaError_t copy_memory_2d(void *dst, size_t dpitch, const void *src, size_t spitch,
                                  size_t width, size_t height, cudaStream_t s) {
  return queued(s);
}

/* ---- wlrun's own kernels ---- */

static cudaError_t init(void *data, size_t n, enum wl_dtype dtype, enum wl_init_kind kind, double a,
                        double b, uint64_t seed, cudaStream_t s) {
  return queued(s);
}

static cudaError_t count_nonzero(const void *data, size_t n, unsigned long long *count,
                                 cudaStream_t s) {
  return queued(s);
}

static cudaError_t clock_probe(unsigned long long *out, unsigned long long ns, cudaStream_t s) {
  return queued(s);
}
static cudaError_t empty_kernel(cudaStream_t s) { return queued(s); }
static cudaError_t block_stream(volatile int *release, volatile int *timeouts, int generation,
                                unsigned long long timeout_ns, cudaStream_t s) {
  (void)release, (void)timeouts, (void)generation, (void)timeout_ns;
  return queued(s);
}

/* ---- streams and events ---- */

static cudaError_t stream_create(cudaStream_t *s, bool blocking, int priority) {
  return new_stand_in((void **)s, 's', 0);
}

static cudaError_t stream_properties(cudaStream_t s, bool *blocking, int *priority) {
  *blocking = false, *priority = 0;
  return cudaSuccess;
}

static cudaError_t stream_destroy(cudaStream_t s) { return free_stand_in(s); }
static cudaError_t stream_done(cudaStream_t s) { return cudaSuccess; }
static cudaError_t stream_wait(cudaStream_t s, cudaEvent_t e) { return cudaSuccess; }

static cudaError_t event_create(cudaEvent_t *e, bool timing, bool blocking) {
  return new_stand_in((void **)e, 'e', 0);
}

static cudaError_t event_destroy(cudaEvent_t e) { return free_stand_in(e); }
static cudaError_t event_record(cudaEvent_t e, cudaStream_t s) { return cudaSuccess; }
static cudaError_t event_done(cudaEvent_t e) { return cudaSuccess; }

static cudaError_t event_elapsed(float *ms, cudaEvent_t start, cudaEvent_t stop) {
  *ms = 0;
  return cudaSuccess;
}

/* ---- graphs ---- */

static cudaError_t capture_begin(cudaStream_t s) {
  if (capturing) return cudaErrorIllegalState;
  capturing = s;
  captured = 0;
  return cudaSuccess;
}

static cudaError_t capture_end(cudaStream_t s, cudaGraph_t *graph) {
  *graph = NULL;
  if (!capturing || s != capturing) return cudaErrorStreamCaptureUnmatched;
  capturing = NULL;
  return new_stand_in((void **)graph, 'g', captured);
}

static cudaError_t graph_instantiate(cudaGraphExec_t *exec, cudaGraph_t graph) {
  return new_stand_in((void **)exec, 'x', ((struct stand_in *)graph)->nodes);
}

static cudaError_t graph_nodes(cudaGraph_t graph, size_t *n) {
  *n = ((struct stand_in *)graph)->nodes;
  return cudaSuccess;
}

static cudaError_t graph_launch(cudaGraphExec_t exec, cudaStream_t s) { return queued(s); }
static cudaError_t graph_destroy(cudaGraph_t graph) { return free_stand_in(graph); }
static cudaError_t graph_exec_destroy(cudaGraphExec_t exec) { return free_stand_in(exec); }

/* ---- kernels ---- */

static cudaError_t library_load(cudaLibrary_t *lib, const void *cubin) {
  return new_stand_in((void **)lib, 'l', 0);
}
static cudaError_t library_unload(cudaLibrary_t lib) { return free_stand_in(lib); }

static cudaError_t kernel_get(cudaKernel_t *k, cudaLibrary_t lib, const char *lowered_name) {
  *k = (cudaKernel_t)lib; /* stands for the library's kernel; released with it */
  return cudaSuccess;
}

static cudaError_t kernel_attributes(struct cudaFuncAttributes *a, cudaKernel_t k) {
  memset(a, 0, sizeof *a);
  a->maxThreadsPerBlock = 1024;
  a->maxDynamicSharedSizeBytes = INT_MAX;
  return cudaSuccess;
}

static cudaError_t kernel_max_dynamic_smem(cudaKernel_t k, int bytes) { return cudaSuccess; }

static cudaError_t occupancy(int *blocks, cudaKernel_t k, int block, size_t smem) {
  *blocks = 0;
  return cudaErrorNotSupported; /* a fact of a device: refused before */
}

static cudaError_t launch(cudaKernel_t k, dim3 grid, dim3 block, void **args, size_t smem,
                          cudaStream_t s) {
  return queued(s);
}

/* host work: not called (it would touch the device), queued as far as a capture counts */
static int host_call(wl_host_call_fn call, void *ctx, void *const *args, cudaStream_t s, char *why,
                     size_t whylen, cudaError_t *after) {
  *after = queued(s);
  return 0;
}

static cudaError_t set_memory_2d(void *p, size_t pitch, int value, size_t width, size_t height,
                                 cudaStream_t s) {
  return queued(s);
}

static void name_stream(cudaStream_t s, const char *name) {}

const struct wl_backend wl_backend_none = {
    .name = "none",
    .no_device = "--compile-only",
    .device_count = device_count,
    .open_device = open_device,
    .use_device = use_device,
    .check_context = nothing,
    .clear_error = clear_error,
    .device_sync = nothing,
    .attribute = attribute,
    .properties = properties,
    .versions = versions,
    .pci_bus_id = pci_bus_id,
    .mem_info = mem_info,
    .alloc = alloc,
    .release = release,
    .alloc_pinned = alloc_pinned,
    .release_pinned = release_pinned,
    .set_memory = set_memory,
    .copy_memory = copy_memory,
    .copy_memory_2d = copy_memory_2d,
    .init = init,
    .count_nonzero = count_nonzero,
    .clock_probe = clock_probe,
    .empty_kernel = empty_kernel,
    .block_stream = block_stream,
    .stream_create = stream_create,
    .stream_properties = stream_properties,
    .stream_destroy = stream_destroy,
    .stream_sync = stream_done,
    .stream_query = stream_done,
    .stream_wait = stream_wait,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .event_record = event_record,
    .event_sync = event_done,
    .event_query = event_done,
    .event_elapsed = event_elapsed,
    .capture_begin = capture_begin,
    .capture_end = capture_end,
    .graph_instantiate = graph_instantiate,
    .graph_nodes = graph_nodes,
    .graph_launch = graph_launch,
    .graph_destroy = graph_destroy,
    .graph_exec_destroy = graph_exec_destroy,
    .library_load = library_load,
    .library_unload = library_unload,
    .kernel_get = kernel_get,
    .kernel_attributes = kernel_attributes,
    .kernel_max_dynamic_smem = kernel_max_dynamic_smem,
    .occupancy = occupancy,
    .launch = launch,
    .host_call = host_call,
    .set_memory_2d = set_memory_2d,
    .name_stream = name_stream,
};
