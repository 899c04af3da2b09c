-- The catalogue of bad inputs, class "memory": nothing undefined in C. Here: a finite float
-- stored into or used to initialise an integer tensor out of the dtype's range saturates as
-- docs/lua-api.md promises — above the range -> its maximum, below -> its minimum, ties to even
-- — through every path (init, wl.fill, wl.arange, t:fill, t:init, h[i] = v), on host tensors
-- here and on device tensors on a GPU; NaN and the infinities are refused at the script's line
-- (an integer has none); the sanitizer build runs these with -fsanitize=float-cast-overflow.
-- See tests/catalogue.lua for the fields.

local INTS = { "i64", "i32", "i16", "i8", "u32", "u8" }
local MAX = { i64 = "9223372036854775807", i32 = "2147483647", i16 = "32767", i8 = "127",
  u32 = "4294967295", u8 = "255" }
local MIN = { i64 = "-9223372036854775808", i32 = "-2147483648", i16 = "-32768", i8 = "-128",
  u32 = "0", u8 = "0" }

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
  cases[#cases + 1] = { name = name, script = per_dtype(make), code = 0, stdout = lines(expect),
    gpu = gpu, args = args }
end

-- NaN or an infinity into an integer tensor by MAKE (Lua code with `dt` in scope): refused, the
-- message naming the script's line (3, where MAKE is) and the dtype, for every integer dtype
local function refused(name, make, gpu, args)
  cases[#cases + 1] = { name = name, code = 0, gpu = gpu, args = args, script = ([[local wl = require "wlrun"
local nan, inf = 0/0, math.huge
local function try(dt) %s end
for _, dt in ipairs { "i64", "i32", "i16", "i8", "u32", "u8" } do
  local ok, e = pcall(try, dt)
  print(dt, ok, tostring(type(e) == "table" and e.message or e):match("script%%.lua:3: .-: (%%S+) cannot be stored in an integer tensor %%((%%w+)%%)"))
end
]]):format(make), stdout = (function()
    local out = {}
    for _, dt in ipairs(INTS) do out[#out + 1] = dt .. "\tfalse\t[%-%w]+\t" .. dt end
    return "^" .. table.concat(out, "\n") .. "\n"
  end)() }
end

---- host tensors ----
refused("NaN as init of integer host tensors is refused at the script's line",
  "return wl.host_tensor { 2, dtype = dt, init = nan }")
refused("+inf and -inf as init of integer host tensors are refused",
  "if dt == 'u8' then return wl.host_tensor { 2, dtype = dt, init = -inf } end return "
    .. "wl.host_tensor { 2, dtype = dt, init = inf }")
refused("wl.fill(NaN) into integer host tensors is refused",
  "return wl.host_tensor { 2, dtype = dt, init = wl.fill(nan) }")
refused("t:fill(NaN) on integer host tensors is refused",
  "local t = wl.host_tensor { 2, dtype = dt, init = 5 }; return t:fill(nan)")
case("t:init(wl.fill(1e300)) on integer host tensors gives the maximum",
  "local t = wl.host_tensor { 2, dtype = dt } t:init(wl.fill(1e300)) return t", max)
refused("h[i] = NaN on integer host tensors is refused",
  "local t = wl.host_tensor { 2, dtype = dt, init = 5 }; t[1] = nan")
case("h[i] = -1e300 on integer host tensors gives the minimum",
  "local t = wl.host_tensor { 2, dtype = dt } t[1] = -1e300 t[2] = -1e300 return t", min)
case("2^63 into integer host tensors gives the maximum (i64: 2^63 - 1)",
  "local t = wl.host_tensor { 2, dtype = dt } t[1] = 2^63 t[2] = 2^63 return t", max)
case("-1.5 into integer host tensors: ties to even, unsigned ones give 0",
  "return wl.host_tensor { 2, dtype = dt, init = -1.5 }",
  { i64 = "-2", i32 = "-2", i16 = "-2", i8 = "-2", u32 = "0", u8 = "0" })
case("a pinned integer host tensor saturates too",
  "return wl.host_tensor { 2, dtype = dt, pinned = true, init = 1e300 }", max, nil,
    "--compile-only")

cases[#cases + 1] = { name = "wl.arange past an integer host tensor's range saturates", code = 0,
  script = [[local wl = require "wlrun"
print(table.concat(wl.host_tensor { 6, dtype = "i8", init = wl.arange(125, 1) }:totable(), " "))
print(table.concat(wl.host_tensor { 4, dtype = "u8", init = wl.arange(1, -1) }:totable(), " "))
print(table.concat(wl.host_tensor { 3, dtype = "i64", init = wl.arange(2^62, 2^62) }:totable(), " "))
]],
    stdout
    =
    "^125 126 127 127 127 127\n1 0 0 0\n4611686018427387904 9223372036854775807 "
    .. "9223372036854775807\n$" }
