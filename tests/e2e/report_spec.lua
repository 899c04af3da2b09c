-- End-to-end: `wlrun report --html DIR` (docs/history.md, "A report as a web page") — the page
-- it writes and the directories it refuses, then the page in a real headless browser (Debian's
-- chromium-headless-shell, or chromium; tests/browser.lua): it loads from file:// with no
-- console message at all (an error, a blocked script or load would be one), its script ran, its
-- tables have the rows and its plots are there in the DOM the browser built, a #sort= link, a
-- mouse click on a header and Enter on one sort, a hostile results file stays text, and a
-- screenshot is a PNG of the window's size; in a 1400 px window, a history of 28 commits opens
-- with its summary linked to the charts, the charts take the content's width and no two of their
-- labels overlap. Without a browser those specs are pending, by name.
local h = require "helper"
local R = require "report_fixtures"
local F = require "history_fixtures"
local json = require "wlrun.json"

local q = h.quote

local function count(s, pattern) return select(2, s:gsub(pattern, "")) end

local function fixtures()
  local dir = h.tmpdir()
  h.write(dir .. "/a.json", R.sweep())
  h.write(dir .. "/b.json", R.sweep { slow = 1.2, seed = 40 })
  h.write(dir .. "/hostile.json", R.hostile())
  for i = 1, 10 do
    h.write(("%s/r%02d.json"):format(dir, i), F.document { started = F.time(i), configs = {
      { params = { n = 1 }, samples = F.samples(i >= 6 and 1.2e-3 or 1e-3, 20, 0.005, i) },
      { params = { n = 2 }, samples = F.samples(2e-3, 20, 0.005, 50 + i) } } })
    local r = h.run(("history add r%02d.json --db h.db --commit c%02d -q"):format(i, i),
      { cwd = dir })
    assert.equal(0, r.code, r.stderr)
  end
  return dir
end

local function report(args, dir) return h.run("report " .. args, { cwd = dir }) end

-- a made-up SHA of 40 hex digits, its first 8 different for each i
local function sha(i) return ("%08x%032x"):format(i * 2654435761 % 4294967296, i) end

