-- A plain HTML <table> of wlrun report's page: readable as it is, without JavaScript; the page's
-- script (wlrun.html.sort_script) sorts it by a column when its header is clicked, by each
-- cell's data-v (the number behind the text: "1.23 ms" sorts as 0.00123) or else its text.
--
--   table.render(cols, rows, id) -> html
--     cols: { {title =, right = bool} ... }
--     rows: { {cells = {text...}, keys = {value...}, why = text, lead = n, class = name} ... }:
--           a cell is text (escaped here) or {html = markup} (markup made by wlrun, like an SVG);
--           keys[j] a number (data-v) or nil; with `why`, only the first `lead` cells are shown
--           and the text `why` spans the other columns (a configuration without a measurement)
local esc = require "wlrun.html.escape"
local json = require "wlrun.json"
local units = require "wlrun.text.units"

local M = {}

local finite = units.finite

local function cell(tag, content, class, key, span)
  local attrs = {}
  if class then attrs[#attrs + 1] = (' class="%s"'):format(class) end
  if span and span > 1 then attrs[#attrs + 1] = (' colspan="%d"'):format(span) end
  -- digits that read back the same
  if finite(key) then attrs[#attrs + 1] = (' data-v="%s"'):format(json.encode(key)) end
  if tag == "th" then attrs[#attrs + 1] = ' scope="col"' end
  local body = type(content) == "table" and content.html or esc.text(content)
  return ("<%s%s>%s</%s>"):format(tag, table.concat(attrs), body, tag)
end

function M.render(cols, rows, id)
  local out = { ('<table class="sortable" id="%s"><thead><tr>'):format(esc.id(id)) }
  for _, c in ipairs(cols) do out[#out + 1] = cell("th", c.title, c.right and "num") end
  out[#out + 1] = "</tr></thead><tbody>"
  for _, r in ipairs(rows) do
    out[#out + 1] = r.class and ('<tr class="%s">'):format(esc.text(r.class)) or "<tr>"
    local keys = r.keys or {}
    local upto = r.why and r.lead or #cols
    for j = 1, upto do out[#out + 1] = cell("td", r.cells[j] or "", cols[j].right and "num",
      keys[j]) end
    if r.why and upto < #cols then out[#out + 1] = cell("td", r.why, "why", nil, #cols - upto) end
    out[#out + 1] = "</tr>"
  end
  out[#out + 1] = "</tbody></table>"
  return table.concat(out)
end

return M
