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
  { name = "wl.library: no such file", code = 9, script = 'require "wlrun".library { file = "libnothere.so" }',
    stderr = "script.lua:1: wl.library: cannot open .*/libnothere.so: No such file or directory" },
  { name = "wl.library: a text file", code = 9, files = { ["libtext.so"] = "not a library\n" },
    script = 'require "wlrun".library { file = "libtext.so" }',
    stderr = "script.lua:1: wl.library: cannot load .*/libtext.so as a shared library: .*libtext.so: " },
  { name = "wl.library: a directory", code = 9, files = { ["lib.so/x"] = "" },
    script = 'require "wlrun".library { file = "lib.so" }', stderr = "script.lua:1: wl.library: .*/lib.so is a directory" },
  { name = "wl.library: no file field", script = 'require "wlrun".library {}',
    stderr = "script.lua:1: wl.library: 'file' %(the shared library's path%) is required" },
  { name = "wl.library: unknown field", script = 'require "wlrun".library { path = "x.so" }',
    stderr = "script.lua:1: wl.library: unknown field 'path' %(fields: file%)" },
  { name = "wl.library: not a table", script = 'require "wlrun".library "x.so"',
    stderr = "script.lua:1: wl.library: expected a table {file = \"libmine.so\"}, got string" },
  -- its functions
  { name = "lib:func: a symbol the library lacks", script = with_lib('lib:func { name = "nothere", params = "int n" }'),
    stderr = "script.lua:3: library:func: libwlrun_userlib.so has no function 'nothere' %(.*undefined symbol: nothere%); export it as extern \"C\"" },
  { name = "lib:func: no params and none exported", script = with_lib('lib:func { name = "saxpy" }'),
    stderr = "script.lua:3: library:func: no parameter list for 'saxpy': give params = \"...\" .* or export it from libwlrun_userlib.so as wlrun_params_saxpy" },
  { name = "lib:func: params exported as a pointer", script = with_lib('lib:func { name = "pointer_params" }'),
    stderr = "script.lua:3: library:func: wlrun_params_pointer_params in libwlrun_userlib.so is not a string: export it as an array" },
  { name = "lib:func: a parameter list that is not C", script = with_lib('lib:func { name = "saxpy", params = "float* y, Foo x" }'),
    stderr = "script.lua:3: saxpy in libwlrun_userlib.so: its parameter list: parameter 2 %('Foo x'%): a type wlrun cannot pass by value" },
  { name = "lib:func: params not a string", script = with_lib('lib:func { name = "saxpy", params = { "float* y" } }'),
    stderr = "script.lua:3: library:func: params must be a string %(a C parameter list%), got table" },
  { name = "lib:func: capturable a string", script = with_lib('lib:func { name = "scale", capturable = "no" }'),
    stderr = "script.lua:3: library:func: capturable must be true or false, got a string" },
  { name = "lib:func: unknown field", script = with_lib('lib:func { name = "scale", param = "int n" }'),
    stderr = "script.lua:3: library:func: unknown field 'param' %(fields: name, params, capturable%)" },
  { name = "lib:func: no name", script = with_lib("lib:func { params = 'int n' }"),
    stderr = "script.lua:3: library:func: 'name' %(the function's name in libwlrun_userlib.so%) is required" },
  { name = "lib:func: after lib:close", script = with_lib('lib:close() lib:func { name = "scale" }'),
    stderr = "script.lua:3: library:func: library used after close" },
  -- binding its functions
  { name = "host work bind: too few arguments", script = with_lib(SAXPY .. ":bind { args = { y, x, 2.0 } }"),
    stderr = "script.lua:3: host work 'saxpy in libwlrun_userlib.so' takes 4 arguments, bind gave 3" },
  { name = "host work bind: a tensor for a float", script = with_lib(SAXPY .. ":bind { args = { y, x, x, 4 } }"),
    stderr = "script.lua:3: host work 'saxpy in libwlrun_userlib.so' argument 3 %(float%): expected a number, got a f32 tensor %(device%)" },
  { name = "host work bind: a tensor of another dtype", script = with_lib(SAXPY .. ":bind { args = { wl.tensor { 4, dtype = 'f64' }, x, 1, 4 } }"),
    stderr = "script.lua:3: host work 'saxpy in libwlrun_userlib.so' argument 1 %(float%*%): expected a f32 tensor, got a f64 tensor" },
  { name = "host work bind: a float for an int", script = with_lib(SAXPY .. ":bind { args = { y, x, 1, 2.5 } }"),
    stderr = "script.lua:3: host work 'saxpy in libwlrun_userlib.so' argument 4 %(int%): expected an integer from %-2147483648 to 2147483647, got float 2.5" },
  { name = "host work bind: grid given", script = with_lib(SAXPY .. ":bind { grid = 4, args = { y, x, 1, 4 } }"),
    stderr = "script.lua:3: bind: 'grid' does not apply to host work %('saxpy in libwlrun_userlib.so' is a function that queues its own GPU work%): leave it out" },
  { name = "host work bind: smem given", script = with_lib(SAXPY .. ":bind { smem = 0, args = { y, x, 1, 4 } }"),
    stderr = "script.lua:3: bind: 'smem' does not apply to host work" },
  { name = "host work: attributes", script = with_lib("local _ = " .. SAXPY .. ".attributes"),
    stderr = "script.lua:3: k.attributes: 'saxpy in libwlrun_userlib.so' is host work %(library%), it has no kernel attributes or occupancy" },
  { name = "host work: captured when it may not be", script = with_lib('local w = lib:func { name = "scale_and_wait", capturable = false }:bind { args = { y, 1, 4 } }; wl.graph(function() w() end)'),
    stderr = "script.lua:3: host work 'scale_and_wait in libwlrun_userlib.so' %(library%) cannot be captured in a CUDA graph" },
  { name = "host work: launched after its tensor was freed", script = with_lib("local b = " .. SAXPY .. ":bind { args = { y, x, 1, 4 } }; x:free(); b()"),
    stderr = "script.lua:3: launch: kernel 'saxpy in libwlrun_userlib.so': the tensor bound to argument 2 used after free" },
  -- on a GPU: the function's own failures (exit 5)
  { name = "host work: a function that returns nonzero", code = 5, gpu = true, args = "",
    script = with_lib('lib:func { name = "fails" }:bind { args = { 42 } }()'),
    stderr = "script.lua:3: host work 'fails in libwlrun_userlib.so' %(library%) failed: it returned 42" },
  { name = "host work: a launch inside it that cannot go", code = 5, gpu = true, args = "",
    script = with_lib('lib:func { name = "bad_launch" }:bind { args = { y } }()'),
    stderr = "script.lua:3: host work 'bad_launch in libwlrun_userlib.so' %(library%) failed: it returned 9 %(cudaErrorInvalidConfiguration" },
}

for _, c in ipairs(cases) do
  c.code = c.code or 1
  c.args = c.args or CO
end
return cases
