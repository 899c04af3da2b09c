-- What git says about a directory's repository, for a run's provenance and the history: its
-- root, the commit checked out, its branch and whether the work tree has changes. git runs as
-- a child process with an argument list (no shell); no answer (git missing, not a repository,
-- no commit yet) is nil.
--
-- git is no sandbox: a repository's own configuration (.git/config, .git/info/attributes) can
-- make `git status` run programs it names (a clean filter, an fsmonitor hook), so the callers
-- ask only about repositories the user runs wlrun in anyway: a run's provenance (wlrun.
-- provenance) asks the repository of the scenario it is running, whose code it executes; the
-- history (wlrun.history.record, wlrun.history.store) asks the current directory's. Never a
-- directory that a results file or other data names. The fsmonitor hook is turned off all the
-- same: a status needs none.
local process = require "wlrun.process"

local git = {}

-- `git -C dir args...` started (no shell), its standard output going to a file: {pid =, tmp =},
-- or nil when it cannot start; input: the text of its standard input (else /dev/null)
local function start(dir, args, input)
  local program = process.find_program("git")
  if not program then return nil end
  local tmp = process.temp_dir("wlrun-git-")
  if not tmp then return nil end
  local argv = { program, "-c", "core.fsmonitor=false", "-C", dir }
  for _, a in ipairs(args) do argv[#argv + 1] = a end
  local stdin = "/dev/null"
  if input then
    stdin = tmp .. "/in"
    local f = io.open(stdin, "wb")
    if not (f and f:write(input) and f:close()) then
      process.remove_tree(tmp)
      return nil
    end
  end
  local ok, pid = pcall(process.spawn_async, argv,
    { stdin = stdin, stdout = tmp .. "/out", stderr = "/dev/null" })
  if not ok then
    process.remove_tree(tmp)
    return nil
  end
  return { pid = pid, tmp = tmp }
end

-- the standard output of a started git once it ends, or nil when it does not exit with 0; one
-- still running after `patience` seconds (30; 0: stop it now) is stopped (SIGTERM, then SIGKILL
-- a second later). A git that is no longer a child (collected by another wait) is not signalled:
-- its pid may be another process's by now.
local function finish(child, patience)
  if not child then return nil end
  local r, gone = process.wait_pid(child.pid, patience or 30)
  if not r and not gone then
    process.kill(child.pid, 15)
    r, gone = process.wait_pid(child.pid, 1)
    if not r and not gone then
      process.kill(child.pid, 9)
      process.wait_pid(child.pid)
    end
  end
  local f = io.open(child.tmp .. "/out", "rb")
  local text = f and f:read("a")
  if f then f:close() end
  process.remove_tree(child.tmp)
  if not (r and r.how == "exit" and r.code == 0) then return nil end
  return text
end

local function run(dir, args, input) return finish(start(dir, args, input)) end

local function line(text) return text and text:match("^([^\n]*)\n?$") end

-- the root of the work tree holding dir
function git.toplevel(dir)
  local root = line(run(dir, { "rev-parse", "--show-toplevel" }))
  return root ~= "" and root or nil
end

-- {commit = 40 (or 64) hex digits, dirty = whether tracked files differ from it, branch = its
-- name, nil when detached} from `git status --porcelain=v2 --branch`'s output, or nil
local function head_of(status)
  if not status then return nil end
  local sha = status:match("\n?# branch%.oid (%x+)\n")
  if not (sha and #sha >= 40) then return nil end -- "(initial)": no commit yet
  local branch = status:match("# branch%.head ([^\n]+)\n")
  local dirty = status:find("^[^#]") ~= nil or status:find("\n[^#]") ~= nil
  return { commit = sha:lower(), dirty = dirty, branch = branch ~= "(detached)" and branch or nil }
end

local STATUS = { "status", "--porcelain=v2", "--branch", "--untracked-files=no" }

-- git.head(dir) as it will be: git starts now and runs while this process goes on (a run's
-- provenance: while the CUDA context is made). The result is a to-be-closed callable: calling
-- it waits for git and gives git.head's value (the same on every call); closing it, or its
-- collection, waits for a git still running and removes its file, and closing it with an error
-- (the run failed before it asked) stops git at once rather than wait.
function git.head_started(dir)
  local child, done, value = start(dir, STATUS), false, nil
  local function collect(patience)
    if not done then done, value = true, head_of(finish(child, patience)) end
    return value
  end
  return setmetatable({}, {
    __call = function() return collect() end,
    __close = function(_, err) collect(err ~= nil and 0 or nil) end,
    __gc = function() collect() end,
  })
end

-- {commit, dirty, branch} of dir's repository (above), or nil; one `git status` says all three
function git.head(dir) return head_of(run(dir, STATUS)) end

-- Names of revisions given to git below are a caller's checked names (never starting with '-')
-- or commits; each is followed by "--", so that none is read as a path.

-- the merge base of commit and ref (40 or 64 hex digits), or nil
function git.merge_base(dir, commit, ref)
  local m = line(run(dir, { "merge-base", commit, ref, "--" }))
  return m and #m >= 40 and m:match("^%x+$") and m:lower() or nil
end

-- the commits of ref's first-parent line, oldest first, or nil when git does not know ref
function git.first_parent(dir, ref)
  local text = run(dir, { "rev-list", "--first-parent", "--reverse", ref, "--" })
  if not text then return nil end
  local list = {}
  for sha in text:gmatch("(%x+)\n") do list[#list + 1] = sha:lower() end
  return list
end

-- {[name] = the full commit} for each of names (commits, whole or abbreviated) that git knows
-- as a commit; {} when git cannot say
function git.resolve(dir, names)
  local out = {}
  if #names == 0 then return out end
  local lines = {}
  for i, name in ipairs(names) do lines[i] = name .. " " .. name .. "\n" end
  local text = run(dir, { "cat-file", "--batch-check=%(objectname) %(objecttype) %(rest)" },
    table.concat(lines))
  -- each line: the object, its type and the name asked (%(rest): the input after the name's
  -- first blank, so the name is asked twice, "NAME NAME"); a missing one: "NAME missing"
  for sha, kind, name in (text or ""):gmatch("(%x+) (%a+) ([^\n]*)\n") do
    if kind == "commit" then out[name] = sha:lower() end
  end
  return out
end

return git
