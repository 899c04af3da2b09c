-- End-to-end: `wlrun history` against hostile or mistaken input (docs/history.md): a selection
-- that names nothing known never lets a --fail-on gate pass; a results file's paths never make
-- wlrun run git in a repository they name; a database made to hang (a view for a table), a FIFO,
-- a device or SQLite's special names; escape codes in the data; a damaged database (never added
-- to) and one with bytes changed at random (wlrun's own errors only); and the messages of a few
-- mistakes. SQLite and git are the real ones.
local h = require "helper"
local F = require "history_fixtures"

local q = h.quote

local function history(args, dir, opts)
  opts = opts or {}
  opts.cwd = dir
  return h.run("history " .. args, opts)
end

-- a database of ten commits: M=1024 is 20 % slower from the sixth on, M=4096 is flat
local function regressed(dir)
  for i = 1, 10 do
    h.write(("%s/r%02d.json"):format(dir, i), F.document { started = F.time(i), configs = {
      { params = { M = 1024 }, samples = F.samples(i >= 6 and 1.2e-3 or 1e-3, 30, 0.01, i) },
      { params = { M = 4096 }, samples = F.samples(4e-3, 30, 0.01, 100 + i) },
    } })
    local r = history(("add r%02d.json --db h.db --commit c%02d"):format(i, i), dir)
    assert.equal(0, r.code, r.stderr)
  end
  return dir
end

local function one_run(dir, o)
  o = o or {}
  o.started = o.started or F.time(1)
  o.configs = o.configs or { { params = { M = 1024 }, samples = F.samples(1e-3, 20, 0.01, 1) } }
  return h.write(dir .. "/" .. (o.name or "r.json"), F.document(o))
end

-- the prefix of a command run as a user who cannot write what root made (setpriv when root),
-- or nil
local function unprivileged()
  local root = io.popen("id -u"):read("l") == "0"
  if not root then return "" end
  if not require("wlrun.process").find_program("setpriv") then return nil end
  return "setpriv --reuid=nobody --regid=nogroup --clear-groups"
end

describe("wlrun history, a selection", function()
  local dir
  setup(function() dir = regressed(h.tmpdir()) end)

  it("fails the gate on the regression it selects (exit 7)", function()
    assert.equal(7, history("trend --db h.db --fail-on 1 -p M=1024", dir).code)
  end)

  it("refuses a -p name that no configuration has, exit 2, listing the names there are", function()
    for _, cmd in ipairs { "show", "trend --fail-on 1", "blame --fail-on 1" } do
      local r = history(cmd .. " --db h.db -p m=1024", dir)
      assert.equal(2, r.code, cmd .. ": " .. r.stdout .. r.stderr)
      assert.equal("", r.stdout)
      assert.equal(
        "wlrun: history: -p 'm=1024': no configuration has a parameter 'm' (the parameters: M)\n",
        r.stderr)
    end
    local r = history("trend --db h.db --scenario spin -p M=1024 -p x=1", dir)
    assert.equal(2, r.code)
    assert.matches("no configuration of scenario 'spin' has a parameter 'x' %(the parameters: M%)",
      r.stderr)
  end)

  it(
    "refuses a --scenario or --device that the database does not hold, exit 2, listing "
    .. "those it does", function()
    local r = history("trend --db h.db --fail-on 1 --scenario gemm-sweep", dir)
    assert.equal(2, r.code, r.stdout)
    assert.equal(
      "wlrun: history: --scenario 'gemm-sweep': no run in 'h.db' has this scenario (its "
      .. "scenarios: 'spin')\n", r.stderr)
    local d = history("blame --db h.db --fail-on 1 --device H200", dir)
    assert.equal(2, d.code, d.stdout)
    assert.equal(
      "wlrun: history: --device 'H200': no run in 'h.db' has this device (its devices: 'NVIDIA "
      .. "H200')\n", d.stderr)
    assert.equal(2, history("show --db h.db --device H200", dir).code)
  end)

  it("never passes a gate that selected nothing: exit 2; without a gate, says that nothing matches",
    function()
    for _, cmd in ipairs { "trend", "blame" } do
      local r = history(cmd .. " --db h.db --fail-on 1 -p M=1024 -p M=4096", dir)
      assert.equal(2, r.code, r.stdout)
      assert.not_matches("passed", r.stdout)
      assert.equal(
        "wlrun: history: --fail-on: no configuration in 'h.db' matches the selection: the gate "
        .. "has nothing to check\n", r.stderr)
    end
    local plain = history("trend --db h.db -p M=1024 -p M=4096", dir)
    assert.equal(0, plain.code, plain.stderr)
    assert.equal("No configuration in 'h.db' matches.\n", plain.stdout)
  end)
end)

describe("wlrun history add, the commit", function()
  local git = require("wlrun.process").find_program("git")

  -- a repository of one commit, its own (the message is its path)
  local function repo(path)
    assert(
      os.execute(
      ("mkdir -p %s && cd %s && git init -q . && git config user.email t@example.com && git "
      .. "config user.name t && echo a > a.txt && git add a.txt && git commit -q -m %s"):format(
      q(path), q(path), q(path))))
    return path
  end

  it("never runs git in a repository that a results file names (its cwd, its scenario's file)",
    function()
    if not git then return pending("git is not installed") end
    local d = h.tmpdir()
    local evil = repo(d .. "/evil")
    -- a clean filter runs when git status looks at a file whose time changed
    h.write(evil .. "/.gitattributes", "*.txt filter=evil\n")
    assert(
      os.execute(
      ("cd %s && git add .gitattributes && git commit -q -m two && git config filter.evil.clean "
      .. "%s && sleep 1 && touch a.txt"):format(
      q(evil), q("sh -c 'touch " .. d .. "/PWNED; cat'"))))
    local out = h.tmpdir() -- not in a git repository
    one_run(out, { cwd = evil, file = evil .. "/a.lua" })
    local r = history("add r.json --db h.db", out)
    assert.equal(0, r.code, r.stderr)
    assert.is_nil(io.open(d .. "/PWNED"), "git ran the repository's filter")
    assert.matches("commit %-\n", r.stdout)
    assert.matches(
      "no commit is known for 'r%.json' %(it records none, and the current directory is not in "
      .. "a git repository%)", r.stderr)
  end)

  it("takes it from the current directory's repository, not from the one the document names",
    function()
    if not git then return pending("git is not installed") end
    local d = h.tmpdir()
    local theirs, mine = repo(d .. "/theirs"), repo(d .. "/mine")
    one_run(mine, { cwd = theirs, file = theirs .. "/a.lua" })
    local r = history("add r.json --db h.db", mine)
    assert.equal(0, r.code, r.stderr)
    local sha = io.popen(("git -C %s rev-parse HEAD"):format(q(mine))):read("l")
    assert.matches(("commit %s%%+? %%(git%%)"):format(sha:sub(1, 10)), r.stdout)
  end)
end)

describe("wlrun history, a hostile database", function()
  -- a directory with a history of one run, then changed by hand: the Lua code SPOIL run on it
  local function spoilt(spoil)
    local d = h.tmpdir()
    one_run(d)
    assert.equal(0, history("add r.json --db h.db --commit a", d).code)
    h.write(d .. "/spoil.lua", 'local db = require("wlrun.sqlite").open("h.db")\n' .. spoil)
    assert.equal(0, h.run("spoil.lua", { cwd = d }).code)
    return d
  end

  it("refuses a history whose runs is a view (it could make every query endless), exit 9",
    function()
    local d = spoilt [[
db:exec("ALTER TABLE runs RENAME TO runs_real")
db:exec("CREATE VIEW runs AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT r.* FROM runs_real r, c")
]]
    for _, cmd in ipairs { "show --db h.db", "trend --db h.db",
      "add r.json --db h.db --commit b" } do
      local r = history(cmd, d, { prefix = "timeout -s KILL 20" })
      assert.equal(9, r.code, cmd)
      assert.matches(
        "history: database 'h%.db': not a wlrun history: its 'runs' is a view, not a table\n",
        r.stderr)
    end
  end)

  it("says a database made by hand is corrupt: a run with no scenario, a version below 0 (exit 9)",
    function()
    local d = spoilt [[
db:exec("PRAGMA foreign_keys = OFF")
db:exec("CREATE TABLE runs2 AS SELECT * FROM runs")
db:exec("DROP TABLE runs")
db:exec("ALTER TABLE runs2 RENAME TO runs") -- a table made without NOT NULL
db:exec("UPDATE runs SET scenario = NULL")
]]
    for _, cmd in ipairs { "trend --db h.db", "blame --db h.db" } do
      local r = history(cmd, d)
      assert.equal(9, r.code, cmd .. ": " .. r.stderr)
      assert.matches("run 1: no scenario or device\n", r.stderr)
    end
    local e = spoilt 'db:exec("PRAGMA user_version = -1")'
    for _, cmd in ipairs { "show --db h.db", "add r.json --db h.db --commit b" } do
      local r = history(cmd, e)
      assert.equal(9, r.code, cmd .. ": " .. r.stderr)
      assert.matches("not a wlrun history: its schema version %(user_version%) is %-1\n", r.stderr)
    end
  end)

  it("never passes a gate on samples or summaries changed by hand: exit 9, naming the run",
    function()
    local base = regressed(h.tmpdir())
    for _, case in ipairs {
      { "samples = '[]'", "0 samples where the row counts 30" },
      { "samples = '[-1, -2, -3]'", "samples that are not a JSON array of times of 0 to a year" },
      { "samples = '[1e308, 1e308, 1e308]'", "samples that are not a JSON array of times" },
      { "median = -1", "a median that is not a time of 0 to a year: %-1" },
      { "n = 0", "a sample count that is not a positive integer: 0" },
    } do
      local d = h.tmpdir()
      os.execute(("cp %s %s"):format(q(base .. "/h.db"), q(d .. "/h.db")))
      h.write(d .. "/spoil.lua",
        ('require("wlrun.sqlite").open("h.db"):exec("UPDATE results SET %s")'):format(case[1]))
      assert.equal(0, h.run("spoil.lua", { cwd = d }).code)
      local r = history("trend --db h.db --fail-on 5", d)
      assert.equal(9, r.code, case[1] .. ": " .. r.stdout .. r.stderr)
      assert.matches("run %d+ %(%{[^)]*%}%): " .. case[2], r.stderr)
    end
  end)

  it("never calls a database that a first add is making another program's (show racing add)",
    function()
    local dir = h.tmpdir()
    one_run(dir)
    local bin = h.bin:sub(1, 1) == "/" and h.bin or (h.source_dir .. "/" .. h.bin)
    local script = (
      "cd %s && for i in $(seq 150); do rm -f h.db h.db-wal h.db-shm; (%s history add r.json "
      .. "--db h.db --commit a1 -q >/dev/null 2>&1 &); %s history show --db h.db 2>&1 | head "
      .. "-1; done"):format(
      q(dir), q(bin), q(bin))
    local p = io.popen(script)
    local out = p:read("a")
    p:close()
    assert.is_nil(out:find("not a wlrun history", 1, true), out)
  end)

  it("refuses to add to a damaged database (SQLite's quick_check), exit 9", function()
    local dir = regressed(h.tmpdir())
    local bytes = h.read(dir .. "/h.db")
    local page = 4096 -- the first page of the runs' table holds its rows: overwrite its middle
    h.write(dir .. "/bad.db", bytes:sub(1, 2 * page + 100) .. ("\255"):rep(3000)
      .. bytes:sub(2 * page + 3101))
    local r = history("add r01.json --db bad.db --commit ff01", dir)
    assert.equal(9, r.code, r.stdout .. r.stderr)
    assert.matches("history: the database 'bad.db' is damaged %(SQLite's quick_check: ", r.stderr)
  end)

  it("gives wlrun's own errors only on a database with bytes changed at random (show and add)",
    function()
    local dir = regressed(h.tmpdir())
    local bytes = h.read(dir .. "/h.db")
    local n = math.max(20, (tonumber(os.getenv("WLRUN_FUZZ_MUTATIONS") or "") or 1500) // 25)
    local rng = h.lcg(37)
    local bad = {}
    for i = 1, n do
      local t = bytes
      for _ = 1, rng(8) do
        local a = rng(#t)
        t = t:sub(1, a - 1) .. string.char(rng(256) - 1) .. t:sub(a + 1)
      end
      if i % 7 == 0 then t = t:sub(1, rng(#t)) end
      h.write(dir .. "/m.db", t)
      os.remove(dir .. "/m.db-wal")
      os.remove(dir .. "/m.db-shm")
      for _, cmd in ipairs { "show --db m.db", "blame --db m.db",
        "add r01.json --db m.db --commit ee01" } do
        local r = history(cmd, dir)
        local out = r.stdout .. r.stderr
        if r.code == 1 or out:find("attempt to", 1, true) or out:find("traceback", 1, true) then
          bad[#bad + 1] = ("mutation %d, %s: exit %d: %s"):format(i, cmd, r.code, out:sub(1, 300))
        end
      end
      if #bad >= 5 then break end
    end
    assert.equal(0, #bad, table.concat(bad, "\n"))
  end)

  it("stops a query that runs for ever on Ctrl-C (exit 130)", function()
    local d = h.tmpdir()
    h.write(d .. "/q.lua", [[
local db = require("wlrun.sqlite").open("q.db", { create = true })
io.open("querying", "w"):close()
db:rows("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS n FROM c")
]])
    -- one Ctrl-C once the query runs; a second one, 10 s later, would exit at once
    local ctrl_c
      =
      [[sh -c '"$@" & w=$!; i=0; while [ $i -lt 600 ] && [ ! -e querying ]; do sleep 0.05; ]]
      .. [[i=$((i+1)); done; ]]
      .. [[sleep 0.2; kill -INT $w; i=0; while [ $i -lt 100 ] && kill -0 $w 2>/dev/null; do ]]
        .. [[sleep 0.1; i=$((i+1)); done; ]]
      .. [[kill -INT $w 2>/dev/null; wait $w' sh]]
    local r = h.run("q.lua", { cwd = d, prefix = ctrl_c })
    assert.equal(130, r.code, r.stderr)
    assert.matches("^wlrun: interrupted %(Ctrl%-C%)", r.stderr)
    assert.not_matches("again", r.stderr)
  end)

  it("refuses a FIFO, a device and a directory as --db before opening it, exit 9", function()
    local d = h.tmpdir()
    one_run(d)
    assert(os.execute(("cd %s && mkfifo fifo && ln -s fifo link && mkdir dir"):format(q(d))))
    for db, msg in pairs {
      fifo = "the database 'fifo' is a FIFO, not a file",
      ["/dev/null"] = "the database '/dev/null' is a device or a socket, not a file",
      dir = "the database 'dir' is a directory, not a file",
    } do
      for _, cmd in ipairs { "show", "add r.json --commit a" } do
        local r = history(("%s --db %s"):format(cmd, db), d, { prefix = "timeout -s KILL 20" })
        assert.equal(9, r.code, db .. " " .. cmd)
        assert.equal("wlrun: history: " .. msg .. "\n", r.stderr)
      end
    end
    local r = history("show --db link", d, { prefix = "timeout -s KILL 20" })
    assert.equal(9, r.code)
    assert.equal("wlrun: history: database 'link': cannot open: a FIFO, not a file\n", r.stderr)
  end)
end)

-- a user who cannot write what root made (the prefix of setpriv when root; "" otherwise), a
-- directory holding h.db of one run and an empty one to make read-only; nil without setpriv
local function read_only()
  local prefix = unprivileged()
  if not prefix then return nil end
  local d = h.tmpdir()
  one_run(d)
  assert.equal(0, history("add r.json --db h.db --commit a", d).code)
  return prefix, d, h.tmpdir()
end

describe("wlrun history --db", function()
  it("takes SQLite's special names as the names of files", function()
    local d = h.tmpdir()
    one_run(d)
    for _, name in ipairs { ":memory:", "file:h.db?mode=memory&cache=shared", "file::memory:" } do
      local r = history(("add r.json --db %s --commit a"):format(q(name)), d)
      assert.equal(0, r.code, r.stderr)
      assert.truthy(h.read(d .. "/" .. name):find("^SQLite format 3"), name)
      local shown = history(("show --db %s"):format(q(name)), d)
      assert.equal(0, shown.code, shown.stderr)
      assert.matches("1 run\n", shown.stdout)
    end
  end)

  it("refuses - and an empty name, exit 2", function()
    local d = h.tmpdir()
    one_run(d)
    for _, cmd in ipairs { "add r.json --commit a", "show" } do
      local r = history(cmd .. " --db -", d)
      assert.equal(2, r.code)
      assert.equal(
        "wlrun: history: the database cannot be standard input or output ('-'): give a file "
        .. "(./- for a file named '-')\n", r.stderr)
      local e = history(cmd .. " --db ''", d)
      assert.equal(2, e.code)
      assert.equal(
        "wlrun: history: the database's name is empty (--db FILE, or [history] db in wlrun.ini)\n",
        e.stderr)
    end
    assert.is_nil(io.open(d .. "/-"))
    assert.equal(0, history("add r.json --db ./- --commit a", d).code)
  end)

  it("says why a database in a directory that cannot be written cannot be added to, exit 9",
    function()
    local prefix, d, ro = read_only()
    if not prefix then
      return pending("running as root without setpriv: a directory cannot be read-only") end
    one_run(ro, { started = F.time(2) })
    os.execute(("cp %s %s && chmod 666 %s/h.db && chmod 755 %s"):format(q(d .. "/h.db"), q(ro),
      q(ro), q(ro)))
    local r = history("add r.json --db h.db --commit b", ro, { prefix = prefix })
    assert.equal(9, r.code, r.stderr)
    assert.equal(
      "wlrun: history: cannot write the database 'h.db': SQLite keeps its log in 'h.db-wal' and "
      .. "'h.db-shm' beside it, and the directory '.' (or those files) cannot be written\n",
      r.stderr)
  end)

  it("says why a database whose log cannot be read in a read-only directory cannot be read, exit 9",
    function()
    local prefix, d, ro = read_only()
    if not prefix then
      return pending("running as root without setpriv: a directory cannot be read-only") end
    -- a writer that never folds its log into the file leaves h.db-wal, as a crash would
    h.write(d .. "/keep.lua", ([[
local db = require("wlrun.sqlite").open("h.db")
db:exec("PRAGMA wal_autocheckpoint = 0")
db:exec("UPDATE runs SET file = 'changed'")
assert(os.execute("cp h.db h.db-wal %s/"))
]]):format(q(ro)))
    assert.equal(0, h.run("keep.lua", { cwd = d }).code)
    os.execute(("chmod 644 %s/h.db %s/h.db-wal && chmod 755 %s"):format(q(ro), q(ro), q(ro)))
    local r = history("show --db h.db", ro, { prefix = prefix })
    assert.equal(9, r.code, r.stderr)
    assert.equal(
      "wlrun: history: cannot read the database 'h.db': its log 'h.db-wal' holds changes not "
      .. "yet in it, and SQLite cannot make 'h.db-shm' to read them in the directory '.': read "
      .. "it where a directory can be written (copy 'h.db' and 'h.db-wal' there together)\n",
      r.stderr)
  end)
end)

describe("wlrun history, messages", function()
  it("says that a --commit is too long", function()
    local d = h.tmpdir()
    one_run(d)
    local r = history("add r.json --db h.db --commit " .. ("a"):rep(101), d)
    assert.equal(2, r.code)
    assert.matches("^wlrun: history: %-%-commit: at most 100 characters, got 101 %('a+%.%.%.'%)\n$",
      r.stderr)
  end)

  it("says that a version in quotes is not a number", function()
    local d = h.tmpdir()
    h.write(d .. "/r.json", h.read(one_run(d)):gsub('"version": *1,', '"version": "1",', 1))
    local r = history("add r.json --db h.db", d)
    assert.equal(2, r.code)
    assert.equal(
      "wlrun: history: 'r.json': wlrun-results has a version that is not a number: \"1\" (this "
      .. "wlrun reads version 1)\n", r.stderr)
  end)
end)

describe("wlrun history, escape codes in the data", function()
  it("prints no control character of a results file or the database", function()
    local d = h.tmpdir()
    local evil = "\27]0;PWNED\7\27[31mX\r\nGate --fail-on 1%: passed"
    for i = 1, 12 do
      one_run(d, { name = ("r%d.json"):format(i), started = F.time(i), scenario = "s" .. evil,
        device = "d" .. evil,
        configs = { { params = { ["p" .. evil] = "v" .. evil },
          samples = F.samples(i >= 7 and 2e-3 or 1e-3, 20, 0.01, i) } } })
      local r = history(("add r%d.json --db h.db --commit c%d"):format(i, i), d)
      assert.equal(0, r.code, r.stderr)
      assert.falsy(r.stdout:find("[\0-\9\11-\31\127]"), r.stdout)
      assert.matches("\\x1b%]0;PWNED\\x07\\x1b%[31mX\\x0d\\x0aGate", r.stdout)
    end
    for _, cmd in ipairs { "show", "trend", "blame", "trend --fail-on 10", "blame --fail-on 10" } do
      local r = history(cmd .. " --db h.db", d)
      assert.truthy(r.code == 0 or r.code == 7, cmd .. ": " .. r.stderr)
      assert.falsy((r.stdout .. r.stderr):find("[\0-\9\11-\31\127]"),
        cmd .. ": " .. r.stdout .. r.stderr)
      assert.matches("\\x1b", r.stdout, cmd)
    end
    local gate = history("trend --fail-on 10 --db h.db", d)
    assert.equal(7, gate.code)
    assert.matches("\\x1b", gate.stderr)
    -- the JSON keeps the text as it is (JSON escapes it)
    local j = history("show --db h.db -o -", d)
    assert.equal("s" .. evil, require("wlrun.json").decode(j.stdout).runs[1].scenario)
  end)
end)
