-- The printers of the results document (docs/results.md) on a fixture: each format against its
-- golden file (WLRUN_UPDATE_GOLDEN=1 rewrites them: look at the output before committing it),
-- the JSON round trip, atomic writing and its errors, CSV quoting, edge documents.
local h = require "helper"
local json = require "wlrun.json"

local report
do -- the host's searcher may not map a package to its init.lua: then load it by its file name
  local ok, r = pcall(require, "wlrun.report")
  report = ok and r or require "wlrun.report.init"
end

local fixtures = h.source_dir .. "/tests/fixtures"
local function sample() return dofile(fixtures .. "/results/sample.lua") end

local function golden(name, text)
  local path = fixtures .. "/report/" .. name
  if os.getenv("WLRUN_UPDATE_GOLDEN") then h.write(path, text) end
  assert.equal(h.read(path), text)
end

local function fails(fn)
  local ok, e = pcall(fn)
  assert.is_false(ok)
  return e
end

local function minimal(configurations)
  return { schema = "wlrun-results", version = 1, complete = false,
    configurations = configurations or {} }
end

describe("report printers", function()
  it("print the terminal table", function()
    golden("table.txt", report.render(sample(), "table"))
  end)

  it("print the plain report", function()
    golden("plain.txt", report.render(sample(), "plain"))
  end)

  it("print CSV", function()
    golden("sample.csv", report.render(sample(), "csv"))
  end)

  it("print Markdown", function()
    golden("sample.md", report.render(sample(), "markdown"))
  end)

  it("print JSON as in the fixture's JSON file", function()
    golden("../results/sample.json", report.render(sample(), "json"))
  end)

  it("render the table by default and every listed format", function()
    assert.same({ "table", "plain", "csv", "markdown", "json" }, report.formats)
    assert.equal(report.render(sample(), "table"), report.render(sample()))
    for _, f in ipairs(report.formats) do
      local text = report.render(sample(), f)
      assert.is_string(text)
      assert.matches("\n$", text)
    end
  end)

  it("refuse an unknown format, naming it", function()
    local e = fails(function() report.render(sample(), "yaml") end)
    assert.equal("usage", e.kind)
    assert.matches("'yaml'", tostring(e.message))
  end)

  it("show why a configuration has no measurement, cut to the table's width", function()
    local doc = sample()
    doc.configurations[1].error = "first line " .. string.rep("x", 300) .. "\nsecond line"
    local text = report.render(doc, "table")
    local row = text:match("\n(1  [^\n]*)")
    assert.matches("failed   %[cuda%] first line x+%.%.%.$", row)
    assert.equal(#text:match("\n(%-[^\n]*)"), #row) -- as wide as the rule under the header
    assert.matches("\n2  naive    4096  4096  skipped  naive kernel limited to M <= 2048\n", text,
      1, true)
    -- in full in the footer
    assert.matches("\n  #1 %[cuda%] first line x+\n      second line\n", text)
  end)

  it("render a document with zero configurations, or with little else", function()
    for _, f in ipairs(report.formats) do
      local doc = sample()
      doc.configurations = {}
      assert.is_string(report.render(doc, f))
      assert.is_string(report.render(minimal(), f))
    end
    local doc = sample()
    doc.configurations = {}
    assert.matches("(no configurations)", report.render(doc, "table"), 1, true)
    assert.equal("index,variant,M,N,status,", report.render(doc, "csv"):sub(1, 25))
    assert.same({}, json.decode(report.render(doc, "json")).configurations)
    local t = report.render(minimal { { index = 1, params = {}, status = "skipped",
      reason = "nothing" } }, "table")
    assert.matches("1  skipped  nothing", t, 1, true)
  end)

  it("name the kernel, or the scenario when there is none, in the plain report", function()
    local text = report.render(sample(), "plain")
    assert.matches("Kernel: gemm_tiled (variant=tiled, M=4096, N=4096)\nDevice: NVIDIA H200\n",
      text, 1, true)
    assert.matches("Kernel: gemm_sweep (variant=naive, M=4096, N=4096)\nSkipped: ", text, 1, true)
    local doc = sample()
    doc.configurations[4].metrics.flop_per_s = nil
    assert.matches("Throughput: 30.89 GB/s", report.render(doc, "plain"), 1, true)
  end)
end)

describe("JSON", function()
  it("round-trips the document, every float to the last bit", function()
    local doc = sample()
    local back = json.decode(report.render(doc, "json"))
    assert.same(doc, back)
    local s = back.configurations[3].stats
    assert.equal(0.00043116249999999997, s.median) -- %.14g would give 0.0004311625
    assert.equal("float", math.type(s.median))
    assert.equal("float", math.type(back.device.peak_bandwidth))
    assert.equal("integer", math.type(back.configurations[3].work.flops))
  end)

  it("writes the keys in a stable, readable order", function()
    local text = report.render(sample(), "json")
    local last = 0
    for _, k in ipairs { "schema", "version", "wlrun", "command_line", "cwd", "started", "finished",
      "complete",
                         "scenario", "settings", "sources", "device", "floor", "configurations" } do
      local at = text:find('\n  "' .. k .. '":', 1, true)
      assert.is_true(at and at > last, k)
      last = at
    end
    local conf = text:sub((text:find('"index": 3', 1, true)))
    last = 0
    for _, k in ipairs { "index", "params", "status", "mode", "per", "warmup", "samples", "enqueue",
      "stats",
                         "enqueue_stats", "shape", "work", "metrics", "kernels", "check",
                           "warnings", "notes",
                         "clock", "time" } do
      local at = conf:find('"' .. k .. '":', 1, true)
      assert.is_true(at and at > last, k)
      last = at
    end
    assert.matches('"variant": "tiled",%s*"M": 1024,%s*"N": 1024', conf) -- parameters in axes order
    assert.equal(text, report.render(sample(), "json"))
  end)

  it("writes NaN and infinities as null and empty objects as {}", function()
    local doc = sample()
    doc.configurations[4].stats.cv = 0 / 0
    doc.configurations[4].stats.max = math.huge
    doc.sources = {}
    local text = report.render(doc, "json")
    assert.matches('"cv": null', text, 1, true)
    assert.matches('"max": null', text, 1, true)
    assert.matches('"sources": {}', text, 1, true)
    assert.matches('"notes": []', text, 1, true)
    local back = assert(json.decode(text))
    assert.is_nil(back.configurations[4].stats.cv)
    assert.equal(doc.configurations[4].stats.median, back.configurations[4].stats.median)
    -- a NaN cv shows as -
    assert.matches("6.509..6.529 ms      -  20", report.render(doc, "table"), 1, true)
    assert.matches(",0.00651848,0.006501001,inf,", report.render(doc, "csv"), 1, true)
  end)
end)

describe("CSV", function()
  it("quotes fields with a comma, a quote or a line break", function()
    local csv = require "wlrun.report.csv"
    assert.equal("plain", csv.field("plain"))
    assert.equal('"a,b"', csv.field("a,b"))
    assert.equal('"say ""hi"""', csv.field('say "hi"'))
    assert.equal('"two\nlines"', csv.field("two\nlines"))
    assert.equal('"cr\r"', csv.field("cr\r"))
    local doc = sample()
    doc.configurations[2].params.variant = 'odd, "quoted"'
    doc.configurations[2].reason = "line one\nline two"
    local text = report.render(doc, "csv")
    assert.matches('\r\n2,"odd, ""quoted""",4096,4096,skipped,,,', text, 1, true)
    assert.matches(',"line one\nline two"\r\n3,', text, 1, true)
  end)

  it("has a row per configuration and a field per column, empty where absent", function()
    local text = report.render(sample(), "csv")
    local lines = {}
    for l in text:gmatch("([^\r\n]*)\r\n") do lines[#lines + 1] = l end
    assert.equal(5, #lines)
    local _, commas = lines[1]:gsub(",", "")
    local _, commas3 = lines[4]:gsub(",", "")
    assert.equal(commas, commas3)
    assert.matches("^3,tiled,1024,1024,ok,cold,1,20,0.000432101,", lines[4])
    assert.matches(",8589934592,37748736,", lines[4], 1, true)
    assert.matches(",38,0,true,cache%-hot,$", lines[4])
  end)
end)

describe("report files", function()
  it("take the format from the extension", function()
    assert.equal("json", report.format_for_path("out/gemm.json"))
    assert.equal("csv", report.format_for_path("a.csv"))
    assert.equal("markdown", report.format_for_path("README.md"))
    assert.equal("plain", report.format_for_path("/tmp/x.y/report.txt"))
    assert.equal("json", report.format_for_path("R.JSON"))
    assert.is_nil(report.format_for_path("results"))
    assert.is_nil(report.format_for_path("results.xml"))
    assert.is_nil(report.format_for_path("dir.json/results"))
  end)

  it("are written atomically, through a temporary file", function()
    local dir = h.tmpdir()
    local doc = sample()
    local path = dir .. "/r.json"
    h.write(path, "old contents")
    assert.equal(path, report.write(doc, path))
    assert.equal(report.render(doc, "json"), h.read(path))
    assert.is_nil(io.open(path .. ".tmp", "r"))
    report.write(doc, dir .. "/r.csv")
    assert.equal(report.render(doc, "csv"), h.read(dir .. "/r.csv"))
    report.write(doc, dir .. "/r.out", "markdown") -- an explicit format wins
    assert.equal(report.render(doc, "markdown"), h.read(dir .. "/r.out"))
    os.execute("rm -rf " .. h.quote(dir))
  end)

  it("raise an io error naming the path and the system's message", function()
    local e = fails(function() report.write(sample(), "/nonexistent/dir/x.json") end)
    assert.equal("io", e.kind)
    assert.matches("/nonexistent/dir/x.json", tostring(e.message), 1, true)
    assert.matches("No such file or directory", tostring(e.message), 1, true)
  end)

  it("refuse a file whose extension gives no format", function()
    local e = fails(function() report.write(sample(), "/tmp/results.xml") end)
    assert.equal("usage", e.kind)
    assert.matches("results.xml", tostring(e.message), 1, true)
  end)
end)
