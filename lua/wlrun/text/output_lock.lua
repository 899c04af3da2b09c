-- One writer per output (docs/results.md, "Writing"): every file wlrun writes for the user (a
-- run's -o, an export, a merge, a comparison, a plot, a page, a history's output) is held by a
-- lock, FILE.lock beside the file it goes to (at the end of its symbolic links, where two names of
-- one output meet), from before the file is made until it is written, then removed. A run holds
-- it from before its journal is made. The lock takes its name as a journal does (link: only where
-- nothing is); one that is there unlocked is a killed process's (the kernel let go of its flock)
-- and is taken over, never a reason to refuse.
--   output_lock.take(paths) -> locks      the lock of every path (one for two names of one
--                                         file), or none taken and the io error raised
--   output_lock.release(locks)            each lock removed and let go of
--   output_lock.refuse_held(output, path [, what])   the io error of an output a live run holds
--   output_lock.same_file(a, b) -> bool   whether two names are one file
local core = require "wlrun.core"
local process = require "wlrun.process"
local files = require "wlrun.text.files"

local output_lock = {}

local LOCK_TEXT = "wlrun: a run writing '%s' holds this file's flock until it has written it\n"

local function io_fail(path, err)
  core.error("io", ("cannot write the lock to '%s': %s"):format(path, tostring(err)), 0)
end

function output_lock.refuse_held(output, path, what)
  core.error("io",
    ("'%s' is being written by another run: its %s '%s' is held by a live process; "
    .. "wait for that run to end, or give another -o"):format(output, what or "journal", path), 0)
end

local function refuse_foreign(output, path)
  core.error("io", ("cannot lock '%s': '%s' is there and is no lock of wlrun's; remove it, or "
    .. "give another -o"):format(output, path), 0)
end

-- whether two names are one file: by stat where both are there (a link to it, a hard link),
-- else made absolute and plain ("a/./b//c" and "/x/a/b/c" are the same file)
function output_lock.same_file(a, b)
  local function plain(p)
    if p:sub(1, 1) ~= "/" then p = (process.cwd() or ".") .. "/" .. p end
    local parts = {}
    for part in p:gmatch("[^/]+") do
      if part == ".." then parts[#parts] = nil elseif part ~= "." then parts[#parts + 1] = part end
    end
    return "/" .. table.concat(parts, "/")
  end
  if a == nil or b == nil then return false end
  local ia, ib = process.file_id(a), process.file_id(b)
  if ia and ib then return ia == ib end
  return plain(a) == plain(b)
end

local function lock_path_for(path) return (files.target(path) or path) .. ".lock" end

-- a lock found there, now held: a killed process's (a text of wlrun's, or none: killed while it
-- took the name) that is still the file at its name; nil where it went meanwhile, false where it
-- is no lock of wlrun's (left as it was)
local function take_over(path, old, id)
  if id ~= process.file_id(path) then
    old:close()
    return nil
  end
  local text = old:read(7) or ""
  if text == "" or text == "wlrun: " then return { file = old, path = path, id = id } end
  old:close()
  return false
end

-- a new lock file, written and flocked, not yet at its name
local function new_lock(output, path)
  local kind = process.file_type(path)
  if kind and kind ~= "file" then refuse_foreign(output, path) end
  local f, err = files.create(path)
  if not f then io_fail(path, err) end
  local ok, werr = f:write(LOCK_TEXT:format(output))
  if ok then ok, werr = f:flush() end
  if ok then ok, werr = process.lock(f) end
  if not ok then
    files.discard(f)
    io_fail(path, werr)
  end
  return f
end

local function take_one(output, path)
  local f, err = new_lock(output, path), nil
  for _ = 1, 3 do -- a lock let go of between the claim and the look: claim again
    local claimed, why = files.claim(f)
    if claimed then return { file = f, path = path, id = process.file_id(path) } end
    err = why
    local old, id = process.lock_path(path)
    local lock = old and take_over(path, old, id)
    if lock ~= nil or not (old or id:find("No such file", 1, true)) then
      files.discard(f)
      if lock then return lock end
      if lock == false then refuse_foreign(output, path) end
      if id == "busy" then output_lock.refuse_held(output, path, "lock") end
      io_fail(path, id)
    end
  end
  files.discard(f)
  io_fail(path, err)
end

function output_lock.release(locks)
  for i = #(locks or {}), 1, -1 do
    local lock = table.remove(locks, i)
    if process.file_id(lock.path) == lock.id then os.remove(lock.path) end
    lock.file:close()
  end
end

function output_lock.take(paths)
  local locks = {}
  for _, output in ipairs(paths) do
    local path, again = lock_path_for(output), false
    for _, l in ipairs(locks) do again = again or output_lock.same_file(path, l.path) end
    if not again then
      local ok, lock = pcall(take_one, output, path)
      if not ok then
        output_lock.release(locks)
        error(lock, 0)
      end
      locks[#locks + 1] = lock
    end
  end
  return locks
end

return output_lock
