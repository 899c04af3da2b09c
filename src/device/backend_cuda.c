/* The CUDA backend: the device operations of the bindings on the CUDA runtime (backend.h).
 * Thin: each function is the runtime call, so that what the bindings time is the runtime's. */
#include "backend.h"
#include "cuda_init_kernels.h"

#include <nvtx3/nvToolsExtCudaRt.h>

#include <dlfcn.h>
#include <stdio.h>

const struct wl_backend *wl_backend = &wl_backend_cuda;

void wl_backend_select(bool compile_only) {
  wl_backend = compile_only ? &wl_backend_none : &wl_backend_cuda;
}

bool wl_cuda_is_no_device(cudaError_t err) {
  return err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ||
         err == cudaErrorInvalidDevice || err == cudaErrorDevicesUnavailable ||
         err == cudaErrorSystemDriverMismatch || err == cudaErrorCompatNotSupportedOnDevice ||
         err == cudaErrorStubLibrary;
}

/* "no NVIDIA driver" reads better than cudart's "driver version is insufficient" when the
 * driver library is not there at all. */
const char *wl_cuda_no_device_reason(cudaError_t err) {
  if (err == cudaErrorInsufficientDriver) {
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!h) h = dlopen("libcuda.so.1", RTLD_LAZY);
    if (!h) return "no NVIDIA driver (libcuda.so.1 not found)";
    dlclose(h);
  }
  return cudaGetErrorString(err);
}

/* ---- the device ---- */

static cudaError_t device_count(int *n) {
  *n = 0;
  cudaError_t err = cudaGetDeviceCount(n);
  if (err != cudaSuccess) *n = 0;
  return err;
}

static cudaError_t open_device(int dev, char *why, size_t whylen) {
  int n;
  cudaError_t err = device_count(&n);
  if (err != cudaSuccess) {
    snprintf(why, whylen, "no CUDA device: %s (%s)", wl_cuda_no_device_reason(err),
             cudaGetErrorName(err));
    return err;
  }
  if (dev >= n) {
    snprintf(why, whylen, "no CUDA device %d: this machine has %d", dev, n);
    return cudaErrorInvalidDevice;
  }
  const char *step = "cudaSetDevice";
  err = cudaSetDevice(dev);
  if (err == cudaSuccess) {
    step = "creating the CUDA context";
    err = cudaFree(NULL);
  }
  if (err != cudaSuccess)
    snprintf(why, whylen, "%s: %s: %s", step, cudaGetErrorName(err), cudaGetErrorString(err));
  return err;
}

static cudaError_t use_device(int dev) { return cudaSetDevice(dev); }

static cudaError_t check_context(void) {
  cudaError_t err = cudaDeviceSynchronize();
  return err == cudaSuccess ? cudaGetLastError() : err;
}

static void clear_error(void) { (void)cudaGetLastError(); }
static cudaError_t device_sync(void) { return cudaDeviceSynchronize(); }

static cudaError_t attribute(int *value, enum cudaDeviceAttr attr, int dev) {
  return cudaDeviceGetAttribute(value, attr, dev);
}

static cudaError_t properties(struct cudaDeviceProp *p, int dev) {
  return cudaGetDeviceProperties(p, dev);
}

static cudaError_t versions(int *driver, int *runtime) {
  *driver = *runtime = 0;
  cudaError_t err = cudaDriverGetVersion(driver);
  cudaError_t rt = cudaRuntimeGetVersion(runtime);
  return err != cudaSuccess ? err : rt;
}

static cudaError_t pci_bus_id(char *bus, int len, int dev) {
  return cudaDeviceGetPCIBusId(bus, len, dev);
}
static cudaError_t mem_info(size_t *free_bytes, size_t *total_bytes) {
  return cudaMemGetInfo(free_bytes, total_bytes);
}

/* ---- memory ---- */

static cudaError_t alloc(void **p, size_t n) { return cudaMalloc(p, n); }
static cudaError_t release(void *p) { return cudaFree(p); }
static cudaError_t alloc_pinned(void **p, size_t n) { return cudaMallocHost(p, n); }
static cudaError_t release_pinned(void *p) { return cudaFreeHost(p); }

static cudaError_t set_memory(void *p, int value, size_t n, cudaStream_t s) {
  return cudaMemsetAsync(p, value, n, s);
}

static cudaError_t copy_memory(void *dst, const void *src, size_t n, cudaStream_t s) {
  return cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s);
}

static cudaError_t copy_memory_2d(void *dst, size_t dpitch, const void *src, size_t spitch,
                                  size_t width, size_t height, cudaStream_t s) {
  return cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, cudaMemcpyDefault, s);
}

/* ---- streams and events ---- */

static cudaError_t stream_create(cudaStream_t *s, bool blocking, int priority) {
  return cudaStreamCreateWithPriority(s, blocking ? cudaStreamDefault : cudaStreamNonBlocking,
                                      priority);
}

static cudaError_t stream_properties(cudaStream_t s, bool *blocking, int *priority) {
  unsigned flags = 0;
  cudaError_t err = cudaStreamGetFlags(s, &flags);
  if (err == cudaSuccess) err = cudaStreamGetPriority(s, priority);
  *blocking = !(flags & cudaStreamNonBlocking);
  return err;
}

