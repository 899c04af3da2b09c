-- Views of tensors (docs/lua-api.md, "Views"): host tensors in-process, device tensors under
-- --compile-only (the do-nothing backend: binds, copies, graphs, used after free). The GPU
-- side is tests/gpu/views_spec.lua.
local h = require "helper"
local wl = require "wlrun"
local engine = require "wlrun.engine"

local fails_with = h.fails_with

-- a host tensor 0, 1, 2, ... of the shape
local function iota(shape, dtype)
  return wl.host_tensor { shape = shape, dtype = dtype, init = wl.arange(0, 1) }
end

describe("views of host tensors", function()
  it("see a sub-range of their tensor: offset and shape, in elements", function()
    local t = iota { 10 }
    local v = t:view { offset = 2, shape = { 3 } }
    assert.same({ 2, 3, 4 }, v:totable())
    assert.same({ 3 }, v.shape)
    assert.equal(3, v.numel)
    assert.equal(12, v.nbytes) -- its own elements, not its tensor's
    assert.equal(2, v.offset)
    assert.equal(t, v.base)
    assert.is_true(v.contiguous)
    assert.equal(t.address + 2 * 4, v.address)
    assert.equal("tensor f32[3] host 12 B view at 2", tostring(v))
  end)

  it("write into their tensor", function()
    local t = iota { 6 }
    local v = t:view(1, 2)
    v[1], v[2] = 10, 20
    v:fill(7)
    assert.same({ 0, 7, 7, 3, 4, 5 }, t:totable())
    v:init(wl.arange(100, 1))
    assert.same({ 0, 100, 101, 3, 4, 5 }, t:totable())
  end)

  it("t:view(offset, count) is a one-dimensional view of count elements", function()
    local v = iota({ 4, 4 }):view(5, 6)
    assert.same({ 6 }, v.shape)
    assert.same({ 5, 6, 7, 8, 9, 10 }, v:totable())
  end)

  it("t:rows(first, last) are rows of the first dimension, 1-based and inclusive", function()
    local t = iota { 4, 3 }
    local r = t:rows(2, 3)
    assert.same({ 2, 3 }, r.shape)
    assert.same({ 3, 4, 5, 6, 7, 8 }, r:totable())
    assert.equal(3, r.offset)
    assert.same({ 5 }, { t:rows(2)[3] }) -- one row: rows(i) is rows(i, i)
    assert.same({ 1, 3 }, t:rows(4).shape)
  end)

  it("take strides in elements: a block of a matrix", function()
    local t = iota { 4, 5 } -- element (i, j) is 5i + j
    local b = t:view { offset = 6, shape = { 2, 3 }, strides = { 5, 1 } }
    assert.same({ 6, 7, 8, 11, 12, 13 }, b:totable())
    assert.same({ 5, 1 }, b.strides)
    assert.is_false(b.contiguous)
    assert.equal(6, b.numel)
    assert.equal("tensor f32[2x3] host 24 B strided view at 6", tostring(b))
    b:fill(-1) -- host elements are set one by one
    assert.same({ 5, -1, -1, -1, 9 }, t:rows(2):totable())
    assert.same({ 10, -1, -1, -1, 14 }, t:rows(3):totable())
  end)

  it("take any order of strides that does not overlap: a transpose", function()
    local t = iota { 2, 3 }
    local tt = t:view { shape = { 3, 2 }, strides = { 1, 3 } }
    assert.same({ 0, 3, 1, 4, 2, 5 }, tt:totable())
    local c = wl.host_tensor { 3, 2 }
    c:copy_from(tt)
    assert.same({ 0, 3, 1, 4, 2, 5 }, c:totable())
  end)

  it("copy into and out of strided views, in the row-major order of each shape", function()
    local t = iota { 4, 4 }
    local block = t:view { offset = 5, shape = { 2, 2 }, strides = { 4, 1 } }
    local out = wl.host_tensor { 2, 2 }
    out:copy_from(block)
    assert.same({ 5, 6, 9, 10 }, out:totable())
    local z = wl.host_tensor { 4, 4 }
    z:view({ offset = 10, shape = { 2, 2 }, strides = { 4, 1 } }):copy_from(block)
    assert.same({ 0, 0, 5, 6, 0, 0, 9, 10 }, z:rows(3, 4):totable())
    local col = z:view { offset = 3, shape = { 4 }, strides = { 4 } } -- a column
    col:copy_from(iota { 4 })
    assert.same({ 0, 1, 2, 3 }, col:totable())
    assert.same({ 0, 0, 0, 1 }, z:rows(2):totable())
  end)

  it("copy to the device side and back through t:to_host / h:to_device as a new tensor", function()
    local b = iota({ 3, 3 }):view { offset = 4, shape = { 2, 2 }, strides = { 3, 1 } }
    local c = b:to_host()
    assert.same({ 4, 5, 7, 8 }, c:totable())
    assert.is_nil(c.base)
    assert.is_true(c.contiguous)
  end)

  it("of views compose their offsets from the same base", function()
    local t = iota { 100 }
    local v = t:view(10, 50)
    local w = v:view { offset = 5, shape = { 2, 3 }, strides = { 10, 2 } }
    assert.equal(15, w.offset)
    assert.equal(t, w.base)
    assert.same({ 15, 17, 19, 25, 27, 29 }, w:totable())
    -- offsets and strides count elements of memory from the first element of what is viewed
    assert.same({ 16, 17 }, w:rows(1):view(1, 2):totable())
  end)

  it("are refused outside their tensor, naming the reach and the tensor", function()
    local t = iota { 4, 4 }
    t:view(15, 1)
    fails_with(
      "tensor:view: the view f32[2] at offset 15 reaches to element 16, outside the tensor "
      .. "f32[4x4] (elements 0 to 15)",
      t.view, t, 15, 2)
    fails_with("reaches to element 16", t.view, t, { offset = 1, shape = { 4, 4 } })
    fails_with("reaches to element 19", t.view, t, { shape = { 2, 2 }, strides = { 16, 3 } })
    fails_with("reaches beyond any tensor", t.view, t,
      { shape = { 4 }, strides = { math.maxinteger } })
    local v = t:view(4, 8)
    fails_with("outside the view f32[8] (elements 0 to 7)", v.view, v, 1, 8)
    fails_with("tensor:rows: rows 3 to 5 of a tensor with 4 rows", t.rows, t, 3, 5)
  end)

  it("refuse bad offsets, shapes and strides, naming the field", function()
    local t = iota { 16 }
    fails_with("tensor:view: offset must be a whole number of elements >= 0, got -1", t.view, t,
      { offset = -1, shape = { 2 } })
    fails_with("tensor:view: offset must be a whole number of elements >= 0, got 1.5", t.view, t,
      1.5, 2)
    fails_with("tensor:view: count must be a whole number of elements >= 1, got 0", t.view, t, 1, 0)
    fails_with("tensor:view: shape must be a list of sizes, got nil", t.view, t, { offset = 1 })
    fails_with("tensor:view: shape[2] must be a whole number >= 1, got 0", t.view, t,
      { shape = { 2, 0 } })
    fails_with("tensor:view: a view has 1 to 8 dimensions, got 0", t.view, t, { shape = {} })
    fails_with("tensor:view: strides has 1 entries for a shape of 2 dimensions", t.view, t,
      { shape = { 2, 2 }, strides = { 1 } })
    fails_with(
      "tensor:view: strides[1] is 0: a stride is a whole number of elements >= 1 (zero and "
      .. "negative strides are not supported)",
      t.view, t, { shape = { 2 }, strides = { 0 } })
    fails_with("strides[2] is -1", t.view, t, { offset = 4, shape = { 2, 2 }, strides = { 2, -1 } })
    fails_with("tensor:view: strides[1] must be a whole number of elements >= 1, got x", t.view, t,
      { shape = { 2 }, strides = { "x" } })
    fails_with(
      "tensor:view: the view's elements overlap: dimension 2 (size 3, stride 1) covers 3 "
      .. "elements, more than the stride 2 of dimension 1",
      t.view, t, { shape = { 2, 3 }, strides = { 2, 1 } })
    fails_with("tensor:view: unknown field 'stride' (fields: offset, shape, strides)", t.view, t,
      { shape = { 2 }, stride = { 1 } })
    fails_with("tensor:view: unknown field '1'", t.view, t, { 2, 2 })
    fails_with("tensor:view: takes a table {offset =, shape =, strides =} or (offset, count)",
      t.view, t, 3)
    fails_with("tensor:view: expected a table", t.view, t, "2")
    fails_with("tensor:rows: first must be a whole number >= 1, got 0", t.rows, t, 0, 1)
    fails_with("tensor:rows: last must be a whole number >= 3, got 2", t.rows, t, 3, 2)
  end)

  it("keep their tensor alive, and are freed with it", function()
    local v
    do
      local t = iota { 8 }
      v = t:view(4, 2)
    end
    collectgarbage()
    collectgarbage()
    assert.same({ 4, 5 }, v:totable())
    local base = v.base
    local w = v:view(1, 1)
    base:free()
    assert.is_true(v.freed)
    assert.is_true(w.freed)
    assert.equal("tensor f32[2] host 8 B view at 4 (freed)", tostring(v))
    fails_with("tensor:totable: tensor used after free", v.totable, v)
    fails_with("tensor[i]: tensor used after free", function() return v[1] end)
    fails_with("tensor:view: tensor used after free", base.view, base, 0, 1)
    fails_with("tensor:copy_from: tensor (argument 1) used after free",
      wl.host_tensor({ 2 }).copy_from, wl.host_tensor { 2 }, v)
  end)

  it("survive the collector in any order, with their tensor or before it", function()
    for round = 1, 40 do
      local t = iota { 64 }
      local views = {}
      for i = 1, 16 do views[i] = t:view(i, 4) end
      for i = 1, 16, 2 do views[i] = nil end
      collectgarbage()
      if round % 2 == 0 then
        t:free()
        for i = 2, 16, 2 do assert.is_true(views[i].freed) end
      else
        assert.same({ 2, 3, 4, 5 }, views[2]:totable())
      end
      t, views = nil, nil -- luacheck: ignore 311 (the references dropped, for the collector)
      collectgarbage()
    end
  end)

  it("free nothing of their tensor when freed", function()
    local t = iota { 8 }
    local v, w = t:view(0, 4), t:view(2, 4)
    local host = wl.memory().host_bytes
    v:free()
    assert.is_true(v.freed)
    assert.is_false(t.freed)
    assert.is_false(w.freed)
    assert.equal(host, wl.memory().host_bytes)
    assert.same({ 2, 3, 4, 5 }, w:totable())
    fails_with("tensor:free: tensor used after free", v.free, v)
  end)

  it("refuse copies between overlapping views of one tensor", function()
    local t = iota { 8 }
    fails_with("tensor:copy_from: the source and the destination overlap (views of one tensor)",
      t:view(0, 4).copy_from, t:view(0, 4), t:view(2, 4))
    t:view(0, 4):copy_from(t:view(4, 4))
    assert.same({ 4, 5, 6, 7, 4, 5, 6, 7 }, t:totable())
  end)

  it("give raw bytes only when contiguous", function()
    local t = iota({ 4 }, "u8")
    assert.equal("\1\2", t:view(1, 2):bytes())
    local s = t:view { shape = { 2 }, strides = { 2 } }
    fails_with("tensor:bytes: the view u8[2] with strides {2} is not contiguous", s.bytes, s)
    fails_with("tensor:set_bytes: the view u8[2] with strides {2} is not contiguous", s.set_bytes,
      s, "ab")
  end)

  it("count their own nonzero bytes for the zero-input check", function()
    local t = wl.host_tensor { 4, 4, dtype = "u8" }
    t[2], t[6] = 1, 1
    assert.equal(0, engine.count_nonzero(t:view { offset = 2, shape = { 2, 2 },
      strides = { 4, 1 } }))
    assert.equal(2, engine.count_nonzero(t:view { offset = 1, shape = { 2, 2 },
      strides = { 4, 1 } }))
    assert.equal(1, engine.count_nonzero(t:view(5, 8)))
  end)

  it("of pinned host tensors are pinned", function()
    local r = h.run_script([[
local wl = require "wlrun"
local t = wl.host_tensor { 8, pinned = true, init = wl.arange(0, 1) }
local v = t:view(2, 3)
print(v.memory, table.concat(v:totable(), " "))
]], "--compile-only")
    assert.equal(0, r.code, r.stderr)
    assert.matches("^pinned\t2%.0 3%.0 4%.0\n", r.stdout)
  end)
end)

