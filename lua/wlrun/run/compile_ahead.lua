-- wl.prepare_kernels{spec, ...} (docs/kernels.md, "Compiled ahead"): the kernels a run will need
-- (each spec a wl.kernel table), compiled into the kernel cache by processes of their own (a
-- wlrun each, --compile-jobs FILE) while this one makes its CUDA context and runs the
-- configurations before them. The wl.kernel that needs one then finds its entry, or waits for the
-- process that compiles it (the cache's lock), or compiles it itself where no process has taken
-- it yet: the entries are those a serial compile makes, and a kernel that does not compile is
-- its wl.kernel's error, at that line. Processes, not threads: while NVRTC compiles it puts
-- handlers of its own on SIGINT and SIGTERM that end the process (kernel_compile.c), which on a
-- thread would end the whole run, measured results and all, on a Ctrl-C.
local core = require "wlrun.core"
local process = require "wlrun.process"
local json = require "wlrun.json"
local child_args = require "wlrun.run.child_args"

-- dir: this run's directory of job files and marks, made at the first call
local ahead = { children = {}, calls = 0 }

-- each process holds a compiler's memory: hundreds of MB, GBs for large templates
local MAX_PROCESSES = 8

-- the specs made whole (each once), and the target
local function jobs_of(list)
  if type(list) ~= "table" then
    core.error("script", ("wl.prepare_kernels: a list of wl.kernel tables expected, got %s")
      :format(type(list)), 3)
  end
  local jobs, seen, arch = {}, {}, nil
  for i, spec in ipairs(list) do
    if type(spec) ~= "table" then
      core.error("script", ("wl.prepare_kernels: entry %d is a %s, not a wl.kernel table")
        :format(i, type(spec)), 3)
    end
    local job, target = core.kernel_job(spec, 3) -- file = relative to the caller's file
    local ok, text = pcall(json.encode, job)
    if job and ok and not seen[text] then
      seen[text], arch = true, target
      jobs[#jobs + 1] = job
    end
  end
  return jobs, arch
end

local function write_file(path, doc)
  local ok, text = pcall(json.encode, doc)
  local f = ok and io.open(path, "wb")
  return f and f:write(text) and f:close()
end

-- a process that compiles the jobs of file (kind "all": those of them not in the cache, shared
-- with processes of its own; "part": these), or nil
local function spawn(file, arch)
  local ok, pid = pcall(process.spawn_async,
    child_args { "--compile-jobs", file, "--arch", arch },
    { stdout = "/dev/null", stderr = "/dev/null", die_with_parent = true })
  if ok then ahead.children[pid] = true end
  return ok
end

-- Starts the compiles: one process, which asks the cache (this one does not wait for NVRTC to
-- load: the CUDA context is made meanwhile) and shares the kernels that need a compile among
-- processes of its own. Returns how many kernels it was given (0 where there is no target yet,
-- or it could not start: wl.kernel then compiles them).
function ahead.start(list)
  local jobs, arch = jobs_of(list)
  if #jobs == 0 then return 0 end
  if not ahead.dir then
    ahead.dir = process.temp_dir("wlrun-compile-", core.cli.worker_queue)
    if not ahead.dir then return 0 end
    core.kernel_ahead_markers(ahead.dir, false)
  end
  ahead.calls = ahead.calls + 1
  local file = ("%s/all-%d.json"):format(ahead.dir, ahead.calls)
  if not (write_file(file, { kind = "all", arch = arch, jobs = json.array(jobs) })
    and spawn(file, arch)) then return 0 end
  return #jobs
end

local function spec_of(job)
  return { job.code, name = job.name, defines = job.defines, options = job.options,
    compiler = job.compiler }
end

-- the jobs that need a compile, dealt in turn to n lists (each process starts with one of the
-- first ones the run needs)
local function deal(jobs)
  local needed = {}
  for _, job in ipairs(jobs) do
    local ok, yes = pcall(core.kernel_needed, spec_of(job))
    if ok and yes then needed[#needed + 1] = job end
  end
  local n = math.min(#needed, MAX_PROCESSES, math.max(1, process.cpu_count() - 1))
  local lists = {}
  for p = 1, n do
    lists[p] = {}
    for j = p, #needed, n do lists[p][#lists[p] + 1] = needed[j] end
  end
  return lists
end

local function compile(jobs)
  for _, job in ipairs(jobs) do
    local ok, err = pcall(core.kernel, spec_of(job))
    if not ok and type(err) == "table" and err.kind == "interrupted" then error(err, 0) end
  end
end

-- The process's side (--compile-jobs FILE, FILE removed once read): each kernel compiled through
-- the cache as wl.kernel compiles it, leaving its mark in FILE's directory (kernel_compile.c). A
-- kernel that does not compile is left to the run's own wl.kernel, which says why; a stop
-- (SIGTERM from the run's end) lets the compile under way finish and store its entry
-- (kernel_compile.c holds the signal meanwhile), then ends.
function ahead.worker(file)
  local f = io.open(file, "rb")
  if not f then return end
  local text = f:read("a")
  f:close()
  os.remove(file)
  local doc = json.decode(text)
  if type(doc) ~= "table" or type(doc.jobs) ~= "table" then return end
  local dir = file:match("^(.*)/[^/]*$") or "."
  core.kernel_ahead_markers(dir, true)
  if doc.kind ~= "all" then return compile(doc.jobs) end
  local _ <close> = setmetatable({}, { __close = function(_, err)
    ahead.finish(err == nil and "wait" or "kill")
  end })
  local lists = deal(doc.jobs)
  for p = 2, #lists do
    local part = ("%s-%d.json"):format((file:gsub("%.json$", "")), p)
    if not (write_file(part, { kind = "part", jobs = json.array(lists[p]) })
      and spawn(part, doc.arch)) then compile(lists[p]) end
  end
  compile(lists[1] or {})
end

local function reap(pid, seconds)
  if not process.wait_pid(pid, seconds, true) then
    process.kill(pid, 9)
    process.wait_pid(pid, 5, true)
  end
end

-- The processes still compiling, at the end, as `how` says: "wait" (a process that compiles
-- ahead, at the end of its own share: its processes finish theirs, unless a stop comes, which
-- ends them), "term" (the run at its end: what is left is not needed; SIGTERM lets a compile
-- under way store its entry, up to 5 s) or "kill" (a run that stopped or failed: SIGKILL, a
-- compile cut short stores nothing and the cache stays whole). The run's directory is removed.
function ahead.finish(how)
  if how == "wait" then
    local ok = pcall(function()
      for pid in pairs(ahead.children) do
        process.wait_pid(pid)
        ahead.children[pid] = nil
      end
    end)
    if not ok then how = "kill" end
  end
  for pid in pairs(ahead.children) do process.kill(pid, how == "kill" and 9 or 15) end
  for pid in pairs(ahead.children) do
    reap(pid, 5)
    ahead.children[pid] = nil
  end
  if ahead.dir then
    process.remove_tree(ahead.dir)
    core.kernel_ahead_markers(nil)
    ahead.dir = nil
  end
end

return ahead