static cudaError_t stream_destroy(cudaStream_t s) { return cudaStreamDestroy(s); }
static cudaError_t stream_sync(cudaStream_t s) { return cudaStreamSynchronize(s); }
static cudaError_t stream_query(cudaStream_t s) { return cudaStreamQuery(s); }
static cudaError_t stream_wait(cudaStream_t s, cudaEvent_t e) {
  return cudaStreamWaitEvent(s, e, 0);
}

static cudaError_t event_create(cudaEvent_t *e, bool timing, bool blocking) {
  return cudaEventCreateWithFlags(e, (timing ? 0 : cudaEventDisableTiming) |
                                         (blocking ? cudaEventBlockingSync : 0));
}

static cudaError_t event_destroy(cudaEvent_t e) { return cudaEventDestroy(e); }
static cudaError_t event_record(cudaEvent_t e, cudaStream_t s) { return cudaEventRecord(e, s); }
static cudaError_t event_sync(cudaEvent_t e) { return cudaEventSynchronize(e); }
static cudaError_t event_query(cudaEvent_t e) { return cudaEventQuery(e); }

static cudaError_t event_elapsed(float *ms, cudaEvent_t start, cudaEvent_t stop) {
  return cudaEventElapsedTime(ms, start, stop);
}

/* ---- graphs ---- */

static cudaError_t capture_begin(cudaStream_t s) {
  return cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
}
static cudaError_t capture_end(cudaStream_t s, cudaGraph_t *graph) {
  return cudaStreamEndCapture(s, graph);
}

static cudaError_t graph_instantiate(cudaGraphExec_t *exec, cudaGraph_t graph) {
  return cudaGraphInstantiate(exec, graph, 0);
}

static cudaError_t graph_nodes(cudaGraph_t graph, size_t *n) {
  return cudaGraphGetNodes(graph, NULL, n);
}
static cudaError_t graph_launch(cudaGraphExec_t exec, cudaStream_t s) {
  return cudaGraphLaunch(exec, s);
}
static cudaError_t graph_destroy(cudaGraph_t graph) { return cudaGraphDestroy(graph); }
static cudaError_t graph_exec_destroy(cudaGraphExec_t exec) { return cudaGraphExecDestroy(exec); }

/* ---- kernels ---- */

static cudaError_t library_load(cudaLibrary_t *lib, const void *cubin) {
  return cudaLibraryLoadData(lib, cubin, NULL, NULL, 0, NULL, NULL, 0);
}

static cudaError_t library_unload(cudaLibrary_t lib) { return cudaLibraryUnload(lib); }

static cudaError_t kernel_get(cudaKernel_t *k, cudaLibrary_t lib, const char *lowered_name) {
  return cudaLibraryGetKernel(k, lib, lowered_name);
}

static cudaError_t kernel_attributes(struct cudaFuncAttributes *a, cudaKernel_t k) {
  return cudaFuncGetAttributes(a, (const void *)k);
}

static cudaError_t kernel_max_dynamic_smem(cudaKernel_t k, int bytes) {
  return cudaFuncSetAttribute((const void *)k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}

static cudaError_t occupancy(int *blocks, cudaKernel_t k, int block, size_t smem) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, (const void *)k, block, smem);
}

static cudaError_t launch(cudaKernel_t k, dim3 grid, dim3 block, void **args, size_t smem,
                          cudaStream_t s) {
  return cudaLaunchKernel((const void *)k, grid, block, args, smem, s);
}

static int host_call(wl_host_call_fn call, void *ctx, void *const *args, cudaStream_t s, char *why,
                     size_t whylen, cudaError_t *after) {
  (void)cudaGetLastError(); /* an error left by earlier work is not this work's */
  int rc = call(ctx, args, s, why, whylen);
  *after = rc == 0 ? cudaGetLastError() : cudaSuccess;
  return rc;
}

static cudaError_t set_memory_2d(void *p, size_t pitch, int value, size_t width, size_t height,
                                 cudaStream_t s) {
  return cudaMemset2DAsync(p, pitch, value, width, height, s);
}

static void name_stream(cudaStream_t s, const char *name) { nvtxNameCudaStreamA(s, name); }

const struct wl_backend wl_backend_cuda = {
    .name = "cuda",
    .no_device = NULL,
    .device_count = device_count,
    .open_device = open_device,
    .use_device = use_device,
    .check_context = check_context,
    .clear_error = clear_error,
    .device_sync = device_sync,
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
    .init = wl_init_device,
    .count_nonzero = wl_count_nonzero,
    .clock_probe = wl_clock_probe,
    .empty_kernel = wl_empty_kernel,
    .block_stream = wl_block_stream,
    .stream_create = stream_create,
    .stream_properties = stream_properties,
    .stream_destroy = stream_destroy,
    .stream_sync = stream_sync,
    .stream_query = stream_query,
    .stream_wait = stream_wait,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .event_record = event_record,
    .event_sync = event_sync,
    .event_query = event_query,
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
