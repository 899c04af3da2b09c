-- The catalogue of bad inputs, class "errors": a scenario's own mistakes reported as messages
-- about the scenario (never an internal error of wlrun's library), with the configuration
-- failed, the run's exit code saying so, and the outputs kept. See tests/catalogue.lua.
local load = require "wlrun.results.load"
local assert = require "luassert"

-- a one-configuration scenario around BODY (fields of wl.scenario), run under --compile-only
local function scenario(body, params)
  return ([[local wl = require "wlrun"
return wl.scenario { name = "e", params = { M = %s },
  %s }
]]):format(params or "{ 1, 2 }", body)
end

local CO = "--compile-only --arch sm_90"

-- the outputs hold every configuration, the failed ones with their error
local function kept(n_failed)
  return function(_, dir)
    local doc = load.load(dir .. "/r.json")
    local failed = 0
    for _, c in ipairs(doc.configurations) do
      if c.status == "failed" then failed = failed + 1 end
    end
    assert.equal(n_failed, failed)
  end
end

local O = CO .. " -o r.json"

return {
  ---- an error raised in C under wlrun's own Lua library names the script's line ----
  -- a misspelt field of a declaration returned by a tail call (no frame names its line): the
  -- line is read from the script's text, by the field's name where several declarations are
  { name = "a misspelt field in the first of two returned wl.loop's: its own line", code = 1,
    script = "local wl = require 'wlrun'\nlocal x = true\nif x then return wl.loop{ name = 'a', "
      .. "setp = function() end } end\nreturn wl.loop{ name = 'b', step = function() end }\n",
    stderr = "^wlrun: [^\n]*script%.lua:3: wl%.loop: unknown field 'setp'" },
  { name = "a misspelt field in a loop returned through a local name: its line", code = 1,
    script = "local wl = require 'wlrun'\nlocal L = wl.loop; return L{ name = 'a', "
      .. "setp = function() end }\n",
    stderr = "^wlrun: [^\n]*script%.lua:2: wl%.loop: unknown field 'setp'" },
  { name = "a misspelt field in a scenario that a local function returns: its line", code = 1,
    script = "local wl = require 'wlrun'\nlocal function mk() return wl.scenario{ name = 'x', "
      .. "runn = function() end } end\nlocal z = 2\nreturn mk()\n",
    stderr = "^wlrun: [^\n]*script%.lua:2: wl%.scenario: unknown field 'runn'" },
  { name = "wl.skip outside a configuration: the script's line", code = 1,
    script = "local wl = require 'wlrun'\nwl.skip()\n",
    stderr = "^wlrun: [^\n]*script%.lua:2: wl%.skip skips a configuration" },
  { name = "a freed tensor under wl.bench: the script's wl.bench line, not bench.lua's", code = 1,
    args = CO,
    script = [[local wl = require "wlrun"
local t = wl.tensor { 16 }
local l = wl.kernel { 'extern "C" __global__ void f(float* p) {}', name = "f" }:bind { grid = 1, block = 1, args = { t } }
t:free()
wl.bench(l, { iters = 3, warmup = 1 })
]],
      stderr
      =
      "^wlrun: [^\n]*script%.lua:5: launch: kernel 'f': the tensor bound to argument 1 used "
      .. "after free" },
  { name = "a freed tensor under wl.graph's capture: the script's line", code = 1, args = CO,
    script = [[local wl = require "wlrun"
local t = wl.tensor { 16 }
local l = wl.kernel { 'extern "C" __global__ void f(float* p) {}', name = "f" }:bind { grid = 1, block = 1, args = { t } }
t:free()
local g = wl.graph(function() l() end)
]],
      stderr
      =
      "^wlrun: [^\n]*script%.lua:5: launch: kernel 'f': the tensor bound to argument 1 used "
      .. "after free" },
  ---- every error raised from C has a kind (its exit code) and names the script's line: one case
  ---- a family (argument checks worded as Lua words them, json, stats, settings, processes, SQLite)
  { name = "C argument check (a range): its kind and the script's line", code = 1, args = CO,
    script = 'local wl = require "wlrun"\nwl.stats.percentile({ 1 }, 101)\n',
    stderr
      =
      "^wlrun: [^\n]*script%.lua:2: bad argument #2 to 'percentile' %(percentile from 0 to 100 "
      .. "expected%)" },
  { name
    = "C argument check (a type, as luaL_checknumber words it): its kind and the script's line",
    code = 1, args = CO,
    script = 'local wl = require "wlrun"\nwl.sleep("soon")\n',
    stderr
      = "^wlrun: [^\n]*script%.lua:2: bad argument #1 to 'sleep' %(number expected, got string%)" },
  { name = "C argument check (a method's object argument): its kind and the script's line",
    code = 1, args = CO,
    script = 'local wl = require "wlrun"\nlocal s = wl.stream()\ns:wait("e")\n',
    stderr
      =
      "^wlrun: [^\n]*script%.lua:3: bad argument #1 to 'wait' %(wlrun%.event expected, got "
      .. "string%)" },
  { name = "C argument check (an option word): its kind and the script's line", code = 1, args = CO,
    script = 'local wl = require "wlrun"\nwl.error("weird", "x")\n',
    stderr = "^wlrun: [^\n]*script%.lua:2: bad argument #1 to 'error' %(invalid option 'weird'%)" },
  { name = "C argument check: the error is a table with its kind, not a string", code = 0,
    args = CO,
    script
      =
      'local wl = require "wlrun"\nlocal ok, e = pcall(wl.sleep, "soon")\nprint(ok, type(e), '
      .. 'e.kind, tostring(e))\n',
    stdout
      =
      "^false\ttable\tscript\tbad argument #1 to '[%w.]*sleep' %(number expected, got string%)\n" },
  { name = "json.encode of a value it cannot write: its kind and the script's line", code = 1,
    args = CO,
    script = 'local json = require "wlrun.json"\nlocal v = { f = print }\njson.encode(v)\n',
    stderr
      = "^wlrun: [^\n]*script%.lua:3: json%.encode: a function at f cannot be written as JSON" },
  { name = "json.encode's bad option: its kind and the script's line", code = 1, args = CO,
    script = 'local json = require "wlrun.json"\njson.encode({}, { indent = 2 })\n',
    stderr
      =
      "^wlrun: [^\n]*script%.lua:2: json%.encode: option 'indent' must be a boolean, not "
      .. "a number" },
  { name = "json.decode's bad option: its kind and the script's line", code = 1, args = CO,
    script = 'local json = require "wlrun.json"\njson.decode("{}", { strict = true })\n',
    stderr = "^wlrun: [^\n]*script%.lua:2: json%.decode: unknown option 'strict'" },
  { name = "json.array of a table marked json.object: its kind and the script's line", code = 1,
    args = CO,
    script = 'local json = require "wlrun.json"\nlocal t = json.object({})\njson.array(t)\n',
    stderr = "^wlrun: [^\n]*script%.lua:3: json%.array: the table is marked json%.object already" },
  { name = "wl.stats of a sample that is no number: its kind and the script's line", code = 1,
    args = CO,
    script = 'local wl = require "wlrun"\nwl.stats.summary { 1, "x" }\n',
    stderr = "^wlrun: [^\n]*script%.lua:2: sample 2 is string, expected a finite number" },
  { name = "a setting that does not exist, asked of C: its kind and the script's line", code = 1,
    args = CO,
    script = 'local core = require "wlrun.core"\ncore.setting_value("run", "nope", 1)\n',
    stderr = "^wlrun: [^\n]*script%.lua:2: unknown setting run%.nope" },
  { name = "a child's command line holding a NUL byte: its kind and the script's line", code = 1,
    args = CO,
    script = 'local process = require "wlrun.process"\nprocess.spawn({ "echo", "a\\0b" })\n',
    stderr
      =
      "^wlrun: [^\n]*script%.lua:2: argument 2 of the command line: a string without NUL bytes "
      .. "expected" },
  { name = "a child's command line holding a NUL byte, its signals passed on: the script's line",
    code = 1, args = CO,
    script
      =
      'local process = require "wlrun.process"\nprocess.spawn({ "echo", "a\\0b" }, { '
      .. 'forward_signals = true })\n',
    stderr
      =
      "^wlrun: [^\n]*script%.lua:2: argument 2 of the command line: a string without NUL bytes "
      .. "expected" },
  { name = "SQLite's bad option: its kind and the script's line", code = 1, args = CO,
    script = 'local sqlite = require "wlrun.sqlite"\nsqlite.open("x.db", { timeout = "long" })\n',
    stderr
      = "^wlrun: [^\n]*script%.lua:2: bad argument #2 to 'open' %(timeout: seconds expected%)" },
  { name = "standard output that cannot be held (no file descriptor left): an io error (exit 9)",
    code = 9, args = CO,
    prefix = "prlimit --nofile=256 --",
    script = [[local process = require "wlrun.process"
local files = {}
while true do local f = io.open("/dev/null") if not f then break end files[#files + 1] = f end
process.hold_stdout()
]], stderr = "^wlrun: [^\n]*script%.lua:4: cannot hold standard output: " },
  { name = "error{} with a kind wlrun does not know", code = 1, args = O, check = kept(2),
    script = scenario(
      "setup = function() error({ kind = 'bogus', message = 'my own error' }) end, run = "
      .. "function() end"),
    stderr = "configuration 1 %(M=1%) failed: my own error" },
  { name = "error{} with no message", code = 1, args = O, check = kept(2),
    script = scenario("setup = function() error({ code = 3 }) end, run = function() end"),
    stderr = "an error value that is a table without a message" },
  { name = "error{} whose message is a table", code = 1, args = O, check = kept(2),
    script = scenario(
      "setup = function() error(setmetatable({ message = { 1, 2 } }, {})) end, run = "
      .. "function() end"),
    stderr = "configuration 1 %(M=1%) failed: an error value: table" },
  { name = "--resume given to a script that returns no scenario", code = 2,
    args = "--resume r.json",
    script = "print('plain')", stderr = "%-%-resume applies to scenarios" },
  { name = "--shard given to a script that returns no scenario", code = 2, args = "--shard 1/2",
    script = "print('plain')", stderr = "%-%-shard applies to scenarios" },
  { name = "--format given to a script that returns no scenario", code = 2, args = "--format json",
    script = "print('plain')", stderr = "%-%-format applies to scenarios" },
  { name = "--no-prepare given to a script that returns no scenario", code = 2,
    args = "--no-prepare",
    script = "print('plain')", stderr = "%-%-no%-prepare applies to scenarios" },
  { name = "error() with nothing", code = 1, args = O, check = kept(2),
    script = scenario("setup = function() error() end, run = function() end"),
    stderr = "configuration 1 %(M=1%) failed: nil" },
  { name = "run names a field of setup's result that is not work", code = 1, args = O,
    check = kept(2),
    script = scenario("setup = function() return { go = 5 } end, run = 'go'"),
    stderr = "run = 'go': setup's result field 'go' is a number, not work: a bound launch" },
  { name = "run names a field that setup's result lacks", code = 1, args = O,
    script = scenario("setup = function() return { } end, run = 'go'"),
    stderr = "run = 'go', but setup's result has no field 'go'" },
  { name = "setup returns a number and run names a field", code = 1, args = O,
    script = scenario("setup = function() return 5 end, run = 'go'"),
    stderr = "setup's result has no field 'go'" },
  { name = "a list of work with a number in it", code = 1, args = O,
    script = scenario("setup = function() return { go = { function() end, 3 } } end, run = 'go'"),
    stderr = "setup's result field 'go' is a table, not work" },
  { name = "work(p) returns a string", code = 1, args = O, check = kept(2),
    script = scenario("run = function() end, work = function() return 'lots' end"),
    stderr = "work%(p%) must return a table {flops =, bytes =}, got a string" },
  { name = "work(p) returns NaN flops", code = 1, args = O,
    script = scenario("run = function() end, work = function() return { flops = 0 / 0 } end"),
    stderr = "work%(p%)%.flops must be a finite number >= 0" },
  { name = "work(p) returns negative bytes", code = 1, args = O,
    script = scenario("run = function() end, work = function() return { bytes = -1 } end"),
    stderr = "work%(p%)%.bytes must be a finite number >= 0, got %-1" },
  { name = "work(p) returns a string of flops", code = 1, args = O,
    script = scenario("run = function() end, work = function() return { flops = '1e9' } end"),
    stderr = "work%(p%)%.flops must be a finite number >= 0, got 1e9" },
  { name = "work(p) returns a field it does not know", code = 1, args = O,
    script = scenario("run = function() end, work = function() return { flop = 1 } end"),
    stderr
      =
      "script%.lua:%d+: work%(p%) returned an unknown field 'flop' %(fields: flops, bytes, "
      .. "reads, writes, items, dtype, metrics%)" },
  { name = "work(p) returns bytes that are not reads + writes", code = 1, args = O,
    script = scenario(
      "run = function() end, work = function() return { reads = 2, writes = 1, bytes = 4 } end"),
    stderr = "work%(p%)%.bytes %(4%) is not reads %+ writes %(2 %+ 1 = 3%)" },
  { name = "work(p) returns a custom metric with a field it does not know", code = 1, args = O,
    script = scenario(
      "run = function() end, work = function() return { metrics = { tok = { value = 1, units = "
      .. "'x' } } } end"),
    stderr = "work%(p%)%.metrics%.tok has an unknown field 'units' %(fields: value, unit, rate%)" },
  { name = "work(p) returns a dtype it does not know", code = 1, args = O, check = kept(2),
    script = scenario(
      "run = function() end, work = function() return { flops = 1, dtype = 'fp8' } end"),
    stderr = "work%(p%)%.dtype must be one of f32, tf32, bf16, f16, got fp8" },
  { name = "baseline(p) returns a string", code = 1, args = O, check = kept(2),
    script = scenario("run = function() end, baseline = function() return 'cublas' end"),
    stderr
      =
      "configuration 1 %(M=1%) failed: baseline%(p%) must return a table of parameters or nil, "
      .. "got a string" },
  { name = "baseline(p) names a parameter the scenario does not have", code = 1, args = O,
    check = kept(2),
    script = scenario("run = function() end, baseline = function() return { variant = 'lib' } end"),
    stderr = "baseline%(p%) returned 'variant', which is not a parameter of the scenario" },
  { name = "baseline(p) gives a parameter a value of another type", code = 1, args = O,
    check = kept(2),
    script = scenario("run = function() end, baseline = function() return { M = 'one' } end"),
    stderr = "baseline%(p%)%.M must be a number like the parameter, got a string" },
  { name = "baseline is not a function", code = 1, args = O,
    script = scenario("run = function() end, baseline = { M = 1 }"),
    stderr = "field 'baseline' must be a function, got a table" },
  { name = "prepare is not a function", code = 1, args = O,
    script = scenario("run = function() end, prepare = { 'cublas' }"),
    stderr = "field 'prepare' must be a function, got a table" },
  { name = "an error in prepare stops the run before its first configuration, naming the line",
    code = 1, args = O,
    script = scenario("run = function() end, prepare = function(c) return c[1].M.x end"),
    stderr = "script%.lua:3: attempt to index a number value %(field 'M'%)",
    check = function(_, dir) assert.is_nil(io.open(dir .. "/r.json")) end },
  { name = "an error in setup names the script's line", code = 1, args = O, check = kept(2),
    script = scenario("setup = function(p) local t = nil return t.x end, run = function() end"),
    stderr = "script%.lua:3: attempt to index a nil value" },
  { name = "an error in run names the script's line", code = 1, args = O,
    script = scenario("run = function(p) return p.M.x.y end"),
    stderr = "script%.lua:3: attempt to index a number value %(field 'M'%)" },
  { name = "--resume with a directory", code = 9, args = CO .. " --resume .",
    script = scenario("run = function() end"), stderr
      = "%-%-resume: cannot read '%.': it is a directory, not a file" },
  { name = "--resume with a journal of another scenario", code = 2,
    args = CO .. " --resume j.journal",
    files = {
      ["j.journal"]
      =
      '{"schema":"wlrun-journal","version":1,"document":{"schema":"wlrun-results","version":1,'
        .. '"scenario":{"name":"other"}}}\n' },
    script = scenario("run = function() end"), stderr
      = "its scenario is 'other', this one is 'e'" },
  { name = "--resume with an empty file", code = 2, args = CO .. " --resume empty.json",
    files = { ["empty.json"] = "" },
    script = scenario("run = function() end"), stderr
      = "'empty%.json' is not valid JSON: line 1, column 1: the text is empty" },
  { name = "-p given to a script that returns no scenario", code = 2, args = "-p M=1",
    script = "print('plain')",
      stderr = "%-p applies to scenarios, and .*script%.lua returned no wl%.scenario" },
  { name = "-o given to a script that returns no scenario", code = 2, args = "-o out.json",
    script = "print('plain')", stderr = "%-o applies to scenarios" },
  { name = "--dry-run given to a script that returns no scenario", code = 2, args = "--dry-run",
    script = "print('plain')", stderr = "%-%-dry%-run applies to scenarios" },
  { name = "-o into a missing directory is refused before anything runs", code = 9,
    args = CO .. " -o ok.json -o missing/dir/r.json",
    script = scenario("setup = function() error('must not run') end, run = function() end"),
    stderr = "cannot write results to 'missing/dir/r%.json': No such file or directory",
    check = function(r) assert.not_matches("must not run", r.stderr) end },
  { name = "-o into a missing directory on a GPU, before the first configuration", code = 9,
    gpu = true,
    args = "-o missing/r.json", script = scenario(
      "setup = function() error('must not run') end, run = function() end"),
    stderr = "cannot write results to 'missing/r%.json'",
    check = function(r) assert.not_matches("must not run", r.stderr) end },
  { name = "check(p, state) returns a table", code = 1, gpu = true,
    args = "-o r.json --iters 3 --warmup 0",
    script = scenario("run = function() end, check = function() return {} end"),
    stderr = "check%(p, state%) must return true or false %(and a message%), got a table" },
  { name = "check(p, state) returns nothing", code = 1, gpu = true, args = "--iters 3 --warmup 0",
    script = scenario("run = function() end, check = function() end"),
    stderr = "check%(p, state%) must return true or false %(and a message%), got nothing" },
  { name = "check(p, state) raises", code = 1, gpu = true, args = "--iters 3 --warmup 0",
    script = scenario("run = function() end, check = function() error('wrong sum') end"),
    stderr = "script%.lua:3: wrong sum" },
  { name = "error() of a 3 MB message: printed cut, at once", code = 1,
    script = "error(string.rep('x', 3e6) .. '\\27[2J')",
    stderr = "script%.lua:1: x+%.%.%. %(%d+ more bytes of the message not shown%)\n",
    check = function(r) assert.is_true(#r.stderr < 1100000, "the whole message was printed") end },

  { name = "wl.settings.run = nil: read-only, said at the script's line", code = 1,
    script = "local wl = require 'wlrun'\nwl.settings.run = nil\nprint(wl.bench(function() end))",
    stderr
      =
      "script%.lua:2: wl%.settings%.run cannot be set: a setting comes from wlrun%.ini, the "
      .. "command line" },
  { name = "wl.settings.run.iters = 'x': read-only", code = 1,
    script = "local wl = require 'wlrun'\nwl.settings.run.iters = 'x'",
    stderr = "script%.lua:2: wl%.settings%.run%.iters cannot be set" },

  { name = "WLRUN_LUA_DIR naming nothing: said, not replaced by the embedded library", code = 9,
    env = "WLRUN_LUA_DIR=/nonexistent",
    script = "print('ran')", stderr = "^wlrun: WLRUN_LUA_DIR=/nonexistent: not a directory" },
  { name = "wl.zip of axes of two lengths names both", code = 1,
    script = "local wl = require 'wlrun'\nlocal z = wl.zip { A = { 1, 2 }, B = { 1 } }",
    stderr
      =
      "script%.lua:2: wl%.zip: axes must have the same number of values %([AB] has %d, [AB] %d%)" },

}
