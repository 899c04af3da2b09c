-- The printers of a comparison document (schema wlrun-compare, made by wlrun.compare.document):
-- the terminal table, Markdown, JSON. Formats only: every number shown is in the document.
local core = require "wlrun.core"
local printable = require "wlrun.text.printable"
local units = require "wlrun.text.units"
local T = require "wlrun.report.table"
local columns = require "wlrun.report.columns"
local json_out = require "wlrun.report.json"
local md = require "wlrun.report.markdown"
local metrics = require "wlrun.compare.metrics"
local provenance = require "wlrun.compare.provenance"

local finite = units.finite
local param_text, param_names = columns.param_text, columns.param_names

local M = {}

local function ratio_text(v) return finite(v) and ("%.3f"):format(v) or "-" end

local function interval_text(lo, hi)
  if not (finite(lo) and finite(hi)) then return "-" end
  return ("%.3f..%.3f"):format(lo, hi)
end

function M.change_text(c)
  if not finite(c) then return "-" end
  local s = ("%+.1f%%"):format(100 * c)
  if s == "-0.0%" then s = "+0.0%" end
  return s
end

local function p_text(p)
  if not finite(p) then return "-" end
  if p >= 0.001 then return ("%.3f"):format(p) end
  return ("%.1e"):format(p)
end

