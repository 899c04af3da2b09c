-- NVTX as a tool sees it, without Nsight Systems and without a GPU: wlrun runs under the
-- recorder (tests/nvtx/recorder.c, loaded through NVTX_INJECTION64_PATH), which writes every
-- NVTX call to a file; the specs compare the exact sequence: kinds, domains, nesting levels,
-- names, categories, colours and payloads (docs/nvtx.md).
local h = require "helper"
local record = require "nvtx.record"

-- the automatic ranges' categories and colours (docs/nvtx.md): a change here is a change there
local KIND = {
  scenario = { 1, "0xFF4E79A7" }, configuration = { 2, "0xFFF28E2B" }, setup = { 3, "0xFF59A14F" },
  check = { 4, "0xFFB07AA1" }, warmup = { 5, "0xFFEDC948" }, measurement = { 6, "0xFFE15759" },
  teardown = { 7, "0xFF9C755F" },
}

-- expected lines of the automatic domain
local function category(kind)
  return ("name_category\tdomain=wlrun\tcategory=%d\tname=%s"):format(KIND[kind][1], kind)
end
local function push(level, kind, name, payload)
  return (
    "push\tdomain=wlrun\tlevel=%d\tname=%s\tmessage=ascii\tcategory=%d\tcolor=%s\t"
      .. "payload=%s"):format(level,
    name or kind, KIND[kind][1], KIND[kind][2], payload or "none")
end
local function pop(level, name)
  return ("pop\tdomain=wlrun\tlevel=%d\tname=%s"):format(level, name)
end

local function inits(r)
  local n = 0
  for _, e in ipairs(r.events) do if e.kind == "init" then n = n + 1 end end
  return n
end

local SCENARIO = [[
local wl = require "wlrun"
return wl.scenario {
  name = "nv",
  params = { variant = { "a", "b" }, M = 8 },
  setup = function(p) wl.nvtx.mark("user mark " .. p.variant) return {} end,
  run = function(p, s) end,
  check = function() return true end,
  teardown = function() end,
}
]]