cases[#cases + 1] = { name = "random inits of an integer host tensor stay within its range",
  code = 0,
  script = [[local wl = require "wlrun"
local t = wl.host_tensor { 4096, dtype = "i8", init = wl.normal(0, 1e6) }
local lo, hi = math.huge, -math.huge
for _, v in ipairs(t:totable()) do lo, hi = math.min(lo, v), math.max(hi, v) end
print(lo, hi)
]], stdout = "^%-128\t127\n$" }
refused("NaN into a device integer tensor under --compile-only is refused too",
  "return wl.tensor { 4, dtype = dt, init = nan }", nil, "--compile-only")
refused("t:fill(inf) on a device integer tensor under --compile-only is refused",
  "local t = wl.tensor { 4, dtype = dt }; return t:fill(inf)", nil, "--compile-only")

---- device tensors (on a GPU: the init kernel of cuda_init_kernels.cu) ----
refused("NaN as init of integer device tensors is refused",
  "return wl.tensor { 2, dtype = dt, init = nan }", true)
refused("t:fill(-inf) on integer device tensors is refused",
  "local t = wl.tensor { 2, dtype = dt, init = 5 }; return t:fill(-inf)", true)
case("wl.fill(1e300) on integer device tensors gives the maximum",
  "local t = wl.tensor { 2, dtype = dt } t:init(wl.fill(1e300)) return t", max, true)
case("2^63 into integer device tensors gives the maximum (i64: 2^63 - 1)",
  "return wl.tensor { 2, dtype = dt, init = 2^63 }", max, true)
case("-2^63 - 2^11 into integer device tensors gives the minimum",
  "return wl.tensor { 2, dtype = dt, init = -2^63 - 2^11 }", min, true)
case("2.5 into integer device tensors: ties to even",
  "return wl.tensor { 2, dtype = dt, init = 2.5 }", all("2"), true)

cases[#cases + 1] = { name = "wl.arange past an integer device tensor's range saturates", code = 0,
  gpu = true,
  script = [[local wl = require "wlrun"
print(table.concat(wl.tensor { 6, dtype = "i8", init = wl.arange(125, 1) }:to_host():totable(), " "))
print(table.concat(wl.tensor { 4, dtype = "u8", init = wl.arange(1, -1) }:to_host():totable(), " "))
print(table.concat(wl.tensor { 3, dtype = "i64", init = wl.arange(2^62, 2^62) }:to_host():totable(), " "))
]],
    stdout
    =
    "^125 126 127 127 127 127\n1 0 0 0\n4611686018427387904 9223372036854775807 "
    .. "9223372036854775807\n$" }
cases[#cases + 1] = { name = "random inits of an integer device tensor stay within its range",
  code = 0, gpu = true,
  script = [[local wl = require "wlrun"
for _, dt in ipairs { "i8", "u8", "i16" } do
  local t = wl.tensor { 1 << 16, dtype = dt, init = wl.normal(0, 1e6) }:to_host()
  local lo, hi = math.huge, -math.huge
  for _, v in ipairs(t:totable()) do lo, hi = math.min(lo, v), math.max(hi, v) end
  print(dt, lo, hi)
end
]], stdout = "^i8\t%-128\t127\nu8\t0\t255\ni16\t%-32768\t32767\n$" }

---- views: a sub-range of a tensor never reaches outside it, and dies with it ----
local CO = "--compile-only --arch sm_90"
-- a script whose line 3 is LINE, after t = a 16-element f32 tensor (a host one unless DEVICE)
local function view3(line, device)
  return ("local wl = require 'wlrun'\nlocal t = wl.%s { 16 }\n%s\n"):format(device and "tensor"
    or "host_tensor", line)
end
-- a kernel writing p[0..n) on line 2, t on line 3, then LINES
local function bound(lines)
  return "local wl = require 'wlrun'\nlocal k = wl.kernel { '__global__ void w(float* p, int n) "
    .. "{ if (threadIdx.x < n) p[threadIdx.x] = 1; }', name = 'w' }\n"
    .. "local t = wl.tensor { 16 }\n" .. lines .. "\n"
end
local function view_case(name, script, args, stderr, gpu)
  cases[#cases + 1] = { name = name, script = script, args = args, code = 1, stderr = stderr,
    gpu = gpu }
end
view_case("a view one element past its tensor", view3 "t:view(15, 2)", nil,
  "script%.lua:3: tensor:view: the view f32%[2%] at offset 15 reaches to element 16, outside "
    .. "the tensor f32%[16%] %(elements 0 to 15%)")
