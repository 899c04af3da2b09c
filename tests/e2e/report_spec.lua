-- End-to-end: `wlrun report --html DIR` (docs/history.md, "A report as a web page") — the page
-- it writes and the directories it refuses, then the page in a real headless browser (Debian's
-- chromium-headless-shell, or chromium): it loads from file:// with no console message at all
-- (an error, a blocked script or load would be one), its script ran, its tables have the rows
-- and its plots are there in the DOM the browser built, a #sort= link sorts, a hostile results
-- file stays text, and a screenshot is a PNG of the window's size. Without a browser those
-- specs are pending, by name.
local h = require "helper"
local R = require "report_fixtures"
local F = require "history_fixtures"

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
    local r = h.run(("history add r%02d.json --db h.db --commit c%02d -q"):format(i, i), { cwd = dir })
    assert.equal(0, r.code, r.stderr)
  end
  return dir
end

local function report(args, dir) return h.run("report " .. args, { cwd = dir }) end

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
    assert.equal("wrote 'out/page/index.html': 2 results files, 1 comparison, the history of 2 configurations\n", r.stdout)
    assert.equal("", r.stderr)
    assert.equal("index.html", names(dir .. "/out/page"))
    local text = h.read(dir .. "/out/page/index.html")
    assert.matches('^<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf%-8">\n<meta name="generator" content="wlrun report ', text)
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
    assert.equal("wlrun: report: --html 'again' holds other files (notes.txt): give a new or empty directory, or one of an earlier report\n", r.stderr)
    assert.truthy(h.read(dir .. "/again/index.html"):find("b.json", 1, true), "the previous page was kept")

    os.execute("mkdir " .. q(dir .. "/site") .. " && echo '<html>mine</html>' >" .. q(dir .. "/site/index.html"))
    r = report("--html site a.json", dir)
    assert.equal(2, r.code)
    assert.equal("wlrun: report: --html 'site': its index.html was not made by wlrun report; it is left as it is\n", r.stderr)
    assert.equal("<html>mine</html>\n", h.read(dir .. "/site/index.html"))
  end)

  it("reads everything before it touches DIR", function()
    local r = report("--html fresh a.json missing.json", dir)
    assert.equal(9, r.code)
    assert.matches("^wlrun: report: cannot read 'missing%.json'", r.stderr)
    assert.equal("", names(dir):match("fresh") or "", "the directory was not made")
  end)

  it("prints its help, and wants --html and something to show", function()
    local r = report("--help", dir)
    assert.equal(0, r.code)
    assert.matches("^Usage: wlrun report %-%-html DIR %[RESULTS%.json%.%.%.%] %[%-%-db FILE%]", r.stdout)
    assert.equal(2, report("a.json", dir).code)
    r = report("--html x", dir)
    assert.equal(2, r.code)
    assert.equal("wlrun: report: expected results files, --db FILE, or both (wlrun report --help)\n", r.stderr)
    r = report("--html x a.json --scenario spin", dir)
    assert.equal("wlrun: report: --scenario and --device select the history: they need --db\n", r.stderr)
  end)
end)

---------------------------------------------------------------------------------------------
-- in a real browser

-- the browser: WLRUN_CHROMIUM, else chromium-headless-shell, else chromium (in its headless mode)
local function find_browser()
  local function found(name)
    local p = io.popen("command -v " .. q(name) .. " 2>/dev/null")
    local path = p:read("l")
    p:close()
    return path
  end
  local env = os.getenv("WLRUN_CHROMIUM")
  if env and env ~= "" then return found(env), env:find("headless%-shell") == nil end
  local shell = found("chromium-headless-shell")
  if shell then return shell, false end
  local full = found("chromium")
  return full, true
end

local browser, needs_headless = find_browser()

local function browser_it(name, fn)
  if browser then
    it("[browser] " .. name, fn)
  else
    pending("[browser] " .. name .. " -- skipped: no headless browser (apt-get install chromium-headless-shell)")
  end
end

