-- The trace library (libwlrun_trace.so, src/trace/) on real programs: tests/trace/nvtx_program.c
-- loads it through NVTX_INJECTION64_PATH and writes DIR/<pid>.wltrace, which these specs read
-- line by line against src/trace/trace_format.h. On a machine without a GPU, CUDA never
-- initialises, so the NVTX-only program has no G record; the gpu_init mode calls the library's
-- InitializeInjection as the CUDA driver would, for the G off paths. The GPU part runs
-- tests/trace/cuda_program.cu (K and C records, G on) where there is a device.
local h = require "helper"
local process = require "wlrun.process"
local record = require "nvtx.record"
local wl = require "wlrun"

local function exists(path)
  local f = path and path ~= "" and io.open(path, "rb")
  if f then f:close() end
  return f and true or false
end

-- $NAME (ctest sets it), else the file in build-static/ or build/
local function built(env, file)
  for _, p in ipairs { os.getenv(env), h.source_dir .. "/build-static/" .. file,
    h.source_dir .. "/build/" .. file } do
    if exists(p) then return p end
  end
end

local LIB = built("WLRUN_TRACE_LIB", "libwlrun_trace.so")
local PROGRAM = built("WLRUN_TRACE_PROGRAM", "trace_nvtx_program")
local CUDA_PROGRAM = built("WLRUN_TRACE_CUDA_PROGRAM", "trace_cuda_program")

-- the fields of each record, after the letter (trace_format.h)
local FIELDS = { S = 2, T = 2, R = 8, A = 7, O = 7, C = 3, K = 8, G = 2, D = 2, E = 1, X = 1,
  P = 2, W = 4, B = 4 }
local MS = 1000000

