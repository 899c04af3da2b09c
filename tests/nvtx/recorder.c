/* An NVTX injection library that records every NVTX call, for the specs (docs/nvtx.md).
 *
 *   NVTX_INJECTION64_PATH=build/libnvtx_recorder.so WLRUN_NVTX_RECORD=events.txt wlrun x.lua
 *
 * Each NVTX instance of the process (wlrun's, and any other library's copy of NVTX3) finds it
 * through NVTX_INJECTION64_PATH and calls InitializeInjectionNvtx2 with its export table; the
 * recorder installs its handlers into that instance's CORE, CORE2, CUDA and CUDART function
 * tables. A second instance's initialisation is accepted like the first (domains, by name,
 * are shared between instances). Every string is copied inside the handler that receives it.
 *
 * Output: one line per event, appended and flushed at once, to the file named by
 * WLRUN_NVTX_RECORD (standard error when unset). A line is the event's kind, then
 * tab-separated key=value fields in a fixed order per kind:
 *
 *   init             instance= version=
 *   domain_create    domain=
 *   domain_destroy   domain=
 *   push             domain= level= name= message= category= color= payload=
 *   pop              domain= level= name=
 *   start            domain= id= name= message= category= color= payload=
 *   end              domain= id= name=
 *   mark             domain= name= message= category= color= payload=
 *   name_category    domain= category= name=
 *   register_string  domain= name=
 *   name_thread      thread= name=
 *   name_device | name_stream | name_event   (CUDA runtime)   handle= name=
 *   name_cu_device | name_cu_context | name_cu_stream | name_cu_event (driver)  handle= name=
 *   resource_create  domain=      resource_destroy      initialize
 *
 * domain= is empty for the default (global) domain. level= is the nesting level (0: outermost):
 * a pushed range's level, the popped range's level (-1 for a pop without a push). id= numbers
 * start/end ranges from 1. message= is ascii, unicode, registered or none. color= is
 * 0xAARRGGBB or none; payload= is TYPE:VALUE (int64:7, uint64:7, int32:7, uint32:7,
 * double:2.5, float:2.5) or none. In values, backslash, tab, newline and carriage return are
 * written \\, \t, \n, \r; other control characters \xHH. */
#define NVTX_NO_IMPL /* the types only: a tool does not carry an NVTX implementation */
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define EXPORT __attribute__((visibility("default")))

struct rdomain {
  char *name; /* "" for the default domain */
  int depth, cap;
  char **stack; /* names of the pushed ranges */
  struct rdomain *next;
};

struct rstring {
  struct rdomain *dom;
  char *text;
  struct rstring *next; /* every registered string, freed when the process ends */
};

static struct rstring *all_strings;