-- a history of 28 commits with long names (not SHAs): n=1 turns 20 % slower at the 15th, n=2
-- 25 % faster at the 10th, n=3 stays flat; and one of n=3 alone
local function long_history()
  local dir = h.tmpdir()
  for i = 1, 28 do
    h.write(("%s/r%02d.json"):format(dir, i), F.document { started = F.time(i), configs = {
      { params = { n = 1 }, samples = F.samples(i >= 15 and 1.2e-3 or 1e-3, 20, 0.005, i) },
      { params = { n = 2 }, samples = F.samples(i >= 10 and 1.5e-3 or 2e-3, 20, 0.005, 100 + i) },
      { params = { n = 3 }, samples = F.samples(3e-3, 20, 0.005, 200 + i) } } })
    local r = h.run(
      ("history add r%02d.json --db long.db --commit release-candidate-build-%02d -q"):format(i, i),
      { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    h.write(("%s/f%02d.json"):format(dir, i), F.document { started = F.time(i), configs = {
      { params = { n = 3 }, samples = F.samples(3e-3, 20, 0.005, 200 + i) } } })
    r = h.run(("history add f%02d.json --db flat.db --commit %s -q"):format(i, sha(i)),
      { cwd = dir })
    assert.equal(0, r.code, r.stderr)
  end
  return dir
end

local function names(dir)
  local p = io.popen("ls -A " .. q(dir))
  local list = {}
  for l in p:lines() do list[#list + 1] = l end
  p:close()
  return table.concat(list, " ")
end

describe("wlrun report", function()
  local dir
  setup(function() dir = fixtures() end)

  it("writes DIR/index.html, made with the directories above it", function()
    local r = report("--html out/page a.json b.json --db h.db", dir)
    assert.equal(0, r.code, r.stderr)
    assert.equal(
      "wrote 'out/page/index.html': 2 results files, 1 comparison, the history of 2 "
      .. "configurations\n", r.stdout)
    assert.equal("", r.stderr)
    assert.equal("index.html", names(dir .. "/out/page"))
    local text = h.read(dir .. "/out/page/index.html")
    assert.matches(
      '^<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf%-8">\n<meta '
      .. 'name="generator" content="wlrun report ', text)
    assert.equal(1, count(text, '<section id="cmp%-2">'))
    assert.equal(2, count(text, 'class="trend"'))
  end)

  it("writes over a previous report, and nothing else", function()
    assert.equal(0, report("--html again a.json -q", dir).code)
    local r = report("--html again/ b.json", dir)
    assert.equal(0, r.code, r.stderr)
    assert.equal("wrote 'again/index.html': 1 results file\n", r.stdout)
    assert.truthy(h.read(dir .. "/again/index.html"):find("b.json", 1, true))

    h.write(dir .. "/again/notes.txt", "mine")
    r = report("--html again a.json", dir)
    assert.equal(2, r.code)
    assert.equal(
      "wlrun: report: --html 'again' holds other files (notes.txt): give a new or empty "
      .. "directory, or one of an earlier report\n", r.stderr)
    assert.truthy(h.read(dir .. "/again/index.html"):find("b.json", 1, true),
      "the previous page was kept")

    os.execute("mkdir " .. q(dir .. "/site") .. " && echo '<html>mine</html>' >"
      .. q(dir .. "/site/index.html"))
    r = report("--html site a.json", dir)
    assert.equal(2, r.code)
    assert.equal(
      "wlrun: report: --html 'site': its index.html was not made by wlrun report; it is left "
      .. "as it is\n", r.stderr)
    assert.equal("<html>mine</html>\n", h.read(dir .. "/site/index.html"))
  end)

  it("reads everything before it touches DIR", function()
    local r = report("--html fresh a.json missing.json", dir)
    assert.equal(9, r.code)
    assert.matches("^wlrun: report: cannot read 'missing%.json'", r.stderr)
    assert.equal("", names(dir):match("fresh") or "", "the directory was not made")
  end)

  it("shows a parameter named like a column (n) as param.n, in the table, Markdown and the page",
    function()
    local dir = fixtures()
    for _, f in ipairs { "table", "markdown" } do
      -- a run's table, and a comparison's (its own n: the samples compared)
      for _, args in ipairs { "export r01.json", "compare r01.json r06.json" } do
        local r = h.run(args .. " --format " .. f, { cwd = dir })
        assert.equal(0, r.code, r.stderr)
        assert.matches("param%.n", r.stdout)
        -- one n column left: the count
        assert.equal(1, count(r.stdout:match("[^\n]*param%.n[^\n]*"), "[ |]n[ |]"), r.stdout)
      end
    end
    local r = report("--html page r01.json", dir)
    assert.equal(0, r.code, r.stderr)
    assert.matches(">param%.n<", h.read(dir .. "/page/index.html"))
    r = report("--html pair r01.json r06.json", dir)
    assert.equal(0, r.code, r.stderr)
    local page = h.read(dir .. "/pair/index.html")
    assert.matches(">param%.n<", page)
  end)

  it("prints its help, and wants --html and something to show", function()
    local r = report("--help", dir)
    assert.equal(0, r.code)
    assert.matches("^Usage: wlrun report %-%-html DIR %[RESULTS%.json%.%.%.%] %[%-%-db FILE%]",
      r.stdout)
    assert.equal(2, report("a.json", dir).code)
    r = report("--html x", dir)
    assert.equal(2, r.code)
    assert.equal(
      "wlrun: report: expected results files, --db FILE, or both (wlrun report --help)\n", r.stderr)
    r = report("--html x a.json --scenario spin", dir)
    assert.equal("wlrun: report: --scenario and --device select the history: they need --db\n",
      r.stderr)
  end)
end)

---------------------------------------------------------------------------------------------
-- in a real browser

local browser = require "browser"

local function browser_it(name, fn)
  if browser.path then
    it("[browser] " .. name, fn)
  else
    pending("[browser] " .. name
      .. " -- skipped: no headless browser (apt-get install chromium-headless-shell)")
  end
end

-- the first cells of a table's body rows, in the order the DOM has them
local function first_cells(dom, id)
  local body = dom:match('<table class="sortable" id="' .. id .. '"[^>]*>.-<tbody>(.-)</tbody>')
  assert.truthy(body, "no table " .. id)
  local list = {}
  for row in body:gmatch("<tr[^>]*>(.-)</tr>") do
    list[#list + 1] = row:match("<td[^>]*>(.-)</td>") end
  return list
end

describe("wlrun report's page in a browser", function()
  local dir
  setup(function()
    dir = fixtures()
    assert.equal(0, report("--html page a.json b.json --db h.db -q", dir).code)
    assert.equal(0, report("--html bad hostile.json a.json -q", dir).code)
  end)

  browser_it("loads from file:// with no console message, and its script ran", function()
    local dom, console = browser.dump(dir .. "/page/index.html")
    assert.same({}, console)
    -- the summary's table too
    assert.matches('^<!DOCTYPE html>\n<html lang="en" data%-sortable="8">', dom)
    assert.equal(count(dom, "<th "), count(dom, '<th [^>]*tabindex="0"'), "every header sorts")
  end)

  browser_it("has the tables' rows and the plots in its DOM", function()
    local dom = browser.dump(dir .. "/page/index.html")
    assert.same({ "1", "2", "3", "4", "5" }, first_cells(dom, "doc%-1%-table"))
    assert.same({ "1", "2", "3", "4" }, first_cells(dom, "doc%-1%-dist"))
    assert.same({ "naive", "naive", "tiled", "tiled" }, first_cells(dom, "cmp%-2%-table"))
    assert.equal(10, #first_cells(dom, "history%-1%-table"))
    assert.equal(8, count(dom, '<svg xmlns="http://www.w3.org/2000/svg" class="dist"'))
    assert.equal(2, count(dom, '<svg xmlns="http://www.w3.org/2000/svg" class="trend"'))
    assert.equal(1, count(dom, '<line class="step"'))
    assert.equal(20, count(dom, '<circle class="point"'))
    assert.truthy(dom:find("Step at c06 (after c05)", 1, true))
  end)

  browser_it("sorts a table as a #sort= link says, and by the numbers behind the text", function()
    local dom, console = browser.dump(dir .. "/page/index.html", "#sort=doc-1-table.4.desc")
    assert.same({}, console)
    -- medians 800 us, 400 us, 200.5 us, 100 us (as text, "800" < "400" would not hold), the failure
    -- last
    assert.same({ "2", "4", "1", "3", "5" }, first_cells(dom, "doc%-1%-table"))
    assert.matches(
      '<th class="num" scope="col" tabindex="0" title="sort by this column" '
      .. 'aria%-sort="descending">median</th>', dom)
    dom = browser.dump(dir .. "/page/index.html", "#sort=doc-1-table.2")
    assert.same({ "1", "3", "2", "4", "5" }, first_cells(dom, "doc%-1%-table"))
  end)

  browser_it("sorts a table by a click on a header, the other way by a second, and by Enter",
    function()
    local page = browser.session(dir .. "/page/index.html")
    local ok, e = pcall(function()
      local function order() return page:eval([[Array.from(document.querySelectorAll("#doc-1-table tbody tr"),
        function (r) { return r.cells[0].textContent; }).join(" ")]]) end
      local median = "#doc-1-table thead th:nth-child(5)"
      assert.equal("1 2 3 4 5", order())
      page:click(median)
      assert.equal("3 1 4 2 5", order()) -- 100 us, 200.5 us, 400 us, 800 us, the failure
      assert.equal("#sort=doc-1-table.4", page:eval("location.hash"))
      page:click(median)
      assert.equal("2 4 1 3 5", order())
      assert.equal("descending",
        page:eval(("document.querySelector(%q).getAttribute('aria-sort')"):format(median)))
      -- by variant; ties keep the order they had
      page:key("#doc-1-table thead th:nth-child(2)", "Enter")
      assert.equal("2 1 5 4 3", order())
      assert.equal("#sort=doc-1-table.1", page:eval("location.hash"))
    end)
    page:close()
    if not ok then error(e, 0) end
  end)

  browser_it("shows a hostile results file as text: no element, no script, no load from it",
    function()
    local dom, console = browser.dump(dir .. "/bad/index.html")
    assert.same({}, console)
    assert.falsy(dom:find("<img", 1, true))
    assert.falsy(dom:find("<svg onload", 1, true))
    assert.equal(1, count(dom, "<script>"))
    assert.truthy(count(dom, "&lt;/script&gt;&lt;img src=x onerror=") >= 10)
  end)

  browser_it("writes a screenshot: a PNG of the window's size", function()
    local png = dir .. "/page.png"
    assert.same({}, browser.screenshot(dir .. "/page/index.html", png, "1200,1800"))
    local bytes = h.read(png)
    assert.equal("\137PNG\r\n\26\n", bytes:sub(1, 8))
    assert.equal("IHDR", bytes:sub(13, 16))
    local width, height = string.unpack(">I4I4", bytes, 17)
    assert.same({ 1200, 1800 }, { width, height }, "width and height")
    assert.is_true(#bytes > 20000, "a page with text and plots, not a blank one: " .. #bytes
      .. " bytes")
  end)
end)

-- fn(page) on the file under the DevTools protocol in a window of size "W,H"; the browser closed
-- after
local function on_page(file, size, fn)
  local page = browser.session(file, size)
  local ok, e = pcall(fn, page)
  page:close()
  if not ok then error(e, 0) end
end

-- what a script in the page measured, as JSON
local function measured(page, js) return json.decode(page:eval("JSON.stringify(" .. js .. ")")) end

describe("wlrun report's history in a 1400 px window", function()
  local dir
  setup(function()
    dir = long_history()
    assert.equal(0, report("--html wide r28.json --db long.db -q", dir).code)
    assert.equal(0, report("--html flat --db flat.db -q", dir).code)
  end)

  browser_it("opens with the summary, whose links lead to the charts", function()
    on_page(dir .. "/wide/index.html", "1400,1000", function(page)
      local m = measured(page, [[(function () {
        var first = document.querySelector("header").nextElementSibling;
        var links = Array.from(document.querySelectorAll("#summary a"), function (a) {
          var target = document.getElementById(a.getAttribute("href").slice(1));
          return { href: a.getAttribute("href"), text: a.textContent, row: a.closest("tr").textContent,
            chart: !!(target && target.querySelector("svg.trend")) };
        });
        return { first: first.id, links: links };
      })()]])
      assert.equal("summary", m.first)
      assert.equal(2, #m.links)
      assert.same({ "#history-1-chart", "#history-2-chart" }, { m.links[1].href, m.links[2].href })
      assert.same({ true, true }, { m.links[1].chart, m.links[2].chart })
      assert.matches(
        "^spin · NVIDIA H200 · n=1regression %(step%)release%-candidate%-build%-15 %(after "
        .. "release%-candidate%-build%-14%)%+20%.0%%0%.00%d$",
        m.links[1].row)
      assert.matches(
        "^spin · NVIDIA H200 · n=2improvement %(step%)release%-candidate%-build%-10 .*%-25%.0%%",
        m.links[2].row)
    end)
  end)

  browser_it("draws the charts as wide as the content, their labels apart", function()
    on_page(dir .. "/wide/index.html", "1400,1000", function(page)
      local m = measured(page, [[(function () {
        function box(el) { var r = el.getBoundingClientRect(); return { l: r.left, r: r.right, t: r.top, b: r.bottom }; }
        var main = document.querySelector("main");
        var style = getComputedStyle(main);
        var content = main.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        return { window: innerWidth, content: content, charts: Array.from(document.querySelectorAll("svg.trend"), function (svg) {
          return { width: svg.getBoundingClientRect().width, texts: Array.from(svg.querySelectorAll("text"), function (t) {
            return { box: box(t), text: t.lastChild.textContent, commit: t.classList.contains("commit") }; }),
            marks: Array.from(svg.querySelectorAll("circle.point, line.step, line.level, polyline.series"), box),
            steps: Array.from(svg.querySelectorAll("text.step-label"), function (t) { return { box: box(t), text: t.textContent }; }) };
        }) };
      })()]])
      assert.equal(1400, m.window)
      assert.is_true(m.content >= 1200, "content width " .. m.content)
      assert.equal(3, #m.charts)
      for k, c in ipairs(m.charts) do
        assert.is_true(c.width >= 0.9 * m.content,
          ("chart %d: %.0f px of %.0f"):format(k, c.width, m.content))
        local commits = {}
        for _, t in ipairs(c.texts) do
          if t.commit then commits[#commits + 1] = t.text end
          assert.is_true(t.box.r - t.box.l > 0, "a label with no box: " .. t.text)
        end
        assert.is_true(#commits >= 8, ("chart %d: %d commit labels"):format(k, #commits))
        assert.equal("rele…ld-28", commits[#commits], "the last commit is labelled")
        for _, l in ipairs(c.steps) do -- a step's label above the data, the levels, the lines
          for _, m in ipairs(c.marks) do
            assert.is_true(l.box.b <= m.t, ("chart %d: '%s' over the plot"):format(k, l.text))
          end
        end
        for i = 1, #c.texts do -- no two labels touch: the commits', the axes', the steps'
          for j = i + 1, #c.texts do
            local a, b = c.texts[i].box, c.texts[j].box
            local apart = a.r <= b.l or b.r <= a.l or a.b <= b.t or b.b <= a.t
            assert.is_true(apart, ("chart %d: '%s' and '%s' overlap"):format(k, c.texts[i].text,
              c.texts[j].text))
          end
        end
      end
    end)
  end)

  browser_it("says in one line that no lasting shift was found, and shows SHAs short", function()
    on_page(dir .. "/flat/index.html", "1400,1000", function(page)
      assert.equal("No lasting shift was found in 1 series of 'flat.db'.",
        page:eval(
          [[document.querySelector("header").nextElementSibling.querySelector("p").textContent]]))
      assert.equal(0, page:eval([[document.querySelectorAll("#summary a").length]]))
      local labels = measured(page, [[Array.from(document.querySelectorAll("svg.trend text.commit"), function (t) {
        return t.lastChild.textContent; })]])
      assert.equal(sha(28):sub(1, 7), labels[#labels])
      for _, l in ipairs(labels) do assert.equal(7, #l) end
    end)
  end)
end)
