-- End-to-end: how a wlrun process ends (docs/architecture.md, "The end of a run"). After the Lua
-- state's close, wlrun waits for the work left on the device (its errors fail the run) and ends
-- at once, without the exit handlers of the libraries it keeps loaded (cuBLAS's static
-- destructors and the like); a tool's code put into the process (LD_PRELOAD,
-- CUDA_INJECTION64_PATH, ...) and WLRUN_EXIT_HANDLERS=1 keep them. The device's cases need a GPU.
-- The marks come from tests/fixtures/exit_mark (built by CMake: WLRUN_EXIT_MARK_LIB, and
-- WLRUN_EXIT_MARK_KEPT_LIB linked with -z nodelete, which the process keeps after dlclose).
local h = require "helper"

local MARK_LIB, KEPT_LIB = os.getenv("WLRUN_EXIT_MARK_LIB"), os.getenv("WLRUN_EXIT_MARK_KEPT_LIB")
-- a build with AddressSanitizer keeps every exit handler (its leak check is one)
local SANITIZED = os.getenv("WLRUN_TEST_SANITIZED") == "1"

local function marks_it(name, fn)
  local busted = require "busted"
  if MARK_LIB and KEPT_LIB then
    busted.it(name, fn)
  else
    busted.pending(name
      .. " -- skipped: WLRUN_EXIT_MARK_LIB and WLRUN_EXIT_MARK_KEPT_LIB not set (ctest sets them)")
  end
end

-- runs a script that opens LIB with wl.library, with ENV before wlrun and WLRUN_TEST_EXIT_MARK
-- naming a fresh file; returns the run and what the destructor wrote there
local function run_with(lib, env)
  local dir = h.tmpdir()
  local mark = dir .. "/mark"
  local r = h.run_script(
    ("local wl = require 'wlrun'\nlocal lib = wl.library { file = %q }\nprint(lib.path)\n"):format(
    lib),
    "", { cwd = dir, env = ("WLRUN_TEST_EXIT_MARK=%s %s"):format(mark, env or "") })
  local f = io.open(mark)
  local text = f and f:read("a") or ""
  if f then f:close() end
  return r, text
end

