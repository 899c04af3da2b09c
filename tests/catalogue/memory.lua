-- The catalogue of bad inputs, class "memory": nothing undefined in C. Here: a float stored
-- into or used to initialise an integer tensor (NaN, infinities, values out of the dtype's
-- range) saturates as docs/lua-api.md promises — NaN -> 0, above the range -> its maximum,
-- below -> its minimum, ties to even — through every path (init, wl.fill, wl.arange, t:fill,
-- t:init, h[i] = v), on host tensors here and on device tensors on a GPU; the sanitizer build
-- runs these with -fsanitize=float-cast-overflow. See tests/catalogue.lua for the fields.

local INTS = { "i64", "i32", "i16", "i8", "u32", "u8" }
local MAX = { i64 = "9223372036854775807", i32 = "2147483647", i16 = "32767", i8 = "127", u32 = "4294967295", u8 = "255" }
local MIN = { i64 = "-9223372036854775808", i32 = "-2147483648", i16 = "-32768", i8 = "-128", u32 = "0", u8 = "0" }

-- A script that prints "dtype value" for each integer dtype, the value read back from a tensor
-- of two elements made by MAKE (Lua code with `dt` in scope, returning a tensor); device tensors
-- are copied to the host first.
local function per_dtype(make)
  return ([[local wl = require "wlrun"
local nan, inf = 0/0, math.huge
for _, dt in ipairs { "i64", "i32", "i16", "i8", "u32", "u8" } do
  local t = (function() %s end)()
  if t.memory == "device" then t = t:to_host() end
  local a, b = t[1], t[2]
  assert(a == b, dt .. ": the two elements differ")
  print(dt, a)
end
]]):format(make)
end

