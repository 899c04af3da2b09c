-- The results document's owner (wlrun.results): the configuration key, JSON that round-trips
-- whatever the parameters are called, the one strict loader (schema, version, trailing data,
-- non-finite samples, positions in its errors), the journal that keeps every finished
-- configuration, merging, and the settings in force that a document records.
local h = require "helper"
local wl = require "wlrun"
local results = require "wlrun.results"
local load = require "wlrun.results.load"
local journal = require "wlrun.results.journal"

local fixtures = h.source_dir .. "/tests/fixtures"
local function sample() return dofile(fixtures .. "/results/sample.lua") end

local function fails(fn, ...)
  local ok, e = pcall(fn, ...)
  assert.is_false(ok)
  return e
end

local function doc_with(configurations, extra)
  local d = { schema = "wlrun-results", version = 1, complete = true,
              scenario = { name = "s", axes = { "n" } }, configurations = configurations }
  for k, v in pairs(extra or {}) do d[k] = v end
  return d
end

describe("results.key", function()
  it("is the parameters in name order with their types", function()
    assert.equal(results.key { b = 2, a = "x" }, results.key { a = "x", b = 2 })
    assert.are_not.equal(results.key { n = 1024 }, results.key { n = 1024.0 })
    assert.are_not.equal(results.key { n = 1 }, results.key { n = "1" })
    assert.are_not.equal(results.key { v = true }, results.key { v = "true" })
    assert.equal("", results.key {})
    -- a value that holds the text of other parameters is not those parameters
    assert.are_not.equal(results.key { M = 1024, N = 1024, variant = "tiled" },
      results.key { M = "1024:integer\0N=1024:integer\0variant=tiled" })
    assert.are_not.equal(results.key { a = "1;1:b=string:1:x" }, results.key { a = "1", b = "x" })
    -- every digit counts
    assert.are_not.equal(results.key { x = 0.3 }, results.key { x = 0.1 + 0.2 })
  end)

  it("survives the JSON round trip for every kind of value", function()
    local params = { n = 5, m = 2.0, name = "tiled", on = false, big = math.maxinteger,
      tiny = 5e-324 }
    local back = results.decode(results.render(doc_with {
      { index = 1, params = params, status = "ok" } }), "x")
    assert.same(params, back.configurations[1].params)
    assert.equal(results.key(params), results.key(back.configurations[1].params))
  end)
end)

describe("results JSON", function()
  it("keeps a parameter named n (or any name) an object", function()
    for _, name in ipairs { "n", "1", "length", "__index", "schema" } do
      local text = results.render(doc_with({ { index = 1, params = { [name] = 3 },
        status = "ok" } }, {
        scenario = { name = "s", axes = { name } } }))
      assert.matches('"params":%s*{%s*"' .. name:gsub("_", "%%_") .. '":%s*3%s*}', text)
      assert.same({ [name] = 3 }, results.decode(text, "x").configurations[1].params)
    end
  end)

  it("writes empty parameters, metrics and sources as objects, empty lists as arrays", function()
    local text = results.render(doc_with({ { index = 1, params = {}, status = "ok", metrics = {},
      warnings = {},
      notes = {}, samples = {} } }, { sources = {} }))
    assert.matches('"params":%s*{}', text)
    assert.matches('"metrics":%s*{}', text)
    assert.matches('"sources":%s*{}', text)
    assert.matches('"warnings":%s*%[%]', text)
    assert.matches('"samples":%s*%[%]', text)
  end)

  it("round-trips the sample document, every float to the last bit", function()
    local doc = sample()
    local back = results.decode(results.render(doc), "sample")
    assert.same(doc.configurations, back.configurations)
    assert.equal(0.00043116249999999997, back.configurations[3].stats.median)
    assert.equal("float", math.type(back.device.peak_bandwidth))
    assert.equal("integer", math.type(back.configurations[3].work.flops))
  end)

  it("escapes invalid UTF-8 rather than writing it raw", function()
    local text = results.render(doc_with { { index = 1, params = { v = "caf\xe9" },
      status = "failed", error = "\xff\xfe" } })
    assert.is_truthy(utf8.len(text))
    -- its Latin-1 reading
    assert.equal("caf\xc3\xa9", results.decode(text, "x").configurations[1].params.v)
  end)
end)

