-- Blanks (spaces, tabs, line ends) cut from the ends of a text, in time linear in its length:
-- Lua's patterns "%s+$" and "^%s*(.-)%s*$" take time quadratic in a long run of blanks (a
-- parameter's value padded into a table row, a hostile option), which these never do.
--   trim.right(s) -> s without the blanks at its end
--   trim.both(s)  -> s without the blanks at either end
local trim = {}

local function blank(b) return b == 32 or (b >= 9 and b <= 13) end

function trim.right(s)
  local i = #s
  while i > 0 and blank(s:byte(i)) do i = i - 1 end
  return s:sub(1, i)
end

function trim.both(s)
  local first = s:find("%S")
  if not first then return "" end
  return trim.right(s):sub(first)
end

return trim