-- Reads one .wltrace file: {pid =, ppid =, command =, records = {{letter, field...}...},
-- strings = {sid = text}, complete = whether it ends in a newline, path =}. Checks the first
-- line, the field count of every record and that every string is defined before it is named.
local function read_trace(path)
  -- the room reserved after the text stays as NUL bytes where the process was killed
  local text = h.read(path):gsub("%z+$", "")
  local t = { path = path, records = {}, strings = {}, complete = text:sub(-1) == "\n" }
  local n = 0
  for line in text:gmatch("([^\n]*)\n") do
    n = n + 1
    local f = {}
    for part in (line .. "\t"):gmatch("([^\t]*)\t") do f[#f + 1] = part end
    if n == 1 then
      assert.equal("wltrace", f[1], path)
      assert.equal("6", f[2], path)
      t.pid, t.ppid, t.command = tonumber(f[3]), tonumber(f[4]), record.unescape(f[5] or "")
    else
      local letter = f[1]
      assert.is_not_nil(FIELDS[letter], ("%s:%d: unknown record %q"):format(path, n, line))
      assert.equal(FIELDS[letter], #f - 1, ("%s:%d: field count of %q"):format(path, n, line))
      local function named(i, zero_ok)
        local sid = f[i]
        if zero_ok and sid == "0" then return end
        assert.is_not_nil(t.strings[sid], ("%s:%d: string %s named before it is defined"):format(
          path, n, sid))
      end
      if letter == "S" then
        assert.is_nil(t.strings[f[2]], ("%s:%d: string %s defined twice"):format(path, n, f[2]))
        t.strings[f[2]] = record.unescape(f[3])
      elseif letter == "T" then named(3)
      elseif letter == "R" then named(5); named(6, true)
      elseif letter == "A" or letter == "O" then named(letter == "A" and 4
        or 5); named(letter == "A" and 5 or 6, true)
      elseif letter == "K" then named(9)
      end
      t.records[#t.records + 1] = f
    end
  end
  return t
end

-- the records of one letter, as tables with named fields (names resolved, numbers converted)
local function ranges(t, letter)
  local out = {}
  local function num(v) return v ~= "-" and math.tointeger(tonumber(v)) or nil end
  for _, f in ipairs(t.records) do
    if f[1] == letter then
      local r
      if letter == "R" then
        r = { rid = num(f[2]), tid = num(f[3]), parent = num(f[4]), name = t.strings[f[5]],
          domain = t.strings[f[6]],
              start = num(f[7]), stop = num(f[8]), payload = f[9] }
      elseif letter == "A" then
        r = { rid = num(f[2]), tid = num(f[3]), name = t.strings[f[4]], domain = t.strings[f[5]],
          start = num(f[6]),
              stop = num(f[7]), payload = f[8] }
      elseif letter == "O" then
        r = { rid = num(f[2]), tid = num(f[3]), parent = f[4], name = t.strings[f[5]],
          domain = t.strings[f[6]],
              start = num(f[7]), payload = f[8] }
      elseif letter == "K" then
        r = { correlation = num(f[2]), kind = f[3], device = num(f[4]), stream = num(f[5]),
          start = num(f[6]),
              stop = num(f[7]), bytes = num(f[8]), name = t.strings[f[9]] }
      else
        r = { f[2], f[3], f[4], f[5] }
      end
      out[#out + 1] = r
    end
  end
  return out
end

local function by_name(list, name)
  local out = {}
  for _, r in ipairs(list) do if r.name == name then out[#out + 1] = r end end
  return out
end

local function letters(t)
  local s = {}
  for _, f in ipairs(t.records) do s[#s + 1] = f[1] end
  return table.concat(s)
end

-- Runs the program in mode (extra arguments after it) under the library; env: more variables.
-- Returns the spawn result, the parsed files (by pid, and in a list), and the time window.
local function run(program, args, env)
  local dir = h.tmpdir()
  local e = { NVTX_INJECTION64_PATH = LIB, CUDA_INJECTION64_PATH = LIB, WLRUN_TRACE_DIR = dir }
  for k, v in pairs(env or {}) do e[k] = v end
  local argv = { program }
  for _, a in ipairs(args) do argv[#argv + 1] = a end
  local out, err = dir .. "/stdout", dir .. "/stderr"
  local t0 = wl.clock_ns()
  local r = process.spawn(argv, { env = e, stdout = out, stderr = err, timeout = 60 })
  local t1 = wl.clock_ns()
  r.stdout, r.stderr = h.read(out), h.read(err)
  local files = {}
  local p = io.popen("ls " .. h.quote(dir))
  for name in p:lines() do
    if name:match("%.wltrace$") then
      local t = read_trace(dir .. "/" .. name)
      assert.equal(name, t.pid .. ".wltrace")
      files[#files + 1] = t
      files[t.pid] = t
    end
  end
  p:close()
  return r, files, t0, t1, dir
end

local function only_file(files)
  assert.equal(1, #files)
  return files[1]
end

-- the files of a process and of the child it forked
local function parent_and_child(files)
  assert.equal(2, #files)
  local parent, child = files[1], files[2]
  if child.ppid ~= parent.pid then parent, child = child, parent end
  assert.equal(parent.pid, child.ppid)
  return parent, child
end

-- the one file of a run of the NVTX program that exited 0
local function traced(args, env)
  local r, files = run(PROGRAM, args, env)
  assert.equal(0, r.code, r.stderr)
  return only_file(files), r
end

local function lib_it(name, fn)
  if LIB and PROGRAM then
    it(name, fn)
  else
    pending(name
      .. " -- skipped: WLRUN_TRACE_LIB and WLRUN_TRACE_PROGRAM not set and not built (ctest "
      .. "sets them)")
  end
end

describe("the trace library", function()
  lib_it(
    "writes a program's nested ranges: names, parents, payload, thread name, times in monotonic ns",
    function()
    local r, files, t0, t1 = run(PROGRAM, { "steps" })
    assert.equal("exit", r.how)
    assert.equal(0, r.code, r.stderr)
    local t = only_file(files)
    assert.is_true(t.complete)
    assert.is_true(t.ppid > 1)
    assert.matches("trace_nvtx_program steps$", t.command)
    assert.equal("X", t.records[#t.records][1])
    assert.equal("exit", t.records[#t.records][2])
    assert.same({ { tostring(t.pid), "2" } }, ranges(t, "T")) -- the main thread's tid is the pid
    assert.equal("trainer", t.strings["2"])
    local rs = ranges(t, "R")
    assert.equal(15, #rs)
    local seen = {}
    for _, x in ipairs(rs) do
      assert.is_nil(seen[x.rid], "range ids are unique")
      seen[x.rid] = x
      assert.equal(t.pid, x.tid)
      assert.is_nil(x.domain) -- the default domain
      assert.is_true(x.start >= t0 and x.stop <= t1 and x.start <= x.stop,
        "times of this machine's CLOCK_MONOTONIC")
    end
    local steps, data = by_name(rs, "train_step"), by_name(rs, "data")
    assert.equal(3, #steps)
    assert.equal(3, #data)
    local want = { forward = 6, backward = 12, optimizer = 3 }
    for i, step in ipairs(steps) do
      assert.equal("32", step.payload)
      assert.equal(0, step.parent)
      assert.equal(0, data[i].parent)
      assert.equal("-", data[i].payload)
      assert.is_true(data[i].stop <= step.start, "data comes before its step")
      if i > 1 then assert.is_true(steps[i - 1].stop <= data[i].start) end
      local d = data[i].stop - data[i].start
      -- (at least its sleep; a ceiling far above the scheduler's delays, which a loaded machine
      -- makes tens of milliseconds: the nesting above and below says what is inside what)
      assert.is_true(d >= 4 * MS and d < 1000 * MS, "data took " .. d)
      local prev = step.start
      for _, phase in ipairs { "forward", "backward", "optimizer" } do
        local p = by_name(rs, phase)[i]
        assert.equal(step.rid, p.parent)
        assert.is_true(p.start >= prev and p.stop <= step.stop,
          phase .. " inside its step, after the one before")
        prev = p.stop
        d = p.stop - p.start
        assert.is_true(d >= want[phase] * MS and d < 1000 * MS, phase .. " took " .. d)
      end
    end
  end)

  lib_it("keeps each thread's stack: parents on the same thread only, every range of every thread",
    function()
    local t = traced({ "threads" })
    local rs = ranges(t, "R")
    assert.equal(1 + 4 * 401, #rs)
    local by_rid, tids = {}, {}
    for _, x in ipairs(rs) do
      assert.is_nil(by_rid[x.rid])
      by_rid[x.rid] = x
    end
    local names = {}
    for _, tn in ipairs(ranges(t, "T")) do names[t.strings[tn[2]]] = tonumber(tn[1]) end
    for i = 0, 3 do
      local tid = names["worker" .. i]
      assert.is_not_nil(tid, "worker" .. i .. " named")
      assert.are_not.equal(t.pid, tid)
      tids[tid] = 0
    end
    for _, x in ipairs(rs) do
      if x.name == "main" then
        assert.equal(t.pid, x.tid)
      else
        assert.is_not_nil(tids[x.tid], x.name .. " on a worker")
        tids[x.tid] = tids[x.tid] + 1
        if x.name == "inner" then
          assert.equal("worker", by_rid[x.parent].name)
          assert.equal(x.tid, by_rid[x.parent].tid)
        else
          assert.equal(0, x.parent) -- not inside main: another thread's
        end
      end
    end
    for _, n in pairs(tids) do assert.equal(401, n) end
  end)

  lib_it("gives a forked child its own file, without the parent's open range", function()
    local r, files = run(PROGRAM, { "fork" })
    assert.equal(0, r.code, r.stderr)
    local parent, child = parent_and_child(files)
    assert.equal("RX", (letters(child):gsub("S", "")))
    local c = ranges(child, "R")[1]
    assert.equal("child", c.name)
    assert.equal(0, c.parent) -- the parent's "parent" range is not the child's
    assert.equal(child.pid, c.tid)
    assert.is_true(c.stop - c.start >= 5 * MS)
    local rs = ranges(parent, "R")
    assert.equal(2, #rs)
    local outer, after = by_name(rs, "parent")[1], by_name(rs, "after_fork")[1]
    assert.equal(outer.rid, after.parent)
    assert.is_true(outer.start <= c.start and c.stop <= outer.stop)
    assert.equal("X", parent.records[#parent.records][1])
  end)

  lib_it(
    "writes start/end ranges, ended on the same thread or another, in a domain; bad ends "
    .. "are ignored", function()
    local t = traced({ "startend" })
    local as = ranges(t, "A")
    assert.equal(4, #as)
    local same, cross = by_name(as, "async_same")[1], by_name(as, "async_cross")[1]
    assert.is_true(same.stop - same.start >= 5 * MS)
    assert.is_true(cross.stop - cross.start >= 5 * MS)
    assert.equal(t.pid, cross.tid) -- the thread that started it
    assert.equal(1, #by_name(as, "async_wide"))
    local d = by_name(as, "async_domain")[1]
    assert.equal("dom", d.domain)
    assert.equal("7", d.payload)
    assert.is_nil(same.domain)
    assert.equal("-", same.payload)
    assert.equal(0, #ranges(t, "R"))
  end)

  lib_it("nests across domains, takes registered strings, pops a domain's range out of order",
    function()
    local t = traced({ "domains" })
    local rs = ranges(t, "R")
    assert.equal(4, #rs)
    local outer, reg = by_name(rs, "outer")[1], by_name(rs, "registered_name")[1]
    local inner, w = by_name(rs, "inner")[1], by_name(rs, "in_wdom")[1]
    assert.equal(0, outer.parent)
    assert.equal("dom", reg.domain)
    assert.equal(outer.rid, reg.parent)
    -- pushed inside dom's range, in another domain; that range popped first (inner stayed open),
    -- inner is its parent's: no range outlives its parent
    assert.equal(outer.rid, inner.parent)
    assert.is_true(reg.stop <= inner.stop)
    assert.equal("wdom", w.domain)
    assert.equal(inner.rid, w.parent)
    assert.is_nil(outer.domain)
  end)

  lib_it("writes integer payloads of every type, and none for a floating-point one", function()
    local t = traced({ "payloads" })
    local got = {}
    for _, x in ipairs(ranges(t, "R")) do got[x.name] = x.payload end
    assert.same({ p_int32 = "-5", p_uint32 = "4000000000", p_int64 = "-9223372036854775808",
                  p_uint64 = "18446744073709551615", p_double = "-", p_none = "-" }, got)
  end)

  lib_it("escapes names, converts wide strings to UTF-8 and replaces invalid bytes", function()
    local t = traced({ "names" })
    local names = {}
    for _, x in ipairs(ranges(t, "R")) do names[#names + 1] = x.name end
    assert.same({ "wide \u{e9} \u{2713} \u{1D11E}", "wide_ex", "tab\there", "new\nline", "cr\rx",
      "back\\slash",
                  "bell\a|del\x7f|", "utf8 \u{e9} \u{2713}", "bad\u{FFFD}\u{FFFD}bytes", "" },
                    names)
    local raw = h.read(t.path)
    for _, escaped in ipairs { "\ttab\\there\n", "\tnew\\nline\n", "\tcr\\rx\n",
      "\tback\\\\slash\n", "\tbell\\x07|del\\x7F|\n" } do
      assert.truthy(raw:find(escaped, 1, true), escaped)
    end
    assert.is_true(utf8.len(raw) ~= nil, "the file is valid UTF-8")
  end)

  lib_it("times the Python hook's ranges at the time it gives, never before the thread's last",
    function()
    local t, r = traced({ "backdate", LIB })
    local at = math.tointeger(r.stdout:match("(%d+)"))
    local rs = ranges(t, "R")
    local data, step, fwd = by_name(rs, "data")[1], by_name(rs, "train_step")[1],
      by_name(rs, "forward")[1]
    assert.equal(at, data.stop) -- popped 2 ms later, timed at T
    assert.equal(at, step.start)
    assert.equal("32", step.payload)
    assert.equal(at, fwd.start) -- asked for 1 ns: no earlier than its parent's start
    assert.is_true(fwd.stop >= at + MS)
  end)

  lib_it("writes the ranges left open at exit, and those of a thread that ended, as O", function()
    local t = traced({ "open" })
    local os_ = ranges(t, "O")
    assert.equal(4, #os_)
    local left, inner = by_name(os_, "left_open")[1], by_name(os_, "inner_open")[1]
    assert.equal("0", left.parent)
    assert.equal(tostring(left.rid), inner.parent)
    assert.equal("-", by_name(os_, "async_open")[1].parent)
    local th = by_name(os_, "thread_open")[1]
    assert.are_not.equal(t.pid, th.tid)
    assert.equal("0", th.parent)
    assert.equal("X", t.records[#t.records][1])
  end)

  lib_it("passes exit(3) on and still writes the open range and X", function()
    local r, files = run(PROGRAM, { "exit3" })
    assert.equal("exit", r.how)
    assert.equal(3, r.code)
    local t = only_file(files)
    assert.equal("SRSOX", letters(t))
    assert.equal("open_at_exit", ranges(t, "O")[1].name)
  end)

  lib_it("leaves a killed program's file without X, with what it wrote before", function()
    local r, files = run(PROGRAM, { "kill" })
    assert.equal("signal", r.how)
    assert.equal(9, r.signal)
    local t = only_file(files)
    assert.is_true(t.complete)
    assert.equal("SR", letters(t))
    assert.equal("before_kill", ranges(t, "R")[1].name)
  end)

  lib_it("writes every range of a long loop, those inside a range too (written in batches)",
    function()
    local t, r = traced({ "loop", "20000" })
    assert.matches("ns per push/pop pair at the top, [%d.]+ ns inside a range", r.stdout)
    local rs = ranges(t, "R")
    assert.equal(40001, #rs)
    local outer = by_name(rs, "outer")[1]
    local inside = 0
    for _, x in ipairs(rs) do if x.parent == outer.rid then inside = inside + 1 end end
    assert.equal(20000, inside)
  end)

  describe("at CUDA's initialisation (InitializeInjection called as the driver would)", function()
    lib_it("writes G off WLRUN_TRACE_GPU=0 and loads no CUPTI", function()
      local t = traced({ "gpu_init" }, { WLRUN_TRACE_GPU = "0" })
      assert.same({ { "off", "WLRUN_TRACE_GPU=0" } }, ranges(t, "G"))
      assert.equal("SRGSRX", letters(t))
    end)

    lib_it("writes G off with the reason when CUPTI cannot be opened", function()
      local t = traced({ "gpu_init" }, { WLRUN_TRACE_CUPTI = "/nonexistent/libcupti.so.13" })
      local g = ranges(t, "G")
      assert.equal(1, #g)
      assert.equal("off", g[1][1])
      assert.matches("^/nonexistent/libcupti%.so%.13: cannot open %(", g[1][2])
    end)

    -- where there is a driver, CUPTI called outside cuInit could start CUDA itself: the GPU
    -- specs below take the real path there
    local no_driver_it = h.has_gpu and function(name) pending(name
      .. " -- on a GPU machine: the GPU specs cover it") end
      or lib_it
    no_driver_it(
      "without a driver, with the toolkit's CUPTI: G off with CUPTI's reason, and the "
      .. "program goes on", function()
      local t = traced({ "gpu_init" })
      local g = ranges(t, "G")
      assert.equal(1, #g)
      assert.equal("off", g[1][1])
      -- CUPTI refuses to enable activity, if it is there at all
      local why = g[1][2]
      assert.is_true(why:find(": cannot open", 1, true) ~= nil or why:match("^cupti%w+") ~= nil,
        why)
      assert.equal(2, #ranges(t, "R"))
      assert.equal("X", t.records[#t.records][1])
    end)
  end)

  describe("out of the way", function()
    lib_it("records nothing and writes no file without WLRUN_TRACE_DIR", function()
      local dir = h.tmpdir()
      local r = process.spawn({ PROGRAM, "steps" },
        { env = { NVTX_INJECTION64_PATH = LIB }, cwd = dir,
                                                     stdout = dir .. "/out",
                                                       stderr = dir .. "/err" })
      assert.equal(0, r.code)
      assert.equal("", h.read(dir .. "/err"))
      local p = io.popen("ls " .. h.quote(dir))
      local listing = p:read("a")
      p:close()
      assert.equal("err\nout\n", listing)
    end)

    -- the file is written through a shared mapping of it, reserved ahead (trace_output.c)
    local NO_ROOM = os.getenv("WLRUN_NO_ROOM_LIB")
    local sanitized = os.getenv("WLRUN_TEST_SANITIZED") == "1" -- ASan's runtime must come first
    local function room_it(name, fn)
      if NO_ROOM and NO_ROOM ~= "" and not sanitized then lib_it(name, fn)
      else pending(name .. " -- skipped: " .. (sanitized and "a sanitized build (LD_PRELOAD)"
        or "WLRUN_NO_ROOM_LIB not set (ctest sets it)")) end
    end

    lib_it("cuts its file to the text at the end: no room reserved is left in it", function()
      local t = traced({ "loop", "20000" })
      local text = h.read(t.path)
      assert.is_nil(text:find("\0", 1, true))
      assert.equal("\n", text:sub(-1))
      assert.equal(40001, #ranges(t, "R"))
    end)

    room_it("says once that the disk is full, keeps what it wrote, and the program runs on",
      function()
      local r, files = run(PROGRAM, { "loop", "20000" },
        { LD_PRELOAD = NO_ROOM, WLRUN_NO_ROOM = "full" })
      assert.equal(0, r.code, r.stderr)
      assert.matches("^wlrun trace: [^\n]+%.wltrace: cannot reserve room in the file: No space "
        .. "left on device; the trace of process %d+ stops here\n$", r.stderr)
      local t = only_file(files)
      local text = h.read(t.path)
      assert.is_nil(text:find("\0", 1, true)) -- cut to what it wrote
      local n = #ranges(t, "R")
      assert.is_true(n > 10000 and n < 40001, tostring(n))
      assert.is_nil(text:find("\nX", 1, true))
    end)

    room_it("writes with write(2) where the file system refuses a shared mapping", function()
      local r, files = run(PROGRAM, { "loop", "20000" },
        { LD_PRELOAD = NO_ROOM, WLRUN_NO_ROOM = "nomap" })
      assert.equal(0, r.code, r.stderr)
      assert.equal("", r.stderr)
      local t = only_file(files)
      assert.is_nil(h.read(t.path):find("\0", 1, true))
      assert.equal(40001, #ranges(t, "R"))
      assert.equal("X", t.records[#t.records][1])
    end)

    lib_it("says once on stderr that it cannot create the file, and the program runs on", function()
      local dir, err = h.tmpdir() .. "/missing", h.tmpdir() .. "/err"
      local r = process.spawn({ PROGRAM, "fork" },
        { env = { NVTX_INJECTION64_PATH = LIB, WLRUN_TRACE_DIR = dir },
                                                    stderr = err })
      assert.equal(0, r.code)
      local text = h.read(err)
      assert.matches("^wlrun trace: cannot create " .. dir:gsub("%p", "%%%0")
        .. "/%d+%.wltrace: No such file or directory; process %d+ is not traced\n$", text)
    end)
  end)
end)

describe("the trace library on the GPU", function()
  local function cuda_it(name, fn)
    h.gpu_it(name, function()
      assert(LIB and CUDA_PROGRAM,
        "WLRUN_TRACE_LIB and WLRUN_TRACE_CUDA_PROGRAM (trace_cuda_program) are needed")
      fn()
    end)
  end

  -- the range each K record's correlation names through C, by K name
  local function joined(t)
    local rs, by_rid, range_of = ranges(t, "R"), {}, {}
    for _, x in ipairs(rs) do by_rid[x.rid] = x end
    local launched = {}
    for _, c in ipairs(ranges(t, "C")) do
      local corr, rid, time = tonumber(c[1]), tonumber(c[2]), tonumber(c[3])
      launched[corr] = launched[corr] or time
      if rid ~= 0 then -- 0: launched with no range open
        local r = by_rid[rid]
        assert.is_not_nil(r, "C names a range that was written")
        assert.is_true(range_of[corr] == nil or range_of[corr] == r, "one correlation, one range")
        range_of[corr] = r
      end
    end
    -- a launch's time is the CPU's, before its work ran on the GPU (one clock for both)
    for _, k in ipairs(ranges(t, "K")) do
      local at = launched[k.correlation]
      if at then assert.is_true(at <= k.start, ("launched at %d, ran from %d"):format(at,
        k.start)) end
    end
    return rs, range_of
  end

  cuda_it(
    "times kernels, copies and sets with CUPTI and joins them to the ranges that launched them",
    function()
    local r, files = run(CUDA_PROGRAM, { "steps" })
    assert.equal(0, r.code, r.stderr)
    local t = only_file(files)
    assert.equal("on", ranges(t, "G")[1][1])
    assert.equal(0, #ranges(t, "E"), h.read(t.path))
    assert.equal(0, #ranges(t, "D"))
    local rs, range_of = joined(t)
    local ks = ranges(t, "K")
    local want = { ["forward_spin(unsigned long)"] = { "forward", 6, 2 },
      ["backward_spin(unsigned long)"] = { "backward", 3, 4 },
                   ["optimizer_spin(unsigned long)"] = { "optimizer", 3, 1 },
                     ["thread_spin(unsigned long)"] = { "threaded", 1, 1 },
                   ["graph_spin(unsigned long)"] = { "graph", 1, 1 },
                     ["memcpy HtoD"] = { "data", 3 }, memset = { "backward", 3 } }
    local count = {}
    for _, k in ipairs(ks) do
      local w = want[k.name]
      assert.is_not_nil(w, "an expected K: " .. tostring(k.name))
      count[k.name] = (count[k.name] or 0) + 1
      local owner = range_of[k.correlation]
      assert.is_not_nil(owner, k.name .. " has a C record")
      assert.equal(w[1], owner.name, k.name .. " launched in " .. w[1])
      assert.is_true(k.start >= owner.start, k.name .. " runs after its launch (one clock)")
      if w[3] then
        assert.equal("kernel", k.kind)
        assert.equal(0, k.bytes)
        local d = k.stop - k.start
        assert.is_true(d >= w[3] * MS and d < (w[3] + 1) * MS, k.name .. " took " .. d)
      end
    end
    for name, w in pairs(want) do assert.equal(w[2], count[name], name) end
    for _, k in ipairs(by_name(ks, "memcpy HtoD")) do
      assert.equal(8 << 20, k.bytes) assert.equal("memcpy", k.kind) end
    for _, k in ipairs(by_name(ks, "memset")) do assert.equal(1 << 20, k.bytes) end
    -- each step synchronised at its end: its kernels end inside it
    for _, step in ipairs(by_name(rs, "train_step")) do
      local inside = 0
      for _, k in ipairs(ks) do
        if range_of[k.correlation] and range_of[k.correlation].parent == step.rid then
          inside = inside + 1
          assert.is_true(k.stop <= step.stop, "K times and R times share CLOCK_MONOTONIC")
        end
      end
      assert.equal(5, inside)
    end
  end)

  cuda_it("synchronises the device at the edges of WLRUN_TRACE_SYNC's ranges", function()
    local r, files = run(CUDA_PROGRAM, { "nosync" }, { WLRUN_TRACE_SYNC = "train_step" })
    assert.equal(0, r.code, r.stderr)
    for _, step in ipairs(by_name(ranges(only_file(files), "R"), "train_step")) do
      assert.is_true(step.stop - step.start >= 9 * MS, "the step waited for its 9 ms of kernels")
    end
  end)

  cuda_it("synchronises the hook's steps only where the program has none of its own", function()
    local r, files = run(CUDA_PROGRAM, { "hooked" }, { WLRUN_TRACE_SYNC = "train_step" })
    assert.equal(0, r.code, r.stderr)
    local all = ranges(only_file(files), "R")
    local forwards = by_name(all, "forward")
    local program, hook = {}, {}
    for _, step in ipairs(by_name(all, "train_step")) do
      local list = step.domain == "wlrun.auto" and hook or program
      list[#list + 1] = step
    end
    assert.equal(3, #program)
    assert.equal(3, #hook)
    for i, step in ipairs(program) do
      assert.is_true(step.stop - step.start >= 9 * MS, "the step waited for its 9 ms of kernels")
      -- the hook's step, pushed after the forward's 4 ms of kernels, did not wait for them
      assert.is_true(hook[i].start - forwards[i].start < 2 * MS,
        ("hook's step %d began %.3f ms into the forward"):format(i,
          (hook[i].start - forwards[i].start) / MS))
    end
  end)

  cuda_it("records the loop's first synchronisation after a step where no GPU work came before it",
    function()
    -- with and without wlrun's own synchronisation before each step (--sync-steps), which is
    -- not the loop's
    for _, sync in ipairs { "", "train_step" } do
      local r, files = run(CUDA_PROGRAM, { "waits" },
        { WLRUN_TRACE_STEP = "train_step", WLRUN_TRACE_SYNC = sync })
      assert.equal(0, r.code, r.stderr)
      local t = only_file(files)
      local steps, ks = by_name(ranges(t, "R"), "train_step"), ranges(t, "K")
      assert.equal(8, #steps)
      -- each step's kernel: the one whose launch (C) names the step's range
      local rid_of, spin_of = {}, {}
      for _, c in ipairs(ranges(t, "C")) do rid_of[tonumber(c[1])] = tonumber(c[2]) end
      for _, k in ipairs(by_name(ks, "forward_spin(unsigned long)")) do
        local rid = rid_of[k.correlation]
        if rid then spin_of[rid] = k end
      end
      local waits = ranges(t, "W")
      -- after the 1st step (the device, twice: the first), the 2nd (an event recorded, the legacy
      -- stream) and the 7th (the device, then an event); none after nothing, a copy, a kernel, or
      -- where another stream's or an event's synchronisation came first
      local after = { 1, 2, 7 }
      assert.equal(#after, #waits, sync)
      for k, w in ipairs(waits) do
        local i = after[k]
        local tid, rid = math.tointeger(w[1]), math.tointeger(w[2])
        local enter, back = math.tointeger(w[3]), math.tointeger(w[4])
        assert.equal(steps[i].tid, tid)
        assert.equal(steps[i].rid, rid)
        assert.is_true(enter >= steps[i].stop and enter < steps[i + 1].start, "wait " .. i)
        assert.is_true(back >= enter)
        -- it waited for the step's kernel, which ends after the step's range does (but where
        -- wlrun synchronised the step's end)
        local spin = spin_of[steps[i].rid]
        local says = ("wait %d: the kernel ends %d ns after the step, the wait returns %d ns after "
          .. "it; %s"):format(i, spin.stop - steps[i].stop, back - spin.stop, sync)
        assert.is_true(back >= spin.stop, says)
        assert.is_true(sync ~= "" or spin.stop > steps[i].stop, says)
      end
      -- the last synchronisation before each step, where it is the device's and no GPU work
      -- followed it: before the 1st (after the loading), the 2nd (the second of two: it was
      -- entered after the first returned), the 6th and the 7th; none where a stream's (the
      -- 3rd, 5th: PyTorch's blocking copies synchronise their stream), GPU work (the 4th) or an
      -- event's (the 8th) came last, nor where wlrun synchronised last, before each step
      local befores = ranges(t, "B")
      local want = sync == "" and { 1, 2, 6, 7 } or {}
      assert.equal(#want, #befores, sync)
      for k, b in ipairs(befores) do
        local s, enter, back = steps[want[k]], math.tointeger(b[3]), math.tointeger(b[4])
        assert.equal(s.tid, math.tointeger(b[1]))
        assert.equal(s.rid, math.tointeger(b[2]))
        assert.is_true(back >= enter and back <= s.start, "before step " .. want[k])
        local floor = want[k] == 2 and math.tointeger(waits[1][4])
          or want[k] > 1 and steps[want[k] - 1].stop or 0
        assert.is_true(enter >= floor, "before step " .. want[k])
      end
    end
  end)

  cuda_it("records the loop's synchronisations on steps not recorded too, and idle streams' marks",
    function()
    -- GPU activity on a sample of the steps (the first three, then one in 8: steps 4 to 8 not
    -- recorded), no quiet steps: the launches of the steps not recorded are still called back, so
    -- the W and B records are those of every step recorded (above); and a boundary that finds
    -- its stream idle is marked by the library itself, never before the work it marks ended
    local r, files = run(CUDA_PROGRAM, { "waits" },
      { WLRUN_TRACE_STEP = "train_step", WLRUN_TRACE_GPU_EVERY = "8" })
    assert.equal(0, r.code, r.stderr)
    local t = only_file(files)
    local steps = by_name(ranges(t, "R"), "train_step")
    assert.equal(8, #steps)
    local es = {}
    for _, e in ipairs(ranges(t, "E")) do es[#es + 1] = table.concat(e, " ") end
    assert.equal(0, #es, table.concat(es, "\n"))
    -- kernels' activity off from the close of the 3rd step, for the rest
    local ps = ranges(t, "P")
    assert.equal(1, #ps)
    assert.equal("off", ps[1][2])
    local off = math.tointeger(ps[1][1])
    assert.is_true(off >= steps[3].stop and off <= steps[4].start)
    local function of(letter, want)
      local got = {}
      for _, w in ipairs(ranges(t, letter)) do
        for i, s in ipairs(steps) do
          if s.rid == math.tointeger(w[2]) then got[#got + 1] = i end
        end
      end
      assert.same(want, got, letter)
    end
    of("W", { 1, 2, 7 })
    of("B", { 1, 2, 6, 7 })
    local launched = {}
    for _, c in ipairs(ranges(t, "C")) do launched[tonumber(c[1])] = tonumber(c[3]) end
    local kernels, idle = by_name(ranges(t, "K"), "forward_spin(unsigned long)"), 0
    for _, k in ipairs(ranges(t, "K")) do
      if k.kind == "event" and k.correlation >= 2 ^ 41 then
        idle = idle + 1
        local at = launched[k.correlation]
        -- (its time may come before its call: the return of the loop's synchronisation of the
        -- device before the boundary, where nothing was launched since)
        assert.is_true(at and k.start == k.stop, "idle mark " .. k.correlation)
        for _, w in ipairs(kernels) do
          local l = launched[w.correlation]
          assert.is_true(not l or l > at or w.stop <= k.stop,
            ("idle mark at %d before the end of a kernel launched before it (%d)"):format(k.stop,
              w.stop))
        end
      end
    end
    assert.is_true(idle > 0, "no idle mark")
    -- the steps not recorded that the loop's synchronisation of the device began (the 6th and the
    -- 7th): their idle marks carry its return, before their boundary
    local marked = {}
    for _, k in ipairs(ranges(t, "K")) do
      if k.kind == "event" and k.correlation >= 2 ^ 41 then marked[k.stop] = true end
    end
    for _, b in ipairs(ranges(t, "B")) do
      local rid = math.tointeger(b[2])
      if rid == steps[6].rid or rid == steps[7].rid then
        assert.is_true(marked[math.tointeger(b[4])], ("no idle mark at %s, the return of the "
          .. "synchronisation before the step of range %d"):format(b[4], rid))
      end
    end
  end)

  cuda_it("leaves CUDA alone in a forked child: its own file, no G, a clean exit", function()
    local r, files = run(CUDA_PROGRAM, { "fork" })
    assert.equal(0, r.code, r.stderr)
    local parent, child = parent_and_child(files)
    assert.equal("on", ranges(parent, "G")[1][1])
    assert.equal(0, #ranges(child, "G"))
    assert.equal("child", ranges(child, "R")[1].name)
    assert.equal("X", child.records[#child.records][1])
  end)
end)