describe("the strict loader", function()
  local good = results.encode(doc_with { { index = 1, params = { n = 1 }, status = "ok",
    samples = { 1.0, 2.0 } } }, true)

  local function refuses(text, pattern, kind)
    local e = fails(load.decode, text, "f.json")
    assert.equal(kind or "usage", e.kind)
    assert.matches(pattern, e.message)
    return e
  end

  it("reads a document", function()
    assert.same({ 1.0, 2.0 }, load.decode(good, "f.json").configurations[1].samples)
  end)

  it("refuses another version, another schema, or none", function()
    refuses((good:gsub('"version":1', '"version":99')),
      "'f.json': wlrun%-results version 99 is not supported")
    refuses((good:gsub('"version":1', '"version":"1"')),
      "'f.json': wlrun%-results has a version that is not a number: \"1\" %(this wlrun reads "
      .. "version 1%)")
    refuses((good:gsub('"wlrun%-results"', '"other"')),
      "'f.json' is not a wlrun%-results document %(its schema is 'other'%)")
    refuses("[1, 2]", "'f.json' is not a JSON object")
    refuses("3", "'f.json' is not a JSON object")
  end)

  it("refuses trailing data, naming the line and column", function()
    refuses(good .. "garbage",
      "'f.json' is not valid JSON: line 1, column %d+: end of file expected near 'garbage'")
    refuses(good .. "{}", "'f.json' is not valid JSON")
    refuses(good:sub(1, #good - 5), "'f.json' is not valid JSON: line 1, column %d+: ")
    refuses("", "'f.json' is not valid JSON")
  end)

  it("refuses null and non-finite samples, naming where", function()
    refuses((good:gsub("%[1%.0,2%.0%]", "[1.0,null]")),
      "'f.json' is malformed: configurations%[1%]%.samples%[2%] is null")
    refuses((good:gsub("%[1%.0,2%.0%]", "[null,2.0]")), "configurations%[1%]%.samples%[1%] is null")
    refuses((good:gsub("%[1%.0,2%.0%]", "[1.0,1e999]")),
      "'f.json' is not valid JSON: .*real number overflow")
    refuses((good:gsub("%[1%.0,2%.0%]", '[1.0,"2"]')),
      "configurations%[1%]%.samples%[2%] is not a finite number")
  end)

  it("refuses parts of the wrong type", function()
    refuses((good:gsub('"params":{"n":1}', '"params":{"n":[1]}')),
      "configurations%[1%]%.params%.n is a table")
    refuses((good:gsub('"params":{"n":1}', '"params":[1]')),
      "configurations%[1%]%.params is an array, not an object")
    refuses((good:gsub('"index":1', '"index":0')),
      "configurations%[1%]%.index is a number, not a whole number from 1 to 10000000")
    refuses((good:gsub('"status":"ok"', '"status":3')),
      "configurations%[1%]%.status is a number, not a string")
    refuses((good:gsub('"configurations":', '"configurationz":')), "no configurations array")
  end)

  it("refuses a trace's mean that its list does not give, or a mean without its list", function()
    local function traced(t)
      return results.encode(doc_with { { index = 1, params = { n = 1 }, status = "ok",
        samples = { 1.0, 2.0 }, trace = t } }, true)
    end
    local t = { between = { 0.001, 0.003 }, between_mean = 0.002, gpu_busy = {},
      gpu_busy_mean = 0, phases = { { name = "fwd", cpu = { 1, 2 }, cpu_mean = 1.5,
      gpu = { 0.5, 0.5 }, gpu_mean = 0.5 } } }
    assert.equal(0.002, load.decode(traced(t), "f.json").configurations[1].trace.between_mean)
    t.between_mean = 0.0025
    refuses(traced(t), "'f.json' is malformed: configurations%[1%]%.trace%.between_mean is 0%.0025 "
      .. "but its list %(configurations%[1%]%.trace%.between%) gives 0%.002")
    t.between_mean, t.phases[1].gpu_mean = 0.002, 4.5
    refuses(traced(t), "configurations%[1%]%.trace%.phases%[1%]%.gpu_mean is 4%.5 but its list")
    t.phases[1].gpu_mean, t.gpu_busy = 0.5, nil
    refuses(traced(t), "configurations%[1%]%.trace%.gpu_busy_mean has no list to be checked "
      .. "against %(configurations%[1%]%.trace%.gpu_busy is missing%)")
  end)

  it("names the same refused field on every run, of several: the first in the keys' order",
    function()
    local text = results.encode(doc_with({ { index = 1, params = { n = 1 }, status = "ok",
      samples = { 1.0 } } }, { device = { name = 3, arch = 4, sm_count = "x" } }), true)
    refuses(text, "'f%.json' is malformed: device%.arch is a number, not a string")
  end)

  it("reads a comparison only where asked to", function()
    local cmp = '{"schema":"wlrun-compare","version":1,"configurations":[]}'
    refuses(cmp, "not a wlrun%-results document")
    assert.equal("wlrun-compare", load.decode(cmp, "c",
      { accept = { ["wlrun-compare"] = 1 } }).schema)
  end)

  it("names an unreadable file with kind io", function()
    local e = fails(load.load, "/nonexistent/r.json", { prefix = "compare: " })
    assert.equal("io", e.kind)
    assert.matches("^compare: cannot read '/nonexistent/r.json': No such file", e.message)
  end)
end)

-- What the GPU paths write, built here by the same functions from synthetic samples: a CPU
-- machine cannot measure, but every part of a measured entry must load back through the one
-- strict loader (--resume, children, --devices, compare and merge all read through it).
describe("a measured entry, as the GPU paths write it", function()
  local bench = require "wlrun.measure.bench"
  local loop = require "wlrun.measure.loop"
  local checks = require "wlrun.measure.checks"

  local function bimodal(n)
    local xs = {}
    for i = 1, n do xs[i] = (i % 3 == 0 and 2e-5 or 1e-5) * (1 + (i % 7) * 1e-3) end
    xs[n] = 1e-3 -- a far outlier
    return xs
  end
  local clock = { sm_mhz = 1980.5, max_sm_mhz = 1980, nvml = true, nvml_sm_mhz = 1980,
    temperature_c = 41,
                  power_w = 120.5, reasons = { "sw_power_cap" } }
  local device = { name = "synthetic", sm_count = 132, peak_bandwidth = 4.8e12,
    peak_fp32_flops = 6.7e13,
                   l2_bytes = 60 * 2 ^ 20 }

  local function loads_back(entry)
    local doc = doc_with({ entry }, { device = device,
      floor = { event_pair = 1.3e-6, empty_kernel = 4.4e-6 } })
    local back = load.decode(results.render(doc), "measured.json").configurations[1]
    assert.same(entry, back)
    return back
  end

  for _, n in ipairs { 1, 2, 5, 100 } do
    it(("from wl.bench (%d samples, adaptive, warnings, work, check)"):format(n), function()
      local r = { requested_mode = "auto", mode = "cold", per = 1, notes = { "auto: cold" },
        flush_l2 = true,
                  floor = { event_pair = 1.3e-6, empty_kernel = 4.4e-6 },
                    warmup = { n = 5, time = 1e-3 },
                  clock = { before = clock, after = clock }, watch = { allocs = 1, syncs = 2 },
                  adaptive = { target = 0.005, converged = false, noise = 0.02, elapsed = 0.5,
                    gpu_time = 0.25 } }
      local samples = bimodal(n)
      local enqueue = {}
      for i = 1, n do enqueue[i] = 3.5e-6 end
      bench.summarize(r, samples, enqueue)
      r.warnings = checks.evaluate(r, { device = device, working_set = 2 ^ 20,
        zero_inputs = { "x" } })
      local entry = results.entry { index = 1, params = { n = n } }
      results.record_bench(entry, r)
      results.record_work(entry, { flops = 2e9, bytes = 4e6 }, device)
      results.record_check(entry, false, "off by 1")
      results.flag_check(entry)
      entry.kernels = { { name = "k", source = "extern \"C\" __global__ void k() {}",
        arch = "sm_90",
                          num_regs = 32, max_threads_per_block = 1024, shared_size_bytes = 0 } }
      entry.time, entry.device_index, entry.isolated = 0.75, 0, true
      local back = loads_back(entry)
      assert.is_table(back.shape.modes_at)
    end)
  end

  it("from wl.loop (phases, data time, the time outside the phases)", function()
    local rec = { batch_size = 32, iter = {}, data = {}, phases = {} }
    for i = 1, 20 do
      rec.iter[i], rec.data[i] = 0.02 + i * 1e-5, 0.001
      rec.phases[i] = { { name = "forward", time = 0.008, top = true },
        { name = "matmul", time = 0.005, top = false },
                        { name = "backward", time = 0.009, top = true } }
    end
    local entry = results.entry { index = 1, params = { n = 1 } }
    loop.record(entry, rec, 5)
    results.record_check(entry, true)
    loads_back(entry)
  end)
end)

describe("the journal", function()
  local function new_doc()
    return { schema = "wlrun-results", version = 1, complete = false,
      scenario = { name = "j", axes = { "n" } },
             settings = {}, configurations = {} }
  end

  local function entry(i)
    return { index = i, params = { n = i }, status = "ok", samples = { i * 1e-3, i * 1e-3 },
      stats = { median = i * 1e-3 } }
  end

  it("keeps every finished configuration on disk until the outputs are written", function()
    local dir = h.tmpdir()
    local outputs = { { path = dir .. "/r.json", format = "json" },
      { path = dir .. "/r.csv", format = "csv" } }
    local w = journal.open(new_doc(), outputs)
    w:add(entry(2))
    w:add(entry(1))
    assert.is_nil(io.open(dir .. "/r.json")) -- nothing rendered yet
    local mid = load.load(dir .. "/r.json.journal") -- a run killed here keeps both
    assert.is_false(mid.complete)
    assert.equal(2, #mid.configurations)
    assert.same({ n = 2 }, mid.configurations[1].params)
    w:finish(true)
    assert.is_nil(io.open(dir .. "/r.json.journal"))
    local doc = load.load(dir .. "/r.json")
    assert.is_true(doc.complete)
    -- in index order
    assert.same({ 1, 2 }, { doc.configurations[1].index, doc.configurations[2].index })
    assert.matches("^index,param%.n,status", h.read(dir .. "/r.csv"))
  end)

  it("reads back when the last line was cut short by a crash", function()
    local dir = h.tmpdir()
    local w = journal.open(new_doc(), { { path = dir .. "/r.json", format = "json" } })
    w:add(entry(1))
    w:add(entry(2))
    w.file:write('{"index":3,"params":{"n":3},"sta')
    w.file:flush()
    local doc = load.load(dir .. "/r.json.journal")
    assert.equal(2, #doc.configurations)
    assert.is_true(doc.truncated)
    w:finish(false)
  end)

  it("refuses a journal whose middle is broken, naming the line", function()
    local dir = h.tmpdir()
    local w = journal.open(new_doc(), { { path = dir .. "/r.json", format = "json" } })
    w:add(entry(1))
    w.file:write("garbage\n")
    w:add(entry(2))
    w.file:flush()
    local e = fails(load.load, dir .. "/r.json.journal")
    assert.matches("is not valid JSON: line 3, column %d+: invalid token near 'garbage'", e.message)
    w:finish(false)
  end)

  it("writes the outputs as incomplete when a guard closes on an error", function()
    local dir = h.tmpdir()
    local ok = pcall(function()
      local w = journal.open(new_doc(), { { path = dir .. "/r.json", format = "json" } })
      local _ <close> = w:guard()
      w:add(entry(1))
      error("a fault")
    end)
    assert.is_false(ok)
    local doc = load.load(dir .. "/r.json")
    assert.is_false(doc.complete)
    assert.equal(1, #doc.configurations)
  end)

  it("refuses an output it cannot write before anything is measured", function()
    local e = fails(journal.open, new_doc(), { { path = "/nonexistent/dir/r.json",
      format = "json" } })
    assert.equal("io", e.kind)
    assert.matches("cannot write results to '/nonexistent/dir/r.json'", e.message)
  end)
end)

describe("merging", function()
  it("refuses documents of different scenarios through the results module", function()
    local merge = require "wlrun.results.merge"
    local a = doc_with { { index = 1, params = { n = 1 }, status = "ok" } }
    local b = doc_with { { index = 2, params = { n = 2 }, status = "ok" } }
    local doc, found = merge.merge({ a, b }, { "a.json", "b.json" })
    assert.equal(2, #doc.configurations)
    assert.same({}, found.duplicates)
    b.scenario = { name = "other" }
    local e = fails(merge.merge, { a, b }, { "a.json", "b.json" })
    assert.matches("runs of different scenarios", e.message)
  end)
end)

describe("the settings in force", function()
  it("record a scenario's timing table with its source", function()
    local sc = wl.scenario { name = "t", run = function() end,
      timing = { flush_l2 = true, adaptive = true, warmup = 7, max_time = "3s", batch = 4,
        target_noise = 2 } }
    local settings, sources = require("wlrun.run.runner").in_force(sc)
    assert.equal(0.02, settings.adaptive.target_noise) -- 2 %, as wl.settings holds it
    assert.is_true(settings.run.flush_l2)
    assert.is_true(settings.adaptive.enabled)
    assert.equal(7, settings.run.warmup)
    assert.equal(3, settings.adaptive.max_time)
    assert.equal("scenario", sources["run.flush_l2"])
    assert.equal("scenario", sources["adaptive.enabled"])
    assert.equal("scenario", sources["run.warmup"])
    assert.is_nil(sources["run.iters"])
    -- the settings themselves are untouched
    assert.is_nil(wl.settings.run.flush_l2 == true and "changed" or nil)
  end)

  it("record a loop's iterations and warmup", function()
    local sc = wl.loop { name = "l", batch_size = 1, iters = 12, data = function() end,
      step = function() end }
    local settings, sources = require("wlrun.run.runner").in_force(sc)
    assert.equal(12, settings.run.iters)
    assert.equal("scenario", sources["run.iters"])
    assert.equal(5, settings.run.warmup) -- the loop's own default
    assert.is_nil(sources["run.warmup"])
  end)
end)
