/* A kernel's parameter list, read from what NVRTC produces, without a device:
 *  - the PTX .entry of the kernel gives every parameter's PTX type and size (always);
 *  - the Itanium-mangled (lowered) name of a C++ kernel gives the C types (when the kernel
 *    is not extern "C"; best effort: a name it cannot read gives no C types, never wrong ones).
 * Pure C, no CUDA calls; unit-tested in tests/c/test_kernel_signature.c. */
#ifndef WL_KERNEL_SIGNATURE_H
#define WL_KERNEL_SIGNATURE_H

#include <stdbool.h>
#include <stddef.h>

#define WL_MAX_PARAMS 64

enum wl_ptx_kind {
  WL_PTX_UNSIGNED, /* .u8 .u16 .u32 .u64 (PTX gives ints and pointers as .u) */
  WL_PTX_SIGNED,   /* .s8 .s16 .s32 .s64 */
  WL_PTX_FLOAT,    /* .f16 .f32 .f64 */
  WL_PTX_BYTES,    /* .align N .b8 name[SIZE]: structs, __half, arrays by value; also .bN */
  WL_PTX_UNTYPED   /* only the size is known (a cubin's own parameter table, no PTX) */
};

/* What the C type of a parameter is, as far as the mangled name tells. */
enum wl_ctype {
  WL_C_UNKNOWN = 0, /* extern "C" kernel, or a type the demangler does not read */
  WL_C_POINTER,     /* any T* (see pointee) */
  WL_C_BOOL,
  WL_C_CHAR,  /* char, signed char */
  WL_C_UCHAR, /* unsigned char */
  WL_C_SHORT,
  WL_C_USHORT,
  WL_C_INT,
  WL_C_UINT,
  WL_C_LONG,
  WL_C_ULONG, /* long, unsigned long (64-bit on Linux) */
  WL_C_LONGLONG,
  WL_C_ULONGLONG, /* long long, unsigned long long */
  WL_C_FLOAT,
  WL_C_DOUBLE,
  WL_C_HALF,     /* __half */
  WL_C_BFLOAT16, /* __nv_bfloat16 */
  WL_C_VOID,     /* only as a pointee */
  WL_C_OTHER     /* a named class/struct/enum type (name in ctype_name) */
};

struct wl_param {
  /* from PTX */
  enum wl_ptx_kind ptx_kind;
  unsigned size;  /* bytes */
  unsigned align; /* bytes; of a .ptr parameter, its own (the .align after .ptr is that of the
                   * memory it points to) */
  /* from the mangled name (WL_C_UNKNOWN when not known) */
  enum wl_ctype ctype;
  enum wl_ctype pointee; /* for WL_C_POINTER: the pointed-to type (WL_C_UNKNOWN if unread) */
  bool pointee_const;
  char ctype_name[64]; /* readable C type: "const float*", "int", "__half", "Foo" ("" if unknown) */
};

struct wl_signature {
  int nparams;
  struct wl_param params[WL_MAX_PARAMS];
  bool has_ctypes; /* the mangled name was read: ctype fields are filled */
};

/* Reads the parameters of `.entry NAME(...)` (.visible or .weak) from PTX text. Returns false
 * with a message in err when the entry is not found or cannot be read ("parameter N" counts
 * from 0, like PTX's NAME_param_N). Parameters with [SIZE] are WL_PTX_BYTES. */
bool wl_ptx_params(const char *ptx, const char *entry_name, struct wl_signature *sig, char *err,
                   size_t errlen);

/* Fills the ctype fields of sig from an Itanium-mangled kernel name (such as
 * _Z4gemmPKfS0_Pfiii or _Z1kIfEvPT_PKfi). Returns false, leaving has_ctypes false and the
 * ctype fields WL_C_UNKNOWN, when the name is not mangled (extern "C"), cannot be read, or its
 * parameter count differs from sig->nparams. */
bool wl_demangle_params(const char *mangled, struct wl_signature *sig);

/* "float", "const float*", "unsigned int", ... for messages; never NULL. */
const char *wl_ctype_describe(const struct wl_param *p);

/* The PTX type as written: ".f32", ".u64", ".b8[12]"; into buf. WL_PTX_BYTES is always
 * described as .b8[SIZE] (a .b32 scalar as .b8[4]). */
const char *wl_ptx_describe(const struct wl_param *p, char *buf, size_t len);

#endif