describe("the NVTX recorder", function()
  setup(function()
    assert(record.library())
  end)

  it("records the annotation API: sequence, nesting, names, categories, colours, payloads",
    function()
    local r = record.run_script([[
local wl = require "wlrun"
local nvtx = wl.nvtx
nvtx.push("outer", { color = "red", category = 4, payload = 7 })
nvtx.range("middle", { color = 0x123456, payload = 2.5 }, function()
  nvtx.mark("tick", { category = "ticks" })
end)
local id = nvtx.start("async", { color = "#00ff00" })
nvtx.pop()
nvtx.stop(id)
nvtx.name_category(9, "nine")
local d = nvtx.domain("app")
local hot = d:register("hot\tname")
d:push(hot, { category = d:category("io"), color = 0xFF0000 })
d:mark("m", { payload = -3 })
d:pop()
d:range("r", { color = 0x80000000, payload = math.mininteger }, function() end)
]])
    assert.equal(0, r.code, r.stderr)
    assert.equal("", r.stderr)
    assert.equal(1, inits(r))
    assert.equal("init\tinstance=1\tversion=3", r.lines[1])
    assert.same({
      "push\tdomain=\tlevel=0\tname=outer\tmessage=ascii\tcategory=4\tcolor=0xFFE15759\t"
        .. "payload=int64:7",
      "push\tdomain=\tlevel=1\tname=middle\tmessage=ascii\tcategory=0\tcolor=0xFF123456\t"
        .. "payload=double:2.5",
      "name_category\tdomain=\tcategory=1\tname=ticks",
      "mark\tdomain=\tname=tick\tmessage=ascii\tcategory=1\tcolor=none\tpayload=none",
      "pop\tdomain=\tlevel=1\tname=middle",
      "start\tdomain=\tid=1\tname=async\tmessage=ascii\tcategory=0\tcolor=0xFF00FF00\tpayload=none",
      "pop\tdomain=\tlevel=0\tname=outer",
      "end\tdomain=\tid=1\tname=async",
      "name_category\tdomain=\tcategory=9\tname=nine",
      "domain_create\tdomain=app",
      "register_string\tdomain=app\tname=hot\\tname",
      "name_category\tdomain=app\tcategory=1\tname=io",
      "push\tdomain=app\tlevel=0\tname=hot\\tname\tmessage=registered\tcategory=1\t"
        .. "color=0xFFFF0000\tpayload=none",
      "mark\tdomain=app\tname=m\tmessage=ascii\tcategory=0\tcolor=none\tpayload=int64:-3",
      "pop\tdomain=app\tlevel=0\tname=hot\\tname",
      "push\tdomain=app\tlevel=0\tname=r\tmessage=ascii\tcategory=0\tcolor=0x80000000\t"
        .. "payload=int64:-9223372036854775808",
      "pop\tdomain=app\tlevel=0\tname=r",
    }, record.lines(r))
    -- the escapes read back
    assert.equal("hot\tname", r.events[12].name)
    assert.equal("registered", r.events[14].message)
  end)

  it("sees a range closed by an error, and the error still exits 1 with its traceback", function()
    local r = record.run_script([[
local wl = require "wlrun"
wl.nvtx.range("doomed", function()
  wl.nvtx.push("left open")
  error("boom")
end)
]])
    assert.equal(1, r.code)
    assert.matches("script.lua:4: boom\nstack traceback:", r.stderr)
    assert.not_matches("warning", r.stderr) -- the error is the report
    assert.same({
      "push\tdomain=\tlevel=0\tname=doomed\tmessage=ascii\tcategory=0\tcolor=none\tpayload=none",
      "push\tdomain=\tlevel=1\tname=left open\tmessage=ascii\tcategory=0\tcolor=none\tpayload=none",
      "pop\tdomain=\tlevel=1\tname=left open",
      "pop\tdomain=\tlevel=0\tname=doomed",
    }, record.lines(r))
  end)

  it("refuses a pop without a push: an error (exit 1), and no pop reaches the tool", function()
    local r = record.run_script([[
local wl = require "wlrun"
wl.nvtx.mark("before")
wl.nvtx.pop()
]])
    assert.equal(1, r.code)
    assert.matches(
      "script.lua:3: wl.nvtx.pop: no range is pushed in the default domain %(a pop without "
      .. "a push%)", r.stderr)
    assert.same(
      { "mark\tdomain=\tname=before\tmessage=ascii\tcategory=0\tcolor=none\tpayload=none" },
      record.lines(r))
  end)

  it("names on stderr, and closes, the ranges left open when the run ends or when a range ends",
    function()
    local r = record.run_script([[
local wl = require "wlrun"
wl.nvtx.range("r", function() wl.nvtx.push("inside r") end)
wl.nvtx.push("a")
wl.nvtx.push("b")
wl.nvtx.domain("d"):push("c")
wl.nvtx.start("s")
]])
    assert.equal(0, r.code, r.stderr)
    assert.equal(table.concat({
      "wlrun: warning: NVTX: wl.nvtx.range 'r' (the default domain) ended with 1 range pushed "
        .. "inside it and not popped: 'inside r'; wlrun popped it",
      "wlrun: warning: NVTX: the run ended with 2 ranges pushed and not popped in the default "
        .. "domain: 'a' > 'b'; wlrun popped them",
      "wlrun: warning: NVTX: the run ended with range 's' (id 1) started and not stopped in the "
        .. "default domain; wlrun ended it",
      "wlrun: warning: NVTX: the run ended with 1 range pushed and not popped in domain 'd': "
        .. "'c'; wlrun popped it",
    }, "\n") .. "\n", r.stderr)
    local tail = {}
    for i = #r.lines - 4, #r.lines do tail[#tail + 1] = r.lines[i] end
    assert.same({
      "pop\tdomain=\tlevel=1\tname=b",
      "pop\tdomain=\tlevel=0\tname=a",
      "end\tdomain=\tid=1\tname=s",
      "pop\tdomain=d\tlevel=0\tname=c",
    }, { table.unpack(tail, 2) })
    assert.equal("pop\tdomain=\tlevel=1\tname=inside r", r.lines[4])
    assert.equal("pop\tdomain=\tlevel=0\tname=r", r.lines[5])
  end)

  it("accepts one initialisation per NVTX instance, and copies the strings it is given", function()
    local second = record.second_instance()
    if not second then
      pending(
        "no tests/nvtx/second_instance.c module (WLRUN_NVTX_SECOND): built by cmake, not by "
        .. "build-static.sh")
      return
    end
    local r = record.run_script(([[
local wl = require "wlrun"
local second = assert(package.loadlib(%q, "luaopen_nvtx_second"))()
wl.nvtx.push("from wlrun")
local name = ("n"):rep(40) .. 1 -- a long string: not interned, freed when collected
assert(second.push(name) == 1)
name = nil
collectgarbage() collectgarbage()
local junk = {}
for i = 1, 1000 do junk[i] = ("x"):rep(41) .. i end -- reuses the freed memory
second.mark("from the second instance")
assert(second.pop() == 1)
wl.nvtx.pop()
]]):format(second))
    assert.equal(0, r.code, r.stderr)
    assert.same({
      "init\tinstance=1\tversion=3",
      "push\tdomain=\tlevel=0\tname=from "
        .. "wlrun\tmessage=ascii\tcategory=0\tcolor=none\tpayload=none",
      "init\tinstance=2\tversion=3",
      "push\tdomain=\tlevel=1\tname=" .. ("n"):rep(40)
        .. "1\tmessage=ascii\tcategory=0\tcolor=none\tpayload=none",
      "mark\tdomain=\tname=from the second "
        .. "instance\tmessage=ascii\tcategory=0\tcolor=none\tpayload=none",
      "pop\tdomain=\tlevel=1\tname=" .. ("n"):rep(40) .. "1",
      "pop\tdomain=\tlevel=0\tname=from wlrun",
    }, r.lines)
  end)

  it("writes to standard error without WLRUN_NVTX_RECORD, and declines a file it cannot open",
    function()
    local lib = assert(record.library())
    local r = h.run_script("require('wlrun').nvtx.mark('m')", "",
      { env = "NVTX_INJECTION64_PATH=" .. h.quote(lib) })
    assert.equal(0, r.code)
    assert.equal(
      "init\tinstance=1\tversion=3\nmark\tdomain=\tname=m\tmessage=ascii\tcategory=0\t"
        .. "color=none\tpayload=none\n",
      r.stderr)
    r = h.run_script("require('wlrun').nvtx.mark('m') print('ran')", "",
      { env = "NVTX_INJECTION64_PATH=" .. h.quote(lib)
        .. " WLRUN_NVTX_RECORD=/nonexistent/dir/events.txt" })
    assert.equal(0, r.code)
    assert.equal("ran\n", r.stdout)
    assert.matches("nvtx recorder: cannot open WLRUN_NVTX_RECORD=/nonexistent/dir/events.txt",
      r.stderr)
  end)

  it("sees the example examples/nvtx_phases.lua: its domain, categories and balanced ranges",
    function()
    local r = record.run(h.quote(h.source_dir .. "/examples/nvtx_phases.lua"))
    assert.equal(0, r.code, r.stderr)
    assert.matches("3 epochs of 4 steps in .* ms.*; open ranges left: 0\n$", r.stdout)
    local tree = record.tree(r, "nvtx_phases")
    assert.same({ "epoch 1", "epoch 2", "epoch 3" }, { tree[1].name, tree[2].name, tree[3].name })
    local step = h.has_gpu and "gpu step, " or ""
    local one = ("load batch, preprocess, %s"):format(step)
    assert.equal(one:rep(4) .. "checkpoint", record.shape(tree[2].children))
    assert.equal("int64:2", tree[2].payload)
    local kinds = {}
    for _, e in ipairs(r.events) do kinds[e.kind] = (kinds[e.kind] or 0) + 1 end
    assert.equal(3, kinds.name_category)
    assert.equal(3, kinds.register_string)
    assert.equal(3, kinds.mark)
    assert.equal(1, kinds.start)
    assert.equal(1, kinds["end"])
  end)

  it("sees nothing when no tool is injected", function()
    local r = h.run_script("local n = require('wlrun').nvtx n.push('x') n.pop() print(n.depth())")
    assert.equal(0, r.code, r.stderr)
    assert.equal("0\n", r.stdout)
    assert.equal("", r.stderr)
  end)
end)

