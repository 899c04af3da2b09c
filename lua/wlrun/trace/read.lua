-- The reader of the files that wlrun's trace library writes (src/trace/trace_format.h: one
-- DIR/<pid>.wltrace per process), strict and bounded (docs/trace.md, "The trace files").
--
--   read.parse(text, name [, limits]) -> process   one file's text; name is used in messages
--   read.dir(path [, limits]) -> trace             every *.wltrace file of a directory
--   read.printable(s [, max]) -> text              a name from a trace, safe to print
--
-- A malformed file is an error of kind io (exit 9, "a file could not be read") naming the file
-- and the line: "123.wltrace:7: R: 8 fields, expected 9". A last line without its newline is the
-- end of a file cut short (the process was killed while writing): it is dropped and the
-- process marked truncated, not refused; NUL bytes that end a file are room the library
-- reserved and never used (a killed process), and are dropped. Sizes are bounded (read.LIMITS):
-- a hostile file is refused before it can eat the memory, and ranges nest at most LIMITS.depth
-- deep, with no cycle.
--
-- A process: {file, pid, ppid, command, threads = {[tid] = name}, ranges = {range...},
--   by_rid = {[rid] = range}, corr = {[correlation] = rid}, launched = {[correlation] = time of the
--   call (ns; version 2: every call that can start GPU work, in a range or not)}, version,
--   gpu = {work...}, marks = {work...} (version 3: events' device times, start = stop, kind
--   "event": each the end of the GPU work launched before it on its stream),
--   samples = {{at, on}...} (version 3: P records, GPU activity turned on or off, in time
--   order), waits = {{tid, rid, start, stop}...} (version 4: W records, the loop's
--   synchronisation after step rid, entered at start, returned at stop), befores = {{tid, rid,
--   start, stop}...} (version 5: B records, the loop's synchronisation before step rid; version
--   6: a W's stop moved by its Y record, where its caller resumed),
--   cupti = {state, reason} | nil, dropped = {[what] = count}, errors = {text...}, errors_more = n,
--   exit = reason | nil (no X: killed), truncated = bool, orphans = n, unknown_corr = n}
-- A range: {rid, tid, parent = range | nil (the nearest one that ends no earlier), name, domain,
--   start, stop (nil: still open),
--   payload = integer (a float beyond int64) | nil, async = bool (start/end), open = bool, depth}
-- A GPU work record: {corr, kind, device, stream, start, stop, bytes, name}; times in ns.
local core = require "wlrun.core"
local process = require "wlrun.process"
local printable = require "wlrun.text.printable"

local read = {}

read.LIMITS = {
  bytes = 512 * 1024 * 1024, -- all files together
  records = 4000000, -- all files together
  line = 1024 * 1024, -- one line (a kernel's demangled name can be long, not this long)
  files = 4096, -- processes
  depth = 256, -- push/pop ranges nested in one another
  errors = 100, -- E records kept per process (the rest are counted)
}

read.KINDS = { kernel = true, memcpy = true, memset = true }
-- a K record's kind that is a mark, not work (version 3)
local MARK = "event"

-- the limits in force: read.LIMITS with the given ones over them
local function limits_of(given)
  local l = {}
  for k, v in pairs(read.LIMITS) do l[k] = given and given[k] or v end
  return l
end

-- A name as it may be printed on a terminal (wlrun.text.printable, shared with every printer):
-- control
-- characters and bytes that are not UTF-8 as \xHH, cut to max bytes (default 120).
read.printable = printable.text

---------------------------------------------------------------------------------------------
-- one file

local Parser = {}
Parser.__index = Parser

local function new_parser(name, budget)
  return setmetatable({
    name = name, budget = budget, lineno = 0, strings = {},
    p = { file = name, threads = {}, ranges = {}, by_rid = {}, corr = {}, launched = {}, gpu = {},
      marks = {}, samples = {}, waits = {}, befores = {},
      dropped = {}, errors = {},
          errors_more = 0, truncated = false, orphans = 0, unknown_corr = 0 },
  }, Parser)
end

function Parser:fail(msg)
  core.error("io", ("%s:%d: %s"):format(self.name, self.lineno, msg), 0)
end

local UNESCAPE = { ["\\"] = "\\", t = "\t", n = "\n", r = "\r" }

function Parser:text(s)
  local bad = s:find("[\0-\31\127]")
  if bad then self:fail(("a raw control byte 0x%02x in a field (they are written escaped)"):format(
    s:byte(bad))) end
  if not s:find("\\", 1, true) then return s end
  local out, i = {}, 1
  while true do
    local j = s:find("\\", i, true)
    if not j then
      out[#out + 1] = s:sub(i)
      break
    end
    out[#out + 1] = s:sub(i, j - 1)
    local c = s:sub(j + 1, j + 1)
    if UNESCAPE[c] then
      out[#out + 1] = UNESCAPE[c]
      i = j + 2
    elseif c == "x" and s:find("^%x%x", j + 2) then
      out[#out + 1] = string.char(tonumber(s:sub(j + 2, j + 3), 16))
      i = j + 4
    else
      self:fail(("a bad escape '\\%s' (expected \\\\ \\t \\n \\r or \\xHH)"):format(
        read.printable(c)))
    end
  end
  return table.concat(out)
end

-- a whole number >= 0 in decimal, within a 64-bit integer
function Parser:int(s, what)
  local digits = s:match("^(%d+)$")
  local v = digits and #digits <= 19 and math.tointeger(tonumber(s))
  if not v then self:fail(("%s: '%s' is not a whole number >= 0"):format(what,
    read.printable(s, 40))) end
  return v
end

-- an integer payload: NVTX's int32, uint32, int64 and uint64 alike, so -2^63 to 2^64 - 1; one
-- beyond a signed 64-bit integer is kept as a float (never a batch size)
function Parser:payload(s)
  local digits = s:match("^%-?(%d+)$")
  local v = digits and #digits <= 20 and tonumber(s)
  if not v or (math.type(v) == "float" and not (v >= -2 ^ 63 and v <= 2 ^ 64)) then
    self:fail(("payload: '%s' is not a whole number"):format(read.printable(s, 40)))
  end
  return v
end

function Parser:string_ref(s, what)
  local sid = self:int(s, what)
  if sid == 0 then return nil end -- the default domain
  local v = self.strings[sid]
  if not v then self:fail(("%s: string %d is used before it is defined (S %d ...)"):format(what,
    sid, sid)) end
  return v
end

-- G: 2 or 3; C: 3 in version 1
local FIELDS = { S = 3, T = 3, R = 9, A = 8, O = 8, C = 4, K = 9, D = 3, E = 2, X = 2, P = 3,
  W = 5, B = 5, Y = 4 }
read.VERSIONS = { [1] = true, [2] = true, [3] = true, [4] = true, [5] = true, [6] = true }
-- the first version with each record that older ones lack
local SINCE = { P = 3, W = 4, B = 5, Y = 6 }

function Parser:range(f, letter)
  local p = self.p
  local rid = self:int(f[2], "rid")
  if rid == 0 then self:fail("rid 0 (range ids start at 1)") end
  if p.by_rid[rid] then self:fail(("range %d is defined twice"):format(rid)) end
  local r = { rid = rid, tid = self:int(f[3], "tid") }
  local at = 4
  if letter == "R" or (letter == "O" and f[4] ~= "-") then
    r.parent_rid = self:int(f[4], "parent")
    at = 5
  elseif letter == "O" then
    at = 5
  end
  r.async = letter == "A" or (letter == "O" and f[4] == "-")
  r.name = self:string_ref(f[at], "name") or ""
  r.domain = self:string_ref(f[at + 1], "domain")
  r.start = self:int(f[at + 2], "start")
  local payload
  if letter == "O" then
    r.open = true
    payload = f[at + 3]
  else
    r.stop = self:int(f[at + 3], "end")
    if r.stop < r.start then self:fail(("range %d ends (%d) before it starts (%d)"):format(rid,
      r.stop, r.start)) end
    payload = f[at + 4]
  end
  if payload ~= "-" then r.payload = self:payload(payload) end
  p.by_rid[rid] = r
  p.ranges[#p.ranges + 1] = r
end

-- The records that make up most of a trace (K, C, R), read with one match each; anything
-- unusual in them (a number too long, an unknown string, an id seen before) is left to the
-- general reader below, which names what is wrong.
local K_LINE = "^K\t(%d+)\t(%l+)\t(%d+)\t(%d+)\t(%d+)\t(%d+)\t(%d+)\t(%d+)$"
local C_LINE = "^C\t(%d+)\t(%d+)\t(%d+)$"
local C1_LINE = "^C\t(%d+)\t(%d+)$" -- version 1: no time
local R_LINE = "^R\t(%d+)\t(%d+)\t(%d+)\t(%d+)\t(%d+)\t(%d+)\t(%d+)\t([%-%d]+)$"

local function num(s) return #s <= 19 and math.tointeger(tonumber(s)) or nil end

-- a C record: the call's time, and its range unless rid is 0; false when the correlation was
-- given to another range already (the same twice, a driver call inside the runtime's, is one)
function Parser:launch(corr, rid, time)
  local p = self.p
  local had = p.corr[corr]
  if had and rid ~= 0 and had ~= rid then return false end
  if rid ~= 0 then p.corr[corr] = rid end
  if self.version ~= 1 and not p.launched[corr] then p.launched[corr] = time end
  return true
end

function Parser:fast(line)
  local p, c = self.p, line:byte(1)
  if c == 75 then -- K
    local corr, kind, device, stream, start, stop, bytes, sid = line:match(K_LINE)
    if not corr or not (read.KINDS[kind] or kind == MARK and self.version >= 3) then
      return false
    end
    local w = { corr = num(corr), kind = kind, device = num(device), stream = num(stream),
      start = num(start),
      stop = num(stop), bytes = num(bytes), name = self.strings[num(sid) or 0] }
    if not (w.corr and w.device and w.stream and w.start and w.stop and w.bytes and w.name)
      or w.stop < w.start then
      return false
    end
    local list = kind == MARK and p.marks or p.gpu
    list[#list + 1] = w
    return true
  elseif c == 67 then -- C
    local corr, rid, time
    if self.version == 1 then
      corr, rid = line:match(C1_LINE)
      time = "0"
    else
      corr, rid, time = line:match(C_LINE)
    end
    corr, rid, time = corr and num(corr), rid and num(rid), time and num(time)
    if not (corr and rid and time) then return false end
    return self:launch(corr, rid, time)
  elseif c == 82 then -- R
    local rid, tid, parent, sid, dom, start, stop, payload = line:match(R_LINE)
    if not rid then return false end
    local r = { rid = num(rid), tid = num(tid), parent_rid = num(parent),
      name = self.strings[num(sid) or 0],
      start = num(start), stop = num(stop), async = false }
    dom = num(dom)
    r.domain = dom ~= 0 and dom and self.strings[dom] or nil
    if payload ~= "-" then r.payload = #payload <= 19 and math.tointeger(tonumber(payload))
      or nil end
    if not (r.rid and r.rid > 0 and r.tid and r.parent_rid and r.name and dom
      and (dom == 0 or r.domain) and r.start
        and r.stop and r.stop >= r.start and (payload == "-" or r.payload)) or p.by_rid[r.rid] then
      return false
    end
    p.by_rid[r.rid] = r
    p.ranges[#p.ranges + 1] = r
    return true
  end
  return false
end

-- a K record: one piece of GPU work
function Parser:gpu_work(f)
  local p = self.p
  local kind = f[3]
  local mark = kind == MARK and self.version >= 3
  if not (read.KINDS[kind] or mark) then
    self:fail(("K: an unknown kind of GPU work '%s' (kernel, memcpy, memset%s)"):format(
      read.printable(kind, 20), self.version >= 3 and ", event" or ""))
  end
  local w = { corr = self:int(f[2], "correlation"), kind = kind,
    device = self:int(f[4], "device"),
    stream = self:int(f[5], "stream"), start = self:int(f[6], "start"),
    stop = self:int(f[7], "end"),
    bytes = self:int(f[8], "bytes"), name = self:string_ref(f[9], "name") or "" }
  if w.stop < w.start then self:fail(("K: GPU work ends (%d) before it starts (%d)"):format(
    w.stop, w.start)) end
  local list = mark and p.marks or p.gpu
  list[#list + 1] = w
end

-- a P record: GPU activity turned on or off (version 3), in time order
function Parser:sample(f)
  local p = self.p
  if f[3] ~= "on" and f[3] ~= "off" then self:fail(
    ("P: state '%s', expected on or off"):format(read.printable(f[3], 20))) end
  local at = self:int(f[2], "time")
  local last = p.samples[#p.samples]
  if last and at < last.at then self:fail(("P: time %d before the last P's (%d)"):format(at,
    last.at)) end
  p.samples[#p.samples + 1] = { at = at, on = f[3] == "on" }
end

-- the first line: wltrace, the version, pid, ppid, the command line
function Parser:header(f)
  local p = self.p
  if f[1] ~= "wltrace" then
    self:fail("not a wlrun trace file (it does not start with 'wltrace')") end
  if #f ~= 5 then self:fail(("the header has %d fields, expected 5"):format(#f)) end
  local version = self:int(f[2], "version")
  if not read.VERSIONS[version] then self:fail(
    ("trace format version %d; this wlrun reads versions 1 to 6"):format(version)) end
  self.version, p.version = version, version
  p.pid, p.ppid, p.command = self:int(f[3], "pid"), self:int(f[4], "ppid"), self:text(f[5])
end

-- a W or B record: the loop's synchronisation after a step (version 4) or before one (5)
function Parser:wait(f)
  local w = { tid = self:int(f[2], "tid"), rid = self:int(f[3], "rid"),
    start = self:int(f[4], "enter"), stop = self:int(f[5], "return") }
  if w.stop < w.start then self:fail(("%s: the call returns (%d) before it is entered (%d)"):format(
    f[1], w.stop, w.start)) end
  local list = f[1] == "W" and self.p.waits or self.p.befores
  list[#list + 1] = w
end

-- a Y record (version 6): thread tid's W that returned at `was` was the program's
-- torch.cuda.synchronize(), whose Python caller resumed at `now`: the W returns there (the last
-- such W of the thread; none: nothing to move)
function Parser:resumed(f)
  local tid, was, now = self:int(f[2], "tid"), self:int(f[3], "was"), self:int(f[4], "now")
  if now < was then self:fail(("Y: resumed (%d) before the call returned (%d)"):format(now,
    was)) end
  local waits = self.p.waits
  for i = #waits, 1, -1 do
    local w = waits[i]
    if w.tid == tid and w.stop == was then
      w.stop = now
      return
    end
  end
end

function Parser:line(line)
  self.lineno = self.lineno + 1
  if #line > self.budget.line then self:fail(("a line of %d bytes (at most %d)"):format(#line,
    self.budget.line)) end
  self.budget.records = self.budget.records - 1
  if self.budget.records < 0 then
    self:fail(
      ("more than %d records in the trace: trace fewer steps (the report needs --warmup and a "
      .. "few dozen more)"):format(
      self.budget.max_records))
  end
  if self.lineno > 1 and self:fast(line) then return end
  local f = {}
  for field in (line .. "\t"):gmatch("([^\t]*)\t") do
    f[#f + 1] = field
    if #f > 10 then break end
  end
  local p = self.p
  if self.lineno == 1 then return self:header(f) end
  local letter = f[1]
  local want = FIELDS[letter]
  if letter == "G" then
    if #f ~= 2 and #f ~= 3 then self:fail(("G: %d fields, expected 2 or 3"):format(#f)) end
  elseif not want then
    self:fail(("an unknown record '%s'"):format(read.printable(letter, 20)))
  elseif SINCE[letter] and self.version < SINCE[letter] then
    self:fail(("%s: a record of version %d in a file of version %d"):format(letter, SINCE[letter],
      self.version))
  elseif letter == "C" and self.version == 1 then
    if #f ~= 3 then self:fail(("C: %d fields, expected 3 (version 1)"):format(#f)) end
  elseif #f ~= want then
    self:fail(("%s: %d fields, expected %d"):format(letter, #f, want))
  end
  if letter == "S" then
    local sid = self:int(f[2], "sid")
    if sid == 0 then self:fail("string id 0 (string ids start at 1)") end
    if self.strings[sid] then self:fail(("string %d is defined twice"):format(sid)) end
    self.strings[sid] = self:text(f[3])
  elseif letter == "T" then
    -- a thread named again: the last name
    p.threads[self:int(f[2], "tid")] = self:string_ref(f[3], "name")
  elseif letter == "R" or letter == "A" or letter == "O" then
    self:range(f, letter)
  elseif letter == "C" then
    local corr, rid = self:int(f[2], "correlation"), self:int(f[3], "rid")
    local time = self.version == 1 and 0 or self:int(f[4], "time")
    if not self:launch(corr, rid, time) then
      self:fail(("correlation %d is given to range %d and to range %d"):format(corr, p.corr[corr],
        rid))
    end
  elseif letter == "K" then
    self:gpu_work(f)
  elseif letter == "G" then
    if f[2] ~= "on" and f[2] ~= "off" then self:fail(
      ("G: state '%s', expected on or off"):format(read.printable(f[2], 20))) end
    p.cupti = { state = f[2], reason = f[3] and self:text(f[3]) or nil }
  elseif letter == "D" then
    local what = self:text(f[2])
    p.dropped[what] = (p.dropped[what] or 0) + self:int(f[3], "count")
  elseif letter == "E" then
    if #p.errors < self.budget.errors then
      p.errors[#p.errors + 1] = self:text(f[2])
    else
      p.errors_more = p.errors_more + 1
    end
  elseif letter == "X" then
    p.exit = self:text(f[2])
  elseif letter == "P" then
    self:sample(f)
  elseif letter == "W" or letter == "B" then
    self:wait(f)
  elseif letter == "Y" then
    self:resumed(f)
  end
end

-- after the last line: parents and correlations resolved, nesting checked
function Parser:finish()
  local p = self.p
  self.lineno = 0 -- messages below name the range, not a line
  for _, r in ipairs(p.ranges) do
    if r.parent_rid and r.parent_rid ~= 0 then
      local parent = p.by_rid[r.parent_rid]
      if not parent then
        p.orphans = p.orphans + 1 -- its parent was never written (the process was killed inside it)
      elseif parent.async then
        core.error("io",
          ("%s: range %d names range %d as its parent, a start/end range (parents are "
          .. "push/pop ranges)"):format(
          self.name, r.rid, parent.rid), 0)
      elseif parent.tid ~= r.tid then
        core.error("io",
          ("%s: range %d (thread %d) names range %d of another thread (%d) as its parent"):format(
          self.name, r.rid, r.tid, parent.rid, parent.tid), 0)
      else
        r.parent = parent
      end
    end
    r.parent_rid = nil
  end
  -- depth of every range, parents first; a chain that does not end is a cycle
  for _, r in ipairs(p.ranges) do
    if not r.depth then
      local chain, at = {}, r
      while at and not at.depth do
        if at.visiting then
          core.error("io", ("%s: range %d is its own ancestor (a cycle of parents)"):format(
            self.name, at.rid), 0)
        end
        at.visiting = true
        chain[#chain + 1] = at
        at = at.parent
      end
      local d = at and at.depth or 0
      for i = #chain, 1, -1 do
        d = d + 1
        chain[i].depth, chain[i].visiting = d, nil
        if d > self.budget.depth then
          core.error("io", ("%s: range %d is nested %d deep (at most %d)"):format(self.name,
            chain[i].rid, d,
            self.budget.depth), 0)
        end
      end
    end
  end
  -- a range that outlives its parent (the parent ended first: wlrun's hook's step, ended at the
  -- optimizer's end where the process ends, holds the ranges closed after that) is the nearest
  -- ancestor's that holds its end
  for _, r in ipairs(p.ranges) do
    local up = r.parent
    while up and up.stop and (not r.stop or r.stop > up.stop) do up = up.parent end
    r.parent = up
  end
  for corr, rid in pairs(p.corr) do
    if not p.by_rid[rid] then -- the range was never written (lost with a killed process)
      p.corr[corr] = nil
      p.unknown_corr = p.unknown_corr + 1
    end
  end
  return p
end

local function budget_of(limits)
  local l = limits_of(limits)
  return { records = l.records, max_records = l.records, line = l.line, depth = l.depth,
    errors = l.errors }
end

-- text less the room the library reserved after it, left as NUL bytes where the process ended
-- without its exit handler (src/trace/trace_output.c); a NUL byte with text after it is the
-- file's, and refused by the parser
local function without_room(text)
  local zero = text:find("\0", 1, true)
  if zero and not text:find("[^\0]", zero) then return text:sub(1, zero - 1) end
  return text
end

-- the most room the library reserves after its text (trace_output.c's WINDOW)
local ROOM = 1024 * 1024

local function parse_with(text, name, budget)
  local ps = new_parser(name, budget)
  text = without_room(text)
  local whole = #text
  -- a last line without its newline: the file was cut short
  if whole > 0 and text:byte(whole) ~= 10 then
    ps.p.truncated = true
    local last = text:find("\n[^\n]*$")
    text = last and text:sub(1, last) or ""
  end
  for line in text:gmatch("([^\n]*)\n") do ps:line(line) end
  if ps.lineno == 0 then ps.p.empty = true end
  return ps:finish()
end

function read.parse(text, name, limits) return parse_with(text, name or "trace",
  budget_of(limits)) end

---------------------------------------------------------------------------------------------
-- a directory

local CHUNK = 1024 * 1024

local function too_much(name, max)
  core.error("io",
    ("%s: the trace files hold more than %d MiB: trace fewer steps (the report needs "
    .. "--warmup and a few dozen more)"):format(name, max // (1024 * 1024)), 0)
end

-- the text of a file, refused past `left` bytes (a file that grows, or one like /dev/zero)
local function read_bounded(path, name, left, max)
  local f, err = io.open(path, "rb")
  if not f then core.error("io", ("cannot read the trace file %s: %s"):format(path, tostring(err)),
    0) end
  local parts, size = {}, 0
  while true do
    local s, rerr = f:read(CHUNK)
    if not s then
      if rerr then
        f:close()
        core.error("io", ("cannot read the trace file %s: %s"):format(path, tostring(rerr)), 0)
      end
      break
    end
    size = size + #s
    if size > left then
      f:close()
      too_much(name, max)
    end
    parts[#parts + 1] = s
  end
  f:close()
  return table.concat(parts), size
end

-- every DIR/*.wltrace, in the order of their pids: {dir, processes = {process...}}; a file's
-- pid is its first line's (an empty file: its name's)
function read.dir(path, limits)
  local l = limits_of(limits)
  local names, err = process.list_dir(path)
  if not names then core.error("io", ("cannot read the trace directory %s: %s"):format(path,
    tostring(err)), 0) end
  local files = {}
  for _, n in ipairs(names) do
    if n:sub(-8) == ".wltrace" then files[#files + 1] = n end
  end
  if #files > l.files then
    core.error("io", ("%s: %d trace files, more than %d processes"):format(path, #files, l.files),
      0)
  end
  -- <pid>.wltrace, then <pid>.<n>.wltrace for the programs that process exec'd (n from 2)
  local function order(name)
    local pid, n = name:match("^(%d+)%.(%d+)%.wltrace$")
    if not pid then pid, n = name:match("^(%d+)%.wltrace$"), 1 end
    return tonumber(pid), tonumber(n)
  end
  table.sort(files, function(a, b)
    local x, i = order(a)
    local y, j = order(b)
    if x and y and (x ~= y or i ~= j) then return x < y or (x == y and i < j) end
    if (x == nil) ~= (y == nil) then return x ~= nil end
    return a < b
  end)
  local budget, left = budget_of(l), l.bytes
  local trace = { dir = path, processes = {} }
  for _, n in ipairs(files) do
    -- the library writes files; a FIFO would block the read for ever, a link lead anywhere
    local kind, kerr = process.file_type(path .. "/" .. n)
    if kind ~= "file" then
      core.error("io", ("%s: %s: the trace library writes regular files only"):format(n,
        kind and ("a " .. (kind == "link" and "symbolic link" or kind))
          or ("cannot read it: " .. tostring(kerr))), 0)
    end
    -- the room reserved after the text is not counted (a process that ended without its exit
    -- handler: a DataLoader's worker, os._exit)
    local text = without_room(read_bounded(path .. "/" .. n, n, left + ROOM, l.bytes))
    if #text > left then too_much(n, l.bytes) end
    left = left - #text
    local p = parse_with(text, n, budget)
    p.pid = p.pid or tonumber(n:match("^(%d+)%.")) -- an empty file: the pid of its name
    trace.processes[#trace.processes + 1] = p
  end
  return trace
end

return read
