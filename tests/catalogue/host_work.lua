-- The catalogue of bad inputs, class "host_work": a user's own shared library (wl.library,
-- lib:func) and the runtime operations (wl.ops) given what they cannot take (docs/libraries.md).
-- The library is the one the tests build (tests/fixtures/userlib: WLRUN_USERLIB). Each error
-- names what was wrong and the script's line. See tests/catalogue.lua for the fields of a case.
local CO = "--compile-only --arch sm_90"

-- line 1: the library as lib; line 2: tensors x, y (1024 f32) and p (pinned); line 3: CALL
local function with_lib(call)
  return ([[local wl = require "wlrun"; local lib = wl.library { file = os.getenv("WLRUN_USERLIB") }
local x, y, p = wl.tensor { 1024 }, wl.tensor { 1024 }, wl.host_tensor { 1024, pinned = true }
%s
]]):format(call)
end

local SAXPY = 'lib:func { name = "saxpy", params = "float* y, const float* x, float a, int n" }'

local cases = {
  -- the library
  { name = "wl.library: no such file", code = 9,
    script = 'require "wlrun".library { file = "libnothere.so" }',
    stderr = "script.lua:1: wl.library: cannot open .*/libnothere.so: No such file or directory" },
  { name = "wl.library: a text file", code = 9, files = { ["libtext.so"] = "not a library\n" },
    script = 'require "wlrun".library { file = "libtext.so" }',
    stderr
      = "script.lua:1: wl.library: cannot load .*/libtext.so as a shared library: .*libtext.so: " },
  { name = "wl.library: a directory", code = 9, files = { ["lib.so/x"] = "" },
    script = 'require "wlrun".library { file = "lib.so" }',
      stderr = "script.lua:1: wl.library: .*/lib.so is a directory" },
  { name = "wl.library: no file field", script = 'require "wlrun".library {}',
    stderr = "script.lua:1: wl.library: 'file' %(the shared library's path%) is required" },
  { name = "wl.library: unknown field", script = 'require "wlrun".library { path = "x.so" }',
    stderr = "script.lua:1: wl.library: unknown field 'path' %(fields: file%)" },
  { name = "wl.library: not a table", script = 'require "wlrun".library "x.so"',
    stderr = "script.lua:1: wl.library: expected a table {file = \"libmine.so\"}, got string" },
  -- its functions
  { name = "lib:func: a symbol the library lacks",
    script = with_lib('lib:func { name = "nothere", params = "int n" }'),
    stderr
      =
      "script.lua:3: library:func: libwlrun_userlib.so has no function 'nothere' %(.*undefined "
      .. "symbol: nothere%); export it as extern \"C\"" },
  { name = "lib:func: no params and none exported",
    script = with_lib('lib:func { name = "saxpy" }'),
    stderr
      =
      "script.lua:3: library:func: no parameter list for 'saxpy': give params = \"...\" .* or "
      .. "export it from libwlrun_userlib.so as wlrun_params_saxpy" },
  { name = "lib:func: params exported as a pointer",
    script = with_lib('lib:func { name = "pointer_params" }'),
    stderr
      =
      "script.lua:3: library:func: wlrun_params_pointer_params in libwlrun_userlib.so is not a "
      .. "string: export it as an array" },
  { name = "lib:func: a parameter list that is not C",
    script = with_lib('lib:func { name = "saxpy", params = "float* y, Foo x" }'),
    stderr
      =
      "script.lua:3: saxpy in libwlrun_userlib.so: its parameter list: parameter 2 %('Foo x'%): "
      .. "a type wlrun cannot pass by value" },
  { name = "lib:func: params not a string", script = with_lib(
    'lib:func { name = "saxpy", params = { "float* y" } }'),
    stderr
      = "script.lua:3: library:func: params must be a string %(a C parameter list%), got table" },
  { name = "lib:func: capturable a string", script = with_lib(
    'lib:func { name = "scale", capturable = "no" }'),
    stderr = "script.lua:3: library:func: capturable must be true or false, got a string" },
  { name = "lib:func: unknown field", script = with_lib(
    'lib:func { name = "scale", param = "int n" }'),
    stderr
      = "script.lua:3: library:func: unknown field 'param' %(fields: name, params, capturable%)" },
  { name = "lib:func: no name", script = with_lib("lib:func { params = 'int n' }"),
    stderr
      =
      "script.lua:3: library:func: 'name' %(the function's name in libwlrun_userlib.so%) is "
      .. "required" },
  { name = "lib:func: after lib:close", script = with_lib(
    'lib:close() lib:func { name = "scale" }'),
    stderr = "script.lua:3: library:func: library used after close" },
  -- binding its functions
  { name = "host work bind: too few arguments",
    script = with_lib(SAXPY .. ":bind { args = { y, x, 2.0 } }"),
    stderr
      = "script.lua:3: host work 'saxpy in libwlrun_userlib.so' takes 4 arguments, bind gave 3" },
  { name = "host work bind: a tensor for a float",
    script = with_lib(SAXPY .. ":bind { args = { y, x, x, 4 } }"),
    stderr
      =
      "script.lua:3: host work 'saxpy in libwlrun_userlib.so' argument 3 %(float%): expected a "
      .. "number, got a f32 tensor %(device%)" },
  { name = "host work bind: a tensor of another dtype",
    script = with_lib(SAXPY .. ":bind { args = { wl.tensor { 4, dtype = 'f64' }, x, 1, 4 } }"),
    stderr
      =
      "script.lua:3: host work 'saxpy in libwlrun_userlib.so' argument 1 %(float%*%): expected "
      .. "a f32 tensor, got a f64 tensor" },
  { name = "host work bind: a float for an int",
    script = with_lib(SAXPY .. ":bind { args = { y, x, 1, 2.5 } }"),
    stderr
      =
      "script.lua:3: host work 'saxpy in libwlrun_userlib.so' argument 4 %(int%): expected an "
      .. "integer from %-2147483648 to 2147483647, got float 2.5" },
  { name = "host work bind: grid given", script = with_lib(SAXPY
    .. ":bind { grid = 4, args = { y, x, 1, 4 } }"),
    stderr
      =
      "script.lua:3: bind: 'grid' does not apply to host work %('saxpy in libwlrun_userlib.so' "
      .. "is a function that queues its own GPU work%): leave it out" },
  { name = "host work bind: smem given", script = with_lib(SAXPY
    .. ":bind { smem = 0, args = { y, x, 1, 4 } }"),
    stderr = "script.lua:3: bind: 'smem' does not apply to host work" },
  { name = "host work: attributes", script = with_lib("local _ = " .. SAXPY .. ".attributes"),
    stderr
      =
      "script.lua:3: k.attributes: 'saxpy in libwlrun_userlib.so' is host work %(library%), it "
      .. "has no kernel attributes or occupancy" },
  { name = "host work: captured when it may not be",
    script = with_lib(
    'local w = lib:func { name = "scale_and_wait", capturable = false }:bind { args = { y, 1, 4 '
    .. '} }; wl.graph(function() w() end)'),
    stderr
      =
      "script.lua:3: host work 'scale_and_wait in libwlrun_userlib.so' %(library%) cannot be "
      .. "captured in a CUDA graph" },
  { name = "host work: launched after its tensor was freed",
    script = with_lib("local b = " .. SAXPY .. ":bind { args = { y, x, 1, 4 } }; x:free(); b()"),
    stderr
      =
      "script.lua:3: launch: kernel 'saxpy in libwlrun_userlib.so': the tensor bound to "
      .. "argument 2 used after free" },
  -- runtime operations
  { name = "wl.ops.memcpy: bytes beyond src", script = with_lib(
    "wl.ops.memcpy { dst = y, src = x, bytes = 4097 }"),
    stderr
      =
      "script.lua:3: wl.ops.memcpy: the bytes to copy %(4097 bytes%) go beyond src, a f32 "
      .. "device tensor of 4096 bytes" },
  { name = "wl.ops.memcpy: src larger than dst",
    script = with_lib("wl.ops.memcpy { dst = wl.tensor { 16 }, src = x }"),
    stderr
      =
      "script.lua:3: wl.ops.memcpy: the bytes to copy %(4096 bytes%) go beyond dst, a f32 "
      .. "device tensor of 64 bytes" },
  { name = "wl.ops.memcpy: bytes = 0", script = with_lib(
    "wl.ops.memcpy { dst = y, src = x, bytes = 0 }"),
    stderr = "script.lua:3: wl.ops.memcpy: 'bytes' must be a whole number from 1 to 2%^53, got 0" },
  { name = "wl.ops.memcpy: a pageable host tensor",
    script = with_lib("wl.ops.memcpy { dst = wl.host_tensor { 1024 }, src = x }"),
    stderr
      =
      "script.lua:3: wl.ops.memcpy: dst is a pageable host tensor: copies and sets take device "
      .. "or pinned host tensors" },
  { name = "wl.ops.memcpy: no src", script = with_lib("wl.ops.memcpy { dst = y }"),
    stderr = "script.lua:3: wl.ops.memcpy: 'src' %(a tensor%) is required, got nil" },
  { name = "wl.ops.memcpy: a freed tensor", script = with_lib(
    "x:free(); wl.ops.memcpy { dst = y, src = x }"),
    stderr = "script.lua:3: wl.ops.memcpy: src: tensor used after free" },
  { name = "wl.ops.memcpy: unknown field", script = with_lib(
    "wl.ops.memcpy { dst = y, src = x, size = 4 }"),
    stderr
      = "script.lua:3: wl.ops.memcpy: unknown field 'size' %(fields: dst, src, bytes, stream%)" },
  { name = "wl.ops.memcpy: bound again to other tensors",
    script = with_lib(
    "local c = wl.ops.memcpy { dst = y, src = x }; c.kernel:bind { args = { p, x } }"),
    stderr
      = "script.lua:3: bind: 'memcpy device to device, 4096 bytes' was bound by what made it" },
  { name = "wl.ops.memcpy: a stream that is not one",
    script = with_lib("wl.ops.memcpy { dst = y, src = x, stream = 1 }"),
    stderr = "script.lua:3: bind: stream must be a wl.stream, got number" },
  { name = "wl.ops.memcpy: a strided view", script = with_lib(
    "wl.ops.memcpy { dst = y, src = wl.tensor { 4, 4 }:view { offset = 2, shape = { 4, 2 }, "
    .. "strides = { 4, 1 } } }"),
    stderr
      = "script.lua:3: wl.ops.memcpy: the view f32%[4x2%] with strides {4,1} is not contiguous" },
  { name = "wl.ops.memcpy2d: rows beyond a strided view",
    script = with_lib(
    "local v = wl.tensor { 4, 4 }:view { offset = 2, shape = { 4, 2 }, strides = { 4, 1 } "
    .. "}\nwl.ops.memcpy2d { dst = y, src = v, spitch = 16, width = 8, height = 5 }"),
    stderr
      =
      "script.lua:4: wl.ops.memcpy2d: src %(5 x 2%) is larger than the view %[4x2%] given as src" },
  { name
    =
    "wl.ops.memset2d: a strided view with the pitch of dense rows (its base's bytes between "
    .. "its rows)",
    script = with_lib(
      "local v = wl.tensor { 4, 1024 }:view { shape = { 4, 4 }, strides = { 1024, 1 } "
      .. "}\nwl.ops.memset2d { dst = v, width = 16, height = 4, pitch = 16 }"),
    stderr
      =
      "script.lua:4: wl.ops.memset2d: pitch / 4 bytes = 4, but dst is a view %[4x4%] whose rows "
      .. "are 1024 elements apart: give pitch / 4 bytes = 1024" },
  { name = "wl.ops.memset: value 256", script = with_lib("wl.ops.memset { dst = y, value = 256 }"),
    stderr
      =
      "script.lua:3: wl.ops.memset: 'value' %(the byte to set%) must be a whole number from 0 "
      .. "to 255, got 256" },
  { name = "wl.ops.memset: bytes beyond dst", script = with_lib(
    "wl.ops.memset { dst = p, bytes = 5000 }"),
    stderr
      =
      "script.lua:3: wl.ops.memset: the bytes to set %(5000 bytes%) go beyond dst, a f32 pinned "
      .. "host tensor of 4096 bytes" },
  { name = "wl.ops.memcpy2d: width above the pitch",
    script = with_lib("wl.ops.memcpy2d { dst = y, src = x, width = 64, height = 4, spitch = 32 }"),
    stderr
      =
      "script.lua:3: wl.ops.memcpy2d: width %(64 bytes%) is more than spitch %(32 bytes%): rows "
      .. "would overlap" },
  { name = "wl.ops.memcpy2d: rows beyond dst", script = with_lib(
    "wl.ops.memcpy2d { dst = y, dpitch = 128, src = x, width = 64, height = 33 }"),
    stderr
      =
      "script.lua:3: wl.ops.memcpy2d: 33 rows of 64 bytes, 128 apart %(4160 bytes%) go "
      .. "beyond dst" },
  { name = "wl.ops.memcpy2d: no height", script = with_lib(
    "wl.ops.memcpy2d { dst = y, src = x, width = 64 }"),
    stderr
      =
      "script.lua:3: wl.ops.memcpy2d: 'height' must be a whole number from 1 to 2%^53, "
      .. "got nothing" },
  { name = "wl.ops.memset2d: huge pitch", script = with_lib(
    "wl.ops.memset2d { dst = y, pitch = 2^53, width = 1, height = 3 }"),
    stderr = "script.lua:3: wl.ops.memset2d: 3 rows of 1 bytes, 9007199254740992 apart" },
  -- on a GPU: the function's own failures (exit 5)
  { name = "host work: a function that returns nonzero", code = 5, gpu = true, args = "",
    script = with_lib('lib:func { name = "fails" }:bind { args = { 42 } }()'),
    stderr
      =
      "script.lua:3: host work 'fails in libwlrun_userlib.so' %(library%) failed: it returned 42" },
  { name = "host work: a launch inside it that cannot go", code = 5, gpu = true, args = "",
    script = with_lib('lib:func { name = "bad_launch" }:bind { args = { y } }()'),
    stderr
      =
      "script.lua:3: host work 'bad_launch in libwlrun_userlib.so' %(library%) failed: it "
      .. "returned %d+ %(cudaError%a+: " },
}

for _, c in ipairs(cases) do
  c.code = c.code or 1
  c.args = c.args or CO
end
return cases
