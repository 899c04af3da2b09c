-- The history on wlrun report's page (docs/history.md): per configuration (scenario, device,
-- parameters) its median by commit as an SVG line, with the levels, steps and drifts that
-- `wlrun history blame` finds (wlrun.history.analysis), the steps' commits named, and the
-- table of `wlrun history trend`.
--
--   history.analyse(db, selection) -> list: each configuration's series, and what blame finds in it
--   history.summary(list, path, id) -> html of a <section id="summary">: the regressions and
--                                      improvements, each linked to its chart (or: none found)
--   history.render(list, path, id) -> html of a <section id="id">, and the series count
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

-- a commit on the page: its whole name (a page has room for it), '+' for a dirty work tree
local function whole(c) return c.commit == "" and "-" or (c.commit .. (c.dirty and "+" or "")) end

-- the steps and drifts under a chart: a regression (slower) red, an improvement green
local function shifts(found)
  local items = {}
  for _, x in ipairs(found.steps) do
    items[#items + 1] = { x.change, ("Step at %s (after %s): %s to %s, %s, p = %s"):format(
      whole(x.first),
      whole(x.last_before), T.time(x.before), T.time(x.after), render.change_text(x.change),
        render.p_text(x.p)) }
  end
  for _, x in ipairs(found.drifts) do
    items[#items + 1] = { x.change, ("Drift over %s..%s: %s, p = %s"):format(whole(x.from),
      whole(x.to),
      render.change_text(x.change), render.p_text(x.p)) }
  end
  if #items == 0 then return '<p class="muted">No lasting shift.</p>' end
  local out = { "<ul>" }
  for _, s in ipairs(items) do out[#out + 1] = ('<li class="%s">'):format(s[1] > 0 and "bad"
    or "good") .. esc.text(s[2]) .. "</li>" end
  out[#out + 1] = "</ul>"
  return table.concat(out)
end

local function trend_table(points, id)
  local cols = { { title = "commit" }, { title = "time" }, { title = "runs", right = true },
    { title = "median", right = true },
    { title = "vs first", right = true }, { title = "vs previous", right = true } }
  local rows = {}
  for i, p in ipairs(analysis.trend(points)) do
    rows[i] = { cells = { render.commit_text(p), p.time, tostring(p.runs), T.time(p.median),
      render.change_text(p.change_first),
      render.change_text(p.change_previous) }, keys = { nil, nil, p.runs, p.median, p.change_first,
        p.change_previous } }
  end
  return html_table.render(cols, rows, id)
end

-- each configuration's series: {series, points, found (analysis.blame's), heading, name}
function M.analyse(db, sel)
  local list = {}
  -- the main line's series, as history's
  for k, s in ipairs(query.series((branches.select(query.rows(db, sel))))) do
    local points = query.commits(s)
    list[k] = { series = s, points = points, found = analysis.blame(s, points, {}),
      heading = render.heading { scenario = s.scenario, device = s.device, params = s.params,
        commits = #points },
      name = ("%s · %s · %s"):format(s.scenario, s.device ~= "" and s.device or "no device",
        render.params_text(s.params)) }
  end
  return list
end

local function chart_id(id, k) return ("%s-%d-chart"):format(id, k) end

-- The page's opening: every step and drift that blame found, regressions (slower: the history
-- holds times) first, the largest first, each linked to its configuration's chart; or one line
-- saying that there is none. -> html of a <section id="summary">
function M.summary(list, path, id)
  local found = {}
  for k, e in ipairs(list) do
    for _, x in ipairs(e.found.steps) do
      found[#found + 1] = { k = k, e = e, kind = "step", change = x.change, p = x.p,
        commit = ("%s (after %s)"):format(whole(x.first), whole(x.last_before)) }
    end
    for _, x in ipairs(e.found.drifts) do
      found[#found + 1] = { k = k, e = e, kind = "drift", change = x.change, p = x.p,
        commit = ("%s..%s"):format(whole(x.from), whole(x.to)) }
    end
  end
  table.sort(found, function(a, b)
    if a.change ~= b.change then return a.change > b.change end
    return a.k < b.k
  end)
  local out = { '<section id="summary">', "<h2>Summary</h2>" }
  local n = #list
  local series = ("%d series of '%s'"):format(n, path)
  if #found == 0 then
    out[#out + 1] = ('<p class="good">No lasting shift was found in %s.</p>'):format(
      esc.text(series))
  else
    local worse, better = 0, 0
    for _, f in ipairs(found) do
      if f.change > 0 then worse = worse + 1 else better = better + 1 end
    end
    local cp = changepoint.defaults
    out[#out + 1] = (
      "<p>%s, %s in %s: shifts that lasted %d commits or more on each side, of %s or more "
      .. "(Mann-Whitney over the commits' medians, permutation test, alpha %s). Each links to "
        .. "its chart.</p>"):format(
      esc.text(("%d regression%s"):format(worse, worse == 1 and "" or "s")),
      esc.text(("%d improvement%s"):format(better, better == 1 and "" or "s")), esc.text(series),
        cp.min_segment,
      esc.text(columns.pct(cp.min_effect)), esc.text(T.value(cp.alpha)))
    local cols = { { title = "configuration" }, { title = "found" }, { title = "commit" },
      { title = "shift", right = true },
      { title = "p", right = true } }
    local rows = {}
    for i, f in ipairs(found) do
      local link = ('<a href="#%s">%s</a>'):format(esc.id(chart_id(id, f.k)), esc.text(f.e.name))
      rows[i] = { cells = { { html = link }, ("%s (%s)"):format(f.change > 0 and "regression"
        or "improvement", f.kind),
        f.commit, render.change_text(f.change), render.p_text(f.p) },
          keys = { nil, nil, nil, f.change, f.p },
        class = f.change > 0 and "slower" or "faster" }
    end
    out[#out + 1] = '<div class="wrap">' .. html_table.render(cols, rows, "summary-table")
      .. "</div>"
  end
  out[#out + 1] = "</section>"
  return table.concat(out, "\n")
end

-- list: M.analyse's; the charts' ids are ID-K-chart (K the series' place), the summary's links
function M.render(list, path, id)
  local out = { ('<section id="%s">'):format(esc.id(id)),
    "<h2>" .. esc.text(("History: '%s'"):format(path)) .. "</h2>" }
  local cp = changepoint.defaults
  out[#out + 1] = (
    "<p>%d configuration%s. Each line is a configuration's median by commit, in the order the "
    .. "runs started; "
    .. "dashed green: the levels between shifts; dashed red: the first commit of a step (a "
      .. "shift that lasted %d or more "
    .. "commits on each side, of %s or more: Mann-Whitney over the commits' medians, "
      .. "permutation test, alpha %s); "
    .. "orange: a slow drift.</p>"):format(#list, #list == 1 and "" or "s", cp.min_segment,
      esc.text(columns.pct(cp.min_effect)),
      esc.text(T.value(cp.alpha)))
  for k, e in ipairs(list) do
    out[#out + 1] = ('<div class="chart" id="%s">'):format(esc.id(chart_id(id, k)))
    out[#out + 1] = ('<h3 id="%s-%d">%s</h3>'):format(esc.id(id), k, esc.text(e.heading))
    out[#out + 1] = plots.trend(e.points, e.found, e.heading)
    out[#out + 1] = "</div>"
    out[#out + 1] = shifts(e.found)
    out[#out + 1] = "<details><summary>Medians by commit</summary>"
      .. trend_table(e.points, ("%s-%d-table"):format(id, k))
      .. "</details>"
  end
  out[#out + 1] = "</section>"
  return table.concat(out, "\n"), #list
end

return M
