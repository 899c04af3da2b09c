-- The catalogue of bad inputs, class "results": results files hostile to the tools that read
-- them (--resume, merge, export, compare, plot, history add) and history databases made by
-- hand: nothing lost, nothing hung, no internal error, no markup made from data; and outputs
-- (-o) that are links to what a file written whole must not replace (a FIFO, a device,
-- /dev/stdout), refused with the link and its end left as they were. See tests/catalogue.lua for
-- the fields of a case.
local core = require "wlrun.core"
local json = require "wlrun.json"
local assert = require "luassert"

local HEADER
  =
  '{"schema":"wlrun-journal","version":1,"document":{"schema":"wlrun-results","version":1,'
    .. '"scenario":{"name":"s","axes":["n"]}}}'
local function entry(n, more)
  return ('{"index":%d,"params":{"n":%d},"status":"ok","samples":[0.001,0.0011,0.0012]%s}'):format(
    n, n, more or "")
end
local DEEP = ',"x":' .. ("["):rep(1500) .. ("]"):rep(1500) -- deeper than json.encode writes
local SCENARIO
  =
  "local wl = require 'wlrun'\nreturn wl.scenario { name = 's', params = { n = { 1, 2, 3 } }, "
  .. "run = function() end }\n"

-- a results document with configurations CONFIGS (JSON text) and MORE top-level fields
local function doc(configs, more)
  return (
    '{"schema":"wlrun-results","version":1,"scenario":{"name":"s"}%s,'
      .. '"configurations":[%s]}'):format(more or "", configs)
end
local ONE = doc(entry(1))

-- the journal j.journal still holds its three entries
local function journal_kept(_, dir)
  local f = assert(io.open(dir .. "/j.journal"))
  local text = f:read("a")
  f:close()
  local _, n = text:gsub('"status":"ok"', "")
  assert.equal(3, n)
end