struct rrange {
  uint64_t id;
  struct rdomain *dom;
  char *name;
  struct rrange *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;
static int instances;
static struct rdomain global_domain = {"", 0, 0, NULL, NULL};
static struct rdomain *domains; /* named domains, created once per name */
static struct rrange *open_ranges;
static uint64_t next_range_id = 1;

static char *copy(const char *s) {
  char *c = strdup(s ? s : "");
  if (!c) abort();
  return c;
}

/* wide strings: ASCII kept, anything else '?' */
static char *copy_wide(const wchar_t *w) {
  size_t n = w ? wcslen(w) : 0;
  char *c = malloc(n + 1);
  if (!c) abort();
  for (size_t i = 0; i < n; i++) c[i] = w[i] > 0 && w[i] < 128 ? (char)w[i] : '?';
  c[n] = 0;
  return c;
}

/* ---- the line being written (under the lock) ---- */

static char line[65536];
static size_t len;

static void put(const char *s) {
  size_t n = strlen(s);
  if (len + n >= sizeof line - 2) n = sizeof line - 2 - len;
  memcpy(line + len, s, n);
  len += n;
}

static void begin(const char *kind) {
  len = 0;
  put(kind);
}

/* a field: tab, key, '=', the escaped value */
static void field(const char *key, const char *value) {
  char esc[8];
  put("\t");
  put(key);
  put("=");
  for (const unsigned char *p = (const unsigned char *)(value ? value : ""); *p; p++) {
    if (*p == '\\') put("\\\\");
    else if (*p == '\t') put("\\t");
    else if (*p == '\n') put("\\n");
    else if (*p == '\r') put("\\r");
    else if (*p < 0x20 || *p == 0x7f) {
      snprintf(esc, sizeof esc, "\\x%02X", *p);
      put(esc);
    } else {
      char c[2] = {(char)*p, 0};
      put(c);
    }
  }
}

static void fieldf(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fieldf(const char *key, const char *fmt, ...) {
  char buf[128];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  field(key, buf);
}

static void end_line(void) {
  line[len++] = '\n';
  fwrite(line, 1, len, out);
  fflush(out);
}

/* ---- domains and attributes ---- */

static struct rdomain *domain_of(nvtxDomainHandle_t h) {
  return h ? (struct rdomain *)(void *)h : &global_domain;
}

static struct rdomain *domain_named(const char *name) {
  for (struct rdomain *d = domains; d; d = d->next)
    if (strcmp(d->name, name) == 0) return d;
  struct rdomain *d = calloc(1, sizeof *d);
  if (!d) abort();
  d->name = copy(name);
  d->next = domains;
  domains = d;
  return d;
}

/* the text of an event's message, copied */
static char *message_text(const nvtxEventAttributes_t *a, const char **type) {
  if (!a) {
    *type = "none";
    return copy("");
  }
  switch (a->messageType) {
  case NVTX_MESSAGE_TYPE_ASCII: *type = "ascii"; return copy(a->message.ascii);
  case NVTX_MESSAGE_TYPE_UNICODE: *type = "unicode"; return copy_wide(a->message.unicode);
  case NVTX_MESSAGE_TYPE_REGISTERED: {
    const struct rstring *r = (const struct rstring *)(const void *)a->message.registered;
    *type = "registered";
    return copy(r ? r->text : "");
  }
  default: *type = "none"; return copy("");
  }
}

/* the fields after the name: message= category= color= payload= */
static void attribute_fields(const nvtxEventAttributes_t *a, const char *type) {
  field("message", type);
  fieldf("category", "%u", a ? a->category : 0u);
  if (a && a->colorType == NVTX_COLOR_ARGB) fieldf("color", "0x%08X", a->color);
  else field("color", "none");
  if (!a) {
    field("payload", "none");
    return;
  }
  switch (a->payloadType) {
  case NVTX_PAYLOAD_TYPE_INT64:
    fieldf("payload", "int64:%lld", (long long)a->payload.llValue);
    break;
  case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
    fieldf("payload", "uint64:%llu", (unsigned long long)a->payload.ullValue);
    break;
  case NVTX_PAYLOAD_TYPE_INT32: fieldf("payload", "int32:%d", (int)a->payload.iValue); break;
  case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
    fieldf("payload", "uint32:%u", (unsigned)a->payload.uiValue);
    break;
  case NVTX_PAYLOAD_TYPE_DOUBLE: fieldf("payload", "double:%.17g", a->payload.dValue); break;
  case NVTX_PAYLOAD_TYPE_FLOAT: fieldf("payload", "float:%.9g", (double)a->payload.fValue); break;
  default: field("payload", "none"); break;
  }
}

/* ---- ranges ---- */

static int push(struct rdomain *d, const nvtxEventAttributes_t *a) {
  const char *type;
  char *name = message_text(a, &type);
  pthread_mutex_lock(&lock);
  if (d->depth == d->cap) {
    d->cap = d->cap ? 2 * d->cap : 16;
    d->stack = realloc(d->stack, (size_t)d->cap * sizeof *d->stack);
    if (!d->stack) abort();
  }
  int level = d->depth;
  d->stack[d->depth++] = name;
  begin("push");
  field("domain", d->name);
  fieldf("level", "%d", level);
  field("name", name);
  attribute_fields(a, type);
  end_line();
  pthread_mutex_unlock(&lock);
  return level;
}

static int pop(struct rdomain *d) {
  pthread_mutex_lock(&lock);
  int level = d->depth - 1;
  char *name = level >= 0 ? d->stack[--d->depth] : NULL;
  begin("pop");
  field("domain", d->name);
  fieldf("level", "%d", level);
  field("name", name);
  end_line();
  pthread_mutex_unlock(&lock);
  free(name);
  return level;
}

static nvtxRangeId_t start(struct rdomain *d, const nvtxEventAttributes_t *a) {
  const char *type;
  char *name = message_text(a, &type);
  struct rrange *r = malloc(sizeof *r);
  if (!r) abort();
  pthread_mutex_lock(&lock);
  r->id = next_range_id++;
  r->dom = d;
  r->name = name;
  r->next = open_ranges;
  open_ranges = r;
  begin("start");
  field("domain", d->name);
  fieldf("id", "%llu", (unsigned long long)r->id);
  field("name", name);
  attribute_fields(a, type);
  end_line();
  pthread_mutex_unlock(&lock);
  return r->id;
}

static void range_end(struct rdomain *d, nvtxRangeId_t id) {
  struct rrange *found = NULL;
  pthread_mutex_lock(&lock);
  for (struct rrange **p = &open_ranges; *p; p = &(*p)->next) {
    if ((*p)->id == id) {
      found = *p;
      *p = found->next;
      break;
    }
  }
  begin("end");
  field("domain", found ? found->dom->name : d->name);
  fieldf("id", "%llu", (unsigned long long)id);
  field("name", found ? found->name : "");
  end_line();
  pthread_mutex_unlock(&lock);
  if (found) {
    free(found->name);
    free(found);
  }
}

static void mark(struct rdomain *d, const nvtxEventAttributes_t *a) {
  const char *type;
  char *name = message_text(a, &type);
  pthread_mutex_lock(&lock);
  begin("mark");
  field("domain", d->name);
  field("name", name);
  attribute_fields(a, type);
  end_line();
  pthread_mutex_unlock(&lock);
  free(name);
}

/* an event with a copied name: kind, then key=value (a number or a handle), then name= */
static void named_event(const char *kind, const char *key, const char *value, char *name) {
  pthread_mutex_lock(&lock);
  begin(kind);
  if (key) field(key, value);
  field("name", name);
  end_line();
  pthread_mutex_unlock(&lock);
  free(name);
}

static void name_category(struct rdomain *d, uint32_t category, char *name) {
  pthread_mutex_lock(&lock);
  begin("name_category");
  field("domain", d->name);
  fieldf("category", "%u", category);
  field("name", name);
  end_line();
  pthread_mutex_unlock(&lock);
  free(name);
}

static void handle_event(const char *kind, const void *handle, char *name) {
  char buf[32];
  snprintf(buf, sizeof buf, "%p", handle);
  named_event(kind, "handle", buf, name);
}

/* ---- the handlers ---- */

/* the attributes of the A and W calls: a message only */
static nvtxEventAttributes_t ascii(const char *m) {
  nvtxEventAttributes_t a;
  memset(&a, 0, sizeof a);
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = m;
  return a;
}

static nvtxEventAttributes_t wide(const wchar_t *m) {
  nvtxEventAttributes_t a = ascii(NULL);
  a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  a.message.unicode = m;
  return a;
}

/* core: the default domain */
static void MarkEx(const nvtxEventAttributes_t *a) { mark(&global_domain, a); }
static void MarkA(const char *m) {
  nvtxEventAttributes_t a = ascii(m);
  mark(&global_domain, &a);
}
static void MarkW(const wchar_t *m) {
  nvtxEventAttributes_t a = wide(m);
  mark(&global_domain, &a);
}
static nvtxRangeId_t RangeStartEx(const nvtxEventAttributes_t *a) {
  return start(&global_domain, a);
}
static nvtxRangeId_t RangeStartA(const char *m) {
  nvtxEventAttributes_t a = ascii(m);
  return start(&global_domain, &a);
}
static nvtxRangeId_t RangeStartW(const wchar_t *m) {
  nvtxEventAttributes_t a = wide(m);
  return start(&global_domain, &a);
}
static void RangeEnd(nvtxRangeId_t id) { range_end(&global_domain, id); }
static int RangePushEx(const nvtxEventAttributes_t *a) { return push(&global_domain, a); }
static int RangePushA(const char *m) {
  nvtxEventAttributes_t a = ascii(m);
  return push(&global_domain, &a);
}
static int RangePushW(const wchar_t *m) {
  nvtxEventAttributes_t a = wide(m);
  return push(&global_domain, &a);
}
static int RangePop(void) { return pop(&global_domain); }
static void NameCategoryA(uint32_t c, const char *n) { name_category(&global_domain, c, copy(n)); }
static void NameCategoryW(uint32_t c, const wchar_t *n) {
  name_category(&global_domain, c, copy_wide(n));
}
static void NameOsThreadA(uint32_t t, const char *n) {
  char buf[16];
  snprintf(buf, sizeof buf, "%u", t);
  named_event("name_thread", "thread", buf, copy(n));
}
static void NameOsThreadW(uint32_t t, const wchar_t *n) {
  char buf[16];
  snprintf(buf, sizeof buf, "%u", t);
  named_event("name_thread", "thread", buf, copy_wide(n));
}

/* core2: domains */
static void DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  mark(domain_of(d), a);
}
static nvtxRangeId_t DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  return start(domain_of(d), a);
}
static void DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) { range_end(domain_of(d), id); }
static int DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  return push(domain_of(d), a);
}
static int DomainRangePop(nvtxDomainHandle_t d) { return pop(domain_of(d)); }
static nvtxResourceHandle_t DomainResourceCreate(nvtxDomainHandle_t d,
                                                 nvtxResourceAttributes_t *attr) {
  (void)attr;
  named_event("resource_create", "domain", domain_of(d)->name, copy(""));
  static char token;
  return (nvtxResourceHandle_t)(void *)&token;
}
static void DomainResourceDestroy(nvtxResourceHandle_t r) {
  (void)r;
  named_event("resource_destroy", NULL, NULL, copy(""));
}
static void DomainNameCategoryA(nvtxDomainHandle_t d, uint32_t c, const char *n) {
  name_category(domain_of(d), c, copy(n));
}
static void DomainNameCategoryW(nvtxDomainHandle_t d, uint32_t c, const wchar_t *n) {
  name_category(domain_of(d), c, copy_wide(n));
}
static nvtxStringHandle_t register_string(nvtxDomainHandle_t d, char *text) {
  struct rstring *r = malloc(sizeof *r);
  if (!r) abort();
  r->dom = domain_of(d);
  r->text = text;
  pthread_mutex_lock(&lock);
  r->next = all_strings;
  all_strings = r;
  begin("register_string");
  field("domain", r->dom->name);
  field("name", text);
  end_line();
  pthread_mutex_unlock(&lock);
  return (nvtxStringHandle_t)(void *)r;
}
/* registered strings live as long as the process (NVTX handles have no release); free them at
 * its end so that leak checkers see no leak */
