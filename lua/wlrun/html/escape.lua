-- Text from files (scenario and parameter names, kernel names, warnings, commits) made safe for
-- an HTML page: the one way a string enters wlrun report's markup. Bytes that are not UTF-8 are
-- U+FFFD, control characters (but tab and newline) are spaces, and the five characters that
-- mean something in HTML (& < > " ') are character references, so that the result can stand
-- in element text and in a quoted attribute value alike (of HTML and of inline SVG). Never used
-- for the inside of <script> or <style>, which hold no data.
local utf8_text = require "wlrun.text.utf8_text"

local M = {}

local REFS = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;" }

-- any value as text that is safe in HTML text and attribute values
function M.text(v)
  local s = utf8_text.valid(tostring(v == nil and "" or v))
  s = s:gsub("[%z\1-\8\11-\31\127]", " ")
  return (s:gsub("[&<>\"']", REFS))
end

-- a value for an id or a fragment (#...): letters, digits, '-' and '_' only
function M.id(v) return (tostring(v):gsub("[^%w_-]", "-")) end

return M