local cases = {
  { name = "--resume: an entry nested deeper than wlrun writes: refused, the journal kept",
    code = 2,
    args = "--compile-only --arch sm_90 --resume j.journal -o j.json", script = SCENARIO,
    files = { ["j.journal"] = table.concat({ HEADER, entry(1, DEEP), entry(2), entry(3) }, "\n")
      .. "\n" },
    stderr = "%-%-resume: 'j%.journal' is malformed: line 2: nesting deeper than 1000 levels",
      check = journal_kept },
  { name = "export: a field nested 1500 levels deep", code = 2,
    args = "export d.json --format json",
    files = { ["d.json"] = doc(entry(1), DEEP) },
      stderr = "'d%.json' is malformed: nesting deeper than 1000 levels" },
  { name = "merge: a total of 10^12 configurations", code = 2, args = "merge t.json",
    prefix = "timeout 20",
    files = { ["t.json"] = doc(entry(1)):gsub('"name":"s"',
      '"name":"s","total_configurations":1000000000000') },
    stderr = "scenario%.total_configurations is a number, not a whole number from 0 to 10000000" },
  { name = "merge: a shard of 10^12", code = 2, args = "merge t.json", prefix = "timeout 20",
    files = { ["t.json"] = doc(entry(1), ',"shard":{"k":1,"n":1000000000000}') },
      stderr = "shard%.n is a number, not a whole number from 1 to 10000000" },
  { name = "merge: configurations numbered past scenario.total_configurations", code = 2,
    args = "merge t.json -o m.json",
    files = { ["t.json"] = doc(entry(1) .. "," .. entry(2) .. "," .. entry(3)):gsub('"name":"s"',
      '"name":"s","total_configurations":2') },
    stderr = "'t%.json' is malformed: configurations holds 3 entries but "
      .. "scenario%.total_configurations is 2",
    check = function(_, dir) assert.is_nil(io.open(dir .. "/m.json")) end },
  { name = "export: a configuration's index past scenario.total_configurations", code = 2,
    args = "export t.json --format table",
    files = { ["t.json"] = doc(entry(7)):gsub('"name":"s"',
      '"name":"s","total_configurations":2') },
    stderr = "'t%.json' is malformed: configurations%[1%]%.index is 7 but "
      .. "scenario%.total_configurations is 2: an index is a position in the sweep" },
  { name = "merge: shard 5 of 2", code = 2, args = "merge t.json",
    files = { ["t.json"] = doc(entry(1), ',"shard":{"k":5,"n":2}') },
    stderr = "'t%.json' is malformed: shard%.k is 5 but shard%.n is 2: shard K of N has K <= N" },
  { name = "plot: --filter that gives a number", code = 2,
    args = "plot r.json -o p.svg --filter n",
    files = { ["r.json"] = ONE },
    stderr = "%-%-filter 'n' gives the number 1 for n=1: it must give true or false",
    check = function(_, dir) assert.is_nil(io.open(dir .. "/p.svg")) end },
  { name = "merge: a configuration without params", code = 2, args = "merge p.json",
    files = { ["p.json"] = doc("{}") }, stderr = "configurations%[1%] has no params" },
  { name = "export and compare: a parameter value of 50,000 characters, at once", code = 0,
    prefix = "timeout 20",
    args = "compare l.json l.json",
    files = {
      ["l.json"] = doc(
      ('{"index":1,"params":{"v":"%s"},"status":"ok","samples":[0.001,0.002,0.003]},'):format(
      ("x"):rep(50000))
      .. '{"index":2,"params":{"v":"y"},"status":"ok","samples":[0.001,0.002,0.003]}') } },
  { name = "compare: standard input from /dev/zero", code = 9,
    args = "compare - l.json < /dev/zero", files = { ["l.json"] = ONE },
    stderr
      =
      "compare: cannot read <stdin>: it is a device, not a file, a pipe, a socket or a terminal" },
  { name = "history add: samples of 1e308 seconds (a mean that overflows)", code = 2,
    args = "history add b.json --db h.db --commit abcdef1",
    files = {
      ["b.json"] = doc(
      '{"index":1,"params":{"n":1},"status":"ok","samples":[1e308,1.7e308,1.7e308]}') },
    stderr = "samples%[1%] is 1e%+308: a time measured is at most a year" },
  { name = "markdown: HTML and a link in a parameter and the device", code = 0,
    args = "export m.json --format markdown",
    files = {
      ["m.json"] = doc(
      '{"index":1,"params":{"v":"<img src=https://attacker.example/p.png> '
      .. '[click](https://attacker.example)"},"status":"ok","samples":[0.001,0.002,0.003]}',
      ',"device":{"name":"<b>H200</b>"}') },
    check = function(r)
      assert.not_matches("<img", r.stdout)
      assert.not_matches("<b>", r.stdout)
      assert.not_matches("%[click%]", r.stdout)
      assert.matches("&lt;img src=https://attacker%.example/p%.png&gt; \\%[click\\%]%(https",
        r.stdout)
      assert.matches("&lt;b&gt;H200&lt;/b&gt;", r.stdout)
    end },
}

-- nvbench's JSON names its binary file of sample times: a device, a FIFO or a size past what a
-- count is read up to is not read (the summary is the sample, the note says why), never waited on
local function nvbench(file, size)
  return json.encode { meta = { version = { nvbench = { string = "0.7" } } }, devices = {},
    benchmarks = { { name = "b", states = { { name = "s", axis_values = {}, summaries = {
      { tag = "nv/cold/sample_times", data = { { name = "filename", type = "string", value = file },
        { name = "size", type = "int64", value = size } } },
      { tag = "nv/cold/time/gpu/mean", data = { { name = "value", type = "float64",
        value = "0.001" } } } } } } } } }
