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

-- the standard output of `git -C dir args...`, or nil when it does not exit with 0
local function run(dir, args)
  local program = process.find_program("git")
  if not program then return nil end
  local tmp = process.temp_dir("wlrun-git-")
  if not tmp then return nil end
  local out = tmp .. "/out"
  local argv = { program, "-c", "core.fsmonitor=false", "-C", dir }
  for _, a in ipairs(args) do argv[#argv + 1] = a end
  local ok, r = pcall(process.spawn, argv, { stdin = "/dev/null", stdout = out, stderr = "/dev/null", timeout = 30 })
  local f = io.open(out, "rb")
  local text = f and f:read("a")
  if f then f:close() end
  process.remove_tree(tmp)
  if not (ok and r.how == "exit" and r.code == 0) then return nil end
  return text
end

local function line(text) return text and text:match("^([^\n]*)\n?$") end

-- the root of the work tree holding dir
function git.toplevel(dir)
  local root = line(run(dir, { "rev-parse", "--show-toplevel" }))
  return root ~= "" and root or nil
end

-- {commit = 40 (or 64) hex digits, dirty = whether tracked files differ from it, branch = its
-- name, nil when detached} of dir's repository; one `git status` says all three
function git.head(dir)
  local status = run(dir, { "status", "--porcelain=v2", "--branch", "--untracked-files=no" })
  if not status then return nil end
  local sha = status:match("\n?# branch%.oid (%x+)\n")
  if not (sha and #sha >= 40) then return nil end -- "(initial)": no commit yet
  local branch = status:match("# branch%.head ([^\n]+)\n")
  local dirty = status:find("^[^#]") ~= nil or status:find("\n[^#]") ~= nil
  return { commit = sha:lower(), dirty = dirty, branch = branch ~= "(detached)" and branch or nil }
end

return git
