-- The page of `wlrun report --html` (docs/history.md, "A report as a web page"): each results
-- document (wlrun.html.document), each document after the first compared with the first
-- (wlrun.html.comparison, through wlrun compare's own comparison), and the history of a
-- database (wlrun.html.history), in one page (wlrun.html.page); with a history, the page opens
-- with the summary of its regressions and improvements.
--
--   report.render { documents = { {doc =, path =} ... }, db =, db_path =, selection =, title = }
--     -> the page's text, and what it holds: {comparisons = n, series = n or nil}
local core = require "wlrun.core"
local compare_document = require "wlrun.compare.document"
local comparison = require "wlrun.html.comparison"
local document = require "wlrun.html.document"
local history = require "wlrun.html.history"
local page = require "wlrun.html.page"
local T = require "wlrun.report.table"

local M = {}

-- the message of an error that wlrun raised about its input (a table with a kind and message)
local function message(e) return (tostring(e.message):gsub("^compare: ", "")) end

local function default_title(o)
  local names, seen = {}, {}
  for _, d in ipairs(o.documents) do
    local n = T.scenario_name(d.doc)
    if not seen[n] then seen[n], names[#names + 1] = true, n end
  end
  if #names == 0 then return "wlrun report: history" end
  return "wlrun report: " .. table.concat(names, ", ")
end

function M.render(o)
  local body, nav = {}, {}
  for i, d in ipairs(o.documents) do
    local id = "doc-" .. i
    body[#body + 1] = document.render(d.doc, d.path, id)
    nav[#nav + 1] = { id, ("%s (%s)"):format(T.title(d.doc), d.path) }
  end
  local base = o.documents[1]
  for i = 2, #o.documents do
    local new, id = o.documents[i], "cmp-" .. i
    local ok, cmp = pcall(compare_document.compare, base.doc, new.doc,
      { base_path = base.path, new_path = new.path })
    if not ok and type(cmp) ~= "table" then error(cmp, 0) end -- wlrun's own error, not the input's
    body[#body + 1] = ok and comparison.render(cmp, id)
      or comparison.failed(base.path, new.path, message(cmp), id)
    nav[#nav + 1] = { id, ("Comparison: %s with %s"):format(new.path, base.path) }
  end
  local series, summary
  if o.db then
    local list = history.analyse(o.db, o.selection or {})
    summary = history.summary(list, o.db_path, "history")
    local html
    html, series = history.render(list, o.db_path, "history")
    body[#body + 1] = html
    nav[#nav + 1] = { "history", ("History: %s"):format(o.db_path) }
  end
  return page.render { title = o.title or default_title(o), version = core.version,
    summary = summary,
    nav = nav, body = table.concat(body, "\n") },
      { comparisons = math.max(0, #o.documents - 1), series = series }
end

return M
