-- The catalogue of bad inputs, class "basics": scripts, the command line, kernels, tensors,
-- results files given to every reader. See tests/catalogue.lua for the fields of a case.
local h = require "helper"

local K = [[local wl = require "wlrun"
local k = wl.kernel { [==[template <typename T> __global__ void axpy(T* y, const T* x, T a, int n) { }
extern "C" __global__ void raw(float* p, int n) { }]==], name = "axpy<float>" }
local x, y = wl.tensor { 16 }, wl.tensor { 16 }
]]

local SC = [[local wl = require "wlrun"
return wl.scenario { name = "s", params = { M = { 1, 2 }, v = { "a", "b" } }, setup = function() return {} end,
  run = function() end }
]]

local SWEEP = h.source_dir .. "/tests/fixtures/compare/sweep.json"
local cases = {
  { "Lua syntax error", "local x = = 1", "", 1, "script.lua:1:" },
  { "Lua runtime error", "local t = nil\nprint(t.x)", "", 1,
    "script.lua:2: attempt to index a nil value" },
  { "error with a non-string value", "error({})", "", 1, "error object is a table value" },
  { "missing script", nil, "no/such/script.lua", 9, "cannot open no/such/script.lua" },
  { "script is a directory", nil, "/tmp", 9, "cannot" },
  { "script is a device (endless bytes)", nil, "/dev/zero", 9,
    "^wlrun: cannot read /dev/zero: a device or socket, not a file" },
  -- luac5.4's output of `print(1)`: the header's signature, version 5.4 and format 0 are enough
  { "a precompiled chunk given as the script names it", "\27Lua\84\0\25\147\13\10\26\10", "",
    1, "^wlrun: .*script%.lua: attempt to load a binary chunk %(mode is 't'%): wlrun runs Lua" },
  { "unknown option", nil, "--bogus x.lua", 2, "unknown option '%-%-bogus'" },
  { "option without its value", nil, "x.lua --iters", 2, "option '%-%-iters' needs a value" },
  { "bad option value", nil, "x.lua --warmup lots", 2, "%-%-warmup: expected a whole number" },
  { "bad duration", nil, "x.lua --warmup-time 3parsecs", 2, "expected a duration" },
  { "bad mode", nil, "x.lua --mode turbo", 2, "expected one of cold|batch|graph|host|auto" },
  { "bad arch", nil, "x.lua --arch 90", 2, "expected a GPU architecture like sm_90" },
  { "bad -p syntax", nil, "x.lua -p M", 2, "expected NAME=VALUE" },
  { "bad -p range", nil, "x.lua -p M=8:1", 2, "below the start" },
  { "-p for an unknown parameter", SC, "-p Q=1 --dry-run", 2,
    "the scenario has no parameter 'Q' %(it has: M, v%)" },
  { "-p value of the wrong type", SC, "-p M=abc --dry-run", 2, "'abc' is not a number" },
  { "bad --filter", SC, "--filter 'M ==' --dry-run", 2, "%-%-filter 'M ==':" },
  { "bad output extension", nil, "x.lua -o out.xlsx", 2, "unknown output format" },
  { "scenario without run",
    "local wl = require 'wlrun'\nlocal s = wl.scenario { name = 'x' }\nreturn s", "", 1,
    "'run' is required" },
  { "scenario with an unknown field",
    "local wl = require 'wlrun'\nlocal s = wl.scenario { name = 'x', run = print, colour = 1 "
    .. "}\nreturn s", "", 1, "unknown field 'colour'" },
  { "scenario with several unknown fields: the first by name, on every run",
    "local wl = require 'wlrun'\nlocal s = wl.scenario { name = 'x', run = print, zeta = 1, "
    .. "colour = 2, mu = 3, beta = 4 }\nreturn s", "", 1, "unknown field 'beta'" },
  { "wl.zip of axes of different lengths: named in the same order on every run",
    "local wl = require 'wlrun'\nlocal z = wl.zip { N = { 1, 2, 3 }, M = { 1, 2 }, K = { 1, 2 } }",
    "", 1, "wl%.zip: axes must have the same number of values %(N has 3, K 2%)" },
  { "a tensor with several unknown fields: the first by name, on every run",
    "local wl = require 'wlrun'\nlocal t = wl.tensor { { 4 }, zeta = 1, alpha = 2, mid = 3 }", "",
    1, "wl%.tensor: unknown field 'alpha'" },
  { "scenario with a bad timing option",
    "local wl = require 'wlrun'\nlocal s = wl.scenario { name = 'x', run = print, timing = { "
    .. "iter = 3 } }\nreturn s", "", 1, "timing: unknown option 'iter'" },
  { "kernel compile error",
    "local wl = require 'wlrun'\nwl.kernel { 'extern \"C\" __global__ void k() { "
    .. "undefined_thing(); }', name = 'k' }", "--arch sm_90", 6,
    "identifier \"undefined_thing\" is undefined" },
  { "kernel name not in the source",
    "local wl = require 'wlrun'\nwl.kernel { 'extern \"C\" __global__ void k() {}', name = "
    .. "'nope' }", "--arch sm_90", 6, "nope" },
  { "kernel without a device or --arch",
    "local wl = require 'wlrun'\nwl.kernel { 'extern \"C\" __global__ void k() {}', name = 'k' }",
    "", 4, "give one with %-%-arch" },
  { "unreadable kernel source", "local wl = require 'wlrun'\nwl.source 'missing.cu'", "", 9,
    "cannot read kernel source" },
  { "wrong kernel argument count", K .. "k:bind { grid = 1, block = 16, args = { y, x } }",
    "--compile-only --arch sm_90", 1, "takes 4 arguments, bind gave 2" },
  { "float for an int parameter", K .. "k:bind { grid = 1, block = 16, args = { y, x, 2.0, 1.5 } }",
    "--compile-only --arch sm_90", 1, "argument 4 %(int, PTX .u32%): expected an integer" },
  { "tensor for a float parameter", K .. "k:bind { grid = 1, block = 16, args = { y, x, x, 16 } }",
    "--compile-only --arch sm_90", 1,
    "argument 3 %(float, PTX .f32%): expected a number, got a f32 tensor" },
  { "tensor of the wrong dtype",
    K .. "k:bind { grid = 1, block = 16, args = { wl.tensor { 16, dtype = 'f16' }, x, 2.0, 16 } }",
    "--compile-only --arch sm_90", 1, "expected a f32 tensor, got a f16 tensor" },
  { "block too large", K .. "k:bind { grid = 1, block = 2048, args = { y, x, 2.0, 16 } }",
    "--compile-only --arch sm_90", 1, "block.x must be a whole number from 1 to 1024" },
  { "unknown dtype", "require('wlrun').host_tensor { 4, dtype = 'f8' }", "", 1,
    "unknown dtype 'f8'" },
  { "zero-sized dimension", "require('wlrun').host_tensor { 4, 0 }", "", 1,
    "dimension 2 must be a whole number >= 1, got 0" },
  { "negative dimension", "require('wlrun').host_tensor { -3 }", "", 1,
    "dimension 1 must be a whole number >= 1, got %-3" },
  { "no dimensions", "require('wlrun').host_tensor { dtype = 'f32' }", "", 1,
    "a tensor has 1 to 8 dimensions" },
  { "a shape whose size overflows", "require('wlrun').host_tensor { 1 << 40, 1 << 40 }", "", 1,
    "overflows" },
  { "impossible host allocation", "require('wlrun').host_tensor { 1 << 58 }", "", 1,
    "cannot allocate" },
  { "bad init", "require('wlrun').host_tensor { 4, init = 'randomish' }", "", 1, "init must be" },
  { "device tensor without a device", "require('wlrun').tensor { 4 }", "", 4, "no CUDA device" },
  { "malformed results JSON given to compare", nil,
    "compare " .. h.source_dir .. "/tests/fixtures/compare/malformed.json "
      .. h.source_dir .. "/tests/fixtures/compare/base.json", 2, "malformed.json" },
  { "a JSON file that is not a results document", nil,
    "compare " .. h.source_dir .. "/tests/fixtures/compare/not_results.json "
      .. h.source_dir .. "/tests/fixtures/compare/base.json", 2, "not_results.json" },
  { "compare --match naming a parameter twice", nil, "compare " .. SWEEP .. " " .. SWEEP
      .. " --match M,variant,M", 2, "^wlrun: compare: %-%-match names 'M' more than once\n" },
  { "compare --ignore naming parameters twice", nil, "compare " .. SWEEP .. " " .. SWEEP
      .. " --ignore K,N,K,N,K", 2, "^wlrun: compare: %-%-ignore names 'K', 'N' more than once\n" },
  { "compare --match naming two parameters no configuration has", nil, "compare " .. SWEEP .. " "
      .. SWEEP .. " --match M,Q,R", 2,
    "%-%-match: no configuration has a parameter 'Q', 'R' %(parameters: K, M, N, variant%)" },
  { "compare --ignore leaving no parameter to match on", nil, "compare " .. SWEEP .. " " .. SWEEP
      .. " --ignore variant,M,N,K", 2, "configurations #1 and #2 of '[^']*sweep%.json' have no "
      .. "parameter left to match on %(%-%-ignore leaves out every one of theirs%)" },
  { "unreadable results file given to compare", nil,
    "compare /nonexistent/a.json /nonexistent/b.json", 9, "/nonexistent/a.json" },
  { "--resume with an unreadable file", SC, "--resume /nonexistent/r.json", 9,
    "%-%-resume: cannot read '/nonexistent/r.json'" },
  { "--resume: a results file of version 99", SC,
    "--resume " .. h.source_dir .. "/tests/fixtures/bad/version99.json", 2,
    "version 99 is not supported" },
  { "compare: a results file of version 99", nil,
    "compare " .. h.source_dir .. "/tests/fixtures/bad/version99.json " .. h.source_dir
    .. "/tests/fixtures/bad/version99.json", 2, "version 99 is not supported" },
  { "merge: a results file of version 99", nil,
    "merge " .. h.source_dir .. "/tests/fixtures/bad/version99.json", 2,
    "version 99 is not supported" },
  { "export: a results file of version 99", nil,
    "export " .. h.source_dir .. "/tests/fixtures/bad/version99.json", 2,
    "version 99 is not supported" },
  { "plot: a results file of version 99", nil, "plot " .. h.source_dir
    .. "/tests/fixtures/bad/version99.json -o x.svg", 2, "version 99 is not supported" },
  { "--resume: a results file with data after the JSON", SC,
    "--resume " .. h.source_dir .. "/tests/fixtures/bad/trailing.json", 2,
    "trailing.json' is not valid JSON: .*line" },
  { "compare: a results file with data after the JSON", nil,
    "compare " .. h.source_dir .. "/tests/fixtures/bad/trailing.json " .. h.source_dir
    .. "/tests/fixtures/bad/trailing.json", 2, "trailing.json' is not valid JSON: .*line" },
  { "merge: a results file with data after the JSON", nil,
    "merge " .. h.source_dir .. "/tests/fixtures/bad/trailing.json", 2,
    "trailing.json' is not valid JSON: .*line" },
  { "export: a results file with data after the JSON", nil,
    "export " .. h.source_dir .. "/tests/fixtures/bad/trailing.json", 2,
    "trailing.json' is not valid JSON: .*line" },
  { "plot: a results file with data after the JSON", nil,
    "plot " .. h.source_dir .. "/tests/fixtures/bad/trailing.json -o x.svg", 2,
    "trailing.json' is not valid JSON: .*line" },
  { "--resume: a results file with a null sample", SC,
    "--resume " .. h.source_dir .. "/tests/fixtures/bad/null_sample.json", 2,
    "samples%[1%] is null" },
  { "compare: a results file with a null sample", nil,
    "compare " .. h.source_dir .. "/tests/fixtures/bad/null_sample.json " .. h.source_dir
    .. "/tests/fixtures/bad/null_sample.json", 2, "samples%[1%] is null" },
  { "merge: a results file with a null sample", nil,
    "merge " .. h.source_dir .. "/tests/fixtures/bad/null_sample.json", 2, "samples%[1%] is null" },
  { "export: a results file with a null sample", nil,
    "export " .. h.source_dir .. "/tests/fixtures/bad/null_sample.json", 2,
    "samples%[1%] is null" },
  { "plot: a results file with a null sample", nil,
    "plot " .. h.source_dir .. "/tests/fixtures/bad/null_sample.json -o x.svg", 2,
    "samples%[1%] is null" },
  { "--resume: a results file with a table as a parameter", SC,
    "--resume " .. h.source_dir .. "/tests/fixtures/bad/param_table.json", 2,
    "params%.extra is a table" },
  { "compare: a results file with a table as a parameter", nil,
    "compare " .. h.source_dir .. "/tests/fixtures/bad/param_table.json " .. h.source_dir
    .. "/tests/fixtures/bad/param_table.json", 2, "params%.extra is a table" },
  { "merge: a results file with a table as a parameter", nil,
    "merge " .. h.source_dir .. "/tests/fixtures/bad/param_table.json", 2,
    "params%.extra is a table" },
  { "export: a results file with a table as a parameter", nil,
    "export " .. h.source_dir .. "/tests/fixtures/bad/param_table.json", 2,
    "params%.extra is a table" },
  { "plot: a results file with a table as a parameter", nil,
    "plot " .. h.source_dir .. "/tests/fixtures/bad/param_table.json -o x.svg", 2,
    "params%.extra is a table" },
  { "--resume: a results file cut short", SC, "--resume " .. h.source_dir
    .. "/tests/fixtures/bad/truncated.json", 2, "truncated.json' is not valid JSON" },
  { "compare: a results file cut short", nil, "compare " .. h.source_dir
    .. "/tests/fixtures/bad/truncated.json " .. h.source_dir
    .. "/tests/fixtures/bad/truncated.json", 2, "truncated.json' is not valid JSON" },
  { "merge: a results file cut short", nil, "merge " .. h.source_dir
    .. "/tests/fixtures/bad/truncated.json", 2, "truncated.json' is not valid JSON" },
  { "export: a results file cut short", nil, "export " .. h.source_dir
    .. "/tests/fixtures/bad/truncated.json", 2, "truncated.json' is not valid JSON" },
  { "plot: a results file cut short", nil, "plot " .. h.source_dir
    .. "/tests/fixtures/bad/truncated.json -o x.svg", 2, "truncated.json' is not valid JSON" },
  { "WLRUN_SHARD_COSTS: a results file of version 99", SC, "--shard 1/2 --dry-run", 2,
    "WLRUN_SHARD_COSTS=.*version 99 is not supported",
    "WLRUN_SHARD_COSTS=" .. h.source_dir .. "/tests/fixtures/bad/version99.json" },
}

local ini_cases = {
  { "ini syntax error", "[run]\nthis is not a setting\n", 3, "wlrun.ini:2: syntax error" },
  { "ini unknown section", "[turbo]\nx = 1\n", 3, "wlrun.ini:1: unknown section %[turbo%]" },
  { "ini unknown key", "[run]\nwarmpu = 1\n", 3, "wlrun.ini:2: unknown key 'warmpu'" },
  { "ini bad value", "[adaptive]\ntarget_noise = lots\n", 3,
    "wlrun.ini:2: adaptive.target_noise: expected a percentage" },
}


local list = {}
for _, c in ipairs(cases) do
  local name = c[1]
  list[#list + 1] = { name = name, script = c[2], args = c[3], code = c[4], stderr = c[5],
    env = c[6],
    no_gpu = name == "device tensor without a device"
      or name == "kernel without a device or --arch" }
end
for _, c in ipairs(ini_cases) do
  list[#list + 1] = { name = c[1], ini = c[2], code = c[3], stderr = c[4], script = "print('ran')",
    args = "" }
end
return list
