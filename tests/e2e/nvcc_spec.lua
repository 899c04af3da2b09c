-- End-to-end, no device needed: wl.kernel's second compiler, the toolkit's nvcc (docs/kernels.md,
-- "nvcc"), under --compile-only --arch sm_90: how it is chosen, what it records, its cache
-- entries, and its errors. Pending, by name, where the toolkit's nvcc is not installed.
local h = require "helper"

local NVCC = (function()
  for _, p in ipairs { os.getenv("CUDA_HOME") and (os.getenv("CUDA_HOME") .. "/bin/nvcc"),
    "/usr/local/cuda/bin/nvcc" } do
    if p and os.execute("test -x " .. h.quote(p)) then return p end
  end
end)()

local function nvcc_it(name, fn)
  if NVCC then return it(name, fn) end
  require("busted").pending(name .. " -- skipped: no nvcc in $CUDA_HOME/bin or /usr/local/cuda/bin")
end

-- nvcc's version as `nvcc --version` says it: V13.0.88 -> 13.0.88
local VERSION = NVCC and (function()
  local p = io.popen(h.quote(NVCC) .. " --version")
  local v = p:read("a"):match(", V([%d%.]+)")
  p:close()
  return v
end)()

local AXPY = [[
template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
]]

local function run(source, opts)
  opts = opts or {}
  local cache = opts.cache or h.tmpdir()
  local args = "--arch sm_90 --cache-dir " .. h.quote(cache) .. " " .. (opts.args or "")
  local r = h.run_script(source, args, { cwd = opts.cwd, env = opts.env })
  return r, cache
end

