/* NVTX push and pop for a program without CUDA's NVTX (tests/trace/torch_auto.py --ranges on a
 * machine without a GPU, through ctypes): the program's own ranges beside wlrun's hook. */
#include <nvtx3/nvToolsExt.h>

__attribute__((visibility("default"))) int wlrun_test_push(const char *name);
__attribute__((visibility("default"))) int wlrun_test_pop(void);

int wlrun_test_push(const char *name) { return nvtxRangePushA(name); }
int wlrun_test_pop(void) { return nvtxRangePop(); }
