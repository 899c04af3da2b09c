-- Printers of the results document (docs/results.md): each formats the document and computes
-- nothing; statistics, metrics and warnings are in it.
--   report.render(doc, format) -> string        format: table, plain, csv, markdown, json
--   report.format_for_path(path) -> format|nil  from the extension: .json .csv .md .txt
--   report.write(doc, path [, format])          whole (wlrun.text.files), or "-": stdout
local core = require "wlrun.core"
local files = require "wlrun.text.files"
local stdio = require "wlrun.text.stdio"

local report = {}

report.formats = { "table", "plain", "csv", "markdown", "json" }

local printers = {
  table = require "wlrun.report.table", plain = require "wlrun.report.plain",
    csv = require "wlrun.report.csv",
  markdown = require "wlrun.report.markdown", json = require "wlrun.report.json",
}

local extensions = { json = "json", csv = "csv", md = "markdown", txt = "plain" }

function report.render(doc, format)
  format = format or "table"
  local printer = printers[format]
  if not printer then
    core.error("usage", ("unknown output format '%s' (expected %s)"):format(tostring(format),
      table.concat(report.formats, ", ")), 0)
  end
  return printer.render(doc)
end

function report.format_for_path(path)
  local ext = tostring(path):match("%.([^./\\]+)$")
  return ext and extensions[ext:lower()] or nil
end

function report.write(doc, path, format)
  format = format or (path == "-" and "json") or report.format_for_path(path)
  if not format then
    core.error("usage",
      ("cannot tell the output format of '%s' from its extension (.json .csv .md .txt)"):format(
      tostring(path)), 0)
  end
  return report.write_text(report.render(doc, format), path, "results")
end

-- writes text to path whole (wlrun.text.files: a new file beside it, renamed over it); errors are
-- kind io and name the file ("cannot write WHAT to 'path': reason"); "-" is standard output
function report.write_text(text, path, what)
  if path == "-" then
    stdio.write(text)
    return path
  end
  local ok, err = files.write(path, text)
  if not ok then core.error("io", ("cannot write %s to '%s': %s"):format(what or "output", path,
    err), 0) end
  return path
end

-- `require "wlrun.report.init"` (a searcher without init.lua fallback) registers the module
-- under its proper name too
package.loaded["wlrun.report"] = package.loaded["wlrun.report"] or report

return report
