-- The printers of `wlrun history` (wlrun.tools.history): aligned text tables of the runs, of
-- each configuration's series and of the shifts found, and the gate's lines. Formats only:
-- every number shown is in the document that -o writes as JSON. Every text of the database or a
-- results file (names, parameters, commits, times, files) goes out through wlrun.text.printable: an
-- escape sequence in the data cannot reach the terminal or fake a line of the output.
local T = require "wlrun.report.table"
local columns = require "wlrun.report.columns"
local printable = require("wlrun.text.printable").whole
local md = require "wlrun.report.markdown"

local M = {}

local finite = T.finite

-- a commit as shown: 10 hex digits, '+' when the work tree had changes, '-' when unknown
function M.commit_text(c)
  if c.commit == "" then return "-" end
  return c.commit:sub(1, 10) .. (c.dirty and "+" or "")
end

function M.change_text(c)
  if not finite(c) then return "-" end
  local s = ("%+.1f%%"):format(100 * c)
  return s == "-0.0%" and "+0.0%" or s
end

local function p_text(p)
  if not finite(p) then return "-" end
  return p >= 0.001 and ("%.3f"):format(p) or ("%.1e"):format(p)
end

local function params_text(params)
  local names = {}
  for k in pairs(params) do names[#names + 1] = k end
  table.sort(names)
  local s = T.describe(params, names)
  return s == "" and "(no parameters)" or s
end

local function plural(n, word) return ("%d %s%s"):format(n, word, n == 1 and "" or "s") end

-- a run that `add` was given (an entry of its document): added, or there already
local function added_line(r, db)
  local what = ("%s, %s, commit %s%s"):format(r.scenario,
    plural(r.configurations, "configuration"),
    M.commit_text(r), r.commit_source ~= "" and (" (" .. r.commit_source .. ")") or "")
  -- the main line's is not said
  if r.branch ~= "" and r.branch ~= "main" and r.branch ~= "master" then
    what = what .. (" on branch %s"):format(r.branch)
    if r.merge_base ~= "" then what = what .. (" (merge base %s)"):format(
      M.commit_text { commit = r.merge_base }) end
  end
  if not r.added then
    return ("'%s' is already in '%s' as run %d (added %s, commit %s): left as it is"):format(
      r.file, db, r.run, r.existing.time, M.commit_text { commit = r.existing.commit })
  end
  return ("added '%s' to '%s' as run %d: %s%s"):format(r.file, db, r.run, what,
    r.not_measured > 0 and ("; " .. plural(r.not_measured, "configuration")
      .. " not measured, left out") or "")
end

-- The printers below write into `out` with the style in force: text (aligned tables) or Markdown
-- (pipe tables and headings, for a pull request's comment).
local markdown = false

-- a Markdown cell: its markup escaped (wlrun.report.markdown), one line
local function md_cell(s) return md.cell(s or "") end

-- a text from the data inside a line of the output: in Markdown, its markup escaped
local function data(s) return markdown and md.cell(printable(s)) or s end

-- the cells escaped before they are aligned (an escape is wider than the byte it stands for)
local function lines_of(out, cols, rows)
  for _, r in ipairs(rows) do
    for j = 1, #cols do r[j] = r[j] and printable(r[j]) end
  end
  if markdown then
    local head, rule = {}, {}
    for j, c in ipairs(cols) do head[j], rule[j] = md_cell(c.title), c.right and "---:" or "---" end
    out[#out + 1] = "| " .. table.concat(head, " | ") .. " |"
    out[#out + 1] = "| " .. table.concat(rule, " | ") .. " |"
    for _, r in ipairs(rows) do
      local cells = {}
      for j = 1, #cols do cells[j] = md_cell(r[j]) end
      out[#out + 1] = "| " .. table.concat(cells, " | ") .. " |"
    end
    return
  end
  for _, l in ipairs(columns.align(cols, rows)) do out[#out + 1] = l end
end

-- a heading of its own: a line in text, a Markdown heading
local function title(text) return markdown and ("### " .. md_cell(printable(text))) or text end

local function show(doc, out)
  out[#out + 1] = title(("History in '%s': %s"):format(doc.database, plural(#doc.runs, "run")))
  if #doc.runs == 0 then return end
  out[#out + 1] = ""
  local cols = { { title = "run", right = true }, { title = "time" }, { title = "scenario" },
    { title = "device" },
    { title = "commit" }, { title = "configs", right = true }, { title = "file" } }
  local rows = {}
  for _, r in ipairs(doc.runs) do
    rows[#rows + 1] = { tostring(r.id), r.time, r.scenario, r.device ~= "" and r.device or "-",
      M.commit_text(r),
      tostring(r.configurations), r.file }
  end
  if doc.merge_base then -- a branch's series: which runs are main's (docs/history.md, "Branches")
    table.insert(cols, 6, { title = "branch" })
    for i, r in ipairs(doc.runs) do table.insert(rows[i], 6, r.branch ~= "" and r.branch or "-") end
  end
  lines_of(out, cols, rows)
end

local function heading(e)
  return ("%s · %s · %s (%s)"):format(e.scenario, e.device ~= "" and e.device or "no device",
    params_text(e.params),
    plural(e.commits, "commit"))
end

local function trend(doc, out)
  local cols = { { title = "commit" }, { title = "time" }, { title = "runs", right = true },
    { title = "median", right = true }, { title = "vs first", right = true },
      { title = "vs previous", right = true } }
  for i, e in ipairs(doc.configurations) do
    if i > 1 then out[#out + 1] = "" end
    out[#out + 1] = title(heading(e))
    local rows = {}
    for _, p in ipairs(e.points) do
      rows[#rows + 1] = { M.commit_text(p), p.time, tostring(p.runs), T.time(p.median),
        M.change_text(p.change_first),
        M.change_text(p.change_previous) }
    end
    lines_of(out, cols, rows)
  end
end

local function blame(doc, out)
  local s = doc.settings
  out[#out + 1] = (
    "Shifts that lasted %s or more on each side, of %s or more (Mann-Whitney over the commits' "
    .. "medians, permutation test, alpha %s):"):format(
    plural(s.min_runs, "commit"), columns.pct(s.min_effect), T.value(s.alpha))
  local cols = { { title = "scenario" }, { title = "device" }, { title = "parameters" },
    { title = "kind" },
    { title = "commit" }, { title = "before", right = true }, { title = "after", right = true },
    { title = "change", right = true }, { title = "p", right = true } }
  local rows, quiet = {}, 0
  for _, e in ipairs(doc.configurations) do
    local device = e.device ~= "" and e.device or "-"
    for _, x in ipairs(e.steps) do
      rows[#rows + 1] = { e.scenario, device, params_text(e.params), "step",
        ("%s (after %s)"):format(M.commit_text(x.first), M.commit_text(x.last_before)),
          T.time(x.before), T.time(x.after),
        M.change_text(x.change), p_text(x.p) }
    end
    for _, x in ipairs(e.drifts) do
      rows[#rows + 1] = { e.scenario, device, params_text(e.params), "drift",
        ("%s..%s"):format(M.commit_text(x.from), M.commit_text(x.to)), "", "",
          M.change_text(x.change), p_text(x.p) }
    end
    if #e.steps + #e.drifts == 0 then quiet = quiet + 1 end
  end
  if #rows > 0 then
    out[#out + 1] = ""
    lines_of(out, cols, rows)
    out[#out + 1] = ""
  end
  if quiet > 0 then
    out[#out + 1] = ("No lasting shift in %d of %s."):format(quiet,
      plural(#doc.configurations, "configuration"))
  end
end

local function gate_lines(doc, out)
  local g = doc.gate
  if not g then return end
  local head = ("Gate --fail-on %s: "):format(columns.pct(g.fail_on))
  if not g.failed then
    out[#out + 1] = head
      .. "passed (no configuration's latest commit significantly slower than its baseline by "
      .. "more than " ..
      columns.pct(g.fail_on) .. ")"
    return
  end
  out[#out + 1] = head
    .. ("FAILED: %s significantly slower than its baseline by more than %s:"):format(
    plural(g.failing, "configuration"), columns.pct(g.fail_on))
  for _, e in ipairs(doc.configurations) do
    local x = e.gate
    if x and x.failed then
      out[#out + 1] = ("%s%s · %s · %s: %s at %s against %s..%s (interval %s..%s)%s"):format(
        markdown and "- " or "  ",
        data(e.scenario),
        data(e.device ~= "" and e.device or "-"), data(params_text(e.params)),
          M.change_text(x.change), M.commit_text(x.latest),
        M.commit_text(x.baseline.from), M.commit_text(x.baseline.to), ("%.3f"):format(x.lo),
          ("%.3f"):format(x.hi),
        x.pinned
          and (
          "; baseline pinned since %s failed (wlrun history accept takes the new level)"):format(
          M.commit_text(x.pinned.since)) or x.merge_base
            and ("; baseline: %s's level at the merge base"):format(data(doc.main)) or "")
    end
  end
end

function M.gate_message(doc)
  local g = doc.gate
  local list = {}
  for _, e in ipairs(doc.configurations) do
    if e.gate and e.gate.failed then
      list[#list + 1] = ("%s %s (%s)"):format(e.scenario, params_text(e.params),
        M.change_text(e.gate.change))
    end
  end
  return printable(
    ("history: %s significantly slower than its baseline by more than %s: %s"):format(
    plural(g.failing, "configuration"), columns.pct(g.fail_on), table.concat(list, "; ")))
end

-- for wlrun report's page (wlrun.html.history): a series' heading and a p-value as here
M.heading, M.p_text, M.params_text = heading, p_text, params_text

-- the document as Markdown: the same tables and lines, for a pull request's comment
function M.markdown(doc)
  markdown = true
  local ok, text = pcall(M.text, doc)
  markdown = false
  if not ok then error(text, 0) end
  return text
end

local function added(doc, out)
  for _, r in ipairs(doc.runs) do out[#out + 1] = added_line(r, doc.database) end
end

local function accepted(doc, out)
  for _, a in ipairs(doc.accepted) do
    out[#out + 1] = ("accepted %s · %s · %s: its level from %s on is the baseline"):format(
      a.scenario, a.device ~= "" and a.device or "-", params_text(a.params),
      a.commit:sub(1, 12))
  end
end

function M.text(doc)
  local out = {}
  if doc.command == "add" or doc.command == "accept" then
    if doc.command == "add" then added(doc, out) else accepted(doc, out) end
    for i, l in ipairs(out) do out[i] = printable(l) end
    return #out > 0 and table.concat(out, "\n") .. "\n" or ""
  end
  if doc.merge_base then -- a branch's series (--branch)
    out[#out + 1] = ("Branch %s: %s's runs up to the merge base %s, then its own"):format(
      data(doc.branch), data(doc.main),
      M.commit_text { commit = doc.merge_base })
    out[#out + 1] = ""
  end
  if doc.command == "show" then
    show(doc, out)
  else
    if #doc.configurations == 0 then
      out[#out + 1] = ("No configuration in '%s' matches."):format(data(doc.database))
    elseif doc.command == "trend" then
      trend(doc, out)
    else
      blame(doc, out)
    end
    if doc.gate then
      out[#out + 1] = ""
      gate_lines(doc, out)
    end
  end
  -- the cells of the tables are already: no change to them
  for i, l in ipairs(out) do out[i] = printable(l) end
  return table.concat(out, "\n") .. "\n"
end

return M
