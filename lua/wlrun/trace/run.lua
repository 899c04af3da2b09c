-- A program run with wlrun's trace library injected (docs/trace.md), for `wlrun trace` and for
-- wl.command's configurations: the library and the program found, the environment that
-- injects the library (NVTX_INJECTION64_PATH, CUDA_INJECTION64_PATH) and, in a Python program,
-- the start-up hook of the automatic ranges; the run, what each of its processes wrote
-- (wlrun.trace.read) and its report as loop configurations (wlrun.trace.report), with MFU.
-- Errors are raised as `wlrun trace`'s ("trace: ...").
local core = require "wlrun.core"
local process = require "wlrun.process"
local files = require "wlrun.text.files"
local printable = require "wlrun.text.printable"
local loop = require "wlrun.measure.loop"
local read = require "wlrun.trace.read"
local report = require "wlrun.trace.report"

local traced = {}

-- (as wlrun.tools.cli's fail: no control byte of a path or a value reaches the terminal)
local function fail(kind, msg) core.error(kind, "trace: " .. printable.whole(msg), 0) end

local function dirname(path) return path:match("^(.*)/[^/]*$") or "." end

local function is_library(path)
  if process.file_type(path, true) ~= "file" then return false end -- a FIFO would block
  local f = io.open(path, "rb")
  if not f then return false end
  local head = f:read(4)
  f:close()
  return head == "\127ELF"
end

-- the trace library: WLRUN_TRACE_LIB, else beside the wlrun binary, else ../lib/wlrun/
function traced.library()
  local env = os.getenv("WLRUN_TRACE_LIB")
  if env and env ~= "" then
    if not is_library(env) then
      fail("io", ("WLRUN_TRACE_LIB='%s' is not a shared library that can be read"):format(env))
    end
    return env
  end
  local exe = process.self_exe()
  local tried = {}
  if exe then
    local dir = dirname(exe)
    for _, p in ipairs { dir .. "/libwlrun_trace.so", dir .. "/../lib/wlrun/libwlrun_trace.so" } do
      if is_library(p) then return p end
      tried[#tried + 1] = p
    end
  end
  fail("io",
    ("the trace library libwlrun_trace.so is missing (looked for %s): build it with wlrun "
    .. "(CMake target wlrun_trace), or name it with WLRUN_TRACE_LIB"):format(
    #tried > 0 and table.concat(tried, " and ") or "it beside the wlrun binary"))
end

-- CMD's path: found as execvp would, refused when missing or not executable (usage, exit 2)
function traced.program(name)
  local path, why = process.find_program(name)
  if not path then
    if name:find("/", 1, true) then
      fail("usage", ("cannot run '%s': %s"):format(name, why == "not an executable file" and
        "not an executable file (missing, a directory, or without execute permission)" or why))
    end
    fail("usage", ("cannot run '%s': not found in PATH"):format(name))
  end
  return path
end

-- MFU of each measured process (docs/trace.md, "MFU"): the dense peak of the device that ran
-- most of its GPU work, read after the program has ended
function traced.add_mfu(entries, flops, dtype)
  for _, e in ipairs(entries) do
    if e.status == "ok" then
      local dev, device, why = e.trace and e.trace.device, nil, nil
      if dev == nil then
        why = "no GPU work was seen in this process (CPU times only): no device to take the peak of"
      else
        local ok, d = pcall(core.device, dev)
        if ok then device = d
        else why = ("device %d could not be read: %s"):format(dev,
          tostring(type(d) == "table" and d.message or d)) end
      end
      loop.add_mfu(e, flops, dtype, device, why)
    end
  end
end

-- v (an option's or a variable's text, called name) as a whole number >= min, else a usage error
function traced.whole(v, name, min)
  local n = tostring(v):match("^%d+$") and math.tointeger(tonumber(v))
  if not n or n < min then fail("usage", ("%s: expected a whole number >= %d, got '%s'"):format(
    name, min, v)) end
  return n
end

-- one step's kernels recorded in how many: value (wlrun trace's --gpu-every) where given, else
-- WLRUN_TRACE_GPU_EVERY's (wl.command's too), else "auto"; N or "auto", checked
function traced.gpu_every(value)
  local name = "--gpu-every (auto, or N)"
  if not value then
    value, name = os.getenv("WLRUN_TRACE_GPU_EVERY"), "WLRUN_TRACE_GPU_EVERY (auto, or N)"
    if not value or value == "" then return "auto" end
  end
  return value == "auto" and "auto" or traced.whole(value, name, 1)
end

-- the directory of wlrun's Python start-up hook in the trace directory
local function hook_dir(dir) return dir .. "/python" end

-- writes the hook (src/trace/python/sitecustomize.py, embedded in wlrun) into the trace directory
local function write_hook(dir)
  local text = process.embedded_file("src/trace/python/sitecustomize.py")
  if not text then
    fail("io",
    "this wlrun was built without its Python hook (src/trace/python/sitecustomize.py)") end
  local ok, err = process.make_dir(hook_dir(dir))
  if ok then ok, err = files.write(hook_dir(dir) .. "/sitecustomize.py", text) end
  if not ok then fail("io", ("cannot write the Python hook into %s: %s"):format(hook_dir(dir),
    tostring(err))) end
end

-- the environment that injects the trace library (and, in Python programs, the hook of the
-- automatic ranges); warn(text) hears of variables it replaces
function traced.environment(o, dir, lib, warn)
  local env = { WLRUN_TRACE_DIR = dir, NVTX_INJECTION64_PATH = lib, CUDA_INJECTION64_PATH = lib }
  for _, v in ipairs { "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH" } do
    local old = os.getenv(v)
    if old and old ~= "" and old ~= lib then warn(
      ("trace: %s was '%s': replaced by wlrun's trace library"):format(v, old)) end
  end
  if o.sync_steps then env.WLRUN_TRACE_SYNC = o.step end
  env.WLRUN_TRACE_STEP = o.step
  if o.steps and o.steps > 0 then env.WLRUN_TRACE_STEPS = o.steps end
  env.WLRUN_TRACE_GPU_EVERY = o.gpu_every or traced.gpu_every()
  for k, v in pairs(o.env or {}) do env[k] = v end
  -- PYTHONPATH's separator: it cannot name it
  if o.auto_ranges ~= false and dir:find(":", 1, true) then
    warn(
      ("trace: no Python hook: the trace directory '%s' holds a ':', which PYTHONPATH "
      .. "cannot hold"):format(dir))
  elseif o.auto_ranges ~= false then -- first on Python's path, before the program's own
    local path = env.PYTHONPATH or os.getenv("PYTHONPATH")
    env.PYTHONPATH = hook_dir(dir) .. ((path and path ~= "") and (":" .. path) or "")
    env.WLRUN_TRACE_AUTO = lib
  end
  return env
end

-- runs the program (its path and arguments in argv) with the trace library injected, writing
-- into dir, and reads what its processes wrote: {result = core.spawn's, trace = the parsed
-- files, entries = the report's configurations, problem = the error that stopped reading or
-- reporting, dir = the directory, absolute}. spawn: core.spawn's options besides env.
function traced.run(o, argv, lib, dir, spawn, warn)
  -- absolute, for a program that changes its directory (and a relative TMPDIR)
  if dir:sub(1, 1) ~= "/" then dir = (process.cwd() or ".") .. "/" .. dir end
  if o.auto_ranges ~= false and not dir:find(":", 1, true) then write_hook(dir) end
  spawn.env = traced.environment(o, dir, lib, warn)
  local r = process.spawn(argv, spawn)
  local ok, res = pcall(read.dir, dir)
  local out = { result = r, trace = ok and res or nil, dir = dir }
  if ok then ok, res = pcall(report.entries, out.trace, o) end
  if ok then out.entries = res else out.problem = res end
  if out.entries and o.flops_per_sample then traced.add_mfu(out.entries, o.flops_per_sample,
    o.dtype) end
  local problem = out.problem
  if type(problem) == "table" and type(problem.message) == "string" then problem.message = "trace: "
    .. problem.message end
  return out
end

return traced
