-- How wlrun writes a file (docs/results.md, "Writing"): whole, into a new file made beside it
-- (process.create_beside: O_CREAT|O_EXCL|O_NOFOLLOW, a random name TARGET.XXXXXX.tmp, the mode
-- of any new file under the umask), then renamed over it. Nothing that is there already is
-- opened, truncated or removed: not a TARGET.tmp of the user's, nor a symbolic link planted
-- beside the target. A target that is itself a symbolic link is replaced by the file (rename
-- does not follow it), never written through to where it points. A device, a FIFO or a socket at
-- the target is refused, never replaced.
--   files.create(path) -> file | nil, msg     a new file open for writing, beside path
--   files.commit(file) -> true | nil, msg     closed and renamed over path
--   files.rename(file) -> true | nil, msg     renamed over path, still open (a journal)
--   files.claim(file) -> true | nil, msg      given path's name where nothing has it, still open
--   files.discard(file)                       closed and removed; path left as it was
--   files.write(path, text) -> true | nil, msg
--   files.check(path) -> true | nil, msg      whether path can be written: a file can be made
--                                             beside it, and path is not a directory
-- msg is the OS's reason without the file's name, for the caller's message naming the file.
local process = require "wlrun.process"

local files = {}

-- os.rename and os.remove put the file's name before the OS's reason: keep the reason
local function reason(msg, ...)
  msg = tostring(msg)
  for _, p in ipairs { ... } do
    if msg:sub(1, #p + 2) == p .. ": " then return msg:sub(#p + 3) end
  end
  return msg
end

local made = setmetatable({}, { __mode = "k" }) -- file of files.create -> {tmp =, path =}

-- what a file written whole would replace and must not: a device (/dev/null named as an output
-- by a user who is root), a FIFO or a socket another program reads
local SPECIAL = { fifo = "a FIFO", socket = "a socket", other = "a device" }

function files.create(path)
  local special = SPECIAL[process.file_type(path)]
  if special then
    return nil,
      ("it is %s, which a file written whole (made beside it and renamed over it) would "
      .. "replace: give a regular file, or - for standard output where the command "
      .. "takes it"):format(special)
  end
  local f, tmp = process.create_beside(path)
  if not f then return nil, tmp end
  made[f] = { tmp = tmp, path = path }
  return f
end

-- closes a file of files.create and removes it, leaving its target as it was
function files.discard(f)
  local m = made[f]
  if not m then return end
  made[f] = nil
  pcall(f.close, f)
  os.remove(m.tmp)
end

local function fail(f, err)
  local m = made[f]
  files.discard(f)
  return nil, reason(err, m.tmp, m.path)
end

-- renames a file of files.create over its target, where it stays open: what is written after
-- goes there (a journal)
function files.rename(f)
  local m = made[f]
  local ok, err = os.rename(m.tmp, m.path)
  if not ok then return fail(f, err) end
  made[f] = nil
  return true
end

-- gives a file of files.create its target's name only where nothing has it (a link, then the
-- temporary name removed), still open; nil and the reason ("File exists") where something has,
-- the file kept as it was (claim again, or discard it)
function files.claim(f)
  local m = made[f]
  local ok, err = process.link(m.tmp, m.path)
  if not ok then return nil, reason(err, m.tmp, m.path) end
  os.remove(m.tmp)
  made[f] = nil
  return true
end

-- closes a file of files.create and renames it over its target
function files.commit(f)
  local ok, err = f:close()
  if not ok then return fail(f, err) end
  return files.rename(f)
end

function files.write(path, text)
  local f, err = files.create(path)
  if not f then return nil, err end
  local ok, werr = f:write(text)
  if not ok then return fail(f, werr) end
  return files.commit(f)
end

function files.check(path)
  if process.file_type(path) == "directory" then return nil, "Is a directory" end
  local f, err = files.create(path)
  if not f then return nil, err end
  files.discard(f)
  return true
end

return files
