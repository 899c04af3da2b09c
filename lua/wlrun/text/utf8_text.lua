-- Text from files made valid UTF-8 before a printer puts it in another language (an HTML page,
-- a gnuplot script): each byte that does not start a valid character becomes U+FFFD, so that
-- a stray byte can neither break the output's encoding nor join the next character.
local M = {}

function M.valid(s)
  if utf8.len(s) then return s end
  local parts, i = {}, 1
  while i <= #s do
    local n, bad = utf8.len(s, i)
    if n then
      parts[#parts + 1] = s:sub(i)
      break
    end
    parts[#parts + 1] = s:sub(i, bad - 1) .. "\u{FFFD}"
    i = bad + 1
  end
  return table.concat(parts)
end

return M
