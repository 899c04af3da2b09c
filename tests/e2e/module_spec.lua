-- End-to-end, no device needed: precompiled code built by nvcc (CMake target wlrun_modules,
-- from tests/fixtures/modules/kernels.cu) loaded with wl.kernel{file = ...} under
-- --compile-only: the image chosen for --arch, kernel names, parameters from the file, bind's
-- checks, declared params, and each bad input with its message, script line and exit code
-- (docs/kernels.md, "Precompiled code"). Also NVRTC with the toolkit's include/cccl.
local h = require "helper"

local M = h.modules

local function run(source, arch)
  return h.run_script("local wl = require 'wlrun'\nlocal M = " .. ("%q"):format(M) .. "\n"
    .. source,
    "--compile-only --arch " .. (arch or "sm_90") .. " --cache-dir " .. h.quote(h.tmpdir()))
end

-- prints a kernel: name, lowered name, arch, file name, then each parameter
local SHOW = [[
local function show(k)
  local ps = {}
  for _, p in ipairs(k.params) do ps[#ps + 1] = (p.ctype or "?") .. " " .. p.ptx .. " " .. p.size end
  print(k.name, k.lowered_name, k.arch, k.source:match("[^/]*$"), table.concat(ps, ", "))
end
]]

describe("precompiled modules under --compile-only", function()
  it("loads an extern \"C\" kernel from a cubin: sizes from the cubin, in the report", function()
    local r = run(SHOW .. [[show(wl.kernel { file = M .. "/kernels.cubin", name = "scale" })]])
    assert.equal(0, r.code, r.stderr)
    assert.matches("scale\tscale\tsm_90\tkernels.cubin\t? .b64 8, ? .b64 8, ? .b32 4, ? .b32 4\n",
      r.stdout, 1, true)
    assert.matches("scale%s+sm_90%s+precompiled%s+4 params%s+.*kernels%.cubin", r.stdout)
  end)

  it("finds a C++ template by its demangled or its mangled name, with C types", function()
    local r = run(SHOW .. [[
show(wl.kernel { file = M .. "/kernels.cubin", name = "axpy<float>" })
show(wl.kernel { file = M .. "/kernels.cubin", name = "_Z4axpyIdEvPT_PKS0_S0_i" })]])
    assert.equal(0, r.code, r.stderr)
    assert.matches(
      "axpy<float>\t_Z4axpyIfEvPT_PKS0_S0_i\tsm_90\tkernels.cubin\tfloat* .b64 8, const float* "
      .. ".b64 8, float .b32 4, int .b32 4",
      r.stdout, 1, true)
    assert.matches("double* .b64 8, const double* .b64 8, double .b64 8, int .b32 4", r.stdout, 1,
      true)
  end)

  it("chooses a fatbin's image for the target: sm_90, sm_80 for sm_86, PTX for sm_100", function()
    local src = SHOW .. [[show(wl.kernel { file = M .. "/kernels.fatbin", name = "scale" })]]
    local r90, r86, r100 = run(src), run(src, "sm_86"), run(src, "sm_100")
    assert.equal(0, r90.code, r90.stderr)
    -- the fatbin's (compressed) PTX gives the kinds beside the cubin's sizes
    assert.matches("scale\tscale\tsm_90\tkernels.fatbin\t? .u64 8, ? .u64 8, ? .f32 4, ? .u32 4",
      r90.stdout, 1, true)
    assert.matches("\tsm_80\tkernels.fatbin", r86.stdout, 1, true)
    assert.matches("\tcompute_90\tkernels.fatbin", r100.stdout, 1, true)
  end)

  it("loads PTX, JIT-compiled for any newer target; refuses an older target", function()
    local src = SHOW .. [[show(wl.kernel { file = M .. "/kernels.ptx", name = "axpy<float>" })]]
    local r = run(src)
    assert.equal(0, r.code, r.stderr)
    assert.matches(
      "compute_80\tkernels.ptx\tfloat* .u64 8, const float* .u64 8, float .f32 4, int .u32 4",
      r.stdout, 1, true)
    r = run(src, "sm_75")
    assert.equal(6, r.code)
    assert.matches(
      "script.lua:%d+: wl.kernel 'axpy<float>': .*kernels%.ptx %(ptx%): PTX for compute_80 "
      .. "%(its %.target%); %-%-arch is sm_75", r.stderr)
  end)

  it("binds with the module's checks: count, sizes, a struct by value packed to its size",
    function()
    local r = run([[
local k = wl.kernel { file = M .. "/kernels.cubin", name = "shift" }
local y = wl.tensor { 8, dtype = "i32" }
print(k:bind { grid = 1, block = 8, args = { y, string.pack("<di4xxxx", 2.0, 3), 8 } })
print(select(2, pcall(k.bind, k, { grid = 1, block = 8, args = { y, "short", 8 } })).message)
print(select(2, pcall(k.bind, k, { grid = 1, block = 8, args = { y, 8 } })).message)]])
    assert.equal(0, r.code, r.stderr)
    assert.matches("launch of shift", r.stdout, 1, true)
    assert.matches(
      "argument 2 %(type unknown: extern \"C\", PTX %.b8%[16%]%): expected a string of exactly "
      .. "16 bytes", r.stdout)
    assert.matches("kernel 'shift' takes 3 arguments, bind gave 2", r.stdout, 1, true)
  end)

  it("takes declared params, checked against the file, and then checks full C types", function()
    local r = run([[
local k = wl.kernel { file = M .. "/kernels.cubin", name = "scale", params = "float* y, const float* x, float a, int n" }
for _, p in ipairs(k.params) do io.write(p.ctype, "; ") end print()
local x = wl.tensor { 4, dtype = "f32" }
print(select(2, pcall(k.bind, k, { grid = 1, block = 4, args = { x, x, 2.0, 1.5 } })).message)
print(select(2, pcall(wl.kernel, { file = M .. "/kernels.cubin", name = "scale", params = "float* y, const float* x, double a, int n" })).message)
print(select(2, pcall(wl.kernel, { file = M .. "/kernels.cubin", name = "scale", params = "float* y, int n" })).message)]]) -- luacheck: ignore 631
    assert.equal(0, r.code, r.stderr)
    assert.matches("float*; const float*; float; int; ", r.stdout, 1, true)
    assert.matches("argument 4 (int, PTX .s32): expected an integer", r.stdout, 1, true)
    assert.matches(
      "params declares parameter 3 as 'double' (8 bytes), the module has .b32 (4 bytes)", r.stdout,
      1, true)
    assert.matches("params declares 2 parameters, the module's kernel has 4", r.stdout, 1, true)
  end)

  local bad = {
    { "a missing file", [[wl.kernel { file = "nope.cubin", name = "scale" }]], 9,
      "cannot read .*nope%.cubin: No such file" },
    { "a truncated cubin", [[wl.kernel { file = M .. "/truncated.cubin", name = "scale" }]], 6,
      "truncated or corrupt cubin %(its section table lies past the end of the file, "
        .. "1000 bytes%)" },
    { "a file that is no module",
      [[wl.kernel { file = M .. "/kernels.ptx", format = "cubin", name = "scale" }]], 6,
      "%(cubin%): not a cubin %(no ELF header%)" },
    { "a cubin for another architecture",
      [[wl.kernel { file = M .. "/kernels_sm80.cubin", name = "scale" }]], 6,
      "built for sm_80; %-%-arch is sm_90" },
    { "a kernel the module does not have",
      [[wl.kernel { file = M .. "/kernels.cubin", name = "axpy<int>" }]], 6,
      "no kernel 'axpy<int>' in .*kernels%.cubin; it has .*void axpy<float>%(float%*, float "
        .. "const%*, float, int%) %(_Z4axpyIfEvPT_PKS0_S0_i%).*scale" },
    { "an unknown format",
      [[wl.kernel { file = M .. "/kernels.cubin", format = "elf", name = "scale" }]], 1,
      "format must be \"cubin\", \"fatbin\" or \"ptx\", got 'elf'" },
    { "params for NVRTC source",
      [[wl.kernel { "__global__ void q() {}", name = "q", params = "" }]], 1,
      "params is for precompiled code" },
    { "defines for a cubin",
      [[wl.kernel { file = M .. "/kernels.cubin", name = "scale", defines = { N = 4 } }]], 1,
      "defines is for code compiled from source; .*kernels%.cubin is compiled already" },
    { "options for a PTX file",
      [[wl.kernel { file = M .. "/kernels.ptx", name = "scale", options = { "-O3" } }]], 1,
      "options is for code compiled from source" },
  }
  for _, b in ipairs(bad) do
    it("refuses " .. b[1] .. " with the script line", function()
      local r = run("\n" .. b[2])
      assert.equal(b[3], r.code, r.stderr)
      assert.matches("script.lua:4: ", r.stderr, 1, true)
      assert.matches(b[4], r.stderr)
    end)
  end
end)

describe("a hostile cubin", function()
  -- kernels.cubin with its section-name table and its symbol table's string table turned into
  -- NOBITS sections (no bytes in the file) at an offset far past the end: names are unreadable,
  -- and nothing may be read from where the headers point
  it("whose string tables are NOBITS sections far past its end is refused, never read", function()
    local f = assert(io.open(M .. "/kernels.cubin", "rb"))
    local data = f:read("a")
    f:close()
    local shoff, shnum, shstrndx = string.unpack("<I8", data, 0x29),
      string.unpack("<I2", data, 0x3D),
      string.unpack("<I2", data, 0x3F)
    local function header(i) return shoff + i * 64 + 1 end -- 1-based position of section i's header
    local function nobits(bytes, i)
      local at = header(i)
      bytes = bytes:sub(1, at + 3) .. string.pack("<I4", 8) .. bytes:sub(at + 8)
      return bytes:sub(1, at + 23) .. string.pack("<I8", 0x4000000000) .. bytes:sub(at + 32)
    end
    local hostile = nobits(data, shstrndx)
    for i = 0, shnum - 1 do
      -- SHT_SYMTAB: its sh_link names the strings
      if string.unpack("<I4", data, header(i) + 4) == 2 then
        hostile = nobits(hostile, string.unpack("<I4", data, header(i) + 40))
      end
    end
    assert.equal(#data, #hostile)
    local dir = h.tmpdir()
    local out = assert(io.open(dir .. "/hostile.cubin", "wb"))
    out:write(hostile)
    out:close()
    local r = run(("wl.kernel { file = %q, name = 'scale' }"):format(dir .. "/hostile.cubin"))
    assert.equal(6, r.code, r.stderr)
    assert.matches("script.lua:3: wl.kernel: no kernel 'scale' in", r.stderr, 1, true)
  end)
end)

describe("NVRTC and the toolkit's include/cccl", function()
  it("compiles CUB's block reduce (cub/block/), libcu++ and cooperative groups for sm_90",
    function()
    local r = run([==[
local k = wl.kernel { [[
#include <cuda/std/type_traits>
#include <cub/block/block_reduce.cuh>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void block_sum(const float* x, float* out) {
  static_assert(cuda::std::is_same_v<float, cuda::std::remove_cv_t<const float>>, "libcu++");
  using Reduce = cub::BlockReduce<float, 256>;
  __shared__ typename Reduce::TempStorage tmp;
  cg::thread_block block = cg::this_thread_block();
  float s = Reduce(tmp).Sum(x[blockIdx.x * 256 + block.thread_rank()]);
  if (block.thread_rank() == 0) out[blockIdx.x] = s;
}]], name = "block_sum" }
print(k.name, #k.params)]==])
    assert.equal(0, r.code, r.stderr)
    assert.matches("block_sum\t2", r.stdout, 1, true)
  end)
end)
