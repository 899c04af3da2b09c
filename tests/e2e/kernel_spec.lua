-- End-to-end, no device needed: kernels compiled by NVRTC for --arch sm_90, the on-disk cache,
-- and argument checking at bind under --compile-only (docs/lua-api.md, "Kernels", "Launches",
-- "Compile only"). Every run gets its own cache directory unless a test shares one on purpose.
local h = require "helper"

local AXPY = [[
template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
]]

local ADDONE = [[
extern "C" __global__ void addone(float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1.0f;
}
]]

-- Runs a script with --arch sm_90 and a cache directory (a fresh one unless given).
local function run(source, opts)
  opts = opts or {}
  local cache = opts.cache or h.tmpdir()
  local args = "--arch sm_90 --cache-dir " .. h.quote(cache) .. " " .. (opts.args or "")
  local r, path = h.run_script(source, args, { cwd = opts.cwd, env = opts.env,
    prefix = opts.prefix })
  return r, path, cache
end

-- A script that compiles one kernel and prints what the cache did.
local function cache_script(code, extra)
  return ([[
local wl = require "wlrun"
local k = wl.kernel { %s, name = "axpy<float>" %s }
local s = wl.compile_stats()
print(("compiles=%%d hits=%%d from_cache=%%s"):format(s.compiles, s.cache_hits, tostring(k.from_cache)))
]]):format(code, extra or "")
end

local COMPILED = "compiles=1 hits=0 from_cache=false\n"
local CACHED = "compiles=0 hits=1 from_cache=true\n"

