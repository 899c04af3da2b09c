-- End-to-end, no GPU needed: wlrun installed like a tool (docs/install.md). `cmake --install`
-- into a temporary prefix, and the .deb that CPack makes unpacked by dpkg into a fresh root:
-- from another directory, the installed wlrun prints its version, says there is no GPU (exit 4,
-- 0 on a GPU machine), compiles a shipped recipe with --compile-only and finds its trace
-- library; the man page holds every line of `wlrun --help` and of each `wlrun TOOL --help` in
-- its sections, and roff, man and lexgrog read it cleanly; the shell completions offer
-- subcommands, options, the values of options with a fixed set and a scenario's parameters from
-- the installed binary; lintian finds neither an error nor a warning in the .deb.
local h = require "helper"

local q = h.quote
local bin = h.bin:sub(1, 1) == "/" and h.bin or (h.source_dir .. "/" .. h.bin)
local build = bin:match("^(.*)/[^/]*$")

local function sh(cmd)
  local out = os.tmpname()
  local _, _, code = os.execute(("(%s) >%s 2>&1"):format(cmd, out))
  local text = h.read(out)
  os.remove(out)
  return code, text
end

local function exists(path) return (os.execute("test -e " .. q(path))) end

local function have(program) return (os.execute("command -v " .. program .. " >/dev/null 2>&1")) end

-- runs an installed wlrun from a directory of its own, with no environment pointing into the build
local function run_installed(wlrun, args, cwd)
  local r = h.run(args, { cwd = cwd or h.tmpdir(),
    env = "env -u WLRUN_TRACE_LIB -u WLRUN_LUA_DIR" })
  return r
end

local prefix -- the install tree, made once
local function installed()
  if not prefix then
    prefix = h.tmpdir() .. "/prefix"
    local code, out = sh(("cmake --install %s --prefix %s"):format(q(build), q(prefix)))
    assert(code == 0, out)
  end
  return prefix
end

