-- End-to-end, no GPU needed: how wlrun writes its files (docs/results.md, "Writing"), against
-- what a hostile or careless directory holds. Every output is made new beside its target and
-- renamed over it: a FILE.tmp that is there (a symbolic link planted to a victim, or the user's
-- own file) is never opened, truncated or removed; a target that is a link to a regular file (or
-- to nothing yet) is written through, the link kept, and one to anything else is refused; a FIFO
-- where a report page goes does not hang the report; `wlrun trace -o` checks its outputs before
-- it runs the program, and a write that still fails at the end costs neither the report nor the
-- raw trace. One writer per output: a run aiming at an output that a live run writes, in any
-- position, is refused; of 100 runs started at once, no two write it at once; a killed run's lock
-- refuses nothing.
local h = require "helper"

local q = h.quote
local LIB, PROGRAM = os.getenv("WLRUN_TRACE_LIB"), os.getenv("WLRUN_TRACE_PROGRAM")

local function fixture(dir)
  local path = dir .. "/base.json"
  h.write(path, h.read(h.source_dir .. "/tests/fixtures/results/metrics-base.json"))
  return path
end

-- "file", "link", "fifo", "directory" or nil, not following a link
local function kind(path)
  local p = io.popen("stat -c %F " .. q(path) .. " 2>/dev/null")
  local out = p:read("a")
  p:close()
  return ({ ["regular file"] = "file", ["regular empty file"] = "file", ["symbolic link"] = "link",
    fifo = "fifo",
    directory = "directory" })[out:gsub("%s+$", "")]
end

