-- End-to-end, no GPU needed: the provenance of a run (docs/results.md, "Provenance") — the
-- commit of the repository holding the scenario (clean, dirty, none), the machine, wlrun and
-- the command line, kept by the journal, --resume, --isolate and merge; what compare says
-- differs between two runs; and a hostile provenance refused with exit 2 naming its path.
local h = require "helper"
local load = require "wlrun.results.load"
local json = require "wlrun.json"
local process = require "wlrun.process"

local q = h.quote

local SCENARIO = [[
local wl = require "wlrun"
local process = require "wlrun.process"
return wl.scenario { name = "pv", params = { n = { 1, 2, 3 } },
  setup = function(p)
    if p.n == 2 and os.getenv("KILL") then os.execute("kill -9 " .. process.getpid()) end
    return {}
  end,
  run = function() end }
]]

local function git(repo, args) assert(os.execute(
  ("cd %s && git %s >/dev/null 2>&1"):format(q(repo), args))) end
local function head(repo) return h.read(repo .. "/.git/refs/heads/bench"):match("%x+") end

-- a git repository made for the test, the scenario in a directory of it, committed
local function repository()
  local repo = h.tmpdir()
  git(repo,
    "init -q . && git config user.email t@example.com && git config user.name t && git checkout "
    .. "-q -b bench")
  os.execute("mkdir -p " .. q(repo .. "/bench"))
  h.write(repo .. "/bench/pv.lua", SCENARIO)
  git(repo, "add bench/pv.lua && git commit -q -m one")
  return repo, head(repo)
end