__attribute__((destructor)) static void free_strings(void) {
  while (all_strings) {
    struct rstring *r = all_strings;
    all_strings = r->next;
    free(r->text);
    free(r);
  }
}

static nvtxStringHandle_t DomainRegisterStringA(nvtxDomainHandle_t d, const char *s) {
  return register_string(d, copy(s));
}
static nvtxStringHandle_t DomainRegisterStringW(nvtxDomainHandle_t d, const wchar_t *s) {
  return register_string(d, copy_wide(s));
}
static nvtxDomainHandle_t create_domain(char *name) {
  pthread_mutex_lock(&lock);
  struct rdomain *d = domain_named(name);
  begin("domain_create");
  field("domain", name);
  end_line();
  pthread_mutex_unlock(&lock);
  free(name);
  return (nvtxDomainHandle_t)(void *)d;
}
static nvtxDomainHandle_t DomainCreateA(const char *n) { return create_domain(copy(n)); }
static nvtxDomainHandle_t DomainCreateW(const wchar_t *n) { return create_domain(copy_wide(n)); }
static void DomainDestroy(nvtxDomainHandle_t d) {
  named_event("domain_destroy", "domain", domain_of(d)->name,
              copy("")); /* kept: handles stay valid */
}
static void Initialize(const void *reserved) {
  (void)reserved;
  named_event("initialize", NULL, NULL, copy(""));
}

