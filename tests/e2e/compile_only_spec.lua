-- End-to-end, no GPU needed: --compile-only prints no made-up numbers. Nothing runs, so a
-- measurement has no number to give: event:elapsed, wl.elapsed and wl.bench return nil and why
-- (docs/lua-api.md, "Compile only"); wlrun's printers show no time or throughput for a
-- configuration that was only compiled; and every example and shipped scenario, run so, prints
-- no "0.0 us", "inf GB/s" or "nan" (issue 38, goal 5).
local h = require "helper"

local q = h.quote

local WHY = "not measured: --compile-only runs nothing"

-- the figures that only a measurement could give: a time of zero, a throughput, inf or nan
local function made_up(text)
  for _, pattern in ipairs { "%f[%w]inf%f[%W]", "%f[%w]nan%f[%W]", "%f[%w.]0%.?0*%s*[mun]?s%f[%W]",
    "[gmt]?b/s",
    "flop/s", "%f[%w]0%.?0*%s*%%" } do -- on the text in lower case
    local at = text:lower():find(pattern)
    if at then return text:sub(math.max(1, at - 40), at + 40) end
  end
  return nil
end

local function files(dir)
  local p = io.popen("ls " .. q(h.source_dir .. "/" .. dir) .. "/*.lua")
  local list = {}
  for l in p:lines() do list[#list + 1] = dir .. "/" .. l:match("[^/]+$") end
  p:close()
  return list
end

describe("--compile-only", function()
  local cache = h.tmpdir()
  local function compile_only(file, extra)
    return h.run(("--compile-only --arch sm_90 --cache-dir %s %s%s"):format(q(cache), extra or "",
      file), { cwd = h.source_dir })
  end

  it("recognises made-up figures", function()
    for _, s in ipairs { "axpy: 0.0 us, inf GB/s", "0 ms", "median 0.000 s", "nan", "1.2 TFLOP/s",
      "speed 0.0%" } do
      assert.truthy(made_up(s), s)
    end
    for _, s in ipairs { "slept 10.26 ms", "compile-only: 6 distinct kernels", "y[1] = 1.5",
      "sm_90", "n=1048576" } do
      assert.falsy(made_up(s), s)
    end
  end)

  it("gives a measurement no number: elapsed and wl.bench return nil and why, after their checks",
    function()
    local dir = h.tmpdir()
    h.write(dir .. "/m.lua", [[
local wl = require "wlrun"
local k = wl.kernel { 'extern "C" __global__ void one(float* y) { y[0] = 1; }', name = "one" }
local y = wl.tensor { 1 }
local launch = k:bind { grid = 1, block = 1, args = { y } }
local e0, e1 = wl.event(), wl.event()
e0:record() launch() e1:record()
print(e0:elapsed(e1))
print(wl.elapsed(e0, e1))
print(wl.bench(launch))
print(wl.bench(launch, { mode = "graph", adaptive = true }))
print(pcall(string.format, "%.1f us", (e0:elapsed(e1))))
wl.elapsed(e0, wl.event())
]])
    local r = h.run(("--compile-only --arch sm_90 --cache-dir %s m.lua"):format(q(cache)),
      { cwd = dir })
    assert.equal(1, r.code)
    assert.equal(("nil\t%s\n"):format(WHY):rep(4)
      .. "false\tbad argument #2 to 'string.format' (number expected, got nil)\n",
      r.stdout:match("^(.-)compile%-only:") or r.stdout)
    -- the checks as on a GPU
    assert.matches("wl.elapsed: both events must have been recorded", r.stderr)
  end)

  for _, file in ipairs(files("examples")) do
    it("runs " .. file .. " with no made-up figure", function()
      local r = compile_only(file)
      assert.equal(0, r.code, r.stderr)
      assert.falsy(made_up(r.stdout), r.stdout)
    end)
  end

  it("runs examples/axpy.lua saying that it measured nothing", function()
    local r = compile_only("examples/axpy.lua")
    assert.matches("^axpy over 16777216 floats: " .. WHY:gsub("%-", "%%-")
      .. "\ncompile%-only: 1 distinct kernel", r.stdout)
  end)

  for _, file in ipairs(files("scenarios")) do
    it("runs " .. file .. " with no made-up figure, in every format that shows numbers", function()
      for _, format in ipairs { "table", "plain", "markdown", "csv" } do
        local r = compile_only(file, "--format " .. format .. " ")
        assert.equal(0, r.code, r.stderr)
        assert.falsy(made_up(r.stdout), format .. ":\n" .. r.stdout)
      end
    end)
  end
end)

describe("the same error in every configuration", function()
  it("is said once, the others naming the configuration that said it", function()
    -- no --arch and no device: every configuration's wl.kernel says the same
    local dir = h.tmpdir()
    local r = h.run_script([[
local wl = require "wlrun"
return wl.scenario { name = "s", params = { n = { 1, 2, 3, 4 } },
  setup = function(p) return { k = wl.kernel { "__global__ void k() {}", name = "k" } } end,
  run = function() end }
]], "--compile-only", { cwd = dir })
    assert.equal(2, r.code, r.stderr)
    local _, said = r.stderr:gsub("uses no device to take the target architecture", "")
    assert.equal(2, said, r.stderr) -- configuration 1's, and the summary's
    assert.matches("configuration 1 %(n=1%) failed: [^\n]*script%.lua:3: ", r.stderr)
    assert.matches("configuration 4 %(n=4%) failed: the same error as configuration 1\n",
      r.stderr)
  end)
end)