-- a run of the scenario at path from another directory (not the repository's)
local function run(path, args, env)
  local dir = h.tmpdir()
  local r = h.run(q(path) .. " --compile-only " .. (args or "-o r.json"), { cwd = dir, env = env })
  return r, dir
end

local function has_git() return process.find_program("git") ~= nil end

describe("a run's provenance", function()
  it("records the commit of the scenario's repository, clean and then dirty, and the machine",
    function()
    if not has_git() then return pending("git is not installed") end
    local repo, sha = repository()
    local r, dir = run(repo .. "/bench/pv.lua")
    assert.equal(0, r.code, r.stderr)
    local doc = load.load(dir .. "/r.json")
    local p = doc.provenance
    assert.same({ commit = sha, dirty = false, branch = "bench" }, p.git)
    assert.is_string(p.host)
    assert.is_true(math.type(p.cpu.count) == "integer" and p.cpu.count >= 1)
    assert.is_string(p.os.release)
    assert.equal(doc.wlrun.version, p.wlrun)
    assert.same(doc.command_line, p.command_line)
    assert.is_nil(p.driver and p.driver.cuda) -- --compile-only: no device
    assert.is_nil(p.toolkit and p.toolkit.runtime)
    assert.matches('"provenance": {\n    "git": {\n      "commit": "' .. sha
      .. '",\n      "dirty": false',
      h.read(dir .. "/r.json"))
    -- the history takes it (a configuration given samples: --compile-only measures none)
    local measured = json.decode(h.read(dir .. "/r.json"))
    measured.configurations[1].status, measured.configurations[1].samples = "ok", { 1.0, 1.1 }
    h.write(dir .. "/m.json", json.encode(measured))
    local hist = h.run("history add m.json --db h.db", { cwd = dir })
    assert.equal(0, hist.code, hist.stderr)
    assert.matches(("commit %s %%(document%%)"):format(sha:sub(1, 10)), hist.stdout)
    local page = h.run("report --html page r.json", { cwd = dir }) -- wlrun report's page shows it
    assert.equal(0, page.code, page.stderr)
    assert.matches("<dt>provenance</dt><dd>.-<dt>commit</dt><dd>" .. sha,
      h.read(dir .. "/page/index.html"))

    h.write(repo .. "/bench/pv.lua", SCENARIO .. "-- changed\n")
    local dirty, ddir = run(repo .. "/bench/pv.lua")
    assert.equal(0, dirty.code, dirty.stderr)
    assert.same({ commit = sha, dirty = true, branch = "bench" },
      load.load(ddir .. "/r.json").provenance.git)

    -- compare names what differs: the dirty tree, nothing else (the same command line, host)
    local c = h.run(("compare %s %s"):format(q(dir .. "/r.json"), q(ddir .. "/r.json")))
    assert.equal(0, c.code, c.stderr)
    assert.matches("\n  Provenance that differs %(BASE vs NEW%):\n    commit " .. sha:sub(1, 7)
      .. " vs "
      .. sha:sub(1, 7) .. " %(dirty%)\n\n", c.stdout)
  end)

  it("has no git part for a scenario outside a repository", function()
    local dir = h.tmpdir()
    local path = h.write(dir .. "/pv.lua", SCENARIO)
    local r, out = run(path)
    assert.equal(0, r.code, r.stderr)
    local p = load.load(out .. "/r.json").provenance
    assert.is_nil(p.git)
    assert.is_string(p.wlrun)
  end)

  it("is kept by the journal of a killed run, by --resume from it, by --isolate and by merge",
    function()
    if not has_git() then return pending("git is not installed") end
    local repo, sha = repository()
    local path = repo .. "/bench/pv.lua"
    local _, dir = run(path, "-o r.json", "KILL=1")
    local journal = load.load(dir .. "/r.json.journal")
    assert.equal(sha, journal.provenance.git.commit)
    h.write(repo .. "/README", "another commit\n") -- the resumed run is of the next commit
    git(repo, "add README && git commit -q -m two")
    local r = h.run(q(path) .. " --compile-only --resume r.json.journal -o r.json", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    assert.matches(
      ("%%-%%-resume r%%.json%%.journal was measured at commit %s, this run is at %s: the "
      .. "results mix the two")
      :format(sha:sub(1, 10), head(repo):sub(1, 10)), r.stderr)
    local resumed = load.load(dir .. "/r.json")
    assert.is_true(resumed.complete)
    assert.equal(head(repo), resumed.provenance.git.commit)
    assert.equal(sha, resumed.provenance.resumed_from.git.commit) -- the file's, kept
    assert.same(resumed.command_line, resumed.provenance.command_line)
    sha = head(repo)

    r = h.run(q(path) .. " --compile-only --isolate -o i.json",
      { cwd = dir, prefix = "timeout 60" })
    assert.equal(0, r.code, r.stderr)
    assert.equal(sha, load.load(dir .. "/i.json").provenance.git.commit)

    for k = 1, 2 do
      r = h.run(q(path) .. (" --compile-only --shard %d/2 -o s%d.json"):format(k, k), { cwd = dir })
      assert.equal(0, r.code, r.stderr)
    end
    local m = h.run("merge s1.json s2.json -o all.json -q", { cwd = dir })
    assert.equal(0, m.code, m.stderr)
    local merged = load.load(dir .. "/all.json")
    assert.equal(sha, merged.provenance.git.commit)
    assert.equal(sha, merged.shards[2].provenance.git.commit)
  end)
end)

describe("compare of two runs of different provenance", function()
  local function documents()
    local dir = h.tmpdir()
    local r = h.run(q(h.write(dir .. "/pv.lua", SCENARIO)) .. " --compile-only -o a.json",
      { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    local a = json.decode(h.read(dir .. "/a.json"))
    local b = json.decode(h.read(dir .. "/a.json"))
    a.provenance.git = { commit = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", dirty = true,
      branch = "main" }
    b.provenance.git = { commit = "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432", dirty = false,
      branch = "main" }
    a.provenance.host, b.provenance.host = "node-a", "node-b"
    a.provenance.driver = { cuda = "13.0", nvidia = "580.65.06" }
    b.provenance.driver = { cuda = "12.8", nvidia = "580.65.06" }
    h.write(dir .. "/a.json", json.encode(a))
    h.write(dir .. "/b.json", json.encode(b))
    return dir
  end

  it("shows what differs in the table, in Markdown and in JSON", function()
    local dir = documents()
    local t = h.run("compare a.json b.json", { cwd = dir })
    assert.equal(0, t.code, t.stderr)
    assert.matches(
      "\n  NEW  b%.json[^\n]*\n  Provenance that differs %(BASE vs NEW%):\n    commit 1a2b3c4 "
      .. "%(dirty%) vs 9f8e7d6\n"
      .. "    host node%-a vs node%-b\n    CUDA driver 13%.0 vs 12%.8\n\n", t.stdout)
    local md = h.run("compare a.json b.json --format markdown", { cwd = dir })
    assert.matches(
      "\n%- Provenance that differs %(BASE vs NEW%): commit 1a2b3c4 %(dirty%) vs 9f8e7d6; host "
      .. "node%-a vs node%-b; "
      .. "CUDA driver 13%.0 vs 12%.8\n", md.stdout)
    local j = h.run("compare a.json b.json --format json", { cwd = dir })
    local cmp = json.decode(j.stdout)
    assert.same({ field = "host", base = "node-a", new = "node-b" }, cmp.provenance_differences[2])
    assert.equal(3, #cmp.provenance_differences)
    assert.equal("node-a", cmp.base.provenance.host)
    assert.equal("9f8e7d6c5b4a39281706f5e4d3c2b1a098765432", cmp.new.provenance.git.commit)
    local same = h.run("compare a.json a.json", { cwd = dir })
    assert.is_nil(same.stdout:find("Provenance", 1, true))
  end)

  it("and merge warns when shards come from different commits", function()
    local dir = documents()
    local m = h.run("merge a.json b.json -o m.json", { cwd = dir })
    assert.matches(
      "'a%.json' and 'b%.json' come from different commits of the scenario's repository "
      .. "%(1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d %(dirty%) and 9f8e7d6", m.stderr)
  end)
end)

describe("a hostile provenance", function()
  local cases = {
    { function(p) p.git = { commit = "$(touch PWNED)", dirty = false } end,
      "provenance.git.commit is a string, not a commit" },
    { function(p) p.git.dirty = "no" end, "provenance.git.dirty is a string, not true or false" },
    { function(p) p.command_line = { "wlrun", { x = 1 } } end,
      "provenance.command_line[2] is a JSON object or array, not a string" },
    { function(p) p.cpu = "fast" end, "provenance.cpu is a string, not an object" },
  }

  it("is refused by compare, merge, report, history and --resume with exit 2, naming the path",
    function()
    local dir = h.tmpdir()
    local r = h.run(q(h.write(dir .. "/pv.lua", SCENARIO)) .. " --compile-only -o good.json",
      { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    for i, case in ipairs(cases) do
      local doc = json.decode(h.read(dir .. "/good.json"))
      doc.provenance.git = doc.provenance.git or {
        commit = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", dirty = false }
      case[1](doc.provenance)
      local bad = ("bad%d.json"):format(i)
      h.write(dir .. "/" .. bad, json.encode(doc))
      local want = "'" .. bad .. "' is malformed: " .. case[2]
      for _, cmd in ipairs {
        "compare good.json " .. bad, "merge good.json " .. bad .. " -o m.json",
          "history add " .. bad .. " --db h.db",
        "report --html out " .. bad, "pv.lua --compile-only --resume " .. bad .. " -o again.json",
      } do
        local x = h.run(cmd, { cwd = dir })
        assert.equal(2, x.code, cmd .. ": " .. x.stderr)
        assert.is_truthy(x.stderr:find(want, 1, true), cmd .. ": " .. x.stderr)
      end
    end
    assert.is_nil(io.open(dir .. "/PWNED"))
  end)
end)