-- what an installed wlrun must do from anywhere; root is the prefix (the tree or the .deb's /usr)
local function check_runs(root)
  local saved = h.bin
  h.bin = root .. "/bin/wlrun"
  local ok, err = pcall(function()
    local v = run_installed(root, "--version")
    assert.equal(0, v.code, v.stderr)
    assert.truthy(v.stdout:find("^wlrun %d+%.%d+%.%d+"), v.stdout)

    local info = run_installed(root, "info")
    assert.equal(h.has_gpu and 0 or 4, info.code, info.stderr)

    local c = run_installed(root, "--compile-only --arch sm_90 "
      .. q(root .. "/share/wlrun/scenarios/reduction.lua"))
    assert.equal(0, c.code, c.stderr)
    assert.truthy(c.stdout:find("reduce_tree", 1, true), c.stdout)

    -- the trace library is found in ../lib/wlrun/ (a missing one is an I/O error naming it)
    local t = run_installed(root, "trace -q -- true")
    assert.falsy(t.stderr:find("libwlrun_trace.so is missing", 1, true), t.stderr)
    assert.truthy(t.stderr:find("the program wrote no trace", 1, true), t.stderr)
  end)
  h.bin = saved
  assert(ok, err)
end

-- text with its runs of white space (newlines too) made one space
local function squeeze(text) return (text:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")) end

-- the man page's source (gzip'd as installed)
local function man_source(path)
  local code, text = sh("gzip -dc " .. q(path))
  assert(code == 0, text)
  return text
end

-- the man page's words, roff taken away: its requests and font changes dropped, escapes made
-- characters, its runs of white space one space
local function man_text(source)
  local lines = {}
  for line in source:gmatch("([^\n]*)\n") do
    if not line:find("^%.") then lines[#lines + 1] = line end
  end
  local text = table.concat(lines, "\n")
  text = text:gsub("\\f[BIRP]", ""):gsub("\\%-", "-"):gsub("\\&", ""):gsub("\\e", "\\")
  return squeeze(text)
end

-- the page as man shows it, at a width that breaks no option, overstrikes removed
local function man_rendered(path)
  local code, text = sh("gzip -dc " .. q(path) .. " | groff -man -Tascii -rLL=200n -P-c -P-b -P-u")
  assert(code == 0, text)
  return (text:gsub(".\b", ""))
end

-- the subcommands: the words after "wlrun" in USAGE
local function tools_of(help)
  local tools, seen = {}, {}
  local usage = help:match("\nUSAGE\n(.-)\n\n")
  for tool in usage:gmatch("\n? *wlrun ([a-z]+)") do
    if not seen[tool] then tools[#tools + 1], seen[tool] = tool, true end
  end
  return tools
end

-- the options that a help lists: at the start of a line, after ", " or after two spaces (the
-- completions read them the same way)
local function options_of(help)
  local set = {}
  for line in help:gmatch("[^\n]+") do
    for _, pat in ipairs { "^ +(%-%-?%a[%w%-]*)", ", (%-%-?%a[%w%-]*)", "  (%-%-?%a[%w%-]*)" } do
      for o in line:gmatch(pat) do set[o] = true end
    end
  end
  return set
end

describe("cmake --install", function()
  it(
    "puts the binary, the trace library, scenarios, examples, docs, man page and completions "
    .. "under the prefix", function()
    local p = installed()
    for _, f in ipairs { "bin/wlrun", "lib/wlrun/libwlrun_trace.so", "include/wlrun/work.h",
      "share/wlrun/scenarios/gemm_sweep.lua", "share/wlrun/scenarios/kernels/gemm.cu",
      "share/wlrun/examples/axpy.lua", "share/wlrun/docs/cli.md", "share/man/man1/wlrun.1.gz",
      "share/doc/wlrun/copyright", "share/doc/wlrun/changelog.gz",
      "share/bash-completion/completions/wlrun", "share/zsh/vendor-completions/_wlrun" } do
      assert.truthy(exists(p .. "/" .. f), "missing " .. f)
    end
  end)

  it("gives a wlrun that runs from any directory and finds what it needs relative to itself",
    function()
    check_runs(installed())
  end)

  it(
    "installs a man page with every line of --help and of each subcommand's --help, in the "
    .. "sections of a man page", function()
    local main = h.run("--help")
    assert.equal(0, main.code)
    local page = installed() .. "/share/man/man1/wlrun.1.gz"
    local source = man_source(page)
    local text = man_text(source)

    local headings = {}
    for heading in source:gmatch('\n%.SH "?([^"\n]*)"?') do headings[#headings + 1] = heading end
    assert.same({ "NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "CONFIGURATION", "COMMANDS",
      "EXIT STATUS",
      "ENVIRONMENT", "FILES", "SEE ALSO" }, headings)

    -- each line of --help, but for the short sections of the subcommands ("MERGE (...; wlrun merge
    -- --help)"), whose own help the page holds, and the headings (EXIT CODES is EXIT STATUS)
    local skip = false
    for line in main.stdout:gmatch("[^\n]+") do
      if line:find("^[A-Z][A-Z ,]*[A-Z]$") or line:find("^[A-Z][A-Z ,]*[A-Z] %(") then
        skip = line:find("%-%-help%)$") ~= nil
      elseif not skip then
        assert.truthy(text:find(squeeze(line), 1, true),
          "the man page lacks this line of --help: " .. line)
      end
    end
    local tools = tools_of(main.stdout)
    assert.truthy(#tools >= 9, table.concat(tools, " "))
    for _, tool in ipairs(tools) do
      assert.truthy(source:find('\n.SS "wlrun ' .. tool .. '"\n', 1, true),
        "no subsection for " .. tool)
      local r = h.run(tool .. " --help")
      assert.equal(0, r.code, r.stderr)
      if r.stdout ~= main.stdout then
        for line in r.stdout:gmatch("[^\n]+") do
          line = line:gsub("^Usage: ", "")
          assert.truthy(text:find(squeeze(line), 1, true),
            ("the man page lacks this line of wlrun %s --help: %s"):format(tool, line))
        end
      end
    end
  end)

  -- groff renders the page as man shows it: where it is missing (a minimal system; CI installs
  -- groff-base), this case is skipped by name
  local with_groff = have("groff") and it or function(name) pending(name .. " -- skipped: no "
    .. "groff to render the page (apt-get install groff-base)") end
  with_groff("shows every option of every --help as man renders the page, which roff, man and "
    .. "lexgrog read without a word", function()
    local page = installed() .. "/share/man/man1/wlrun.1.gz"
    local main = h.run("--help")
    assert.equal(0, main.code)
    local helps = { ["wlrun --help"] = main.stdout }
    for _, tool in ipairs(tools_of(main.stdout)) do
      local r = h.run(tool .. " --help")
      assert.equal(0, r.code, r.stderr)
      helps["wlrun " .. tool .. " --help"] = r.stdout
    end
    local shown = man_rendered(page)
    local count = 0
    for what, help in pairs(helps) do
      for o in pairs(options_of(help)) do
        count = count + 1
        assert.truthy(shown:find(o, 1, true), ("%s prints %s; the man page does not"):format(what,
          o))
      end
    end
    assert.truthy(count > 100, count)
    for _, o in ipairs { "--time-unit", "--alpha", "--resamples", "--min-effect", "--keep",
      "--size", "--dtype", "--kind" } do
      assert.truthy(shown:find("\n +" .. o:gsub("%-", "%%-"), 1),
        o .. " is not an entry of the page")
    end
    for _, v in ipairs { "WLRUN_NVRTC", "CUDA_HOME", "wlrun.ini", ".wlrun/history.db",
      "libwlrun_trace.so" } do
      assert.truthy(shown:find(v, 1, true), v)
    end

    -- roff, man and lexgrog read it without a word
    local roff_code, roff_out = sh("gzip -dc " .. q(page) .. " | groff -man -Tutf8 -ww -z")
    assert.equal(0, roff_code, roff_out)
    assert.equal("", roff_out)
    if have("man") then
      local code, out = sh("MANWIDTH=80 man --warnings -E UTF-8 -l " .. q(page)
        .. " 2>&1 >/dev/null")
      assert.equal(0, code, out)
      assert.equal("", out)
    end
    if have("lexgrog") then -- the whatis line, as mandb indexes it
      local code, out = sh("lexgrog " .. q(page))
      assert.equal(0, code, out)
      assert.truthy(out:find(': "wlrun - a Lua-scriptable benchmark harness for CUDA workloads"', 1,
        true), out)
    end
  end)
end)

describe("shell completion", function()
  local cwd -- where the shell completes (a fresh directory when nil)
  local function bash_complete(...)
    local words = {}
    for i, w in ipairs { ... } do words[i] = q(w) end
    local script = ([[
source %s
COMP_WORDS=(%s); COMP_CWORD=%d; COMPREPLY=(); _wlrun; printf '%%s\n' "${COMPREPLY[@]}"]]):format(
      q(installed() .. "/share/bash-completion/completions/wlrun"), table.concat(words, " "),
        select("#", ...) - 1)
    local code, out = sh("cd " .. q(cwd or h.tmpdir()) .. " && env -u WLRUN_LUA_DIR bash -c "
      .. q(script))
    assert.equal(0, code, out)
    local set = {}
    for w in out:gmatch("[^\n]+") do set[w] = true end
    return set
  end

  local function zsh_complete(...)
    local words = {}
    for i, w in ipairs { ... } do words[i] = q(w) end
    -- compadd and _files stand in for zsh's completion system: they print what they are given
    -- (_files: "<files>", or "<files -/>" for directories)
    local script = ([=[
compadd() { while [[ $1 != -- ]]; do shift; done; shift; print -l -- "$@" }
_files() { print -r -- "<files${*:+ $*}>" }
words=(%s); CURRENT=%d; source %s]=]):format(table.concat(words, " "), select("#", ...),
      q(installed() .. "/share/zsh/vendor-completions/_wlrun"))
    local code, out = sh("cd " .. q(cwd or h.tmpdir()) .. " && zsh -f -c " .. q(script))
    assert.equal(0, code, out)
    local set = {}
    for w in out:gmatch("[^\n]+") do set[w] = true end
    return set
  end

  local shells = { bash = bash_complete, zsh = zsh_complete }
  for _, shell in ipairs { "bash", "zsh" } do
    local complete = shells[shell]
    local define = have(shell) and it or function(name) pending(name .. " -- skipped: no "
      .. shell) end
    define(shell
      .. ": subcommands, a tool's verbs, options (wlrun's and a tool's) from the installed wlrun",
      function()
      local wl = installed() .. "/bin/wlrun"
      local subs = complete(wl, "")
      for _, s in ipairs { "info", "compare", "merge", "plot", "export", "trace", "history",
        "report" } do
        assert.truthy(subs[s], shell .. ": no subcommand " .. s)
      end
      local verbs = complete(wl, "history", "")
      for _, s in ipairs { "add", "show", "trend", "blame" } do assert.truthy(verbs[s], s) end
      local opts = complete(wl, "--m")
      for _, o in ipairs { "--min-time", "--max-time", "--mode", "--min-samples" } do
        assert.truthy(opts[o], o) end
      local copts = complete(wl, "compare", "--f")
      assert.truthy(copts["--fail-above"])
      assert.truthy(copts["--format"])
      assert.falsy(copts["--min-time"]) -- compare's own options, not wlrun's
    end)
    define(shell
      .. ": the values of each option with a fixed set, per command; files or directories where "
      .. "an option takes one", function()
      local wl = installed() .. "/bin/wlrun"
      local function offers(expected, ...)
        local got = complete(wl, ...)
        local words = {}
        for w in pairs(got) do words[#words + 1] = w end
        table.sort(words)
        table.sort(expected)
        assert.same(expected, words, shell .. ": " .. table.concat({ ... }, " "))
      end
      local printers = { "table", "plain", "csv", "markdown", "json" }
      offers(printers, "--format", "")
      offers(printers, "bench.lua", "--format", "")
      offers({ "table", "markdown", "json" }, "compare", "a.json", "b.json", "--format", "")
      offers({ "text", "json", "markdown" }, "history", "blame", "--format", "")
      offers({ "gbench", "table", "plain", "csv", "markdown", "json" }, "export", "r.json",
        "--format", "")
      offers(printers, "merge", "a.json", "--format", "")
      offers(printers, "trace", "--format", "")
      offers({ "ns", "us", "ms", "s" }, "export", "r.json", "--time-unit", "")
      offers({ "auto", "cold", "batch", "graph", "host", "cupti" }, "--mode", "")
      offers({ "nvrtc", "nvcc" }, "bench.lua", "--compiler", "")
      offers({ "off", "base", "max" }, "--lock-clocks", "")
      offers({ "on", "off" }, "--nvtx", "")
      offers({ "f32", "tf32", "bf16", "f16" }, "trace", "--dtype", "")
      offers({ "sweep", "hist", "ratio" }, "plot", "r.json", "--kind", "")
      offers({}, "plot", "r.json", "--config", "") -- an index, not a file
      if shell == "bash" then -- (zsh filters by the prefix itself)
        offers({ "cold", "cupti" }, "--mode", "c")
      end

      -- a file, or a directory
      cwd = h.tmpdir()
      h.write(cwd .. "/r.json", "{}")
      assert(os.execute("mkdir " .. q(cwd .. "/outdir")))
      local ok, err = pcall(function()
        local files = shell == "bash" and { "outdir", "r.json" } or { "<files>" }
        local dirs = shell == "bash" and { "outdir" } or { "<files -/>" }
        offers(files, "-o", "")
        offers(files, "compare", "r.json", "r.json", "-o", "")
        offers(files, "--config", "")
        offers(files, "history", "show", "--db", "")
        offers(dirs, "--cache-dir", "")
        offers(dirs, "trace", "--trace-dir", "")
        offers(dirs, "report", "--html", "")
        offers(dirs, "plot", "r.json", "--keep", "")
      end)
      cwd = nil
      assert(ok, err)
    end)
    define(shell .. ": a scenario's parameters after -p, from its dry run", function()
      local wl = installed() .. "/bin/wlrun"
      local params = complete(wl, installed() .. "/share/wlrun/scenarios/reduction.lua", "-p", "")
      local n, variant = shell == "bash" and "n=" or "n",
        shell == "bash" and "variant=" or "variant"
      assert.truthy(params[n], shell)
      assert.truthy(params[variant], shell)
    end)
  end
end)

-- cpack builds the tree again with the cmake that configured it: a build tree carried to
-- another machine (the GPU machine's) cannot make a package there
local function configured_here()
  local f = io.open(build .. "/CMakeCache.txt")
  local cache = f and f:read("a") or ""
  if f then f:close() end
  local cmake = cache:match("CMAKE_COMMAND:INTERNAL=([^\n]+)")
  local exe = cmake and io.open(cmake)
  if exe then exe:close() end
  return exe ~= nil, cmake
end

describe("the .deb", function()
  local here, cmake = configured_here()
  local define = (have("dpkg-deb") and have("dpkg-shlibdeps") and here) and it
    or function(name)
      pending(name .. " -- skipped: " .. (not here
        and ("the build tree was configured with %s, which this machine lacks"):format(
        tostring(cmake)) or "no dpkg-shlibdeps (apt-get install dpkg-dev)"))
    end

  local built -- the package, made once
  local function deb()
    if not built then
      local code, log = sh(("cd %s && cpack -G DEB -B %s"):format(q(build), q(h.tmpdir())))
      assert.equal(0, code, log)
      built = log:match("package: (%S+%.deb) generated")
      assert.truthy(built, log)
    end
    return built
  end

  define(
    "depends on Debian's packages of every library it links (NVRTC apart), unpacks with dpkg "
    .. "into a fresh root and runs from there", function()
    local deb = deb()
    local code, log

    local _, depends = sh("dpkg-deb -f " .. q(deb) .. " Depends")
    local wanted = {}
    for name in depends:gmatch("([%w%.%+%-]+)[^,]*,?") do wanted[name] = true end
    assert.truthy(wanted["liblua5.4-0"], depends)

    -- a fresh root with an empty dpkg database; only the unpacking (configure runs ldconfig)
    local root = h.tmpdir()
    assert(
      os.execute(
      ("mkdir -p %s/var/lib/dpkg/info %s/var/lib/dpkg/updates && : >%s/var/lib/dpkg/status"):format(
      q(root), q(root), q(root))))
    code,
      log = sh(
      ("dpkg --root=%s --force-depends --force-not-root --log=/dev/null --unpack %s"):format(
      q(root), q(deb)))
    assert.equal(0, code, log)
    local _, listed = sh(("dpkg --root=%s -L wlrun"):format(q(root)))
    assert.truthy(listed:find("/usr/lib/wlrun/libwlrun_trace.so", 1, true), listed)

    -- each library the binaries load comes from a package in Depends, or is the CUDA toolkit's
    for _, f in ipairs { "/usr/bin/wlrun", "/usr/lib/wlrun/libwlrun_trace.so" } do
      local _, ldd = sh("ldd " .. q(root .. f))
      for lib in ldd:gmatch("=> (/%S+)") do
        local real = select(2, sh("readlink -f " .. q(lib))):gsub("\n$", "")
        local cuda = lib:find("/cuda", 1, true) or real:find("/cuda", 1, true)
        if not cuda then
          local pkg -- a merged /usr: the package may name /usr/lib/... for /lib/...
          for _, path in ipairs { lib, "/usr" .. lib, real } do
            local owner_code, owner = sh("dpkg -S " .. q(path))
            pkg = pkg or (owner_code == 0 and owner:match("^([^:]+):"))
          end
          assert.truthy(pkg, lib .. ": in no package")
          assert.truthy(wanted[pkg], ("%s links %s from %s, which Depends lacks: %s"):format(f, lib,
            pkg, depends))
        end
      end
    end
    check_runs(root .. "/usr")
  end)

  -- lintian, as Debian checks a package: any error or warning fails (an override in
  -- /usr/share/lintian/overrides/wlrun must say why: cmake/debian/lintian-overrides)
  local lint = (have("lintian") and have("dpkg-deb") and have("dpkg-shlibdeps") and here) and it
    or function(name) pending(name .. " -- skipped: "
      .. (not here and "the build tree was configured elsewhere"
      or "no lintian or dpkg-dev (apt-get install lintian dpkg-dev)")) end
  lint("is lintian-clean: no error, no warning; each override says why", function()
    -- (--fail-on none: the tags below are the verdict; lintian counts an overridden warning
    -- that it shows as a failure)
    local code, out = sh("lintian --no-cfg --fail-on none --display-info --show-overrides "
      .. q(deb()))
    print("lintian " .. deb() .. ":\n" .. out)
    local tags = {}
    for line in out:gmatch("[^\n]+") do
      if line:find("^[EW]: ") then tags[#tags + 1] = line end
    end
    assert.same({}, tags)
    assert.equal(0, code, out)
    -- (lintian prints an override's comment as N: lines before it)
    for override in out:gmatch("\n?O: ([^\n]*)") do
      assert.truthy(out:find("N: [^\n]+\nO: " .. override:gsub("%p", "%%%0"), 1),
        "an override without its reason: " .. override)
    end
  end)
end)
