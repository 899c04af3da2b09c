-- End-to-end: the wlrun binary on small scripts; output and exit codes (docs/cli.md).
local h = require "helper"

describe("wlrun command line", function()
  it("prints its version", function()
    local r = h.run("--version")
    assert.equal(0, r.code)
    assert.matches("^wlrun %d+%.%d+%.%d+ %(Lua 5%.4%.%d+, CUDA runtime %d+%.%d, NVRTC %d+%.%d%)\n$",
      r.stdout)
  end)

  it("prints the help from docs/cli.md", function()
    local r = h.run("--help")
    assert.equal(0, r.code)
    assert.equal(h.read(h.source_dir .. "/docs/cli.md"), r.stdout)
  end)

  it("refuses an unknown option with exit code 2", function()
    local r = h.run("--frobnicate x.lua")
    assert.equal(2, r.code)
    assert.matches("unknown option '%-%-frobnicate'", r.stderr)
    assert.matches("Try 'wlrun %-%-help'", r.stderr)
  end)

  it("refuses a bad option value with exit code 2", function()
    local r = h.run("x.lua --iters -4")
    assert.equal(2, r.code)
    assert.matches("%-%-iters: expected a whole number from 1", r.stderr)
  end)

  it("wants a script", function()
    local r = h.run("")
    assert.equal(2, r.code)
    assert.matches("no script given", r.stderr)
  end)

  it("says clearly that a missing script cannot be opened (exit 9)", function()
    local r = h.run("does/not/exist.lua")
    assert.equal(9, r.code)
    assert.matches("cannot open does/not/exist.lua", r.stderr)
  end)
end)

describe("wlrun running a script", function()
  it("passes arguments as arg and ...", function()
    local r = h.run_script("print(arg[0]:match('script.lua$'), arg[1], select('#', ...), ...)",
      "one -- --two")
    assert.equal(0, r.code, r.stderr)
    assert.equal("script.lua\tone\t2\tone\t--two\n", r.stdout)
  end)

  it("reports a runtime error with file:line and a traceback, exit 1", function()
    local r,
      path = h.run_script("local function inner()\n  local t = nil\n  return t.x\nend\ninner()\n")
    assert.equal(1, r.code)
    assert.truthy(r.stderr:find(path .. ":3: attempt to index a nil value", 1, true), r.stderr)
    assert.matches("stack traceback:", r.stderr)
    assert.truthy(r.stderr:find(path .. ":5: in main chunk", 1, true), r.stderr)
  end)

  it("reports a syntax error with file:line, exit 1", function()
    local r, path = h.run_script("local x = = 2\n")
    assert.equal(1, r.code)
    assert.truthy(r.stderr:find(path .. ":1:", 1, true), r.stderr)
  end)

  it("reports errors that are not strings without crashing", function()
    local r = h.run_script("error({})")
    assert.equal(1, r.code)
    assert.matches("error object is a table value", r.stderr)
    r = h.run_script("error(setmetatable({}, {__tostring = function() return 'custom' end}))")
    assert.equal(1, r.code)
    assert.matches("wlrun: custom", r.stderr)
    r = h.run_script("error()")
    assert.equal(1, r.code)
    assert.matches("error object is a nil value", r.stderr)
  end)

  it("maps error kinds to exit codes", function()
    local codes = { usage = 2, config = 3, no_device = 4, cuda = 5, compile = 6, regression = 7,
                    io = 9, script = 1, timeout = 5, crash = 1, interrupted = 130 }
    for kind, code in pairs(codes) do
      local r = h.run_script(("require('wlrun').error(%q, 'x')"):format(kind))
      assert.equal(code, r.code, kind .. ": " .. r.stderr)
    end
  end)

  it("has no kind 'unavailable' and no exit code 8", function()
    local r = h.run_script("require('wlrun').error('unavailable', 'x')")
    assert.equal(1, r.code, r.stderr)
    assert.matches("invalid option 'unavailable'", r.stderr)
    assert.falsy(h.read(h.source_dir .. "/docs/cli.md"):find("\n    8 "),
      "docs/cli.md lists exit code 8")
  end)

  it("survives errors in coroutines, __gc and deep recursion", function()
    local r = h.run_script([[
      local co = coroutine.wrap(function() error("in coroutine") end)
      print(pcall(co))
      setmetatable({}, {__gc = function() error("in gc") end})
      collectgarbage()
      local function rec(n) return rec(n + 1) + 1 end
      print(pcall(rec, 1))
      print("still here")
    ]])
    assert.equal(0, r.code, r.stderr)
    assert.matches("still here", r.stdout)
    assert.matches("stack overflow", r.stdout)
  end)

  it("stops on Ctrl-C with exit code 130", function()
    local r = h.run_script("io.stdout:write('started\\n'); io.stdout:flush(); while true do end",
      "",
      { prefix = "timeout --preserve-status -s INT 2" })
    assert.equal(130, r.code, r.stderr)
    assert.matches("interrupted", r.stderr)
  end)

  it("validates a returned scenario, naming the file and line", function()
    local r = h.run_script(
      "local wl = require 'wlrun'\nlocal s = wl.scenario { name = 'demo' }\nreturn s\n")
    assert.equal(1, r.code)
    assert.matches("script.lua:2: 'run' is required: a function%(p, state%)", r.stderr)
    r = h.run_script(
      "return require('wlrun').scenario { name = 'tail', run = function() end, colour = 1 }\n")
    assert.equal(1, r.code)
    -- a tail call: the line read from the script's text
    assert.matches("script.lua:1: wl.scenario: unknown field 'colour'", r.stderr)
  end)

  it("loads the Lua library from WLRUN_LUA_DIR when set", function()
    local dir = h.tmpdir()
    assert(os.execute("mkdir -p " .. dir .. "/wlrun"))
    h.write(dir .. "/wlrun/init.lua", "return { version = 'from-dir' }")
    local r = h.run_script("print(require('wlrun').version)", "", { env = "WLRUN_LUA_DIR=" .. dir })
    assert.equal(0, r.code, r.stderr)
    assert.equal("from-dir\n", r.stdout)
  end)

  it("names embedded library files by their source path", function()
    local r = h.run_script("print(debug.getinfo(require('wlrun').scenario, 'S').source)")
    assert.equal("@lua/wlrun/init.lua\n", r.stdout)
  end)
end)

