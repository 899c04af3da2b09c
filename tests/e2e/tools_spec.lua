-- End-to-end: `wlrun compare`, `wlrun plot` and `wlrun export` on the recorded results of
-- tests/fixtures/compare/ (made by its make.lua from tests/fixtures/results/sample.lua):
-- output, JSON, the regression gate's exit code, errors and their exit codes (docs/compare.md).
local h = require "helper"
local json = require "wlrun.json"

local F = h.source_dir .. "/tests/fixtures/compare/"
local q = h.quote

local function fx(name) return q(F .. name) end

local function compare(args) return h.run("compare " .. args) end

local function json_of(text)
  local doc, err = json.decode(text)
  assert(doc, err)
  return doc
end

local function lines_matching(text, pattern)
  local list = {}
  for line in text:gmatch("[^\n]+") do
    if line:find(pattern) then list[#list + 1] = line end
  end
  return list
end

describe("wlrun compare", function()
  it("finds the same run twice the same", function()
    local r = compare(fx("base.json") .. " " .. fx("rerun.json"))
    assert.equal(0, r.code, r.stderr)
    assert.equal("", r.stderr)
    assert.matches("^Comparing gemm_sweep\n", r.stdout)
    assert.equal(2, #lines_matching(r.stdout, "^tiled .*  same$"))
    assert.matches("\nVerdicts: 2 same\n", r.stdout)
    assert.matches(
      "Geometric mean of NEW/BASE over 2 configurations: 1%.000 %(95%% interval "
      .. "0%.99%d%.%.1%.00%d%)", r.stdout)
    -- the failed and the skipped configurations have no measurement on either side
    assert.matches(
      "Not compared %(2, no measurement in a run%):\n  variant=naive, M=1024, N=1024: BASE #1 "
      .. "failed %[cuda%], NEW #1 failed %[cuda%]\n", r.stdout)
  end)

  it("prints an aligned table with the ratio, its interval, the change, p and the verdict",
    function()
    local r = compare(fx("base.json") .. " " .. fx("slower.json"))
    assert.equal(0, r.code, r.stderr)
    assert.matches(
      "\nvariant     M     N      BASE       NEW  NEW/BASE  95%% interval  change        p      "
      .. "n  verdict\n", r.stdout)
    assert.matches("\n%-%-%-%-%-%-%-  %-%-%-%-  %-%-%-%-  ", r.stdout)
    assert.matches(
      "\ntiled    1024  1024  431%.2 us  47%d%.%d us +1%.%d%d%d  1%.%d%d%d%.%.1%.%d%d%d "
      .. "+%+%d+%.%d%% +%d%.%de%-%d%d  20/20  slower\n", r.stdout)
    assert.matches("\ntiled    4096  4096  6%.518 ms .*  same\n", r.stdout)
    assert.matches("\nVerdicts: 1 slower, 1 same\n", r.stdout)
    assert.matches(
      "\nMethod: noise threshold 2%%, Mann%-Whitney U alpha 0%.01, 95%% bootstrap interval of "
      .. "the ratio of medians %(2000 resamples, seed 1%)\n", r.stdout)
  end)

  it("lists the configurations that are in one file only", function()
    local r = compare(fx("base.json") .. " " .. fx("slower.json"))
    assert.matches(
      "\nOnly in BASE %(1%):\n  #2 variant=naive, M=4096, N=4096 %(skipped: naive kernel "
      .. "limited to M <= 2048%)\n", r.stdout)
    assert.matches("\nOnly in NEW %(1%):\n  #4 variant=tiled, M=2048, N=2048\n", r.stdout)
  end)

  it("writes a versioned JSON document", function()
    local r = compare(fx("base.json") .. " " .. fx("slower.json") .. " --format json")
    assert.equal(0, r.code, r.stderr)
    local doc = json_of(r.stdout)
    assert.equal("wlrun-compare", doc.schema)
    assert.equal(1, doc.version)
    assert.equal(F .. "base.json", doc.base.file)
    assert.equal("NVIDIA H200", doc.new.device)
    assert.same({ "variant", "M", "N" }, doc.parameters)
    assert.equal(0.02, doc.settings.noise)
    assert.equal(2000, doc.settings.resamples)
    assert.equal(2, #doc.configurations)
    local c = doc.configurations[1]
    assert.same({ variant = "tiled", M = 1024, N = 1024 }, c.params)
    assert.equal("slower", c.verdict)
    assert.equal(3, c.base.index)
    assert.equal(20, c.new.n)
    assert.is_true(c.lo <= c.ratio and c.ratio <= c.hi and c.lo > 1.05)
    assert.is_true(c.p < 0.01)
    assert.near(c.ratio - 1, c.change, 1e-12)
    assert.equal("same", doc.configurations[2].verdict)
    assert.equal(1, #doc.only_in_base)
    assert.equal(4096, doc.only_in_base[1].params.M)
    assert.equal(1, #doc.only_in_new)
    assert.equal(2048, doc.only_in_new[1].params.M)
    assert.equal(1, #doc.not_compared)
    assert.same({ compared = 2, slower = 1, same = 1, faster = 0, uncertain = 0 },
      { compared = doc.summary.compared, slower = doc.summary.slower, same = doc.summary.same,
        faster = doc.summary.faster, uncertain = doc.summary.uncertain })
    assert.near(math.sqrt(c.ratio * doc.configurations[2].ratio), doc.summary.geomean, 1e-12)
    assert.is_true(doc.summary.geomean_lo < doc.summary.geomean
      and doc.summary.geomean < doc.summary.geomean_hi)
    assert.same({}, doc.warnings)
    assert.is_nil(doc.gate)
  end)

  it("is reproducible: the same files give the same document", function()
    local a = compare(fx("base.json") .. " " .. fx("slower.json") .. " --format json")
    local b = compare(fx("base.json") .. " " .. fx("slower.json") .. " --format json")
    assert.equal(a.stdout, b.stdout)
    local c = compare(fx("base.json") .. " " .. fx("slower.json") .. " --format json --seed 5")
    assert.are_not.equal(a.stdout, c.stdout)
  end)

  it("prints Markdown and writes the files -o names, by their extension", function()
    local dir = h.tmpdir()
    local r = compare(fx("base.json") .. " " .. fx("slower.json") .. " --format markdown -o "
      .. q(dir .. "/c.json")
      .. " -o " .. q(dir .. "/c.md") .. " -o " .. q(dir .. "/c.txt"))
    assert.equal(0, r.code, r.stderr)
    assert.matches("^## Comparison: gemm_sweep\n", r.stdout)
    assert.matches(
      "\n| variant |    M |    N |     BASE |      NEW | NEW/BASE | 95%% interval | change |    "
      .. "   p |     n | verdict    |\n", r.stdout)
    assert.matches("| %*%*slower%*%* |\n", r.stdout)
    assert.equal(r.stdout, h.read(dir .. "/c.md"))
    assert.equal("wlrun-compare", json_of(h.read(dir .. "/c.json")).schema)
    assert.matches("^Comparing gemm_sweep\n", h.read(dir .. "/c.txt"))
    os.execute("rm -rf " .. q(dir))
  end)

  it("warns when the runs come from different devices, drivers, versions or settings", function()
    local r = compare(fx("base.json") .. " " .. fx("other_device.json"))
    assert.equal(0, r.code, r.stderr)
    assert.matches(
      "wlrun compare: warning: the runs come from different devices: BASE NVIDIA H200, NEW "
      .. "NVIDIA A100%-SXM4%-80GB\n", r.stderr)
    assert.matches(
      "wlrun compare: warning: the runs come from different CUDA drivers: BASE 13000, NEW 12040\n",
      r.stderr)
    assert.matches(
      "wlrun compare: warning: the runs come from different versions of wlrun: BASE 0%.1%.0, "
      .. "NEW 0%.2%.0\n", r.stderr)
    assert.matches(
      "wlrun compare: warning: the runs used different settings: run%.flush_l2 false vs true\n",
      r.stderr)
    assert.matches("\nWarnings:\n  device%-differs: the runs come from different devices", r.stdout)
    local doc = json_of(compare(fx("base.json") .. " " .. fx("other_device.json")
      .. " --format json -q").stdout)
    local codes = {}
    for _, w in ipairs(doc.warnings) do codes[#codes + 1] = w.code end
    assert.same({ "device-differs", "driver-differs", "wlrun-differs", "settings-differ" }, codes)
    assert.equal("", compare(fx("base.json") .. " " .. fx("other_device.json") .. " -q").stderr)
  end)

  it("quotes a document's names on one line: a newline in them fakes no line of output",
    function()
    local json = require "wlrun.json"
    local dir = h.tmpdir()
    local doc = json.decode(h.read(F .. "base.json"))
    doc.device.name = "NVIDIA H200\nGate --fail-above 5%: passed"
    h.write(dir .. "/nl.json", json.encode(doc))
    local r = compare(q(dir .. "/nl.json") .. " " .. fx("slower.json"))
    assert.matches("different devices: BASE NVIDIA H200\\x0aGate %-%-fail%-above 5%%: passed, NEW",
      r.stderr)
    r = h.run("merge " .. q(dir .. "/nl.json") .. " " .. fx("slower.json") .. " -o "
      .. q(dir .. "/m.json"))
    assert.matches("'NVIDIA H200\\x0aGate", r.stderr)
    -- two configurations with the same parameters, one value holding a newline: the error
    doc = json.decode(h.read(F .. "base.json"))
    doc.configurations[1].params.variant = "naive\nFAKE"
    doc.configurations[2].params = doc.configurations[1].params
    h.write(dir .. "/twice.json", json.encode(doc))
    r = compare(q(dir .. "/twice.json") .. " " .. fx("slower.json"))
    assert.equal(2, r.code, r.stderr)
    assert.matches("naive\\x0aFAKE", r.stderr)
    for _, out in ipairs { r.stderr, r.stdout } do
      assert.is_nil(out:find("\nFAKE", 1, true))
      assert.is_nil(out:find("\nGate", 1, true))
    end
  end)

  it("matches a configuration of thousands of parameters (no quadratic work per name)", function()
    -- 3000 parameters took most of a minute when each name looked through every configuration's
    -- sorted names; the bound is 100 times what it takes
    local json = require "wlrun.json"
    local dir = h.tmpdir()
    local doc = json.decode(h.read(F .. "base.json"))
    local c, axes = doc.configurations[3], {}
    c.params = {}
    for i = 1, 3000 do c.params["p" .. i], axes[i] = i, "p" .. i end
    doc.configurations, doc.scenario.axes = { c }, axes
    h.write(dir .. "/many.json", json.encode(doc))
    local r = h.run("compare many.json many.json -q", { cwd = dir, prefix = "timeout 30" })
    assert.equal(0, r.code, r.stderr)
  end)

  it("never writes an output over a file it reads: exit 9, the file as it was", function()
    local dir = h.tmpdir()
    local base = h.read(F .. "base.json")
    h.write(dir .. "/b.json", base)
    os.execute(("ln -s b.json %s"):format(q(dir .. "/link.json")))
    for _, cmd in ipairs {
      "compare b.json " .. fx("slower.json") .. " -o b.json",
      "compare link.json " .. fx("slower.json") .. " -o ./b.json",
      "export link.json -o b.json",
    } do
      local r = h.run(cmd, { cwd = dir })
      assert.equal(9, r.code, cmd .. ": " .. r.stderr)
      assert.matches("cannot write '[^']*b%.json': it is '[^']+', which this command reads",
        r.stderr)
      assert.equal(base, h.read(dir .. "/b.json"), cmd)
    end
    -- merge's output may be one of its shards: it holds them whole
    local r = h.run("merge b.json " .. fx("slower.json") .. " -o b.json -q", { cwd = dir })
    assert.equal(0, r.code, r.stderr)
  end)

  describe("the regression gate", function()
    it("exits with code 7 when a configuration is significantly slower by more than the limit",
      function()
      local r = compare(fx("base.json") .. " " .. fx("slower.json") .. " --fail-above 5")
      assert.equal(7, r.code)
      assert.matches(
        "wlrun: compare: 1 configuration significantly slower by more than 5%%: variant=tiled, "
        .. "M=1024, N=1024 %(%+%d+%.%d%%%)\n", r.stderr)
      assert.matches(
        "\nGate %-%-fail%-above 5%%: FAILED: 1 configuration significantly slower by more than "
        .. "5%%:\n  variant=tiled, M=1024, N=1024: %+", r.stdout)
      local doc = json_of(compare(fx("base.json") .. " " .. fx("slower.json")
        .. " --fail-above 5% --format json").stdout)
      assert.is_true(doc.gate.failed)
      assert.equal(0.05, doc.gate.fail_above)
      assert.equal(1024, doc.gate.configurations[1].params.M)
    end)

    it("exits with code 0 below the limit and on the same run", function()
      local r = compare(fx("base.json") .. " " .. fx("slower.json") .. " --fail-above 15")
      assert.equal(0, r.code, r.stderr)
      assert.matches("\nGate %-%-fail%-above 15%%: passed", r.stdout)
      assert.equal(0, compare(fx("base.json") .. " " .. fx("rerun.json") .. " --fail-above 1").code)
      -- a faster run passes any gate
      assert.equal(0, compare(fx("slower.json") .. " " .. fx("base.json")
        .. " --fail-above 0").code)
    end)

    it("does not count a slowdown within the noise threshold", function()
      local r = compare(fx("base.json") .. " " .. fx("slower.json") .. " --fail-above 5 --noise 20")
      assert.equal(0, r.code, r.stderr)
      assert.matches("  same\n", r.stdout)
    end)
  end)

  it("never passes a gate that compared nothing: exit 2, saying so", function()
    local r = compare(fx("sweep_naive.json") .. " " .. fx("sweep_tiled.json") .. " --fail-above 5")
    assert.equal(2, r.code, r.stderr)
    assert.matches("Gate %-%-fail%-above 5%%: NOT PASSED: no configuration was compared", r.stdout)
    assert.matches("compare: %-%-fail%-above 5%%: no configuration was compared", r.stderr)
    -- its JSON says the same: not passed, with nothing compared
    r = compare(fx("sweep_naive.json") .. " " .. fx("sweep_tiled.json")
      .. " --fail-above 5 --format json")
    assert.equal(2, r.code, r.stderr)
    local gate = json.decode(r.stdout).gate
    assert.same({ true, 0, 0 }, { gate.failed, gate.compared, #gate.configurations })
    -- no gate: a report
    assert.equal(0, compare(fx("sweep_naive.json") .. " " .. fx("sweep_tiled.json")).code)
  end)

  it("matches configurations on chosen parameters: naive against tiled", function()
    local r = compare(fx("sweep_naive.json") .. " " .. fx("sweep_tiled.json"))
    assert.equal(0, r.code, r.stderr)
    assert.matches("No configuration was compared%.", r.stdout)
    assert.matches("Only in BASE %(5%)", r.stdout)
    for _, opt in ipairs { "--match M,N,K", "--ignore variant" } do
      r = compare(fx("sweep_naive.json") .. " " .. fx("sweep_tiled.json") .. " " .. opt)
      assert.equal(0, r.code, r.stderr)
      assert.matches("  Not matched on: variant %(BASE naive; NEW tiled%)\n", r.stdout)
      assert.matches("\n   M     N     K      BASE       NEW  NEW/BASE", r.stdout)
      assert.equal(5, #lines_matching(r.stdout, "  faster$"))
      assert.matches("\nVerdicts: 5 faster\n", r.stdout)
    end
  end)

  describe("errors", function()
    it("a missing or unreadable file: exit 9, naming it", function()
      local r = compare(fx("base.json") .. " " .. fx("nope.json"))
      assert.equal(9, r.code)
      assert.equal("wlrun: compare: cannot read '" .. F
        .. "nope.json': No such file or directory\n", r.stderr)
      assert.equal("", r.stdout)
      r = compare(fx("base.json") .. " " .. q(F))
      assert.equal(9, r.code)
      assert.matches("cannot read .*: it is a directory, not a file", r.stderr)
    end)

    it("malformed JSON or another kind of document: exit 2, naming it", function()
      local r = compare(fx("base.json") .. " " .. fx("malformed.json"))
      assert.equal(2, r.code)
      assert.equal("wlrun: compare: '" .. F
        .. "malformed.json' is not valid JSON: line 37, column 12: premature end of input near "
        .. "'\"max_t'\n", r.stderr)
      r = compare(fx("not_results.json") .. " " .. fx("base.json"))
      assert.equal(2, r.code)
      assert.matches(
        "not_results%.json' is not a wlrun%-results document %(its schema is 'something%-else'%)",
        r.stderr)
      local dir = h.tmpdir()
      h.write(dir .. "/v2.json", '{"schema": "wlrun-results", "version": 2, "configurations": []}')
      h.write(dir .. "/bad.json",
        '{"schema": "wlrun-results", "version": 1, "configurations": [{"samples": ["x"]}]}')
      r = compare(fx("base.json") .. " " .. q(dir .. "/v2.json"))
      assert.equal(2, r.code)
      assert.matches("wlrun%-results version 2 is not supported", r.stderr)
      r = compare(fx("base.json") .. " " .. q(dir .. "/bad.json"))
      assert.equal(2, r.code)
      assert.matches("is malformed: configurations%[1%]%.samples%[1%] is not a finite number",
        r.stderr)
      os.execute("rm -rf " .. q(dir))
    end)

    it("bad command lines: exit 2", function()
      local cases = {
        { fx("base.json"), "expected BASE%.json and NEW%.json, got 1 file" },
        { fx("base.json") .. " " .. fx("base.json") .. " --frob", "unknown option '%-%-frob'" },
        { fx("base.json") .. " " .. fx("base.json") .. " --noise lots",
          "%-%-noise: expected a percentage" },
        { fx("base.json") .. " " .. fx("base.json") .. " --fail-above",
          "option %-%-fail%-above needs a value" },
        { fx("base.json") .. " " .. fx("base.json") .. " --format html",
          "%-%-format: expected table, markdown or json" },
        { fx("base.json") .. " " .. fx("base.json") .. " -o out.csv",
          "cannot tell the output format of 'out%.csv'" },
        { fx("base.json") .. " " .. fx("base.json") .. " --match Q",
          "%-%-match: no configuration has a parameter 'Q' %(parameters: M, N, variant%)" },
        { fx("base.json") .. " " .. fx("base.json") .. " --match M --ignore N",
          "cannot be used together" },
        { fx("base.json") .. " " .. fx("base.json") .. " --match M,N",
          "configurations #1 and #3 of .* have the same parameters to match on %(M=1024, "
          .. "N=1024%)" },
      }
      for _, c in ipairs(cases) do
        local r = compare(c[1])
        assert.equal(2, r.code, c[1])
        assert.matches(c[2], r.stderr)
      end
    end)

    it("a file -o cannot write: exit 9", function()
      local r = compare(fx("base.json") .. " " .. fx("rerun.json") .. " -o /nonexistent/dir/c.json")
      assert.equal(9, r.code)
      assert.matches("cannot write '/nonexistent/dir/c%.json': No such file or directory", r.stderr)
    end)
  end)

  it("prints its help", function()
    local r = compare("--help")
    assert.equal(0, r.code)
    assert.matches("^Usage: wlrun compare BASE%.json NEW%.json %[options%]\n", r.stdout)
  end)
end)

---------------------------------------------------------------------------------------------

local has_gnuplot = os.execute("command -v gnuplot >/dev/null 2>&1") and true or false

-- a spec that needs gnuplot: pending, by name, where it is not installed
local function gnuplot_it(name, fn)
  local busted = require "busted"
  if has_gnuplot then
    busted.it("[gnuplot] " .. name, fn)
  else
    busted.pending("[gnuplot] " .. name
      .. " -- skipped: gnuplot is not installed (apt-get install gnuplot-nox)")
  end
end

local function is_svg(path)
  local s = h.read(path)
  return s:find("<svg", 1, true) ~= nil and s:find("</svg>%s*$") ~= nil
end

local function is_png(path)
  return h.read(path):sub(1, 8) == "\137PNG\r\n\26\n"
end

describe("wlrun plot", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. q(dir)) end)

  gnuplot_it("plots a sweep as SVG and PNG, log2 x axis for powers of two, a line per variant",
    function()
    local r = h.run("plot " .. fx("sweep.json") .. " -o " .. q(dir .. "/s.svg") .. " --keep "
      .. q(dir .. "/gp"))
    assert.equal(0, r.code, r.stderr)
    assert.is_true(is_svg(dir .. "/s.svg"))
    local gp = h.read(dir .. "/gp/plot.gp")
    assert.matches("\nset terminal svg ", gp)
    assert.matches("\nset logscale x 2\n", gp)
    assert.matches("\nset logscale y 10\n", gp)
    assert.matches('\nset xlabel "M = N = K %(log2 scale%)"\n', gp)
    assert.matches('\nset ylabel "median time per launch %(ms%) — bars: p10%.%.p90"\n', gp)
    assert.matches('title "variant=naive"', gp)
    assert.matches('title "variant=tiled"', gp)
    assert.equal(5, select(2, h.read(dir .. "/gp/line1.dat"):gsub("\n", "")))
    r = h.run("plot " .. fx("sweep.json") .. " -o " .. q(dir .. "/s.png") .. " --y flop_per_s")
    assert.equal(0, r.code, r.stderr)
    assert.is_true(is_png(dir .. "/s.png"))
  end)

  gnuplot_it("plots the distribution of a configuration's samples", function()
    local r = h.run("plot " .. fx("base.json") .. " --config 3 -o " .. q(dir .. "/h.png")
      .. " --keep " .. q(dir .. "/gp"))
    assert.equal(0, r.code, r.stderr)
    assert.is_true(is_png(dir .. "/h.png"))
    local gp = h.read(dir .. "/gp/plot.gp")
    assert.matches("#3 %(variant=tiled, M=1024, N=1024%), 20 samples", gp)
    assert.matches("with boxes", gp)
    assert.matches('title "median 431%.2 µs"', gp)
    local total = 0
    for count in h.read(dir .. "/gp/hist.dat"):gmatch("%S+ (%d+)\n") do
      total = total + tonumber(count) end
    assert.equal(20, total)
  end)

  gnuplot_it("plots the ratios of a comparison", function()
    local cmp = dir .. "/cmp.json"
    assert.equal(0, compare(fx("base.json") .. " " .. fx("slower.json") .. " -o " .. q(cmp)).code)
    local r = h.run("plot " .. q(cmp) .. " -o " .. q(dir .. "/r.svg") .. " --keep "
      .. q(dir .. "/gp"))
    assert.equal(0, r.code, r.stderr)
    assert.is_true(is_svg(dir .. "/r.svg"))
    local gp = h.read(dir .. "/gp/plot.gp")
    assert.matches('title "slower %(1%)"', gp)
    assert.matches('title "same %(1%)"', gp)
    assert.matches('title "noise threshold ±2%%"', gp)
    assert.matches('"variant=tiled, M=1024, N=1024" 1', gp)
    r = h.run("plot --kind ratio " .. q(cmp) .. " -o " .. q(dir .. "/r.png"))
    assert.equal(0, r.code, r.stderr)
    assert.is_true(is_png(dir .. "/r.png"))
  end)

  it("refuses what it cannot plot: exit 2 (before looking for gnuplot)", function()
    local cases = {
      { fx("sweep.json"), "no image given" },
      { fx("sweep.json") .. " -o x.pdf", "cannot tell the image format of 'x%.pdf'" },
      { fx("sweep.json") .. " -o x.svg --y nope",
        "no measured configuration has 'nope' %(available: median, " },
      { fx("sweep.json") .. " -o x.svg --x variant",
        "%-%-x variant: its values are not all numbers" },
      { fx("sweep.json") .. " -o x.svg --kind ratio", "%-%-kind ratio plots a comparison" },
      { fx("sweep.json") .. " -o x.svg --config 99",
        "%-%-config 99: no configuration has this index" },
      { fx("malformed.json") .. " -o x.svg", "is not valid JSON" },
    }
    for _, c in ipairs(cases) do
      local r = h.run("plot " .. c[1], { cwd = dir })
      assert.equal(2, r.code, c[1] .. ": " .. r.stderr)
      assert.matches(c[2], r.stderr)
    end
    assert.equal(9, h.run("plot " .. fx("nope.json") .. " -o x.svg", { cwd = dir }).code)
  end)

  it("says how to install gnuplot when it is missing: exit 9", function()
    local r = h.run("plot " .. fx("sweep.json") .. " -o " .. q(dir .. "/s.svg"),
      { env = "WLRUN_GNUPLOT=/nonexistent/gnuplot" })
    assert.equal(9, r.code)
    assert.matches("gnuplot is not installed .*apt%-get install gnuplot%-nox", r.stderr)
    assert.is_nil(io.open(dir .. "/s.svg"))
  end)
end)

---------------------------------------------------------------------------------------------

describe("wlrun export", function()
  it("writes Google Benchmark's JSON: context, iterations and aggregates", function()
    local r = h.run("export " .. fx("base.json") .. " --format gbench")
    assert.equal(0, r.code, r.stderr)
    local doc = json_of(r.stdout)
    assert.equal("2026-11-29T22:31:07Z", doc.context.date)
    assert.equal("NVIDIA H200", doc.context.device)
    assert.equal("release", doc.context.library_build_type)
    local by = {}
    for _, b in ipairs(doc.benchmarks) do by[b.name] = b end
    local name = "gemm_sweep/variant:tiled/M:1024/N:1024"
    local b = by[name]
    assert.equal(name, b.run_name)
    assert.equal("iteration", b.run_type)
    assert.equal(20, b.iterations)
    assert.equal("ns", b.time_unit)
    assert.near(431162.5, b.real_time, 1e-6)
    assert.equal(b.real_time, b.cpu_time)
    assert.equal(2, b.per_family_instance_index)
    assert.near(19922731202272.926, b.flop_per_second, 1)
    assert.near(87551064853.73845, b.bytes_per_second, 1)
    assert.equal("gemm_tiled", b.label)
    for _, agg in ipairs { { "mean", 432101.0 }, { "median", 431162.5 },
      { "stddev", 3967.0721803630595 } } do
      local a = by[name .. "_" .. agg[1]]
      assert.equal("aggregate", a.run_type)
      assert.equal(agg[1], a.aggregate_name)
      assert.equal("time", a.aggregate_unit)
      assert.equal(name, a.run_name)
      assert.equal(20, a.repetitions)
      assert.near(agg[2], a.real_time, 1e-6)
    end
    assert.equal("percentage", by[name .. "_cv"].aggregate_unit)
    assert.near(0.0091808909, by[name .. "_cv"].real_time, 1e-9)
    local failed = by["gemm_sweep/variant:naive/M:1024/N:1024"]
    assert.is_true(failed.error_occurred)
    assert.matches("^%[cuda%] launching gemm_naive", failed.error_message)
    assert.equal("skipped: naive kernel limited to M <= 2048",
      by["gemm_sweep/variant:naive/M:4096/N:4096"].error_message)
    -- what Google Benchmark's compare.py reads of each entry
    for _, e in ipairs(doc.benchmarks) do
      for _, k in ipairs { "name", "run_name", "run_type", "repetitions", "threads", "iterations",
        "real_time",
                           "cpu_time", "time_unit" } do
        assert.is_not_nil(e[k], k .. " of " .. e.name)
      end
    end
    assert.equal(2 + 2 * 5, #doc.benchmarks)
  end)

  it("writes one entry per sample with --samples, in the unit asked, to -o", function()
    local dir = h.tmpdir()
    local r = h.run("export " .. fx("base.json") .. " --samples --time-unit us -o "
      .. q(dir .. "/g.json"))
    assert.equal(0, r.code, r.stderr)
    assert.equal("", r.stdout)
    local doc = json_of(h.read(dir .. "/g.json"))
    local reps = {}
    for _, b in ipairs(doc.benchmarks) do
      if b.name == "gemm_sweep/variant:tiled/M:4096/N:4096" then reps[#reps + 1] = b end
    end
    assert.equal(20, #reps)
    assert.equal(0, reps[1].repetition_index)
    assert.equal(19, reps[20].repetition_index)
    assert.equal(20, reps[1].repetitions)
    assert.equal("us", reps[1].time_unit)
    assert.near(6530.223, reps[1].real_time, 1e-9)
    os.execute("rm -rf " .. q(dir))
  end)

  it("re-renders a recorded run in a printer's format", function()
    local r = h.run("export " .. fx("base.json") .. " --format csv")
    assert.equal(0, r.code, r.stderr)
    assert.matches("^index,variant,M,N,status,", r.stdout)
    r = h.run("export " .. fx("base.json") .. " --format table")
    assert.matches("^gemm_sweep on NVIDIA H200", r.stdout)
  end)

  it("refuses bad options and files", function()
    assert.equal(2, h.run("export " .. fx("base.json") .. " --format xml").code)
    assert.equal(2, h.run("export " .. fx("base.json") .. " --time-unit h").code)
    assert.equal(2, h.run("export " .. fx("base.json") .. " --format csv --samples").code)
    assert.equal(2, h.run("export").code)
    assert.equal(9, h.run("export " .. fx("nope.json")).code)
    assert.equal(2, h.run("export " .. fx("malformed.json")).code)
  end)
end)
