-- wlrun trace's reader (lua/wlrun/trace/read.lua) on the fixtures of tests/fixtures/trace/ and
-- on handwritten lines: the records of src/trace/trace_format.h, strictly; messages naming the
-- file and the line; a file cut short kept; limits that refuse a hostile file.
local h = require "helper"
local read = require "wlrun.trace.read"

local F = h.source_dir .. "/tests/fixtures/trace/"

-- a file's text: the header, then the given lines, each ended by a newline
local function file(...)
  local lines = { "wltrace\t1\t42\t1\tprog --flag" }
  for _, l in ipairs { ... } do lines[#lines + 1] = l end
  return table.concat(lines, "\n") .. "\n"
end

-- asserts that parsing text fails with kind io and a message holding `text` (plain)
local function refused(text, message, limits)
  local ok, e = pcall(read.parse, text, "42.wltrace", limits)
  assert.is_false(ok, "expected the error: " .. message)
  assert.equal("io", type(e) == "table" and e.kind or tostring(e))
  assert.truthy(tostring(e.message):find(message, 1, true),
    "expected «" .. message .. "» in: " .. tostring(e.message))
end

describe("trace reader", function()
  it("reads a process: header, strings, threads, ranges with their parents, correlations, GPU work",
    function()
    local t = read.dir(F .. "basic")
    assert.equal(1, #t.processes)
    local p = t.processes[1]
    assert.equal(100, p.pid)
    assert.equal(1, p.ppid)
    assert.equal("python3 train.py --steps 4", p.command)
    assert.equal("MainThread", p.threads[100])
    assert.equal(20, #p.ranges)
    local step = p.by_rid[2]
    assert.equal("train_step", step.name)
    assert.equal(64, step.payload)
    assert.is_nil(step.parent)
    assert.equal(1, step.depth)
    assert.equal(1002000000, step.start)
    assert.equal(1012000000, step.stop)
    local fwd = p.by_rid[3]
    assert.equal("forward", fwd.name)
    assert.equal(step, fwd.parent)
    assert.equal(2, fwd.depth)
    assert.is_nil(fwd.payload)
    assert.equal(3, p.corr[11])
    assert.equal(21, #p.gpu)
    assert.same({ corr = 15, kind = "memcpy", device = 0, stream = 7, start = 1001500000,
      stop = 1002000000,
      bytes = 1048576, name = "memcpy HtoD" }, p.gpu[1])
    assert.same({ state = "on" }, p.cupti)
    assert.equal("exit", p.exit)
    assert.is_false(p.truncated)
  end)

  it("keeps a file cut short: the last line without its newline is dropped, the process marked",
    function()
    local p = read.dir(F .. "cpu_only").processes[1]
    assert.is_true(p.truncated)
    assert.is_nil(p.exit)
    assert.is_nil(p.by_rid[11]) -- the cut line
    local open = p.by_rid[10]
    assert.is_true(open.open)
    assert.is_nil(open.stop)
    assert.same({ state = "off", reason = "libcupti.so.13: cannot open shared object file" },
      p.cupti)
    -- a file cut in its header: nothing but the mark
    local q = read.parse("wltrace\t1\t4", "4.wltrace")
    assert.is_true(q.truncated)
    assert.equal(0, #q.ranges)
  end)

  it("drops the NUL bytes that end a killed process's file (room reserved, never used)", function()
    local text = file("S\t1\tx", "R\t1\t7\t0\t1\t0\t10\t20\t-")
    local p = read.parse(text .. ("\0"):rep(4096), "42.wltrace")
    assert.is_false(p.truncated)
    assert.is_nil(p.exit)
    assert.equal(20, p.by_rid[1].stop)
    -- cut inside a line, then NUL bytes: the line is dropped, the process marked
    local q = read.parse(text .. "R\t2\t7" .. ("\0"):rep(10), "42.wltrace")
    assert.is_true(q.truncated)
    assert.is_nil(q.by_rid[2])
    -- a NUL byte with text after it is the file's own: refused
    refused(text .. "\0" .. "R\t2\t7\t0\t1\t0\t30\t40\t-\n", "42.wltrace:")
  end)

  it("reads start/end ranges and open ones of both kinds", function()
    local p = read.parse(file("S\t1\tx", "A\t1\t7\t1\t0\t10\t20\t-5", "O\t2\t7\t-\t1\t0\t30\t-",
      "O\t3\t7\t0\t1\t0\t40\t9"))
    assert.is_true(p.by_rid[1].async)
    assert.equal(-5, p.by_rid[1].payload)
    assert.is_true(p.by_rid[2].async and p.by_rid[2].open)
    assert.is_false(p.by_rid[3].async)
    assert.is_true(p.by_rid[3].open)
    assert.equal(9, p.by_rid[3].payload)
  end)

  it("unescapes strings", function()
    local p = read.parse(file([[S	1	a\tb\nc\rd\\e\x41\x1b]], "T\t5\t1"))
    assert.equal("a\tb\nc\rd\\eA\27", p.threads[5])
  end)

  it("reads every *.wltrace of a directory in pid order and nothing else", function()
    local dir = h.tmpdir()
    h.write(dir .. "/10.wltrace", "wltrace\t1\t10\t1\tb\n")
    h.write(dir .. "/9.wltrace", "wltrace\t1\t9\t1\ta\n")
    h.write(dir .. "/notes.txt", "not a trace")
    h.write(dir .. "/11.wltrace", "") -- a process that wrote nothing
    -- the same pid after an exec
    h.write(dir .. "/9.2.wltrace", "wltrace\t1\t9\t1\tan exec'd program\n")
    h.write(dir .. "/9.10.wltrace", "wltrace\t1\t9\t1\tanother\n")
    local t = read.dir(dir)
    assert.equal(5, #t.processes)
    local order = {}
    for i, p in ipairs(t.processes) do order[i] = p.file end
    assert.same({ "9.wltrace", "9.2.wltrace", "9.10.wltrace", "10.wltrace", "11.wltrace" }, order)
    assert.equal(9, t.processes[3].pid)
    assert.equal(11, t.processes[5].pid)
    assert.is_true(t.processes[5].empty)
  end)

  it("resolves a parent or a correlation that was never written as none, and counts them",
    function()
    local p = read.parse(file("S\t1\tx", "R\t2\t7\t1\t1\t0\t10\t20\t-", "C\t5\t99", "C\t6\t2"))
    assert.is_nil(p.by_rid[2].parent)
    assert.equal(1, p.orphans)
    assert.is_nil(p.corr[5])
    assert.equal(2, p.corr[6])
    assert.equal(1, p.unknown_corr)
  end)

  it("gives a range that outlives its parent to the nearest ancestor that holds its end",
    function()
    -- a step (2) ended before ranges pushed in it: the hook's step ended at the optimizer's end
    -- where the process ended, holding a log (3) and a checkpoint (4, never closed)
    local p = read.parse(file("S\t1\tx", "R\t1\t7\t0\t1\t0\t0\t100\t-",
      "R\t2\t7\t1\t1\t0\t10\t50\t-", "R\t5\t7\t2\t1\t0\t20\t30\t-",
      "R\t3\t7\t2\t1\t0\t55\t60\t-", "R\t6\t7\t3\t1\t0\t56\t58\t-",
      "O\t4\t7\t2\t1\t0\t70\t-"))
    assert.equal(p.by_rid[1], p.by_rid[2].parent)
    assert.equal(p.by_rid[2], p.by_rid[5].parent) -- inside it: kept
    assert.equal(p.by_rid[1], p.by_rid[3].parent)
    assert.equal(p.by_rid[3], p.by_rid[6].parent)
    assert.is_nil(p.by_rid[4].parent) -- open: no closed range holds it
  end)

  describe("refuses, naming the file and the line,", function()
    it("a file that is not a trace, or of another version", function()
      refused("hello\n", "42.wltrace:1: not a wlrun trace file")
      refused("wltrace\t7\t1\t1\tx\n",
        "42.wltrace:1: trace format version 7; this wlrun reads versions 1 to 6")
      refused("wltrace\t1\t1\t1\n", "42.wltrace:1: the header has 4 fields, expected 5")
    end)

    it("version 3's records in an older file, and a P out of order or of no known state",
      function()
      refused(file("P\t10\toff"), "42.wltrace:2: P: a record of version 3 in a file of version 1")
      refused(file("S\t1\tevent", "K\t1\tevent\t0\t7\t5\t5\t0\t1"),
        "42.wltrace:3: K: an unknown kind of GPU work 'event' (kernel, memcpy, memset)")
      local v3 = "wltrace\t3\t1\t1\tx\n"
      refused(v3 .. "P\t10\tmaybe\n", "42.wltrace:2: P: state 'maybe', expected on or off")
      refused(v3 .. "P\t10\toff\nP\t5\ton\n", "42.wltrace:3: P: time 5 before the last P's (10)")
    end)

    it("version 4's waits: not in an older file, none that returns before it is entered", function()
      refused("wltrace\t3\t1\t1\tx\nW\t7\t1\t10\t20\n",
        "42.wltrace:2: W: a record of version 4 in a file of version 3")
      local v4 = "wltrace\t4\t1\t1\tx\n"
      refused(v4 .. "W\t7\t1\t20\t10\n",
        "42.wltrace:2: W: the call returns (10) before it is entered (20)")
      refused(v4 .. "W\t7\t20\t30\n", "42.wltrace:2: W: 4 fields, expected 5")
      refused(v4 .. "W\t7\t1\tx\t20\n", "42.wltrace:2: enter")
      refused(v4 .. "W\t7\t-1\t10\t20\n", "42.wltrace:2: rid")
      local p = read.parse(v4 .. "W\t7\t1\t10\t20\n", "42.wltrace")
      assert.same({ { tid = 7, rid = 1, start = 10, stop = 20 } }, p.waits)
    end)

    it("version 5's waits before a step: not in an older file, none that returns before it is "
      .. "entered", function()
      refused("wltrace\t4\t1\t1\tx\nB\t7\t1\t10\t20\n",
        "42.wltrace:2: B: a record of version 5 in a file of version 4")
      local v5 = "wltrace\t5\t1\t1\tx\n"
      refused(v5 .. "B\t7\t1\t20\t10\n",
        "42.wltrace:2: B: the call returns (10) before it is entered (20)")
      refused(v5 .. "B\t7\t20\t30\n", "42.wltrace:2: B: 4 fields, expected 5")
      refused(v5 .. "B\t7\t1\t10\tx\n", "42.wltrace:2: return")
      local p = read.parse(v5 .. "W\t7\t1\t10\t20\nB\t7\t2\t10\t20\n", "42.wltrace")
      assert.same({ { tid = 7, rid = 1, start = 10, stop = 20 } }, p.waits)
      assert.same({ { tid = 7, rid = 2, start = 10, stop = 20 } }, p.befores)
    end)

    it("version 6's resumptions: not in an older file, none before its call returned; each moves "
      .. "its thread's W that returned then", function()
      refused("wltrace\t5\t1\t1\tx\nY\t7\t20\t30\n",
        "42.wltrace:2: Y: a record of version 6 in a file of version 5")
      local v6 = "wltrace\t6\t1\t1\tx\n"
      refused(v6 .. "Y\t7\t30\t20\n",
        "42.wltrace:2: Y: resumed (20) before the call returned (30)")
      refused(v6 .. "Y\t7\t30\n", "42.wltrace:2: Y: 3 fields, expected 4")
      refused(v6 .. "Y\t7\t30\tsoon\n", "42.wltrace:2: now")
      -- thread 7's W returning at 20 moves to 25; thread 8's, and a Y naming no W, move nothing
      local p = read.parse(v6 .. "W\t7\t1\t10\t20\nW\t8\t2\t10\t20\nY\t7\t20\t25\n"
        .. "Y\t7\t40\t45\nB\t7\t3\t10\t20\n", "42.wltrace")
      assert.same({ { tid = 7, rid = 1, start = 10, stop = 25 },
        { tid = 8, rid = 2, start = 10, stop = 20 } }, p.waits)
      assert.same({ { tid = 7, rid = 3, start = 10, stop = 20 } }, p.befores)
    end)

    it("an unknown record and a wrong number of fields", function()
      refused(file("Z\t1"), "42.wltrace:2: an unknown record 'Z'")
      refused(file("S\t1\tx", "R\t1\t7\t0\t1\t0\t10\t20"), "42.wltrace:3: R: 8 fields, expected 9")
      refused(file("S\t1\tx\ty"), "42.wltrace:2: S: 4 fields, expected 3")
      refused(file("G"), "42.wltrace:2: G: 1 fields, expected 2 or 3")
      refused(file(""), "42.wltrace:2: an unknown record ''")
    end)

    it("a bad number", function()
      refused(file("S\t1\tx", "R\t1\t7\t0\t1\t0\t1e3\t20\t-"),
        "42.wltrace:3: start: '1e3' is not a whole number >= 0")
      refused(file("S\t-1\tx"), "42.wltrace:2: sid: '-1' is not a whole number >= 0")
      refused(file("S\t99999999999999999999\tx"), "is not a whole number")
      refused(file("S\t1\tx", "R\t1\t7\t0\t1\t0\t10\t20\t1.5"),
        "42.wltrace:3: payload: '1.5' is not a whole number")
      refused(file("D\tcupti\tmany"), "42.wltrace:2: count: 'many' is not a whole number >= 0")
    end)

    it("a string used before it is defined, ids given twice", function()
      refused(file("R\t1\t7\t0\t1\t0\t10\t20\t-"),
        "42.wltrace:2: name: string 1 is used before it is defined")
      refused(file("S\t1\tx", "S\t1\ty"), "42.wltrace:3: string 1 is defined twice")
      refused(file("S\t1\tx", "R\t1\t7\t0\t1\t0\t10\t20\t-", "A\t1\t7\t1\t0\t10\t20\t-"),
        "42.wltrace:4: range 1 is defined twice")
      refused(file("C\t5\t1", "C\t5\t2"),
        "42.wltrace:3: correlation 5 is given to range 1 and to range 2")
      assert.equal(1, read.parse(file("S\t1\tx", "R\t1\t7\t0\t1\t0\t1\t2\t-", "C\t5\t1",
        "C\t5\t1")).corr[5])
      refused(file("S\t0\tx"), "42.wltrace:2: string id 0")
    end)

    it("bad escapes and raw control bytes", function()
      refused(file([[S	1	a\qb]]), [[42.wltrace:2: a bad escape '\q']])
      refused(file([[S	1	a\x4]]), [[a bad escape '\x']])
      refused(file("S\t1\ta\rb"), "42.wltrace:2: a raw control byte 0x0d")
    end)

    it("impossible records", function()
      refused(file("S\t1\tx", "R\t1\t7\t0\t1\t0\t30\t20\t-"),
        "42.wltrace:3: range 1 ends (20) before it starts (30)")
      refused(file("S\t1\tk", "K\t1\tgraph\t0\t0\t1\t2\t0\t1"),
        "42.wltrace:3: K: an unknown kind of GPU work 'graph'")
      refused(file("S\t1\tk", "K\t1\tkernel\t0\t0\t5\t2\t0\t1"),
        "K: GPU work ends (2) before it starts (5)")
      refused(file("G\tmaybe"), "42.wltrace:2: G: state 'maybe', expected on or off")
      refused(file("S\t1\tx", "R\t0\t7\t0\t1\t0\t1\t2\t-"), "rid 0")
    end)

    it("parents that cannot be", function()
      refused(file("S\t1\tx", "R\t1\t7\t2\t1\t0\t10\t20\t-", "R\t2\t7\t1\t1\t0\t10\t20\t-"),
        "42.wltrace: range 1 is its own ancestor")
      refused(file("S\t1\tx", "R\t1\t7\t1\t1\t0\t10\t20\t-"), "range 1 is its own ancestor")
      refused(file("S\t1\tx", "R\t1\t7\t2\t1\t0\t10\t20\t-", "R\t2\t8\t0\t1\t0\t10\t20\t-"),
        "42.wltrace: range 1 (thread 7) names range 2 of another thread (8) as its parent")
      refused(file("S\t1\tx", "R\t1\t7\t2\t1\t0\t10\t20\t-", "A\t2\t7\t1\t0\t10\t20\t-"),
        "a start/end range (parents are push/pop ranges)")
    end)
  end)

  describe("is bounded", function()
    it("in records, line length and nesting depth", function()
      refused(file("S\t1\ta", "S\t2\tb", "S\t3\tc"),
        "42.wltrace:3: more than 2 records in the trace: trace fewer steps", { records = 2 })
      refused(file("S\t1\t" .. string.rep("x", 100)),
        "42.wltrace:2: a line of 104 bytes (at most 64)", { line = 64 })
      local lines = { "S\t1\tx" }
      for i = 1, 10 do lines[#lines + 1] = ("R\t%d\t7\t%d\t1\t0\t10\t20\t-"):format(i, i - 1) end
      refused(file(table.unpack(lines)), "range 10 is nested 10 deep (at most 9)", { depth = 9 })
      assert.equal(10, read.parse(file(table.unpack(lines)), "ok", { depth = 10 }).by_rid[10].depth)
    end)

    it("in bytes and files of a directory", function()
      local dir = h.tmpdir()
      h.write(dir .. "/1.wltrace", file("S\t1\t" .. string.rep("x", 200)))
      local ok, e = pcall(read.dir, dir, { bytes = 100 })
      assert.is_false(ok)
      assert.equal("io", e.kind)
      assert.matches("1%.wltrace: the trace files hold more than 0 MiB", e.message)
      -- the room the library reserved and left unused (NUL bytes) is not counted
      local tail = h.tmpdir()
      h.write(tail .. "/3.wltrace", file("S\t1\tx") .. ("\0"):rep(65536))
      assert.equal(42, read.dir(tail, { bytes = 100 }).processes[1].pid)
      h.write(dir .. "/2.wltrace", file())
      ok, e = pcall(read.dir, dir, { files = 1 })
      assert.is_false(ok)
      assert.matches("2 trace files, more than 1 processes", e.message)
    end)

    it("keeps at most the limit of the library's error lines, counting the rest", function()
      local p = read.parse(file("E\tone", "E\ttwo", "E\tthree"), "x", { errors = 2 })
      assert.same({ "one", "two" }, p.errors)
      assert.equal(1, p.errors_more)
    end)
  end)

  it("prints names safely: control bytes escaped, long ones cut at a character", function()
    assert.equal("a\\x1b[31mb\\x07", read.printable("a\27[31mb\7"))
    assert.equal("abcdefg...", read.printable("abcdefghijklmnop", 10))
    -- "é" is two bytes: the cut does not split it
    local s = read.printable(string.rep("é", 10), 10)
    assert.equal("ééé...", s)
    assert.equal("short", read.printable("short", 10))
    -- bytes that are not UTF-8, and C1 controls (U+009B is a terminal's CSI), escaped too
    assert.equal("bad\\xff\\xfe|\\xc2\\x9b|\\xed\\xa0\\x80|é ✓",
      read.printable("bad\xff\xfe|\xc2\x9b|\xed\xa0\x80|é ✓"))
    assert.equal("\\x1b...", read.printable("\27\27\27", 8)) -- never cut inside an escape
  end)

  it("reads payloads of every integer type NVTX has", function()
    local p = read.parse(file("S\t1\tx", "R\t1\t7\t0\t1\t0\t1\t2\t-9223372036854775808",
      "R\t2\t7\t0\t1\t0\t1\t2\t18446744073709551615", "R\t3\t7\t0\t1\t0\t1\t2\t4000000000"))
    assert.equal(math.mininteger, p.by_rid[1].payload)
    assert.equal("float", math.type(p.by_rid[2].payload)) -- beyond a signed 64-bit integer
    assert.equal(4000000000, p.by_rid[3].payload)
    refused(file("S\t1\tx", "R\t1\t7\t0\t1\t0\t1\t2\t999999999999999999999"),
      "payload: '999999999999999999999' is not a whole number")
  end)
end)
