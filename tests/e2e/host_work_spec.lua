-- End-to-end, no device needed: host work under --compile-only (docs/libraries.md). A user's
-- own library (tests/fixtures/userlib, built by CMake: WLRUN_USERLIB) and the runtime
-- operations of wl.ops bind, check their arguments and sizes, and go through wl.bench and
-- wl.graph on the do-nothing backend; nothing of them is called. The bad input of the same
-- API is in the catalogue (tests/catalogue/libraries.lua).
local h = require "helper"

local LIB = os.getenv("WLRUN_USERLIB")

-- runs BODY after a prelude that opens the library as `lib` and makes tensors x, y (1024 f32)
local function run(body, args)
  local script = ([[
local wl = require "wlrun"
local lib = wl.library { file = %q }
local x = wl.tensor { 1024, dtype = "f32", init = wl.arange() }
local y = wl.tensor { 1024, dtype = "f32", init = 1 }
%s
]]):format(LIB or "WLRUN_USERLIB is not set", body)
  return h.run_script(script, args or "--compile-only --arch sm_90")
end

-- stdout without --compile-only's closing report
local function ok(r)
  assert.equal(0, r.code, r.stderr)
  return (r.stdout:gsub("compile%-only: [^\n]*\n$", ""))
end

describe("host work: a user's library under --compile-only", function()
  it("has the library built by the tests", function()
    assert.is_not_nil(LIB, "WLRUN_USERLIB: the path of libwlrun_userlib.so (ctest sets it)")
  end)

  it("makes a kernel object of a function, with its parameter list given", function()
    local out = ok(run([[
local saxpy = lib:func { name = "saxpy", params = "float* y, const float* x, float a, int n" }
print(saxpy.kind, saxpy.name, #saxpy.params, saxpy.params[1].ctype, saxpy.params[2].ctype, saxpy.params[4].ctype)
print(tostring(saxpy))
print(lib.path == os.getenv("WLRUN_USERLIB"), lib.closed, saxpy.source == lib.path, saxpy.arch)
]]))
    assert.matches("library\tsaxpy in libwlrun_userlib.so\t4\tfloat%*\tconst float%*\tint\n", out)
    assert.matches("host work saxpy in libwlrun_userlib.so %(/.*/libwlrun_userlib.so, host%)", out)
    assert.matches("true\tfalse\ttrue\thost", out)
  end)

  it("reads the parameter list from wlrun_params_NAME", function()
    local out = ok(run([[
local scale = lib:func { name = "scale" }
print(#scale.params, scale.params[1].ctype, scale.params[2].ctype, scale.params[3].ctype)
]]))
    assert.equal("3\tfloat*\tfloat\tint\n", out)
  end)

  it("binds: inputs (const T*) and outputs told apart, no geometry", function()
    local out = ok(run([[
local saxpy = lib:func { name = "saxpy", params = "float* y, const float* x, float a, int n" }
local b = saxpy:bind { args = { y, x, 2.0, 1024 } }
for _, t in ipairs(b.tensors) do print(t.arg, t.input, t.tensor == (t.arg == 1 and y or x)) end
print(b.grid, b.block, b.smem, tostring(b), b.kernel == saxpy)
]]))
    assert.equal(
      "1\tfalse\ttrue\n2\ttrue\ttrue\nnil\tnil\tnil\tcall of host work saxpy in "
      .. "libwlrun_userlib.so\ttrue\n", out)
  end)

  it("goes through wl.bench, wl.graph and a launch without calling the function", function()
    -- 'fails' returns its argument: called, it would fail
    local out = ok(run([[
local fails = lib:func { name = "fails" }:bind { args = { 3 } }
fails()
fails:launch(5)
print(wl.bench(fails, { mode = "graph" }))
local g = wl.graph(function() fails() fails() end)
print(g.nodes)
]]))
    assert.equal("nil\tnot measured: --compile-only runs nothing\n2\n", out)
  end)

  it("is taken by every timed loop of the engine (cold, batch, graph, host)", function()
    local out = ok(run([[
local engine = require "wlrun.engine"
local b = lib:func { name = "scale" }:bind { args = { y, 2.0, 1024 } }
local c = wl.ops.memcpy { dst = y, src = x }
for _, w in ipairs { b, c, { b, c } } do
  print(#engine.time_cold(w, 3, true).gpu, #engine.time_batch(w, 3, 4).gpu, #engine.time_graph(w, 3, 4, 1).gpu,
    #engine.time_host(w, 3).gpu)
end
]]))
    assert.equal(("3\t3\t3\t3\n"):rep(3), out)
  end)

  it(
    "goes through the blocked cold loop, one or two blocks in flight, blocks of 1 to 16, a "
    .. "list rotated", function()
    local out = ok(run([[
local engine = require "wlrun.engine"
local b = lib:func { name = "scale" }:bind { args = { y, 2.0, 1024 } }
local c = wl.ops.memcpy { dst = y, src = x }
for _, in_flight in ipairs { 1, 2 } do
  for _, n in ipairs { 1, 16, 37 } do
    local r = engine.time_cold({ b, c }, n, true, true, in_flight)
    io.write(#r.gpu, " ", #r.enqueue, " ", r.blocked.gave_up, " ", r.blocked.kept, "; ")
  end
end
for _, per_block in ipairs { 1, 5, 16 } do io.write(#engine.time_cold({ b, c }, 37, true, true, 2, per_block).gpu, " ") end
print(#engine.time_cold(b, 20, true, true).gpu, pcall(engine.time_cold, b, 2, true, true, 3))
for _, per_block in ipairs { 0, 17 } do print(pcall(engine.time_cold, b, 2, true, true, 2, per_block)) end
]]))
    assert.matches(
      "^1 1 0 0; 16 16 0 0; 37 37 0 0; 1 1 0 0; 16 16 0 0; 37 37 0 0; 37 37 37 20\tfalse\t.*1 "
      .. "or 2 blocks in flight expected%)\n"
      .. "false\t.*1 to 16 samples a block expected%)\nfalse\t.*1 to 16 samples a block "
        .. "expected%)\n$", out)
  end)

  it("keeps the library loaded while a function from it lives", function()
    local out = ok(run([[
local scale = lib:func { name = "scale" }
lib:close()
print(lib.closed, tostring(lib))
local b = scale:bind { args = { y, 2.0, 1024 } }
b()
collectgarbage()
print(#scale.params)
]]))
    assert.equal("true\tlibrary (closed)\n3\n", out)
  end)

  it("refuses a capture of host work that may not be captured", function()
    local r = run([[
local w = lib:func { name = "scale_and_wait", capturable = false }:bind { args = { y, 1.0, 4 } }
w()
wl.graph(function() w() end)
]])
    assert.equal(1, r.code)
    assert.matches(
      "script.lua:7: host work 'scale_and_wait in libwlrun_userlib.so' %(library%) cannot be "
      .. "captured in a CUDA graph", r.stderr)
  end)

  it("has no kernel attributes or occupancy", function()
    local out = ok(run([[
local saxpy = lib:func { name = "saxpy", params = "float* y, const float* x, float a, int n" }
print(select(2, pcall(function() return saxpy.attributes end)))
print(select(2, pcall(saxpy.occupancy, saxpy, 128)))
]]))
    assert.matches(
      "k.attributes: 'saxpy in libwlrun_userlib.so' is host work %(library%), it has no kernel "
      .. "attributes", out)
    assert.matches("kernel:occupancy: 'saxpy in libwlrun_userlib.so' is host work", out)
  end)
end)

describe("host work: wl.ops under --compile-only", function()
  it("copies the source's bytes by default, in the direction of where the tensors live", function()
    local out = ok(run([[
local p = wl.host_tensor { 1024, dtype = "f32", pinned = true }
local c = wl.ops.memcpy { dst = y, src = x }
print(c.kernel.name, c.kernel.kind, #c.tensors, c.tensors[1].input, c.tensors[2].input)
print(wl.ops.memcpy { dst = p, src = x, bytes = 16 }.kernel.name)
print(wl.ops.memcpy { dst = x, src = p }.kernel.name)
print(wl.ops.memset { dst = y, value = 255 }.kernel.name)
print(wl.ops.memcpy2d { dst = y, dpitch = 64, src = x, spitch = 128, width = 32, height = 32 }.kernel.name)
print(wl.ops.memset2d { dst = y, pitch = 128, width = 64, height = 32, value = 1 }.kernel.name)
print(wl.graph(function() c() c() end).nodes)
print(wl.bench(c))
]]))
    assert.equal(table.concat({
      "memcpy device to device, 4096 bytes\truntime\t2\tfalse\ttrue",
      "memcpy device to host, 16 bytes",
      "memcpy host to device, 4096 bytes",
      "memset device, 4096 bytes",
      "memcpy2d device to device, 32 rows of 32 bytes",
      "memset2d device, 32 rows of 64 bytes",
      "2", "nil\tnot measured: --compile-only runs nothing", "" }, "\n"), out)
  end)

  it("copies rows of a strided view within its extent, and into a contiguous view", function()
    local out = ok(run([[
local m = wl.tensor { 4, 4 }
local cols = m:view { offset = 2, shape = { 4, 2 }, strides = { 4, 1 } }
local c = wl.ops.memcpy2d { dst = y, dpitch = 8, src = cols, spitch = 16, width = 8, height = 4 }
print(c.kernel.name, c.tensors[2].tensor == cols)
print(wl.ops.memcpy { dst = m:rows(2, 3), src = x, bytes = 32 }.kernel.name)
]]))
    assert.equal(
      "memcpy2d device to device, 4 rows of 8 bytes\ttrue\nmemcpy device to device, 32 bytes\n",
      out)
  end)

  it("binds on the stream given", function()
    local out = ok(run([[
local s = wl.stream()
local c = wl.ops.memset { dst = y, stream = s }
c()
print(tostring(c))
]]))
    assert.equal("call of host work memset device, 4096 bytes\n", out)
  end)
end)