end
for _, c in ipairs {
  { "/dev/zero of 10^12 samples", "", nvbench("/dev/zero", "1000000000000"),
    "'/dev/zero' is a device, not a file" },
  { "a FIFO", "mkfifo f &&", nvbench("f", "4"), "'f' is a FIFO, not a file" },
  { "a file of 10^8 samples", "", nvbench("s.bin", "100000000"),
    "its size of 100000000 samples is not from 0 to 10000000" },
} do
  cases[#cases + 1] = { name = "export: nvbench's sample times file is " .. c[1], code = 0,
    prefix = c[2] .. " timeout 20", args = "export nv.json --format json",
    files = { ["nv.json"] = c[3], ["s.bin"] = "" },
    stdout = "its sample times are not read: " .. c[4]:gsub("%p", "%%%0") }
end

-- a measured entry as wlrun writes it, its stats made from its samples by core.stats.summary,
-- then spoilt by EDIT(entry): a results document whose stats disagree with their samples
local SAMPLES = { 0.0010, 0.0011, 0.0012, 0.0013, 0.0014 }
local function spoilt(edit)
  local c = { index = 1, params = { n = 1 }, status = "ok", samples = { table.unpack(SAMPLES) },
    stats = core.stats.summary(SAMPLES) }
  edit(c)
  return json.encode { schema = "wlrun-results", version = 1, scenario = { name = "s" },
    configurations = { c } }
end
local GIVE = " but its samples %(configurations%[1%]%.samples%) give "
for _, c in ipairs {
  { "export: stats.p90 raised to 50 times the largest sample",
    function(e) e.stats.p90 = 0.07 end, "stats%.p90 is 0%.07" .. GIVE .. "0%.00135999+\n$" },
  { "export: stats.cv raised to 7", function(e) e.stats.cv = 7 end,
    "stats%.cv is 7" .. GIVE .. "0%.1317" },
  { "export: stats.std made 100 times larger", function(e) e.stats.std = 100 * e.stats.std end,
    "stats%.std is 0%.0158[%d]*" .. GIVE .. "0%.000158[%d]*\n$" },
  { "export: two interior samples moved apart, the mean, median, min and max kept",
    function(e) e.samples[2], e.samples[4] = 0.00105, 0.00135 end,
    "stats%.std is 0%.000158[%d]*" .. GIVE .. "0%.000176" },
  { "export: stats without their samples (median 42)", function(e)
    e.samples, e.stats.median = nil, 42
  end, "stats has no samples to be checked against %(configurations%[1%]%.samples is "
    .. "missing%): statistics are kept with the samples they summarise\n$" },
  { "export: enqueue_stats beside an empty enqueue", function(e)
    e.enqueue, e.enqueue_stats = {}, core.stats.summary { 1e-6 }
  end, "enqueue_stats has no samples to be checked against %(configurations%[1%]%.enqueue is "
    .. "empty%)" },
  { "export: a cv of samples whose mean is 0", function(e)
    e.samples, e.stats = { 0, 0, 0 }, core.stats.summary { 0, 0, 0 }
    e.stats.cv = 0
  end, "stats%.cv is 0 but its samples %(configurations%[1%]%.samples%) have a mean of 0" },
  { "export: a traced entry whose phase's gpu_mean its list does not give", function(e)
    e.trace = { steps = 5, phases = { { name = "fwd", cpu = SAMPLES, cpu_mean = 0.0012,
      gpu = SAMPLES, gpu_mean = 0.5 } } }
  end, "trace%.phases%[1%]%.gpu_mean is 0%.5 but its list %(configurations%[1%]%.trace%.phases%[1%]"
    .. "%.gpu%) gives 0%.0012" },
  { "export: a traced entry's gpu_busy_mean without gpu_busy", function(e)
    e.trace = { steps = 5, gpu_busy_mean = 0.001 }
  end, "trace%.gpu_busy_mean has no list to be checked against" },
} do
  cases[#cases + 1] = { name = c[1], code = 2, args = "export s.json --format table",
    files = { ["s.json"] = spoilt(c[2]) },
    stderr = "^wlrun: export: 's%.json' is malformed: configurations%[1%]%." .. c[3],
    check = function(r) assert.equal("", r.stdout) end }
