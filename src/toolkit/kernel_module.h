/* Precompiled device code read without a device (docs/kernels.md, "Precompiled code"): a cubin
 * (an ELF image of one GPU architecture), a fatbin (nvcc's container of cubins and PTX for
 * several architectures) or PTX text. Gives the image for a target architecture, the kernels
 * it holds and each kernel's parameters:
 *  - PTX: the .entry parameter list (kernel_signature.h's reader: sizes and PTX kinds);
 *  - cubin: the EIATTR_KPARAM_INFO records of the kernel's .nv.info.NAME section (ordinal,
 *    offset and size of each parameter; no kinds: WL_PTX_UNTYPED).
 * Compressed fatbin entries (zstd, CUDA 12.8 and later compress PTX) are read through the
 * system's libzstd.so.1, opened when first needed. Pure C, no CUDA calls; tested through
 * wl.kernel on nvcc's output (tests/e2e/module_spec.lua, tests/gpu/modules_spec.lua). */
#ifndef WL_KERNEL_MODULE_H
#define WL_KERNEL_MODULE_H

#include "kernel_signature.h"

#include <stdbool.h>
#include <stddef.h>

enum wl_module_format { WL_MODULE_UNKNOWN, WL_MODULE_CUBIN, WL_MODULE_FATBIN, WL_MODULE_PTX };

/* By the file's extension (.cubin, .fatbin or .fatbin.c is not, .ptx); UNKNOWN otherwise. */
enum wl_module_format wl_module_format_of_path(const char *path);
/* "cubin", "fatbin", "ptx"; UNKNOWN otherwise. */
enum wl_module_format wl_module_format_named(const char *name);
const char *wl_module_format_name(enum wl_module_format f);

struct wl_module {
  enum wl_module_format format; /* of the file */
  /* the image chosen for the target: a cubin (ELF) or PTX text (NUL-terminated) */
  const unsigned char *elf;
  size_t elf_len;
  const char *ptx; /* also set for a fatbin whose cubin was chosen, when it holds PTX */
  int sm;          /* the chosen image's architecture: 90 for sm_90 (or compute_90 for PTX) */
  bool sm_is_ptx;  /* the image chosen is PTX (JIT-compiled by the driver when loaded) */
  char holds[160]; /* what the file holds, for messages: "sm_80, sm_90, compute_90" */
  void *owned[2];  /* decompressed or copied images */
};

/* Reads data (the whole file) as format f and chooses the image for target_sm (90 for sm_90):
 * a cubin of the same major version and a minor version not above the target's, the newest
 * such; else PTX for an architecture not above the target, the newest; else fails. target_what
 * names the target in messages ("this device", "--arch"). On failure err says why: not a
 * cubin/fatbin/PTX, truncated, built for another architecture ("built for sm_80; this device
 * is sm_90"). data must outlive m. */
bool wl_module_open(struct wl_module *m, const unsigned char *data, size_t len,
                    enum wl_module_format f, int target_sm, const char *target_what, char *err,
                    size_t errlen);
void wl_module_close(struct wl_module *m);

/* Calls fn for each kernel of the chosen image (mangled names as they are), in file order.
 * Returns the count. */
int wl_module_kernels(const struct wl_module *m,
                      void (*fn)(const char *name, size_t len, void *ctx), void *ctx);

/* The parameters of kernel name (as the module spells it): from PTX where the module has it,
 * else from the cubin's parameter table. False with a message when not found or unreadable. */
bool wl_module_params(const struct wl_module *m, const char *name, struct wl_signature *sig,
                      char *err, size_t errlen);

/* Checks a declared parameter list (params = "...", read by wl_c_params) against the module's
 * and keeps the declared one: the counts and sizes must agree, and a float must not be an
 * integer in the module's PTX. False with a message naming both. */
bool wl_module_check_declared(const struct wl_signature *declared,
                              const struct wl_signature *module, char *err, size_t errlen);

#endif
