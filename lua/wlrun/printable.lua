-- Text from data (a results file, a trace, a script's names and messages) as it may be printed
-- on a terminal or in a text file meant to be read: control characters (C0, DEL, C1) and bytes
-- that are not UTF-8 become \xHH, so that no escape sequence, carriage return or stray byte in
-- the data can reach the terminal, move the cursor or fake a line of output.
--
--   printable.text(s [, max]) -> text   cut to max bytes (default 120) at a character boundary,
--                                       with "..." when cut; max = false: never cut
--   printable.whole(s) -> text          printable.text(s, false): a table cell, a message
local printable = {}

local BAD = "[\0-\31\127-\255]"

local function hex(bytes) return (bytes:gsub(".", function(c) return ("\\x%02x"):format(c:byte()) end)) end

local function escape(s)
  local out, i, n = {}, 1, #s
  while i <= n do
    local b = s:byte(i)
    if b >= 0x20 and b < 0x7f then
      local j = s:find(BAD, i) or n + 1
      out[#out + 1] = s:sub(i, j - 1)
      i = j
    else
      local len = b >= 0x80 and utf8.len(s, i, i) == 1 and utf8.offset(s, 2, i) - i or 1
      local c = s:sub(i, i + len - 1)
      local cp = len > 1 and utf8.codepoint(c) or b
      out[#out + 1] = (cp < 0x20 or (cp >= 0x7f and cp < 0xa0) or len == 1) and hex(c) or c
      i = i + len
    end
  end
  return table.concat(out)
end

function printable.text(s, max)
  if max == nil then max = 120 end
  s = tostring(s)
  -- every byte gives at least one character: what lies past max + 8 bytes is cut anyway (a name
  -- of a megabyte is not escaped whole)
  if max and #s > max + 8 then s = s:sub(1, max + 8) end
  if s:find(BAD) then s = escape(s) end
  if not max or #s <= max then return s end
  local cut = max - 3
  while cut > 0 and (s:byte(cut + 1) or 0) & 0xc0 == 0x80 do cut = cut - 1 end -- not inside a UTF-8 character
  local head = s:sub(1, cut):gsub("\\x?%x?$", "") -- nor inside an escape
  return head .. "..."
end

function printable.whole(s) return printable.text(s, false) end

return printable
