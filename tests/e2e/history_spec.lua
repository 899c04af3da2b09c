-- End-to-end: `wlrun history` (docs/history.md) on results made up by tests/history_fixtures.lua:
-- add, show, trend, blame and --fail-on over twenty commits with a step at the twelfth; the
-- commit from git and the database's default place; parallel writers; and what is refused —
-- a corrupt database, another program's, a hostile results file, a directory that does not
-- exist, a read-only database — each with its exit code and the file named.
local h = require "helper"
local F = require "history_fixtures"
local json = require "wlrun.json"
local sqlite = require "wlrun.sqlite"

local q = h.quote

-- twenty runs, one a commit c01..c20, an hour apart: n=1024 steps up 10 % at c12, n=4096 is flat
local function fixtures(dir)
  for i = 1, 20 do
    h.write(("%s/r%02d.json"):format(dir, i), F.document { started = F.time(i), configs = {
      { params = { n = 1024 }, samples = F.samples(i >= 12 and 1.1e-3 or 1e-3, 40, 0.01, i) },
      { params = { n = 4096 }, samples = F.samples(4e-3, 40, 0.01, 100 + i) },
      { params = { n = 8192 }, status = "failed" },
    } })
  end
  return dir
end

local function history(args, dir, opts)
  opts = opts or {}
  opts.cwd = dir
  return h.run("history " .. args, opts)
end

local function add_all(dir, db)
  for i = 1, 20 do
    local r = history(("add r%02d.json --db %s --commit c%02d"):format(i, db, i), dir)
    assert.equal(0, r.code, r.stderr)
  end
end

local function count(path, sql)
  local db <close> = sqlite.open(path, { readonly = true })
  local row = db:rows(sql)[1]
  local _, v = next(row)
  return v
end

