-- Markdown (GitHub) report of a results document: a title with the scenario and the device,
-- the table of the terminal printer (a skipped or failed configuration has its reason in the
-- status cell), then the warnings and the failures. Formats only.
local T = require "wlrun.report.table"

local M = {}

local MAX_WHY = 60

-- text from data as Markdown shows it, never as markup: HTML (<b>, <img ...>, <https://...>)
-- is written as entities, and a ']' escaped, so that no link or image ([text](url), ![..](..),
-- [text][ref]) can close (a report goes into PR comments and job summaries, which render both)
local ESCAPED = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ["]"] = "\\]" }
local function escape(s) return (s:gsub("[&<>%]]", ESCAPED)) end

-- a table cell: one line, pipes escaped
function M.cell(s)
  return (escape(tostring(s)):gsub("[\r\n]+", " "):gsub("|", "\\|"))
end

-- inline code that survives backticks inside
local function code(s)
  s = tostring(s)
  if s:find("`") then return "`` " .. s .. " ``" end
  return "`" .. s .. "`"
end

local function text(s) return (escape(tostring(s)):gsub("[\r\n]+", " ")) end

function M.render(doc)
  doc = T.printable(doc)
  local t = T.build(doc)
  local out = { "## " .. text(T.scenario_name(doc)), "" }
  local sc = type(doc.scenario) == "table" and doc.scenario or {}
  if sc.description then
    out[#out + 1] = text(sc.description)
    out[#out + 1] = ""
  end
  local facts = {}
  local dev, floor = T.device_line(doc.device), T.floor_line(doc.floor)
  if dev then facts[#facts + 1] = "- Device: " .. text(dev) end
  if floor then facts[#facts + 1] = "- Timing floor: " .. floor end
  if doc.started then
    facts[#facts + 1] = "- Started: " .. text(doc.started) .. (doc.finished and (", finished: " .. text(doc.finished)) or "")
  end
  if doc.complete == false then facts[#facts + 1] = "- **Incomplete**: the run was interrupted or is still going on" end
  if type(doc.wlrun) == "table" and doc.wlrun.version then facts[#facts + 1] = "- wlrun " .. text(doc.wlrun.version) end
  if #facts > 0 then
    for _, f in ipairs(facts) do out[#out + 1] = f end
    out[#out + 1] = ""
  end

  if #t.rows == 0 then
    out[#out + 1] = "No configurations."
  else
    local cols = t.columns
    local rows = {}
    for _, r in ipairs(t.rows) do
      local cells = {}
      for j = 1, #cols do cells[j] = M.cell(r.cells[j] or "") end
      if not r.ok and r.why ~= "" then
        cells[r.lead] = M.cell(r.cells[r.lead] .. ": " .. T.first_line(r.why, MAX_WHY))
      end
      rows[#rows + 1] = cells
    end
    local w = {}
    for j, col in ipairs(cols) do w[j] = math.max(3, T.width(M.cell(col.title))) end
    for _, cells in ipairs(rows) do
      for j, s in ipairs(cells) do w[j] = math.max(w[j], T.width(s)) end
    end
    local function pad(s, j)
      local n = w[j] - T.width(s)
      if n <= 0 then return s end
      return cols[j].right and (string.rep(" ", n) .. s) or (s .. string.rep(" ", n))
    end
    local function line(cells)
      local parts = {}
      for j = 1, #cols do parts[j] = pad(cells[j], j) end
      return "| " .. table.concat(parts, " | ") .. " |"
    end
    local titles, rule = {}, {}
    for j, col in ipairs(cols) do
      titles[j] = M.cell(col.title)
      rule[j] = col.right and (string.rep("-", w[j] - 1) .. ":") or string.rep("-", w[j])
    end
    out[#out + 1] = line(titles)
    out[#out + 1] = line(rule)
    for _, cells in ipairs(rows) do out[#out + 1] = line(cells) end
  end

  local warnings = T.warnings(doc)
  if #warnings > 0 then
    out[#out + 1] = ""
    out[#out + 1] = "### Warnings"
    out[#out + 1] = ""
    for _, x in ipairs(warnings) do
      local w = x.warning
      out[#out + 1] = ("- **#%s** %s: %s%s"):format(T.value(x.index), code(w.code), text(w.message or ""),
        w.hint and (" (hint: " .. text(w.hint) .. ")") or "")
    end
  end
  local failures = {}
  for i, c in ipairs(doc.configurations or {}) do
    if c.status == "failed" then
      failures[#failures + 1] = ("- **#%s** %s: %s"):format(T.value(c.index or i), code(c.kind or "?"),
        text(c.error or "failed"))
    end
  end
  if #failures > 0 then
    out[#out + 1] = ""
    out[#out + 1] = "### Failures"
    out[#out + 1] = ""
    for _, f in ipairs(failures) do out[#out + 1] = f end
  end
  return table.concat(out, "\n") .. "\n"
end

return M