local function names(dir)
  local p = io.popen("ls -A " .. q(dir))
  local list = {}
  for name in p:lines() do list[#list + 1] = name end
  p:close()
  table.sort(list)
  return table.concat(list, " ")
end

-- a victim file and a link to it at path
local function plant(dir, path)
  local victim = h.write(dir .. "/victim.txt", "VICTIM\n")
  assert(os.execute("ln -s " .. q(victim) .. " " .. q(path)))
  return victim
end

local SCENARIO = [[
local wl = require "wlrun"
return wl.scenario { name = "out", params = { n = { 1, 2 } }, setup = function() return {} end, run = function() end }
]]

describe("an output file", function()
  it("is not written through a link planted at FILE.tmp (export -o)", function()
    local dir = h.tmpdir()
    local victim = plant(dir, dir .. "/ex.json.tmp")
    fixture(dir)
    local r = h.run("export base.json -o ex.json", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    assert.equal("VICTIM\n", h.read(victim))
    assert.equal("file", kind(dir .. "/ex.json"))
    -- Google Benchmark's JSON
    assert.truthy(h.read(dir .. "/ex.json"):find('"benchmarks"', 1, true))
    assert.equal("link", kind(dir .. "/ex.json.tmp")) -- left as it was
  end)

  it("is not written through a link planted at index.html.tmp (report --html)", function()
    local dir = h.tmpdir()
    fixture(dir)
    assert(os.execute("mkdir " .. q(dir .. "/page")))
    local victim = plant(dir, dir .. "/page/index.html.tmp")
    local r = h.run("report -q --html page base.json", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    assert.equal("VICTIM\n", h.read(victim))
    assert.equal("file", kind(dir .. "/page/index.html"))
    assert.equal("index.html index.html.tmp", names(dir .. "/page"))
  end)

  it("of a scenario run leaves the user's FILE.tmp alone, before the run and after it", function()
    local dir = h.tmpdir()
    h.write(dir .. "/out.json.tmp", "mine\n")
    local victim = plant(dir, dir .. "/out.csv.tmp")
    local r = h.run_script(SCENARIO, "--compile-only -o out.json -o out.csv", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    assert.equal("mine\n", h.read(dir .. "/out.json.tmp"))
    assert.equal("VICTIM\n", h.read(victim))
    assert.truthy(h.read(dir .. "/out.json"):find('"configurations"', 1, true))
    assert.equal("file", kind(dir .. "/out.csv"))
    assert.equal("out.csv out.csv.tmp out.json out.json.tmp script.lua victim.txt", names(dir))
  end)

  it("of a scenario run is refused when a link (even to nothing) is where its journal goes",
    function()
    local dir = h.tmpdir()
    assert(os.execute("ln -s " .. q(dir .. "/elsewhere") .. " " .. q(dir .. "/out.json.journal")))
    local r = h.run_script(SCENARIO, "--compile-only -o out.json", { cwd = dir })
    assert.equal(9, r.code, r.stderr)
    assert.truthy(r.stderr:find("'out.json.journal' is there", 1, true), r.stderr)
    assert.is_nil(kind(dir .. "/elsewhere"))
    assert.equal("link", kind(dir .. "/out.json.journal"))
  end)

  -- with --devices the parent makes no CUDA context: the devices named are still checked first
  if not h.has_gpu then
    it("of a scenario run is not touched when --devices names a device this machine does not have",
      function()
      local dir = h.tmpdir()
      h.write(dir .. "/out.json", '{"keep": "me"}\n')
      local r = h.run_script(SCENARIO, "--devices 0 -o out.json", { cwd = dir })
      assert.equal(4, r.code, r.stderr)
      assert.matches("%-%-devices: no CUDA device 0", r.stderr)
      assert.equal('{"keep": "me"}\n', h.read(dir .. "/out.json"))
      assert.equal("out.json script.lua", names(dir))
    end)
  end

  -- the workers start before the devices are checked (docs/cluster.md): a device missing ends
  -- them, and their queue goes with them
  -- a command scenario's (wl.command: each configuration a program of the user's) as well
  local COMMAND = [[
return require("wlrun").command { name = "cmd", params = { i = { 1, 2, 3 } },
  command = function() return { "sleep", "5" } end }
]]
  for _, case in ipairs { { "scenario", SCENARIO }, { "command scenario", COMMAND } } do
    it(
      ("of a %s run is not touched when --devices names a missing device, and no worker or "
      .. "queue is left"):format(case[1]), function()
      local dir = h.tmpdir()
      assert(os.execute("mkdir " .. q(dir .. "/tmp")))
      h.write(dir .. "/out.json", '{"keep": "me"}\n')
      local r = h.run_script(case[2], "--devices 0,1023 -o out.json",
        { cwd = dir, env = "TMPDIR=" .. q(dir .. "/tmp") })
      assert.equal(4, r.code, r.stderr)
      assert.matches("%-%-devices: no CUDA device %d+ %(this machine has %d+%)", r.stderr)
      -- the GPUs a job was given: the message says where the count comes from
      r = h.run_script(case[2], "--devices 1023 -o out.json",
        { cwd = dir, env = "TMPDIR=" .. q(dir .. "/tmp") .. " CUDA_VISIBLE_DEVICES="
          .. q("0,\n1") })
      assert.equal(4, r.code, r.stderr)
      assert.matches(
        "no CUDA device 1023 %(this machine has %d+, as CUDA_VISIBLE_DEVICES=0,\\x0a1 shows them%)",
        r.stderr)
      assert.equal('{"keep": "me"}\n', h.read(dir .. "/out.json"))
      assert.equal("out.json script.lua tmp", names(dir))
      assert.equal("", names(dir .. "/tmp"))
      -- a process whose arguments name the queue's parent (written tm[p] so that grep's own do not)
      local p = assert(io.popen("grep -lsa -- " .. q(dir .. "/tm[p]/wlrun-")
        .. " /proc/[0-9]*/cmdline"))
      local left = p:read("a")
      p:close()
      assert.equal("", left)
    end)
  end

  it("that is a link to a file, or to nothing yet, is written through: the link stays", function()
    local dir = h.tmpdir()
    local victim = plant(dir, dir .. "/link.json")
    assert(os.execute("ln -s sub/new.json " .. q(dir .. "/dangling.json") .. " && ln -s link.json "
      .. q(dir .. "/chain.json") .. " && mkdir " .. q(dir .. "/sub")))
    fixture(dir)
    for _, out in ipairs { "link.json", "dangling.json", "chain.json" } do
      local r = h.run("export base.json -o " .. out, { cwd = dir })
      assert.equal(0, r.code, r.stderr)
      assert.equal("link", kind(dir .. "/" .. out))
    end
    assert.equal(0, h.run("export base.json -o plain.json", { cwd = dir }).code)
    assert.equal(h.read(dir .. "/plain.json"), h.read(victim))
    os.remove(dir .. "/plain.json")
    assert.equal("file", kind(dir .. "/sub/new.json"))
    assert.equal("new.json", names(dir .. "/sub"))
    assert.equal("base.json chain.json dangling.json link.json sub victim.txt", names(dir))
  end)

  it("gets the mode of a new file under the umask, and leaves no temporary file", function()
    local dir = h.tmpdir()
    fixture(dir)
    for _, case in ipairs { { "022", "644" }, { "077", "600" } } do
      local r = h.run("export base.json -o m" .. case[1] .. ".json",
        { cwd = dir, prefix = "umask " .. case[1] .. " &&" })
      assert.equal(0, r.code, r.stderr)
      local p = io.popen("stat -c %a " .. q(dir .. "/m" .. case[1] .. ".json"))
      assert.equal(case[2], p:read("a"):gsub("%s+$", ""))
      p:close()
    end
    assert.equal("base.json m022.json m077.json", names(dir))
  end)

  it("is an io error naming it when its directory is not there, and nothing is left", function()
    local dir = h.tmpdir()
    fixture(dir)
    local r = h.run("export base.json -o no/ex.json", { cwd = dir })
    assert.equal(9, r.code)
    assert.truthy(r.stderr:find("cannot write 'no/ex.json': No such file or directory", 1, true),
      r.stderr)
    assert.equal("base.json", names(dir))
  end)
end)

describe("report --html", function()
  it("refuses a FIFO at DIR/index.html without opening it (no hang)", function()
    local dir = h.tmpdir()
    fixture(dir)
    assert(os.execute("mkdir " .. q(dir .. "/page") .. " && mkfifo "
      .. q(dir .. "/page/index.html")))
    local r = h.run("report --html page base.json", { cwd = dir, prefix = "timeout 20" })
    assert.equal(2, r.code, r.stderr)
    assert.truthy(r.stderr:find("its index.html was not made by wlrun report", 1, true), r.stderr)
    assert.equal("fifo", kind(dir .. "/page/index.html"))
  end)

  it("refuses a FIFO as DIR (no hang)", function()
    local dir = h.tmpdir()
    fixture(dir)
    assert(os.execute("mkfifo " .. q(dir .. "/page")))
    local r = h.run("report --html page base.json", { cwd = dir, prefix = "timeout 20" })
    assert.equal(9, r.code, r.stderr)
    assert.truthy(r.stderr:find("--html 'page' is a FIFO, not a directory", 1, true), r.stderr)
  end)

  it("refuses a link at DIR/index.html, leaving what it points to alone", function()
    local dir = h.tmpdir()
    fixture(dir)
    assert(os.execute("mkdir " .. q(dir .. "/page")))
    local victim = plant(dir, dir .. "/page/index.html")
    local r = h.run("report --html page base.json", { cwd = dir })
    assert.equal(2, r.code, r.stderr)
    assert.equal("VICTIM\n", h.read(victim))
  end)
end)

local real = h.trace_it

describe("trace -o", function()
  local function trace(dir, args, before)
    return h.run(("trace --warmup 0 %s -- sh -c %s"):format(args,
      q(before .. "; exec " .. q(PROGRAM) .. " steps")),
      { cwd = dir, env = "WLRUN_TRACE_LIB=" .. q(LIB or "") .. " TMPDIR=" .. q(dir) })
  end

  real(
    "is checked before the program runs: a directory that is not there is exit 9, the program "
    .. "never started", function()
    local dir = h.tmpdir()
    local r = trace(dir, "-o no/x.json", "touch ran")
    assert.equal(9, r.code, r.stderr)
    assert.truthy(
      r.stderr:find("trace: cannot write results to 'no/x.json': No such file or directory", 1,
      true), r.stderr)
    assert.is_nil(kind(dir .. "/ran"))
    assert.equal("", names(dir))
  end)

  real("that fails at the end still prints the report and keeps the raw trace, named", function()
    local dir = h.tmpdir()
    assert(os.execute("mkdir " .. q(dir .. "/out")))
    local r = trace(dir, "-o out/x.json -o y.csv", "rmdir out")
    assert.equal(9, r.code, r.stderr)
    assert.truthy(r.stdout:find("train_step", 1, true) or r.stdout:find("iter", 1, true), r.stdout)
    assert.truthy(r.stdout:find("median", 1, true), r.stdout)
    local kept = r.stderr:match("the report is above, the trace files are kept in (%S+)")
    assert.truthy(kept, r.stderr)
    assert.equal("directory", kind(kept))
    assert.truthy(names(kept):find("%.wltrace"), names(kept))
    -- the outputs that could be written are
    assert.truthy(h.read(dir .. "/y.csv"):find("median", 1, true))
  end)
end)

describe("devices, FIFOs and sockets", function()
  it("are never replaced by an output: exit 9, the node left as it was", function()
    local dir = h.tmpdir()
    local base = fixture(dir)
    local root = io.popen("id -u"):read("l") == "0"
    assert(os.execute("mkfifo " .. q(dir .. "/f.json")))
    local nodes = { { "f.json", "fifo", "a FIFO" } }
    if root then -- only root makes a device node
      assert(os.execute("mknod " .. q(dir .. "/d.json") .. " c 1 3"))
      nodes[#nodes + 1] = { "d.json", "character special file", "a device" }
    end
    for _, n in ipairs(nodes) do
      local r = h.run(("export %s -o %s"):format(q(base), n[1]),
        { cwd = dir, prefix = "timeout 20" })
      assert.equal(9, r.code, r.stderr)
      assert.truthy(
        r.stderr:find(("cannot write '%s': it is %s, which a file written whole"):format(n[1],
        n[3]), 1, true), r.stderr)
      local p = io.popen("stat -c %F " .. q(dir .. "/" .. n[1]))
      assert.equal(n[2], p:read("l"))
      p:close()
    end
  end)

  -- a link to a device, a FIFO or a directory, or one of /proc (/dev/stdout leads to
  -- /proc/self/fd/1, whatever standard output is): renaming over it would replace the link,
  -- writing through would replace the node
  it("are never replaced through a symbolic link, nor is the link: exit 9, naming it", function()
    local dir = h.tmpdir()
    local base = fixture(dir)
    assert(os.execute(("cd %s && mkfifo f && mkdir d && ln -s f fifo.json && ln -s fifo.json "
      .. "chain.json && ln -s d dir.json && ln -s /dev/null null.json && ln -s /dev/stdout "
      .. "stdout.json && ln -s /proc/self/fd/2 fd.json"):format(q(dir))))
    for _, n in ipairs {
      { "fifo.json", "a symbolic link to a FIFO, which a file written whole" },
      { "chain.json", "a symbolic link to a FIFO, which a file written whole" },
      { "dir.json", "a symbolic link to a directory" },
      { "null.json", "a symbolic link to a device, which a file written whole" },
      { "stdout.json", "a symbolic link to a process's open file (through /proc), which" },
      { "fd.json", "a symbolic link to a process's open file (through /proc), which" },
    } do
      for _, cmd in ipairs { "export %s -o %s", "merge %s -o %s" } do
        local r = h.run(cmd:format(q(base), n[1]), { cwd = dir, prefix = "timeout 20" })
        assert.equal(9, r.code, r.stderr)
        assert.truthy(r.stderr:find(("cannot write '%s': it is %s"):format(n[1], n[2]), 1, true),
          r.stderr)
      end
      local r = h.run_script(SCENARIO, "--compile-only --arch sm_90 -o " .. n[1], { cwd = dir,
        prefix = "timeout 20" })
      assert.equal(9, r.code, r.stderr)
      assert.truthy(r.stderr:find(("'%s': it is %s"):format(n[1], n[2]), 1, true), r.stderr)
      assert.equal("link", kind(dir .. "/" .. n[1]))
    end
    assert.equal("fifo", kind(dir .. "/f"))
    assert.equal("", names(dir .. "/d"))
    assert.equal("base.json chain.json d dir.json f fd.json fifo.json null.json script.lua "
      .. "stdout.json", names(dir))
  end)
end)

describe("directories wlrun makes", function()
  it("follow the umask, as mkdir(1) makes them (report --html DIR, its parents)", function()
    local dir = h.tmpdir()
    local base = fixture(dir)
    for _, x in ipairs { { umask = "022", mode = "755" }, { umask = "077", mode = "700" } } do
      local out = dir .. "/u" .. x.umask .. "/page"
      local r = h.run(("report %s --html %s -q"):format(q(base), q(out)),
        { env = "", prefix = "umask " .. x.umask .. ";" })
      assert.equal(0, r.code, r.stderr)
      for _, d in ipairs { out, dir .. "/u" .. x.umask } do
        local p = io.popen("stat -c %a " .. q(d))
        assert.equal(x.mode, p:read("l"), d)
        p:close()
      end
    end
  end)
end)

describe("one writer per output", function()
  -- a scenario that runs with no GPU (--compile-only) and holds its outputs for HOLD seconds, or
  -- until the file RELEASE exists (at most a minute: a test's checks while it holds them take
  -- what a loaded machine makes them take) (and, with MARK, writes there when it held them:
  -- CLOCK_MONOTONIC ns at its setup's start and end)
  local SCRIPT = [[
local wl = require "wlrun"
return wl.scenario { name = "lock", params = { n = { 1 } },
  setup = function()
    local t0 = wl.clock_ns()
    wl.sleep(tonumber(os.getenv("HOLD") or "0"))
    local release = os.getenv("RELEASE")
    while release and wl.clock_ns() - t0 < 60e9 do
      local f = io.open(release)
      if f then f:close() break end
      wl.sleep(0.02)
    end
    local mark = os.getenv("MARK")
    if mark then
      local f = assert(io.open(mark, "w"))
      f:write(("%d %d\n"):format(t0, wl.clock_ns()))
      f:close()
    end
  end,
  run = function() return { metrics = { x = 1 } } end }
]]
  local RUN = "--compile-only --arch sm_90 -o r.json"
  -- a file outside the run's directory whose making lets a holding run end
  local function release_file() return h.tmpdir() .. "/release" end

  it("refuses a second run aiming at an output that a live run writes, exit 9, naming both",
    function()
    local dir = h.tmpdir()
    local script = h.write(dir .. "/s.lua", SCRIPT)
    local bin = h.bin:sub(1, 1) == "/" and h.bin or (h.source_dir .. "/" .. h.bin)
    local release = release_file()
    assert(os.execute(("cd %s && (RELEASE=%s %s %s %s >a.out 2>&1; echo $? >a.code) &"):format(
      q(dir), q(release), q(bin), q(script), RUN)))
    for _ = 1, 1500 do -- until the first run holds its journal
      if io.open(dir .. "/r.json.journal") then break end
      os.execute("sleep 0.02")
    end
    local r = h.run(q(script) .. " " .. RUN, { cwd = dir })
    assert.equal(9, r.code, r.stderr)
    assert.equal(
      "wlrun: 'r.json' is being written by another run: its lock 'r.json.lock' is held by "
      .. "a live process; wait for that run to end, or give another -o\n",
      r.stderr)
    h.write(release, "")
    for _ = 1, 3000 do
      if io.open(dir .. "/a.code") then break end
      os.execute("sleep 0.02")
    end
    assert.equal("0", h.read(dir .. "/a.code"):match("%d+"), h.read(dir .. "/a.out"))
    assert.is_true(require("wlrun.results.load").load(dir .. "/r.json").complete)
    assert.equal("a.code a.out r.json s.lua", names(dir))
  end)

  local BIN = h.bin:sub(1, 1) == "/" and h.bin or (h.source_dir .. "/" .. h.bin)
  local HELD = "is being written by another run: its lock '%s' is held by a live process; wait "
    .. "for that run to end, or give another -o\n"

  -- starts a run of script in dir with the outputs args that holds them until the file it
  -- returns is made (its process id in the file pid), and waits until it holds them (its journal,
  -- made after its locks) and pid is written
  local function holder(dir, script, args, journal)
    local release = release_file()
    assert(os.execute(("cd %s && (RELEASE=%s %s %s --compile-only --arch sm_90 %s >a.out 2>&1 & "
      .. "echo $! >pid; wait $!; echo $? >a.code) &"):format(q(dir), q(release), q(BIN),
      q(script), args)))
    for _ = 1, 1500 do
      local pid = io.open(dir .. "/pid")
      local written = pid and (pid:read("a") or ""):match("%d+")
      if pid then pid:close() end
      if written and io.open(dir .. "/" .. journal) then return release end
      os.execute("sleep 0.02")
    end
    error("the first run did not start: " .. h.read(dir .. "/a.out"))
  end

  local function ended(dir) -- within a minute: a loaded machine (CI's two cores) is slow
    for _ = 1, 3000 do
      if io.open(dir .. "/a.code") then break end
      os.execute("sleep 0.02")
    end
    return h.read(dir .. "/a.code"):match("%d+")
  end

  it("refuses a run whose only output shared with a live run is a second -o of each", function()
    local dir = h.tmpdir()
    local script = h.write(dir .. "/s.lua", SCRIPT)
    h.write(dir .. "/b.json", "old b\n")
    local release = holder(dir, script, "-o a.json -o r.json", "a.json.journal")
    local r = h.run(q(script) .. " --compile-only --arch sm_90 -o b.json -o r.json", { cwd = dir })
    assert.equal(9, r.code, r.stderr)
    assert.equal("wlrun: 'r.json' " .. HELD:format("r.json.lock"), r.stderr)
    assert.equal("old b\n", h.read(dir .. "/b.json")) -- every output as it was
    assert.equal("a.json.journal a.json.lock a.out b.json pid r.json.lock s.lua", names(dir))
    h.write(release, "")
    assert.equal("0", ended(dir), h.read(dir .. "/a.out"))
    assert.is_true(require("wlrun.results.load").load(dir .. "/r.json").complete)
    assert.equal("old b\n", h.read(dir .. "/b.json"))
    assert.equal("a.code a.json a.out b.json pid r.json s.lua", names(dir))
  end)

  it("refuses a run aiming at a live run's output in another position, spelling or link",
    function()
    local dir = h.tmpdir()
    local script = h.write(dir .. "/s.lua", SCRIPT)
    assert(os.execute("mkdir " .. q(dir .. "/sub") .. " && ln -s r.json " .. q(dir .. "/l.json")))
    local release = holder(dir, script, "-o a.csv -o r.json", "a.csv.journal")
    for _, case in ipairs {
      { "-o r.json", "r.json", "r.json.lock" },
      { "-o x.md -o ./r.json -o y.csv", "./r.json", "./r.json.lock" },
      { "-o sub/../r.json", "sub/../r.json", "sub/../r.json.lock" },
      { "-o l.json -o z.txt", "l.json", "r.json.lock" }, -- at the end of the link
      { "-o a.csv", "a.csv", "a.csv.lock" },
    } do
      local r = h.run(q(script) .. " --compile-only --arch sm_90 " .. case[1], { cwd = dir })
      assert.equal(9, r.code, r.stderr)
      assert.equal(("wlrun: '%s' "):format(case[2]) .. HELD:format(case[3]), r.stderr)
    end
    assert.equal("a.csv.journal a.csv.lock a.out l.json pid r.json.lock s.lua sub", names(dir))
    h.write(release, "")
    assert.equal("0", ended(dir), h.read(dir .. "/a.out"))
    assert.equal("a.code a.csv a.out l.json pid r.json s.lua sub", names(dir))
  end)

  it("is not refused by the lock of a run killed outright (SIGKILL): it is taken over", function()
    local dir = h.tmpdir()
    local script = h.write(dir .. "/s.lua", SCRIPT)
    holder(dir, script, "-o a.json -o r.json", "a.json.journal") -- (never released: killed)
    assert(os.execute("kill -KILL $(cat " .. q(dir .. "/pid") .. ")"))
    assert.equal("137", ended(dir))
    -- what it leaves: its journal (what it measured) and its locks, which nothing holds
    assert.equal("a.code a.json.journal a.json.lock a.out pid r.json.lock s.lua", names(dir))
    local r = h.run(q(script) .. " --compile-only --arch sm_90 -o b.json -o r.json", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    assert.is_true(require("wlrun.results.load").load(dir .. "/r.json").complete)
    -- the killed run's journal still refuses its first output, and goes on with --resume
    r = h.run(q(script) .. " --compile-only --arch sm_90 -o a.json", { cwd = dir })
    assert.equal(9, r.code, r.stderr)
    assert.matches("'a%.json%.journal' is there: the journal of a run that did not finish",
      r.stderr)
    r = h.run(q(script) .. " --compile-only --arch sm_90 --resume a.json.journal -o a.json",
      { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    assert.equal("a.code a.json a.out b.json pid r.json s.lua", names(dir))
  end)

  it("leaves a FILE.lock that is not wlrun's alone, refusing the run: exit 9", function()
    local dir = h.tmpdir()
    local script = h.write(dir .. "/s.lua", SCRIPT)
    h.write(dir .. "/r.json.lock", "mine\n")
    local r = h.run(q(script) .. " " .. RUN, { cwd = dir })
    assert.equal(9, r.code, r.stderr)
    assert.equal("wlrun: cannot lock 'r.json': 'r.json.lock' is there and is no lock of wlrun's; "
      .. "remove it, or give another -o\n", r.stderr)
    assert.equal("mine\n", h.read(dir .. "/r.json.lock"))
    assert.equal("r.json.lock s.lua", names(dir))
  end)

  it("refuses a tool (export, merge, compare) aiming at a live run's output: nothing written",
    function()
    local dir = h.tmpdir()
    local script = h.write(dir .. "/s.lua", SCRIPT)
    local r = h.run(q(script) .. " --compile-only --arch sm_90 -o in.json", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    h.write(dir .. "/b.csv", "old b\n")
    local release = holder(dir, script, "-o a.json -o r.csv -o r.csv.md", "a.json.journal")
    for _, case in ipairs {
      { "export in.json --format csv -o r.csv", "export" },
      { "merge in.json -o b.csv -o r.csv", "merge" },
      { "compare in.json in.json -o b.md -o ./r.csv.md", "compare", "./r.csv.md" },
    } do
      r = h.run(case[1], { cwd = dir })
      assert.equal(9, r.code, case[1] .. ": " .. r.stderr)
      assert.equal(("wlrun: %s: '%s' "):format(case[2], case[3] or "r.csv")
        .. HELD:format((case[3] or "r.csv") .. ".lock"), r.stderr, case[1])
    end
    assert.equal("old b\n", h.read(dir .. "/b.csv")) -- nothing written, the first -o neither
    h.write(release, "")
    assert.equal("0", ended(dir), h.read(dir .. "/a.out"))
    r = h.run("merge in.json -o b.csv -o r.csv", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    assert.equal("a.code a.json a.out b.csv in.json pid r.csv r.csv.md s.lua", names(dir))
  end)

  -- a file system without hard links (vfat, some FUSE and scratch file systems): the journal
  -- takes its name by an exclusive create and a rename instead of link(2), and still one at a time
  local NO_LINKS = os.getenv("WLRUN_NO_HARDLINKS_LIB")
  -- ASan's runtime must be preloaded first
  local sanitized = os.getenv("WLRUN_TEST_SANITIZED") == "1"
  local no_links_it = NO_LINKS and not sanitized and it or function(name)
    pending(name .. " -- skipped: " .. (sanitized and "a sanitized build (LD_PRELOAD)"
      or "WLRUN_NO_HARDLINKS_LIB not set (ctest sets it)"))
  end
  no_links_it("writes and refuses as well where link(2) is refused (no hard links)", function()
    local dir = h.tmpdir()
    local script = h.write(dir .. "/s.lua", SCRIPT)
    local env = "LD_PRELOAD=" .. q(NO_LINKS)
    local r = h.run(q(script) .. " " .. RUN, { cwd = dir, env = env })
    assert.equal(0, r.code, r.stderr)
    assert.is_true(require("wlrun.results.load").load(dir .. "/r.json").complete)
    assert.equal("r.json s.lua", names(dir))
    local bin = h.bin:sub(1, 1) == "/" and h.bin or (h.source_dir .. "/" .. h.bin)
    local release = release_file()
    assert(os.execute(("cd %s && (%s RELEASE=%s %s %s %s >a.out 2>&1; echo $? >a.code) &"):format(
      q(dir), env, q(release), q(bin), q(script), RUN)))
    for _ = 1, 1500 do -- until the first run holds its journal
      if io.open(dir .. "/r.json.journal") then break end
      os.execute("sleep 0.02")
    end
    r = h.run(q(script) .. " " .. RUN, { cwd = dir, env = env })
    assert.equal(9, r.code, r.stderr)
    assert.matches("is being written by another run", r.stderr)
    h.write(release, "")
    for _ = 1, 3000 do
      if io.open(dir .. "/a.code") then break end
      os.execute("sleep 0.02")
    end
    assert.equal("0", h.read(dir .. "/a.code"):match("%d+"), h.read(dir .. "/a.out"))
    assert.equal("a.code a.out r.json s.lua", names(dir))
  end)

  it(
    "never lets two of 100 runs started at the same moment write the output at once; the others "
    .. "are refused", function()
    local dir = h.tmpdir()
    local script = h.write(dir .. "/s.lua", SCRIPT)
    local bin = h.bin:sub(1, 1) == "/" and h.bin or (h.source_dir .. "/" .. h.bin)
    -- each waits for the file `go`, made once all are started; a run that succeeds marks when it
    -- held the output. However slowly the runs start (a sanitizer build on a loaded machine may
    -- let a late one begin after the first has finished), no two may hold it at once.
    local start = (
      "cd %s && for i in $(seq 100); do (while [ ! -e go ]; do sleep 0.01; done; HOLD=2 "
      .. "MARK=mark.$i %s %s %s >out.$i 2>&1; echo $? >code.$i) & done; sleep 1; : "
      .. ">go; wait"):format(
      q(dir), q(bin), q(script), RUN)
    assert(os.execute(start))
    local held, wrote = {}, 0
    for i = 1, 100 do
      local c = h.read(("%s/code.%d"):format(dir, i)):match("%d+")
      local out = h.read(("%s/out.%d"):format(dir, i))
      if c == "0" then
        local t0, t1 = h.read(("%s/mark.%d"):format(dir, i)):match("(%d+) (%d+)")
        held[#held + 1] = { tonumber(t0), tonumber(t1) }
        wrote = wrote + 1
      else
        assert.equal("9", c, out)
        assert.truthy(out:find("'r.json' is being written by another run", 1, true), out)
      end
    end
    assert.is_true(wrote >= 1 and wrote < 100, wrote)
    table.sort(held, function(a, b) return a[1] < b[1] end)
    for k = 2, #held do
      assert.is_true(held[k][1] >= held[k - 1][2],
        ("runs held the output at once: %d..%d and %d..%d"):format(
        held[k - 1][1], held[k - 1][2], held[k][1], held[k][2]))
    end
    assert.is_true(require("wlrun.results.load").load(dir .. "/r.json").complete)
    assert.is_nil(io.open(dir .. "/r.json.journal"))
    -- no run left a file of its own behind
    assert.is_nil(names(dir):find("tmp", 1, true), names(dir))
  end)
end)
