-- End-to-end, no GPU needed: what users expect of a command line. A mistyped subcommand is
-- named with the one meant; the defaults that --help gives are the ones wlrun uses; every
-- environment variable that wlrun's sources read is in docs/cli.md (the text of --help).
local h = require "helper"

local root = h.source_dir:sub(1, 1) == "/" and h.source_dir
  or (os.getenv("PWD") .. "/" .. h.source_dir)

describe("a mistyped subcommand", function()
  it("is named with the one meant (exit 2), where no file has that name", function()
    for typo, meant in pairs { comapre = "compare", hitsory = "history", exprot = "export",
      inof = "info",
      reprot = "report" } do
      local r = h.run(typo .. " a.json", { cwd = h.tmpdir() })
      assert.equal(2, r.code, typo)
      assert.truthy(
        r.stderr:find(("'%s' is neither a subcommand nor a file: did you mean %s?"):format(typo,
        meant), 1, true),
        r.stderr)
    end
  end)

  it(
    "is still a script where a file has that name, and a word far from any is a missing file "
    .. "(exit 9)", function()
    local dir = h.tmpdir()
    h.write(dir .. "/comapre", "print('ran')\n")
    local r = h.run("comapre", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    assert.equal("ran\n", r.stdout)
    r = h.run("benchmark", { cwd = dir })
    assert.equal(9, r.code)
    assert.truthy(r.stderr:find("cannot open benchmark", 1, true), r.stderr)
  end)
end)

describe("--help's defaults", function()
  it("are the values wlrun uses when the option is not given", function()
    -- each option of OPTIONS with its text, continuation lines joined
    local help = h.run("--help").stdout
    local options, current = {}, nil
    for line in help:match("\nOPTIONS\n(.-)\n%u"):gmatch("[^\n]+") do
      local name = line:match("^    %-%-([%w-]+)") or line:match("^    %-%a, %-%-([%w-]+)")
      if name then
        current = { name = name, text = line }
        options[#options + 1] = current
      elseif current then
        current.text = current.text .. " " .. line
      end
    end
    local dir = h.tmpdir() -- no wlrun.ini there
    local script = h.write(dir .. "/settings.lua", [[
      local c = require "wlrun.core"
      for s, t in pairs(c.settings) do for k, v in pairs(t) do print(s .. "." .. k .. "=" .. tostring(v)) end end]]) -- luacheck: ignore 631
    local function settings(args)
      local r = h.run(args .. " " .. h.quote(script), { cwd = dir })
      assert.equal(0, r.code, r.stderr)
      local t = {}
      for k, v in r.stdout:gmatch("([%w_]+%.[%w_]+)=([^\n]*)") do t[k] = v end
      return t
    end
    local defaults = settings("")
    local checked = 0
    for _, o in ipairs(options) do
      local value = o.text:match("default ([^;%)%s]+)")
      local key = o.name:gsub("-", "_")
      local setting
      for k in pairs(defaults) do
        if k:match("%.(.*)$") == key then setting = k end
      end
      if value and setting and o.name ~= "cache-dir" then -- its default is made from $HOME
        local given = settings(("--%s %s"):format(o.name, h.quote(value)))
        assert.equal(given[setting], defaults[setting],
          ("--%s: the help says 'default %s'"):format(o.name, value))
        checked = checked + 1
      end
    end
    assert.is_true(checked >= 10, "checked " .. checked .. " options")
  end)
end)

describe("docs/cli.md", function()
  it("names every environment variable that wlrun reads", function()
    local names = {}
    local files = io.popen("cd " .. h.quote(root)
      .. " && find src lua -name '*.c' -o -name '*.h' -o -name '*.lua'")
    for path in files:lines() do
      local text = h.read(root .. "/" .. path)
      for name in text:gmatch('getenv%("([%w_]+)"%)') do names[name] = path end
      for name in text:gmatch('"(WLRUN_[%w_]+)"') do names[name] = path end
      -- the launchers' variables, read through shard.detect
      if path == "lua/wlrun/run/shard.lua" then
        for name in text:gmatch('"(%u[%u%d]*_[%u%d_]+)"') do names[name] = path end
      end
    end
    files:close()
    local doc = h.read(root .. "/docs/cli.md")
    local n = 0
    for name, path in pairs(names) do
      n = n + 1
      assert.truthy(doc:find("%f[%w_]" .. name .. "%f[^%w_]"),
        ("%s (read in %s) is not in docs/cli.md"):format(name, path))
    end
    assert.is_true(n >= 20, n .. " names")
  end)
end)

describe("wlrun export -o", function()
  local base = root .. "/tests/fixtures/compare/base.json"

  it(
    "follows the extension (.csv .md), refuses a --format that does not match it or an unknown "
    .. "one, and - is standard output", function()
    local dir = h.tmpdir()
    local r = h.run(("export %s -o %s"):format(h.quote(base), h.quote(dir .. "/x.csv")))
    assert.equal(0, r.code, r.stderr)
    assert.truthy(h.read(dir .. "/x.csv"):find("^index,"))
    r = h.run(("export %s -o %s"):format(h.quote(base), h.quote(dir .. "/x.md")))
    assert.equal(0, r.code, r.stderr)
    assert.truthy(h.read(dir .. "/x.md"):find("^## "))
    r = h.run(("export %s --format csv -o %s"):format(h.quote(base), h.quote(dir .. "/y.json")))
    assert.equal(2, r.code)
    assert.truthy(r.stderr:find("--format csv does not match the extension", 1, true), r.stderr)
    r = h.run(("export %s -o %s"):format(h.quote(base), h.quote(dir .. "/y.xyz")))
    assert.equal(2, r.code)
    assert.truthy(r.stderr:find("cannot tell the format", 1, true), r.stderr)
    r = h.run(("export %s -o -"):format(h.quote(base)))
    assert.equal(0, r.code, r.stderr)
    assert.truthy(r.stdout:find('"benchmarks"', 1, true))
  end)
end)

-- `-o -` and `-` (docs/cli.md): standard output holds the output alone, standard input is read
-- (once) where a file is
describe("- for standard input and output", function()
  local fixtures = root .. "/tests/fixtures/compare/"
  local base, slower = fixtures .. "base.json", fixtures .. "slower.json"
  local json = require "wlrun.json"

  -- stdout is one JSON value and nothing else
  local function parsed(r)
    assert.equal(0, r.code, r.stderr)
    local v, err = json.decode(r.stdout, { array_nulls = false })
    assert.is_table(v, tostring(err) .. ": " .. r.stdout:sub(1, 200))
    return v
  end

  it("run: -o - is the report alone, in json (or --format's format), the script's prints on stderr",
    function()
    local script = [[
      local wl = require "wlrun"
      print("the top level")
      return wl.scenario { name = "s", params = { n = { 1, 2 } }, run = function(p) print("a configuration") end }]] -- luacheck: ignore 631
    local r = h.run_script(script, "--compile-only --arch sm_90 -o -")
    local doc = parsed(r)
    assert.equal("wlrun-results", doc.schema)
    assert.equal(2, #doc.configurations)
    assert.truthy(r.stderr:find("the top level", 1, true), r.stderr)
    assert.truthy(r.stderr:find("a configuration", 1, true), r.stderr)
    r = h.run_script(script, "--compile-only --arch sm_90 --format csv -o -")
    assert.equal(0, r.code, r.stderr)
    assert.truthy(r.stdout:find("^index,"), r.stdout)
    r = h.run_script(script, "--compile-only --arch sm_90 -o - -o -")
    assert.equal(2, r.code)
    assert.truthy(r.stderr:find("-o - (standard output) is given twice", 1, true), r.stderr)
  end)

  it(
    "merge, compare, export: -o - is the output alone; - reads standard input, named <stdin> "
    .. "in errors", function()
    local doc = parsed(h.run("merge - -o -", { stdin = base }))
    assert.equal("wlrun-results", doc.schema)
    assert.equal(4, #doc.configurations)
    local r = h.run("merge - --format csv -o -", { stdin = base })
    assert.equal(0, r.code, r.stderr)
    assert.truthy(r.stdout:find("^index,"), r.stdout)
    doc = parsed(h.run(("compare %s - -o -"):format(h.quote(base)), { stdin = slower }))
    assert.equal("wlrun-compare", doc.schema)
    r = h.run(("compare %s - --format markdown -o -"):format(h.quote(base)), { stdin = slower })
    assert.equal(0, r.code, r.stderr)
    assert.is_nil(r.stdout:find("^%s*{"), r.stdout)
    doc = parsed(h.run("export - -o -", { stdin = base }))
    assert.is_table(doc.benchmarks)
    r = h.run("export -", { stdin = fixtures .. "malformed.json" })
    assert.equal(2, r.code)
    assert.truthy(r.stderr:find("'<stdin>'", 1, true), r.stderr)
  end)

  it("history: add - reads standard input, show -o - is JSON alone", function()
    local db = h.tmpdir() .. "/h.db"
    local r = h.run(("history add - --db %s --commit abc123"):format(h.quote(db)), { stdin = base })
    assert.equal(0, r.code, r.stderr)
    local doc = parsed(h.run(("history show --db %s -o -"):format(h.quote(db))))
    assert.equal(1, #doc.runs)
    assert.truthy(r.stdout:find("<stdin>", 1, true), r.stdout)
  end)

  it("report: a RESULTS file - reads standard input; --html - is refused", function()
    local dir = h.tmpdir() .. "/page"
    local r = h.run(("report --html %s - -q"):format(h.quote(dir)), { stdin = base })
    assert.equal(0, r.code, r.stderr)
    assert.truthy(h.read(dir .. "/index.html"):find("gemm_sweep", 1, true))
    r = h.run(("report --html - %s"):format(h.quote(base)))
    assert.equal(2, r.code)
    assert.truthy(r.stderr:find("--html -: the report is a directory", 1, true), r.stderr)
  end)

  it("two - on one command line are refused (standard input is read once), as are two -o -",
    function()
    for _, args in ipairs { "compare - -", "merge - -", "merge " .. h.quote(base) .. " -o - -o -",
                            "report --html " .. h.quote(h.tmpdir()) .. " - -" } do
      local r = h.run(args, { stdin = base })
      assert.equal(2, r.code, args)
      assert.truthy(r.stderr:find("is given twice", 1, true), args .. ": " .. r.stderr)
      assert.equal("", r.stdout, args)
    end
  end)

  local has_gnuplot = os.execute("command -v gnuplot >/dev/null 2>&1") and true or false
  local plot_it = has_gnuplot and it or function(name) pending(name
    .. " -- skipped: gnuplot is not installed") end
  plot_it("plot: - reads standard input, -o - writes SVG alone", function()
    local r = h.run("plot - -o -", { stdin = fixtures .. "sweep.json" })
    assert.equal(0, r.code, r.stderr)
    assert.truthy(r.stdout:find("^<%?xml"), r.stdout:sub(1, 100))
    assert.truthy(r.stdout:find("</svg>%s*$"), r.stdout:sub(-100))
  end)

  local lib, program = os.getenv("WLRUN_TRACE_LIB"), os.getenv("WLRUN_TRACE_PROGRAM")
  local trace_it = lib and program and it or function(name) pending(name
    .. " -- skipped: WLRUN_TRACE_LIB and WLRUN_TRACE_PROGRAM not set (ctest sets them)") end
  trace_it("trace: -o - is the report alone, in json", function()
    local r = h.run(("trace --warmup 0 -o - -- %s steps"):format(h.quote(program)),
      { env = ("WLRUN_TRACE_LIB=%s"):format(h.quote(lib)) })
    local doc = parsed(r)
    assert.equal("wlrun-results", doc.schema)
    assert.equal(1, #doc.configurations)
  end)
end)