describe("wlrun history", function()
  local dir
  setup(function()
    dir = fixtures(h.tmpdir())
    add_all(dir, "h.db")
  end)

  it("adds a run, and the same run again changes nothing", function()
    local d = fixtures(h.tmpdir())
    local r = history("add r01.json r02.json --db h.db --commit abc1234", d)
    assert.equal(0, r.code, r.stderr)
    assert.matches(
      "^added 'r01%.json' to 'h%.db' as run 1: spin, 2 configurations, commit abc1234 "
      .. "%(option%); 1 configuration not measured, left out\n", r.stdout)
    assert.matches("\nadded 'r02%.json' to 'h%.db' as run 2:", r.stdout)
    local again = history("add r01.json --db h.db --commit other", d)
    assert.equal(0, again.code, again.stderr)
    assert.matches(
      "^'r01%.json' is already in 'h%.db' as run 1 %(added [%dT:Z%-]+, commit abc1234%): left "
      .. "as it is\n$", again.stdout)
    assert.equal(2, count(d .. "/h.db", "SELECT count(*) AS n FROM runs"))
    assert.equal(4, count(d .. "/h.db", "SELECT count(*) AS n FROM results"))
    assert.equal("", history("add r03.json --db h.db --commit x -q", d).stdout)
  end)

  it("shows the runs stored", function()
    local r = history("show --db h.db", dir)
    assert.equal(0, r.code, r.stderr)
    assert.matches(
      "^History in 'h%.db': 20 runs\n\nrun  time                  scenario  device       commit "
      .. " configs  file\n", r.stdout)
    assert.matches(
      "\n  1  2026%-01%-01T00:00:00Z  spin      NVIDIA H200  c01           2  r01%.json\n",
      r.stdout)
    assert.matches(
      "\n 20  2026%-01%-01T19:00:00Z  spin      NVIDIA H200  c20           2  r20%.json\n$",
      r.stdout)
    local one = history("show --db h.db -p n=1024 --scenario spin", dir)
    assert.matches("c01           1  r01%.json", one.stdout)
    assert.matches("^History in 'h%.db': 0 runs\n$", history("show --db h.db -p n=1", dir).stdout)
    local other = history("show --db h.db --device other", dir) -- a name the database does not hold
    assert.equal(2, other.code)
    assert.matches(
      "%-%-device 'other': no run in 'h%.db' has this device %(its devices: 'NVIDIA H200'%)",
      other.stderr)
  end)

  it("prints each configuration's median by commit, against the first and the previous", function()
    local r = history("trend --db h.db -p n=1024", dir)
    assert.equal(0, r.code, r.stderr)
    assert.matches(
      "^spin · NVIDIA H200 · n=1024 %(20 commits%)\ncommit  time                  runs    "
      .. "median  vs first  vs previous\n", r.stdout)
    assert.matches(
      "\nc01     2026%-01%-01T00:00:00Z     1  [%d. ]+[mu]s         %-            %-\n", r.stdout)
    assert.matches("\nc12     2026%-01%-01T11:00:00Z     1  1%.%d+ ms +%+%d%.%d%% +%+%d%.%d%%\n",
      r.stdout)
    local all = history("trend --db h.db", dir)
    assert.matches("n=1024 %(20 commits%).*\n\nspin · NVIDIA H200 · n=4096 %(20 commits%)\n",
      all.stdout)
  end)

  it("blames the first commit of the step, and nothing for the flat configuration", function()
    local r = history("blame --db h.db -o b.json -o b.txt", dir)
    assert.equal(0, r.code, r.stderr)
    assert.matches(
      "\nspin      NVIDIA H200  n=1024      step  c12 %(after c11%)  1%.0%d* ms +1%.%d+ ms "
      .. "+%+%d+%.%d%%  0%.001\n", r.stdout)
    assert.matches("\nNo lasting shift in 1 of 2 configurations%.\n$", r.stdout)
    assert.equal(r.stdout, h.read(dir .. "/b.txt"))
    local doc = json.decode(h.read(dir .. "/b.json"))
    assert.same({ "wlrun-history", 1, "blame" }, { doc.schema, doc.version, doc.command })
    local step = doc.configurations[1].steps[1]
    assert.same({ 12, "c12", "c11" }, { step.index, step.first.commit, step.last_before.commit })
    assert.is_true(step.change > 0.07 and step.change < 0.13)
    assert.equal(0, #doc.configurations[2].steps)
  end)

  it(
    "exits with 7 under --fail-on when a latest commit is slower than its baseline by more "
    .. "than PCT", function()
    local r = history("blame --db h.db --fail-on 5", dir)
    assert.equal(7, r.code, r.stderr)
    assert.matches(
      "\nGate %-%-fail%-on 5%%: FAILED: 1 configuration significantly slower than its baseline "
      .. "by more than 5%%:\n  spin · NVIDIA H200 · n=1024: %+%d+%.%d%% at c20 against "
      .. "c02%.%.c11 %(interval", r.stdout)
    assert.matches(
      "^wlrun: history: 1 configuration significantly slower than its baseline by more than "
      .. "5%%: spin n=1024 %(%+", r.stderr)
    local passed = history("trend --db h.db --fail-on 20", dir)
    assert.equal(0, passed.code, passed.stderr)
    assert.matches("\nGate %-%-fail%-on 20%%: passed", passed.stdout)
    assert.equal(0, history("blame --db h.db --fail-on 5 -p n=4096", dir).code)
  end)

  it(
    "takes the commit from git in the current directory's repository, and keeps the database at "
    .. "the repository's root", function()
    if not require("wlrun.process").find_program("git") then
      return pending("git is not installed") end
    local repo = h.tmpdir()
    local function git(args) assert(os.execute(("cd %s && git %s >/dev/null 2>&1"):format(q(repo),
      args))) end
    git("init -q . && git config user.email t@example.com && git config user.name t")
    os.execute("mkdir -p " .. q(repo .. "/bench/out"))
    h.write(repo .. "/bench/spin.lua", "-- a scenario\n")
    git("add bench/spin.lua && git commit -q -m one")
    h.write(repo .. "/bench/out/r.json", F.document { file = "spin.lua", cwd = repo .. "/bench",
      configs = { { params = { n = 1 }, samples = { 1.0, 1.1 } } } })
    local r = h.run("history add out/r.json", { cwd = repo .. "/bench" })
    assert.equal(0, r.code, r.stderr)
    local sha = h.read(repo .. "/.git/" .. h.read(repo .. "/.git/HEAD"):match("ref: (%S+)")):match(
      "%x+")
    assert.matches(("commit %s %%(git%%)"):format(sha:sub(1, 10)), r.stdout)
    assert.truthy(h.read(repo .. "/.wlrun/history.db"))
    h.write(repo .. "/bench/spin.lua", "-- changed\n")
    h.write(repo .. "/bench/out/r2.json", F.document { file = "spin.lua", cwd = repo .. "/bench",
      started = F.time(2),
      configs = { { params = { n = 1 }, samples = { 1.0, 1.2 } } } })
    local dirty = h.run("history add r2.json", { cwd = repo .. "/bench/out" })
    assert.equal(0, dirty.code, dirty.stderr)
    assert.matches(("commit %s%%+ %%(git%%)"):format(sha:sub(1, 10)), dirty.stdout)
    local shown = h.run("history show", { cwd = repo })
    assert.matches("2 runs", shown.stdout)
  end)

  it("uses [history] db of wlrun.ini when --db is not given", function()
    local d = fixtures(h.tmpdir())
    h.write(d .. "/wlrun.ini", "[history]\ndb = perf.db\n")
    assert.equal(0, history("add r01.json --commit a", d).code)
    assert.truthy(h.read(d .. "/perf.db"))
    assert.matches("History in 'perf%.db': 1 run", history("show", d).stdout)
  end)

  it("adds from parallel processes at once without losing or corrupting anything", function()
    local d = fixtures(h.tmpdir())
    local cmds = {}
    for i = 1, 20 do
      cmds[#cmds + 1] = ("%s history add r%02d.json --db p.db --commit c%d -q 2>>err.txt &"):format(
        q(h.bin), i, i)
    end
    local env = os.getenv("WLRUN_LUA_DIR") and ("WLRUN_LUA_DIR=" .. q(os.getenv("WLRUN_LUA_DIR"))
      .. " ") or ""
    assert(os.execute(("cd %s && export %s; %s wait"):format(q(d), env ~= "" and env or "X=1",
      table.concat(cmds, " "))))
    assert.equal("", h.read(d .. "/err.txt"))
    assert.equal(20, count(d .. "/p.db", "SELECT count(*) AS n FROM runs"))
    assert.equal(40, count(d .. "/p.db", "SELECT count(*) AS n FROM results"))
    assert.equal("ok", count(d .. "/p.db", "PRAGMA integrity_check"))
  end)

  it("waits for another writer's lock, and stops waiting on Ctrl-C (exit 130)", function()
    local d = fixtures(h.tmpdir())
    assert.equal(0, history("add r01.json --db h.db --commit a", d).code)
    -- a script that holds the write lock for `seconds`, or until the file 'release' appears,
    -- started in the background; then it writes 'let_go_<seconds>'
    h.write(d .. "/hold.lua", [[
local wl = require "wlrun"
local db = require("wlrun.sqlite").open("h.db")
db:exec("BEGIN IMMEDIATE")
io.open("held", "w"):close()
local limit = wl.clock() + tonumber(arg[1])
repeat wl.sleep(0.01) until wl.clock() >= limit or os.rename("release", "released")
db:exec("ROLLBACK")
io.open("let_go_" .. arg[1], "w"):close()
]])
    local function hold(seconds)
      os.remove(d .. "/held")
      assert(os.execute(("cd %s && %s hold.lua %s >/dev/null 2>&1 &"):format(q(d), q(h.bin),
        seconds)))
      for _ = 1, 500 do
        if io.open(d .. "/held") then return end
        require("wlrun").sleep(0.01)
      end
      error("the lock was not taken")
    end
    hold(1)
    local waited = history("add r02.json --db h.db --commit b", d)
    assert.equal(0, waited.code, waited.stderr)
    assert.matches("as run 2", waited.stdout)
    hold(60)
    finally(function() h.write(d .. "/release", "") end)
    -- Ctrl-C once `history add` sleeps between its tries for the lock (the kernel names the
    -- nanosleep in /proc/PID/wchan; where it does not, after 30 s), however slow its start
    local waiting
      =
      [[sh -c '"$@" & w=$!; i=0; while [ $i -lt 600 ] && ! grep -q nanosleep /proc/$w/wchan ]]
      .. [[2>/dev/null; ]]
      .. [[do sleep 0.05; i=$((i+1)); done; kill -INT $w; wait $w' sh]]
    local stopped = history("add r03.json --db h.db --commit c", d, { prefix = waiting })
    assert.equal(130, stopped.code, stopped.stderr)
    assert.matches("^wlrun: interrupted %(Ctrl%-C%)", stopped.stderr)
    assert.is_nil(io.open(d .. "/let_go_60"), "history add stopped only when the lock was let go")
    -- a reader is not held up
    assert.equal(2, count(d .. "/h.db", "SELECT count(*) AS n FROM runs"))
  end)

  it("refuses a corrupt database, another program's and a missing one, exit 9, naming the file",
    function()
    local d = fixtures(h.tmpdir())
    h.write(d .. "/junk.db", ("this is not SQLite\n"):rep(300))
    for _, cmd in ipairs { "show --db junk.db", "add r01.json --db junk.db --commit a" } do
      local r = history(cmd, d)
      assert.equal(9, r.code, r.stderr)
      assert.equal("wlrun: history: database 'junk.db': file is not a database\n", r.stderr)
    end
    -- a real history cut short
    local whole = h.read(dir .. "/h.db")
    h.write(d .. "/cut.db", whole:sub(1, 8192))
    local cut = history("blame --db cut.db", d)
    assert.equal(9, cut.code, cut.stderr)
    assert.matches("^wlrun: history: database 'cut%.db': database disk image is malformed\n",
      cut.stderr)
    local other = sqlite.open(d .. "/other.db", { create = true })
    other:exec("CREATE TABLE orders (id)")
    other:close()
    local r = history("add r01.json --db other.db --commit a", d)
    assert.equal(9, r.code)
    assert.matches(
      "database 'other%.db': an SQLite database, but not a wlrun history %(its tables: orders%)",
      r.stderr)
    local none = history("trend --db none.db", d)
    assert.equal(9, none.code)
    assert.matches("no history database at 'none%.db'", none.stderr)
  end)

  it("refuses a hostile results file through the strict loader, and adds nothing of any file",
    function()
    local d = fixtures(h.tmpdir())
    h.write(d .. "/bad.json", (h.read(d .. "/r02.json"):gsub('"samples": %[',
      '"samples": ["1; DROP TABLE runs", ', 1)))
    local r = history("add r01.json bad.json --db h.db --commit a", d)
    assert.equal(2, r.code, r.stderr)
    assert.matches(
      "^wlrun: history: 'bad%.json' is malformed: configurations%[1%]%.samples%[1%] is not a "
      .. "finite number\n", r.stderr)
    assert.is_nil(io.open(d .. "/h.db"))
    h.write(d .. "/nested.json", (h.read(d .. "/r02.json"):gsub('"n": 1024', '"n": {"x": 1}', 1)))
    assert.equal(2, history("add nested.json --db h.db --commit a", d).code)
    h.write(d .. "/r.json.journal",
      '{"schema":"wlrun-journal","version":1,"document":{"schema":"wlrun-results","version":1}}\n')
    local j = history("add r.json.journal --db h.db --commit a", d)
    assert.equal(2, j.code)
    assert.matches("is the journal of a run that did not finish", j.stderr)
  end)

  it("refuses a database in a directory that does not exist, exit 9", function()
    local d = fixtures(h.tmpdir())
    local r = history("add r01.json --db no/such/dir/h.db --commit a", d)
    assert.equal(9, r.code)
    assert.equal(
      "wlrun: history: cannot make the database 'no/such/dir/h.db': the directory 'no/such/dir' "
      .. "does not exist\n", r.stderr)
  end)

  it("reads a read-only database, and refuses to add to it, exit 9", function()
    local root = io.popen("id -u"):read("l") == "0"
    local setpriv = require("wlrun.process").find_program("setpriv")
    if root and not setpriv then return pending(
      "running as root without setpriv: a file cannot be read-only") end
    local d = h.tmpdir()
    os.execute(("cp %s %s && chmod 444 %s && chmod 555 %s"):format(q(dir .. "/h.db"),
      q(d .. "/h.db"), q(d .. "/h.db"), q(d)))
    local prefix = root and "setpriv --reuid=nobody --regid=nogroup --clear-groups" or nil
    local shown = history("show --db h.db", d, { prefix = prefix })
    assert.equal(0, shown.code, shown.stderr)
    assert.matches("20 runs", shown.stdout)
    local r = h.run(("history add %s --db h.db --commit a"):format(q(dir .. "/r01.json")),
      { cwd = d, prefix = prefix })
    assert.equal(9, r.code, r.stderr)
    assert.matches("history: the database 'h%.db' is read%-only: adding needs write access",
      r.stderr)
  end)

  it("takes a path that starts with file: as a path", function()
    local d = fixtures(h.tmpdir())
    assert.equal(0, history("add r01.json --db 'file:h.db?mode=memory' --commit a", d).code)
    assert.truthy(h.read(d .. "/file:h.db?mode=memory"):find("^SQLite format 3"))
  end)

  it("refuses bad command lines, exit 2", function()
    for args, msg in pairs {
      [""] = "expected a command: add, show, trend, blame or accept",
      ["frob"] = "unknown command 'frob'",
      ["add"] = "add: expected one or more results files",
      ["show --fail-on 5"] = "%-%-fail%-on does not apply to show",
      ["add r01.json --min-runs 3"] = "%-%-min%-runs does not apply to add",
      ["blame --fail-on lots"] = "%-%-fail%-on: expected a percentage",
      ["blame --min-runs 0"] = "%-%-min%-runs: expected a whole number from 1 to 1000",
      ["blame --alpha 2"] = "%-%-alpha: expected a number between 0 and 1",
      ["trend -o t.xml"] = "cannot tell the output format of 't%.xml'",
      ["add r01.json --commit 'a b'"] = "%-%-commit: expected a commit",
      ["show extra.json"] = "show takes no file",
    } do
      local r = history(args .. " --db h.db", dir)
      assert.equal(2, r.code, args .. ": " .. r.stderr)
      assert.matches("^wlrun: history: " .. msg, r.stderr, 1, false, args)
    end
    local help = history("--help", dir)
    assert.equal(0, help.code)
    assert.matches("^Usage: wlrun history add RESULTS%.json", help.stdout)
  end)

  it(
    "keeps failing a regression while it lasts (the baseline pinned), until a new level is "
    .. "accepted", function()
    -- issue 38's case: 24 commits, 0.3 % noise, M=1024 15 % slower from the fifth on; the gate
    -- run at each commit as CI runs it
    local dir = h.tmpdir()
    local codes = {}
    for i = 1, 24 do
      h.write(("%s/r%02d.json"):format(dir, i), F.document { started = F.time(i), configs = {
        { params = { M = 1024 }, samples = F.samples(i >= 5 and 1.15e-3 or 1e-3, 30, 0.003, i) },
        { params = { M = 4096 }, samples = F.samples(4e-3, 30, 0.003, 100 + i) } } })
      assert.equal(0, history(("add r%02d.json --db h.db --commit c%02d -q"):format(i, i),
        dir).code)
      codes[i] = history("blame --db h.db --fail-on 5", dir).code
    end
    -- the first commit has nothing to be judged against: a gate over nothing (2)
    assert.equal("2 0 0 0 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7", table.concat(codes, " "))
    local r = history("blame --db h.db --fail-on 5", dir)
    assert.matches(
      "M=1024: %+1[45]%.%d%% at c24 against c01%.%.c04 .*baseline pinned since c05 failed",
      r.stdout)
    -- the slower level accepted at c24: the next commits at that level pass, a new step fails
    r = history("accept --db h.db -p M=1024", dir)
    assert.equal(0, r.code, r.stderr)
    assert.matches(
      "accepted spin · NVIDIA H200 · M=1024: its level from c24 on is the baseline", r.stdout,
      1, true)
    for i = 25, 28 do
      h.write(("%s/r%02d.json"):format(dir, i), F.document { started = F.time(i), configs = {
        { params = { M = 1024 }, samples = F.samples(i >= 27 and 1.4e-3 or 1.15e-3, 30, 0.003, i) },
        { params = { M = 4096 }, samples = F.samples(4e-3, 30, 0.003, 100 + i) } } })
      assert.equal(0, history(("add r%02d.json --db h.db --commit c%02d -q"):format(i, i),
        dir).code)
      codes[i] = history("blame --db h.db --fail-on 5", dir).code
    end
    assert.equal("0 0 7 7", table.concat(codes, " ", 25, 28))
    assert.equal(2, history("accept --db h.db --commit nosuch", dir).code)
  end)

  it("judges the latest commit's configurations, and never passes one that compared nothing",
    function()
    local dir = h.tmpdir()
    local function add(i, configs)
      h.write(("%s/r%02d.json"):format(dir, i), F.document { started = F.time(i),
        configs = configs })
      assert.equal(0, history(("add r%02d.json --db h.db --commit c%02d -q"):format(i, i),
        dir).code)
    end
    for i = 1, 6 do -- M=4096 20 % slower from c04
      add(i, { { params = { M = 1024 }, samples = F.samples(1e-3, 30, 0.003, i) },
        { params = { M = 4096 }, samples = F.samples(i >= 4 and 4.8e-3 or 4e-3, 30, 0.003,
          50 + i) } })
    end
    assert.equal(7, history("blame --db h.db --fail-on 5", dir).code)
    -- M=4096 left out of c07: not judged; M=1024 passes
    add(7, { { params = { M = 1024 }, samples = F.samples(1e-3, 30, 0.003, 7) } })
    local r = history("blame --db h.db --fail-on 5 -o -", dir)
    assert.equal(0, r.code, r.stderr)
    local verdicts = {}
    for _, e in ipairs(json.decode(r.stdout).configurations) do
      verdicts[e.params.M] = e.gate.verdict
    end
    assert.equal("not run at the latest commit", verdicts[4096])
    -- c08 names its parameter N: nothing of it has an earlier commit
    add(8, { { params = { N = 1024 }, samples = F.samples(1e-3, 30, 0.003, 8) } })
    r = history("blame --db h.db --fail-on 5", dir)
    assert.equal(2, r.code, r.stdout)
    assert.matches("nothing was compared: no configuration of the latest commit %(c08%)",
      r.stderr)
  end)

  it("writes every command's output as text, JSON or Markdown (--format, -o by extension)",
    function()
    local dir = fixtures(h.tmpdir())
    add_all(dir, "h.db")
    for _, cmd in ipairs { "show", "trend", "blame --fail-on 5" } do
      local md = history(cmd .. " --db h.db --format markdown -o out.md -o out.json -o out.txt",
        dir)
      assert.is_true(md.code == 0 or md.code == 7, md.stderr)
      assert.matches("\n| [%w ]+ |", md.stdout) -- a pipe table
      assert.matches("| %-%-%- |", md.stdout)
      assert.equal(md.stdout, h.read(dir .. "/out.md"))
      assert.equal(cmd:match("^%a+"), json.decode(h.read(dir .. "/out.json")).command)
      local j = history(cmd .. " --db h.db --format json", dir)
      assert.equal(h.read(dir .. "/out.json"), j.stdout)
      assert.is_nil(h.read(dir .. "/out.txt"):find("| ---", 1, true))
    end
    -- CSV: a header, then a row per run, commit, shift or accept
    for _, cmd in ipairs { "show", "trend", "blame" } do
      local c = history(cmd .. " --db h.db --format csv -o out.csv", dir)
      assert.equal(0, c.code, c.stderr)
      assert.equal(c.stdout, h.read(dir .. "/out.csv"))
      assert.matches("^[a-z_]+,[a-z_,]+\r\n", c.stdout)
    end
    local t = history("trend --db h.db -o out.csv", dir)
    assert.matches("\r\nspin,[^\r]*,1,0%.00", h.read(dir .. "/out.csv"), t.stdout)
    -- add and accept too: what they did, as a document
    h.write(dir .. "/again.json", h.read(dir .. "/r01.json"))
    local a = history("add again.json --db h.db --commit c01 --format json -o add.csv", dir)
    assert.equal(0, a.code, a.stderr)
    local doc = json.decode(a.stdout)
    assert.same({ "add", false }, { doc.command, doc.runs[1].added })
    assert.matches("^file,run,added,[^\r]*\r\nagain%.json,%d+,false,", h.read(dir .. "/add.csv"))
    local acc = history("accept --db h.db -o acc.json -o acc.md -q", dir)
    assert.equal(0, acc.code, acc.stderr)
    assert.equal("", acc.stdout)
    assert.equal("accept", json.decode(h.read(dir .. "/acc.json")).command)
    assert.matches("^accepted ", h.read(dir .. "/acc.md"))
    local r = history("blame --db h.db --format xml", dir)
    assert.equal(2, r.code)
    assert.matches("%-%-format: expected text, json, markdown or csv, got 'xml'", r.stderr)
  end)
end)
