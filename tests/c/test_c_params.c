/* c_params.c: C parameter lists of host work read into signatures. */
#include "c_params.h"
#include "check.h"

static struct wl_signature sig;
static char err[320];

static bool read(const char *text) {
  err[0] = '\0';
  return wl_c_params(text, &sig, err, sizeof err);
}

static void test_saxpy(void) {
  CHECK(read("float* y, const float* x, float a, int n"));
  CHECK(sig.nparams == 4 && sig.has_ctypes);
  CHECK(sig.params[0].ctype == WL_C_POINTER && sig.params[0].pointee == WL_C_FLOAT &&
        !sig.params[0].pointee_const);
  CHECK(sig.params[0].size == 8 && sig.params[0].align == 8);
  CHECK_STR(sig.params[0].ctype_name, "float*");
  CHECK(sig.params[1].pointee_const);
  CHECK_STR(sig.params[1].ctype_name, "const float*");
  CHECK(sig.params[2].ctype == WL_C_FLOAT && sig.params[2].size == 4 &&
        sig.params[2].ptx_kind == WL_PTX_FLOAT);
  CHECK(sig.params[3].ctype == WL_C_INT && sig.params[3].size == 4 &&
        sig.params[3].ptx_kind == WL_PTX_SIGNED);
}

static void test_types(void) {
  CHECK(read(
      "unsigned long long a, long b, unsigned c, short d, unsigned char e, signed char f, bool g, "
      "double h, __half i, __nv_bfloat16 j, size_t k, int64_t l, uint8_t m, long long n, unsigned "
      "int"));
  CHECK(sig.nparams == 15);
  CHECK(sig.params[0].ctype == WL_C_ULONGLONG && sig.params[0].size == 8);
  CHECK(sig.params[1].ctype == WL_C_LONG && sig.params[1].size == 8);
  CHECK(sig.params[2].ctype == WL_C_UINT && sig.params[2].size == 4);
  CHECK(sig.params[3].ctype == WL_C_SHORT && sig.params[3].size == 2);
  CHECK(sig.params[4].ctype == WL_C_UCHAR && sig.params[4].size == 1);
  CHECK(sig.params[5].ctype == WL_C_CHAR);
  CHECK(sig.params[6].ctype == WL_C_BOOL && sig.params[6].size == 1);
  CHECK(sig.params[7].ctype == WL_C_DOUBLE && sig.params[7].size == 8);
  CHECK(sig.params[8].ctype == WL_C_HALF && sig.params[8].size == 2 &&
        sig.params[8].ptx_kind == WL_PTX_BYTES);
  CHECK(sig.params[9].ctype == WL_C_BFLOAT16);
  CHECK(sig.params[10].ctype == WL_C_ULONG && sig.params[10].size == 8);
  CHECK(sig.params[11].ctype == WL_C_LONG);
  CHECK(sig.params[12].ctype == WL_C_UCHAR);
  CHECK(sig.params[13].ctype == WL_C_LONGLONG);
  CHECK(sig.params[14].ctype == WL_C_UINT); /* no name: "int" is the type's */
}

static void test_pointers(void) {
  CHECK(read("const void *__restrict__ in, void* out, float const* p, MyStruct* s, float** pp, "
             "int* const q, "
             "const __half* h"));
  CHECK(sig.nparams == 7);
  CHECK(sig.params[0].pointee == WL_C_VOID && sig.params[0].pointee_const);
  CHECK_STR(sig.params[0].ctype_name, "const void*");
  CHECK(sig.params[1].pointee == WL_C_VOID && !sig.params[1].pointee_const);
  CHECK(sig.params[2].pointee == WL_C_FLOAT && sig.params[2].pointee_const);
  CHECK(sig.params[3].pointee == WL_C_OTHER);
  CHECK_STR(sig.params[3].ctype_name, "MyStruct*");
  CHECK(sig.params[4].pointee == WL_C_POINTER && !sig.params[4].pointee_const);
  CHECK_STR(sig.params[4].ctype_name, "float**");
  CHECK(sig.params[5].pointee == WL_C_INT && !sig.params[5].pointee_const);
  CHECK(sig.params[6].pointee == WL_C_HALF && sig.params[6].pointee_const);
}

static void test_empty(void) {
  CHECK(read("") && sig.nparams == 0);
  CHECK(read("  void ") && sig.nparams == 0);
  CHECK(read("   ") && sig.nparams == 0);
}

static void test_errors(void) {
  CHECK(!read("float a, MyStruct s"));
  CHECK_CONTAINS(err, "parameter 2");
  CHECK_CONTAINS(err, "cannot pass by value");
  CHECK(!read("float a,, int b"));
  CHECK_CONTAINS(err, "parameter 2");
  CHECK(!read("float x[4]"));
  CHECK_CONTAINS(err, "cannot read '['");
  CHECK(!read("void v"));
  CHECK(!read("int& r"));
  CHECK(!read("unsigned signed int x"));
  CHECK_CONTAINS(err, "not a C type");
  CHECK(!read("float* a b"));
  CHECK_CONTAINS(err, "after a '*'");
  CHECK(!read("long long long x"));
  char many[64 * 8 + 16] = "";
  for (int i = 0; i < 65; i++) strcat(many, i ? ",int" : "int");
  CHECK(!read(many));
  CHECK_CONTAINS(err, "more than 64");
}

int main(void) {
  test_saxpy();
  test_types();
  test_pointers();
  test_empty();
  test_errors();
  return check_report("test_c_params");
}