describe("wlrun info", function()
  it("prints versions, and each device or why there is none (exit 4)", function()
    local r = h.run("info")
    assert.matches("^wlrun %S+, Lua 5%.4, NVRTC %d+%.%d", r.stdout)
    if h.has_gpu then
      assert.equal(0, r.code, r.stderr)
      assert.matches("device 0: ", r.stdout)
      assert.matches("peak bandwidth", r.stdout)
    else
      assert.equal(4, r.code)
      assert.matches("no CUDA device", r.stderr)
      assert.not_matches("traceback", r.stderr)
    end
  end)
end)

describe("wlrun.ini", function()
  it("reports an unknown key with its file and line, exit 3", function()
    local dir = h.tmpdir()
    h.write(dir .. "/wlrun.ini", "[run]\n; comment\nwarmpu = 3\n")
    local r = h.run_script("print('ran')", "", { cwd = dir })
    assert.equal(3, r.code)
    assert.matches("wlrun.ini:3: unknown key 'warmpu' in section %[run%]", r.stderr)
    assert.equal("", r.stdout)
  end)

  it("reports a bad value with its file and line, exit 3", function()
    local dir = h.tmpdir()
    local ini = h.write(dir .. "/other.ini", "[output]\nformat = xlsx\n")
    local r = h.run_script("print('ran')", "--config " .. h.quote(ini))
    assert.equal(3, r.code)
    assert.matches(
      "other.ini:2: output.format: expected one of table|plain|csv|markdown|json, got 'xlsx'",
      r.stderr)
  end)

  it("says when --config names a file that cannot be read, exit 9", function()
    local r = h.run_script("print('ran')", "--config /nonexistent/wlrun.ini")
    assert.equal(9, r.code)
    assert.matches("/nonexistent/wlrun.ini: cannot read configuration", r.stderr)
  end)

  it("is found above the working directory up to the repository's root, as git finds its config",
    function()
    local root = h.tmpdir()
    assert(os.execute("mkdir -p " .. h.quote(root .. "/repo/.git") .. " "
      .. h.quote(root .. "/repo/bench/deep")))
    h.write(root .. "/repo/wlrun.ini",
      "[compile]\narch = sm_80\ncache_dir = .kc\n[history]\ndb = h/x.db\n")
    local show
      =
      "local s = require('wlrun').settings print(s.compile.arch, s.compile.cache_dir, s.history.db)"
    for _, at in ipairs { { "repo", "" }, { "repo/bench", "../" },
      { "repo/bench/deep", "../../" } } do
      local r = h.run_script(show, "", { cwd = root .. "/" .. at[1] })
      assert.equal(0, r.code, r.stderr)
      -- paths: the file's directory
      assert.equal(("sm_80\t%s.kc\t%sh/x.db\n"):format(at[2], at[2]), r.stdout, at[1])
    end
    -- not above the repository's root, and not at all outside a repository
    h.write(root .. "/wlrun.ini", "[compile]\narch = sm_90\n")
    assert(os.execute("mkdir -p " .. h.quote(root .. "/plain/sub")))
    local r = h.run_script("print(require('wlrun').settings.compile.arch)", "",
      { cwd = root .. "/plain/sub" })
    assert.equal("nil\n", r.stdout)
    r = h.run_script("print(require('wlrun').settings.compile.arch)", "",
      { cwd = root .. "/repo/bench" })
    assert.equal("sm_80\n", r.stdout)
    -- an error names the file found
    h.write(root .. "/repo/wlrun.ini", "[run]\nwarmpu = 3\n")
    r = h.run_script("print('ran')", "", { cwd = root .. "/repo/bench/deep" })
    assert.equal(3, r.code)
    assert.matches("^wlrun: %.%./%.%./wlrun%.ini:2: unknown key 'warmpu'", r.stderr)
  end)

  it("accepts an empty or comment-only file", function()
    local dir = h.tmpdir()
    h.write(dir .. "/wlrun.ini", "; nothing set\n")
    local r = h.run_script("print('ran')", "", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
  end)
end)

describe("the main command", function()
  it("says clearly when there is no GPU (exit 4), and lists its configurations with --dry-run",
    function()
    if not h.has_gpu then
      local r = h.run("scenarios/gemm_sweep.lua", { cwd = h.source_dir })
      assert.equal(4, r.code, r.stderr)
      assert.matches("^wlrun: scenarios/gemm_sweep.lua needs a CUDA device: ", r.stderr)
      assert.not_matches("traceback", r.stderr)
    end
    local r = h.run("scenarios/gemm_sweep.lua --dry-run", { cwd = h.source_dir })
    assert.equal(0, r.code, r.stderr)
    assert.matches("^gemm_sweep: 70 configurations", r.stdout)
  end)
end)

describe("examples", function()
  it("examples/hello.lua runs", function()
    local r = h.run("examples/hello.lua", { cwd = h.source_dir })
    assert.equal(0, r.code, r.stderr)
    assert.matches("median 1.000", r.stdout)
  end)
end)
