-- End-to-end, no GPU needed: scenarios through --dry-run and --compile-only; parameter spaces,
-- overrides, filters and validation errors (docs/scenarios.md).
local h = require "helper"

local SCENARIO = [[
local wl = require "wlrun"
return wl.scenario {
  name = "demo",
  params = {
    variant = { "a", "b" },
    wl.zip { M = { 1, 2, 3 }, N = { 10, 20, 30 } },
    K = wl.pow2(2, 3),
  },
  where = function(p) return not (p.variant == "b" and p.M == 3) end,
  setup = function(p) return {} end,
  run = function(p, s) end,
}
]]

local function dry(extra, source)
  local r = h.run_script(source or SCENARIO, "--dry-run " .. (extra or ""))
  return r
end

describe("parameter spaces", function()
  it("are the product of axes and zipped groups, sorted by name, the last fastest", function()
    local r = dry()
    assert.equal(0, r.code, r.stderr)
    assert.matches(
      "^demo: 10 configurations %(12 in the space, 2 pruned by where, 0 by %-%-filter%)\n",
      r.stdout)
    assert.matches(
      "\n   1  K=4, M=1, N=10, variant=a\n   2  K=4, M=1, N=10, variant=b\n   3  K=4, M=2, "
      .. "N=20, variant=a\n", r.stdout)
    assert.matches("\n  10  K=8, M=3, N=30, variant=a\n$", r.stdout)
  end)

  it("follow an explicit order", function()
    local r = dry(nil, SCENARIO:gsub("name = \"demo\",",
      "name = \"demo\", order = { \"variant\", \"K\", \"M\", \"N\" },"))
    assert.equal(0, r.code, r.stderr)
    assert.matches("\n   1  variant=a, K=4, M=1, N=10\n   2  variant=a, K=4, M=2, N=20\n", r.stdout)
  end)

  it("take -p overrides, with ranges, converted to the axis's type", function()
    local r = dry("-p K=16:64:*2 -p variant=b")
    assert.equal(0, r.code, r.stderr)
    assert.matches("^demo: 6 configurations", r.stdout)
    assert.matches("K=16, M=1, N=10, variant=b", r.stdout)
    assert.matches("K=64, M=2, N=20, variant=b", r.stdout)
  end)

  it("override zipped axes only with the same number of values", function()
    local r = dry("-p M=5,6,7")
    assert.equal(0, r.code, r.stderr)
    assert.matches("M=7, N=30", r.stdout)
    r = dry("-p M=5,6")
    assert.equal(2, r.code)
    assert.matches("'M' is zipped with M, N and has 3 values; give 3", r.stderr)
  end)

  it("refuse -p for a parameter the scenario does not have, naming those it has", function()
    local r = dry("-p Q=1")
    assert.equal(2, r.code)
    assert.matches("the scenario has no parameter 'Q' %(it has: K, M, N, variant%)", r.stderr)
    r = dry("-p K=abc")
    assert.equal(2, r.code)
    assert.matches("%-p K: 'abc' is not a number", r.stderr)
  end)

  it("select with --filter", function()
    local r = dry("--filter 'K == 8 and variant == \"a\"'")
    assert.equal(0, r.code, r.stderr)
    assert.matches(
      "^demo: 3 configurations %(12 in the space, 2 pruned by where, 7 by %-%-filter%)", r.stdout)
    r = dry("--filter 'K =='")
    assert.equal(2, r.code)
    assert.matches("%-%-filter 'K ==':", r.stderr)
    r = dry("--filter 'Z > 1'")
    assert.equal(2, r.code)
    assert.matches("no parameter 'Z'", r.stderr)
  end)

  it("apply -p, --filter, --dry-run and -o to scenarios only", function()
    local r = h.run_script("print('plain')", "--dry-run")
    assert.equal(2, r.code)
    assert.matches("%-%-dry%-run applies to scenarios", r.stderr)
  end)
end)

