-- Host tensors (wl.host_tensor), in-process: no device needed (docs/lua-api.md, "Tensors").
local h = require "helper"
local wl = require "wlrun"

local function mean_std(values)
  local n, sum = #values, 0
  for i = 1, n do sum = sum + values[i] end
  local mean, ss = sum / n, 0
  for i = 1, n do ss = ss + (values[i] - mean) ^ 2 end
  return mean, math.sqrt(ss / (n - 1))
end

local fails_with = h.fails_with

describe("host tensors", function()
  it("have a shape, dtype, nbytes, numel, #, ndim and memory", function()
    local t = wl.host_tensor { 2, 3, 4, dtype = "f16" }
    assert.same({ 2, 3, 4 }, t.shape)
    assert.equal("f16", t.dtype)
    assert.equal(48, t.nbytes)
    assert.equal(24, t.numel)
    assert.equal(24, #t)
    assert.equal(3, t.ndim)
    assert.equal("host", t.memory)
    assert.is_false(t.freed)
    assert.is_true(t.address ~= 0)
  end)

  it("default to f32 and take shape = {...} instead of the list", function()
    local t = wl.host_tensor { shape = { 5, 7 } }
    assert.equal("f32", t.dtype)
    assert.same({ 5, 7 }, t.shape)
    assert.equal(140, t.nbytes)
  end)

  it("give a new table for the shape each time", function()
    local t = wl.host_tensor { 3 }
    t.shape[1] = 99
    assert.same({ 3 }, t.shape)
  end)

  it("know every dtype's element size", function()
    local sizes = { f64 = 8, f32 = 4, f16 = 2, bf16 = 2, i64 = 8, i32 = 4, i16 = 2, i8 = 1, u32 = 4,
      u8 = 1 }
    for dtype, size in pairs(sizes) do
      local t = wl.host_tensor { 3, dtype = dtype }
      assert.equal(dtype, t.dtype)
      assert.equal(3 * size, t.nbytes, dtype)
    end
  end)

  it("print their dtype, shape, memory and size", function()
    local t = wl.host_tensor { 2, 3, 4, dtype = "f16" }
    assert.equal("tensor f16[2x3x4] host 48 B", tostring(t))
    assert.equal("tensor f32[1024] host 4.0 KiB", tostring(wl.host_tensor { 1024 }))
  end)

  it("have read-only fields", function()
    local t = wl.host_tensor { 4 }
    fails_with("tensor fields are read-only ('dtype')", function() t.dtype = "f64" end)
  end)
end)

describe("tensor creation errors", function()
  -- checked before any memory is touched: the same for wl.tensor (device) as for host tensors
  for _, fn in ipairs { "host_tensor", "tensor" } do
    local create = wl[fn]

    it(fn .. " refuses an unknown dtype", function()
      fails_with("unknown dtype 'f8'", create, { 4, dtype = "f8" })
    end)

    it(fn .. " refuses a zero, negative or fractional dimension", function()
      fails_with("wl." .. fn .. ": dimension 1 must be a whole number >= 1, got 0", create, { 0 })
      fails_with("wl." .. fn .. ": dimension 2 must be a whole number >= 1, got -3", create,
        { 2, -3 })
      fails_with("wl." .. fn .. ": dimension 1 must be a whole number >= 1, got 2.5", create,
        { 2.5 })
    end)

    it(fn .. " wants 1 to 8 dimensions", function()
      fails_with("wl." .. fn .. ": a tensor has 1 to 8 dimensions, got 0", create, {})
      fails_with("wl." .. fn .. ": a tensor has 1 to 8 dimensions, got 0", create, { shape = {} })
      fails_with("a tensor has 1 to 8 dimensions, got 9", create, { 1, 1, 1, 1, 1, 1, 1, 1, 1 })
    end)

    it(fn .. " refuses an unknown field", function()
      fails_with("wl." .. fn .. ": unknown field 'dtyp'", create, { 4, dtyp = "f32" })
    end)

    it(fn .. " refuses a bad init", function()
      fails_with("wl." .. fn .. ": init must be", create, { 4, init = "ones" })
      fails_with("init must be", create, { 4, init = true })
      fails_with("init must be", create, { 4, init = {} })
      fails_with("uniform(lo, hi) needs lo < hi", create, { 4, init = wl.uniform(1, 1) })
      fails_with("normal(mean, std) needs std >= 0", create, { 4, init = wl.normal(0, -1) })
    end)

    it(fn .. " wants the shape given once", function()
      fails_with("give the shape once", create, { 2, shape = { 2, 2 } })
    end)
  end

  it("pinned is a host tensor's field only", function()
    fails_with("wl.tensor: unknown field 'pinned'", wl.tensor, { 4, pinned = true })
  end)

  if not h.has_gpu then
    it("without a device, wl.tensor is a no_device error", function()
      local ok, e = pcall(wl.tensor, { 4 })
      assert.is_false(ok)
      assert.equal("no_device", e.kind)
    end)
  end
end)

describe("host tensor initialisation", function()
  it("zeros by default and with \"zeros\"", function()
    assert.same({ 0, 0, 0 }, wl.host_tensor { 3 }:totable())
    assert.same({ 0, 0, 0 }, wl.host_tensor { 3, dtype = "i32", init = "zeros" }:totable())
    assert.same({ 0, 0, 0 }, wl.host_tensor { 3, init = wl.zeros() }:totable())
  end)

  it("fills with a number or wl.fill(v)", function()
    assert.same({ 7, 7, 7, 7 }, wl.host_tensor { 2, 2, init = 7 }:totable())
    assert.same({ 2.5, 2.5 }, wl.host_tensor { 2, dtype = "f64", init = wl.fill(2.5) }:totable())
  end)

  it("accepts \"none\"", function()
    assert.equal(4, #wl.host_tensor { 4, init = "none" })
  end)

  it("counts with wl.arange(start, step) (default 0, 1)", function()
    assert.same({ 0, 1, 2, 3, 4 }, wl.host_tensor { 5, init = wl.arange() }:totable())
    assert.same({ 10, 13, 16, 19 }, wl.host_tensor { 4, dtype = "i32",
      init = wl.arange(10, 3) }:totable())
    assert.same({ 1, 0.5, 0, -0.5 }, wl.host_tensor { 4, dtype = "f64",
      init = wl.arange(1, -0.5) }:totable())
  end)

  it("draws wl.uniform(lo, hi) within the range", function()
    local v = wl.host_tensor { 100000, init = wl.uniform(-2, 3) }:totable()
    local lo, hi = math.huge, -math.huge
    for i = 1, #v do
      lo, hi = math.min(lo, v[i]), math.max(hi, v[i])
    end
    assert.is_true(lo >= -2 and hi <= 3, ("range [%g, %g]"):format(lo, hi))
    assert.is_true(lo < -1.99 and hi > 2.99, ("range [%g, %g]"):format(lo, hi))
    local m = mean_std(v)
    assert.is_true(math.abs(m - 0.5) < 0.03, "mean " .. m)
  end)

  it("draws wl.uniform() from [0, 1] by default", function()
    local v = wl.host_tensor { 1000, init = wl.uniform() }:totable()
    for i = 1, #v do assert.is_true(v[i] >= 0 and v[i] <= 1, tostring(v[i])) end
  end)

  it("draws wl.normal() with mean 0 and std 1", function()
    local m, s = mean_std(wl.host_tensor { 100000, init = wl.normal() }:totable())
    assert.is_true(math.abs(m) < 0.02, "mean " .. m)
    assert.is_true(math.abs(s - 1) < 0.02, "std " .. s)
  end)

  it("draws wl.normal(mean, std) with that mean and std", function()
    local m, s = mean_std(wl.host_tensor { 100000, dtype = "f64",
      init = wl.normal(5, 2) }:totable())
    assert.is_true(math.abs(m - 5) < 0.04, "mean " .. m)
    assert.is_true(math.abs(s - 2) < 0.04, "std " .. s)
  end)

  it("gives the same values for the same seed option, others for another", function()
    local a = wl.host_tensor { 64, init = wl.normal(0, 1, { seed = 7 }) }:totable()
    local b = wl.host_tensor { 64, init = wl.normal(0, 1, { seed = 7 }) }:totable()
    local c = wl.host_tensor { 64, init = wl.normal(0, 1, { seed = 8 }) }:totable()
    assert.same(a, b)
    assert.are_not.same(a, c)
    local u1 = wl.host_tensor { 64, init = wl.uniform(0, 1, { seed = 7 }) }:totable()
    local u2 = wl.host_tensor { 64, init = wl.uniform(0, 1, { seed = 7 }) }:totable()
    assert.same(u1, u2)
  end)

  it("gives element i as a function of (seed, i) alone, whatever the size", function()
    local small = wl.host_tensor { 10, init = wl.uniform(0, 1, { seed = 11 }) }:totable()
    local large = wl.host_tensor { 1000, init = wl.uniform(0, 1, { seed = 11 }) }:totable()
    for i = 1, 10 do assert.equal(small[i], large[i]) end
  end)

  it("gives successive tensors without a seed different values", function()
    local a = wl.host_tensor { 64, init = wl.normal() }:totable()
    local b = wl.host_tensor { 64, init = wl.normal() }:totable()
    assert.are_not.same(a, b)
    local u1 = wl.host_tensor { 64, init = wl.uniform() }:totable()
    local u2 = wl.host_tensor { 64, init = wl.uniform() }:totable()
    assert.are_not.same(u1, u2)
  end)

  it("re-initialises in place with t:fill(v) and t:init(spec)", function()
    local t = wl.host_tensor { 4, dtype = "i16" }
    assert.equal(t, t:fill(3))
    assert.same({ 3, 3, 3, 3 }, t:totable())
    t:init(wl.arange(1))
    assert.same({ 1, 2, 3, 4 }, t:totable())
  end)
end)

describe("host tensor elements", function()
  it("read and write 1-based flat indices", function()
    local t = wl.host_tensor { 2, 3, dtype = "f64" }
    t[1] = 1.25
    t[6] = -7
    assert.equal(1.25, t[1])
    assert.equal(-7, t[6])
    assert.same({ 1.25, 0, 0, 0, 0, -7 }, t:totable())
  end)

  it("read integer dtypes as Lua integers and float dtypes as floats", function()
    local i = wl.host_tensor { 1, dtype = "i32", init = 5 }
    local f = wl.host_tensor { 1, dtype = "f32", init = 5 }
    assert.equal("integer", math.type(i[1]))
    assert.equal("float", math.type(f[1]))
  end)

  it("round f16 to nearest even", function()
    local t = wl.host_tensor { 4, dtype = "f16" }
    t[1] = 0.1
    t[2] = 2049 -- halfway between 2048 and 2050
    t[3] = 2051 -- halfway between 2050 and 2052
    t[4] = 65504
    assert.equal(0.0999755859375, t[1])
    assert.equal(2048, t[2])
    assert.equal(2052, t[3])
    assert.equal(65504, t[4])
    t[4] = 70000 -- above the largest f16
    assert.equal(math.huge, t[4])
  end)

  it("round bf16 to nearest even", function()
    local t = wl.host_tensor { 4, dtype = "bf16" }
    t[1] = 0.1
    t[2] = 1 / 3
    t[3] = 257 -- halfway between 256 and 258
    t[4] = 259 -- halfway between 258 and 260
    assert.equal(0.10009765625, t[1])
    assert.equal(0.333984375, t[2])
    assert.equal(256, t[3])
    assert.equal(260, t[4])
  end)

  it("round f32 like C's float", function()
    local t = wl.host_tensor { 1, dtype = "f32" }
    t[1] = 0.1
    assert.equal(string.unpack("f", string.pack("f", 0.1)), t[1])
  end)

  it("round integer dtypes to nearest and saturate", function()
    local i8 = wl.host_tensor { 4, dtype = "i8" }
    i8[1], i8[2], i8[3], i8[4] = 300, -300, 2.6, -2.6
    assert.same({ 127, -128, 3, -3 }, i8:totable())
    local u8 = wl.host_tensor { 3, dtype = "u8" }
    u8[1], u8[2], u8[3] = -5, 256, 7.6
    assert.same({ 0, 255, 8 }, u8:totable())
    local i16 = wl.host_tensor { 2, dtype = "i16" }
    i16[1], i16[2] = 40000, -40000
    assert.same({ 32767, -32768 }, i16:totable())
    local u32 = wl.host_tensor { 2, dtype = "u32" }
    u32[1], u32[2] = -1, 2 ^ 33
    assert.same({ 0, 4294967295 }, u32:totable())
    local i32 = wl.host_tensor { 2, dtype = "i32" }
    i32[1], i32[2] = 2 ^ 40, -(2 ^ 40)
    assert.same({ 2147483647, -2147483648 }, i32:totable())
  end)

  it("keep i64 integers exact", function()
    local t = wl.host_tensor { 2, dtype = "i64" }
    t[1], t[2] = math.maxinteger, math.mininteger + 1
    assert.equal(math.maxinteger, t[1])
    assert.equal(math.mininteger + 1, t[2])
  end)

  it("refuse an index out of range", function()
    local t = wl.host_tensor { 2, 3 }
    fails_with("index 0 out of range 1..6", function() return t[0] end)
    fails_with("index 7 out of range 1..6", function() return t[7] end)
    fails_with("index 7 out of range 1..6", function() t[7] = 1 end)
  end)

  it("refuse a value that is not a number", function()
    local t = wl.host_tensor { 2 }
    assert.has_error(function() t[1] = "x" end)
  end)
end)

describe("host tensor copies", function()
  it("copy_from copies between host tensors of the same dtype and size", function()
    local src = wl.host_tensor { 2, 3, dtype = "i32", init = wl.arange(1) }
    local dst = wl.host_tensor { 6, dtype = "i32" }
    assert.equal(dst, dst:copy_from(src))
    assert.same({ 1, 2, 3, 4, 5, 6 }, dst:totable())
    src[1] = 100
    assert.equal(1, dst[1])
  end)

  it("copy_from refuses another dtype or size", function()
    local dst = wl.host_tensor { 6 }
    fails_with("tensor:copy_from: source f64[6] does not match destination f32[6]",
      dst.copy_from, dst, wl.host_tensor { 6, dtype = "f64" })
    fails_with("tensor:copy_from: source f32[2x2] does not match destination f32[6]",
      dst.copy_from, dst, wl.host_tensor { 2, 2 })
  end)

  it("to_host gives a new, independent copy", function()
    local a = wl.host_tensor { 3, dtype = "u8", init = wl.arange(1) }
    local b = a:to_host()
    assert.same({ 1, 2, 3 }, b:totable())
    assert.equal("host", b.memory)
    b[1] = 9
    assert.equal(1, a[1])
  end)
end)

describe("host tensor lifetime", function()
  local function host_bytes()
    collectgarbage()
    collectgarbage()
    return wl.memory().host_bytes
  end

  it("t:free() releases the memory and wl.memory() accounts for it", function()
    local before = host_bytes()
    local t = wl.host_tensor { 1000, dtype = "f64" }
    assert.equal(before + 8000, wl.memory().host_bytes)
    t:free()
    assert.is_true(t.freed)
    assert.equal(0, t.address)
    assert.equal(before, wl.memory().host_bytes)
    assert.equal("tensor f64[1000] host 7.8 KiB (freed)", tostring(t))
  end)

  it("a freed tensor refuses element access and totable", function()
    local t = wl.host_tensor { 4 }
    t:free()
    assert.has_error(function() return t[1] end)
    assert.has_error(function() t[1] = 1 end)
    assert.has_error(function() t:totable() end)
    assert.equal(4, #t) -- its layout stays readable
  end)

  it("<close> frees at the end of the block", function()
    local before = host_bytes()
    local escaped
    do
      local t <close> = wl.host_tensor { 256, dtype = "i32" }
      escaped = t
      assert.equal(before + 1024, wl.memory().host_bytes)
    end
    assert.is_true(escaped.freed)
    assert.equal(before, wl.memory().host_bytes)
  end)

  it("the garbage collector frees unreachable tensors", function()
    local before = host_bytes()
    wl.host_tensor { 4096 }
    assert.equal(before, host_bytes())
  end)

  it("wl.memory() has the documented fields", function()
    local m = wl.memory()
    for _, f in ipairs { "device_bytes", "device_peak_bytes", "device_tensors",
      "device_allocations",
                         "pinned_bytes", "host_bytes" } do
      assert.equal("integer", math.type(m[f]), f)
    end
  end)
end)
