-- End-to-end, no GPU needed: `wlrun init DIR` where DIR holds what it should not overwrite or
-- cannot use: everything is checked before anything is written (a file at a target's place, of
-- any kind — a directory, a FIFO, a link, a file we cannot read — is "there"), nothing is
-- opened that could hang (a FIFO), and a write that fails midway leaves nothing behind.
local h = require "helper"

local q = h.quote

local function sh(cmd) assert(os.execute(cmd), cmd) end

-- the names under dir, sorted bytewise (not by the locale), with their kinds:
-- "README.md(d) bench(d) bench/axpy.lua(f)"
local function tree(dir)
  local p = io.popen(
    ("cd %s && find . -mindepth 1 -printf '%%P(%%y) ' | tr ' ' '\\n' | LC_ALL=C sort"
      .. " | tr '\\n' ' '"):format(q(dir)))
  local out = p:read("a")
  p:close()
  return (out:gsub("^%s+", ""):gsub("%s+$", ""))
end

local function root() return io.popen("id -u"):read("l") == "0" end

-- as the user nobody, for a file its owner (root) alone can read; pending elsewhere
local function as_nobody(name, fn)
  if root() and os.execute("command -v setpriv >/dev/null") then
    it(name, fn)
  else
    pending(name .. " -- skipped: needs root and setpriv(1) to run wlrun as nobody")
  end
end
local NOBODY = "setpriv --reuid=65534 --regid=65534 --clear-groups"

describe("wlrun init, in a hostile directory", function()
  it("refuses a directory named README.md, and writes nothing", function()
    local dir = h.tmpdir()
    sh("mkdir " .. q(dir .. "/README.md"))
    local r = h.run("init .", { cwd = dir })
    assert.equal(2, r.code, r.stderr)
    assert.truthy(
      r.stderr:find("./README.md is a directory, not a file to add a section to: nothing written",
      1, true),
      r.stderr)
    assert.equal("README.md(d)", tree(dir))
  end)

  it("refuses a FIFO named README.md without opening it (no hang), and writes nothing", function()
    local dir = h.tmpdir()
    sh("mkfifo " .. q(dir .. "/README.md"))
    local r = h.run("init .", { cwd = dir, prefix = "timeout 20" })
    assert.equal(2, r.code, r.stderr)
    assert.truthy(r.stderr:find("./README.md is a FIFO", 1, true), r.stderr)
    assert.equal("README.md(p)", tree(dir))
  end)

  it("refuses a FIFO as DIR (no hang)", function()
    local dir = h.tmpdir()
    sh("mkfifo " .. q(dir .. "/f"))
    local r = h.run("init f", { cwd = dir, prefix = "timeout 20" })
    assert.equal(2, r.code, r.stderr)
    assert.truthy(r.stderr:find("'f' is a FIFO, not a directory", 1, true), r.stderr)
  end)

  it("counts a link to nothing as there: not overwritten, nothing written", function()
    local dir = h.tmpdir() -- init sub: wlrun reads the wlrun.ini of the directory it runs in
    sh(("mkdir %s && ln -s nowhere %s"):format(q(dir .. "/sub"), q(dir .. "/sub/wlrun.ini")))
    local r = h.run("init sub", { cwd = dir })
    assert.equal(2, r.code, r.stderr)
    assert.truthy(r.stderr:find("not overwriting sub/wlrun.ini: nothing written", 1, true),
      r.stderr)
    assert.equal("sub(d) sub/wlrun.ini(l)", tree(dir))
  end)

  it("refuses a file named bench before writing anything", function()
    local dir = h.tmpdir()
    h.write(dir .. "/bench", "mine\n")
    local r = h.run("init .", { cwd = dir })
    assert.equal(2, r.code, r.stderr)
    assert.truthy(r.stderr:find("'./bench' is a file, not a directory: nothing written", 1, true),
      r.stderr)
    assert.equal("bench(f)", tree(dir))
    assert.equal("mine\n", h.read(dir .. "/bench"))
  end)

  as_nobody("refuses a README.md it cannot read, keeps it, and writes nothing", function()
    local dir = h.tmpdir()
    h.write(dir .. "/README.md", "# private\n")
    sh(("chmod 600 %s && chmod 777 %s"):format(q(dir .. "/README.md"), q(dir)))
    local r = h.run("init .", { cwd = dir, prefix = NOBODY })
    assert.equal(9, r.code, r.stderr)
    assert.truthy(r.stderr:find("cannot read './README.md': Permission denied: nothing written", 1,
      true), r.stderr)
    assert.equal("# private\n", h.read(dir .. "/README.md"))
    assert.equal("README.md(f)", tree(dir))
  end)

  as_nobody("leaves nothing behind when a write fails midway (a directory it cannot write into)",
    function()
    local dir = h.tmpdir()
    -- bench/ and .github/workflows/ are writable, DIR is not: the scenario, the CI script and the
    -- workflows can be made, wlrun.ini not
    -- (.github's mode given too: mkdir -p makes it by the umask, which may leave nobody out)
    sh(("mkdir -p %s %s && chmod 777 %s %s && chmod 755 %s %s"):format(q(dir .. "/bench"),
      q(dir .. "/.github/workflows"),
      q(dir .. "/bench"), q(dir .. "/.github/workflows"), q(dir .. "/.github"), q(dir)))
    local r = h.run("init .", { cwd = dir, prefix = NOBODY })
    assert.equal(9, r.code, r.stderr)
    assert.truthy(r.stderr:find("cannot write ./wlrun.ini: Permission denied: nothing written", 1,
      true), r.stderr)
    assert.equal("", r.stdout)
    assert.equal(".github(d) .github/workflows(d) bench(d)", tree(dir))
  end)

  as_nobody("names the permission a directory on the way lacks (one it cannot enter is no file)",
    function()
    local dir = h.tmpdir()
    sh(("mkdir -p %s && chmod 700 %s && chmod 777 %s"):format(q(dir .. "/.github/workflows"),
      q(dir .. "/.github"), q(dir)))
    local r = h.run("init .", { cwd = dir, prefix = NOBODY })
    assert.equal(9, r.code, r.stderr)
    assert.truthy(r.stderr:find("'./.github/workflows': Permission denied: nothing written", 1,
      true), r.stderr)
    assert.is_nil(r.stderr:find("not a directory", 1, true), r.stderr)
    assert.equal(".github(d) .github/workflows(d)", tree(dir))
  end)
end)