describe("the process's end", function()
  it("writes everything the script printed, and the files it left open, in full", function()
    local dir = h.tmpdir()
    local r = h.run_script([[
for i = 1, 100000 do print(("line %d of the output"):format(i)) end
io.stderr:write("to standard error, without a newline")
local f = assert(io.open("left_open.txt", "w"))
f:write(string.rep("x", 1 << 20), "end") -- never closed by the script
io.write("the last words, without a newline")
]], "", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    local lines = select(2, r.stdout:gsub("\n", ""))
    assert.equal(100000, lines)
    assert.matches("line 100000 of the output\nthe last words, without a newline$", r.stdout)
    assert.matches("to standard error, without a newline$", r.stderr)
    local f = assert(io.open(dir .. "/left_open.txt"))
    local text = f:read("a")
    f:close()
    assert.equal((1 << 20) + 3, #text)
    assert.equal("end", text:sub(-3))
  end)

  h.gpu_it("waits for what the script queued and never waited for: a kernel's printf comes out",
    function()
    local r = h.run_script([[
local wl = require "wlrun"
local k = wl.kernel { 'extern "C" __global__ void hello(int n) { if (threadIdx.x == 0) printf("hello from the kernel %d\\n", n); }', name = "hello" }
k:bind { grid = 1, block = 32, args = { 42 } }()
]])
    assert.equal(0, r.code, r.stderr)
    assert.matches("hello from the kernel 42\n", r.stdout)
  end)

  h.gpu_it("fails a run whose last kernel, never waited for, faults: exit 5, naming it", function()
    local r = h.run_script([[
local wl = require "wlrun"
local k = wl.kernel { 'extern "C" __global__ void trap() { __trap(); }', name = "trap" }
k:bind { grid = 1, block = 1 }()
print("queued")
]])
    assert.equal(5, r.code, r.stderr)
    assert.matches("queued\n", r.stdout)
    assert.matches("work that the script queued and never waited for failed on the device: cuda",
      r.stderr)
  end)

  h.gpu_it("ends a run whose last kernel never ends after 10 s: exit 5, saying so", function()
    local t0 = os.time()
    local r = h.run_script([[
local wl = require "wlrun"
-- about 20 s (40e9 cycles at 2 GHz), not forever: a wait that does not hold ends the test, not the run
local k = wl.kernel { 'extern "C" __global__ void forever() { long long t0 = clock64(); while (clock64() - t0 < 40000000000LL) {} }', name = "forever" }
k:bind { grid = 1, block = 1 }()
]])
    assert.equal(5, r.code, r.stderr)
    assert.matches(
      "the work queued on the device %(never waited for%) still works after 10 s; the process "
      .. "ends without it",
      r.stderr)
    assert.is_true(os.time() - t0 < 60)
  end)

  marks_it("gives up its waits at a Ctrl-C: exit 130, saying so, the output flushed and checked",
    function()
    -- NVRTC's loading thread is kept busy for 20 s by a library that is slow to load: the end
    -- waits for it (at most 10 s) until the Ctrl-C, sent once the script's last statement has
    -- left a file (and 0.3 s more: the end has begun)
    local dir = h.tmpdir()
    h.write(dir .. "/s.lua",
      "require('wlrun.core').nvrtc_start()\nprint('printed')\nio.write('written')\n"
      .. "io.open('ended', 'w'):close()\n")
    local bin = h.bin:sub(1, 1) == "/" and h.bin or (h.source_dir .. "/" .. h.bin)
    local function run(out)
      local t0 = os.time()
      local rc = dir .. "/rc"
      os.execute(([[cd %s && rm -f ended && (WLRUN_NVRTC=%s WLRUN_TEST_SLOW_LOAD=20 %s s.lua >%s 2>err </dev/null &
        pid=$!; n=0; while [ ! -e ended ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done; sleep 0.3;
        kill -INT $pid; wait $pid; echo $? >%s)]]):format(h.quote(dir), h.quote(MARK_LIB),
        h.quote(bin), out, h.quote(rc)))
      return tonumber(h.read(rc)), h.read(dir .. "/err"), os.time() - t0
    end
    local code, err, took = run("out")
    assert.equal(130, code, err)
    assert.matches(
      "wlrun: interrupted while waiting for NVRTC's loading thread at the end; the process "
      .. "ends at once", err)
    assert.equal("printed\nwritten", h.read(dir .. "/out"))
    assert.is_true(took < 8, ("%d s"):format(took))
    -- standard output that cannot be written is still said, the Ctrl-C's code kept
    code, err = run("/dev/full")
    assert.equal(130, code, err)
    assert.matches("cannot write to standard output", err)
  end)

  it("ends with the exit code of the run's error", function()
    local r = h.run_script("error('stopped here')")
    assert.equal(1, r.code)
    assert.matches("stopped here", r.stderr)
  end)

  marks_it("closes a library of the script's (wl.library) with the state: its destructor runs",
    function()
    local r, mark = run_with(MARK_LIB)
    assert.equal(0, r.code, r.stderr)
    assert.equal("destructor\n", mark)
  end)

  marks_it(
    "skips the exit handlers of a library the process keeps loaded (a build with "
    .. "AddressSanitizer keeps them)", function()
    local r, mark = run_with(KEPT_LIB)
    assert.equal(0, r.code, r.stderr)
    assert.equal(SANITIZED and "destructor\n" or "", mark)
  end)

  marks_it("keeps them with WLRUN_EXIT_HANDLERS=1", function()
    local r, mark = run_with(KEPT_LIB, "WLRUN_EXIT_HANDLERS=1")
    assert.equal(0, r.code, r.stderr)
    assert.equal("destructor\n", mark)
  end)

  marks_it(
    "keeps them where a tool put code of its own into the process (LD_PRELOAD, "
    .. "CUDA_INJECTION64_PATH)", function()
    -- LD_PRELOAD: the preloaded library's destructor and the kept one's, both exit handlers
    -- (not under AddressSanitizer, whose runtime must come first: it keeps them anyway)
    local r, mark
    if not SANITIZED then
      r, mark = run_with(KEPT_LIB, "LD_PRELOAD=" .. MARK_LIB)
      assert.equal(0, r.code, r.stderr)
      assert.equal("destructor\ndestructor\n", mark)
    end
    -- the script touches no CUDA: the injection library is never loaded, only named
    r, mark = run_with(KEPT_LIB, "CUDA_INJECTION64_PATH=" .. MARK_LIB)
    assert.equal(0, r.code, r.stderr)
    assert.equal("destructor\n", mark)
  end)
end)
