-- A run's provenance (docs/results.md, "Provenance"): what made its numbers — the commit of the
-- repository holding the scenario, the machine, the CUDA driver and toolkit, wlrun, the command
-- line. Read from git (wlrun.results.git, no shell), the kernel's /proc and /sys files and the
-- device
-- the run measured on; a part that cannot be known is left out (no git or no repository, no
-- device under --compile-only or without a GPU).
--
--   provenance.collect { dir =, git =, device = } -> the document's `provenance` object
--   provenance.resume_warning(from, now)    -> a warning when --resume's file is of another commit
local core = require "wlrun.core"
local text_trim = require "wlrun.text.trim"
local git = require "wlrun.results.git"

local provenance = {}

-- the text of a small kernel file, or nil
local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read(1 << 20)
  f:close()
  return s
end

local function trim(s) return s and text_trim.both(s) or nil end
local function some(s) return s ~= nil and s ~= "" and s or nil end

-- 13000 -> "13.0", 12080 -> "12.8" (cudaDriverGetVersion's form)
function provenance.cuda_version(v)
  if math.type(v) ~= "integer" or v <= 0 then return nil end
  return ("%d.%d"):format(v // 1000, (v % 1000) // 10)
end

-- the number of CPUs in a list like "0-15,32-47" (/sys/devices/system/cpu/online)
function provenance.count_cpus(list)
  local n = 0
  for part in (list or ""):gmatch("[^,%s]+") do
    local a, b = part:match("^(%d+)%-(%d+)$")
    if a then
      n = n + tonumber(b) - tonumber(a) + 1
    elseif part:match("^%d+$") then
      n = n + 1
    else
      return nil
    end
  end
  return n > 0 and n or nil
end

-- the CPU's model from /proc/cpuinfo's text: "model name" (x86), else what other
-- architectures call it
function provenance.cpu_model(text)
  text = "\n" .. (text or "")
  for _, key in ipairs { "model name", "Model", "cpu model", "Hardware", "cpu" } do
    local v = some(trim(text:match("\n" .. key .. "[ \t]*:([^\n]*)")))
    if v then return v end
  end
  return nil
end

-- the NVIDIA kernel module's version from /proc/driver/nvidia/version's text ("NVRM version:
-- NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 ...", or "... Open Kernel Module for
-- x86_64  570.133.20  Release Build ...": the first word of digits and dots)
function provenance.nvidia_version(text)
  local line = text and text:match("NVRM version:([^\n]*)")
  return line and line:match("%s(%d+%.%d+[%.%d]*)%s") or nil
end

local function nonempty(t) return next(t) ~= nil and t or nil end

-- p.driver and p.toolkit, with the parts that come from device (the run's device record, or nil)
function provenance.add_device(p, device)
  local d = type(device) == "table" and device or {}
  p.driver = nonempty { cuda = provenance.cuda_version(d.driver_version),
    nvidia = provenance.nvidia_version(read("/proc/driver/nvidia/version")) }
  local ok, nvrtc = pcall(core.nvrtc_version)
  p.toolkit = nonempty { runtime = provenance.cuda_version(d.runtime_version),
    nvrtc = ok and nvrtc or nil }
  return p
end

-- dir: where the scenario's file is (its repository's commit); git: instead of asking git about
-- dir now, wlrun.results.git.head_started(dir)'s result, to call; device: the run's device, or nil
function provenance.collect(o)
  local p = {}
  if o.git ~= nil then p.git = o.git() -- git.head_started's, begun earlier
  else p.git = o.dir and git.head(o.dir) or nil end
  p.host = some(trim(read("/proc/sys/kernel/hostname")))
  local cpus = provenance.count_cpus(trim(read("/sys/devices/system/cpu/online")))
  p.cpu = nonempty { model = provenance.cpu_model(read("/proc/cpuinfo")), count = cpus }
  p.os = nonempty { name = some(trim(read("/proc/sys/kernel/ostype"))),
    release = some(trim(read("/proc/sys/kernel/osrelease"))),
      arch = some(trim(read("/proc/sys/kernel/arch"))) }
  provenance.add_device(p, o.device)
  p.wlrun = core.version
  local argv = {}
  for i, a in ipairs(core.cli.argv or {}) do argv[i] = a end
  p.command_line = argv
  return p
end

-- A warning when --resume's file (from: {path, provenance}) was measured at another commit of
-- the scenario's repository than this run's provenance (now), or nil
function provenance.resume_warning(from, now)
  local function commit(p)
    local g = type(p) == "table" and type(p.git) == "table" and p.git or {}
    if type(g.commit) ~= "string" then return nil end
    return g.commit:sub(1, 10) .. (g.dirty == true and " (dirty)" or "")
  end
  local was, is = commit(from.provenance), commit(now)
  if not (was and is) or was == is then return nil end
  return (
    "--resume %s was measured at commit %s, this run is at %s: the results mix the two (the file's "
    .. "provenance is kept as provenance.resumed_from)"):format(from.path, was, is)
end

-- the directory holding a script's file ("." for a bare name)
function provenance.dir_of(path)
  if type(path) ~= "string" then return nil end
  local dir = path:match("^(.*)/[^/]*$")
  if dir == "" then return "/" end
  return dir or "."
end

return provenance
