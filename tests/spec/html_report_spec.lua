-- The page of `wlrun report --html` made in-process (wlrun.html.*): escaping, the tables' rows
-- and sort keys, the plots as SVG, the Content Security Policy's hashes, the page as a whole
-- with its tables in plain HTML, comparisons and history, and a hostile results document that
-- must stay text. The page in a real browser: tests/e2e/report_spec.lua.
local esc = require "wlrun.html.escape"
local h = require "helper"
local html_table = require "wlrun.html.table"
local load = require "wlrun.results.load"
local page = require "wlrun.html.page"
local plots = require "wlrun.html.plots"
local R = require "report_fixtures"
local sha256 = require "wlrun.html.sha256"

local function doc_of(text, name)
  local path = h.write(h.tmpdir() .. "/" .. (name or "r.json"), text)
  return load.load(path), path
end

local function count(s, pattern) return select(2, s:gsub(pattern, "")) end

-- the SHA-256 of a text by coreutils' sha256sum, in hex and (base64 of coreutils) in base64
local function shell_digest(text)
  local path = h.write(os.tmpname(), text)
  local p = io.popen("sha256sum " .. h.quote(path))
  local hex = p:read("a"):match("^(%x+)")
  p:close()
  h.write(path, (hex:gsub("%x%x", function(b) return string.char(tonumber(b, 16)) end)))
  p = io.popen("base64 -w0 " .. h.quote(path))
  local b64 = p:read("a")
  p:close()
  os.remove(path)
  return hex, b64
end

-- base64 of coreutils
local function shell_base64(text)
  local path = h.write(os.tmpname(), text)
  local p = io.popen("base64 -w0 " .. h.quote(path))
  local b64 = p:read("a")
  p:close()
  os.remove(path)
  return b64
end

describe("html escape", function()
  it("makes the five characters of markup references, in text and attributes alike", function()
    assert.equal("&lt;/script&gt;&lt;img src=x onerror=&quot;f(&#39;a&#39;)&quot;&gt; &amp;amp;",
      esc.text([[</script><img src=x onerror="f('a')"> &amp;]]))
  end)
  it("keeps UTF-8, replaces bytes that are not UTF-8 and control characters", function()
    assert.equal("µs · ✓", esc.text("µs · ✓"))
    assert.equal("a\u{FFFD}b\u{FFFD}", esc.text("a\255b\192"))
    assert.equal("a b c\td\ne", esc.text("a\0b\27c\td\ne"))
    assert.equal("", esc.text(nil))
    assert.equal("12", esc.text(12))
  end)
  it("makes ids of letters, digits, - and _ only", function()
    assert.equal("doc-1-x--y-", esc.id("doc-1-x\"<y>"))
  end)
end)

describe("html sha256", function()
  it("agrees with coreutils' sha256sum and base64", function()
    for _, text in ipairs { "", "abc", ("a"):rep(55), ("a"):rep(56), ("a"):rep(64), ("x"):rep(1000),
      page.STYLE } do
      local hex, b64 = shell_digest(text)
      assert.equal(hex, sha256.hex(text))
      assert.equal(b64, sha256.base64(sha256.digest(text)))
      assert.equal(shell_base64(text), sha256.base64(text))
    end
    assert.equal("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
      sha256.hex("abc"))
  end)
end)

describe("html table", function()
  it("writes rows with escaped cells, numbers to sort by and a reason across the rest", function()
    local html = html_table.render({ { title = "#", right = true }, { title = "name<" },
      { title = "median", right = true } }, {
      { cells = { "1", "<b>", "1.2 ms" }, keys = { 1, nil, 0.0012 } },
      { cells = { "2", "x" }, lead = 2, why = "[cuda] out of <memory>", class = "failed" },
    }, "t\"1")
    assert.matches('^<table class="sortable" id="t%-1"><thead><tr>', html)
    assert.truthy(html:find('<th class="num" scope="col">#</th><th scope="col">name&lt;</th>', 1,
      true))
    assert.truthy(
      html:find(
      '<tr><td class="num" data-v="1">1</td><td>&lt;b&gt;</td><td class="num" '
      .. 'data-v="0.0012">1.2 ms</td></tr>', 1, true))
    assert.truthy(
      html:find(
      '<tr class="failed"><td class="num">2</td><td>x</td><td class="why">[cuda] out of '
      .. '&lt;memory&gt;</td></tr>', 1, true))
    assert.equal(2, count(html, "<tr>")) -- the header's and the first
    assert.equal(1, count(html, '<tr class="failed">'))
  end)
end)

