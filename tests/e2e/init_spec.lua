-- End-to-end, no GPU needed: `wlrun init` into a temporary git repository writes the recipe
-- skeleton, which compiles as written (--compile-only --arch sm_90), and its CI script runs
-- there (the path without a GPU: every kernel compiled, nothing measured); a second init
-- overwrites nothing; README.md is appended to once.
local h = require "helper"

local q = h.quote
local bin = h.bin:sub(1, 1) == "/" and h.bin or (h.source_dir .. "/" .. h.bin)

local function repo()
  local dir = h.tmpdir()
  assert(os.execute("git init -q " .. q(dir)))
  return dir
end

describe("wlrun init", function()
  it("writes a scenario, wlrun.ini, a README section and a CI script that runs in the repository",
    function()
    local dir = repo()
    h.write(dir .. "/README.md", "# my project\n")
    local r = h.run("init", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    for _, f in ipairs { "bench/axpy.lua", "bench/ci.sh", "bench/gitlab-ci.yml",
      ".github/workflows/benchmarks.yml",
                         "wlrun.ini", ".gitignore", "README.md" } do
      assert.truthy(r.stdout:find(f, 1, true), f)
    end
    assert.equal(
      "# wlrun (wlrun init): the benchmarks' results and the history's database\nout/\n.wlrun/\n",
      h.read(dir .. "/.gitignore"))
    -- the workflows are YAML of the shape their CI reads (where Python's yaml is there to say so)
    local check = [[python3 -c 'import sys, yaml
gh = yaml.safe_load(open(sys.argv[1])); gl = yaml.safe_load(open(sys.argv[2]))
assert set(gh["jobs"]) == {"compile", "gate"} and gh["jobs"]["gate"]["runs-on"] == ["self-hosted", "gpu"]
assert set(gl) == {"bench-compile", "bench-gate"} and gl["bench-gate"]["tags"] == ["gpu"]
assert all("sh bench/ci.sh" in str(j) for j in list(gh["jobs"].values()) + list(gl.values()))' ]]
    if os.execute("python3 -c 'import yaml' 2>/dev/null") then
      assert.is_true(os.execute(check .. q(dir .. "/.github/workflows/benchmarks.yml") .. " "
        .. q(dir .. "/bench/gitlab-ci.yml")))
    end
    local readme = h.read(dir .. "/README.md")
    assert.truthy(readme:find("^# my project\n\n## Benchmarks\n"), readme)
    assert.truthy(h.read(dir .. "/bench/axpy.lua"):find("check = function", 1, true))

    local c = h.run("--compile-only --arch sm_90 bench/axpy.lua", { cwd = dir })
    assert.equal(0, c.code, c.stderr)
    assert.truthy(c.stdout:find("axpy", 1, true))
    assert.equal("", c.stderr) -- no warning from NVRTC or wlrun

    -- the CI script, as a CI would call it, from another directory
    local out = os.tmpname()
    local _, _, code = os.execute(("cd / && WLRUN=%s sh %s/bench/ci.sh >%s 2>&1"):format(q(bin),
      q(dir), out))
    local log = h.read(out)
    os.remove(out)
    if h.has_gpu then
      assert.equal(0, code, log)
      assert.truthy(log:find("no baseline for bench/axpy.lua", 1, true), log)
    else
      assert.equal(0, code, log)
      assert.truthy(log:find("no GPU here", 1, true), log)
      assert.truthy(log:find("axpy%s+sm_90"), log)
    end
  end)

  it("has its CI script install wlrun from WLRUN_DEB where the runner has none", function()
    local dir = repo()
    assert.equal(0, h.run("init", { cwd = dir }).code)
    -- apt-get and sudo that say what they were asked; the install puts a wlrun on PATH
    local fake = h.tmpdir()
    h.write(fake .. "/apt-get", ([[#!/bin/sh
echo "apt-get $*" >>%s/calls
case "$1" in install) printf '#!/bin/sh\nexec %s "$@"\n' >%s/wlrun; chmod +x %s/wlrun ;; esac
]]):format(q(fake), q(bin), q(fake), q(fake)))
    h.write(fake .. "/sudo", "#!/bin/sh\necho sudo >>" .. q(fake) .. "/calls\nexec \"$@\"\n")
    h.write(fake .. "/wlrun.deb", "a .deb")
    os.execute("chmod +x " .. q(fake .. "/apt-get") .. " " .. q(fake .. "/sudo"))
    local out = os.tmpname()
    local _, _, code = os.execute(("cd / && PATH=%s:/usr/bin:/bin WLRUN_DEB=%s sh %s/bench/ci.sh "
      .. ">%s 2>&1"):format(q(fake), q(fake .. "/wlrun.deb"), q(dir), out))
    local log = h.read(out)
    os.remove(out)
    assert.equal(0, code, log)
    local calls = h.read(fake .. "/calls")
    assert.matches("apt%-get update %-q\n", calls)
    assert.matches("apt%-get install %-y /[^\n]*/wlrun%.deb\n$", calls)
    assert.truthy(log:find(h.has_gpu and "no baseline for bench/axpy.lua" or "no GPU here", 1,
      true), log)
  end)

  it(
    "into a new DIR; a second time overwrites nothing (exit 2, nothing written) and keeps one "
    .. "README section", function()
    local dir = repo()
    local r = h.run("init sub/recipes", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    local target = dir .. "/sub/recipes"
    h.write(target .. "/wlrun.ini", "; mine\n")
    local again = h.run("init sub/recipes", { cwd = dir })
    assert.equal(2, again.code)
    assert.truthy(
      again.stderr:find(
      "not overwriting sub/recipes/bench/axpy.lua, sub/recipes/bench/ci.sh, "
      .. "sub/recipes/bench/gitlab-ci.yml, sub/recipes/.github/workflows/benchmarks.yml, "
      .. "sub/recipes/wlrun.ini", 1, true), again.stderr)
    assert.equal("; mine\n", h.read(target .. "/wlrun.ini"))
    local readme = h.read(target .. "/README.md")
    assert.equal(1, select(2, readme:gsub("## Benchmarks", "")))
  end)

  it("refuses a file as DIR and two DIRs (exit 2)", function()
    local dir = repo()
    h.write(dir .. "/f", "")
    local r = h.run("init f", { cwd = dir })
    assert.equal(2, r.code)
    assert.truthy(r.stderr:find("'f' is a file, not a directory", 1, true), r.stderr)
    r = h.run("init a b", { cwd = dir })
    assert.equal(2, r.code)
    assert.truthy(r.stderr:find("one directory at most", 1, true), r.stderr)
  end)
end)
