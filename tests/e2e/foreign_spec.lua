-- End-to-end: Google Benchmark and nvbench JSON read as results (wlrun.results.foreign,
-- docs/results.md "Results of other tools") by compare, merge, history add and export, on the
-- real outputs of tests/fixtures/foreign/ (README.md there says where each comes from) and on
-- files written here in those tools' shapes; and `wlrun compare DIR/ DIR/` (docs/compare.md).
local h = require "helper"
local json = require "wlrun.json"

local F = h.source_dir .. "/tests/fixtures/foreign/"
local q = h.quote

local function fx(name) return q(F .. name) end

local function json_of(text)
  local doc, err = json.decode(text)
  assert(doc, err)
  return doc
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local t = f:read("a")
  f:close()
  return t
end

-- the converted document of a file, through export --format json
local function converted(path)
  local r = h.run("export " .. path .. " --format json")
  assert.equal(0, r.code, r.stderr)
  return json_of(r.stdout)
end

local function by_name(doc)
  local t = {}
  for _, c in ipairs(doc.configurations) do t[c.params.name] = c end
  return t
end

-- a Google Benchmark file with repetitions: each benchmark's times (in unit) and its aggregates
local function gbench_file(path, benches, unit)
  local rows = {}
  for _, b in ipairs(benches) do
    for i, t in ipairs(b.times) do
      rows[#rows + 1] = (
        '{"name": "%s", "family_index": 0, "per_family_instance_index": 0, "run_name": "%s", '
        .. '"run_type": "iteration", "repetitions": %d, "repetition_index": %d, "threads": 1, '
        .. '"iterations": 1000, "real_time": %.17g, "cpu_time": %.17g, "time_unit": "%s"}'):format(
        b.name, b.name, #b.times, i - 1, t, t * 2, unit)
    end
    for _, a in ipairs { "mean", "median", "stddev", "cv" } do
      rows[#rows + 1] = (
        '{"name": "%s_%s", "run_name": "%s", "run_type": "aggregate", "repetitions": %d, '
        .. '"threads": 1, "aggregate_name": "%s", "aggregate_unit": "%s", "iterations": %d, '
        .. '"real_time": 12345, "cpu_time": 12345, "time_unit": "%s"}'):format(
        b.name, a, b.name, #b.times, a, a == "cv" and "percentage" or "time", #b.times, unit)
    end
  end
  h.write(path,
    ('{"context": {"date": "2024-05-01T10:00:00+02:00", "executable": "./bench_gemm", '
    .. '"num_cpus": 8, "library_build_type": "release"},\n "benchmarks": [\n%s\n]}\n'):format(
    table.concat(rows, ",\n")))
  return path
end

describe("wlrun reads Google Benchmark JSON", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. q(dir)) end)

  it("compares google/benchmark's own compare.py inputs, with a verdict per benchmark", function()
    local r = h.run("compare " .. fx("gbench_test1_run1.json") .. " "
      .. fx("gbench_test1_run2.json") .. " --format json")
    assert.equal(0, r.code, r.stderr)
    local doc = json_of(r.stdout)
    assert.equal(14, #doc.configurations) -- 16 rows: the BigO and RMS fits are no benchmarks
    local c = {}
    for _, x in ipairs(doc.configurations) do c[x.params.name] = x end
    assert.near(2.0, c.BM_2xSlower.ratio, 1e-12)
    assert.near(0.5, c.BM_2xFaster.ratio, 1e-12)
    assert.near(0.1, c.BM_NotBadTimeUnit.ratio, 1e-12) -- 0.4 s against 0.04 s
    assert.near(1e-9, c.BM_DifferentTimeUnit.ratio, 1e-18) -- 1 s against 1 ns
    -- one sample a side
    for _, x in ipairs(doc.configurations) do assert.equal("uncertain", x.verdict) end
    r = h.run("compare " .. fx("gbench_test1_run1.json") .. " " .. fx("gbench_test1_run2.json"))
    assert.equal(0, r.code, r.stderr)
    assert.matches("BM_2xSlower +50 ns +100 ns +2%.000", r.stdout)
  end)

  it("takes repetitions as the samples, in seconds from time_unit, and no aggregate", function()
    local doc = converted(fx("gbench_test3_run0.json"))
    assert.equal("wlrun-results", doc.schema)
    local c = by_name(doc)
    assert.same({ 9e-9, 8e-9 }, c.BM_Two.samples)
    assert.equal(2, c.BM_Two.stats.n)
    assert.near(8.5e-9, c.BM_Two.stats.median, 1e-24)
    assert.equal("skipped", c.BM_One.status) -- only an aggregate row, of no known name
    -- time_unit s
    assert.same({ 1 }, by_name(converted(fx("gbench_test5_run0.json"))).BM_ManyRepetitions.samples)
    local path = gbench_file(dir .. "/reps.json",
      { { name = "BM_gemm/1024/8", times = { 10, 11, 12, 13, 14 } } }, "us")
    doc = converted(q(path))
    -- the mean, median, stddev and cv rows are not configurations
    assert.equal(1, #doc.configurations)
    local e = doc.configurations[1]
    assert.same({ name = "BM_gemm", arg1 = 1024, arg2 = 8 }, e.params)
    assert.equal(5, #e.samples)
    for i, t in ipairs { 10, 11, 12, 13, 14 } do assert.equal(t / 1e6, e.samples[i]) end
    assert.near(12e-6, e.stats.median, 1e-18) -- from the samples, not the aggregate row (12345)
    assert.equal("bench_gemm", doc.scenario.name)
    assert.matches("real_time", e.notes[1])
  end)

  it("splits a name into its base name and its arguments, positional and named", function()
    local ug = converted(fx("gbench_user_guide.json"))
    assert.same({ name = "BM_SetInsert", arg1 = 1024, arg2 = 8 }, ug.configurations[2].params)
    assert.same({ 32317e-9 }, ug.configurations[2].samples)
    local path = gbench_file(dir .. "/named.json",
      { { name = "BM_x/n:1024/threads:2/repeats:3", times = { 1, 2, 3 } } }, "ms")
    local doc = converted(q(path))
    assert.same({ name = "BM_x", n = 1024, threads = 2 }, doc.configurations[1].params)
    assert.same({ "name", "n", "threads" }, doc.scenario.axes)
    doc = converted(fx("gbench_test2_run.json"))
    assert.same({ name = "Prefix", arg1 = "BM_Zero", arg2 = 3 }, doc.configurations[5].params)
    -- a name given twice keeps every value: the later ones as NAME_2, ...
    path = gbench_file(dir .. "/twice.json", { { name = "BM_x/n:1/n:2", times = { 1 } },
      { name = "BM_x/name:foo", times = { 1 } }, { name = "BM_x/5/arg1:7", times = { 1 } } }, "ms")
    doc = converted(q(path))
    assert.same({ name = "BM_x", n = 1, n_2 = 2 }, doc.configurations[1].params)
    assert.same({ name = "BM_x", name_2 = "foo" }, doc.configurations[2].params)
    assert.same({ name = "BM_x", arg1 = 5, arg1_2 = 7 }, doc.configurations[3].params)
    -- two names that split into the same parameters keep their whole names: two configurations
    path = gbench_file(dir .. "/same.json", { { name = "BM_x/5/arg1:7", times = { 1 } },
      { name = "BM_x/arg1:5/7", times = { 2 } } }, "ms")
    doc = converted(q(path))
    assert.same({ name = "BM_x/5/arg1:7" }, doc.configurations[1].params)
    assert.same({ name = "BM_x/arg1:5/7" }, doc.configurations[2].params)
  end)

  it("gives verdicts with repetitions and gates on them (exit 7)", function()
    local base = gbench_file(dir .. "/base.json",
      { { name = "BM_a/64", times = { 100, 101, 99, 100, 102, 98, 100, 101 } },
      { name = "BM_b/64", times = { 50, 50.1, 49.9, 50, 50.1, 49.9, 50, 50 } } }, "ns")
    local new = gbench_file(dir .. "/new.json", {
      { name = "BM_a/64", times = { 120, 121, 119, 120, 122, 118, 120, 121 } },
      { name = "BM_b/64", times = { 50, 50.1, 49.9, 50, 50.1, 49.9, 50, 50 } } }, "ns")
    local r = h.run("compare " .. q(base) .. " " .. q(new) .. " --fail-above 5 -o "
      .. q(dir .. "/c.json"))
    assert.equal(7, r.code, r.stderr)
    assert.matches("name=BM_a, arg1=64", r.stderr)
    local doc = json_of(read(dir .. "/c.json"))
    local v = {}
    for _, x in ipairs(doc.configurations) do v[x.params.name] = x.verdict end
    assert.same({ BM_a = "slower", BM_b = "same" }, v)
  end)

  it("merges one into a results file that every tool reads", function()
    local out = dir .. "/merged.json"
    local r = h.run("merge " .. fx("gbench_test3_run1.json") .. " -o " .. q(out))
    assert.equal(0, r.code, r.stderr)
    local doc = json_of(read(out))
    assert.equal("wlrun-results", doc.schema)
    assert.equal(1, doc.version)
    assert.equal("gbench", doc.source.format)
    r = h.run("compare " .. fx("gbench_test3_run0.json") .. " " .. q(out))
    assert.equal(0, r.code, r.stderr)
    assert.matches("BM_Two", r.stdout)
  end)

  it("is added to a history", function()
    local db = dir .. "/h.db"
    local r = h.run("history add --db " .. q(db) .. " --commit 1a2b3c4 "
      .. fx("gbench_test3_run0.json"))
    assert.equal(0, r.code, r.stderr)
    assert.matches("2 configurations", r.stdout)
    r = h.run("history show --db " .. q(db))
    assert.equal(0, r.code, r.stderr)
    assert.matches("gbench", r.stdout)
    assert.matches("1a2b3c4", r.stdout)
  end)

  it("leaves a JSON file of neither tool with the usual error (exit 2)", function()
    for _, text in ipairs { '{"benchmarks": 5}', '{"hello": [1, 2]}', '[1, 2]' } do
      local path = dir .. "/x.json"
      h.write(path, text)
      local r = h.run("compare " .. q(path) .. " " .. fx("gbench_test1_run1.json"))
      assert.equal(2, r.code, r.stderr)
      assert.matches("x%.json' is not a", r.stderr)
    end
    local path = dir .. "/unit.json"
    h.write(path,
      '{"context": {}, "benchmarks": [{"name": "BM_a", "real_time": 1, "time_unit": '
      .. '"fortnights"}]}')
    local r = h.run("history add --db " .. q(dir .. "/h.db") .. " " .. q(path))
    assert.equal(2, r.code, r.stderr)
    assert.matches("malformed Google Benchmark JSON.*time_unit", r.stderr)
    -- a time that is not a number of 0 or more, and an empty name: malformed, never read otherwise
    for _, c in ipairs {
      { '{"name": "BM_a", "real_time": "5000", "cpu_time": 10}',
        "%(BM_a%) has real_time \"5000\"" },
      { '{"name": "BM_a", "real_time": -5}', "%(BM_a%) has real_time %-5" },
      { '{"name": "BM_a", "real_time": 1, "cpu_time": -1}', "%(BM_a%) has cpu_time %-1" },
      { '{"name": "", "real_time": 1}', " has no name" },
    } do
      h.write(path, '{"context": {}, "benchmarks": [' .. c[1] .. ']}')
      r = h.run("compare " .. q(path) .. " " .. q(path))
      assert.equal(2, r.code, c[1] .. ": " .. r.stderr)
      assert.matches("malformed Google Benchmark JSON: benchmarks%[1%].*" .. c[2], r.stderr)
    end
  end)
end)

describe("wlrun reads nvbench JSON", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. q(dir)) end)

  it("compares nvbench's own test files: states as configurations, the device from its list",
    function()
    local r = h.run("compare " .. fx("nvbench_test_ref.json") .. " " .. fx("nvbench_test_cmp.json")
      .. " --format json")
    assert.equal(0, r.code, r.stderr)
    local doc = json_of(r.stdout)
    assert.equal(20, #doc.configurations) -- simple on 2 devices, 3 x 3 grid shapes on 2 devices
    assert.equal("Quadro GV100", doc.base.device)
    local ref = converted(fx("nvbench_test_ref.json"))
    local c = ref.configurations[3]
    assert.same({ name = "copy_sweep_grid_shape", device = 0, BlockSize = 64, NumBlocks = 64 },
      c.params)
    assert.equal(1, #c.samples)
    assert.matches("the summary, nvbench's mean GPU time", c.notes[1])
    assert.equal("sm_70", ref.device.arch)
  end)

  it("reads the sample times of its binary file where it is there", function()
    local doc = json_of(read(F .. "nvbench_test_ref.json"))
    local state = doc.benchmarks[1].states[1]
    table.insert(state.summaries, { tag = "nv/cold/sample_times", name = "Samples",
      hint = "sample_times",
      data = { { name = "filename", type = "string", value = "bin/0.bin" },
        { name = "size", type = "int64", value = "4" } } })
    h.write(dir .. "/r.json", json.encode(doc))
    os.execute("mkdir -p " .. q(dir .. "/bin"))
    h.write(dir .. "/bin/0.bin", string.pack("<ffff", 1 / 2048, 1 / 1024, 3 / 4096, 1 / 512))
    local c = converted(q(dir .. "/r.json")).configurations[1]
    assert.same({ 1 / 2048, 1 / 1024, 3 / 4096, 1 / 512 }, c.samples) -- float32, exact here
    assert.equal(7 / 8192, c.stats.median)
    os.remove(dir .. "/bin/0.bin") -- gone: the summary, said so
    c = converted(q(dir .. "/r.json")).configurations[1]
    assert.equal(1, #c.samples)
    assert.matches("is not there", c.notes[1])
  end)
end)

describe("wlrun compare DIR/ DIR/", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. q(dir)) end)

  local function copy(from, to) h.write(to, read(from)) end

  it("pairs files by scenario (or file) name, one report per pair, and lists the rest", function()
    os.execute("mkdir -p " .. q(dir .. "/base") .. " " .. q(dir .. "/new"))
    local R = h.source_dir .. "/tests/fixtures/compare/"
    copy(R .. "base.json", dir .. "/base/gemm.json")
    copy(R .. "slower.json", dir .. "/new/gemm_renamed.json") -- paired by scenario gemm_sweep
    copy(F .. "gbench_test3_run0.json", dir .. "/base/micro.json")
    copy(F .. "gbench_test3_run1.json", dir .. "/new/micro.json")
    copy(F .. "nvbench_test_ref.json", dir .. "/base/nv.json")
    -- scenario gbench too: paired by file name
    copy(F .. "gbench_test5_run0.json", dir .. "/new/only_new.json")
    local r = h.run("compare " .. q(dir .. "/base/") .. " " .. q(dir .. "/new"))
    assert.equal(0, r.code, r.stderr)
    assert.matches("Comparing gemm_sweep", r.stdout)
    assert.matches("Comparing gbench", r.stdout)
    assert.matches("Only in BASE folder [^\n]*%(1%):\n +[^\n]*nv%.json", r.stdout)
    assert.matches("Only in NEW folder [^\n]*%(1%):\n +[^\n]*only_new%.json", r.stdout)
    r = h.run("compare " .. q(dir .. "/base") .. " " .. q(dir .. "/new") .. " --fail-above 5 -o "
      .. q(dir .. "/all.json"))
    assert.equal(7, r.code, r.stderr) -- gemm_sweep's configuration made 10 % slower
    assert.matches("gemm%.json: variant=tiled", r.stderr)
    local all = json_of(read(dir .. "/all.json"))
    assert.equal(2, #all.comparisons)
    assert.equal(1, #all.only_in_base)
  end)

  it("does not pass a gate over folders with nothing in common; a folder against a file is exit 9",
    function()
    os.execute("mkdir -p " .. q(dir .. "/a") .. " " .. q(dir .. "/b"))
    copy(F .. "gbench_test1_run1.json", dir .. "/a/x.json")
    copy(F .. "nvbench_test_ref.json", dir .. "/b/y.json")
    local r = h.run("compare " .. q(dir .. "/a") .. " " .. q(dir .. "/b") .. " --fail-above 5")
    assert.equal(2, r.code, r.stderr)
    assert.matches("no pair of files to compare", r.stderr)
    r = h.run("compare " .. q(dir .. "/a") .. " " .. fx("gbench_test1_run1.json"))
    assert.equal(9, r.code, r.stderr) -- as before: a directory is not a file
    assert.matches("cannot read .*: it is a directory, not a file", r.stderr)
  end)
end)