/* CUDA runtime and driver: naming */
static void NameCudaDeviceA(int dev, const char *n) {
  char buf[16];
  snprintf(buf, sizeof buf, "%d", dev);
  named_event("name_device", "handle", buf, copy(n));
}
static void NameCudaDeviceW(int dev, const wchar_t *n) {
  char buf[16];
  snprintf(buf, sizeof buf, "%d", dev);
  named_event("name_device", "handle", buf, copy_wide(n));
}
static void NameCudaStreamA(void *s, const char *n) { handle_event("name_stream", s, copy(n)); }
static void NameCudaStreamW(void *s, const wchar_t *n) {
  handle_event("name_stream", s, copy_wide(n));
}
static void NameCudaEventA(void *e, const char *n) { handle_event("name_event", e, copy(n)); }
static void NameCudaEventW(void *e, const wchar_t *n) {
  handle_event("name_event", e, copy_wide(n));
}
static void NameCuDeviceA(int dev, const char *n) {
  char buf[16];
  snprintf(buf, sizeof buf, "%d", dev);
  named_event("name_cu_device", "handle", buf, copy(n));
}
static void NameCuDeviceW(int dev, const wchar_t *n) {
  char buf[16];
  snprintf(buf, sizeof buf, "%d", dev);
  named_event("name_cu_device", "handle", buf, copy_wide(n));
}
static void NameCuContextA(void *c, const char *n) { handle_event("name_cu_context", c, copy(n)); }
static void NameCuContextW(void *c, const wchar_t *n) {
  handle_event("name_cu_context", c, copy_wide(n));
}
static void NameCuStreamA(void *s, const char *n) { handle_event("name_cu_stream", s, copy(n)); }
static void NameCuStreamW(void *s, const wchar_t *n) {
  handle_event("name_cu_stream", s, copy_wide(n));
}
static void NameCuEventA(void *e, const char *n) { handle_event("name_cu_event", e, copy(n)); }
static void NameCuEventW(void *e, const wchar_t *n) {
  handle_event("name_cu_event", e, copy_wide(n));
}

