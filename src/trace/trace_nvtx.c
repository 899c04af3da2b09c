/* The NVTX side: InitializeInjectionNvtx2, called by each NVTX instance of the process (the
 * program's, PyTorch's own copy, ...) through NVTX_INJECTION64_PATH with its export table; the
 * handlers of push/pop and start/end ranges (A, W and Ex forms, domains), registered strings,
 * domains and thread names go into that instance's CORE and CORE2 tables. Marks, categories,
 * resources and CUDA object names are not recorded: their slots stay NVTX's no-ops. */
#define NVTX_NO_IMPL /* the types only: a tool does not carry an NVTX implementation */
#include <nvtx3/nvToolsExt.h>

#include "trace_internal.h"

#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static struct wt_string *or_empty(struct wt_string *s) { return s ? s : wt_empty; }
static struct wt_string *domain_of(nvtxDomainHandle_t d) { return (struct wt_string *)(void *)d; }
static const struct wt_payload no_payload = {0, 0};

static struct wt_string *name_of(const nvtxEventAttributes_t *a) {
  if (!a) return wt_empty;
  switch (a->messageType) {
  case NVTX_MESSAGE_TYPE_ASCII: return or_empty(wt_intern_cstr(a->message.ascii));
  case NVTX_MESSAGE_TYPE_UNICODE: return or_empty(wt_intern_wide(a->message.unicode));
  case NVTX_MESSAGE_TYPE_REGISTERED:
    return or_empty((struct wt_string *)(void *)a->message.registered);
  default: return wt_empty;
  }
}

static struct wt_payload payload_of(const nvtxEventAttributes_t *a) {
  struct wt_payload p = no_payload;
  if (!a) return p;
  switch (a->payloadType) {
  case NVTX_PAYLOAD_TYPE_INT64: p.kind = 1, p.bits = (uint64_t)a->payload.llValue; break;
  case NVTX_PAYLOAD_TYPE_INT32: p.kind = 1, p.bits = (uint64_t)(int64_t)a->payload.iValue; break;
  case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64: p.kind = 2, p.bits = a->payload.ullValue; break;
  case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32: p.kind = 2, p.bits = a->payload.uiValue; break;
  default: break; /* floating-point payloads are not an integer payload */
  }
  return p;
}

/* ---- the handlers ---- */

static int RangePushEx(const nvtxEventAttributes_t *a) {
  return wt_push(NULL, name_of(a), payload_of(a));
}
static int RangePushA(const char *m) {
  return wt_push(NULL, or_empty(wt_intern_cstr(m)), no_payload);
}
static int RangePushW(const wchar_t *m) {
  return wt_push(NULL, or_empty(wt_intern_wide(m)), no_payload);
}
static int RangePop(void) { return wt_pop(NULL); }
static int DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  return wt_push(domain_of(d), name_of(a), payload_of(a));
}
static int DomainRangePop(nvtxDomainHandle_t d) { return wt_pop(domain_of(d)); }

static nvtxRangeId_t RangeStartEx(const nvtxEventAttributes_t *a) {
  return wt_start(NULL, name_of(a), payload_of(a));
}
static nvtxRangeId_t RangeStartA(const char *m) {
  return wt_start(NULL, or_empty(wt_intern_cstr(m)), no_payload);
}
static nvtxRangeId_t RangeStartW(const wchar_t *m) {
  return wt_start(NULL, or_empty(wt_intern_wide(m)), no_payload);
}
static void RangeEnd(nvtxRangeId_t id) { wt_end_range(id); }
static nvtxRangeId_t DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  return wt_start(domain_of(d), name_of(a), payload_of(a));
}
static void DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  (void)d; /* ids are unique in the process, whatever the domain */
  wt_end_range(id);
}

