-- The catalogue of bad inputs, class "modules": precompiled code (wl.kernel{file = "x.cubin" |
-- "x.fatbin" | "x.ptx"}, docs/kernels.md) that is missing, not a module, truncated, built for
-- another architecture, without the kernel named, or declared with other parameters. The
-- modules are nvcc's, built by CMake (target wlrun_modules) beside the binary. See
-- tests/catalogue.lua.
local h = require "helper"

local CO = "--compile-only --arch sm_90"

local function kernel(fields)
  return ("local wl = require 'wlrun'\nlocal M = %q\n\nwl.kernel { %s }\n"):format(h.modules,
    fields)
end

local LINE = "script%.lua:4: "

return {
  { name = "module: a cubin that does not exist", code = 9, args = CO,
    script = kernel [[file = "none.cubin", name = "scale"]],
    stderr = LINE .. "wl.kernel 'scale': cannot read .*none%.cubin: No such file or directory" },
  { name = "module: a text file named .cubin", code = 6, args = CO,
    files = { ["text.cubin"] = "hello\n" },
    script = kernel [[file = "text.cubin", name = "scale"]],
      stderr = LINE .. ".*%(cubin%): not a cubin %(no ELF header%)" },
  { name = "module: an empty .fatbin", code = 6, args = CO, files = { ["empty.fatbin"] = "" },
    script = kernel [[file = "empty.fatbin", name = "scale"]],
      stderr = LINE .. ".*%(fatbin%): an empty file" },
  { name = "module: a text file named .fatbin", code = 6, args = CO,
    files = { ["x.fatbin"] = "not a fatbin at all\n" },
    script = kernel [[file = "x.fatbin", name = "scale"]],
      stderr = LINE .. ".*%(fatbin%): not a fatbin %(no fatbin header%)" },
  { name = "module: a .ptx file that is not PTX", code = 6, args = CO,
    files = { ["x.ptx"] = "// nothing\n" },
    script = kernel [[file = "x.ptx", name = "scale"]],
      stderr = LINE .. ".*%(ptx%): not PTX text" },
  { name = "module: a truncated cubin", code = 6, args = CO,
    script = kernel [[file = M .. "/truncated.cubin", name = "scale"]],
    stderr = LINE .. ".*truncated or corrupt cubin" },
  { name = "module: a cubin for sm_80 with --arch sm_90", code = 6, args = CO,
    script = kernel [[file = M .. "/kernels_sm80.cubin", name = "scale"]],
      stderr = LINE .. ".*built for sm_80; %-%-arch is sm_90" },
  { name = "module: a fatbin with nothing for sm_75", code = 6,
    args = "--compile-only --arch sm_75",
    script = kernel [[file = M .. "/kernels.fatbin", name = "scale"]],
    stderr = LINE .. ".*%(fatbin%): built for sm_80, .*sm_90; %-%-arch is sm_75" },
  { name = "module: a kernel the cubin does not have", code = 6, args = CO,
    script = kernel [[file = M .. "/kernels.cubin", name = "gemm"]],
      stderr = LINE .. "wl.kernel: no kernel 'gemm' in .*; it has .*scale" },
  { name = "module: a format wlrun does not read", code = 1, args = CO,
    script = kernel [[file = M .. "/kernels.cubin", name = "scale", format = "so"]],
      stderr = LINE .. ".*format must be" },
  { name = "module: params of another size than the cubin's", code = 1, args = CO,
    script
      =
      kernel ([[file = M .. "/kernels.cubin", name = "scale", params = "float* y, const float* ]]
      .. [[x, double a, int n"]]),
    stderr = LINE
      .. ".*params declares parameter 3 as 'double' %(8 bytes%), the module has %.b32 "
      .. "%(4 bytes%)" },
  { name = "module: params with another count", code = 1, args = CO,
    script = kernel [[file = M .. "/kernels.cubin", name = "scale", params = "float* y"]],
    stderr = LINE .. ".*params declares 1 parameter, the module's kernel has 4" },
  { name = "module: params that are not C", code = 1, args = CO,
    script = kernel [[file = M .. "/kernels.cubin", name = "scale", params = "float* y, )x"]],
    stderr = LINE .. ".*parameter 2" },
  { name = "module: a cubin for sm_80 on an sm_90 device", code = 6, gpu = true,
    script = kernel [[file = M .. "/kernels_sm80.cubin", name = "scale"]],
      stderr = LINE .. ".*built for sm_80; this device is sm_%d+" },
}