-- Runs the browser on a file of the page; mode: "--dump-dom" or "--screenshot=FILE".
-- Returns the DOM after the page's script ran, and the page's console lines.
local function open(path, mode, fragment, size)
  local profile = h.tmpdir()
  local out, err = os.tmpname(), os.tmpname()
  local cmd = ("timeout 90 %s %s--no-sandbox --disable-gpu --no-first-run --user-data-dir=%s --enable-logging=stderr --v=0 "
    .. "--hide-scrollbars --window-size=%s %s %s >%s 2>%s"):format(q(browser), needs_headless and "--headless " or "",
    q(profile), size or "1280,2000", mode, q("file://" .. path .. (fragment or "")), q(out), q(err))
  local ok = os.execute(cmd)
  local dom, log = h.read(out), h.read(err)
  os.remove(out)
  os.remove(err)
  os.execute("rm -rf " .. q(profile))
  assert.is_true(ok == true, "the browser failed: " .. cmd .. "\n" .. log)
  local console = {}
  for line in log:gmatch("[^\n]+") do
    if line:find("CONSOLE", 1, true) or line:find("Uncaught", 1, true) then console[#console + 1] = line end
  end
  return dom, console
end

-- the first cells of a table's body rows, in the order the DOM has them
local function first_cells(dom, id)
  local body = dom:match('<table class="sortable" id="' .. id .. '"[^>]*>.-<tbody>(.-)</tbody>')
  assert.truthy(body, "no table " .. id)
  local list = {}
  for row in body:gmatch("<tr[^>]*>(.-)</tr>") do list[#list + 1] = row:match("<td[^>]*>(.-)</td>") end
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
    local dom, console = open(dir .. "/page/index.html", "--dump-dom")
    assert.same({}, console)
    assert.matches('^<!DOCTYPE html>\n<html lang="en" data%-sortable="7">', dom)
    assert.equal(count(dom, "<th "), count(dom, '<th [^>]*tabindex="0"'), "every header sorts")
  end)

  browser_it("has the tables' rows and the plots in its DOM", function()
    local dom = open(dir .. "/page/index.html", "--dump-dom")
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
    local dom, console = open(dir .. "/page/index.html", "--dump-dom", "#sort=doc-1-table.4.desc")
    assert.same({}, console)
    -- medians 800 us, 400 us, 200.5 us, 100 us (as text, "800" < "400" would not hold), the failure last
    assert.same({ "2", "4", "1", "3", "5" }, first_cells(dom, "doc%-1%-table"))
    assert.matches('<th class="num" scope="col" tabindex="0" title="sort by this column" aria%-sort="descending">median</th>', dom)
    dom = open(dir .. "/page/index.html", "--dump-dom", "#sort=doc-1-table.2")
    assert.same({ "1", "3", "2", "4", "5" }, first_cells(dom, "doc%-1%-table"))
  end)

  browser_it("shows a hostile results file as text: no element, no script, no load from it", function()
    local dom, console = open(dir .. "/bad/index.html", "--dump-dom")
    assert.same({}, console)
    assert.falsy(dom:find("<img", 1, true))
    assert.falsy(dom:find("<svg onload", 1, true))
    assert.equal(1, count(dom, "<script>"))
    assert.truthy(count(dom, "&lt;/script&gt;&lt;img src=x onerror=") >= 10)
  end)

  browser_it("writes a screenshot: a PNG of the window's size", function()
    local png = dir .. "/page.png"
    open(dir .. "/page/index.html", "--screenshot=" .. q(png), nil, "1200,1800")
    local bytes = h.read(png)
    assert.equal("\137PNG\r\n\26\n", bytes:sub(1, 8))
    assert.equal("IHDR", bytes:sub(13, 16))
    local width, height = string.unpack(">I4I4", bytes, 17)
    assert.same({ 1200, 1800 }, { width, height }, "width and height")
    assert.is_true(#bytes > 20000, "a page with text and plots, not a blank one: " .. #bytes .. " bytes")
  end)
end)