describe("scenario validation", function()
  local function check(body, pattern)
    local r = dry(nil, "local wl = require 'wlrun'\nlocal s = wl.scenario {\n" .. body
      .. "\n}\nreturn s\n")
    assert.equal(1, r.code, r.stdout)
    assert.matches(pattern, r.stderr)
    assert.matches("script.lua:2:", r.stderr)
  end

  it("names unknown fields, wrong types and missing ones", function()
    check("name = 'x', run = function() end, paramz = {}",
      "wl.scenario: unknown field 'paramz' %(fields: baseline, check, command, description")
    check("name = 'x'", "'run' is required")
    check("name = 'x', run = function() end, where = 3",
      "field 'where' must be a function, got a number")
    check("run = function() end", "'name' %(a non%-empty string%) is required")
    check("name = 'x', run = 'launch'",
      "run = 'launch' names a field of setup's result, but there is no setup")
    check("name = 'x', run = function() end, timing = { iterz = 3 }",
      "timing: unknown option 'iterz'")
    check("name = 'x', run = function() end, params = { M = {} }", "parameter 'M' has no values")
    check("name = 'x', run = function() end, params = { M = { {} } }",
      "value 1 of parameter 'M' is a table")
    check("name = 'x', run = function() end, params = { M = { 1 } }, order = { 'N' }",
      "'order' does not name parameter 'M'")
  end)

  it("checks wl.zip's axes", function()
    local r = dry(nil,
      "local wl = require 'wlrun'\nreturn wl.scenario { name = 'x', run = function() end,\n "
      .. "params = { wl.zip { A = { 1, 2 }, B = { 1 } } } }\n")
    assert.equal(1, r.code)
    assert.matches("wl.zip: axes must have the same number of values", r.stderr)
  end)
end)

describe("the shipped scenarios without a GPU", function()
  for name, kernels in pairs { gemm_sweep = 6, gemm_tc = 6, bandwidth = 3, training_loop = 10 } do
    it(name .. " lists its configurations and compiles every kernel", function()
      local cache = h.tmpdir()
      local r = h.run("scenarios/" .. name .. ".lua --dry-run", { cwd = h.source_dir })
      assert.equal(0, r.code, r.stderr)
      assert.matches("^" .. name .. ": %d+ configurations", r.stdout)
      r = h.run("scenarios/" .. name .. ".lua --compile-only --arch sm_90 --cache-dir " .. cache,
        { cwd = h.source_dir })
      assert.equal(0, r.code, r.stderr)
      assert.matches("compile%-only: " .. kernels .. " distinct kernels", r.stdout)
    end)
  end

  it("setup's wl.skip and errors are reported per configuration with --compile-only", function()
    local r = h.run_script([[
local wl = require "wlrun"
return wl.scenario {
  name = "skips", params = { n = { 1, 2, 3 } },
  setup = function(p)
    if p.n == 2 then wl.skip("two is skipped") end
    if p.n == 3 then error("three fails") end
    return { t = wl.tensor { 4 } }
  end,
  run = function() end,
}
]], "--compile-only --arch sm_90")
    assert.equal(1, r.code)
    assert.matches("configuration 3 %(n=3%) failed: .*three fails", r.stderr)
    assert.matches("1 of 3 configurations failed", r.stderr)
  end)
end)

describe("a scenario's prepare", function()
  -- prepare prints what it gets and changes it; setup prints each configuration it sets up
  local PREPARED = [[
local wl = require "wlrun"
return wl.scenario {
  name = "prep", params = { n = { 1, 2, 3 }, kind = { "x" } },
  prepare = function(configs)
    local seen = {}
    for _, p in ipairs(configs) do seen[#seen + 1] = p.kind .. p.n; p.n = 99 end
    configs[#configs + 1] = { n = 7, kind = "y" }
    print("prepare " .. table.concat(seen, " "))
    print("cublas.prepare", wl.cublas.prepare { { dtype = "bf16" } })
  end,
  setup = function(p) print("setup " .. p.kind .. p.n) return {} end,
  run = function() end,
}
]]
  local CO = "--compile-only --arch sm_90 -q "

  it("is called once, before the first configuration, with copies of the run's configurations",
    function()
    local dir = h.tmpdir()
    local r = h.run_script(PREPARED, CO .. "-p n=1,3 -o r.json", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    assert.matches("^prepare x1 x3\ncublas.prepare\tfalse\nsetup x1\nsetup x3\n", r.stdout)
    local doc = require("wlrun.json").decode(h.read(dir .. "/r.json"))
    assert.is_number(doc.wall.prepare)
    assert.equal(2, #doc.configurations)
  end)

  it(
    "is not called with --no-prepare, --dry-run, in children (--isolate, --devices, a timeout), "
    .. "or [run] prepare = off", function()
    for _, args in ipairs { "--no-prepare", "--dry-run", "--isolate", "--devices 0,1",
      "--config-timeout 60" } do
      local r = h.run_script(PREPARED, CO .. args)
      assert.equal(0, r.code, r.stderr)
      assert.not_matches("prepare", r.stdout, 1, true)
    end
    local dir = h.tmpdir()
    h.write(dir .. "/wlrun.ini", "[run]\nprepare = off\n")
    local r = h.run_script(PREPARED, CO .. "--config wlrun.ini", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    assert.matches("^setup x1\n", r.stdout)
  end)

  it("gets the configurations --filter leaves", function()
    local r = h.run_script(PREPARED, CO .. "--filter 'n ~= 2'")
    assert.equal(0, r.code, r.stderr)
    assert.matches("^prepare x1 x3\n", r.stdout)
  end)
end)