view_case("a strided view past its tensor",
  view3 "t:view { offset = 1, shape = { 4, 4 }, strides = { 4, 1 } }", nil,
  "script%.lua:3: tensor:view: the view f32%[4x4%] at offset 1 reaches to element 16, outside "
    .. "the tensor")
view_case("a view whose strides overflow",
  view3 "t:view { shape = { 3, 3 }, strides = { math.maxinteger, 1 } }", nil,
  "script%.lua:3: tensor:view: the view f32%[3x3%] at offset 0 reaches beyond any tensor")
view_case("a view of a view past the first view", view3 "t:view(4, 8):view(2, 7)", nil,
  "script%.lua:3: tensor:view: the view f32%[7%] at offset 2 reaches to element 8, outside the "
    .. "view f32%[8%] %(elements 0 to 7%)")
view_case("rows past the last row", view3 "t:rows(10, 17)", nil,
  "script%.lua:3: tensor:rows: rows 10 to 17 of a tensor with 16 rows")
view_case("a negative offset", view3 "t:view(-1, 2)", nil,
  "script%.lua:3: tensor:view: offset must be a whole number of elements >= 0, got %-1")
view_case("a fractional offset", view3 "t:view { offset = 0.5, shape = { 2 } }", nil,
  "script%.lua:3: tensor:view: offset must be a whole number of elements >= 0, got 0%.5")
view_case("a negative stride", view3 "t:view { offset = 15, shape = { 4 }, strides = { -1 } }", nil,
  "script%.lua:3: tensor:view: strides%[1%] is %-1: a stride is a whole number of elements >= 1 "
    .. "%(zero and negative strides are not supported%)")
view_case("a zero stride", view3 "t:view { shape = { 4, 2 }, strides = { 0, 1 } }", nil,
  "script%.lua:3: tensor:view: strides%[1%] is 0")
view_case("a view whose elements overlap", view3 "t:view { shape = { 4, 4 }, strides = { 1, 2 } }",
  nil,
  "script%.lua:3: tensor:view: the view's elements overlap: dimension 1 %(size 4, stride 1%) "
    .. "covers 4 elements, more than the stride 2 of dimension 2")
view_case("a view with a shape of size 0", view3 "t:view { shape = { 0 } }", nil,
  "script%.lua:3: tensor:view: shape%[1%] must be a whole number >= 1, got 0")
view_case("a view with more strides than dimensions",
  view3 "t:view { shape = { 4 }, strides = { 1, 1 } }", nil,
  "script%.lua:3: tensor:view: strides has 2 entries for a shape of 1 dimensions")
view_case("a view with an unknown field", view3 "t:view { size = 4 }", nil,
  "script%.lua:3: tensor:view: unknown field 'size' %(fields: offset, shape, strides%)")
view_case("a view read after its tensor was freed",
  view3 "local v = t:view(0, 4) t:free() print(v[1])", nil,
  "script%.lua:3: tensor%[i%]: tensor used after free")
view_case("a device view outside its tensor under --compile-only", view3("t:view(8, 9)", true), CO,
  "script%.lua:3: tensor:view: the view f32%[9%] at offset 8 reaches to element 16")
view_case("a strided device view filled", view3(
  "t:view { shape = { 2, 2 }, strides = { 8, 1 } }:fill(1)", true), CO,
  "script%.lua:3: tensor:fill: the view f32%[2x2%] with strides {8,1} is not contiguous")
view_case("a launch through a view of a freed tensor",
  bound "local b = k:bind { grid = 1, block = 4, args = { t:view(4, 4), 4 } }\nt:free()\nb()", CO,
  "script%.lua:6: launch: kernel 'w': the tensor bound to argument 1 used after free")
view_case("a graph replay through a view of a freed tensor",
  bound "local v = t:view(4, 4)\nlocal g = wl.graph(function() v:fill(1) end)\nt:free()\ng()", CO,
  "script%.lua:7: graph:launch: a tensor captured in the graph used after free")
view_case("a launch through a view of a freed tensor (on a GPU)",
  bound "local b = k:bind { grid = 1, block = 4, args = { t:view(4, 4), 4 } }\nb()\nt:free()\nb()",
    "",
  "script%.lua:7: launch: kernel 'w': the tensor bound to argument 1 used after free", true)
view_case("a device view outside its tensor (on a GPU)",
  view3("t:view { offset = 1, shape = { 4, 4 } }", true), "",
  "script%.lua:3: tensor:view: the view f32%[4x4%] at offset 1 reaches to element 16", true)

return cases