local function cache_entries(dir)
  local p = io.popen("ls " .. h.quote(dir) .. " 2>/dev/null")
  local names = {}
  for line in p:lines() do names[#names + 1] = line end
  p:close()
  return names
end

describe("kernels compiled without a device (--arch sm_90)", function()
  it("compiles a C++ template by its name expression; params give PTX and C types", function()
    local r = run(([[
local wl = require "wlrun"
local k = wl.kernel { %q, name = "axpy<float>" }
print(k.name, k.lowered_name, k.arch, k.source, k.from_cache, k.cubin_bytes > 0)
print(k.ptx:find(".target sm_90", 1, true) ~= nil, k.ptx:find(k.lowered_name, 1, true) ~= nil)
for i, p in ipairs(k.params) do print(i, p.ptx, p.size, p.ctype) end
]]):format(AXPY))
    assert.equal(0, r.code, r.stderr)
    assert.equal(table.concat({
      "axpy<float>\t_Z4axpyIfEvT_PKS0_PS0_i\tsm_90\t<string>\tfalse\ttrue",
      "true\ttrue",
      "1\t.f32\t4\tfloat",
      "2\t.u64\t8\tconst float*",
      "3\t.u64\t8\tfloat*",
      "4\t.u32\t4\tint",
    }, "\n") .. "\n", r.stdout)
  end)

  it("compiles an extern \"C\" kernel: the name is not mangled and params have no C types",
    function()
    local r = run(([[
local wl = require "wlrun"
local k = wl.kernel { %q, name = "addone" }
print(k.name, k.lowered_name)
for i, p in ipairs(k.params) do print(i, p.ptx, p.size, p.ctype) end
]]):format(ADDONE))
    assert.equal(0, r.code, r.stderr)
    assert.equal("addone\taddone\n1\t.u64\t8\tnil\n2\t.u32\t4\tnil\n", r.stdout)
  end)

  it("passes boolean defines (true as -DNAME, false left out) and options to NVRTC", function()
    local r = run([=[
local wl = require "wlrun"
local k = wl.kernel { [[
#if !defined(ON) || defined(OFF) || !defined(FROM_OPTION)
#error defines or options not passed
#endif
extern "C" __global__ void k(float* p) { p[threadIdx.x] = 1.0f; }
]], name = "k", defines = { ON = true, OFF = false }, options = { "-DFROM_OPTION" } }
print(k.name)
]=])
    assert.equal(0, r.code, r.stderr)
    assert.equal("k\n", r.stdout)
  end)

  it("passes number and string defines as -DNAME=VALUE", function()
    local r = run([=[
local wl = require "wlrun"
local k = wl.kernel { [[
#if TILE != 32
#error TILE not passed
#endif
extern "C" __global__ void k(float* p) { p[threadIdx.x] = TILE * SCALE; }
]], name = "k", defines = { TILE = 32, SCALE = "2.0f" } }
print(k.name)
]=])
    assert.equal(0, r.code, r.stderr)
    assert.equal("k\n", r.stdout)
  end)

  it("finds the toolkit's cuda_fp16.h and cuda_bf16.h: __half and __nv_bfloat16 kernels", function()
    local r = run([=[
local wl = require "wlrun"
local k = wl.kernel { [[
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void scale(__half* a, __nv_bfloat16* b, __half s, __nv_bfloat16 t, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { a[i] = __hmul(a[i], s); b[i] = __hmul(b[i], t); }
}
]], name = "scale" }
for i, p in ipairs(k.params) do print(i, p.size, p.ctype) end
]=])
    assert.equal(0, r.code, r.stderr)
    assert.equal(
      "1\t8\t__half*\n2\t8\t__nv_bfloat16*\n3\t2\t__half\n4\t2\t__nv_bfloat16\n5\t4\tint\n",
      r.stdout)
  end)

  it("reads wl.source and file = paths relative to the script's directory, not the cwd", function()
    local dir = h.tmpdir()
    h.write(dir .. "/addone.cu", ADDONE)
    local script = h.write(dir .. "/script.lua", [[
local wl = require "wlrun"
local src = wl.source "addone.cu"
local a = wl.kernel { src, name = "addone" }
local b = wl.kernel { file = "addone.cu", name = "addone" }
print(src.kind, src.path, a.source, b.source)
]])
    local elsewhere = h.tmpdir()
    local r = h.run(h.quote(script) .. " --arch sm_90 --cache-dir " .. h.quote(h.tmpdir()),
      { cwd = elsewhere })
    assert.equal(0, r.code, r.stderr)
    local path = dir .. "/addone.cu"
    assert.equal(("source\t%s\t%s\t%s\n"):format(path, path, path), r.stdout)
  end)

  it("says that a missing source file cannot be read (exit 9)", function()
    local r = run("require('wlrun').source 'missing.cu'\n")
    assert.equal(9, r.code)
    assert.matches("cannot read kernel source .*/missing%.cu", r.stderr)
  end)

  it("says that NVRTC is there but does not load, with the loader's reason, not that it is missing",
    function()
    local src = "require('wlrun').kernel { 'extern \"C\" __global__ void k() {}', name = 'k' }\n"
    -- no memory to map it: a limit on the address space that wlrun itself fits in (not under
    -- AddressSanitizer, whose shadow memory no such limit leaves room for)
    if os.getenv("WLRUN_TEST_SANITIZED") ~= "1" then
      local r = run(src, { prefix = "ulimit -v 100000;" })
      assert.equal(6, r.code, r.stderr) -- the compiler not there to use
      assert.matches(
        "wl.kernel 'k': NVRTC %(libnvrtc%.so%.13%) is there but does not load: .*no memory "
        .. "to map it", r.stderr)
      assert.is_nil(r.stderr:find("not found", 1, true), r.stderr)
    end
    -- WLRUN_NVRTC naming a file that is not a library
    local r = run(src, { env = "WLRUN_NVRTC=/etc/hostname" })
    assert.equal(6, r.code, r.stderr)
    assert.matches("WLRUN_NVRTC=/etc/hostname does not load: /etc/hostname: ", r.stderr)
  end)

  it("refuses an unknown wl.kernel field and a missing name", function()
    local r = run(([[
local wl = require "wlrun"
print(select(2, pcall(wl.kernel, { %q, name = "addone", define = { N = 1 } })))
print(select(2, pcall(wl.kernel, { %q })))
]]):format(ADDONE, ADDONE))
    assert.equal(0, r.code, r.stderr)
    assert.equal(
      "wl.kernel: unknown field 'define' (fields: name, defines, options, compiler, file, "
      .. "format, params)\n"
      .. "wl.kernel: 'name' (the kernel's name) is required\n", r.stdout)
  end)

  it("reports a compile error with the NVRTC log at the wl.kernel line (exit 6)", function()
    local r, path = run([=[
local wl = require "wlrun"

local k = wl.kernel { [[__global__ void broken(float* x) { x[0] = undefined_thing; }]], name = "broken" }
]=])
    assert.equal(6, r.code)
    assert.truthy(r.stderr:find(path .. ":3:", 1, true), r.stderr)
    assert.truthy(r.stderr:find("compiling kernel 'broken'", 1, true), r.stderr)
    assert.truthy(r.stderr:find('error: identifier "undefined_thing" is undefined', 1, true),
      r.stderr)
  end)

  it("makes a compile error a catchable error of kind compile", function()
    local r = run([=[
local wl = require "wlrun"
local ok, e = pcall(wl.kernel, { [[__global__ void k() { nope(); }]], name = "k" })
print(ok, e.kind, tostring(e):find("error: identifier \"nope\" is undefined", 1, true) ~= nil)
]=])
    assert.equal(0, r.code, r.stderr)
    assert.equal("false\tcompile\ttrue\n", r.stdout)
  end)

  if not h.has_gpu then
    it("without a device and without --arch, wl.kernel is a no_device error naming --arch (exit 4)",
      function()
      local r = h.run_script(("require('wlrun').kernel { %q, name = 'addone' }\n"):format(ADDONE),
        "--no-cache")
      assert.equal(4, r.code, r.stderr)
      assert.matches("%-%-arch sm_90", r.stderr)
    end)
  end

  it("takes the architecture from [compile] arch in wlrun.ini", function()
    local dir = h.tmpdir()
    h.write(dir .. "/wlrun.ini", "[compile]\narch = sm_90\ncache_dir = " .. dir .. "/cache\n")
    local r = h.run_script(("print(require('wlrun').kernel { %q, name = 'addone' }.arch)\n"):format(
      ADDONE),
      "", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    assert.equal("sm_90\n", r.stdout)
  end)

  it("refuses a bad --arch value (exit 2)", function()
    local r = h.run_script("print('ran')", "--arch 90")
    assert.equal(2, r.code)
    assert.matches("%-%-arch: expected a GPU architecture like sm_90", r.stderr)
    assert.equal("", r.stdout)
  end)
end)

describe("the compiled-kernel cache", function()
  it("compiles on the first run and loads from the cache on the second", function()
    local script = cache_script(("%q"):format(AXPY))
    local r1, _, cache = run(script)
    assert.equal(0, r1.code, r1.stderr)
    assert.equal(COMPILED, r1.stdout)
    assert.equal(1, #cache_entries(cache))
    local r2 = run(script, { cache = cache })
    assert.equal(0, r2.code, r2.stderr)
    assert.equal(CACHED, r2.stdout)
  end)

  it("gives the same kernel from the cache as from the compiler", function()
    local script = ([[
local wl = require "wlrun"
local k = wl.kernel { %q, name = "axpy<float>" }
print(k.lowered_name, k.cubin_bytes, #k.ptx, #k.params, k.params[2].ctype)
]]):format(AXPY)
    local r1, _, cache = run(script)
    local r2 = run(script, { cache = cache })
    assert.equal(0, r2.code, r2.stderr)
    assert.equal(r1.stdout, r2.stdout)
  end)

  it("compiles again when a define changes", function()
    local cache = h.tmpdir()
    local code = ("%q"):format(AXPY)
    assert.equal(COMPILED, run(cache_script(code, ", defines = { TILE = 16 }"),
      { cache = cache }).stdout)
    assert.equal(COMPILED, run(cache_script(code, ", defines = { TILE = 32 }"),
      { cache = cache }).stdout)
    assert.equal(CACHED, run(cache_script(code, ", defines = { TILE = 16 }"),
      { cache = cache }).stdout)
    assert.equal(COMPILED, run(cache_script(code, ", defines = { FAST = true }"),
      { cache = cache }).stdout)
    assert.equal(COMPILED, run(cache_script(code, ", defines = { FAST = false }"),
      { cache = cache }).stdout)
  end)

  it("compiles again when an option changes", function()
    local cache = h.tmpdir()
    local code = ("%q"):format(AXPY)
    assert.equal(COMPILED, run(cache_script(code), { cache = cache }).stdout)
    assert.equal(COMPILED, run(cache_script(code, ", options = { '-use_fast_math' }"),
      { cache = cache }).stdout)
    assert.equal(CACHED, run(cache_script(code, ", options = { '-use_fast_math' }"),
      { cache = cache }).stdout)
  end)

  it("compiles again when the source changes", function()
    local cache = h.tmpdir()
    assert.equal(COMPILED, run(cache_script(("%q"):format(AXPY)), { cache = cache }).stdout)
    assert.equal(COMPILED, run(cache_script(("%q"):format("// edited\n" .. AXPY)),
      { cache = cache }).stdout)
  end)

  it("compiles again when a header included with #include \"...\" changes", function()
    local dir, cache = h.tmpdir(), h.tmpdir()
    h.write(dir .. "/scale.cuh", "#define SCALE 2.0f\n")
    h.write(dir .. "/k.cu", '#include "scale.cuh"\n' ..
      'extern "C" __global__ void scale(float* p) { p[threadIdx.x] *= SCALE; }\n')
    local script = [[
local wl = require "wlrun"
local k = wl.kernel { wl.source "k.cu", name = "scale" }
local s = wl.compile_stats()
print(("compiles=%d hits=%d from_cache=%s"):format(s.compiles, s.cache_hits, tostring(k.from_cache)))
]]
    local function go() return run(script, { cwd = dir, cache = cache }) end
    assert.equal("compiles=1 hits=0 from_cache=false\n", go().stdout)
    assert.equal("compiles=0 hits=1 from_cache=true\n", go().stdout)
    h.write(dir .. "/scale.cuh", "#define SCALE 3.0f\n")
    local r = go()
    assert.equal(0, r.code, r.stderr)
    assert.equal("compiles=1 hits=0 from_cache=false\n", r.stdout)
  end)

  it("compiles again for another --arch", function()
    local script = cache_script(("%q"):format(AXPY))
    local _, _, cache = run(script)
    local r = h.run_script(script, "--arch sm_80 --cache-dir " .. h.quote(cache))
    assert.equal(0, r.code, r.stderr)
    assert.equal(COMPILED, r.stdout)
  end)

  it("keeps the compiler's warnings (k.log) with the cached kernel", function()
    local script = [=[
local wl = require "wlrun"
local k = wl.kernel { [[__global__ void w(float* p) { int unused; p[0] = 1.0f; }]], name = "w" }
print(k.from_cache, k.log:find('variable "unused" was declared but never referenced', 1, true) ~= nil)
]=]
    local r1, _, cache = run(script)
    assert.equal(0, r1.code, r1.stderr)
    assert.equal("false\ttrue\n", r1.stdout)
    assert.equal("true\ttrue\n", run(script, { cache = cache }).stdout)
  end)

  it("neither reads nor writes the cache with --no-cache", function()
    local script = cache_script(("%q"):format(AXPY))
    local _, _, cache = run(script) -- fills the cache
    local r = run(script, { cache = cache, args = "--no-cache" })
    assert.equal(0, r.code, r.stderr)
    assert.equal(COMPILED, r.stdout)
    local empty = h.tmpdir()
    for _ = 1, 2 do
      r = run(script, { cache = empty, args = "--no-cache" })
      assert.equal(COMPILED, r.stdout)
    end
    assert.same({}, cache_entries(empty))
  end)

  it("uses $WLRUN_CACHE_DIR when no --cache-dir is given", function()
    local cache = h.tmpdir()
    local script = cache_script(("%q"):format(AXPY))
    local env = "WLRUN_CACHE_DIR=" .. h.quote(cache)
    local r = h.run_script(script, "--arch sm_90", { env = env })
    assert.equal(0, r.code, r.stderr)
    assert.equal(COMPILED, r.stdout)
    assert.equal(1, #cache_entries(cache))
    assert.equal(CACHED, h.run_script(script, "--arch sm_90", { env = env }).stdout)
  end)

  -- a kernel that takes NVRTC a few seconds (CUB's block radix sort), so that two processes
  -- started together compile it at the same time
  local SLOW = [==[
#include <cub/block/block_radix_sort.cuh>
extern "C" __global__ void slow(int *d) {
  typedef cub::BlockRadixSort<int, 128, 4> S;
  __shared__ typename S::TempStorage t;
  int k[4] = {d[threadIdx.x], 1, 2, 3};
  S(t).Sort(k);
  d[threadIdx.x] = k[0];
}
]==]

  -- runs script in n wlrun processes at once on one cache; their outputs (stdout, then stderr)
  -- and exit codes
  local function together(script, cache, n)
    local dir = h.tmpdir()
    h.write(dir .. "/s.lua", script)
    local bin = h.bin:sub(1, 1) == "/" and h.bin or (h.source_dir .. "/" .. h.bin)
    local cmd = {}
    for i = 1, n do
      cmd[#cmd + 1] = (
        "(%s %s --arch sm_90 --compile-only --cache-dir %s >%s/out.%d 2>&1; echo $? "
        .. ">%s/code.%d) &"):format(
        h.quote(bin), h.quote(dir .. "/s.lua"), h.quote(cache), dir, i, dir, i)
    end
    assert(os.execute(table.concat(cmd, " ") .. " wait"))
    local outs, codes = {}, {}
    for i = 1, n do
      outs[i] = h.read(("%s/out.%d"):format(dir, i))
      codes[i] = tonumber(h.read(("%s/code.%d"):format(dir, i)))
    end
    return outs, codes
  end

  it(
    "compiles a kernel once for processes that ask for it at the same time: the others wait "
    .. "and load it", function()
    local cache = h.tmpdir()
    local script = (
      "local wl = require 'wlrun'\nprint('from_cache=' .. tostring(wl.kernel { %q, name = "
      .. "'slow' }.from_cache))\n"):format(SLOW)
    local outs, codes = together(script, cache, 3)
    local compiled = 0
    for i = 1, 3 do
      assert.equal(0, codes[i], outs[i])
      if outs[i]:match("from_cache=false") then compiled = compiled + 1 end
    end
    assert.equal(1, compiled, table.concat(outs, "\n"))
    assert.same(1, #cache_entries(cache)) -- the entry, and no lock left behind
  end)

  it("lets a process waiting for another's compile go on when that compile fails", function()
    local cache = h.tmpdir()
    local script = ("local wl = require 'wlrun'\nwl.kernel { %q, name = 'slow' }\n"):format(
      SLOW:gsub("Sort%(k%);", "Sort(k) oops;"))
    local outs, codes = together(script, cache, 2)
    for i = 1, 2 do
      assert.equal(6, codes[i], outs[i])
      assert.matches("compiling kernel 'slow' from <string> failed", outs[i])
    end
    assert.same({}, cache_entries(cache))
  end)

  it(
    "says once that it waits for another process's compile that takes long (its lock held), "
    .. "then goes on", function()
    local script = cache_script(("%q"):format(AXPY))
    local _, _, cache = run(script)
    local entry = cache_entries(cache)[1]
    os.remove(cache .. "/" .. entry)
    local lock, dir = cache .. "/" .. entry:gsub("%.wlk$", ".lock"), h.tmpdir()
    h.write(dir .. "/s.lua", script)
    local function wait_for(path)
      for _ = 1, 6000 do -- at most 60 s
        local f = io.open(path)
        if f then
          local text = f:read("a")
          f:close()
          return text
        end
        os.execute("sleep 0.01")
      end
      error("no " .. path)
    end
    -- a process that holds the lock (flock, util-linux) until told to let go, as a hung compile
    -- would
    finally(function() h.write(dir .. "/release", "") end)
    assert(
      os.execute(
      ("flock -x %s sh -c 'touch %s/held; while [ ! -e %s/release ]; do sleep 0.05; done' "
      .. ">/dev/null 2>&1 &"):format(
      h.quote(lock), h.quote(dir), h.quote(dir))))
    wait_for(dir .. "/held")
    local bin = h.bin:sub(1, 1) == "/" and h.bin or (h.source_dir .. "/" .. h.bin)
    assert(
      os.execute(
      ("(%s %s --arch sm_90 --cache-dir %s >%s/out 2>%s/err; echo $? >%s/code.tmp; mv "
      .. "%s/code.tmp %s/code) >/dev/null 2>&1 &"):format(
      h.quote(bin), h.quote(dir .. "/s.lua"), h.quote(cache), h.quote(dir), h.quote(dir),
        h.quote(dir), h.quote(dir), h.quote(dir))))
    local said
    for _ = 1, 600 do -- the note comes after 5 s of waiting; at most 60 s
      local f = io.open(dir .. "/err") -- made by the shell, which may not have started yet
      said = f and f:read("a") or ""
      if f then f:close() end
      if said:find("waiting for another process", 1, true) then break end
      os.execute("sleep 0.1")
    end
    h.write(dir .. "/release", "")
    assert.equal("0\n", wait_for(dir .. "/code"), h.read(dir .. "/err"))
    -- it compiled once the lock was let go (nothing was stored)
    assert.equal(COMPILED, h.read(dir .. "/out"))
    local err = h.read(dir .. "/err")
    local _, n = err:gsub("waiting for another process that compiles it", "")
    assert.equal(1, n, err)
    assert.matches(
      "wl.kernel 'axpy<float>': waiting for another process that compiles it %(5 s so far; the "
      .. "lock is .-%.lock", err)
  end)

  it("compiles without the lock where its name is not a regular file (a FIFO planted there)",
    function()
    local script = cache_script(("%q"):format(AXPY))
    local _, _, cache = run(script)
    local entry = cache_entries(cache)[1]
    assert.matches("^%x+%.wlk$", entry)
    os.remove(cache .. "/" .. entry)
    assert(os.execute("mkfifo " .. h.quote(cache .. "/" .. entry:gsub("%.wlk$", ".lock"))))
    local r = run(script, { cache = cache, args = "", prefix = "timeout 60" })
    assert.equal(0, r.code, r.stderr)
    assert.equal(COMPILED, r.stdout)
  end)

  it("removes what a process killed while it stored the entry left (HASH.wlk.XXXXXX.tmp)",
    function()
    local script = cache_script(("%q"):format(AXPY))
    local _, _, cache = run(script)
    local entry = cache_entries(cache)[1]
    os.remove(cache .. "/" .. entry)
    h.write(cache .. "/" .. entry .. ".aB3xYz.tmp", "WLRUN-KERNEL-1\n half")
    h.write(cache .. "/0123456789abcdef0123456789abcdef.wlk.aB3xYz.tmp", "another entry's")
    local r = run(script, { cache = cache, args = "" })
    assert.equal(0, r.code, r.stderr)
    assert.equal(COMPILED, r.stdout)
    local want = { "0123456789abcdef0123456789abcdef.wlk.aB3xYz.tmp", entry }
    table.sort(want)
    local got = cache_entries(cache)
    table.sort(got)
    assert.same(want, got)
  end)

  it("is filled by --compile-only", function()
    local script = cache_script(("%q"):format(AXPY))
    local r1, _, cache = run(script, { args = "--compile-only" })
    assert.equal(0, r1.code, r1.stderr)
    assert.equal(1, #cache_entries(cache))
    assert.equal(CACHED, run(script, { cache = cache }).stdout)
  end)
end)

describe("--compile-only", function()
  -- One cache for the whole block: the kernels compile once, every later run loads them.
  local cache = h.tmpdir()

  local PRELUDE = ([[
local wl = require "wlrun"
local axpy = wl.kernel { %q, name = "axpy<float>" }
local addone = wl.kernel { %q, name = "addone" }
local x, y = wl.tensor { 1024 }, wl.tensor { 1024 }
local half = wl.tensor { 1024, dtype = "f16" }
local pageable = wl.host_tensor { 1024 }
]]):format(AXPY, ADDONE)

  local BIND_LINE = select(2, PRELUDE:gsub("\n", "")) + 1 -- %q spreads the sources over lines

  -- Runs PRELUDE followed by body under --compile-only.
  local function compile_only(body)
    return run(PRELUDE .. body, { cache = cache, args = "--compile-only" })
  end

  -- A bind that is refused: the script fails with exit 1 and the message on stderr.
  local function refused(bind, message)
    local r, path = compile_only(bind .. "\n")
    assert.equal(1, r.code, r.stderr)
    assert.truthy(r.stderr:find(message, 1, true), "expected «" .. message .. "» in:\n" .. r.stderr)
    assert.truthy(r.stderr:find(path .. ":" .. BIND_LINE .. ":", 1, true), r.stderr)
  end

  it("accepts a correct bind; launches, events, graphs and sync do nothing (exit 0)", function()
    local r = compile_only([[
local l = axpy:bind { grid = 4, block = 256, args = { 2.0, x, y, 1024 } }
print(tostring(l))
l() l:launch(100)
local g = wl.graph(function() l() end) g()
local e0, e1 = wl.event(), wl.event()
e0:record() e1:record()
print(wl.elapsed(e0, e1))
y:copy_from(x)
wl.sync()
local m = addone:bind { grid = { 4, 1, 1 }, block = { 256 }, args = { y, 1024 } }
m()
io.stderr:write("done\n")
]])
    assert.equal(0, r.code, r.stderr)
    assert.matches(
      "^launch of axpy<float> <<<%(4,1,1%), %(256,1,1%), 0>>>\nnil\tnot measured: "
      .. "%-%-compile%-only runs nothing\n", r.stdout)
    assert.matches("done\n", r.stderr)
  end)

  it("prints the kernels it compiled", function()
    local r = compile_only("")
    assert.equal(0, r.code, r.stderr)
    -- loose: the listing's format is not fixed by the docs; the script itself prints nothing
    assert.matches("axpy<float>", r.stdout)
    assert.matches("addone", r.stdout)
  end)

  it("refuses a wrong argument count", function()
    refused("axpy:bind { grid = 4, block = 256, args = { 2.0, x, y } }",
      "kernel 'axpy<float>' takes 4 arguments, bind gave 3")
  end)

  it("refuses a float where an integer is expected", function()
    refused("axpy:bind { grid = 4, block = 256, args = { 2.0, x, y, 2.5 } }",
      "kernel 'axpy<float>' argument 4 (int, PTX .u32): expected an integer from -2147483648 to "
        .. "2147483647, got float 2.5")
  end)

  it("refuses a tensor where a number is expected", function()
    refused("axpy:bind { grid = 4, block = 256, args = { x, x, y, 1024 } }",
      "kernel 'axpy<float>' argument 1 (float, PTX .f32): expected a number, got a f32 tensor "
        .. "(device)")
  end)

  it("refuses a number where a tensor is expected", function()
    refused("axpy:bind { grid = 4, block = 256, args = { 2.0, 3, y, 1024 } }",
      "kernel 'axpy<float>' argument 2 (const float*, PTX .u64): expected a tensor, got integer 3")
  end)

  it("refuses a tensor of another dtype than the pointer's", function()
    refused("axpy:bind { grid = 4, block = 256, args = { 2.0, x, half, 1024 } }",
      "kernel 'axpy<float>' argument 3 (float*, PTX .u64): expected a f32 tensor, got a f16 "
        .. "tensor (device)")
  end)

  it("refuses a pageable host tensor for a pointer", function()
    refused("axpy:bind { grid = 4, block = 256, args = { 2.0, pageable, y, 1024 } }",
      "kernel 'axpy<float>' argument 2 (const float*, PTX .u64): expected device memory")
    refused("axpy:bind { grid = 4, block = 256, args = { 2.0, pageable, y, 1024 } }",
      "got a f32 tensor (host)")
  end)

  it("refuses an integer out of the parameter's range", function()
    refused("axpy:bind { grid = 4, block = 256, args = { 2.0, x, y, 2^40 } }",
      "kernel 'axpy<float>' argument 4 (int, PTX .u32): expected an integer from -2147483648 to "
        .. "2147483647, got float 1099511627776")
    refused("axpy:bind { grid = 4, block = 256, args = { 2.0, x, y, 1 << 40 } }",
      "argument 4 (int, PTX .u32): expected an integer from -2147483648 to 2147483647, got "
        .. "integer 1099511627776")
  end)

  it("refuses a string for a float", function()
    refused("axpy:bind { grid = 4, block = 256, args = { '2', x, y, 1024 } }",
      "kernel 'axpy<float>' argument 1 (float, PTX .f32): expected a number, got string")
  end)

  it("checks extern \"C\" kernels by their PTX types alone", function()
    refused("addone:bind { grid = 4, block = 256, args = { y, 2.5 } }",
      "kernel 'addone' argument 2 (type unknown: extern \"C\", PTX .u32): expected an integer")
    refused("addone:bind { grid = 4, block = 256, args = { y, y } }",
      "kernel 'addone' argument 2 (type unknown: extern \"C\", PTX .u32): expected a number, "
        .. "got a f32 tensor (device)")
  end)

  it("makes a refused bind a catchable error of kind script", function()
    local r = compile_only([[
local ok, e = pcall(axpy.bind, axpy, { grid = 4, block = 256, args = { 2.0, x, y, 2.5 } })
print(ok, e.kind)
]])
    assert.equal(0, r.code, r.stderr)
    assert.equal("false\tscript\n", r.stdout:match("^[^\n]*\n"))
  end)

  it("takes a struct by value as a string of its size, numbers for __half and bool", function()
    local r = run([=[
local wl = require "wlrun"
local k = wl.kernel { [[
#include <cuda_fp16.h>
struct P { float a; int b; };
__global__ void f(P p, __half h, bool flag, unsigned char c, float* out) {
  out[0] = p.a + p.b + (float)h + flag + c;
}
]], name = "f" }
for i, p in ipairs(k.params) do print(i, p.ptx, p.ctype) end
local out = wl.tensor { 1 }
local function try(args)
  local ok, e = pcall(k.bind, k, { grid = 1, block = 1, args = args })
  print(ok or tostring(e))
end
try { string.pack("fi", 1.5, 2), 0.5, true, 255, out }
try { string.pack("f", 1.5), 0.5, true, 255, out }
try { {}, 0.5, true, 255, out }
try { string.pack("fi", 1.5, 2), "half", true, 255, out }
try { string.pack("fi", 1.5, 2), 0.5, true, 256, out }
]=], { cache = cache, args = "--compile-only" })
    assert.equal(0, r.code, r.stderr)
    assert.truthy(r.stdout:find(table.concat({
      "1\t.b8[8]\tP",
      "2\t.b8[2]\t__half",
      "3\t.u8\tbool",
      "4\t.u8\tunsigned char",
      "5\t.u64\tfloat*",
      "true",
      "kernel 'f' argument 1 (P, PTX .b8[8]): expected a string of exactly 8 bytes "
        .. "(string.pack), got string",
      "kernel 'f' argument 1 (P, PTX .b8[8]): expected a string of exactly 8 bytes "
        .. "(string.pack), got table",
      "kernel 'f' argument 2 (__half, PTX .b8[2]): expected a number, got string",
      "kernel 'f' argument 4 (unsigned char, PTX .u8): expected an integer from 0 to 255, got "
        .. "integer 256",
    }, "\n"), 1, true), r.stdout)
  end)

  it("refuses a block of more than 1024 threads", function()
    refused("axpy:bind { grid = 4, block = 2048, args = { 2.0, x, y, 1024 } }",
      "bind: block.x must be a whole number from 1 to 1024, got 2048")
    refused("axpy:bind { grid = 4, block = { 32, 64 }, args = { 2.0, x, y, 1024 } }",
      "bind: block of 32x64x1 = 2048 threads; at most 1024")
  end)

  it("refuses a grid too large in y", function()
    refused("axpy:bind { grid = { 1, 70000 }, block = 256, args = { 2.0, x, y, 1024 } }",
      "bind: grid.y must be a whole number from 1 to 65535, got 70000")
  end)

  it("refuses an unknown bind field", function()
    refused("axpy:bind { grid = 4, block = 256, sream = 1, args = { 2.0, x, y, 1024 } }",
      "bind: unknown field 'sream'")
  end)

  it("refuses what needs a real device (wl.device(), k.attributes)", function()
    local r = compile_only([[
print(pcall(wl.device))
print(pcall(function() return axpy.attributes end))
]])
    assert.equal(0, r.code, r.stderr)
    assert.matches("^false\t[^\n]*needs a CUDA device[^\n]*\nfalse\t[^\n]*needs a CUDA device",
      r.stdout)
  end)

  it("keeps a pinned host tensor pinned, and binds it to a pointer", function()
    local r = compile_only([[
local pinned = wl.host_tensor { 1024, pinned = true }
print(pinned.memory)
axpy:bind { grid = 4, block = 256, args = { 2.0, pinned, y, 1024 } }
print("bound")
]])
    assert.equal(0, r.code, r.stderr)
    assert.matches("^pinned\nbound\n", r.stdout)
  end)

  it("keeps wl.memory() balanced when a pinned host tensor is freed", function()
    local r = compile_only([[
local before = wl.memory()
local pinned = wl.host_tensor { 1024, pinned = true }
pinned:free()
local after = wl.memory()
print(after.host_bytes - before.host_bytes, after.pinned_bytes - before.pinned_bytes)
]])
    assert.equal(0, r.code, r.stderr)
    assert.matches("^0\t0\n", r.stdout)
  end)
end)

describe("random initialisation across runs", function()
  local script = [[
local wl = require "wlrun"
local t = wl.host_tensor { 8, init = wl.normal() }
print(table.concat(t:totable(), ","))
]]

  it("is reproducible and follows --seed", function()
    local a = h.run_script(script, "--seed 3")
    local b = h.run_script(script, "--seed 3")
    local c = h.run_script(script, "--seed 4")
    assert.equal(0, a.code, a.stderr)
    assert.equal(a.stdout, b.stdout)
    assert.are_not.equal(a.stdout, c.stdout)
  end)
end)
