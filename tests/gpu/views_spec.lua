-- GPU specs of tensor views (docs/lua-api.md, "Views"): a kernel writing into a view, copies
-- into and out of views (contiguous and strided, device and host), a strided view read by a
-- kernel with its strides, the zero-input and working-set checks of wl.bench, and a freed
-- tensor under a bound launch and a captured graph. Each prints what it measured. The same
-- checks without a device: tests/spec/view_spec.lua.
local h = require "helper"
local wl = require "wlrun"
local engine = require "wlrun.engine"

local SOURCES = {
  addone = [[
__global__ void addone(float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1.0f;
}
]],
  -- out[r] = sum of row r of a rows x cols matrix whose rows are ld elements apart
  rowsum = [[
__global__ void rowsum(const float* a, long ld, int rows, int cols, float* out) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float s = 0.0f;
  for (int c = 0; c < cols; c++) s += a[r * ld + c];
  out[r] = s;
}
]],
  copy = [[
__global__ void copy(const float* x, float* y, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) y[i] = x[i];
}
]],
}

local compiled = {}
local function kernel(key)
  compiled[key] = compiled[key] or wl.kernel { SOURCES[key], name = key }
  return compiled[key]
end

-- the message of the error fn raises
local function error_of(fn)
  local ok, e = pcall(fn)
  assert.is_false(ok, "expected an error")
  return type(e) == "table" and e.message or tostring(e)
end

-- element (i, j), 0-based, of an n-column matrix made by wl.arange(0, 1)
local function at(n, i, j) return i * n + j end