end
cases[#cases + 1] = { name = "export and compare: stats that agree with their samples in full",
  code = 0, args = "compare s.json s.json", files = { ["s.json"] = spoilt(function() end) } }

-- a comparison document (wlrun compare -o) spoilt, given to plot
for _, c in ipairs {
  { "plot: a comparison whose configuration has no verdict",
    function(d) d.configurations[1].verdict = nil end,
    "configurations%[1%] is not a compared configuration %(an object with params and a verdict%)" },
  { "plot: a comparison whose base is a number", function(d) d.base = 5 end,
    "its base is a number, not an object" },
  { "plot: a comparison whose parameters are a number", function(d) d.parameters = 5 end,
    "its parameters are a number, not a list" },
} do
  local d = json.decode(([[{"schema":"wlrun-compare","version":1,"base":{"file":"a.json","scenario":"s"},"new":{"file":"a.json","scenario":"s"},
"parameters":["n"],"configurations":[{"index":1,"params":{"n":1},"verdict":"same","ratio":1.0,"lo":0.99,"hi":1.01}],"summary":{"geomean":1.0}}]])) -- luacheck: ignore 631
  c[2](d)
  cases[#cases + 1] = { name = c[1], code = 2, args = "plot c.json -o c.svg",
    files = { ["c.json"] = json.encode(d) },
    stderr = "plot: 'c%.json': " .. c[3] }
end

cases[#cases + 1] = { name = "export: a schema that is an object", code = 2, args = "export s.json",
  files = { ["s.json"] = '{"schema":{"a":1},"version":1,"configurations":[]}' },
  stderr = "'s%.json' is not a wlrun%-results document %(its schema is a table, not a name%)" }
cases[#cases + 1] = { name = "--resume: a file whose scenario has no name", code = 2,
  args = "--dry-run --resume n.json",
  script = SCENARIO,
    files = { ["n.json"] = '{"schema":"wlrun-results","version":1,"configurations":[]}' },
  stderr = "%-%-resume n%.json: its scenario is not named, this one is 's'" }

-- what is at name in dir, not following a link ("link", "fifo", "file", ...)
local function kind(dir, name)
  local p = assert(io.popen(("stat -c %%F '%s/%s' 2>/dev/null"):format(dir, name)))
  local out = p:read("a"):gsub("%s+$", "")
  p:close()
  return ({ ["regular file"] = "file", ["symbolic link"] = "link", fifo = "fifo" })[out] or out
end

-- the links made in dir are still links, and what they lead to as it was
local function left_alone(names)
  return function(_, dir)
    for name, what in pairs(names) do assert.equal(what, kind(dir, name), name) end
  end
end

local REFUSED = "which a file written whole %(made beside it and renamed over it%) would replace"
for _, c in ipairs {
  { "export -o: a symbolic link to a FIFO", "mkfifo f && ln -s f o.json &&",
    "export r.json -o o.json",
    "cannot write 'o%.json': it is a symbolic link to a FIFO, " .. REFUSED,
    { ["o.json"] = "link", f = "fifo" } },
  { "merge -o: a link to a link to a FIFO", "mkfifo f && ln -s f l && ln -s l o.json &&",
    "merge r.json -o o.json", "cannot write 'o%.json': it is a symbolic link to a FIFO",
    { ["o.json"] = "link", l = "link", f = "fifo" } },
  { "export -o: a symbolic link to /dev/null (a device)", "ln -s /dev/null o.json &&",
    "export r.json -o o.json", "cannot write 'o%.json': it is a symbolic link to a device, "
    .. REFUSED, { ["o.json"] = "link" } },
  { "compare -o: a symbolic link to /dev/stdout", "ln -s /dev/stdout o.json &&",
    "compare r.json r.json -o o.json",
    "cannot write 'o%.json': it is a symbolic link to a process's open file %(through /proc%)",
    { ["o.json"] = "link" } },
  { "export -o: a symbolic link to a directory", "mkdir d && ln -s d o.json &&",
    "export r.json -o o.json", "cannot write 'o%.json': it is a symbolic link to a directory",
    { ["o.json"] = "link", d = "directory" } },
  { "export -o: a symbolic link to itself", "ln -s o.json o.json &&", "export r.json -o o.json",
    "cannot write 'o%.json': Too many levels of symbolic links", { ["o.json"] = "link" } },
} do
  cases[#cases + 1] = { name = c[1], code = 9, prefix = c[2] .. " timeout 20", args = c[3],
    files = { ["r.json"] = ONE }, stderr = c[4], check = left_alone(c[5]) }
