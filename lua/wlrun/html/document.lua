-- One results document on wlrun report's page: the sweep table (the terminal table's columns,
-- wlrun.report.table), each configuration's distribution as an SVG plot, training-loop
-- summaries, warnings, failures, and the provenance (every other field of the document).
--
--   document.render(doc, path, id) -> html of a <section id="id">
local esc = require "wlrun.html.escape"
local fields = require "wlrun.html.fields"
local html_table = require "wlrun.html.table"
local plots = require "wlrun.html.plots"
local T = require "wlrun.report.table"
local loop_summary = require "wlrun.report.loop_summary"

local M = {}

-- the provenance's fields in the order a reader looks for them; the others follow, sorted
local FIRST = { "scenario", "provenance", "device", "wlrun", "command_line", "cwd", "started",
  "finished", "complete",
  "settings", "sources", "floor", "shard", "devices", "trace" }

local function h3(text) return "<h3>" .. esc.text(text) .. "</h3>" end

local function counts(doc)
  local by, order = {}, {}
  for _, c in ipairs(doc.configurations) do
    local s = tostring(c.status or "?")
    if not by[s] then by[s], order[#order + 1] = 0, s end
    by[s] = by[s] + 1
  end
  local parts = {}
  for _, s in ipairs(order) do parts[#parts + 1] = ("%d %s"):format(by[s], s) end
  local n = #doc.configurations
  return ("%d configuration%s%s"):format(n, n == 1 and "" or "s",
    #parts > 0 and (": " .. table.concat(parts, ", ")) or "")
end

local function sweep(doc, id)
  local t = T.build(doc)
  local rows = {}
  for i, r in ipairs(t.rows) do
    rows[i] = { cells = r.cells, keys = r.keys, lead = r.lead,
      why = not r.ok and (r.why ~= "" and r.why or "no measurement") or nil,
      class = tostring(r.config.status or "") }
  end
  return '<div class="wrap">' .. html_table.render(t.columns, rows, id .. "-table") .. "</div>"
end

-- the names of a configuration's kernels
local function kernels(c)
  local names = {}
  for _, k in ipairs(type(c.kernels) == "table" and c.kernels or {}) do
    names[#names + 1] = tostring(k.name or "?") end
  return table.concat(names, ", ")
end

local function distributions(doc, id)
  local axes = T.axes(doc)
  local with_kernels = false
  for _, c in ipairs(doc.configurations) do with_kernels = with_kernels or kernels(c) ~= "" end
  local cols = { { title = "#", right = true }, { title = "configuration" },
    { title = "n", right = true },
    { title = "median", right = true }, { title =
      "samples, p25..p75 box, p10..p90 whiskers, median in red" } }
  if with_kernels then table.insert(cols, 3, { title = "kernels" }) end
  local rows = {}
  for i, c in ipairs(doc.configurations) do
    local plot = plots.distribution(c)
    if plot then
      local s = type(c.stats) == "table" and c.stats or {}
      local n = type(c.samples) == "table" and #c.samples or s.n
      local r = { cells = { T.value(c.index or i), T.describe(c.params, axes),
        n and T.value(n) or "-",
        T.time(s.median), { html = plot } }, keys = { c.index or i, nil, n, s.median } }
      if with_kernels then
        table.insert(r.cells, 3, kernels(c))
        r.keys = { c.index or i, nil, nil, n, s.median }
      end
      rows[#rows + 1] = r
    end
  end
  if #rows == 0 then return '<p class="muted">No configuration has samples.</p>' end
  return '<div class="wrap">' .. html_table.render(cols, rows, id .. "-dist") .. "</div>"
end

local function warnings(doc)
  local list = T.warnings(doc)
  if #list == 0 then return nil end
  local out = { '<ul class="warnings">' }
  for _, x in ipairs(list) do
    local w = x.warning
    out[#out + 1] = ("<li>#%s <code>%s</code>: %s%s</li>"):format(esc.text(T.value(x.index)),
      esc.text(w.code),
      esc.text(w.message or ""), w.hint and ("<br><span class=\"muted\">hint: " .. esc.text(w.hint)
        .. "</span>") or "")
  end
  out[#out + 1] = "</ul>"
  return table.concat(out)
end

local function failures(doc)
  local out = {}
  for i, c in ipairs(doc.configurations) do
    if c.status == "failed" then
      out[#out + 1] = ("<li>#%s <code>%s</code> %s<pre>%s</pre></li>"):format(
        esc.text(T.value(c.index or i)),
        esc.text(c.kind or "?"), esc.text(T.describe(c.params, T.axes(doc))),
          esc.text(c.error or "failed"))
    end
  end
  return #out > 0 and ("<ul>" .. table.concat(out) .. "</ul>") or nil
end

local function loops(doc)
  local out = {}
  for i, c in ipairs(doc.configurations) do
    local s = loop_summary.of_entry(c)
    if s then
      out[#out + 1] = "<pre>" .. esc.text(loop_summary.render(s,
        ("#%s %s"):format(T.value(c.index or i), T.scenario_name(doc))))
        .. "</pre>"
    end
  end
  return #out > 0 and table.concat(out) or nil
end

function M.render(doc, path, id)
  local out = { ('<section id="%s">'):format(esc.id(id)),
    "<h2>" .. esc.text(T.title(doc)) .. "</h2>" }
  out[#out + 1] = ('<p class="muted">File <code>%s</code>; %s.</p>'):format(esc.text(path),
    esc.text(counts(doc)))
  local dev, floor = T.device_line(doc.device), T.floor_line(doc.floor)
  if dev or floor then
    out[#out + 1] = "<p>" .. (dev and ("Device: " .. esc.text(dev)) or "")
      .. (dev and floor and "<br>" or "")
      .. (floor and ("Timing floor: " .. esc.text(floor)) or "") .. "</p>"
  end
  out[#out + 1] = h3("Configurations")
  out[#out + 1] = #doc.configurations > 0 and sweep(doc, id)
    or '<p class="muted">(no configurations)</p>'
  local l = loops(doc)
  if l then out[#out + 1] = h3("Training loops") .. l end
  out[#out + 1] = h3("Distributions")
  out[#out + 1] = distributions(doc, id)
  local w = warnings(doc)
  if w then out[#out + 1] = h3("Warnings") .. w end
  local f = failures(doc)
  if f then out[#out + 1] = h3("Failures") .. f end
  out[#out + 1] = h3("Provenance")
  out[#out + 1] = fields.list(doc, FIRST, { configurations = true })
  out[#out + 1] = "</section>"
  return table.concat(out, "\n")
end

return M
