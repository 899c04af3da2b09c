-- The frame of wlrun report's page: one HTML file that holds everything it shows (its style,
-- its plots as inline SVG, its one script) and loads nothing. Its Content Security Policy lets
-- the browser run only that script and apply only that style, named by their SHA-256, and load
-- nothing at all: markup that a results file might have smuggled past the escaping could still
-- not run or fetch. The generator line marks the file as a report (wlrun.tools.report replaces
-- a previous report, and nothing else).
--
--   page.render { title =, version =, summary = html or nil, nav = { {id, text} ... }, body = html
-- } -> text
--     (the summary, where there is one, comes first, before the contents)
local esc = require "wlrun.html.escape"
local sha256 = require "wlrun.html.sha256"
local sort_script = require "wlrun.html.sort_script"

local M = {}

M.GENERATOR = "wlrun report"

M.STYLE = [[
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1b1b1b;
  background: #fff; margin: 0 auto; max-width: 1280px; padding: 0 16px 48px; }
h1 { font-size: 1.6em; margin: 20px 0 4px; }
h2 { font-size: 1.3em; border-bottom: 1px solid #d0d0d0; padding-bottom: 4px; margin-top: 2.2em; }
h3 { font-size: 1.05em; margin: 1.4em 0 0.4em; }
code, pre, dd { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
pre { background: #f6f6f6; padding: 8px; overflow-x: auto; white-space: pre-wrap; }
nav ul { columns: 2; padding-left: 20px; }
.wrap { overflow-x: auto; }
table { border-collapse: collapse; margin: 6px 0 12px; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 9px; border-bottom: 1px solid #e3e3e3; text-align: left; vertical-align: middle; }
th { background: #f2f2f2; white-space: nowrap; }
th[tabindex] { cursor: pointer; }
th[aria-sort="ascending"]::after { content: " \25B2"; }
th[aria-sort="descending"]::after { content: " \25BC"; }
.num { text-align: right; white-space: nowrap; }
td.why { color: #8a1c1c; }
tr.slower td { background: #fdeaea; }
tr.faster td { background: #e7f5ea; }
tr.failed td, tr.skipped td { color: #666; }
.muted { color: #666; }
.bad { color: #a01818; font-weight: 600; }
dl.fields { display: grid; grid-template-columns: fit-content(22em) minmax(0, 1fr); gap: 1px 14px; margin: 4px 0; }
dl.fields dt { color: #555; overflow-wrap: anywhere; }
dl.fields dd { margin: 0; overflow-wrap: anywhere; }
dl.fields dl.fields { margin: 0; }
ul.warnings li { margin: 2px 0; }
svg { display: block; overflow: visible; }
svg.trend { width: 100%; height: auto; }
.good { color: #1f6b2c; font-weight: 600; }
svg text { font: 10px system-ui, sans-serif; fill: #444; }
svg .axis { stroke: #888; }
svg .grid { stroke: #ececec; }
.dist .samples circle { fill: #1f6fb4; fill-opacity: 0.45; }
.dist .box { fill: #d4e4f4; stroke: #1f6fb4; }
.dist .whisker { stroke: #1f6fb4; }
.dist .median { stroke: #c62828; stroke-width: 2; }
.trend .series { fill: none; stroke: #1f6fb4; stroke-width: 1.5; }
.trend .point { fill: #1f6fb4; }
.trend .level { stroke: #2e7d32; stroke-dasharray: 6 3; }
.trend .step { stroke: #c62828; stroke-width: 1.5; stroke-dasharray: 4 2; }
.trend .step-label { fill: #c62828; font-weight: 600; }
.trend .drift { fill: #ef6c00; fill-opacity: 0.12; }
footer { margin-top: 3em; color: #666; font-size: 12px; }
]]

function M.policy(script, style)
  return (
    "default-src 'none'; script-src %s; style-src %s; img-src data:; base-uri 'none'; "
    .. "form-action 'none'"):format(
    sha256.csp_source(script), sha256.csp_source(style))
end

function M.render(o)
  local script = sort_script
  local out = {
    "<!DOCTYPE html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    ('<meta name="generator" content="%s %s">'):format(M.GENERATOR, esc.text(o.version or "")),
    ('<meta http-equiv="Content-Security-Policy" content="%s">'):format(M.policy(script, M.STYLE)),
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    "<title>" .. esc.text(o.title) .. "</title>",
    "<style>" .. M.STYLE .. "</style>",
    "</head>",
    "<body>",
    "<header><h1>" .. esc.text(o.title) .. "</h1></header>",
  }
  if o.summary then out[#out + 1] = o.summary end -- the first content: what a reader comes for
  if o.nav and #o.nav > 1 then
    out[#out + 1] = "<nav><ul>"
    for _, n in ipairs(o.nav) do
      out[#out + 1] = ('<li><a href="#%s">%s</a></li>'):format(esc.id(n[1]), esc.text(n[2]))
    end
    out[#out + 1] = "</ul></nav>"
  end
  out[#out + 1] = "<main>"
  out[#out + 1] = o.body
  out[#out + 1] = "</main>"
  out[#out + 1] = (
    "<footer>Made by wlrun %s (wlrun report). The page loads nothing: its plots are inline SVG; "
    .. "click a column's header to sort a table.</footer>"):format(esc.text(o.version or ""))
  out[#out + 1] = "<script>" .. script .. "</script>"
  out[#out + 1] = "</body>"
  out[#out + 1] = "</html>"
  return table.concat(out, "\n") .. "\n"
end

return M