-- the expected output of per_dtype: each dtype's value from VALUES (a table or a function)
local function lines(values)
  local out = {}
  for _, dt in ipairs(INTS) do
    local v = type(values) == "function" and values(dt) or values[dt]
    out[#out + 1] = dt .. "\t" .. v:gsub("%-", "%%-")
  end
  return "^" .. table.concat(out, "\n") .. "\n"
end

local function all(v) return function() return v end end
local function max(dt) return MAX[dt] end
local function min(dt) return MIN[dt] end

local cases = {}
local function case(name, make, expect, gpu, args)
  cases[#cases + 1] = { name = name, script = per_dtype(make), code = 0, stdout = lines(expect), gpu = gpu, args = args }
end

---- host tensors ----
case("NaN as init of integer host tensors gives 0", "return wl.host_tensor { 2, dtype = dt, init = nan }", all("0"))
case("+inf as init of integer host tensors gives the maximum", "return wl.host_tensor { 2, dtype = dt, init = inf }", max)
case("-inf as init of integer host tensors gives the minimum", "return wl.host_tensor { 2, dtype = dt, init = -inf }", min)
case("wl.fill(NaN) into integer host tensors gives 0", "return wl.host_tensor { 2, dtype = dt, init = wl.fill(nan) }", all("0"))
case("t:fill(NaN) on integer host tensors gives 0",
  "local t = wl.host_tensor { 2, dtype = dt, init = 5 } t:fill(nan) return t", all("0"))
case("t:init(wl.fill(1e300)) on integer host tensors gives the maximum",
  "local t = wl.host_tensor { 2, dtype = dt } t:init(wl.fill(1e300)) return t", max)
case("h[i] = NaN on integer host tensors gives 0",
  "local t = wl.host_tensor { 2, dtype = dt, init = 5 } t[1] = nan t[2] = nan return t", all("0"))
case("h[i] = -1e300 on integer host tensors gives the minimum",
  "local t = wl.host_tensor { 2, dtype = dt } t[1] = -1e300 t[2] = -1e300 return t", min)
case("2^63 into integer host tensors gives the maximum (i64: 2^63 - 1)",
  "local t = wl.host_tensor { 2, dtype = dt } t[1] = 2^63 t[2] = 2^63 return t", max)
case("-1.5 into integer host tensors: ties to even, unsigned ones give 0",
  "return wl.host_tensor { 2, dtype = dt, init = -1.5 }",
  { i64 = "-2", i32 = "-2", i16 = "-2", i8 = "-2", u32 = "0", u8 = "0" })
case("a pinned integer host tensor saturates too",
  "return wl.host_tensor { 2, dtype = dt, pinned = true, init = inf }", max, nil, "--compile-only")

cases[#cases + 1] = { name = "wl.arange past an integer host tensor's range saturates", code = 0,
  script = [[local wl = require "wlrun"
print(table.concat(wl.host_tensor { 6, dtype = "i8", init = wl.arange(125, 1) }:totable(), " "))
print(table.concat(wl.host_tensor { 4, dtype = "u8", init = wl.arange(1, -1) }:totable(), " "))
print(table.concat(wl.host_tensor { 3, dtype = "i64", init = wl.arange(2^62, 2^62) }:totable(), " "))
]], stdout = "^125 126 127 127 127 127\n1 0 0 0\n4611686018427387904 9223372036854775807 9223372036854775807\n$" }
cases[#cases + 1] = { name = "random inits of an integer host tensor stay within its range", code = 0,
  script = [[local wl = require "wlrun"
local t = wl.host_tensor { 4096, dtype = "i8", init = wl.normal(0, 1e6) }
local lo, hi = math.huge, -math.huge
for _, v in ipairs(t:totable()) do lo, hi = math.min(lo, v), math.max(hi, v) end
print(lo, hi)
]], stdout = "^%-128\t127\n$" }
cases[#cases + 1] = { name = "NaN into a device integer tensor under --compile-only", code = 0, args = "--compile-only",
  script = [[local wl = require "wlrun"
for _, dt in ipairs { "i64", "i32", "i16", "i8", "u32", "u8" } do
  local t = wl.tensor { 4, dtype = dt, init = 0/0 }
  t:fill(math.huge)
  t:init(wl.fill(-math.huge))
end
print("ok")
]], stdout = "^ok\n" }

---- device tensors (on a GPU: the init kernel of cuda_init_kernels.cu) ----
case("NaN as init of integer device tensors gives 0", "return wl.tensor { 2, dtype = dt, init = nan }", all("0"), true)
case("+inf as init of integer device tensors gives the maximum", "return wl.tensor { 2, dtype = dt, init = inf }", max, true)
case("-inf as init of integer device tensors gives the minimum", "return wl.tensor { 2, dtype = dt, init = -inf }", min, true)
case("t:fill(NaN) on integer device tensors gives 0",
  "local t = wl.tensor { 2, dtype = dt, init = 5 } t:fill(nan) return t", all("0"), true)
case("wl.fill(1e300) on integer device tensors gives the maximum",
  "local t = wl.tensor { 2, dtype = dt } t:init(wl.fill(1e300)) return t", max, true)
case("2^63 into integer device tensors gives the maximum (i64: 2^63 - 1)",
  "return wl.tensor { 2, dtype = dt, init = 2^63 }", max, true)
case("-2^63 - 2^11 into integer device tensors gives the minimum",
  "return wl.tensor { 2, dtype = dt, init = -2^63 - 2^11 }", min, true)
case("2.5 into integer device tensors: ties to even", "return wl.tensor { 2, dtype = dt, init = 2.5 }", all("2"), true)
case("a host NaN copied to the device and back stays 0",
  "local h = wl.host_tensor { 2, dtype = dt } h[1] = nan h[2] = nan return h:to_device()", all("0"), true)

cases[#cases + 1] = { name = "wl.arange past an integer device tensor's range saturates", code = 0, gpu = true,
  script = [[local wl = require "wlrun"
print(table.concat(wl.tensor { 6, dtype = "i8", init = wl.arange(125, 1) }:to_host():totable(), " "))
print(table.concat(wl.tensor { 4, dtype = "u8", init = wl.arange(1, -1) }:to_host():totable(), " "))
print(table.concat(wl.tensor { 3, dtype = "i64", init = wl.arange(2^62, 2^62) }:to_host():totable(), " "))
]], stdout = "^125 126 127 127 127 127\n1 0 0 0\n4611686018427387904 9223372036854775807 9223372036854775807\n$" }
cases[#cases + 1] = { name = "random inits of an integer device tensor stay within its range", code = 0, gpu = true,
  script = [[local wl = require "wlrun"
for _, dt in ipairs { "i8", "u8", "i16" } do
  local t = wl.tensor { 1 << 16, dtype = dt, init = wl.normal(0, 1e6) }:to_host()
  local lo, hi = math.huge, -math.huge
  for _, v in ipairs(t:totable()) do lo, hi = math.min(lo, v), math.max(hi, v) end
  print(dt, lo, hi)
end
]], stdout = "^i8\t%-128\t127\nu8\t0\t255\ni16\t%-32768\t32767\n$" }

return cases