describe("automatic NVTX ranges", function()
  it("nest scenario > configuration > setup, teardown under --compile-only, in the domain wlrun",
    function()
    local r = record.run_script(SCENARIO, "--compile-only --arch sm_90")
    assert.equal(0, r.code, r.stderr)
    assert.same({
      "domain_create\tdomain=wlrun",
      category("scenario"),
      push(0, "scenario", "scenario nv"),
      category("configuration"),
      push(1, "configuration", "config 1: M=8, variant=a", "int64:1"),
      category("setup"),
      push(2, "setup"),
      "mark\tdomain=\tname=user mark a\tmessage=ascii\tcategory=0\tcolor=none\tpayload=none",
      pop(2, "setup"),
      category("teardown"),
      push(2, "teardown"),
      pop(2, "teardown"),
      pop(1, "config 1: M=8, variant=a"),
      push(1, "configuration", "config 2: M=8, variant=b", "int64:2"),
      push(2, "setup"),
      "mark\tdomain=\tname=user mark b\tmessage=ascii\tcategory=0\tcolor=none\tpayload=none",
      pop(2, "setup"),
      push(2, "teardown"),
      pop(2, "teardown"),
      pop(1, "config 2: M=8, variant=b"),
      pop(0, "scenario nv"),
    }, record.lines(r))
  end)

  it("close when a configuration fails, and the sweep goes on", function()
    local r = record.run_script(SCENARIO:gsub("return {} end",
      "if p.variant == 'a' then error('no') end return {} end"),
      "--compile-only --arch sm_90")
    assert.equal(1, r.code)
    assert.matches("configuration 1 %(M=8, variant=a%) failed", r.stderr)
    assert.equal(
      "scenario nv(config 1: M=8, variant=a(setup), config 2: M=8, variant=b(setup, teardown))",
      record.shape(record.tree(r, "wlrun")))
  end)

  it(
    "cover the shipped gemm_sweep under --compile-only: one range per configuration, named with "
    .. "its parameters", function()
    local dry = h.run("--dry-run " .. h.quote(h.source_dir .. "/scenarios/gemm_sweep.lua"))
    assert.equal(0, dry.code, dry.stderr)
    local configs = {}
    for index, desc in dry.stdout:gmatch("\n%s*(%d+)  ([^\n]+)") do
      configs[#configs + 1] = ("config %s: %s"):format(index, desc) end
    assert.is_true(#configs >= 10)
    local r = record.run("--compile-only --arch sm_90 "
      .. h.quote(h.source_dir .. "/scenarios/gemm_sweep.lua"))
    assert.equal(0, r.code, r.stderr)
    local tree = record.tree(r, "wlrun")
    assert.equal(1, #tree)
    assert.equal("scenario gemm_sweep", tree[1].name)
    assert.equal(#configs, #tree[1].children)
    for i, c in ipairs(tree[1].children) do
      assert.equal(configs[i], c.name)
      assert.equal("int64:" .. i, c.payload)
      assert.equal("0xFFF28E2B", c.color)
      assert.matches("^setup", record.shape(c.children)) -- nothing is measured under --compile-only
    end
  end)

  it("are off with --nvtx off and with [run] nvtx = off; the script's own ranges stay", function()
    for _, how in ipairs { "--nvtx off", "--config wlrun-off.ini" } do
      local dir = h.tmpdir()
      h.write(dir .. "/wlrun-off.ini", "[run]\nnvtx = off\n")
      local r = record.run_script(SCENARIO, "--compile-only --arch sm_90 " .. how, { cwd = dir })
      assert.equal(0, r.code, r.stderr)
      assert.same({
        "mark\tdomain=\tname=user mark a\tmessage=ascii\tcategory=0\tcolor=none\tpayload=none",
        "mark\tdomain=\tname=user mark b\tmessage=ascii\tcategory=0\tcolor=none\tpayload=none",
      }, record.lines(r), how)
    end
    local r = record.run_script(SCENARIO, "--nvtx on --compile-only --arch sm_90")
    assert.equal(0, r.code, r.stderr)
    assert.equal(21, #record.lines(r))
    r = record.run_script("print(require('wlrun').nvtx.auto_enabled())", "--nvtx off")
    assert.equal("false\n", r.stdout)
    r = h.run_script("print(1)", "--nvtx maybe")
    assert.equal(2, r.code)
    assert.matches("%-%-nvtx", r.stderr)
  end)

  it("are not emitted by --dry-run, which runs nothing", function()
    local r = record.run_script(SCENARIO, "--dry-run")
    assert.equal(0, r.code, r.stderr)
    assert.same({}, record.lines(r))
  end)

  it("close the scenario range when wlrun stops for want of a device (exit 4)", function()
    if h.has_gpu then
      pending("this machine has a GPU")
      return
    end
    local r = record.run_script(SCENARIO)
    assert.equal(4, r.code)
    assert.same({
      "domain_create\tdomain=wlrun",
      category("scenario"),
      push(0, "scenario", "scenario nv"),
      pop(0, "scenario nv"),
    }, record.lines(r))
  end)
end)
