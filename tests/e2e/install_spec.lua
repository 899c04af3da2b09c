-- End-to-end, no GPU needed: wlrun installed like a tool (docs/install.md). `cmake --install`
-- into a temporary prefix, and the .deb that CPack makes unpacked by dpkg into a fresh root:
-- from another directory, the installed wlrun prints its version, says there is no GPU (exit 4,
-- 0 on a GPU machine), compiles a shipped recipe with --compile-only and finds its trace
-- library; the man page is the help's text, and the shell completions offer subcommands,
-- options and a scenario's parameters from the installed binary.
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
  local r = h.run(args, { cwd = cwd or h.tmpdir(), env = "env -u WLRUN_TRACE_LIB -u WLRUN_LUA_DIR" })
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

    local c = run_installed(root, "--compile-only --arch sm_90 " .. q(root .. "/share/wlrun/scenarios/reduction.lua"))
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

-- text without its blank lines (roff spaces the headings itself)
local function nonblank(text) return (text:gsub("\n\n+", "\n")) end

-- the man page's text, roff taken away: the lines of `wlrun --help`, with NAME for a heading
local function man_text(path)
  local lines = {}
  for line in h.read(path):gmatch("([^\n]*)\n") do
    local heading = line:match('^%.SH "?(.-)"?$')
    if heading then -- (.SH NAME: the help's first line follows it)
      lines[#lines + 1] = (heading:gsub('""', '"'))
    elseif not line:find("^%.") then
      lines[#lines + 1] = line
    end
  end
  local text = table.concat(lines, "\n") .. "\n"
  text = text:gsub("\\%-", "-"):gsub("\\&", ""):gsub("\\e", "\\")
  return text
end

describe("cmake --install", function()
  it("puts the binary, the trace library, scenarios, examples, docs, man page and completions under the prefix", function()
    local p = installed()
    for _, f in ipairs { "bin/wlrun", "lib/wlrun/libwlrun_trace.so", "include/wlrun/work.h",
      "share/wlrun/scenarios/gemm_sweep.lua", "share/wlrun/scenarios/kernels/gemm.cu",
      "share/wlrun/examples/axpy.lua", "share/wlrun/docs/cli.md", "share/man/man1/wlrun.1",
      "share/bash-completion/completions/wlrun", "share/zsh/vendor-completions/_wlrun" } do
      assert.truthy(exists(p .. "/" .. f), "missing " .. f)
    end
  end)

  it("gives a wlrun that runs from any directory and finds what it needs relative to itself", function()
    check_runs(installed())
  end)

  it("installs a man page that says what --help says, line for line (blank lines apart)", function()
    local r = h.run("--help")
    assert.equal(0, r.code)
    local page = installed() .. "/share/man/man1/wlrun.1"
    assert.equal(nonblank("NAME\n" .. r.stdout), nonblank(man_text(page)))
    if have("groff") then -- and roff reads it without a warning
      local code, out = sh("groff -man -Tutf8 -ww -z " .. q(page))
      assert.equal(0, code, out)
      assert.equal("", out)
    end
  end)
end)

describe("shell completion", function()
  local function bash_complete(...)
    local words = {}
    for i, w in ipairs { ... } do words[i] = q(w) end
    local script = ([[
source %s
COMP_WORDS=(%s); COMP_CWORD=%d; COMPREPLY=(); _wlrun; printf '%%s\n' "${COMPREPLY[@]}"]]):format(
      q(installed() .. "/share/bash-completion/completions/wlrun"), table.concat(words, " "), select("#", ...) - 1)
    local code, out = sh("cd " .. q(h.tmpdir()) .. " && env -u WLRUN_LUA_DIR bash -c " .. q(script))
    assert.equal(0, code, out)
    local set = {}
    for w in out:gmatch("[^\n]+") do set[w] = true end
    return set
  end

  local function zsh_complete(...)
    local words = {}
    for i, w in ipairs { ... } do words[i] = q(w) end
    -- compadd and _files stand in for zsh's completion system: they print what they are given
    local script = ([=[
compadd() { while [[ $1 != -- ]]; do shift; done; shift; print -l -- "$@" }
_files() { print '<files>' }
words=(%s); CURRENT=%d; source %s]=]):format(table.concat(words, " "), select("#", ...),
      q(installed() .. "/share/zsh/vendor-completions/_wlrun"))
    local code, out = sh("cd " .. q(h.tmpdir()) .. " && zsh -f -c " .. q(script))
    assert.equal(0, code, out)
    local set = {}
    for w in out:gmatch("[^\n]+") do set[w] = true end
    return set
  end

  local shells = { bash = bash_complete, zsh = zsh_complete }
  for _, shell in ipairs { "bash", "zsh" } do
    local complete = shells[shell]
    local define = have(shell) and it or function(name) pending(name .. " -- skipped: no " .. shell) end
    define(shell .. ": subcommands, a tool's verbs, options (wlrun's and a tool's) from the installed wlrun", function()
      local wl = installed() .. "/bin/wlrun"
      local subs = complete(wl, "")
      for _, s in ipairs { "info", "compare", "merge", "plot", "export", "trace", "history", "report" } do
        assert.truthy(subs[s], shell .. ": no subcommand " .. s)
      end
      local verbs = complete(wl, "history", "")
      for _, s in ipairs { "add", "show", "trend", "blame" } do assert.truthy(verbs[s], s) end
      local opts = complete(wl, "--m")
      for _, o in ipairs { "--min-time", "--max-time", "--mode", "--min-samples" } do assert.truthy(opts[o], o) end
      local copts = complete(wl, "compare", "--f")
      assert.truthy(copts["--fail-above"])
      assert.truthy(copts["--format"])
      assert.falsy(copts["--min-time"]) -- compare's own options, not wlrun's
    end)
    define(shell .. ": a scenario's parameters after -p, from its dry run", function()
      local wl = installed() .. "/bin/wlrun"
      local params = complete(wl, installed() .. "/share/wlrun/scenarios/reduction.lua", "-p", "")
      local n, variant = shell == "bash" and "n=" or "n", shell == "bash" and "variant=" or "variant"
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
      pending(name .. " -- skipped: " .. (not here and ("the build tree was configured with %s, which this machine lacks"):format(
        tostring(cmake)) or "no dpkg-shlibdeps (apt-get install dpkg-dev)"))
    end

  define("depends on Debian's packages of every library it links (NVRTC apart), unpacks with dpkg into a fresh root and runs from there", function()
    local out = h.tmpdir()
    local code, log = sh(("cd %s && cpack -G DEB -B %s"):format(q(build), q(out)))
    assert.equal(0, code, log)
    local deb = log:match("package: (%S+%.deb) generated")
    assert.truthy(deb, log)

    local _, depends = sh("dpkg-deb -f " .. q(deb) .. " Depends")
    local wanted = {}
    for name in depends:gmatch("([%w%.%+%-]+)[^,]*,?") do wanted[name] = true end
    assert.truthy(wanted["liblua5.4-0"], depends)

    -- a fresh root with an empty dpkg database; only the unpacking (configure runs ldconfig)
    local root = h.tmpdir()
    assert(os.execute(("mkdir -p %s/var/lib/dpkg/info %s/var/lib/dpkg/updates && : >%s/var/lib/dpkg/status"):format(
      q(root), q(root), q(root))))
    code, log = sh(("dpkg --root=%s --force-depends --force-not-root --log=/dev/null --unpack %s"):format(q(root), q(deb)))
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
          assert.truthy(wanted[pkg], ("%s links %s from %s, which Depends lacks: %s"):format(f, lib, pkg, depends))
        end
      end
    end
    check_runs(root .. "/usr")
  end)
end)
