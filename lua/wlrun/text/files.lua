-- How wlrun writes a file (docs/results.md, "Writing"): whole, into a new file made beside it
-- (process.create_beside: O_CREAT|O_EXCL|O_NOFOLLOW, a random name TARGET.XXXXXX.tmp, the mode
-- of any new file under the umask), then renamed over it. Nothing that is there already is
-- opened, truncated or removed: not a TARGET.tmp of the user's, nor a symbolic link planted
-- beside the target. A target that is a symbolic link is written through: the file is made at
-- the end of its links (a regular file, or nothing yet), and the link stays a link. A device, a
-- FIFO or a socket at the target, or at the end of its links, is refused, never replaced.
--   files.target(path) -> where | nil, msg    where a file written to path goes
--   files.create(path) -> file | nil, msg     a new file open for writing, beside that target
--   files.commit(file) -> true | nil, msg     closed and renamed over the target
--   files.rename(file) -> true | nil, msg     renamed over the target, still open (a journal)
--   files.claim(file) -> true | nil, msg      given the target's name where nothing has it, open
--   files.discard(file)                       closed and removed; the target left as it was
--   files.write(path, text) -> true | nil, msg
--   files.check(path) -> true | nil, msg      whether path can be written: a file can be made
--                                             beside its target, which is not a directory
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

local function refuse(what)
  return nil,
    ("it is %s, which a file written whole (made beside it and renamed over it) would replace: "
    .. "give a regular file, or - for standard output where the command takes it"):format(what)
end

-- A symbolic link is written through, to the end of its links by name, where there is a regular
-- file or nothing yet; renaming over the link would replace it (as root, -o /dev/stdout put a
-- file in the place of the system's link). A link of /proc (/dev/stdout -> /proc/self/fd/1)
-- stands for a file a process has open, whose name is no place to write.
function files.target(path)
  local kind = process.file_type(path)
  if kind ~= "link" then
    if SPECIAL[kind] then return refuse(SPECIAL[kind]) end
    return path
  end
  local at, there, proc = process.link_end(path)
  if not at then return nil, there end
  if proc then return refuse("a symbolic link to a process's open file (through /proc)") end
  local reached = process.file_type(path, true)
  if reached == "directory" then return nil, "it is a symbolic link to a directory" end
  if reached and reached ~= "file" then return refuse("a symbolic link to " .. SPECIAL[reached]) end
  -- the file stat reached, or nothing where stat reached nothing
  if there ~= reached or reached and process.file_id(at) ~= process.file_id(path) then
    return nil, "it is a symbolic link that changed while it was followed"
  end
  return at
end

function files.create(path)
  local target, err = files.target(path)
  if not target then return nil, err end
  local f, tmp = process.create_beside(target)
  if not f then return nil, tmp end
  made[f] = { tmp = tmp, path = target }
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
