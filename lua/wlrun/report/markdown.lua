-- Markdown (GitHub) report of a results document: a title with the scenario and the device,
-- the table of the terminal printer (a skipped or failed configuration has its reason in the
-- status cell), then the warnings and the failures. Formats only.
local T = require "wlrun.report.table"

local M = {}

local MAX_WHY = 60

-- Text from data as Markdown shows it, never as markup (a report goes into PR comments and job
-- summaries, which render it): HTML (<b>, <img ...>, <https://...>) is written as entities, and
-- the inline markup characters (emphasis * _, strikethrough ~, code `, links and images [ ], a
-- table's | and the backslash itself) are escaped with a backslash, which CommonMark renders as
-- the character; a '_' inside a word (gemm_sweep) is no emphasis there and is left as it is
local ESCAPED = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;" }
local function inline(s)
  s = tostring(s):gsub("[&<>]", ESCAPED):gsub("[\\`*~%[%]|]", "\\%0"):gsub("[\r\n]+", " ")
  return (s:gsub("()_", function(i)
    if s:find("^%w_%w", i - 1) then return "_" end
    return "\\_"
  end))
end

-- a table cell: one line (a cell's text is inline: no block starts in it)
M.cell = inline

-- a text that starts a line or a list item, where a block marker would start a block (a list
-- item "- " "+ " "1. ", a heading "# ", a rule "---" or "==="): that marker escaped too
function M.text(s)
  s = inline(s)
  if s:find("^[#+%-=][%s#=%-]") or s:find("^[#+%-=]$") then return "\\" .. s end
  return (s:gsub("^(%d+)([.)])(%s)", "%1\\%2%3"):gsub("^(%d+)([.)])$", "%1\\%2"))
end

-- a code span that shows S as it is, whatever backticks it holds: fenced by a run of backticks
-- longer than any inside, and spaced from one that starts or ends it
function M.code(s)
  s = tostring(s):gsub("[\r\n]+", " ")
  local longest = 0
  for run in s:gmatch("`+") do longest = math.max(longest, #run) end
  local fence, pad = ("`"):rep(longest + 1), (s:find("^[` ]") or s:find("[` ]$")) and " " or ""
  return fence .. pad .. s .. pad .. fence
end

local code, text = M.code, M.text

local function add(out, lines)
  for _, l in ipairs(lines) do out[#out + 1] = l end
end

-- the title, the description and the facts of the run (device, timing floor, times, version)
local function head(out, doc)
  add(out, { "## " .. text(T.scenario_name(doc)), "" })
  local sc = type(doc.scenario) == "table" and doc.scenario or {}
  if sc.description then add(out, { text(sc.description), "" }) end
  local facts = {}
  local dev, floor = T.device_line(doc.device), T.floor_line(doc.floor)
  if dev then facts[#facts + 1] = "- Device: " .. text(dev) end
  if floor then facts[#facts + 1] = "- Timing floor: " .. floor end
  if doc.started then
    facts[#facts + 1] = "- Started: " .. text(doc.started)
      .. (doc.finished and (", finished: " .. text(doc.finished)) or "")
  end
  if doc.complete == false then facts[#facts + 1]
    = "- **Incomplete**: the run was interrupted or is still going on" end
  if type(doc.wlrun) == "table" and doc.wlrun.version then facts[#facts + 1] = "- wlrun "
    .. text(doc.wlrun.version) end
  if #facts > 0 then
    add(out, facts)
    out[#out + 1] = ""
  end
end

-- the cells of the rows; a configuration that is not ok has its reason in its lead cell
local function row_cells(t)
  local rows = {}
  for _, r in ipairs(t.rows) do
    local cells = {}
    for j = 1, #t.columns do cells[j] = M.cell(r.cells[j] or "") end
    if not r.ok and r.why ~= "" then
      cells[r.lead] = M.cell(r.cells[r.lead] .. ": " .. T.first_line(r.why, MAX_WHY))
    end
    rows[#rows + 1] = cells
  end
  return rows
end

-- A table's lines: the titles, the rule (a right-aligned column's ends with ':'), the rows, each
-- cell padded to its column's width. cols: {title, right}; rows: lists of cells made by M.cell.
function M.grid(cols, rows)
  local w = {}
  for j, col in ipairs(cols) do w[j] = math.max(3, T.width(M.cell(col.title))) end
  for _, cells in ipairs(rows) do
    for j = 1, #cols do w[j] = math.max(w[j], T.width(cells[j])) end
  end
  local function line(cells)
    local parts = {}
    for j, col in ipairs(cols) do
      local pad = string.rep(" ", w[j] - T.width(cells[j]))
      parts[j] = col.right and (pad .. cells[j]) or (cells[j] .. pad)
    end
    return "| " .. table.concat(parts, " | ") .. " |"
  end
  local titles, rule = {}, {}
  for j, col in ipairs(cols) do
    titles[j] = M.cell(col.title)
    rule[j] = col.right and (string.rep("-", w[j] - 1) .. ":") or string.rep("-", w[j])
  end
  local lines = { line(titles), line(rule) }
  for _, cells in ipairs(rows) do lines[#lines + 1] = line(cells) end
  return lines
end

-- a section of items under its title, when there are any
local function section(out, title, items)
  if #items == 0 then return end
  add(out, { "", "### " .. title, "" })
  add(out, items)
end

local function warning_items(doc)
  local items = {}
  for _, x in ipairs(T.warnings(doc)) do
    local w = x.warning
    items[#items + 1] = ("- **#%s** %s: %s%s"):format(T.value(x.index), code(w.code),
      text(w.message or ""),
      w.hint and (" (hint: " .. text(w.hint) .. ")") or "")
  end
  return items
end

local function failure_items(doc)
  local items = {}
  for i, c in ipairs(doc.configurations or {}) do
    if c.status == "failed" then
      items[#items + 1] = ("- **#%s** %s: %s"):format(T.value(c.index or i), code(c.kind or "?"),
        text(c.error or "failed"))
    end
  end
  return items
end

function M.render(doc)
  doc = T.printable(doc)
  local t = T.build(doc)
  local out = {}
  head(out, doc)
  if #t.rows == 0 then
    out[#out + 1] = "No configurations."
  else
    add(out, M.grid(t.columns, row_cells(t)))
  end
  section(out, "Warnings", warning_items(doc))
  section(out, "Failures", failure_items(doc))
  return table.concat(out, "\n") .. "\n"
end

return M