end

cases[#cases + 1] = { name = "a scenario run's -o: a symbolic link to a FIFO, in second place",
  code = 9, prefix = "mkfifo f && ln -s f b.csv && timeout 20",
  script = SCENARIO, args = "--compile-only --arch sm_90 -o a.json -o b.csv",
  stderr = "cannot write results to 'b%.csv': it is a symbolic link to a FIFO",
  check = function(r, dir)
    left_alone { ["b.csv"] = "link", f = "fifo" }(r, dir)
    assert.equal("", kind(dir, "a.json")) -- nothing written, nothing run
  end }
cases[#cases + 1] = { name = "export -o: a symbolic link to nothing yet is written through",
  code = 0, prefix = "mkdir d && ln -s d/new.json o.json &&", args = "export r.json -o o.json",
  files = { ["r.json"] = ONE },
  check = left_alone { ["o.json"] = "link", ["d/new.json"] = "file" } }
cases[#cases + 1] = { name = "a scenario run's -o: FILE.lock there and not wlrun's", code = 9,
  script = SCENARIO, args = "--compile-only --arch sm_90 -o r.json",
  files = { ["r.json.lock"] = "the user's\n" },
  stderr = "^wlrun: cannot lock 'r%.json': 'r%.json%.lock' is there and is no lock of wlrun's",
  check = function(_, dir)
    local f = assert(io.open(dir .. "/r.json.lock"))
    assert.equal("the user's\n", f:read("a"))
    f:close()
    assert.equal("", kind(dir, "r.json"))
  end }