local function side_line(s)
  local parts = {}
  if s.device then parts[#parts + 1] = tostring(s.device) end
  if s.driver_version then parts[#parts + 1] = "driver " .. T.value(s.driver_version) end
  if s.wlrun_version then parts[#parts + 1] = "wlrun " .. tostring(s.wlrun_version) end
  if s.started then parts[#parts + 1] = tostring(s.started) end
  if s.complete == false then parts[#parts + 1] = "INCOMPLETE" end
  return tostring(s.file) .. (#parts > 0 and (" (" .. table.concat(parts, ", ") .. ")") or "")
end

local function method_line(doc)
  local s = doc.settings
  return (
    "noise threshold %s, Mann-Whitney U alpha %s, %s bootstrap interval of the ratio of medians "
    .. "(%d resamples, seed %s)"):format(
    columns.pct(s.noise), T.value(s.alpha), columns.pct(s.confidence), s.resamples, T.value(s.seed))
end

local function verdict_counts(sum)
  local parts = {}
  for _, v in ipairs { "slower", "faster", "same", "uncertain" } do
    if sum[v] > 0 then parts[#parts + 1] = ("%d %s"):format(sum[v], v) end
  end
  return #parts > 0 and table.concat(parts, ", ") or "none"
end

local function geomean_line(doc)
  local sum = doc.summary
  if sum.compared == 0 then return "No configuration was compared." end
  local s = ("Geometric mean of NEW/BASE over %d configuration%s: %s"):format(sum.compared,
    sum.compared == 1 and "" or "s", ratio_text(sum.geomean))
  if finite(sum.geomean_lo) then
    s = s .. (" (%s interval %s)"):format(columns.pct(doc.settings.confidence),
      interval_text(sum.geomean_lo, sum.geomean_hi))
  end
  return s .. ", " .. M.change_text(sum.geomean - 1)
end

local function gate_lines(doc)
  local g = doc.gate
  if not g then return {} end
  local head = ("Gate --fail-above %s: "):format(columns.pct(g.fail_above))
  if g.compared == 0 then
    return { head
    .. "NOT PASSED: no configuration was compared, and a gate over nothing never passes" } end
  if not g.failed then
    return { head .. "passed (no configuration significantly slower by more than "
    .. columns.pct(g.fail_above) .. ")" } end
  local lines = { head
    .. ("FAILED: %d configuration%s significantly slower by more than %s:"):format(
    #g.configurations,
    #g.configurations == 1 and "" or "s", columns.pct(g.fail_above)) }
  for _, x in ipairs(g.configurations) do
    lines[#lines + 1] = ("  %s: %s (interval %s)"):format(T.describe(x.params, doc.parameters),
      M.change_text(x.change),
      interval_text(x.lo, x.hi))
  end
  return lines
end

local function ignored_line(doc)
  if #doc.ignored_parameters == 0 then return nil end
  local parts = {}
  for _, x in ipairs(doc.ignored_parameters) do
    parts[#parts + 1] = ("%s (BASE %s; NEW %s)"):format(x.name,
      #x.base > 0 and table.concat(x.base, ",") or "-",
      #x.new > 0 and table.concat(x.new, ",") or "-")
  end
  return "Not matched on: " .. table.concat(parts, ", ")
end

local function build_rows(doc)
  local cols = {}
  for _, n in ipairs(doc.parameters) do cols[#cols + 1] = { title = tostring(n), right = true,
    name = n, axis = true } end
  for _, c in ipairs {
    { "BASE", true }, { "NEW", true }, { "NEW/BASE", true },
    { columns.pct(doc.settings.confidence) .. " interval", true }, { "change", true },
      { "p", true }, { "n", true },
    { "verdict", false },
  } do cols[#cols + 1] = { title = c[1], right = c[2] } end
  T.prefix_parameters(cols)
  local rows, keys = {}, {}
  for _, r in ipairs(doc.configurations) do
    local cells, k = {}, {}
    for j, n in ipairs(doc.parameters) do
      local v = r.params[n]
      cells[j] = param_text(v)
      k[j] = type(v) == "number" and v or nil
      if v ~= nil and type(v) ~= "number" then cols[j].right = false end
    end
    local function put(text, key)
      local j = #cells + 1
      cells[j], k[j] = text, key
    end
    put(T.time(r.base.median), r.base.median)
    put(T.time(r.new.median), r.new.median)
    put(ratio_text(r.ratio), r.ratio)
    put(interval_text(r.lo, r.hi), r.lo)
    put(M.change_text(r.change), r.change)
    put(p_text(r.p), r.p)
    put(("%s/%s"):format(T.value(r.base.n), T.value(r.new.n)), r.new.n)
    put(r.verdict)
    rows[#rows + 1] = cells
    keys[#rows] = k
  end
  return cols, rows, keys
end

local function listing(doc, list, which)
  local lines = {}
  for _, x in ipairs(list) do
    local names = param_names({ configurations = { x } })
    local desc = T.describe(x.params, doc.parameters)
    if desc == "" then desc = T.describe(x.params, names) end
    lines[#lines + 1] = ("#%s %s%s"):format(T.value(x.index), desc,
      x.why and (" (" .. T.first_line(x.why, 70) .. ")") or "")
  end
  return lines
end

local function status_text(x)
  if x.status == "failed" then
    return "failed" .. ((x.why or ""):match("^failed (%[[^%]]*%])")
      and (" " .. x.why:match("^failed (%[[^%]]*%])")) or "")
  end
  if x.status == "ok" and x.why then return x.why end
  return x.status or "?"
end

local function not_compared_lines(doc)
  local lines = {}
  for _, x in ipairs(doc.not_compared) do
    lines[#lines + 1] = ("%s: BASE #%s %s, NEW #%s %s"):format(T.describe(x.params, doc.parameters),
      T.value(x.base.index), status_text(x.base), T.value(x.new.index), status_text(x.new))
  end
  return lines
end

function M.render_table(doc)
  doc = printable.data(doc) -- names and messages from the results: see report.table
  local out = {}
  local sb, sn = doc.base.scenario, doc.new.scenario
  out[#out + 1] = "Comparing " .. (sb == sn and tostring(sb)
    or (tostring(sb) .. " with " .. tostring(sn)))
  out[#out + 1] = "  BASE " .. side_line(doc.base)
  out[#out + 1] = "  NEW  " .. side_line(doc.new)
  for _, l in ipairs(provenance.table_lines(doc)) do out[#out + 1] = l end
  local ig = ignored_line(doc)
  if ig then out[#out + 1] = "  " .. ig end
  out[#out + 1] = ""
  if #doc.configurations > 0 then
    local cols, rows = build_rows(doc)
    for _, l in ipairs(columns.align(cols, rows)) do out[#out + 1] = l end
    out[#out + 1] = ""
  end
  out[#out + 1] = geomean_line(doc)
  out[#out + 1] = "Verdicts: " .. verdict_counts(doc.summary)
  out[#out + 1] = "Method: " .. method_line(doc)
  local notes = {}
  for _, r in ipairs(doc.configurations) do
    for _, n in ipairs(r.notes) do notes[#notes + 1] = "  " .. T.describe(r.params, doc.parameters)
      .. ": " .. n end
  end
  local function section(title, lines)
    if #lines == 0 then return end
    out[#out + 1] = title
    for _, l in ipairs(lines) do out[#out + 1] = (l:sub(1, 2) == "  " and "" or "  ") .. l end
  end
  section("Notes:", notes)
  section("Work metrics (NEW/BASE):", metrics.lines(doc))
  section(("Not compared (%d, no measurement in a run):"):format(#doc.not_compared),
    not_compared_lines(doc))
  section(("Only in BASE (%d):"):format(#doc.only_in_base), listing(doc, doc.only_in_base))
  section(("Only in NEW (%d):"):format(#doc.only_in_new), listing(doc, doc.only_in_new))
  local w = {}
  for _, x in ipairs(doc.warnings) do w[#w + 1] = x.code .. ": " .. x.message end
  section("Warnings:", w)
  for _, l in ipairs(gate_lines(doc)) do out[#out + 1] = l end
  return table.concat(out, "\n") .. "\n"
end

function M.render_markdown(doc)
  doc = printable.data(doc)
  local out = {}
  local sb, sn = doc.base.scenario, doc.new.scenario
  out[#out + 1] = "## Comparison: " .. md.cell(sb == sn and sb
    or (tostring(sb) .. " with " .. tostring(sn)))
  out[#out + 1] = ""
  out[#out + 1] = "- BASE: " .. md.cell(side_line(doc.base))
  out[#out + 1] = "- NEW: " .. md.cell(side_line(doc.new))
  for _, l in ipairs(provenance.markdown_lines(doc, md.cell)) do out[#out + 1] = l end
  local ig = ignored_line(doc)
  if ig then out[#out + 1] = "- " .. md.text(ig) end
  out[#out + 1] = "- Method: " .. method_line(doc)
  out[#out + 1] = ""
  if #doc.configurations > 0 then
    local cols, rows = build_rows(doc)
    for _, r in ipairs(rows) do
      for j = 1, #cols do r[j] = md.cell(r[j]) end
      if r[#cols] == "slower" then r[#cols] = "**slower**" end
    end
    for _, l in ipairs(md.grid(cols, rows)) do out[#out + 1] = l end
    out[#out + 1] = ""
  end
  out[#out + 1] = geomean_line(doc) .. ". Verdicts: " .. verdict_counts(doc.summary) .. "."
  local function section(title, lines)
    if #lines == 0 then return end
    out[#out + 1] = ""
    out[#out + 1] = "### " .. title
    out[#out + 1] = ""
    for _, l in ipairs(lines) do out[#out + 1] = "- " .. md.text(l) end
  end
  local notes = {}
  for _, r in ipairs(doc.configurations) do
    for _, n in ipairs(r.notes) do notes[#notes + 1] = T.describe(r.params, doc.parameters) .. ": "
      .. n end
  end
  section("Notes", notes)
  section("Work metrics (NEW/BASE)", metrics.lines(doc))
  section("Not compared", not_compared_lines(doc))
  section("Only in BASE", listing(doc, doc.only_in_base))
  section("Only in NEW", listing(doc, doc.only_in_new))
  local w = {}
  for _, x in ipairs(doc.warnings) do w[#w + 1] = md.code(x.code) .. " " .. md.cell(x.message) end
  if #w > 0 then
    out[#out + 1] = ""
    out[#out + 1] = "### Warnings"
    out[#out + 1] = ""
    for _, l in ipairs(w) do out[#out + 1] = "- " .. l end
  end
  local g = gate_lines(doc)
  if #g > 0 then
    out[#out + 1] = ""
    out[#out + 1] = "### Gate"
    out[#out + 1] = ""
    out[#out + 1] = g[1]:gsub("FAILED", "**FAILED**")
    for i = 2, #g do out[#out + 1] = "- " .. md.text((g[i]:gsub("^%s+", ""))) end
  end
  return table.concat(out, "\n") .. "\n"
end

-- for wlrun report's page (wlrun.html.comparison): the same lines and table; build_rows also
-- gives each row's sort keys (the numbers behind its cells)
M.build_rows, M.side_line, M.ignored_line, M.method_line, M.geomean_line = build_rows, side_line,
  ignored_line,
  method_line, geomean_line
M.verdict_counts, M.listing, M.not_compared_lines = verdict_counts, listing, not_compared_lines

function M.render(doc, format)
  if format == "table" then return M.render_table(doc) end
  if format == "markdown" then return M.render_markdown(doc) end
  if format == "json" then return json_out.text(doc) end
  core.error("usage", ("compare: unknown format '%s' (expected table, markdown or json)"):format(
    tostring(format)), 0)
end

return M
