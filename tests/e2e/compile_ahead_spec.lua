-- End-to-end, no device needed: wl.prepare_kernels compiles the kernels a run will need in
-- processes of its own, into the cache (docs/kernels.md, "Compiled ahead"), for --arch sm_90.
local h = require "helper"

local function kernel(name, value)
  return ('extern "C" __global__ void %s(float* p) { p[0] = %d.0f; }\n'):format(name, value)
end

-- the .wlk entries of a cache directory, sorted
local function entries(dir)
  local p = io.popen("ls " .. h.quote(dir) .. " 2>/dev/null")
  local names = {}
  for line in p:lines() do if line:match("%.wlk$") then names[#names + 1] = line end end
  p:close()
  table.sort(names)
  return names
end

-- A script over three kernels (two from strings, one from a file beside it): with `ahead`, it
-- lists them to wl.prepare_kernels and waits until the cache holds `wait` entries; then it
-- builds each with wl.kernel and prints what the cache did.
local function script(ahead, wait)
  return ([[
local wl = require "wlrun"
local specs = { { %q, name = "one" }, { %q, name = "two" }, { file = "three.cu", name = "three" },
  { %q, name = "one" } }
if %s then
  print("given", wl.prepare_kernels(specs))
  local cache, want = arg[1], %d
  for _ = 1, 600 do
    local p = io.popen("ls " .. cache .. " 2>/dev/null | grep -c 'wlk$'")
    local n = tonumber(p:read("a")) or 0
    p:close()
    if n >= want then break end
    os.execute("sleep 0.05")
  end
end
for i = 1, 3 do
  local k = wl.kernel(specs[i])
  print(k.name, k.from_cache)
end
local s = wl.compile_stats()
print(("compiles=%%d hits=%%d ahead=%%d"):format(s.compiles, s.cache_hits, s.ahead))
]]):format(kernel("one", 1), kernel("two", 2), kernel("one", 1), tostring(ahead), wait or 3)
end

-- what the processes of a run whose TMPDIR was tmp left: files there, processes still running
local function leftovers(tmp)
  local p = io.popen(("ls -A %s; pgrep -f %s"):format(h.quote(tmp),
    h.quote(tmp .. "/[w]lrun-compile")))
  local left = p:read("a")
  p:close()
  return left
end

-- runs source in a directory (opts.dir, else one of its own), with three.cu beside it and the
-- cache directory given
local function run(source, cache, opts)
  opts = opts or {}
  local dir = opts.dir or h.tmpdir()
  -- written once: its time stamp is in the cubin's line table
  if not io.open(dir .. "/three.cu") then h.write(dir .. "/three.cu", kernel("three", 3)) end
  return h.run_script(source, "--arch sm_90 --cache-dir " .. h.quote(cache) .. " "
    .. (opts.args or "") .. " -- " .. h.quote(cache), { cwd = dir, env = opts.env,
    prefix = opts.prefix })
end

describe("wl.prepare_kernels (kernels compiled ahead)", function()
  it("compiles the listed kernels in processes of their own; wl.kernel counts them as the run's",
    function()
      local cache, dir = h.tmpdir(), h.tmpdir()
      local r = run(script(true), cache, { dir = dir })
      assert.equal(0, r.code, r.stderr)
      assert.equal("given\t3\none\tfalse\ntwo\tfalse\nthree\tfalse\n"
        .. "compiles=3 hits=0 ahead=3\n", r.stdout)
      assert.equal(3, #entries(cache))
      -- the next run finds them all in the cache, and gives them to no process to compile
      local again = run(script(true), cache, { dir = dir })
      assert.equal(0, again.code, again.stderr)
      assert.equal("given\t3\none\ttrue\ntwo\ttrue\nthree\ttrue\ncompiles=0 hits=3 ahead=0\n",
        again.stdout)
    end)

  it("counts the kernels of every call as the run's", function()
    local cache = h.tmpdir()
    local r = run(([[
local wl = require "wlrun"
local one, two = { %q, name = "one" }, { %q, name = "two" }
print(wl.prepare_kernels { one }, wl.prepare_kernels { two, one })
repeat
  os.execute("sleep 0.05")
  local p = io.popen("ls " .. arg[1] .. " | grep -c 'wlk$'")
  local n = tonumber(p:read("a"))
  p:close()
until n >= 2
print(wl.kernel(one).from_cache, wl.kernel(two).from_cache, wl.compile_stats().ahead)
]]):format(kernel("one", 1), kernel("two", 2)), cache)
    assert.equal(0, r.code, r.stderr)
    assert.equal("1\t2\nfalse\tfalse\t2\n", r.stdout)
  end)

  it("makes the same cache entries as wl.kernel compiling them one after another", function()
    local ahead, serial, dir = h.tmpdir(), h.tmpdir(), h.tmpdir()
    assert.equal(0, run(script(true), ahead, { dir = dir }).code)
    local r = run(script(false), serial, { dir = dir })
    assert.equal(0, r.code, r.stderr)
    assert.equal("one\tfalse\ntwo\tfalse\nthree\tfalse\ncompiles=3 hits=0 ahead=0\n", r.stdout)
    local names = entries(serial)
    assert.same(names, entries(ahead))
    for _, name in ipairs(names) do
      assert.equal(h.read(serial .. "/" .. name), h.read(ahead .. "/" .. name), name)
    end
  end)

  it("compiles nothing ahead without a cache, and the run compiles as it would", function()
    local cache = h.tmpdir()
    local r = run(script(true, 0), cache, { args = "--no-cache" })
    assert.equal(0, r.code, r.stderr)
    assert.matches("compiles=3 hits=0 ahead=0\n$", r.stdout)
    assert.same({}, entries(cache))
  end)

  it("leaves a kernel that does not compile to its wl.kernel, which says why at its line",
    function()
      local r = run([[
local wl = require "wlrun"
local bad = { 'extern "C" __global__ void bad(float* p) { p[0] = oops; }', name = "bad" }
wl.prepare_kernels { bad }
os.execute("sleep 0.3")
wl.kernel(bad)
]], h.tmpdir())
      assert.equal(6, r.code, r.stderr)
      assert.matches("script.lua:5:", r.stderr, 1, true)
      assert.matches("oops", r.stderr, 1, true)
    end)

  it("refuses what is no list of wl.kernel tables, at the caller's line", function()
    for _, case in ipairs {
      { "wl.prepare_kernels(42)", "a list of wl.kernel tables expected, got number" },
      { "wl.prepare_kernels { 42 }", "entry 1 is a number, not a wl.kernel table" },
      { "wl.prepare_kernels { { 'x', name = 'a;b' } }", "holds a character" },
      { "wl.prepare_kernels { { 'x' } }", "'name' (the kernel's name) is required" },
      { "wl.prepare_kernels { { file = 'nothere.cu', name = 'k' } }", "cannot read" },
    } do
      local r = run("local wl = require 'wlrun'\n" .. case[1] .. "\n", h.tmpdir())
      assert.is_true(r.code ~= 0, case[1])
      assert.matches("script.lua:2: ", r.stderr, 1, true)
      assert.matches(case[2], r.stderr, 1, true)
    end
  end)

  -- a script that lists twelve kernels to wl.prepare_kernels, then does `after`
  local function twelve(after)
    local specs = {}
    for i = 1, 12 do
      specs[#specs + 1] = ("{ %q, name = 'k%d' }"):format(kernel("k" .. i, i), i)
    end
    return ("local wl = require 'wlrun'\nlocal n = wl.prepare_kernels { %s }\n%s\n"):format(
      table.concat(specs, ", "), after)
  end

  it("leaves no process and no directory behind when the run ends first", function()
    local tmp = h.tmpdir()
    local r = run(twelve("print(n)"), h.tmpdir(), { env = "TMPDIR=" .. h.quote(tmp) })
    assert.equal(0, r.code, r.stderr)
    assert.equal("12\n", r.stdout)
    assert.equal("", leftovers(tmp))
  end)

  it("ends its processes at once when the run is stopped, and leaves nothing behind", function()
    local tmp = h.tmpdir()
    -- SIGTERM once the script has listed its kernels (not after a fixed while, which a loaded
    -- machine's start may outlast), at most a minute on
    local term = [[sh -c '"$@" & t=$!; i=0; while [ ! -e ready ] && kill -0 $t 2>/dev/null && ]]
      .. [[[ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; kill -TERM $t; wait $t' sh]]
    local r = run(twelve("io.open('ready', 'w'):close() wl.sleep(30)"), h.tmpdir(),
      { env = "TMPDIR=" .. h.quote(tmp), prefix = term })
    assert.equal(143, r.code, r.stderr)
    assert.matches("interrupted (SIGTERM) at ", r.stderr, 1, true)
    assert.equal("", leftovers(tmp))
  end)
end)
