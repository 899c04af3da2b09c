#include "kernel_module.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a message into err (which may be NULL: the caller only wants to know) */
#define set_err(err, errlen, ...) \
  ((err) && (errlen) ? (void)snprintf((err), (errlen), __VA_ARGS__) : (void)0)

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const unsigned char *p) {
  return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16;
}
static uint64_t rd64(const unsigned char *p) {
  return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* ---- formats ---- */

static const char *const format_names[] = {[WL_MODULE_UNKNOWN] = "unknown",
                                           [WL_MODULE_CUBIN] = "cubin",
                                           [WL_MODULE_FATBIN] = "fatbin",
                                           [WL_MODULE_PTX] = "ptx"};

const char *wl_module_format_name(enum wl_module_format f) { return format_names[f]; }

enum wl_module_format wl_module_format_named(const char *name) {
  for (int f = WL_MODULE_CUBIN; f <= WL_MODULE_PTX; f++)
    if (strcmp(name, format_names[f]) == 0) return (enum wl_module_format)f;
  return WL_MODULE_UNKNOWN;
}

enum wl_module_format wl_module_format_of_path(const char *path) {
  const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
  if (!dot || (slash && dot < slash)) return WL_MODULE_UNKNOWN;
  return wl_module_format_named(dot + 1);
}

/* ---- ELF (cubin) ---- */

#define ELF_HEADER 64
#define SECTION_HEADER 64
#define SYMBOL 24
#define SHT_SYMTAB 2
#define SHT_NV_INFO 0x70000000u
#define STT_FUNC 2
#define STO_CUDA_ENTRY 0x10 /* st_other of a kernel (an entry), as opposed to a device function */
#define EIATTR_KPARAM_INFO 0x17
#define EIFMT_SVAL 4

struct elf {
  const unsigned char *data;
  size_t len;
  uint64_t shoff;
  unsigned shnum, shstrndx;
};

struct section {
  uint32_t name, type, link;
  uint64_t offset, size;
};

static bool elf_section(const struct elf *e, unsigned i, struct section *s) {
  if (i >= e->shnum) return false;
  const unsigned char *h = e->data + e->shoff + (uint64_t)i * SECTION_HEADER;
  s->name = rd32(h);
  s->type = rd32(h + 4);
  s->offset = rd64(h + 24);
  s->size = rd64(h + 32);
  s->link = rd32(h + 40);
  if (s->type == 8) { /* SHT_NOBITS: memory at load time, no bytes in the file to read */
    s->offset = s->size = 0;
    return true;
  }
  return s->offset <= e->len && s->size <= e->len - s->offset;
}

/* a NUL-terminated string at off in string table section i, or NULL */
static const char *elf_string(const struct elf *e, unsigned i, uint32_t off) {
  struct section s;
  if (!elf_section(e, i, &s) || off >= s.size) return NULL;
  const char *p = (const char *)e->data + s.offset + off;
  return memchr(p, '\0', s.size - off) ? p : NULL;
}

/* Checks the ELF header and that every section lies inside the file. */
static bool elf_open(struct elf *e, const unsigned char *data, size_t len, int *sm, char *err,
                     size_t errlen) {
  memset(e, 0, sizeof *e);
  if (len < 4 || memcmp(data, "\177ELF", 4) != 0) {
    set_err(err, errlen, "not a cubin (no ELF header)");
    return false;
  }
  if (len < ELF_HEADER) {
    set_err(err, errlen, "truncated cubin (%zu bytes, shorter than an ELF header)", len);
    return false;
  }
  if (data[4] != 2 || data[5] != 1 || rd16(data + 18) != 190 /* EM_CUDA */) {
    set_err(err, errlen, "not a cubin (an ELF file, but not 64-bit little-endian CUDA code)");
    return false;
  }
  e->data = data;
  e->len = len;
  e->shoff = rd64(data + 40);
  e->shnum = rd16(data + 60);
  e->shstrndx = rd16(data + 62);
  if (rd16(data + 58) != SECTION_HEADER || e->shoff > len ||
      (uint64_t)e->shnum * SECTION_HEADER > len - e->shoff) {
    set_err(
        err, errlen,
        "truncated or corrupt cubin (its section table lies past the end of the file, %zu bytes)",
        len);
    return false;
  }
  for (unsigned i = 0; i < e->shnum; i++) {
    struct section s;
    if (!elf_section(e, i, &s)) {
      set_err(err, errlen,
              "truncated or corrupt cubin (section %u lies past the end of the file, %zu bytes)", i,
              len);
      return false;
    }
  }
  uint32_t flags = rd32(data + 48);
  /* EI_ABIVERSION 8 and later (CUDA 12.8+) keep the SM version in bits 8-15, older in 0-7 */
  *sm = data[8] >= 8 ? (int)(flags >> 8 & 0xff) : (int)(flags & 0xff);
  return true;
}

static void elf_kernels(const struct elf *e, void (*fn)(const char *, size_t, void *), void *ctx,
                        int *count) {
  for (unsigned i = 0; i < e->shnum; i++) {
    struct section s;
    if (!elf_section(e, i, &s) || s.type != SHT_SYMTAB) continue;
    for (uint64_t off = 0; off + SYMBOL <= s.size; off += SYMBOL) {
      const unsigned char *sym = e->data + s.offset + off;
      if ((sym[4] & 0xf) != STT_FUNC || !(sym[5] & STO_CUDA_ENTRY)) continue;
      const char *name = elf_string(e, s.link, rd32(sym));
      if (!name || !*name) continue;
      (*count)++;
      if (fn) fn(name, strlen(name), ctx);
    }
  }
}


struct find_ctx {
  const char *name;
  bool found;
};

static void find_one(const char *n, size_t len, void *ctx) {
  struct find_ctx *f = ctx;
  if (strlen(f->name) == len && memcmp(f->name, n, len) == 0) f->found = true;
}

static bool elf_has_kernel_fn(const struct elf *e, const char *name) {
  struct find_ctx f = {name, false};
  int n = 0;
  elf_kernels(e, find_one, &f, &n);
  return f.found;
}

/* The kernel's EIATTR_KPARAM_INFO records: ordinal, offset and size of each parameter. */
static bool elf_params(const struct elf *e, const char *name, struct wl_signature *sig, char *err,
                       size_t errlen) {
  memset(sig, 0, sizeof *sig);
  if (!elf_has_kernel_fn(e, name)) {
    set_err(err, errlen, "kernel '%s' not found in the cubin", name);
    return false;
  }
  bool seen[WL_MAX_PARAMS] = {false};
  for (unsigned i = 0; i < e->shnum; i++) {
    struct section s;
    const char *sname;
    if (!elf_section(e, i, &s) || s.type != SHT_NV_INFO ||
        !(sname = elf_string(e, e->shstrndx, s.name)) || strncmp(sname, ".nv.info.", 9) != 0 ||
        strcmp(sname + 9, name) != 0)
      continue;
    const unsigned char *p = e->data + s.offset, *end = p + s.size;
    while (end - p >= 4) {
      unsigned fmt = p[0], attr = p[1], size = fmt == EIFMT_SVAL ? rd16(p + 2) : 0;
      if ((size_t)(end - p - 4) < size) {
        set_err(err, errlen, "corrupt cubin (the attributes of kernel '%s' run past their section)",
                name);
        return false;
      }
      if (fmt == EIFMT_SVAL && attr == EIATTR_KPARAM_INFO && size >= 12) {
        unsigned ordinal = rd16(p + 8), offset = rd16(p + 10), bytes = rd32(p + 12) >> 18;
        if (ordinal >= WL_MAX_PARAMS || bytes == 0 || seen[ordinal]) {
          set_err(err, errlen, "corrupt cubin (parameter record %u of kernel '%s')", ordinal, name);
          return false;
        }
        seen[ordinal] = true;
        struct wl_param *prm = &sig->params[ordinal];
        prm->ptx_kind = WL_PTX_UNTYPED;
        prm->size = bytes;
        prm->align = bytes == 1 || bytes == 2 || bytes == 4 ? bytes : 8;
        (void)offset; /* the driver places parameters; bind only needs each one's size */
        if ((int)ordinal >= sig->nparams) sig->nparams = (int)ordinal + 1;
      }
      p += 4 + size;
    }
  }
  for (int i = 0; i < sig->nparams; i++)
    if (!seen[i]) {
      set_err(err, errlen, "corrupt cubin (kernel '%s' has no record of parameter %d)", name, i);
      memset(sig, 0, sizeof *sig);
      return false;
    }
  return true;
}

/* ---- PTX ---- */

/* the architecture of `.target sm_90[a], ...`, or 0 */
static int ptx_target(const char *ptx) {
  const char *t = strstr(ptx, ".target");
  if (!t) return 0;
  t += 7;
  while (*t == ' ' || *t == '\t') t++;
  return strncmp(t, "sm_", 3) == 0 ? atoi(t + 3) : 0;
}

static bool looks_like_ptx(const char *text) {
  return strstr(text, ".version") && strstr(text, ".target") &&
         (strstr(text, ".entry") || strstr(text, ".func"));
}

/* .entry NAME in order (comments are not skipped: NVRTC and nvcc write none with .entry) */
static int ptx_kernels(const char *ptx, void (*fn)(const char *, size_t, void *), void *ctx) {
  int n = 0;
  for (const char *p = ptx; (p = strstr(p, ".entry")) != NULL;) {
    p += 6;
    if (*p != ' ' && *p != '\t') continue;
    while (*p == ' ' || *p == '\t') p++;
    size_t len = strcspn(p, " \t\r\n(");
    if (!len) continue;
    n++;
    if (fn) fn(p, len, ctx);
    p += len;
  }
  return n;
}

/* ---- fatbin ---- */

#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_PTX 1
#define FATBIN_ELF 2
#define FATBIN_ZSTD 0x8000u /* the entry's flags: its payload is one zstd frame */
#define FATBIN_LZ4 0x2000u

struct fat_entry {
  unsigned kind, arch;
  uint64_t flags;
  const unsigned char *payload;
  size_t payload_len, compressed_len, plain_len;
};

typedef size_t (*zstd_decompress_fn)(void *, size_t, const void *, size_t);
typedef unsigned (*zstd_is_error_fn)(size_t);

/* Decompresses a zstd entry into a malloc'd buffer with a NUL after it. */
static unsigned char *inflate_entry(const struct fat_entry *fe, char *err, size_t errlen) {
  static void *lib;
  if (!lib) lib = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
  zstd_decompress_fn decompress = lib ? (zstd_decompress_fn)dlsym(lib, "ZSTD_decompress") : NULL;
  zstd_is_error_fn is_error = lib ? (zstd_is_error_fn)dlsym(lib, "ZSTD_isError") : NULL;
  if (!decompress || !is_error) {
    set_err(err, errlen,
            "its entries are zstd-compressed and libzstd.so.1 could not be loaded (%s); install "
            "libzstd1, "
            "or build the fatbin with nvcc --no-compress",
            lib ? "ZSTD_decompress missing" : dlerror());
    return NULL;
  }
  if (fe->plain_len == 0 || fe->plain_len > ((size_t)1 << 30) ||
      fe->compressed_len > fe->payload_len) {
    set_err(err, errlen, "corrupt fatbin (a compressed entry's sizes)");
    return NULL;
  }
  unsigned char *out = malloc(fe->plain_len + 1);
  if (!out) {
    set_err(err, errlen, "out of memory");
    return NULL;
  }
  size_t n = decompress(out, fe->plain_len, fe->payload,
                        fe->compressed_len ? fe->compressed_len : fe->payload_len);
  if (is_error(n) || n != fe->plain_len) {
    free(out);
    set_err(err, errlen, "corrupt fatbin (a compressed entry does not decompress)");
    return NULL;
  }
  out[n] = '\0';
  return out;
}

static int fat_entries(const unsigned char *data, size_t len, struct fat_entry *out, int max,
                       char *err, size_t errlen) {
  if (len < 16 || rd32(data) != FATBIN_MAGIC) {
    set_err(err, errlen, "not a fatbin (no fatbin header)");
    return -1;
  }
  size_t head = rd16(data + 6);
  uint64_t size = rd64(data + 8);
  if (head < 16 || head > len || size > len - head) {
    set_err(err, errlen, "truncated fatbin (%zu bytes, its header says %llu)", len,
            (unsigned long long)(head + size));
    return -1;
  }
  int n = 0;
  for (size_t off = head; off < head + size;) {
    const unsigned char *h = data + off;
    size_t ehead = head + size - off >= 16 ? rd32(h + 4) : 0;
    if (ehead < 64 || ehead > head + size - off || rd64(h + 8) > head + size - off - ehead) {
      set_err(err, errlen, "truncated or corrupt fatbin (entry %d)", n + 1);
      return -1;
    }
    if (n == max) {
      set_err(err, errlen, "a fatbin of more than %d entries", max);
      return -1;
    }
    struct fat_entry *fe = &out[n++];
    fe->kind = rd16(h);
    fe->arch = rd32(h + 28);
    fe->flags = rd64(h + 40);
    fe->payload = h + ehead;
    fe->payload_len = (size_t)rd64(h + 8);
    fe->compressed_len = rd32(h + 16);
    fe->plain_len = (size_t)rd64(h + 56);
    off += ehead + fe->payload_len;
  }
  return n;
}

/* ---- choosing ---- */

static bool sm_runs_on(int built, int target) {
  return built / 10 == target / 10 && built % 10 <= target % 10;
}

static void add_holds(struct wl_module *m, const char *prefix, int sm) {
  size_t used = strlen(m->holds);
  snprintf(m->holds + used, sizeof m->holds - used, "%s%s_%d", used ? ", " : "", prefix, sm);
}

static bool open_fatbin(struct wl_module *m, const unsigned char *data, size_t len, int target,
                        const char *what, char *err, size_t errlen) {
  struct fat_entry entries[64];
  int n = fat_entries(data, len, entries, 64, err, errlen);
  if (n < 0) return false;
  const struct fat_entry *elf = NULL, *ptx = NULL;
  for (int i = 0; i < n; i++) {
    const struct fat_entry *fe = &entries[i];
    if (fe->kind == FATBIN_ELF) {
      add_holds(m, "sm", (int)fe->arch);
      if (sm_runs_on((int)fe->arch, target) && (!elf || fe->arch > elf->arch)) elf = fe;
    } else if (fe->kind == FATBIN_PTX) {
      add_holds(m, "compute", (int)fe->arch);
      if ((int)fe->arch <= target && (!ptx || fe->arch > ptx->arch)) ptx = fe;
    }
  }
  if (!elf && !ptx) {
    set_err(err, errlen, "built for %s; %s is sm_%d", m->holds[0] ? m->holds : "nothing", what,
            target);
    return false;
  }
  const struct fat_entry *pick[2] = {elf, ptx ? ptx : NULL};
  for (int k = 0; k < 2; k++) {
    const struct fat_entry *fe = pick[k];
    if (!fe) continue;
    const unsigned char *img = fe->payload;
    size_t img_len = fe->payload_len;
    if (fe->flags & FATBIN_LZ4) {
      set_err(err, errlen,
              "its entries are LZ4-compressed (an older nvcc): wlrun reads zstd or uncompressed; "
              "rebuild it with nvcc --no-compress");
      return false;
    }
    if (fe->flags & FATBIN_ZSTD) {
      unsigned char *plain = inflate_entry(fe, err, errlen);
      if (!plain) return false;
      m->owned[k] = plain;
      img = plain;
      img_len = fe->plain_len;
    }
    if (fe->kind == FATBIN_ELF) {
      struct elf e;
      int sm;
      char why[192];
      if (!elf_open(&e, img, img_len, &sm, why, sizeof why)) {
        set_err(err, errlen, "corrupt fatbin (its sm_%u entry: %s)", fe->arch, why);
        return false;
      }
      m->elf = img;
      m->elf_len = img_len;
      m->sm = (int)fe->arch;
    } else {
      if (!(fe->flags & FATBIN_ZSTD)) { /* PTX text padded with NULs, or not: copy it with one */
        char *copy = malloc(img_len + 1);
        if (!copy) {
          set_err(err, errlen, "out of memory");
          return false;
        }
        memcpy(copy, img, img_len);
        copy[img_len] = '\0';
        m->owned[k] = copy;
        img = (const unsigned char *)copy;
      }
      m->ptx = (const char *)img;
      if (!elf) {
        m->sm = (int)fe->arch;
        m->sm_is_ptx = true;
      }
    }
  }
  return true;
}

bool wl_module_open(struct wl_module *m, const unsigned char *data, size_t len,
                    enum wl_module_format f, int target, const char *what, char *err,
                    size_t errlen) {
  memset(m, 0, sizeof *m);
  m->format = f;
  if (len == 0) {
    set_err(err, errlen, "an empty file");
    return false;
  }
  if (f == WL_MODULE_FATBIN) {
    if (open_fatbin(m, data, len, target, what, err, errlen)) return true;
    wl_module_close(m);
    return false;
  }
  if (f == WL_MODULE_PTX) {
    const char *text = (const char *)data; /* the caller's buffer ends with a NUL */
    if (memchr(data, '\0', len) || !looks_like_ptx(text)) {
      set_err(err, errlen, "not PTX text (no .version, .target and .entry)");
      return false;
    }
    m->ptx = text;
    m->sm = ptx_target(text);
    m->sm_is_ptx = true;
    add_holds(m, "compute", m->sm);
    if (m->sm == 0 || m->sm > target) {
      set_err(err, errlen, "PTX for %s (its .target); %s is sm_%d",
              m->sm ? m->holds : "an unknown target", what, target);
      return false;
    }
    return true;
  }
  struct elf e;
  int sm;
  if (!elf_open(&e, data, len, &sm, err, errlen)) return false;
  m->elf = data;
  m->elf_len = len;
  m->sm = sm;
  add_holds(m, "sm", sm);
  if (!sm_runs_on(sm, target)) {
    set_err(err, errlen, "built for sm_%d; %s is sm_%d", sm, what, target);
    return false;
  }
  return true;
}

void wl_module_close(struct wl_module *m) {
  for (int i = 0; i < 2; i++) free(m->owned[i]);
  memset(m, 0, sizeof *m);
}

int wl_module_kernels(const struct wl_module *m,
                      void (*fn)(const char *name, size_t len, void *ctx), void *ctx) {
  if (!m->elf) return ptx_kernels(m->ptx, fn, ctx);
  struct elf e;
  int sm, n = 0;
  if (elf_open(&e, m->elf, m->elf_len, &sm, NULL, 0)) elf_kernels(&e, fn, ctx, &n);
  return n;
}

bool wl_module_params(const struct wl_module *m, const char *name, struct wl_signature *sig,
                      char *err, size_t errlen) {
  struct elf e;
  int sm;
  if (m->elf && !elf_open(&e, m->elf, m->elf_len, &sm, err, errlen)) return false;
  if (m->ptx && wl_ptx_params(m->ptx, name, sig, err, errlen)) {
    /* the PTX beside a cubin must describe the same kernel */
    struct wl_signature sizes;
    if (!m->elf || !elf_params(&e, name, &sizes, NULL, 0)) return true;
    bool same = sizes.nparams == sig->nparams;
    for (int i = 0; same && i < sig->nparams; i++)
      same = sizes.params[i].size == sig->params[i].size;
    if (same) return true;
    *sig = sizes; /* the cubin is what runs */
    return true;
  }
  if (!m->elf) return false;
  return elf_params(&e, name, sig, err, errlen);
}

static bool number_kind(enum wl_ptx_kind k) { return k == WL_PTX_UNSIGNED || k == WL_PTX_SIGNED; }

bool wl_module_check_declared(const struct wl_signature *declared,
                              const struct wl_signature *module, char *err, size_t errlen) {
  if (declared->nparams != module->nparams) {
    set_err(err, errlen, "params declares %d parameter%s, the module's kernel has %d",
            declared->nparams, declared->nparams == 1 ? "" : "s", module->nparams);
    return false;
  }
  for (int i = 0; i < declared->nparams; i++) {
    const struct wl_param *d = &declared->params[i], *k = &module->params[i];
    bool clash = (d->ptx_kind == WL_PTX_FLOAT && number_kind(k->ptx_kind)) ||
                 (number_kind(d->ptx_kind) && k->ptx_kind == WL_PTX_FLOAT);
    if (d->size != k->size || clash) {
      char ptx[32];
      set_err(err, errlen,
              "params declares parameter %d as '%s' (%u bytes), the module has %s (%u bytes)",
              i + 1, wl_ctype_describe(d), d->size, wl_ptx_describe(k, ptx, sizeof ptx), k->size);
      return false;
    }
  }
  return true;
}
