-- A comparison of two results documents on wlrun report's page: the document wlrun compare makes
-- (wlrun.compare.document: ratio of medians, bootstrap interval, Mann-Whitney U, verdict) shown
-- with compare's own lines and table (wlrun.compare.render), rows coloured by verdict.
--
--   comparison.render(cmp, id) -> html of a <section id="id">
local esc = require "wlrun.html.escape"
local html_table = require "wlrun.html.table"
local render = require "wlrun.compare.render"
local provenance = require "wlrun.compare.provenance"
local metrics = require "wlrun.compare.metrics"
local T = require "wlrun.report.table"

local M = {}

local function list(title, lines)
  if #lines == 0 then return "" end
  local out = { "<h3>" .. esc.text(title) .. "</h3><ul>" }
  for _, l in ipairs(lines) do out[#out + 1] = "<li>" .. esc.text(l) .. "</li>" end
  out[#out + 1] = "</ul>"
  return table.concat(out)
end

function M.render(cmp, id)
  local sb, sn = cmp.base.scenario, cmp.new.scenario
  local out = { ('<section id="%s">'):format(esc.id(id)),
    "<h2>" .. esc.text("Comparison: " .. (sb == sn and tostring(sb)
      or (tostring(sb) .. " with " .. tostring(sn)))) .. "</h2>",
    "<ul>", "<li>BASE " .. esc.text(render.side_line(cmp.base)) .. "</li>",
    "<li>NEW " .. esc.text(render.side_line(cmp.new)) .. "</li>" }
  local ig = render.ignored_line(cmp)
  if ig then out[#out + 1] = "<li>" .. esc.text(ig) .. "</li>" end
  out[#out + 1] = "<li>Method: " .. esc.text(render.method_line(cmp)) .. "</li></ul>"
  out[#out + 1] = list(provenance.TITLE, provenance.lines(cmp))
  if #cmp.configurations > 0 then
    local cols, cells, keys = render.build_rows(cmp)
    local rows = {}
    for i, c in ipairs(cells) do rows[i] = { cells = c, keys = keys[i],
      class = cmp.configurations[i].verdict } end
    out[#out + 1] = '<div class="wrap">' .. html_table.render(cols, rows, id .. "-table")
      .. "</div>"
  end
  local verdicts = render.verdict_counts(cmp.summary)
  out[#out + 1] = ("<p>%s.<br>Verdicts: %s.</p>"):format(esc.text(render.geomean_line(cmp)),
    esc.text(verdicts))
  local notes = {}
  for _, r in ipairs(cmp.configurations) do
    for _, n in ipairs(r.notes) do notes[#notes + 1] = T.describe(r.params, cmp.parameters) .. ": "
      .. n end
  end
  out[#out + 1] = list("Notes", notes)
  out[#out + 1] = list("Work metrics (NEW/BASE)", metrics.lines(cmp))
  out[#out + 1] = list(("Not compared (%d, no measurement in a run)"):format(#cmp.not_compared),
    render.not_compared_lines(cmp))
  out[#out + 1] = list(("Only in BASE (%d)"):format(#cmp.only_in_base),
    render.listing(cmp, cmp.only_in_base))
  out[#out + 1] = list(("Only in NEW (%d)"):format(#cmp.only_in_new),
    render.listing(cmp, cmp.only_in_new))
  local w = {}
  for _, x in ipairs(cmp.warnings) do w[#w + 1] = x.code .. ": " .. x.message end
  out[#out + 1] = list("Warnings", w)
  out[#out + 1] = "</section>"
  return table.concat(out, "\n")
end

-- a section for a pair that could not be compared (the reason, from compare)
function M.failed(base_path, new_path, message, id)
  return ('<section id="%s"><h2>%s</h2><p class="bad">%s</p></section>'):format(esc.id(id),
    esc.text(("Comparison: %s with %s"):format(base_path, new_path)), esc.text(message))
end

return M
