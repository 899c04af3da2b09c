-- End-to-end: branches in `wlrun history` (docs/history.md, "Branches") on a real git
-- repository and a real database: main's twelve commits flat, a feature branch from main's
-- sixth whose five commits are 2x slower, their runs added in the order CI would finish them
-- (interleaved). Main's trend and blame leave the feature out, and main's gate passes at every
-- add; --branch feature shows it after main's runs up to the merge base and fails its gate
-- against main's level there; without git (another directory) the recorded branches give the
-- same series; a detached HEAD takes its branch from GITHUB_HEAD_REF.
local h = require "helper"
local F = require "history_fixtures"
local json = require "wlrun.json"

local q = h.quote

local function has_git() return require("wlrun.process").find_program("git") ~= nil end

describe("wlrun history on branches", function()
  local repo, data, sha, gates = nil, nil, {}, {}

  local function git(args)
    local out = os.tmpname()
    assert(os.execute(("cd %s && git %s >%s 2>&1"):format(q(repo), args, q(out))), args)
    local text = h.read(out)
    os.remove(out)
    return text
  end

  local function history(args, opts)
    opts = opts or {}
    opts.cwd = opts.cwd or repo
    return h.run("history " .. args .. " --db " .. q(data .. "/h.db"), opts)
  end

  local step = 0
  -- a commit on the branch checked out, and a run of it added (n=1024 at median ms)
  local function commit_and_add(name, median, env)
    step = step + 1
    git(("commit -q --allow-empty -m %s"):format(name))
    sha[name] = git("rev-parse HEAD"):match("%x+")
    local file = ("%s/%s.json"):format(data, name)
    h.write(file, F.document { started = F.time(step), configs = {
      { params = { n = 1024 }, samples = F.samples(median * 1e-3, 40, 0.01, step) } } })
    local r = history("add " .. q(file), { env = env })
    assert.equal(0, r.code, r.stderr)
    return r
  end

  setup(function()
    if not has_git() then return end
    repo, data = h.tmpdir(), h.tmpdir()
    git(
      "init -q . && git config user.email t@example.com && git config user.name t && git "
      .. "checkout -q -b main")
    for i = 1, 6 do commit_and_add(("m%02d"):format(i), 1.0) end
    for i = 1, 6 do
      if i <= 5 then
        git("checkout -q " .. (i == 1 and "-b feature" or "feature"))
        commit_and_add(("f%02d"):format(i), 2.0)
        -- main's gate, the feature's run the latest
        gates[#gates + 1] = history("blame --fail-on 5").code
        git("checkout -q main")
      end
      commit_and_add(("m%02d"):format(6 + i), 1.0)
      gates[#gates + 1] = history("blame --fail-on 5").code
    end
  end)

  before_each(function()
    if not has_git() then pending("git is not installed") end
  end)

  it("records the branch and the merge base of each run", function()
    local r = history("show -o -")
    assert.equal(0, r.code, r.stderr)
    local doc = json.decode(r.stdout)
    assert.equal("main", doc.branch)
    assert.equal(12, #doc.runs) -- main's runs only
    for _, run in ipairs(doc.runs) do
      assert.equal("main", run.branch)
      -- a main commit is its own merge base
      assert.equal(sha[run.file:match("(m%d+)%.json$")], run.merge_base)
    end
    local text = history("show --branch feature").stdout
    assert.matches("  commit      branch   configs  file\n", text, 1, true)
    assert.matches(sha.f05:sub(1, 10) .. "  feature        1", text, 1, true)
    assert.matches(sha.m06:sub(1, 10) .. "  main           1", text, 1, true)
    local f = json.decode(history("show --branch feature -o -").stdout)
    assert.equal(sha.m06, f.merge_base)
    assert.equal(11, #f.runs)
    for i, run in ipairs(f.runs) do
      assert.equal(i <= 6 and "main" or "feature", run.branch)
      if i > 6 then assert.equal(sha.m06, run.merge_base) end
    end
  end)

  it("leaves the feature's runs out of main's trend and blame, and main's gate never fails on them",
    function()
    local r = history("trend")
    assert.equal(0, r.code, r.stderr)
    assert.matches("n=1024 %(12 commits%)", r.stdout)
    for i = 1, 5 do assert.falsy(r.stdout:find(sha[("f%02d"):format(i)]:sub(1, 10), 1, true)) end
    local b = history("blame --fail-on 5")
    assert.equal(0, b.code, b.stdout .. b.stderr)
    assert.matches("No lasting shift in 1 of 1 configuration", b.stdout)
    assert.equal(string.rep("0 ", 10) .. "0", table.concat(gates, " "))
  end)

  it(
    "shows a branch after main's runs up to the merge base, and gates it against main's "
    .. "level there", function()
    local r = history("trend --branch feature -o -")
    assert.equal(0, r.code, r.stderr)
    local doc = json.decode(r.stdout)
    local commits = {}
    for i, p in ipairs(doc.configurations[1].points) do commits[i] = p.commit end
    local want = {}
    for _, name in ipairs { "m01", "m02", "m03", "m04", "m05", "m06", "f01", "f02", "f03", "f04",
      "f05" } do
      want[#want + 1] = sha[name]
    end
    assert.same(want, commits)
    local b = history("blame --branch feature --fail-on 5")
    assert.equal(7, b.code, b.stdout .. b.stderr)
    assert.matches("^Branch feature: main's runs up to the merge base " .. sha.m06:sub(1, 10),
      b.stdout)
    assert.matches(("step  %s %%(after %s%%)"):format(sha.f01:sub(1, 10), sha.m06:sub(1, 10)),
      b.stdout)
    assert.matches(
      ("%%+%%d+%%.%%d%%%% at %s against %s%%.%%.%s .*baseline: main's level at the "
      .. "merge base"):format(
      sha.f05:sub(1, 10), sha.m01:sub(1, 10), sha.m06:sub(1, 10)), b.stdout)
    assert.matches("history: 1 configuration significantly slower", b.stderr)
    -- --branch main is the main line
    assert.equal(0, history("trend --branch main --fail-on 5").code)
  end)

  it("follows the recorded branches where git cannot say (another directory)", function()
    local elsewhere = h.tmpdir()
    local main = json.decode(history("trend -o -", { cwd = elsewhere }).stdout)
    assert.equal(12, #main.configurations[1].points)
    local r = history("trend --branch feature -o -", { cwd = elsewhere })
    assert.equal(0, r.code, r.stderr)
    local doc = json.decode(r.stdout)
    assert.equal(sha.m06, doc.merge_base) -- the one stored with the feature's runs
    local commits = {}
    for i, p in ipairs(doc.configurations[1].points) do commits[i] = p.commit end
    assert.same({ sha.m01, sha.m02, sha.m03, sha.m04, sha.m05, sha.m06, sha.f01, sha.f02, sha.f03,
      sha.f04, sha.f05 },
      commits)
    assert.equal(7, history("blame --branch feature --fail-on 5", { cwd = elsewhere }).code)
    assert.equal(0, history("blame --fail-on 5", { cwd = elsewhere }).code)
  end)

  it("takes a detached HEAD's branch from GITHUB_HEAD_REF, and --branch over it", function()
    git("checkout -q --detach " .. sha.m06)
    local r = commit_and_add("pr01", 1.5, "GITHUB_HEAD_REF=pr-7 GITHUB_REF_NAME=7/merge")
    assert.matches("on branch pr%-7 %(merge base " .. sha.m06:sub(1, 10) .. "%)", r.stdout)
    local doc = json.decode(history("show --branch pr-7 -o -").stdout)
    local last = doc.runs[#doc.runs]
    assert.same({ "pr-7", sha.m06, sha.pr01 }, { last.branch, last.merge_base, last.commit })
    assert.equal(7, #doc.runs) -- main's six up to the merge base, then its own
    local o = commit_and_add("pr02", 1.5, "GITHUB_HEAD_REF= GITHUB_REF_NAME=7/merge")
    assert.matches("on branch 7/merge", o.stdout)
    step = step + 1
    h.write(data .. "/x.json", F.document { started = F.time(step), configs = {
      { params = { n = 1024 }, samples = F.samples(1e-3, 40, 0.01, step) } } })
    local x = history("add " .. q(data .. "/x.json") .. " --branch topic",
      { env = "GITHUB_HEAD_REF=pr-7" })
    assert.matches("on branch topic", x.stdout)
    assert.equal(2, history("show --branch -x").code)
    git("checkout -q main")
  end)

  it("takes a level accepted on the branch as its baseline, and main's gate is left as it was",
    function()
    assert.equal(0, history("accept --commit " .. sha.m08).code) -- main's, before the branch's
    local r = history("accept --branch feature")
    assert.equal(0, r.code, r.stderr)
    assert.matches("its level from " .. sha.f05:sub(1, 12) .. " on is the baseline", r.stdout)
    local g = json.decode(history("blame --branch feature --fail-on 5 -o -").stdout)
    assert.same({ false, "no baseline" }, { g.gate.failed, g.configurations[1].gate.verdict })
    local m = json.decode(history("blame --fail-on 5 -o -").stdout) -- main's accept still holds
    assert.same({ false, sha.m08 }, { m.gate.failed, m.configurations[1].gate.accepted.commit })
  end)

  it("keeps a run of a commit git does not know in its place by its recorded branch and time",
    function()
    step = step + 1
    h.write(data .. "/c99.json", F.document { started = F.time(step), configs = {
      { params = { n = 1024 }, samples = F.samples(1e-3, 40, 0.01, step) } } })
    local r = history("add " .. q(data .. "/c99.json") .. " --commit c99")
    assert.equal(0, r.code, r.stderr)
    local main = json.decode(history("trend -o -").stdout).configurations[1].points
    assert.same({ 13, sha.m12, "c99" }, { #main, main[12].commit, main[13].commit })
    local feature = json.decode(
      history("trend --branch feature -o -").stdout).configurations[1].points
    assert.same({ 11, sha.f05 }, { #feature, feature[11].commit })
  end)
end)

describe("wlrun history on a database made before branches were recorded", function()
  local sqlite = require "wlrun.sqlite"
  local schema = require "wlrun.history.schema"

  -- a history of schema version 2, as a wlrun of that version left it: three runs of two
  -- commits, and an accept in the table its first accept made
  local function version2(path)
    local db = sqlite.open(path, { create = true })
    db:exec(schema.migration(1))
    db:exec(schema.migration(2))
    db:exec("PRAGMA user_version = 2")
    db:exec(("PRAGMA application_id = %d"):format(schema.APPLICATION_ID))
    db:exec(
      "CREATE TABLE accepted (scenario TEXT NOT NULL, device TEXT NOT NULL, params TEXT NOT "
      .. "NULL, commit_sha TEXT NOT NULL, time TEXT NOT NULL)")
    for i, c in ipairs { "c01", "c02", "c02" } do
      db:run(
        "INSERT INTO runs (scenario, device, commit_sha, dirty, time, added, file, identity) "
        .. "VALUES ('spin', 'NVIDIA H200', ?1, 0, ?2, ?2, 'r.json', ?3)",
        c, F.time(i), "id" .. i)
      db:run("INSERT INTO results VALUES (?1, '{\"n\":1}', 's', 3, ?2, ?2, ?2, ?2, 0.0, ?3)", i,
        i * 1e-3,
        ("[%g,%g,%g]"):format(i * 1e-3, i * 1e-3, i * 1e-3))
    end
    db:run(
      "INSERT INTO accepted VALUES ('spin', 'NVIDIA H200', '{\"n\":1}', 'c02', "
      .. "'2026-01-02T00:00:00Z')")
    db:close()
  end

  it("is migrated by its first reader and read as the main line's, its accepts kept", function()
    local dir = h.tmpdir()
    version2(dir .. "/old.db")
    local r = h.run("history trend --db old.db -o -", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    local doc = json.decode(r.stdout)
    assert.equal(2, #doc.configurations[1].points)
    local shown = json.decode(h.run("history show --db old.db -o -", { cwd = dir }).stdout)
    assert.equal(3, #shown.runs)
    assert.same({ "", "" }, { shown.runs[1].branch, shown.runs[1].merge_base })
    local db <close> = sqlite.open(dir .. "/old.db", { readonly = true })
    assert.equal(3, db:rows("PRAGMA user_version")[1].user_version)
    assert.equal("c02", db:rows("SELECT commit_sha FROM accepted")[1].commit_sha)
    -- the accept still holds: the gate's baseline starts at c02, a series of one commit
    local g = json.decode(h.run("history trend --db old.db --fail-on 5 -o -", { cwd = dir }).stdout)
    assert.equal("no baseline", g.configurations[1].gate.verdict)
    -- a branch that no run records has no series
    assert.matches("No configuration in 'old.db' matches",
      h.run("history trend --db old.db --branch x", { cwd = dir }).stdout)
  end)
end)