-- a UTF-8 byte order mark before the JSON (Windows' JSON writers put one) is read past by every
-- reader of results: the loader reads each file; a character that shows nothing elsewhere is
-- named in the message as bytes, never printed as the invisible character it is
local BOM = "\xEF\xBB\xBF"
local GBENCH = '{"context":{"executable":"/x/bm"},"benchmarks":[{"name":"BM_a/8",'
  .. '"run_type":"iteration","iterations":1,"real_time":10,"cpu_time":10,"time_unit":"ns"}]}'
for _, c in ipairs {
  { "export: a results file", "export r.json --format plain", { ["r.json"] = BOM .. ONE },
    "n=1" },
  { "compare: both files", "compare a.json b.json", { ["a.json"] = BOM .. ONE,
    ["b.json"] = BOM .. ONE }, "Verdicts: 1 uncertain" },
  { "merge: a journal", "merge j.journal --format plain",
    { ["j.journal"] = BOM .. HEADER .. "\n" .. entry(1) .. "\n" }, "n=1" },
  { "export: a Google Benchmark file", "export g.json --format plain",
    { ["g.json"] = BOM .. GBENCH }, "BM_a" },
  { "export: an nvbench file", "export nv.json --format plain",
    { ["nv.json"] = BOM .. nvbench("s.bin", "0"), ["s.bin"] = "" }, "name=b" },
  { "history add: a results file", "history add r.json --db h.db --commit abcdef0 -q",
    { ["r.json"] = BOM .. ONE }, "" },
} do
  cases[#cases + 1] = { name = "a byte order mark before the JSON: " .. c[1], code = 0,
    args = c[2], files = c[3], stdout = c[4] }
end
cases[#cases + 1] = { name = "a run's --resume: a results file with a byte order mark", code = 0,
  script = SCENARIO, args = "--compile-only --arch sm_90 --resume r.json -o o.json",
  files = { ["r.json"] = BOM .. doc(entry(1)):gsub('"ok"', '"compiled"') },
  check = function(_, dir)
    local f = assert(io.open(dir .. "/o.json"))
    local text = f:read("a")
    f:close()
    assert.equal(1, select(2, text:gsub('"resumed": true', "")))
  end }
for _, c in ipairs {
  { "a zero-width space before the JSON", "\u{200B}" .. ONE,
    "invalid token near '\\xe2\\x80\\x8b'" },
  { "a byte order mark after a blank", " " .. BOM .. ONE,
    "invalid token near '\\xef\\xbb\\xbf'" },
  { "a right-to-left override in the schema's name",
    ONE:gsub('"wlrun%-results"', '"wlrun-\u{202E}stluser"'),
    "its schema is 'wlrun%-\\xe2\\x80\\xaestluser'" },
} do
  cases[#cases + 1] = { name = "export: " .. c[1] .. ": shown escaped in the message", code = 2,
    args = "export r.json", files = { ["r.json"] = c[2] }, stderr = c[3],
    check = function(r) assert.is_nil(r.stderr:find("\u{200B}", 1, true)
      or r.stderr:find(BOM, 1, true) or r.stderr:find("\u{202E}", 1, true)) end }
end
cases[#cases + 1] = { name = "export --format table: invisible characters in names are shown",
  code = 0, args = "export r.json --format table",
  files = { ["r.json"] = ONE:gsub('"name":"s"', '"name":"s\u{200B}\u{FEFF}x"') },
  stdout = "s\\xe2\\x80\\x8b\\xef\\xbb\\xbfx" }

-- a status wlrun never writes, and times, counts and shares of a loop, a trace and cupti's
-- kernels that no measurement gives (negative, past a year): refused by the loader, naming them
for _, c in ipairs {
  { "an unknown status", doc((entry(1):gsub('"ok"', '"weird"'))),
    "configurations%[1%]%.status is 'weird', not a status wlrun writes %(ok, skipped, failed, "
      .. "compiled or planned%)" },
  { "a status that is a number", doc((entry(1):gsub('"ok"', '7'))),
    "configurations%[1%]%.status is a number, not a string" },
  { "a negative loop.data", doc(entry(1, ',"loop":{"data":[0.001,-0.5]}')),
    "configurations%[1%]%.loop%.data%[2%] is %-0%.5: a time measured is not negative" },
  { "loop.total_time of 10^300 s", doc(entry(1, ',"loop":{"total_time":1e300}')),
    "configurations%[1%]%.loop%.total_time is 1e%+300: a time measured is at most a year" },
  { "a negative loop.batch_size", doc(entry(1, ',"loop":{"batch_size":-4}')),
    "configurations%[1%]%.loop%.batch_size is a number, not a finite number >= 0" },
  { "a negative share of a loop's phase", doc(entry(1, ',"loop":{"phases":[{"name":"fwd",'
    .. '"mean":0.001,"share":-0.2}]}')),
    "configurations%[1%]%.loop%.phases%[1%]%.share is a number, not a finite number >= 0" },
  { "a negative loop.outside.mean", doc(entry(1, ',"loop":{"outside":{"mean":-1,"share":0}}')),
    "configurations%[1%]%.loop%.outside%.mean is %-1: a time measured is not negative" },
  { "a negative trace.between", doc(entry(1, ',"trace":{"between":[0.1,-0.1]}')),
    "configurations%[1%]%.trace%.between%[2%] is %-0%.1: a time measured is not negative" },
  { "a negative GPU time of a trace's phase", doc(entry(1, ',"trace":{"phases":[{"name":"f",'
    .. '"gpu":[-0.002],"gpu_mean":-0.002}]}')),
    "configurations%[1%]%.trace%.phases%[1%]%.gpu%[1%] is %-0%.002: a time measured is not "
      .. "negative" },
  { "a negative time of a trace's kernel", doc(entry(1, ',"trace":{"data_kernels":[{"name":"k",'
    .. '"count":1,"time":-3}]}')),
    "configurations%[1%]%.trace%.data_kernels%[1%]%.time is %-3: a time measured is not negative" },
  { "a negative trace.run_ahead.lag_max", doc(entry(1, ',"trace":{"run_ahead":{"lag_max":-1}}')),
    "configurations%[1%]%.trace%.run_ahead%.lag_max is %-1: a time measured is not negative" },
  { "a negative median of a cupti kernel", doc(entry(1, ',"kernel_times":[{"name":"k",'
    .. '"count":1,"median":-1e-6,"share":1}]')),
    "configurations%[1%]%.kernel_times%[1%]%.median is %-1e%-06: a time measured is not "
      .. "negative" },
  { "a configuration's time of -1 s", doc(entry(1, ',"time":-1')),
    "configurations%[1%]%.time is %-1: a time measured is not negative" },
} do
  cases[#cases + 1] = { name = "export: " .. c[1] .. ": refused", code = 2,
    args = "export r.json --format table", files = { ["r.json"] = c[2] },
    stderr = "^wlrun: export: 'r%.json' is malformed: " .. c[3] }
end
cases[#cases + 1] = { name = "export: --dry-run's JSON (status planned) is read", code = 0,
  args = "export r.json --format plain", files = { ["r.json"] = doc((entry(1):gsub('"ok"',
    '"planned"'))) }, stdout = "planned" }

-- Markdown's own markup in the data (emphasis, code spans, strikethrough, a list or heading at a
-- line's start): every Markdown printer shows the text as it is, never as markup
local MD = doc(
  '{"index":1,"params":{"v":"a`b*c*_d_~e~","w":"1. x"},"status":"failed","kind":"cu`da",'
  .. '"error":"*boom* __x__"},{"index":2,"params":{"v":"``","w":"# h"},"status":"ok",'
  .. '"samples":[0.001,0.0011,0.0012]}'):gsub('"name":"s"', '"name":"*s*_x_",'
  .. '"description":"- a list item"')
for _, c in ipairs {
  { "export --format markdown", "export m.json --format markdown", {
    "## \\%*s\\%*\\_x\\_\n", "\n\\%- a list item\n", "| a\\`b\\%*c\\%*\\_d\\_\\~e\\~ | 1%. x ",
    "| \\`\\` ", "| # h ", "%- %*%*#1%*%* ``cu`da``: \\%*boom\\%* \\_\\_x\\_\\_\n" } },
  { "compare --format markdown", "compare m.json m.json --format markdown", {
    "## Comparison: \\%*s\\%*\\_x\\_\n", "| \\`\\` ", "%- v=a\\`b\\%*c\\%*\\_d\\_\\~e\\~, w=1%. x: "
    .. "BASE #1 failed \\%[cu\\`da\\%]" } },
  { "history show --format markdown", "history show --db h.db --format markdown",
    { "| \\%*s\\%*\\_x\\_ |" }, "$WLRUN_BIN history add m.json --db h.db --commit abcdef0 -q &&" },
  { "history trend --format markdown", "history trend --db h.db --format markdown",
    { "### \\%*s\\%*\\_x\\_ · " },
    "$WLRUN_BIN history add m.json --db h.db --commit abcdef0 -q &&" },
} do
  cases[#cases + 1] = { name = c[1] .. ": Markdown's markup in the data shown as text", code = 0,
    args = c[2], prefix = c[4], files = { ["m.json"] = MD },
    check = function(r)
      for _, want in ipairs(c[3]) do assert.matches(want, r.stdout) end
      assert.not_matches("[^\\]%*s%*", r.stdout)
    end }
end

return cases
