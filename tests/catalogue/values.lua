-- The catalogue of bad inputs, class "values": values that must be refused, each with a message
-- naming the field or option and where (the script's line, the option, the wlrun.ini line).
-- Timing options are read by the rule of the setting they map to (src/base/settings.c), so a value
-- wl.bench refuses is the value --option and wlrun.ini refuse. See tests/catalogue.lua.

local CO = "--compile-only --arch sm_90"

-- wl.bench(function, OPTS) on line 3 of the script
local function bench(opts)
  return (
    "local wl = require 'wlrun'\nlocal f = function() end\nlocal r = wl.bench(f, %s)\n"):format(
    opts)
end

-- a scenario declared on line 2 with FIELDS (params M and v unless given)
local function scenario(fields)
  return ([[local wl = require "wlrun"
local s = wl.scenario { name = "v", %s,
  run = function() end }
return s
]]):format(fields)
end
local PARAMS = "params = { M = { 1, 2 }, v = { 'a', 'b' } }"

-- a script whose line 2 is LINE
local function line2(line) return "local wl = require 'wlrun'\n" .. line .. "\n" end

local cases = {
  -- timing options of wl.bench: type and range as the setting; the same under --compile-only
  { "wl.bench: a duration with an unknown unit", bench "{ max_time = '10x' }", CO, 1,
    "script%.lua:3: wl%.bench: option 'max_time': expected a duration from 0s to 86400s" },
  { "wl.bench: an endless warmup_time", bench "{ warmup_time = math.huge }", CO, 1,
    "script%.lua:3: wl%.bench: option 'warmup_time': expected a duration .*got 'inf'" },
  { "wl.bench: adaptive = 'false' (a string)", bench "{ adaptive = 'false' }", CO, 1,
    "script%.lua:3: wl%.bench: option 'adaptive': expected a boolean %(true or false%), got a "
      .. "string %('false'%)" },
  { "wl.bench: a negative target_noise", bench "{ target_noise = -3 }", CO, 1,
    "script%.lua:3: wl%.bench: option 'target_noise': expected a percentage from 0%.0001%% "
      .. "to 100%%" },
  { "wl.bench: min_samples = 0", bench "{ min_samples = 0 }", CO, 1,
    "script%.lua:3: wl%.bench: option 'min_samples': expected a whole number from 1 to "
      .. "1000000000, got '0'" },
  { "wl.bench: mode = 'turbo' under --compile-only", bench "{ mode = 'turbo' }", CO, 1,
    "script%.lua:3: wl%.bench: option 'mode': expected one of cold|batch|graph|host|auto|cupti, "
      .. "got 'turbo'" },
  { "wl.bench: mode = 'turbo' while --mode gives the mode", bench "{ mode = 'turbo' }",
    CO .. " --mode cold", 1,
    "script%.lua:3: wl%.bench: option 'mode': expected one of" },
  { "wl.bench: iters = 2.5", bench "{ iters = 2.5 }", CO, 1,
    "script%.lua:3: wl%.bench: option 'iters': expected a whole number from 1 to 1000000000, "
      .. "got '2%.5'" },
  { "wl.bench: warmup = '50' (a string)", bench "{ warmup = '50' }", CO, 1,
    "script%.lua:3: wl%.bench: option 'warmup': expected a whole number .*got a string %('50'%)" },
  { "wl.bench: flush_l2 = 1", bench "{ flush_l2 = 1 }", CO, 1,
    "script%.lua:3: wl%.bench: option 'flush_l2': expected a boolean" },
  { "wl.bench: batch = 0", bench "{ batch = 0 }", CO, 1,
    "script%.lua:3: wl%.bench: option 'batch': expected a whole number from 1 to 1000000, got 0" },
  { "wl.bench: graph_warmup = -1", bench "{ graph_warmup = -1 }", CO, 1,
    "script%.lua:3: wl%.bench: option 'graph_warmup': expected a whole number from 0 to "
      .. "1000000, got %-1" },
  { "wl.setting: a value its setting refuses",
    line2 "wl.setting('adaptive', 'max_time', 'forever')", "", 1,
    "script%.lua:2: wl%.setting: adaptive%.max_time: expected a duration" },

  -- a scenario's timing table: checked when declared, naming the declaration's line
  { "timing: a negative warmup_time", scenario "timing = { warmup_time = -1 }", CO, 1,
    "script%.lua:2: wl%.scenario: timing: option 'warmup_time': expected a duration .*got '%-1'" },
  { "timing: target_noise = 'lots' (--dry-run)", scenario "timing = { target_noise = 'lots' }",
    "--dry-run", 1,
    "script%.lua:2: wl%.scenario: timing: option 'target_noise': expected a percentage" },
  { "timing: adaptive = 'yes'", scenario "timing = { adaptive = 'yes' }", CO, 1,
    "script%.lua:2: wl%.scenario: timing: option 'adaptive': expected a boolean" },

  -- streams and events: unknown fields and fields of the wrong type
  { "wl.stream: an unknown field", line2 "local s = wl.stream { prio = 1 }", CO, 1,
    "script%.lua:2: wl%.stream: unknown field 'prio' %(fields: priority, blocking%)" },
  { "wl.stream: blocking = 'false' (a string)", line2 "local s = wl.stream { blocking = 'false' }",
    CO, 1,
    "script%.lua:2: wl%.stream: blocking must be true or false, got a string" },
  { "wl.stream: a fractional priority", line2 "local s = wl.stream { priority = 0.5 }", CO, 1,
    "script%.lua:2: wl%.stream: priority must be a whole number" },
  { "wl.event: an unknown field", line2 "local e = wl.event { timng = false }", CO, 1,
    "script%.lua:2: wl%.event: unknown field 'timng' %(fields: timing, blocking%)" },
  { "wl.event: timing = 'no' (a string)", line2 "local e = wl.event { timing = 'no' }", CO, 1,
    "script%.lua:2: wl%.event: timing must be true or false, got a string" },

  -- a scenario's order
  { "order names a name that is not a parameter", scenario(PARAMS .. ", order = { 'M', 'Q', 'v' }"),
    "--dry-run", 1,
    "script%.lua:2: 'order' names 'Q', which is not a parameter %(parameters: M, v%)" },
  { "order names a parameter twice", scenario(PARAMS .. ", order = { 'M', 'v', 'M' }"), "--dry-run",
    1,
    "script%.lua:2: 'order' names parameter 'M' twice" },
  { "order is not a list", scenario(PARAMS .. ", order = { M = 1 }"), "--dry-run", 1,
    "script%.lua:2: 'order' is a list of parameter names; it has the field 'M'" },

  -- parameters in the scenario
  { "a NaN parameter value", scenario "params = { M = { 1, 0 / 0 } }", "--dry-run", 1,
    "script%.lua:2: value 2 of parameter 'M' is nan %(numbers must be finite%)" },
  { "an infinite parameter value", scenario "params = { M = -math.huge }", "--dry-run", 1,
    "script%.lua:2: value 1 of parameter 'M' is %-inf" },
  { "a parameter value given twice", scenario "params = { M = { 1, 2, 1.0 } }", "--dry-run", 1,
    "script%.lua:2: parameter 'M': value 3 repeats value 1 %(M=1%.0%); give each value once" },
  { "a zipped pair given twice",
    scenario "params = { wl.zip { M = { 1, 2, 1 }, N = { 8, 9, 8 } } }", "--dry-run", 1,
    "script%.lua:2: parameters 'M', 'N': value 3 repeats value 1 %(M=1, N=8%)" },
  { "a list of values with a named field", scenario "params = { M = { 1, 2, big = 3 } }",
    "--dry-run", 1,
    "script%.lua:2: parameter 'M' is a list of values; it has the field 'big'" },

  -- -p on the command line
  { "-p: a value that overflows an integer parameter", scenario(PARAMS),
    "-p M=99999999999999999999 --dry-run", 2,
    "%-p M: '99999999999999999999' does not fit in an integer" },
  { "-p: a range that overflows an integer parameter", scenario(PARAMS),
    "-p M=1:1e19:*10 --dry-run", 2,
    "%-p M: '1e%+19' does not fit in an integer" },
  { "-p: an infinite number", scenario(PARAMS), "-p M=1e999 --dry-run", 2,
    "%-p M: '1e999' is not a finite number" },
  { "-p: a value given twice", scenario(PARAMS), "-p M=1,1 --dry-run", 2,
    "%-p M: value 2 repeats value 1 %(M=1%); give each value once" },
  { "-p: a range and a value that overlap", scenario(PARAMS), "-p M=1:4,2 --dry-run", 2,
    "%-p M: value 5 repeats value 2" },
  { "-p: the same parameter twice", scenario(PARAMS), "-p M=1 -p M=2 --dry-run", 2,
    "%-p M is given twice %('M=1' and 'M=2'%): give its values in one %-p" },

  -- --filter: one expression, true or false (0 and "false" are not false in Lua)
  { "--filter 'M % 2' (a number, not false)", scenario(PARAMS), "--filter 'M % 2' --dry-run", 2,
    "^wlrun: %-%-filter 'M %% 2' gives the number 1 for M=1, v=a: it must give true or false" },
  { "--filter '\"false\"' (a string)", scenario(PARAMS), "--filter '\"false\"' --dry-run", 2,
    "%-%-filter '\"false\"' gives the string 'false' for M=1, v=a" },
  { "--filter that closes its own parentheses", scenario(PARAMS),
    "--filter 'M > 1) or (true' --dry-run", 2, "%-%-filter 'M > 1%) or %(true': %-%-filter:1:" },
  { "--filter that is a list", scenario(PARAMS), "--filter 'M == 1, true' --dry-run", 2,
    "%-%-filter 'M == 1, true': %-%-filter:1:" },
  { "--filter that is empty", scenario(PARAMS), "--filter ' ' --dry-run", 2,
    "%-%-filter is empty: give a Lua expression" },

  -- --devices
  { "--devices with a device twice", nil, "x.lua --devices 0,0", 2,
    "%-%-devices '0,0': device 0 is given twice" },
  { "--devices with an empty item", nil, "x.lua --devices 0,,1", 2,
    "%-%-devices '0,,1': expected device indices" },
  { "--devices with a sign", nil, "x.lua --devices +1", 2,
    "%-%-devices '%+1': expected device indices" },

  -- the initialisers of tensors
  { "wl.normal(0, 'one')", line2 "local i = wl.normal(0, 'one')", "", 1,
    "script%.lua:2: wl%.normal%(mean, std, opts%): std must be a finite number, got a string "
      .. "%('one'%)" },
  { "wl.uniform('a')", line2 "local i = wl.uniform('a')", "", 1,
    "script%.lua:2: wl%.uniform%(lo, hi, opts%): lo must be a finite number, got a "
      .. "string %('a'%)" },
  { "wl.fill(nil)", line2 "local i = wl.fill(nil)", "", 1,
    "script%.lua:2: wl%.fill%(value%): value must be a number, got a nil" },
  { "wl.arange('x')", line2 "local i = wl.arange('x')", "", 1,
    "script%.lua:2: wl%.arange%(start, step%): start must be a finite number, got a "
      .. "string %('x'%)" },
  { "wl.normal with an unknown option", line2 "local i = wl.normal(0, 1, { sed = 4 })", "", 1,
    "script%.lua:2: wl%.normal%(mean, std, opts%): unknown option 'sed'" },

  -- percentages mean percent, wherever they are read
  { "--target-noise 0", nil, "x.lua --target-noise 0", 2,
    "%-%-target%-noise: expected a percentage from 0%.0001%% to 100%%" },
  { "--target-noise 150%", nil, "x.lua --target-noise 150%", 2,
    "%-%-target%-noise: expected a percentage .*got '150%%'" },
  { "wlrun.ini: target_noise = 200", nil, nil, 3,
    "wlrun%.ini:2: adaptive%.target_noise: expected a percentage .*got '200'",
    ini = "[adaptive]\ntarget_noise = 200\n" },

  -- --arch and [compile] arch: what this NVRTC compiles for, before anything runs
  { "--arch sm_10", nil, "x.lua --arch sm_10", 2,
    "%-%-arch: expected a GPU architecture like sm_90 that NVRTC [%d.]+ compiles for "
      .. "%(sm_.*got 'sm_10'" },
  { "--arch sm_999", nil, "x.lua --arch sm_999", 2,
    "%-%-arch: .*NVRTC [%d.]+ compiles for .*got 'sm_999'" },
  { "--arch compute_90", nil, "x.lua --arch compute_90", 2,
    "%-%-arch: .*NVRTC [%d.]+ compiles for .*got 'compute_90'" },
  { "--arch with a suffix the architecture lacks", nil, "x.lua --arch sm_80a", 2,
    "%-%-arch: .*got 'sm_80a'" },
  { "wlrun.ini: arch = sm_20", nil, nil, 3,
    "wlrun%.ini:2: compile%.arch: expected a GPU architecture .*got 'sm_20'",
    ini = "[compile]\narch = sm_20\n" },
}

local list = {}
for _, c in ipairs(cases) do
  list[#list + 1] = { name = c[1], script = c[2], args = c[3], code = c[4], stderr = c[5],
    ini = c.ini }
  if c.ini then -- wlrun.ini is read before the script runs
    list[#list].script, list[#list].args = "print('ran')", ""
  end
end

-- the same refusals on a GPU, with the same messages
for _, name in ipairs { "wl.bench: a duration with an unknown unit",
  "wl.bench: adaptive = 'false' (a string)",
  "wl.bench: mode = 'turbo' under --compile-only", "wl.stream: an unknown field",
    "timing: a negative warmup_time" } do
  for _, c in ipairs(cases) do
    if c[1] == name then
      list[#list + 1] = { name = name .. " (on a GPU)", script = c[2], args = "", code = c[4],
        stderr = c[5], gpu = true }
    end
  end
end

-- a bare percentage is percent: --target-noise 0.5 is 0.5 %, kept as the fraction 0.005
list[#list + 1] = { name = "--target-noise 0.5 means 0.5 %",
  script = "print(require('wlrun').settings.adaptive.target_noise)",
  args = "--target-noise 0.5", code = 0, stdout = "^0%.005\n" }

-- a sweep larger than wlrun takes: the space counted without wrapping (2^64 is not 0)
local function axes(n, count)
  return ([[local wl = require "wlrun"
local function r(n) local t = {} for i = 1, n do t[i] = i end return t end
return wl.scenario { name = "big", params = { %s }, run = function() end }
]]):format(table.concat((function()
    local t = {}
    for i = 1, count do t[i] = ("A%d = r(%d)"):format(i, n) end
    return t
  end)(), ", "))
end
list[#list + 1] = { name = "a sweep of 2^64 configurations (a count that wraps to 0)",
  script = axes(65536, 4), args = "--dry-run",
  code = 1,
    stderr
    = "script%.lua:%d+: 1%.845e%+19 configurations in the space of its parameters; at most 1e7" }
list[#list + 1] = { name = "a sweep that -p makes too big: the options are at fault (exit 2)",
  script = axes(10, 2), args = "--dry-run -p A1=1:1000 -p A2=1:100000",
  code = 2,
    stderr
    = "script%.lua:%d+: 1e%+08 configurations in the space of its parameters with %-p A1, %-p A2; "
    .. "at most 1e7" }
-- options and wlrun.ini keys whose messages must say what is wrong whole
list[#list + 1] = { name = "-p: a value of 300 bytes", script = "print('ran')",
  args = "-p v=" .. ("a"):rep(300) .. " --dry-run",
  code = 2, stderr = "^wlrun: %-p 'v=a+%.%.%.': value 1 is 300 bytes long %(at most 255%)" }
list[#list + 1] = { name = "--seed 2^53: the message names the largest seed",
  script = "print('ran')", args = "--seed 9007199254740992",
  code = 2,
    stderr
    = "%-%-seed: expected a whole number from 0 to 9007199254740991, got '9007199254740992'" }
list[#list + 1] = { name = "--lock-clocks abc on a plain script", script = "print('ran')",
  args = "--lock-clocks abc",
  code = 2,
    stderr
    = "%-%-lock%-clocks: expected off, base, max or a clock in MHz %(100 to 10000%), got 'abc'" }
list[#list + 1] = { name = "wlrun.ini: lock_clocks = abc, found when the file is read",
  script = "print('ran')", args = "",
  ini = "[run]\nlock_clocks = abc\n", code = 3,
    stderr = "wlrun%.ini:2: run%.lock_clocks: expected off, base, max or a clock in MHz" }
list[#list + 1] = { name = "a script's lock_clocks of 1500 (a number)", code = 0, args = "",
  script = "print(require('wlrun').setting('run', 'lock_clocks', 1500))", stdout = "^1500%s" }

-- a launcher's count of processes: at most --shard's N (10^6), so that every shard's results file
-- is read back (a document's shard.n is at most 10^7): refused before anything runs
for _, c in ipairs {
  { "OMPI_COMM_WORLD_SIZE of 9*10^18",
    "OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=9000000000000000000",
    "OMPI_COMM_WORLD_SIZE='9000000000000000000': expected a whole number from 1 to 1000000" },
  { "PMI_SIZE of 10^6 + 1", "PMI_RANK=0 PMI_SIZE=1000001",
    "PMI_SIZE='1000001': expected a whole number from 1 to 1000000 %(the most shards" },
  { "SLURM_ARRAY_TASK_COUNT of 10^15",
    "SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=1000000000000000",
    "SLURM_ARRAY_TASK_COUNT='1000000000000000': expected a whole number from 1 to 1000000" },
  { "a Slurm array from 0 to 2^63 - 1 (a count that wraps)",
    "SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=9223372036854775807",
    "SLURM_ARRAY_TASK_MIN=0 and SLURM_ARRAY_TASK_MAX=9223372036854775807 span more than "
      .. "1000000 tasks" },
} do
  list[#list + 1] = { name = "a launcher's " .. c[1], env = c[2],
    script = scenario(PARAMS), args = "--compile-only --arch sm_90 -o r.json", code = 2,
    stderr = "^wlrun: environment variables? " .. c[3],
    check = function(_, dir) -- nothing ran, nothing written
      local f = io.open(dir .. "/r.json")
      if f then f:close() end
      assert(f == nil, "r.json was written")
    end }
end
list[#list + 1] = { name = "a launcher's 10^6 processes: the last shard runs", code = 0,
  env = "OMPI_COMM_WORLD_RANK=999999 OMPI_COMM_WORLD_SIZE=1000000", script = scenario(PARAMS),
  args = "--dry-run", stderr = "shard 1000000/1000000 %(from OMPI_COMM_WORLD_RANK%): 0 of 4" }
list[#list + 1] = { name = "--filter with a comment at its end", script = scenario(PARAMS),
  args = "--filter 'M == 2 -- the large one' --dry-run", code = 0,
  stdout = "^v: 2 configurations" }

return list
