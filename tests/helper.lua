-- Shared by the busted specs: running the wlrun binary, temporary files, GPU-only specs.
local wl = require "wlrun"

local helper = {}

helper.bin = os.getenv("WLRUN_BIN") or "build/wlrun"
helper.source_dir = os.getenv("WLRUN_SOURCE_DIR") or "."

local function shell_quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end
helper.quote = shell_quote

local function read_all(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end
helper.read = read_all

-- rng(n) -> a whole number from 1 to n: a small linear congruential generator, so that a spec's
-- random mutations are the same on every machine for one seed
function helper.lcg(seed)
  local state = seed
  return function(n)
    state = (state * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
    return (state >> 33) % n + 1
  end
end

-- the mean of xs[from..] (0 where there is none): a program's own step times past its warmup
function helper.mean_from(xs, from)
  local t, n = 0, 0
  for i = from, #xs do t, n = t + xs[i], n + 1 end
  return n > 0 and t / n or 0
end

function helper.write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
  return path
end

-- A fresh temporary directory, removed when the spec run ends: when the Lua state closes
-- (busted ends with os.exit(code, true)), the finaliser of the list below removes them all.
local made = setmetatable({}, { __gc = function(list)
  for _, p in ipairs(list) do os.execute("rm -rf " .. shell_quote(p)) end
end })
function helper.tmpdir()
  local p = os.tmpname()
  os.remove(p)
  assert(os.execute("mkdir -p " .. shell_quote(p)))
  made[#made + 1] = p
  return p
end

-- Runs wlrun with the given argument string (already shell-quoted where needed).
-- opts.cwd: directory to run in; opts.env: "NAME=value ..." prefix; opts.prefix: a command
-- put before wlrun (timeout ...); opts.stdin: a file piped into wlrun (else /dev/null).
-- Returns {code=, stdout=, stderr=}.
function helper.run(args, opts)
  opts = opts or {}
  local out, err = os.tmpname(), os.tmpname()
  local bin = helper.bin:sub(1, 1) == "/" and helper.bin or (helper.source_dir .. "/" .. helper.bin)
  local cmd = ("%s %s %s %s %s %s >%s 2>%s"):format(
    opts.cwd and ("cd " .. shell_quote(opts.cwd) .. " &&") or "",
    opts.stdin and ("cat " .. shell_quote(opts.stdin) .. " |") or "",
    opts.env or "", (opts.prefix or "") .. " " .. shell_quote(bin), args,
      opts.stdin and "" or "</dev/null", out, err)
  local _, how, code = os.execute(cmd)
  local r = { stdout = read_all(out), stderr = read_all(err), code = code, how = how, cmd = cmd }
  os.remove(out)
  os.remove(err)
  return r
end

-- Writes a Lua script into a temporary directory and runs wlrun on it.
function helper.run_script(source, args, opts)
  local dir = (opts and opts.cwd) or helper.tmpdir()
  local path = helper.write(dir .. "/script.lua", source)
  opts = opts or {}
  opts.cwd = dir
  return helper.run(shell_quote(path) .. " " .. (args or ""), opts), path
end

-- The precompiled modules that nvcc built beside the binary (CMake target wlrun_modules:
-- <build>/modules/kernels.cubin, ...); WLRUN_MODULES overrides.
helper.modules = os.getenv("WLRUN_MODULES")
  or ((helper.bin:sub(1, 1) == "/" and helper.bin
    or (helper.source_dir .. "/" .. helper.bin)):match("^(.*)/") or ".") .. "/modules"

-- Asserts that fn(...) raises an error of kind script whose message contains text (a plain
-- substring). For specs that run in-process.
function helper.fails_with(text, fn, ...)
  local assert = require "luassert"
  local ok, e = pcall(fn, ...)
  assert.is_false(ok, "expected an error containing: " .. text)
  assert.equal("script", type(e) == "table" and e.kind or type(e), tostring(e))
  assert.truthy(tostring(e):find(text, 1, true), "expected «" .. text .. "» in: " .. tostring(e))
end

-- GPU specs: `helper.gpu_it(name, fn)` runs as `it` where a CUDA device exists and is
-- reported as pending, by name, where there is none.
local count, reason = wl.device_count()
helper.has_gpu = count > 0
helper.no_gpu_reason = reason or "no CUDA device"

function helper.gpu_it(name, fn)
  local busted = require "busted" -- its API, as the spec files see it
  if helper.has_gpu then
    busted.it("[gpu] " .. name, fn)
  else
    busted.pending("[gpu] " .. name .. " -- skipped: " .. helper.no_gpu_reason)
  end
end

-- Specs of PyTorch programs on the GPU: `helper.torch_it(name, fn)` runs as a GPU spec where
-- helper.python (WLRUN_PYTHON, default python3) imports torch with CUDA, and is reported as
-- pending, by name, elsewhere.
helper.python = os.getenv("WLRUN_PYTHON") or "python3"
local torch_cuda -- asked once, at the first torch_it
function helper.torch_it(name, fn)
  local busted = require "busted"
  if torch_cuda == nil then
    torch_cuda = false
    if helper.has_gpu then
      local p = io.popen(shell_quote(helper.python)
        .. " -c 'import torch; print(torch.cuda.is_available())' 2>/dev/null")
      torch_cuda = (p and p:read("a") or ""):match("True") ~= nil
      if p then p:close() end
    end
  end
  if torch_cuda then return helper.gpu_it(name, fn) end
  busted.pending("[gpu] " .. name .. " -- skipped: "
    .. (helper.has_gpu and ("PyTorch with CUDA is not importable by "
    .. helper.python) or helper.no_gpu_reason))
end

-- Specs of the trace library: `helper.trace_it(name, fn)` runs as `it` where the library and
-- the NVTX test program are built and named (ctest sets WLRUN_TRACE_LIB and
-- WLRUN_TRACE_PROGRAM), and is reported as pending, by name, elsewhere.
helper.trace_lib, helper.trace_program = os.getenv("WLRUN_TRACE_LIB"),
  os.getenv("WLRUN_TRACE_PROGRAM")

function helper.trace_it(name, fn)
  local busted = require "busted"
  if helper.trace_lib and helper.trace_program then
    busted.it(name, fn)
  else
    busted.pending(name
      .. " -- skipped: WLRUN_TRACE_LIB and WLRUN_TRACE_PROGRAM not set (ctest sets them)")
  end
end

return helper