describe("html plots", function()
  it("draws a configuration's samples, box, whiskers and median on its own axis", function()
    local doc = doc_of(R.sweep { count = 25 })
    local svg = plots.distribution(doc.configurations[1])
    assert.matches('^<svg xmlns="http://www.w3.org/2000/svg" class="dist"', svg)
    assert.equal(25, count(svg, "<circle "))
    assert.equal(1, count(svg, '<rect class="box"'))
    assert.equal(1, count(svg, '<line class="median"'))
    assert.equal(3, count(svg, '<line class="whisker"'))
    assert.matches(">us</text>", svg)
    assert.is_nil(plots.distribution(doc.configurations[5])) -- failed: nothing to draw
  end)
  it("draws at most MAX_POINTS samples, the box from all of them", function()
    local xs = {}
    for i = 1, 5000 do xs[i] = 1e-3 + i * 1e-9 end
    local svg = plots.distribution { samples = xs, stats = require("wlrun").stats.summary(xs) }
    assert.equal(plots.MAX_POINTS, count(svg, "<circle "))
  end)
  it("draws a history series with its levels, the step's first commit marked, and escapes commits",
    function()
    local points = {}
    for i = 1, 8 do
      points[i] = { commit = i == 5 and "<b>x" or ("c%d"):format(i), dirty = false, time = "t",
        rows = { {} },
        median = i >= 5 and 1.1e-3 or 1e-3 }
    end
    local found = { segments = { { first = 1, last = 4, median = 1e-3 },
      { first = 5, last = 8, median = 1.1e-3 } },
      steps = { { index = 5, first = points[5], last_before = points[4], change = 0.1,
        p = 0.001 } }, drifts = {} }
    local svg = plots.trend(points, found, "spin · n=1")
    assert.matches('^<svg xmlns="http://www.w3.org/2000/svg" class="trend"', svg)
    assert.equal(8, count(svg, '<circle class="point"'))
    assert.equal(2, count(svg, '<line class="level"'))
    assert.equal(1, count(svg, '<line class="step"'))
    assert.truthy(svg:find("&lt;b&gt;x +10.0%", 1, true))
    assert.falsy(svg:find("<b>", 1, true))
  end)
  it(
    "labels commits short (a SHA's 7 digits, a long name's head and tail), thinned out, the "
    .. "last one kept", function()
    assert.equal("0123abc", plots.short { commit = "0123abcdef0123abcdef0123abcdef0123abcdef" })
    assert.equal("0123abc+", plots.short { commit = "0123abcdef", dirty = true })
    assert.equal("v1.2", plots.short { commit = "v1.2" })
    assert.equal("rele…ld-07", plots.short { commit = "release-candidate-build-07" })
    assert.equal("héhé…ééééé", plots.short { commit = "héhéhéhééééééé" })
    local points = {}
    for i = 1, 40 do
      points[i] = { commit = ("release-candidate-build-%02d"):format(i), time = "t", rows = { {} },
        median = i > 30 and 2e-3 or 1e-3 }
    end
    local found = { segments = {}, drifts = {}, steps = {
      { index = 31, first = points[31], last_before = points[30], change = 1, p = 0.001 },
      { index = 32, first = points[32], last_before = points[31], change = 0.01, p = 0.001 } } }
    local svg = plots.trend(points, found, "x")
    -- two rows of step labels above the plot: 260 + 2 x 12 + 4
    assert.matches(
      '^<svg xmlns="http://www.w3.org/2000/svg" class="trend" width="100%%" viewBox="0 0 1000 288"',
      svg)
    local xs = {}
    for x,
      label in svg:gmatch(
      '<text class="tick commit" x="([%d.]+)"[^>]*><title>[^<]*</title>([^<]*)</text>') do
      xs[#xs + 1] = { tonumber(x), label }
    end
    assert.is_true(#xs >= 8 and #xs < 40, #xs .. " labels")
    assert.equal("rele…ld-40", xs[#xs][2])
    for i = 2, #xs do
      assert.is_true(xs[i][1] - xs[i - 1][1] >= 10 * plots.CHAR_WIDTH + plots.LABEL_GAP,
        "labels " .. i - 1 .. " and " .. i)
    end
    local rows = {}
    for y in svg:gmatch('<text class="step%-label"[^>]* y="([%d.]+)"') do rows[#rows + 1] = y end
    assert.same({ "32", "44" }, rows) -- the second step's label below the first's, not over it
    -- the labels in a band of their own: the data, the levels and the step lines below it
    for cy in svg:gmatch('<circle class="point"[^>]* cy="([%d.]+)"') do
      assert.is_true(tonumber(cy) - 3 > 44 + 4, "a point at " .. cy .. " under the labels")
    end
    for y1 in svg:gmatch('<line class="step"[^>]* y1="([%d.]+)"') do
      assert.is_true(tonumber(y1) > 44 + 4, "a step line from " .. y1 .. " across the labels")
    end
  end)
end)

describe("html page", function()
  it("allows its own script and style by their SHA-256 and nothing else", function()
    local text = page.render { title = "t", version = "0", body = "" }
    local csp = text:match('<meta http%-equiv="Content%-Security%-Policy" content="([^"]*)">')
    local script = text:match("<script>(.-)</script>")
    local style = text:match("<style>(.-)</style>")
    assert.equal(require "wlrun.html.sort_script", script)
    local _, sb = shell_digest(script)
    local _, tb = shell_digest(style)
    assert.equal(
      ("default-src 'none'; script-src 'sha256-%s'; style-src 'sha256-%s'; img-src data:; "
      .. "base-uri 'none'; form-action 'none'"):format(sb, tb), csp)
  end)

  it("holds each document's table as plain HTML, its plots, warnings and provenance", function()
    local doc, path = doc_of(R.sweep(), "sweep.json")
    doc.command_line = { "wlrun", "bench.lua" }
    doc.future_field = { reproducible = true } -- what a newer wlrun may add
    local text = require("wlrun.html.report").render { documents = { { doc = doc, path = path } } }
    assert.matches("^<!DOCTYPE html>\n", text)
    local sweep = text:match('<table class="sortable" id="doc%-1%-table">(.-)</table>')
    assert.truthy(sweep, "the sweep table")
    assert.equal(6, count(sweep, "<tr"))
    assert.truthy(sweep:find('<th class="num" scope="col">median</th>', 1, true))
    assert.truthy(sweep:find('<td>naive</td><td class="num" data-v="1024">1024</td><td>ok</td>', 1,
      true))
    assert.truthy(sweep:find('<td class="why" colspan="', 1, true))
    assert.equal(4, count(text, '<svg xmlns="http://www.w3.org/2000/svg" class="dist"'))
    assert.truthy(
      text:find("<dt>command_line</dt><dd><code>wlrun</code> <code>bench.lua</code></dd>", 1, true))
    assert.truthy(
      text:find(
      "<dt>future_field</dt><dd><dl class=\"fields\"><dt>reproducible</dt><dd>true</dd></dl></dd>",
      1, true))
    assert.equal(1, count(text, "<script"))
  end)

  it("shows a training loop's summary, its phase names escaped", function()
    local wl = require "wlrun"
    local xs = { 1e-3, 1.1e-3, 0.9e-3, 1e-3 }
    local doc = { scenario = { name = "train" },
      configurations = { { index = 1, params = { batch = 64 }, status = "ok",
      mode = "loop", samples = xs, stats = wl.stats.summary(xs),
        metrics = { samples_per_s = 64000 },
      loop = { batch_size = 64, data_stats = wl.stats.summary { 1e-4, 1e-4 }, throughput = 64000,
        total_time = 4e-3,
        data_ratio = 0.1, phases = { { name = "<fwd>", mean = 5e-4, median = 5e-4, share = 0.5,
          top = true } },
        outside = { mean = 4e-4, share = 0.4 } } } } }
    local text = require("wlrun.html.report").render {
      documents = { { doc = doc, path = "t.json" } } }
    assert.truthy(
      text:find(
      "<h3>Training loops</h3><pre>#1 train: 4 iterations of 64 samples: 64000.0 samples/s", 1,
      true))
    assert.truthy(text:find("    &lt;fwd&gt;  ", 1, true))
    assert.falsy(text:find("<fwd>", 1, true))
  end)

  it("compares each document after the first with the first, as wlrun compare does", function()
    local a, pa = doc_of(R.sweep(), "a.json")
    local b, pb = doc_of(R.sweep { slow = 1.2, seed = 40 }, "b.json")
    local text, holds = require("wlrun.html.report").render {
      documents = { { doc = a, path = pa }, { doc = b, path = pb } } }
    assert.equal(1, holds.comparisons)
    local cmp = text:match('<section id="cmp%-2">(.-)</section>')
    assert.truthy(cmp)
    assert.equal(4, count(cmp, '<tr class="slower">'))
    assert.truthy(cmp:find("Verdicts: 4 slower.", 1, true))
    assert.truthy(cmp:find("Not compared (1, no measurement in a run)", 1, true))
  end)

  it("keeps every text of a hostile document text", function()
    local doc, path = doc_of(R.hostile(), "hostile.json")
    local other = doc_of(R.sweep(), "sweep.json")
    local text = require("wlrun.html.report").render {
      documents = { { doc = doc, path = path }, { doc = other, path = "s.json" } } }
    assert.equal(1, count(text, "<script"))
    assert.equal(1, count(text, "</script>"))
    assert.falsy(text:find("<img", 1, true))
    assert.falsy(text:find("<svg onload", 1, true))
    assert.falsy(text:lower():find("onerror=\"", 1, true))
    local shown = esc.text(R.HOSTILE)
    -- the scenario, a parameter's name and value, the device, a warning and its hint, the
    -- failure, the skip, the kernel, the command line, an unknown field: all there, as text
    assert.truthy(count(text, shown:gsub("%p", "%%%0")) >= 15, "the hostile text shown as text")
  end)
end)

describe("html history", function()
  it("draws each configuration's median by commit and names the step blame finds", function()
    local dir = h.tmpdir()
    local F = require "history_fixtures"
    for i = 1, 12 do
      h.write(("%s/r%02d.json"):format(dir, i), F.document { started = F.time(i), configs = {
        { params = { n = 1 }, samples = F.samples(i >= 7 and 1.2e-3 or 1e-3, 20, 0.005, i) } } })
      local r = h.run(("history add r%02d.json --db h.db --commit c%02d -q"):format(i, i),
        { cwd = dir })
      assert.equal(0, r.code, r.stderr)
    end
    local db <close> = require("wlrun.history.store").open_reader(dir .. "/h.db")
    local text, holds = require("wlrun.html.report").render { documents = {}, db = db,
      db_path = "h.db" }
    assert.equal(1, holds.series)
    assert.equal(1, count(text, 'class="trend"'))
    assert.equal(12, count(text, '<circle class="point"'))
    assert.truthy(text:find("Step at c07 (after c06)", 1, true))
    assert.truthy(text:find("c07 +20.0%", 1, true) or text:find("c07 +19.", 1, true))
    assert.equal(12,
      count(text:match('<table class="sortable" id="history%-1%-table">(.-)</table>'), "<tr>") - 1)
    -- the page opens with the summary: the step, linked to its chart
    local summary = text:match('</header>\n<section id="summary">(.-)</section>')
    assert.truthy(summary, "the summary first")
    assert.truthy(summary:find('<a href="#history-1-chart">spin · NVIDIA H200 · n=1</a>', 1, true))
    assert.truthy(summary:find("regression (step)", 1, true))
    assert.truthy(summary:find("c07 (after c06)", 1, true))
    assert.truthy(text:find('<div class="chart" id="history-1-chart">', 1, true))
  end)
  it(
    "sums up regressions first, the largest first, then improvements, steps and drifts, "
    .. "each linked", function()
    local function c(name) return { commit = name, dirty = false } end
    local list = {
      { name = "a · <dev> · n=1", found = { steps = {
        { first = c("s2"), last_before = c("s1"), change = -0.2, p = 0.001 } },
        drifts = { { from = c("d1"), to = c("d9"), change = 0.05, p = 0.004 } } } },
      { name = "b", found = { steps = { { first = c("t5"), last_before = c("t4"), change = 0.3,
        p = 0.002 } }, drifts = {} } },
      { name = "c", found = { steps = {}, drifts = {} } } }
    local html = require("wlrun.html.history").summary(list, "h.db", "history")
    assert.truthy(html:find("<p>2 regressions, 1 improvement in 3 series of &#39;h.db&#39;", 1,
      true), html)
    local rows = {}
    for row in html:gmatch("<tr[^>]*>(.-)</tr>") do
      rows[#rows + 1] = row:gsub("<[^>]+>", "|"):gsub("|+", "|") end
    assert.same({ "|configuration|found|commit|shift|p|",
      "|b|regression (step)|t5 (after t4)|+30.0%|0.002|",
      "|a · &lt;dev&gt; · n=1|regression (drift)|d1..d9|+5.0%|0.004|",
      "|a · &lt;dev&gt; · n=1|improvement (step)|s2 (after s1)|-20.0%|0.001|" }, rows)
    assert.same({ "history-2-chart", "history-1-chart", "history-1-chart" }, { html:match(
      '<a href="#([^"]+)">.-<a href="#([^"]+)">.-<a href="#([^"]+)">') })
  end)
  it("says in one line that there was no lasting shift", function()
    local html = require("wlrun.html.history").summary(
      { { found = { steps = {}, drifts = {} } }, { found = { steps = {}, drifts = {} } } },
      "h.db", "history")
    assert.equal(
      '<section id="summary">\n<h2>Summary</h2>\n<p class="good">No lasting shift was found in '
      .. '2 series of &#39;h.db&#39;.</p>\n</section>', html)
  end)
end)