local SHOW = [[
local wl = require "wlrun"
local function show(k)
  local ps = {}
  for _, p in ipairs(k.params) do ps[#ps + 1] = p.ptx .. " " .. tostring(p.ctype) end
  print(k.compiler, k.compiler_version, k.lowered_name, k.arch, table.concat(ps, ", "), k.from_cache)
end
]]

describe("wl.kernel compiled by nvcc", function()
  nvcc_it(
    "instantiates a template by its name, as NVRTC does: the same mangled name and parameters",
    function()
    local r = run(SHOW .. ([[
show(wl.kernel { %q, name = "axpy<float>", compiler = "nvcc" })
show(wl.kernel { %q, name = "axpy<double>", compiler = "nvrtc" })
local k = wl.kernel { %q, name = "axpy<float>", compiler = "nvcc" }
print(k.ptx:find(".target sm_90", 1, true) ~= nil, k.cubin_bytes > 0)
]]):format(AXPY, AXPY, AXPY))
    assert.equal(0, r.code, r.stderr)
    assert.equal(table.concat({
      ("nvcc\t%s\t_Z4axpyIfEvT_PKS0_PS0_i\tsm_90\t.f32 float, .u64 const float*, .u64 float*, "
        .. ".u32 int\tfalse"):format(VERSION),
      "nvrtc\t13.0\t_Z4axpyIdEvT_PKS0_PS0_i\tsm_90\t.f64 double, .u64 const double*, .u64 "
        .. "double*, .u32 int\tfalse",
      "true\ttrue",
    }, "\n") .. "\n", r.stdout:gsub("nvrtc\t%d+%.%d+", "nvrtc\t13.0"))
  end)

  nvcc_it("compiles what NVRTC cannot: host headers and host code beside the kernel", function()
    local src = [[
#include <cstdio>
#include <vector>
static int host_only() { std::vector<int> v(3); return (int)v.size(); }
extern "C" __global__ void hello(int* out) { printf("hi\n"); out[0] = 1; }
]]
    local r = run(SHOW
      .. ("show(wl.kernel { %q, name = \"hello\", compiler = \"nvcc\" })\n"):format(src))
    assert.equal(0, r.code, r.stderr)
    assert.matches("^nvcc\t[%d.]+\thello\tsm_90\t.u64 nil\tfalse\n$", r.stdout)
    r = run(SHOW .. ("show(wl.kernel { %q, name = \"hello\" })\n"):format(src))
    assert.equal(6, r.code)
    assert.matches("cannot open source file \"cstdio\"", r.stderr, 1, true)
  end)

  nvcc_it("is chosen by --compiler and [compile] compiler; the table's own compiler wins",
    function()
    local script = SHOW .. ([[
show(wl.kernel { %q, name = "axpy<float>" })
show(wl.kernel { %q, name = "axpy<float>", compiler = "nvrtc" })
]]):format(AXPY, AXPY)
    local r = run(script, { args = "--compiler nvcc" })
    assert.equal(0, r.code, r.stderr)
    assert.matches("^nvcc\t[^\n]*\nnvrtc\t", r.stdout)
    local dir = h.tmpdir()
    h.write(dir .. "/wlrun.ini", "[compile]\ncompiler = nvcc\n")
    r = run(script, { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    assert.matches("^nvcc\t[^\n]*\nnvrtc\t", r.stdout)
    r = run(script, { cwd = dir, args = "--compiler nvrtc" }) -- the command line over wlrun.ini
    assert.matches("^nvrtc\t[^\n]*\nnvrtc\t", r.stdout)
    r = run(script, { args = "--compiler clang" })
    assert.equal(2, r.code)
    assert.matches("--compiler", r.stderr, 1, true)
    assert.matches("nvrtc|nvcc", r.stderr, 1, true)
  end)

  nvcc_it("compiles ahead with nvcc too (wl.prepare_kernels), as wl.kernel would", function()
    local script = ([[
local wl = require "wlrun"
local spec = { %q, name = "axpy<float>", compiler = "nvcc" }
wl.prepare_kernels { spec }
local n = 0
while n < 1 do
  os.execute("sleep 0.05")
  local p = io.popen("ls " .. arg[1] .. " | grep -c 'wlk$'")
  n = tonumber(p:read("a"))
  p:close()
end
local k = wl.kernel(spec)
local s = wl.compile_stats()
print(k.compiler, k.from_cache, s.compiles, s.ahead)
]]):format(AXPY)
    local cache = h.tmpdir()
    local r = run(script, { cache = cache, args = "-- " .. h.quote(cache) })
    assert.equal(0, r.code, r.stderr)
    assert.equal("nvcc\tfalse\t1\t1\n", r.stdout)
  end)

  nvcc_it("caches nvcc's cubin apart from NVRTC's, keyed by nvcc's version", function()
    local script = ([[
local wl = require "wlrun"
local a = wl.kernel { %q, name = "axpy<float>", compiler = "nvcc" }
local b = wl.kernel { %q, name = "axpy<float>", compiler = "nvrtc" }
local s = wl.compile_stats()
print(a.from_cache, b.from_cache, s.compiles, s.cache_hits, a.lowered_name == b.lowered_name)
]]):format(AXPY, AXPY)
    local r, cache = run(script)
    assert.equal(0, r.code, r.stderr)
    assert.equal("false\tfalse\t2\t0\ttrue\n", r.stdout)
    r = run(script, { cache = cache })
    assert.equal("true\ttrue\t0\t2\ttrue\n", r.stdout)
    -- another nvcc version (a wrapper that says 99.1.2 and compiles with the real one): a miss
    local home = h.tmpdir()
    os.execute("mkdir -p " .. h.quote(home .. "/bin"))
    h.write(home .. "/bin/nvcc", ([[#!/bin/sh
if [ "$1" = --version ]; then echo "Cuda compilation tools, release 99.1, V99.1.2"; exit 0; fi
exec %s "$@"
]]):format(h.quote(NVCC)))
    os.execute("chmod +x " .. h.quote(home .. "/bin/nvcc"))
    r = run(script, { cache = cache, env = "WLRUN_NVCC=" .. h.quote(home .. "/bin/nvcc") })
    assert.equal(0, r.code, r.stderr)
    assert.equal("false\ttrue\t1\t1\ttrue\n", r.stdout)
    -- $CUDA_HOME/bin/nvcc comes before /usr/local/cuda's
    r = run(
      'print(require("wlrun").kernel { "extern \\"C\\" __global__ void z() {}", name = "z", '
      .. 'compiler = "nvcc" }.compiler_version)',
      { cache = cache, env = "CUDA_HOME=" .. h.quote(home) })
    assert.equal(0, r.code, r.stderr)
    assert.equal("99.1.2\n", r.stdout)
  end)

  nvcc_it("records the compiler and its version in the results and the --compile-only report",
    function()
    local dir = h.tmpdir()
    h.write(dir .. "/k.cu", AXPY)
    local r = run([[
local wl = require "wlrun"
return wl.scenario { name = "both", params = { compiler = wl.compilers() },
  setup = function(p)
    local k = wl.kernel { wl.source "k.cu", name = "axpy<float>", compiler = p.compiler }
    local x, y = wl.tensor { 64, dtype = "f32" }, wl.tensor { 64, dtype = "f32" }
    return { l = k:bind { grid = 1, block = 64, args = { 2.0, x, y, 64 } } }
  end,
  run = "l" }
]], { cwd = dir, args = "--compile-only -o " .. h.quote(dir .. "/r.json") })
    assert.equal(0, r.code, r.stderr)
    assert.matches("\n  axpy<float>%s+sm_90%s+nvrtc [%d.]+%s+4 params%s+%S*k%.cu", r.stdout)
    assert.matches("\n  axpy<float>%s+sm_90%s+nvcc " .. VERSION:gsub("%.", "%%.")
      .. "%s+4 params%s+%S*k%.cu", r.stdout)
    local doc = require("wlrun.json").decode(h.read(dir .. "/r.json"))
    assert.equal(2, #doc.configurations)
    for _, e in ipairs(doc.configurations) do
      assert.equal(e.params.compiler, e.kernels[1].compiler)
      assert.truthy(e.kernels[1].compiler_version:match("^%d+%.%d"))
    end
  end)

  nvcc_it("finds the source's local headers through its directory, and names the source in errors",
    function()
    local dir = h.tmpdir()
    h.write(dir .. "/common.cuh", "#define SCALE 3.0f\n")
    h.write(dir .. "/k.cu",
      '#include "common.cuh"\nextern "C" __global__ void s(float* y) { y[0] *= SCALE; }\n')
    h.write(dir .. "/bad.cu", "\n\nzz __global__ void k(float* x) {}\n")
    local r = run([[
local wl = require "wlrun"
print(wl.kernel { wl.source "k.cu", name = "s", compiler = "nvcc" }.lowered_name)
wl.kernel { wl.source "bad.cu", name = "k", compiler = "nvcc" }
]], { cwd = dir })
    assert.equal(6, r.code)
    assert.equal("s\n", r.stdout)
    assert.matches("script.lua:3: compiling kernel 'k' from " .. dir:gsub("%p", "%%%0")
      .. "/bad.cu with nvcc", r.stderr)
    -- the user's file and line, not nvcc's temporary copy
    assert.matches("bad.cu(3): error", r.stderr, 1, true)
    assert.matches('in the compilation of "' .. dir .. '/bad.cu"', r.stderr, 1, true)
    assert.not_matches("wlrun%-nvcc%-", r.stderr)
  end)

  nvcc_it("a kernel that is not there: the kernels nvcc's cubin holds", function()
    local r = run(([[
local wl = require "wlrun"
wl.kernel { %q .. "\ntemplate __global__ void axpy<int>(int, const int*, int*, int);\n", name = "_Z4axpyIlEvT_PKS0_PS0_i", compiler = "nvcc" }
]]):format(AXPY))
    assert.equal(6, r.code)
    assert.matches(
      "nvcc's cubin holds no kernel of that name; it has void axpy<int>(int, int const*, "
      .. "int*, int)", r.stderr, 1, true)
  end)

  nvcc_it(
    "refuses a bad compiler value, a compiler for precompiled code, and says where it looked "
    .. "for nvcc", function()
    local r = run(
      'local wl = require "wlrun"\nwl.kernel { "__global__ void k() {}", name = "k", compiler = '
      .. '"clang" }\n')
    assert.equal(1, r.code)
    assert.matches(
      "script.lua:2: wl.kernel 'k': compiler must be \"nvrtc\" or \"nvcc\", got 'clang'", r.stderr,
      1, true)
    r = run(
      'local wl = require "wlrun"\nwl.kernel { file = "k.cubin", name = "k", compiler = "nvcc" }\n')
    assert.equal(1, r.code)
    assert.matches("compiler is for code compiled from source; ", r.stderr, 1, true)
    r = run(
      'local wl = require "wlrun"\nwl.kernel { "__global__ void k() {}", name = "k", compiler = '
      .. '"nvcc" }\n',
      { env = "WLRUN_NVCC=/nonexistent/nvcc" })
    assert.equal(6, r.code)
    assert.matches("wl.kernel 'k': nvcc not found (looked at WLRUN_NVCC=/nonexistent/nvcc)",
      r.stderr, 1, true)
    local empty = h.tmpdir()
    r = run(
      'local wl = require "wlrun"\nprint(#wl.compilers())\nwl.kernel { "__global__ void k() '
      .. '{}", name = "k", compiler = "nvcc" }\n',
      { env = "CUDA_HOME=" .. h.quote(empty) .. " PATH=/usr/bin:/bin", args = "" })
    -- /usr/local/cuda/bin/nvcc is still found: the order is CUDA_HOME, /usr/local/cuda, PATH
    assert.equal(0, r.code, r.stderr)
    assert.equal("2\n", r.stdout)
  end)
end)
