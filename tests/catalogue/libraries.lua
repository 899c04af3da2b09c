-- The catalogue of bad inputs, class "libraries": library work (docs/cublas.md): cuBLAS and
-- cuBLASLt GEMMs given wrong options, a library that is not where it was pointed at or lacks a
-- symbol. Each error names the field or the library and the script's line (3 here). See
-- tests/catalogue.lua for the fields of a case.
local CO = "--compile-only --arch sm_90"

-- line 1-2: tensors a (64 x 32), b (32 x 16), c (64 x 16) of f32, h of f16; line 3: CALL
local function gemm(call)
  return ([[local wl = require "wlrun"
local a, b, c, h = wl.tensor { 64, 32 }, wl.tensor { 32, 16 }, wl.tensor { 64, 16 }, wl.tensor { 64, 32, dtype = "f16" }
%s
]]):format(call)
end

local OK = "a = a, b = b, c = c, m = 64, n = 16, k = 32"

local cases = {
  { name = "cublas.gemm: a smaller than m x k",
    script = gemm("wl.cublas.gemm { a = a, b = b, c = c, m = 64, n = 16, k = 33 }"),
    stderr
      =
      "script.lua:3: wl.cublas.gemm: a has 2048 elements, but a %(64 x 33, row%-major, lda = "
      .. "33%) needs 2112" },
  { name = "cublas.gemm: b too small with transb",
    script = gemm("wl.cublas.gemm { a = a, b = b, c = c, m = 64, n = 17, k = 32, transb = true }"),
    stderr
      =
      "script.lua:3: wl.cublas.gemm: b has 512 elements, but b %(17 x 32, row%-major, ldb = "
      .. "32%) needs 544" },
  { name = "cublas.gemm: c smaller than m x n",
    script = gemm("wl.cublas.gemm { a = a, b = b, c = wl.tensor { 512 }, m = 64, n = 16, k = 32 }"),
    stderr = "script.lua:3: wl.cublas.gemm: c has 512 elements, but c %(64 x 16" },
  { name = "cublas.gemm: c is a", script = gemm(
    "wl.cublas.gemm { a = a, b = b, c = a, m = 32, n = 16, k = 32 }"),
    stderr
      =
      "script.lua:3: wl.cublas.gemm: c is the tensor given as a: the library reads a and b "
      .. "while it writes c" },
  { name = "cublas.gemm: tensors of two dtypes",
    script = gemm("wl.cublas.gemm { a = h, b = b, c = c, m = 64, n = 16, k = 32 }"),
    stderr = "script.lua:3: wl.cublas.gemm: a, b and c must have one dtype, got f16, f32 and f32" },
  { name = "cublas.gemm: dtype that is not the tensors'",
    script = gemm("wl.cublas.gemm { " .. OK .. ", dtype = 'bf16' }"),
    stderr
      =
      "script.lua:3: wl.cublas.gemm: dtype 'bf16' does not agree with the tensors, which are f32" },
  { name = "cublas.gemm: integer tensors", script = gemm(
    "local i, j = wl.tensor { 64, dtype = 'i32' }, wl.tensor { 64, dtype = 'i32' "
    .. "}\nwl.cublas.gemm { a = i, b = i, c = j, m = 8, n = 8, k = 8 }"),
    stderr
      = "script.lua:4: wl.cublas.gemm: a is a i32 tensor; the GEMM takes f32, f64, f16 or bf16" },
  { name = "cublas.gemm: bound again to smaller tensors",
    script = gemm("local g = wl.cublas.gemm { " .. OK
    .. " }; g.kernel:bind { args = { b, b, b } }"),
    stderr = "script.lua:3: bind: 'cublas%.gemm .*' was bound by what made it" },
  { name = "cublaslt.matmul: bound again to smaller tensors",
    script = gemm("local g = wl.cublaslt.matmul { " .. OK
    .. " }; g.kernel:bind { args = { b, b, b } }"),
    stderr = "script.lua:3: bind: 'cublaslt%.matmul .*' was bound by what made it" },
  { name = "cublas.gemm: a block view given with the ld of dense rows",
    script = gemm(
    "wl.cublas.gemm { a = a, b = b, c = wl.tensor { 64, 64 }:view { shape = { 64, 16 }, strides "
    .. "= { 64, 1 } }, m = 64, n = 16, k = 32, ldc = 16 }"),
    stderr
      =
      "script.lua:3: wl.cublas.gemm: ldc = 16, but c is a view %[64x16%] whose rows are 64 "
      .. "elements apart: give ldc = 64" },
  { name = "cublas.gemm: a transposed (column-strided) view",
    script = gemm(
    "wl.cublas.gemm { a = wl.tensor { 32, 64 }:view { shape = { 64, 32 }, strides = { 1, 64 } "
    .. "}, b = b, c = c, m = 64, n = 16, k = 32 }"),
    stderr
      =
      "script.lua:3: wl.cublas.gemm: a is a strided view %[64x32%] whose elements are not rows "
      .. "of adjacent elements" },
  { name = "cublas.gemm: c a view overlapping a",
    script = gemm("wl.cublas.gemm { a = a, b = b, c = a:view(0, 1024), m = 64, n = 16, k = 32 }"),
    stderr = "script.lua:3: wl.cublas.gemm: c shares memory with a %(views of one tensor%)" },
  { name = "cublas.gemm: unknown field", script = gemm("wl.cublas.gemm { " .. OK
    .. ", trans_a = true }"),
    stderr
      =
      "script.lua:3: wl.cublas.gemm: unknown field 'trans_a' %(fields: a, b, c, m, n, k, transa," },
  { name = "cublas.gemm: a number for a tensor",
    script = gemm("wl.cublas.gemm { a = a, b = 3, c = c, m = 64, n = 16, k = 32 }"),
    stderr = "script.lua:3: wl.cublas.gemm: b must be a device tensor, got 3" },
  { name = "cublas.gemm: no c",
    script = gemm("wl.cublas.gemm { a = a, b = b, m = 64, n = 16, k = 32 }"),
    stderr = "script.lua:3: wl.cublas.gemm: c is required %(a device tensor%)" },
  { name = "cublas.gemm: a host tensor", script = gemm(
    "wl.cublas.gemm { a = wl.host_tensor { 2048 }, b = b, c = c, m = 64, n = 16, k = 32 }"),
    stderr = "script.lua:3: wl.cublas.gemm: a must be a device tensor, got a host tensor" },
  { name = "cublas.gemm: a freed tensor", script = gemm("b:free() wl.cublas.gemm { " .. OK .. " }"),
    stderr = "script.lua:3: wl.cublas.gemm: b: tensor used after free" },
  { name = "cublas.gemm: k = 0", script = gemm(
    "wl.cublas.gemm { a = a, b = b, c = c, m = 64, n = 16, k = 0 }"),
    stderr = "script.lua:3: wl.cublas.gemm: k must be a whole number from 1 to 2147483647, got 0" },
  { name = "cublas.gemm: m not whole", script = gemm(
    "wl.cublas.gemm { a = a, b = b, c = c, m = 6.5, n = 16, k = 32 }"),
    stderr
      = "script.lua:3: wl.cublas.gemm: m must be a whole number from 1 to 2147483647, got 6.5" },
  { name = "cublas.gemm: n missing", script = gemm(
    "wl.cublas.gemm { a = a, b = b, c = c, m = 64, k = 32 }"),
    stderr = "script.lua:3: wl.cublas.gemm: n is required" },
  { name = "cublas.gemm: lda below the columns",
    script = gemm("wl.cublas.gemm { " .. OK .. ", lda = 16 }"),
    stderr
      =
      "script.lua:3: wl.cublas.gemm: lda = 16 is less than the 32 columns of a %(M x K, "
      .. "row%-major%)" },
  { name = "cublas.gemm: compute fp16 for f32",
    script = gemm("wl.cublas.gemm { " .. OK .. ", compute = 'fp16' }"),
    stderr
      = "script.lua:3: wl.cublas.gemm: compute 'fp16' is not one for f32 tensors %(fp32, tf32%)" },
  { name = "cublas.gemm: compute tf32 for f16",
    script = gemm(
    "local h2, h3 = wl.tensor { 512, dtype = 'f16' }, wl.tensor { 1024, dtype = 'f16' "
    .. "}\nwl.cublas.gemm { a = h, b = h2, c = h3, m = 64, n = 16, k = 32, compute = 'tf32' }"),
    stderr
      = "script.lua:4: wl.cublas.gemm: compute 'tf32' is not one for f16 tensors %(fp32, fp16%)" },
  { name = "cublas.gemm: alpha NaN", script = gemm("wl.cublas.gemm { " .. OK .. ", alpha = 0/0 }"),
    stderr = "script.lua:3: wl.cublas.gemm: alpha must be a finite number" },
  { name = "cublas.gemm: beta a string", script = gemm("wl.cublas.gemm { " .. OK
    .. ", beta = '1' }"),
    stderr = "script.lua:3: wl.cublas.gemm: beta must be a finite number, got '1'" },
  { name = "cublas.gemm: transa a string", script = gemm("wl.cublas.gemm { " .. OK
    .. ", transa = 'false' }"),
    stderr = "script.lua:3: wl.cublas.gemm: transa must be true or false, got a string" },
  { name = "cublas.gemm: negative workspace", script = gemm("wl.cublas.gemm { " .. OK
    .. ", workspace = -1 }"),
    stderr = "script.lua:3: wl.cublas.gemm: workspace must be a whole number from 0" },
  { name = "cublas.gemm: stream not a stream", script = gemm("wl.cublas.gemm { " .. OK
    .. ", stream = 0 }"),
    stderr = "script.lua:3: wl.cublas.gemm: stream must be a wl.stream, got 0" },
  { name = "cublas.gemm: not a table", script = gemm("wl.cublas.gemm(a)"),
    stderr
      =
      "script.lua:3: wl.cublas.gemm: expected a table {a =, b =, c =, m =, n =, k =, ...}, got "
      .. "userdata" },
  { name = "cublaslt.matmul: b too small", script = gemm(
    "wl.cublaslt.matmul { a = a, b = b, c = c, m = 64, n = 32, k = 32 }"),
    stderr
      =
      "script.lua:3: wl.cublaslt.matmul: b has 512 elements, but b %(32 x 32, row%-major, ldb = "
      .. "32%) needs 1024" },
  { name = "cublaslt.matmul: unknown field", script = gemm("wl.cublaslt.matmul { " .. OK
    .. ", algo = 1 }"),
    stderr = "script.lua:3: wl.cublaslt.matmul: unknown field 'algo'" },
  { name = "cublas.gemm: launched after its c was freed",
    script = gemm("local g = wl.cublas.gemm { " .. OK .. " }\nc:free() g()"),
    stderr = "script.lua:4: launch: .*cublas.gemm f32 fp32 64x16x32.*argument 3 used after free" },
  -- wl.cublas.prepare: what it is asked for (docs/cublas.md, "The first call of each kind")
  { name = "cublas.prepare: not a list", script = gemm("wl.cublas.prepare 'bf16'"),
    stderr
      =
      "script.lua:3: wl.cublas.prepare: expected a list of kinds {{dtype =, compute =}, ...}, "
      .. "got string" },
  { name = "cublas.prepare: an empty list", script = gemm("wl.cublas.prepare {}"),
    stderr
      =
      "script.lua:3: wl.cublas.prepare: expected a list of kinds {{dtype =, compute =}, ...}, "
      .. "got an empty table" },
  { name = "cublas.prepare: one kind not in a list",
    script = gemm("wl.cublas.prepare { dtype = 'bf16' }"),
    stderr
      =
      "script.lua:3: wl.cublas.prepare: expected a list of kinds {{dtype =, compute =}, ...}, "
      .. "got a table with no list entries %(one kind is written {{dtype = ...}}%)" },
  { name = "cublas.prepare: a list with a named field",
    script = gemm("wl.cublas.prepare { { dtype = 'f32' }, compute = 'tf32' }"),
    stderr
      =
      "script.lua:3: wl.cublas.prepare: expected a list of kinds {{dtype =, compute =}, ...}; "
      .. "it has the key 'compute'" },
  { name = "cublas.prepare: a kind that is a string",
    script = gemm("wl.cublas.prepare { { dtype = 'f32' }, 'bf16' }"),
    stderr
      =
      "script.lua:3: wl.cublas.prepare: kind 2: expected a table {dtype =, compute =}, "
      .. "got string" },
  { name = "cublas.prepare: no dtype", script = gemm("wl.cublas.prepare { { compute = 'tf32' } }"),
    stderr
      =
      "script.lua:3: wl.cublas.prepare: kind 1: dtype must be f32, f64, f16 or bf16, got nothing" },
  { name = "cublas.prepare: an integer dtype", script = gemm(
    "wl.cublas.prepare { { dtype = 'i8' } }"),
    stderr
      = "script.lua:3: wl.cublas.prepare: kind 1: dtype must be f32, f64, f16 or bf16, got 'i8'" },
  { name = "cublas.prepare: a compute the dtype has not",
    script = gemm("wl.cublas.prepare { { dtype = 'bf16', compute = 'tf32' } }"),
    stderr
      =
      "script.lua:3: wl.cublas.prepare: kind 1: compute 'tf32' is not one for bf16 tensors "
      .. "%(fp32%)" },
  { name = "cublas.prepare: unknown field", script = gemm(
    "wl.cublas.prepare { { dtype = 'f16', computes = 'fp16' } }"),
    stderr
      =
      "script.lua:3: wl.cublas.prepare: kind 1: unknown field 'computes' %(fields: dtype, "
      .. "compute%)" },
  -- the libraries themselves: exit 4 (no_device: what the GPU work needs is not there)
  { name = "WLRUN_CUBLAS names no file", code = 4,
    env = "WLRUN_CUBLAS=/nonexistent/libcublas.so.13",
    script = gemm("wl.cublas.gemm { " .. OK .. " }"),
    stderr
      =
      "script.lua:3: wl.cublas.gemm: cuBLAS: WLRUN_CUBLAS=/nonexistent/libcublas.so.13 does not "
      .. "load: .*point WLRUN_CUBLAS at libcublas.so.13" },
  { name = "WLRUN_CUBLASLT names no file", code = 4, env = "WLRUN_CUBLASLT=/nonexistent.so",
    script = gemm("wl.cublaslt.matmul { " .. OK .. " }"),
    stderr
      =
      "script.lua:3: wl.cublaslt.matmul: cuBLASLt: WLRUN_CUBLASLT=/nonexistent.so does not load" },
  { name = "WLRUN_CUBLAS names a library without cuBLAS's symbols", code = 4,
    env = "WLRUN_CUBLAS=libm.so.6",
    script = gemm("wl.cublas.gemm { " .. OK .. " }"),
    stderr = "script.lua:3: wl.cublas.gemm: cuBLAS: libm.so.6 has no symbol cublasCreate_v2" },
  { name = "WLRUN_CUBLASLT names a library without cuBLASLt's symbols", code = 4,
    env = "WLRUN_CUBLASLT=libm.so.6",
    script = gemm("wl.cublaslt.matmul { " .. OK .. " }"),
    stderr = "script.lua:3: wl.cublaslt.matmul: cuBLASLt: libm.so.6 has no symbol cublasLtCreate" },
  { name = "WLRUN_CUBLAS names no file, on a GPU", code = 4, gpu = true, args = "",
    env = "WLRUN_CUBLAS=/nonexistent.so",
    script = gemm("wl.cublas.gemm { " .. OK .. " }"),
    stderr = "script.lua:3: wl.cublas.gemm: cuBLAS: WLRUN_CUBLAS=/nonexistent.so does not load" },
  -- NVRTC, opened at its first use: exit 6 (the compiler)
  { name = "WLRUN_NVRTC names no file", code = 6, env = "WLRUN_NVRTC=/nonexistent/libnvrtc.so.13",
    script
      =
      'local wl = require "wlrun"\nwl.kernel { \'extern "C" __global__ void k() {}\', name '
      .. '= "k" }\n',
    stderr
      =
      "script.lua:2: wl.kernel 'k': NVRTC: WLRUN_NVRTC=/nonexistent/libnvrtc.so.13 does not "
      .. "load: .*point WLRUN_NVRTC at libnvrtc.so.13" },
  { name = "WLRUN_NVRTC names a library without NVRTC's symbols", code = 6,
    env = "WLRUN_NVRTC=libm.so.6",
    script = 'local wl = require "wlrun"\nprint(wl.nvrtc_version())\n',
    stderr = "script.lua:2: wl.nvrtc_version: NVRTC: libm.so.6 has no symbol nvrtc" },
}

for _, c in ipairs(cases) do
  c.code = c.code or 1
  c.args = c.args or CO
end
return cases