/* Domains and registered strings are interned strings: one handle per text, valid for ever. */
static nvtxDomainHandle_t DomainCreateA(const char *n) {
  return (nvtxDomainHandle_t)(void *)wt_intern_cstr(n);
}
static nvtxDomainHandle_t DomainCreateW(const wchar_t *n) {
  return (nvtxDomainHandle_t)(void *)wt_intern_wide(n);
}
static nvtxStringHandle_t DomainRegisterStringA(nvtxDomainHandle_t d, const char *s) {
  (void)d;
  return (nvtxStringHandle_t)(void *)wt_intern_cstr(s);
}
static nvtxStringHandle_t DomainRegisterStringW(nvtxDomainHandle_t d, const wchar_t *s) {
  (void)d;
  return (nvtxStringHandle_t)(void *)wt_intern_wide(s);
}

static void NameOsThreadA(uint32_t tid, const char *n) { wt_name_thread(tid, wt_intern_cstr(n)); }
static void NameOsThreadW(uint32_t tid, const wchar_t *n) {
  wt_name_thread(tid, wt_intern_wide(n));
}

/* ---- installation ---- */

/* a handler as the tables hold it; void (*)(void) converts from any function pointer type */
#define HANDLER(f) ((NvtxFunctionPointer)(void (*)(void))(f))

struct handler {
  unsigned id;
  NvtxFunctionPointer fn;
};

/* Writes the handlers into one module's function table of an NVTX instance. */
static int install(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module,
                   const struct handler *h, size_t n) {
  NvtxFunctionTable table = NULL;
  unsigned int size = 0;
  if (!cb->GetModuleFunctionTable(module, &table, &size) || !table) return 0;
  for (size_t i = 0; i < n; i++)
    if (h[i].id < size && table[h[i].id]) *table[h[i].id] = h[i].fn;
  return 1;
}

EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable);

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable) {
  static const struct handler core[] = {
      {NVTX_CBID_CORE_RangeStartEx, HANDLER(RangeStartEx)},
      {NVTX_CBID_CORE_RangeStartA, HANDLER(RangeStartA)},
      {NVTX_CBID_CORE_RangeStartW, HANDLER(RangeStartW)},
      {NVTX_CBID_CORE_RangeEnd, HANDLER(RangeEnd)},
      {NVTX_CBID_CORE_RangePushEx, HANDLER(RangePushEx)},
      {NVTX_CBID_CORE_RangePushA, HANDLER(RangePushA)},
      {NVTX_CBID_CORE_RangePushW, HANDLER(RangePushW)},
      {NVTX_CBID_CORE_RangePop, HANDLER(RangePop)},
      {NVTX_CBID_CORE_NameOsThreadA, HANDLER(NameOsThreadA)},
      {NVTX_CBID_CORE_NameOsThreadW, HANDLER(NameOsThreadW)},
  };
  static const struct handler core2[] = {
      {NVTX_CBID_CORE2_DomainRangeStartEx, HANDLER(DomainRangeStartEx)},
      {NVTX_CBID_CORE2_DomainRangeEnd, HANDLER(DomainRangeEnd)},
      {NVTX_CBID_CORE2_DomainRangePushEx, HANDLER(DomainRangePushEx)},
      {NVTX_CBID_CORE2_DomainRangePop, HANDLER(DomainRangePop)},
      {NVTX_CBID_CORE2_DomainRegisterStringA, HANDLER(DomainRegisterStringA)},
      {NVTX_CBID_CORE2_DomainRegisterStringW, HANDLER(DomainRegisterStringW)},
      {NVTX_CBID_CORE2_DomainCreateA, HANDLER(DomainCreateA)},
      {NVTX_CBID_CORE2_DomainCreateW, HANDLER(DomainCreateW)},
  };
  if (!getExportTable || !wt_init()) return 0; /* 0: NVTX turns this instance's calls into no-ops */
  const NvtxExportTableCallbacks *cb = getExportTable(NVTX_ETID_CALLBACKS);
  if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable) return 0;
  if (!install(cb, NVTX_CB_MODULE_CORE, core, sizeof core / sizeof core[0]) ||
      !install(cb, NVTX_CB_MODULE_CORE2, core2, sizeof core2 / sizeof core2[0]))
    return 0;
  const NvtxExportTableVersionInfo *vi = getExportTable(NVTX_ETID_VERSIONINFO);
  if (vi && vi->struct_size >= sizeof *vi && vi->SetInjectionNvtxVersion)
    vi->SetInjectionNvtxVersion(NVTX_VERSION);
  return 1;
}