/* ---- initialisation ---- */

/* a handler as the tables hold it; void (*)(void) converts from any function pointer type */
#define FN(f) ((NvtxFunctionPointer)(void (*)(void))(f))

struct slot {
  unsigned id;
  NvtxFunctionPointer fn;
};

/* Writes the handlers into one module's table of this NVTX instance. */
static int install(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module,
                   const struct slot *slots, size_t n) {
  NvtxFunctionTable table = NULL;
  unsigned int size = 0;
  if (!cb->GetModuleFunctionTable(module, &table, &size) || !table) return 0;
  for (size_t i = 0; i < n; i++)
    if (slots[i].id < size && table[slots[i].id]) *table[slots[i].id] = slots[i].fn;
  return 1;
}

EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable);

/* Called once by each NVTX instance in the process, with that instance's export table. */
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable) {
  static const struct slot core[] = {
      {NVTX_CBID_CORE_MarkEx, FN(MarkEx)},
      {NVTX_CBID_CORE_MarkA, FN(MarkA)},
      {NVTX_CBID_CORE_MarkW, FN(MarkW)},
      {NVTX_CBID_CORE_RangeStartEx, FN(RangeStartEx)},
      {NVTX_CBID_CORE_RangeStartA, FN(RangeStartA)},
      {NVTX_CBID_CORE_RangeStartW, FN(RangeStartW)},
      {NVTX_CBID_CORE_RangeEnd, FN(RangeEnd)},
      {NVTX_CBID_CORE_RangePushEx, FN(RangePushEx)},
      {NVTX_CBID_CORE_RangePushA, FN(RangePushA)},
      {NVTX_CBID_CORE_RangePushW, FN(RangePushW)},
      {NVTX_CBID_CORE_RangePop, FN(RangePop)},
      {NVTX_CBID_CORE_NameCategoryA, FN(NameCategoryA)},
      {NVTX_CBID_CORE_NameCategoryW, FN(NameCategoryW)},
      {NVTX_CBID_CORE_NameOsThreadA, FN(NameOsThreadA)},
      {NVTX_CBID_CORE_NameOsThreadW, FN(NameOsThreadW)},
  };
  static const struct slot core2[] = {
      {NVTX_CBID_CORE2_DomainMarkEx, FN(DomainMarkEx)},
      {NVTX_CBID_CORE2_DomainRangeStartEx, FN(DomainRangeStartEx)},
      {NVTX_CBID_CORE2_DomainRangeEnd, FN(DomainRangeEnd)},
      {NVTX_CBID_CORE2_DomainRangePushEx, FN(DomainRangePushEx)},
      {NVTX_CBID_CORE2_DomainRangePop, FN(DomainRangePop)},
      {NVTX_CBID_CORE2_DomainResourceCreate, FN(DomainResourceCreate)},
      {NVTX_CBID_CORE2_DomainResourceDestroy, FN(DomainResourceDestroy)},
      {NVTX_CBID_CORE2_DomainNameCategoryA, FN(DomainNameCategoryA)},
      {NVTX_CBID_CORE2_DomainNameCategoryW, FN(DomainNameCategoryW)},
      {NVTX_CBID_CORE2_DomainRegisterStringA, FN(DomainRegisterStringA)},
      {NVTX_CBID_CORE2_DomainRegisterStringW, FN(DomainRegisterStringW)},
      {NVTX_CBID_CORE2_DomainCreateA, FN(DomainCreateA)},
      {NVTX_CBID_CORE2_DomainCreateW, FN(DomainCreateW)},
      {NVTX_CBID_CORE2_DomainDestroy, FN(DomainDestroy)},
      {NVTX_CBID_CORE2_Initialize, FN(Initialize)},
  };
  static const struct slot cudart[] = {
      {NVTX_CBID_CUDART_NameCudaDeviceA, FN(NameCudaDeviceA)},
      {NVTX_CBID_CUDART_NameCudaDeviceW, FN(NameCudaDeviceW)},
      {NVTX_CBID_CUDART_NameCudaStreamA, FN(NameCudaStreamA)},
      {NVTX_CBID_CUDART_NameCudaStreamW, FN(NameCudaStreamW)},
      {NVTX_CBID_CUDART_NameCudaEventA, FN(NameCudaEventA)},
      {NVTX_CBID_CUDART_NameCudaEventW, FN(NameCudaEventW)},
  };
  static const struct slot cuda[] = {
      {NVTX_CBID_CUDA_NameCuDeviceA, FN(NameCuDeviceA)},
      {NVTX_CBID_CUDA_NameCuDeviceW, FN(NameCuDeviceW)},
      {NVTX_CBID_CUDA_NameCuContextA, FN(NameCuContextA)},
      {NVTX_CBID_CUDA_NameCuContextW, FN(NameCuContextW)},
      {NVTX_CBID_CUDA_NameCuStreamA, FN(NameCuStreamA)},
      {NVTX_CBID_CUDA_NameCuStreamW, FN(NameCuStreamW)},
      {NVTX_CBID_CUDA_NameCuEventA, FN(NameCuEventA)},
      {NVTX_CBID_CUDA_NameCuEventW, FN(NameCuEventW)},
  };
  if (!getExportTable) return 0;
  const NvtxExportTableCallbacks *cb = getExportTable(NVTX_ETID_CALLBACKS);
  if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable) return 0;

  pthread_mutex_lock(&lock);
  if (!out) {
    const char *path = getenv("WLRUN_NVTX_RECORD");
    out = path && *path ? fopen(path, "a") : stderr;
    if (!out) {
      pthread_mutex_unlock(&lock);
      fprintf(stderr, "nvtx recorder: cannot open WLRUN_NVTX_RECORD=%s\n", path);
      return 0; /* NVTX turns this instance's calls into no-ops */
    }
  }
  pthread_mutex_unlock(&lock);

  if (!install(cb, NVTX_CB_MODULE_CORE, core, sizeof core / sizeof core[0]) ||
      !install(cb, NVTX_CB_MODULE_CORE2, core2, sizeof core2 / sizeof core2[0]) ||
      !install(cb, NVTX_CB_MODULE_CUDART, cudart, sizeof cudart / sizeof cudart[0]))
    return 0;
  install(cb, NVTX_CB_MODULE_CUDA, cuda, sizeof cuda / sizeof cuda[0]); /* optional */

  unsigned version = 0;
  const NvtxExportTableVersionInfo *vi = getExportTable(NVTX_ETID_VERSIONINFO);
  if (vi && vi->struct_size >= sizeof *vi) {
    version = vi->version;
    if (vi->SetInjectionNvtxVersion) vi->SetInjectionNvtxVersion(NVTX_VERSION);
  }
  pthread_mutex_lock(&lock);
  begin("init");
  fieldf("instance", "%d", ++instances);
  fieldf("version", "%u", version);
  end_line();
  pthread_mutex_unlock(&lock);
  return 1;
}