describe("tensor views on a GPU", function()
  h.gpu_it("a kernel writing into a view changes exactly that sub-range", function()
    local t = wl.tensor { 1 << 20, init = 0 }
    local v = t:view(1000, 4096)
    kernel("addone"):bind { grid = 16, block = 256, args = { v, 4096 } }()
    local host, changed, first, last = t:to_host(), 0, nil, nil
    for i = 1, #host do
      if host[i] ~= 0 then
        changed = changed + 1
        first, last = first or i - 1, i - 1
        assert.equal(1, host[i])
      end
    end
    print(
      ("\n    addone into t:view(1000, 4096) of 1M elements: %d elements changed, %s to %s"):format(
      changed, first, last))
    assert.equal(4096, changed)
    assert.equal(1000, first)
    assert.equal(5095, last)
  end)

  h.gpu_it("copies into and out of contiguous views, device and host", function()
    local t = wl.tensor { 64, 64, init = 0 }
    local src = wl.host_tensor { 8, 64, init = wl.arange(1, 1) }
    t:rows(9, 16):copy_from(src)
    local back = t:rows(9, 16):to_host()
    assert.same(src:totable(), back:totable())
    local host = t:to_host()
    local nonzero = 0
    for i = 1, #host do nonzero = nonzero + (host[i] ~= 0 and 1 or 0) end
    assert.equal(8 * 64, nonzero)
    assert.equal(1, host[8 * 64 + 1])
    local d = wl.tensor { 8 * 64 }
    d:copy_from(t:rows(9, 16)) -- device to device
    assert.same(src:totable(), d:to_host():totable())
    print(
      ("\n    rows 9-16 of a 64x64 device tensor: %d elements written, read back equal (device "
      .. "and host)"):format(nonzero))
  end)

  h.gpu_it("copies into and out of strided views: a block, a column, a transpose", function()
    local n = 256
    local t = wl.tensor { n, n, init = wl.arange(0, 1) }
    local block = t:view { offset = at(n, 10, 20), shape = { 32, 48 }, strides = { n, 1 } }
    local out = block:to_host()
    for i = 0, 31 do
      for j = 0, 47 do assert.equal(at(n, 10 + i, 20 + j), out[i * 48 + j + 1]) end
    end
    local col = t:view { offset = 7, shape = { n }, strides = { n } }:to_host()
    for i = 0, n - 1 do assert.equal(at(n, i, 7), col[i + 1]) end
    local tr = wl.tensor { 16, 16 }
    -- the transpose of the top-left block
    tr:copy_from(t:view { shape = { 16, 16 }, strides = { 1, n } })
    local trh = tr:to_host()
    for i = 0, 15 do
      for j = 0, 15 do assert.equal(at(n, j, i), trh[i * 16 + j + 1]) end
    end
    -- into a strided device view from a host tensor, and from a device tensor
    local z = wl.tensor { n, n, init = 0 }
    z:view({ offset = at(n, 100, 200), shape = { 32, 48 }, strides = { n, 1 } }):copy_from(out)
    z:view({ offset = at(n, 0, 0), shape = { 32, 48 }, strides = { n, 1 } }):copy_from(block)
    local zh, nonzero = z:to_host(), 0
    for i = 1, #zh do nonzero = nonzero + (zh[i] ~= 0 and 1 or 0) end
    assert.equal(at(n, 10, 20), zh[at(n, 100, 200) + 1])
    assert.equal(at(n, 41, 67), zh[at(n, 131, 247) + 1])
    assert.equal(at(n, 41, 67), zh[at(n, 31, 47) + 1])
    assert.equal(0, zh[at(n, 132, 200) + 1])
    assert.equal(2 * 32 * 48, nonzero) -- the block holds no zero: its first element is (10, 20)
    print(
      ("\n    a 32x48 block, a column and a 16x16 transpose of a 256x256 tensor copied out; two "
      .. "blocks copied in: %d elements set"):format(nonzero))
  end)

  h.gpu_it("a strided view passed to a kernel that reads with the strides", function()
    local n = 512
    local t = wl.tensor { n, n, init = wl.arange(0, 1) }
    local rows, cols, r0, c0 = 100, 37, 50, 300
    local block = t:view { offset = at(n, r0, c0), shape = { rows, cols }, strides = { n, 1 } }
    local out = wl.tensor { rows }
    kernel("rowsum"):bind { grid = 1, block = 128,
      args = { block, block.strides[1], rows, cols, out } }()
    local got, worst = out:to_host(), 0
    for r = 0, rows - 1 do
      local want = 0
      for c = 0, cols - 1 do want = want + at(n, r0 + r, c0 + c) end
      worst = math.max(worst, math.abs(got[r + 1] - want) / want)
    end
    print(
      ("\n    rowsum over a 100x37 block (ld 512) of a 512x512 tensor: worst relative "
      .. "error %.2g"):format(worst))
    assert.is_true(worst < 1e-5, "worst relative error " .. worst)
  end)

  h.gpu_it("wl.bench counts a view's own bytes and checks its own elements for zeros", function()
    local big = wl.tensor { 64 << 20, init = 0 } -- 256 MiB
    big:view(0, 16):fill(1)
    local x, y = big:view(1 << 20, 1 << 18), big:view(0, 1 << 18) -- 1 MiB each, x all zeros
    local r = wl.bench(kernel("copy"):bind { grid = 256, block = 256, args = { x, y, 1 << 18 } },
      { mode = "batch", warmup = 5, iters = 30 })
    local codes = {}
    for _, w in ipairs(r.warnings) do codes[w.code] = w.message end
    print(("\n    copy of 1 MiB views of a 256 MiB tensor: cache-hot: %s; zero-inputs: %s"):format(
      tostring(codes["cache-hot"]), tostring(codes["zero-inputs"])))
    if not r.flush_l2 then -- x and y: 2 MiB together, in the L2 of any recent GPU
      assert.truthy(codes["cache-hot"] and codes["cache-hot"]:find("(2 MiB)", 1, true),
        codes["cache-hot"])
    end
    assert.truthy(codes["zero-inputs"], "a zero view of a tensor that is not all zeros")
    big:view(0, 16):fill(1) -- the copy above wrote x's zeros over them (y is that range)
    local r2 = wl.bench(kernel("copy"):bind { grid = 256, block = 256,
      args = { big:view(0, 1 << 18), wl.tensor { 1 << 18 }, 1 << 18 } },
      { mode = "batch", warmup = 5, iters = 30 })
    for _, w in ipairs(r2.warnings) do assert.are_not.equal("zero-inputs", w.code, w.message) end
    -- a strided view's own elements: 4 of the 16 ones (1.0f has 2 nonzero bytes)
    assert.equal(8, engine.count_nonzero(big:view { shape = { 4, 4 }, strides = { 1024, 1 } }))
    assert.equal(0, engine.count_nonzero(big:view { offset = 16, shape = { 4, 4 },
      strides = { 1024, 1 } }))
  end)

  h.gpu_it(
    "a freed tensor under a bound launch and a captured graph is used after free, through "
    .. "its views", function()
    local t = wl.tensor { 4096, init = 0 }
    local v = t:view(1024, 1024)
    local b = kernel("addone"):bind { grid = 4, block = 256, args = { v, 1024 } }
    local g = wl.graph(function()
      b()
      t:view(0, 1024):copy_from(v, wl.current_stream())
    end)
    g()
    wl.sync()
    assert.equal(1, t:to_host()[1025])
    t:free()
    local launch = error_of(function() b() end)
    local replay = error_of(function() g() end)
    print("\n    " .. launch .. "\n    " .. replay)
    assert.truthy(
      launch:find("launch: kernel 'addone': the tensor bound to argument 1 used after free", 1,
      true), launch)
    assert.truthy(replay:find("graph:launch: ", 1, true)
      and replay:find("used after free", 1, true), replay)
  end)
end)
