-- The history on wlrun report's page (docs/history.md): per configuration (scenario, device,
-- parameters) its median by commit as an SVG line, with the levels, steps and drifts that
-- `wlrun history blame` finds (wlrun.history.analysis), the steps' commits named, and the
-- table of `wlrun history trend`.
--
--   history.render(db, path, selection, id) -> html of a <section id="id">, and the series count
local analysis = require "wlrun.history.analysis"
local changepoint = require "wlrun.history.changepoint"
local esc = require "wlrun.html.escape"
local html_table = require "wlrun.html.table"
local plots = require "wlrun.html.plots"
local query = require "wlrun.history.query"
local branches = require "wlrun.history.branches"
local render = require "wlrun.history.render"
local T = require "wlrun.report.table"
local columns = require "wlrun.report.columns"

local M = {}

local function shifts(found)
  local items = {}
  for _, x in ipairs(found.steps) do
    items[#items + 1] = ("Step at %s (after %s): %s to %s, %s, p = %s"):format(render.commit_text(x.first),
      render.commit_text(x.last_before), T.time(x.before), T.time(x.after), render.change_text(x.change), render.p_text(x.p))
  end
  for _, x in ipairs(found.drifts) do
    items[#items + 1] = ("Drift over %s..%s: %s, p = %s"):format(render.commit_text(x.from), render.commit_text(x.to),
      render.change_text(x.change), render.p_text(x.p))
  end
  if #items == 0 then return '<p class="muted">No lasting shift.</p>' end
  local out = { "<ul>" }
  for _, s in ipairs(items) do out[#out + 1] = '<li class="bad">' .. esc.text(s) .. "</li>" end
  out[#out + 1] = "</ul>"
  return table.concat(out)
end

local function trend_table(points, id)
  local cols = { { title = "commit" }, { title = "time" }, { title = "runs", right = true }, { title = "median", right = true },
    { title = "vs first", right = true }, { title = "vs previous", right = true } }
  local rows = {}
  for i, p in ipairs(analysis.trend(points)) do
    rows[i] = { cells = { render.commit_text(p), p.time, tostring(p.runs), T.time(p.median), render.change_text(p.change_first),
      render.change_text(p.change_previous) }, keys = { nil, nil, p.runs, p.median, p.change_first, p.change_previous } }
  end
  return html_table.render(cols, rows, id)
end

function M.render(db, path, sel, id)
  local all = query.series((branches.select(query.rows(db, sel)))) -- the main line's series, as history's
  local out = { ('<section id="%s">'):format(esc.id(id)), "<h2>" .. esc.text(("History: '%s'"):format(path)) .. "</h2>" }
  local cp = changepoint.defaults
  out[#out + 1] = ("<p>%d configuration%s. Each line is a configuration's median by commit, in the order the runs started; "
    .. "dashed green: the levels between shifts; dashed red: the first commit of a step (a shift that lasted %d or more "
    .. "commits on each side, of %s or more: Mann-Whitney over the commits' medians, permutation test, alpha %s); "
    .. "orange: a slow drift.</p>"):format(#all, #all == 1 and "" or "s", cp.min_segment, esc.text(columns.pct(cp.min_effect)),
      esc.text(T.value(cp.alpha)))
  for k, s in ipairs(all) do
    local points = query.commits(s)
    local found = analysis.blame(s, points, {})
    local heading = render.heading { scenario = s.scenario, device = s.device, params = s.params, commits = #points }
    out[#out + 1] = ('<h3 id="%s-%d">%s</h3>'):format(esc.id(id), k, esc.text(heading))
    out[#out + 1] = plots.trend(points, found, heading)
    out[#out + 1] = shifts(found)
    out[#out + 1] = "<details><summary>Medians by commit</summary>" .. trend_table(points, ("%s-%d-table"):format(id, k))
      .. "</details>"
  end
  out[#out + 1] = "</section>"
  return table.concat(out, "\n"), #all
end

return M