-- device tensors under --compile-only: line N of the script is where the error is
local KERNEL = [[
local wl = require "wlrun"
local k = wl.kernel { [=[
__global__ void scale(float* p, int ld, int n) { p[threadIdx.x * ld] *= 2.0f; }
]=], name = "scale" }
local t = wl.tensor { 64, 64 }
]]

local function compile_only(body)
  return h.run_script(KERNEL .. body, "--compile-only --arch sm_90 --cache-dir "
    .. h.quote(h.tmpdir()))
end

-- the script KERNEL .. body exits 1 with the error "script.lua:" .. where (a pattern)
local function refused(body, where)
  local r = compile_only(body)
  assert.equal(1, r.code, r.stderr)
  assert.matches("script%.lua:" .. where, r.stderr)
  return r
end

describe("views of device tensors under --compile-only", function()
  it("bind as a kernel argument: the address of their first element", function()
    local r = compile_only [[
local v = t:view { offset = 65, shape = { 4, 4 }, strides = { 64, 1 } }
local b = k:bind { grid = 1, block = 4, args = { v, 64, 4 } }
b()
print(v.address - t.address, b.tensors[1].tensor == v, v.memory, tostring(v))
]]
    assert.equal(0, r.code, r.stderr)
    assert.equal("260\ttrue\tdevice\ttensor f32[4x4] device 64 B strided view at 65\n",
      r.stdout:match "^[^\n]*\n")
  end)

  it("are checked against the parameter's element type as tensors are", function()
    refused([[
local h16 = wl.tensor { 64, dtype = "f16" }
k:bind { grid = 1, block = 4, args = { h16:view(0, 8), 1, 8 } }
]],
      "7: kernel 'scale' argument 1 %(float%*.-%): expected a f32 tensor, got a f16 tensor "
      .. "%(device%)")
  end)

  it("of a freed tensor: the bound launch says used after free", function()
    refused([[
local b = k:bind { grid = 1, block = 4, args = { t:rows(2, 3), 64, 4 } }
t:free()
b()
]], "8: launch: kernel 'scale': the tensor bound to argument 1 used after free")
  end)

  it("of a freed tensor: a graph that captured it says used after free", function()
    refused([[
local v = t:view(64, 64)
local g = wl.graph(function() k:bind { grid = 1, block = 4, args = { v, 1, 4 } }() end)
g()
t:free()
g()
]], "10: graph:launch: kernel 'scale': the tensor bound to argument 1 used after free")
  end)

  it("of a freed tensor: a graph that captured a copy into it says used after free", function()
    local r = refused([[
local src = wl.tensor { 4, 4 }
local g = wl.graph(function() t:view({ shape = { 4, 4 }, strides = { 64, 1 } }):copy_from(src, wl.current_stream()) end)
print(g.nodes)
t:free()
g()
]], "10: graph:launch: a tensor captured in the graph used after free")
    assert.equal("1\n", r.stdout) -- a block of rows is one 2-D copy
  end)

  it("copy as few 2-D copies as their spacing allows", function()
    local r = compile_only [[
local function nodes(dst, src) return wl.graph(function() dst:copy_from(src, wl.current_stream()) end).nodes end
local c = wl.tensor { 16 }
print(nodes(t:view(0, 16), c))                                                     -- contiguous: one copy
print(nodes(t:view { shape = { 4, 4 }, strides = { 64, 1 } }, wl.tensor { 4, 4 }))   -- a block: one 2-D copy
print(nodes(t:view { shape = { 16 }, strides = { 64 } }, c))                          -- a column: one 2-D copy
print(nodes(t:view { shape = { 4, 4 }, strides = { 1, 64 } }, wl.tensor { 4, 4 }))   -- a transposed block: one per row
print(nodes(t:view { shape = { 2, 2, 4 }, strides = { 1024, 64, 1 } }, wl.tensor { 16 })) -- 3-D: one per plane
]]
    assert.equal(0, r.code, r.stderr)
    assert.matches("^1\n1\n1\n4\n2\ncompile%-only:", r.stdout)
  end)

  it("fill when contiguous; a strided device view is refused", function()
    refused([[
t:rows(3, 4):fill(1)
t:view(7, 3):init(wl.normal(0, 1))
t:view({ shape = { 2, 2 }, strides = { 64, 1 } }):fill(0)
]], "8: tensor:fill: the view f32%[2x2%] with strides {64,1} is not contiguous")
  end)

  it("count in the working set by their own bytes", function()
    local r = compile_only [[
local b = k:bind { grid = 1, block = 4, args = { t:rows(1, 2), 64, 4 } }
print(b.tensors[1].tensor.nbytes, b.tensors[1].tensor.base == t)
]]
    assert.equal(0, r.code, r.stderr)
    assert.matches("^512\ttrue\n", r.stdout)
  end)
end)
