-- End-to-end, no GPU needed: the results document of a whole run through --compile-only (each
-- configuration set up and its launches checked, status "compiled"): what it records, that
-- every output is parseable, and that nothing finished is lost when the run ends early.
local h = require "helper"
local load = require "wlrun.results.load"

local function scenario(body)
  return [[
local wl = require "wlrun"
local process = require "wlrun.process"
return wl.scenario {
  name = "res",
  params = { n = { 1, 2, 3, 4 } },
  timing = { flush_l2 = true, warmup = 7 },
  setup = function(p) ]] .. (body or "") .. [[ return {} end,
  run = function() end,
}
]]
end

local function run(body, args)
  local dir = h.tmpdir()
  local r = h.run_script(scenario(body), "--compile-only " .. (args or "") .. " -o "
    .. h.quote(dir .. "/r.json")
    .. " -o " .. h.quote(dir .. "/r.csv"), { cwd = dir })
  return r, dir
end

describe("a run's results document", function()
  it("holds every configuration of --compile-only, status compiled, and a CSV beside it", function()
    local r, dir = run()
    assert.equal(0, r.code, r.stderr)
    local doc = load.load(dir .. "/r.json")
    assert.is_true(doc.complete)
    assert.is_true(doc.compile_only)
    assert.equal(4, #doc.configurations)
    for i, c in ipairs(doc.configurations) do
      assert.equal("compiled", c.status)
      assert.same({ n = i }, c.params) -- a parameter named n stays an object
    end
    local lines = select(2, h.read(dir .. "/r.csv"):gsub("\r\n", ""))
    assert.equal(5, lines)
    assert.is_nil(io.open(dir .. "/r.json.journal"))
  end)

  it("accounts for the run's wall time outside the configurations (doc.wall)", function()
    local t0 = require("wlrun.core").clock()
    local r, dir = run("wl.sleep(0.05)")
    local elapsed = require("wlrun.core").clock() - t0
    assert.equal(0, r.code, r.stderr)
    local w = load.load(dir .. "/r.json").wall
    for _, k in ipairs { "start", "plan", "document", "configurations", "journal", "total" } do
      assert.is_true(type(w[k]) == "number" and w[k] >= 0, k)
    end
    assert.is_nil(w.device) -- --compile-only makes no context and measures no floor
    assert.is_true(w.configurations >= 4 * 0.05, "four setups of 50 ms: " .. w.configurations)
    assert.is_true(w.journal < w.configurations)
    local parts = w.start + w.plan + w.document + w.configurations
    -- (what lies between the parts is a few statements, which a loaded machine may hold up for
    -- tens of milliseconds; a part left out, the configurations' 0.2 s, would still show)
    assert.is_true(parts <= w.total + 1e-6 and w.total - parts < 0.15,
      ("parts %g, total %g"):format(parts, w.total))
    -- the process's start is read in clock ticks, rounded down: up to one tick (10 ms) early
    assert.is_true(w.total < elapsed + 0.011, ("total %g, the process %g"):format(w.total, elapsed))
  end)

  it("records the settings in force: the scenario's timing table, the command line", function()
    local r, dir = run(nil, "--iters 33")
    assert.equal(0, r.code, r.stderr)
    local doc = load.load(dir .. "/r.json")
    assert.is_true(doc.settings.run.flush_l2)
    assert.equal(7, doc.settings.run.warmup)
    assert.equal(33, doc.settings.run.iters)
    assert.equal("scenario", doc.sources["run.flush_l2"])
    assert.equal("scenario", doc.sources["run.warmup"])
    assert.equal("cli", doc.sources["run.iters"])
  end)

  it("prints parseable JSON and CSV on stdout, and nothing else there", function()
    local dir = h.tmpdir()
    local r = h.run_script(scenario(), "--compile-only --format json", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    assert.equal(4, #load.decode(r.stdout, "stdout").configurations)
    r = h.run_script(scenario(), "--compile-only --format csv", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    assert.matches("^index,param%.n,status[^\n]*\r\n1,1,compiled", r.stdout)
  end)

  it("writes what finished when the script calls os.exit, which stops the run as a failure",
    function()
    local r, dir = run("if p.n == 3 then os.exit(3) end")
    assert.equal(3, r.code, r.stderr)
    local doc = load.load(dir .. "/r.json")
    assert.is_false(doc.complete)
    assert.equal(3, #doc.configurations)
    assert.equal("failed", doc.configurations[3].status)
    assert.matches("os%.exit%(3%) during configuration 3 %(n=3%)", doc.configurations[3].error)
    assert.is_nil(io.open(dir .. "/r.json.journal"))
    assert.matches("^index,param%.n,status", h.read(dir .. "/r.csv"))
  end)

  it("writes what finished when a configuration fails", function()
    local r, dir = run("if p.n == 2 then error('broken setup') end")
    assert.equal(1, r.code)
    local doc = load.load(dir .. "/r.json")
    assert.is_true(doc.complete)
    assert.equal("failed", doc.configurations[2].status)
    assert.matches("broken setup", doc.configurations[2].error)
  end)

  it("keeps a journal that the tools read when the process is killed outright", function()
    local r, dir = run("if p.n == 3 then os.execute('kill -9 ' .. process.getpid()) end")
    assert.is_true(r.how == "signal" or r.code == 137, r.stderr) -- killed, by the shell's account
    assert.is_nil(io.open(dir .. "/r.json"))
    local doc = load.load(dir .. "/r.json.journal")
    assert.is_false(doc.complete)
    assert.equal(2, #doc.configurations)
    local m = h.run("merge " .. h.quote(dir .. "/r.json.journal") .. " --format json -q")
    assert.equal(0, m.code, m.stderr)
    assert.equal(2, #load.decode(m.stdout, "merged").configurations)
  end)
end)

-- A document an H200 wrote (scenarios/bandwidth.lua, tests/gpu/run-on-gpu.sh rest): every
-- part a measurement records (shape, clocks, warnings, kernels) reads back in every tool here.
describe("a document measured on a GPU", function()
  local measured = h.source_dir .. "/tests/fixtures/results/h200-bandwidth.json"

  it("loads through the strict loader with the shape of its samples", function()
    local doc = load.load(measured)
    assert.is_true(#doc.configurations > 0)
    for _, c in ipairs(doc.configurations) do
      assert.equal("ok", c.status)
      assert.is_table(c.shape.modes_at)
    end
  end)

  it("is compared, exported and merged by the tools", function()
    local dir = h.tmpdir()
    local r = h.run("compare " .. h.quote(measured) .. " " .. h.quote(measured) .. " -o "
      .. h.quote(dir .. "/c.json"))
    assert.equal(0, r.code, r.stderr)
    r = h.run("export " .. h.quote(measured) .. " --format csv -o " .. h.quote(dir .. "/x.csv"))
    assert.equal(0, r.code, r.stderr)
    r = h.run("merge " .. h.quote(measured) .. " -o " .. h.quote(dir .. "/m.json"))
    assert.equal(0, r.code, r.stderr)
    assert.equal(#load.load(measured).configurations, #load.load(dir .. "/m.json").configurations)
  end)
end)

describe("a loop scenario", function()
  local LOOP = [[
local wl = require "wlrun"
return wl.loop { name = "l", params = { b = { 1, 2 } }, batch_size = 4, iters = 9,
  data = function() end, step = function() end }
]]

  it("takes --iters and --warmup from the command line", function()
    local dir = h.tmpdir()
    local r = h.run_script(LOOP, "--compile-only --iters 4 --warmup 2 -o "
      .. h.quote(dir .. "/l.json"), { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    local doc = load.load(dir .. "/l.json")
    assert.equal(4, doc.settings.run.iters)
    assert.equal(2, doc.settings.run.warmup)
    assert.equal("cli", doc.sources["run.iters"])
  end)

  it("refuses options that only wl.bench reads, rather than ignoring them", function()
    for _, opt in ipairs { "--mode cold", "--flush-l2", "--adaptive", "--warmup-time 1s",
      "--max-time 2s" } do
      local r = h.run_script(LOOP, "--compile-only " .. opt)
      assert.equal(2, r.code, opt)
      assert.matches(opt:match("^%S+"):gsub("%-", "%%-") .. " does not apply to l: a loop",
        r.stderr)
    end
  end)
end)

describe("a journal left by a killed run", function()
  it("is never overwritten by a new run, and --resume goes on from it", function()
    local dir = h.tmpdir()
    local script = h.write(dir .. "/s.lua", scenario(
      "if p.n == 3 and not os.getenv('DONE') then os.execute('kill -9 ' .. process.getpid()) end"))
    local out = " -o " .. h.quote(dir .. "/r.json")
    h.run(h.quote(script) .. " --compile-only" .. out, { cwd = dir })
    local before = h.read(dir .. "/r.json.journal")
    local r = h.run(h.quote(script) .. " --compile-only" .. out, { cwd = dir, env = "DONE=1" })
    assert.equal(9, r.code)
    assert.matches("r%.json%.journal' is there: the journal of a run that did not finish", r.stderr)
    assert.equal(before, h.read(dir .. "/r.json.journal"))
    r = h.run(h.quote(script) .. " --compile-only --resume " .. h.quote(dir .. "/r.json.journal")
      .. out,
      { cwd = dir, env = "DONE=1" })
    assert.equal(0, r.code, r.stderr)
    local doc = load.load(dir .. "/r.json")
    assert.is_true(doc.complete)
    assert.equal(4, #doc.configurations)
    assert.is_nil(io.open(dir .. "/r.json.journal"))
  end)
end)

describe("resuming", function()
  local KILL = [[
local wl = require "wlrun"
local process = require "wlrun.process"
return wl.scenario { name = "k", params = { i = { 1, 2, 3, 4, 5, 6 } },
  setup = function(p) if p.i == 5 and not os.getenv("DONE") then os.execute("kill -9 " .. process.getpid()) end return {} end,
  run = function() end }
]]

  it("refuses to overwrite a file whose finished configurations this run's selection leaves out",
    function()
    local dir = h.tmpdir()
    local script = h.write(dir .. "/k.lua", KILL)
    -- host mode needs a device; skipped configurations are finished ones, and run anywhere
    h.write(script, KILL:gsub("return {} end", "wl.skip('done') end"))
    h.run(h.quote(script) .. " --compile-only -o k.json", { cwd = dir })
    assert.equal(4, #load.load(dir .. "/k.json.journal").configurations)
    local r = h.run(h.quote(script)
      .. " --compile-only --resume ./k.json.journal -o k.json --filter 'i >= 3'",
      { cwd = dir, env = "DONE=1" })
    assert.equal(2, r.code)
    assert.matches(
      "%-%-resume %./k%.json%.journal: it holds 2 finished configurations outside this run's "
      .. "selection", r.stderr)
    assert.equal(4, #load.load(dir .. "/k.json.journal").configurations) -- untouched
    r = h.run(h.quote(script) .. " --compile-only --resume ./k.json.journal -o k.json",
      { cwd = dir, env = "DONE=1" })
    assert.equal(0, r.code, r.stderr)
    local doc = load.load(dir .. "/k.json")
    assert.equal(6, #doc.configurations)
    assert.is_true(doc.configurations[1].resumed)
  end)

  it("finishes only what is missing under --compile-only: a compiled entry is finished there",
    function()
    local dir = h.tmpdir()
    -- each configuration's setup says it ran; the second waits for SIGTERM on the first run
    local script = h.write(dir .. "/t.lua", [[
local wl = require "wlrun"
return wl.scenario { name = "t", params = { n = { 1, 2, 3 } },
  setup = function(p)
    local f = io.open("ran", "a") f:write(p.n, "\n") f:close()
    if p.n == 2 and not os.getenv("DONE") then io.open("ready", "w"):close() wl.sleep(60) end
    return {}
  end, run = function() end }
]])
    local r = h.run(h.quote(script) .. " --compile-only --arch sm_90 -o r.json", { cwd = dir,
      prefix = [[sh -c '"$@" & t=$!; while [ ! -e ready ]; do sleep 0.05; done; kill -TERM $t; ]]
        .. [[wait $t' sh]] })
    assert.equal(143, r.code, r.stderr)
    local old = load.load(dir .. "/r.json")
    assert.same({ "compiled", "failed" }, { old.configurations[1].status,
      old.configurations[2].status })
    os.remove(dir .. "/ran")
    r = h.run(h.quote(script) .. " --compile-only --arch sm_90 --resume r.json -o r2.json",
      { cwd = dir, env = "DONE=1" })
    assert.equal(0, r.code, r.stderr)
    assert.equal("2\n3\n", h.read(dir .. "/ran")) -- configuration 1 was not run again
    local doc = load.load(dir .. "/r2.json")
    assert.is_true(doc.complete)
    assert.equal(3, #doc.configurations)
    assert.is_true(doc.configurations[1].resumed)
    assert.equal("compiled", doc.configurations[1].status)
  end)

  it("knows the file it would overwrite through a symbolic or hard link to it", function()
    local dir = h.tmpdir()
    local script = h.write(dir .. "/k.lua", (KILL:gsub("return {} end", "wl.skip('done') end")))
    h.run(h.quote(script) .. " --compile-only -o k.json", { cwd = dir, env = "DONE=1" })
    assert.equal(6, #load.load(dir .. "/k.json").configurations)
    assert.is_true(os.execute(("cd %s && ln -s k.json soft.json && ln k.json hard.json"):format(
      h.quote(dir))))
    for _, name in ipairs { "soft.json", "hard.json" } do
      local r = h.run(h.quote(script) .. " --compile-only --resume " .. name
        .. " -o k.json --filter 'i >= 3'",
        { cwd = dir, env = "DONE=1" })
      assert.equal(2, r.code, name .. ": " .. r.stderr)
      assert.matches("it holds 2 finished configurations outside this run's selection", r.stderr)
      assert.equal(6, #load.load(dir .. "/k.json").configurations) -- untouched
    end
  end)

  it("passes the script's own arguments after -- to child processes untouched", function()
    local dir = h.tmpdir()
    local script = h.write(dir .. "/a.lua", [[
local wl = require "wlrun"
local args = { ... }
return wl.scenario { name = "a", params = { M = { 1, 2 } }, run = function() end,
  setup = function() assert(#args == 2 and args[1] == "x" and args[2] == "-o", table.concat(args, " ")) return {} end }
]])
    local r = h.run(h.quote(script) .. " --compile-only --isolate -o a.json -- x -o",
      { cwd = dir, prefix = "timeout 60" })
    assert.equal(0, r.code, r.stderr)
    local doc = load.load(dir .. "/a.json")
    assert.equal(2, #doc.configurations)
    assert.equal("compiled", doc.configurations[2].status)
  end)
end)

describe("standard output for machines", function()
  local PRINTS = [[
local wl = require "wlrun"
return wl.scenario { name = "pr", params = { n = { 1, 2 }, status = { "x" } },
  setup = function(p) print("a line from setup", p.n) io.write("raw\n") return {} end, run = function() end }
]]

  it("holds only the report, whatever the script prints", function()
    local dir = h.tmpdir()
    local r = h.run_script(PRINTS, "--compile-only --format json", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    assert.equal(2, #load.decode(r.stdout, "stdout").configurations)
    assert.matches("a line from setup\t2\nraw\n", r.stderr)
    r = h.run_script(PRINTS, "--compile-only --format csv", { cwd = dir })
    -- a parameter named like a column
    assert.matches("^index,param%.n,param%.status,status,", r.stdout)
    assert.not_matches("a line from setup", r.stdout)
  end)

  it("holds the plan with --dry-run --format json", function()
    local r = h.run_script(PRINTS, "--dry-run --format json", { cwd = h.tmpdir() })
    assert.equal(0, r.code, r.stderr)
    local doc = load.decode(r.stdout, "stdout")
    assert.equal("planned", doc.configurations[2].status)
    assert.same({ n = 2, status = "x" }, doc.configurations[2].params)
  end)
end)
