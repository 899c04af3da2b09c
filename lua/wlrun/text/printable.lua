-- Text from data (a results file, a trace, a script's names and messages) as it may be printed
-- on a terminal or in a text file meant to be read: control characters (C0, DEL, C1), characters
-- that show nothing (U+FEFF, U+200B, U+202E, ...) and bytes that are not UTF-8 become \xHH, so
-- that no escape sequence, carriage return, stray byte or hidden character in the data can reach
-- the terminal unseen, move the cursor or fake a line of output.
--
--   printable.text(s [, max [, keep]]) -> text   cut to max bytes (default 120) at a character
--                        boundary, with "..." when cut; max = false: never cut; keep: control
--                        characters left as they are ("\n")
--   printable.whole(s) -> text      printable.text(s, false): a table cell, a name, a message
--   printable.lines(s) -> text      text of several lines (an error with its traceback): newlines
--                                   kept, a tab as two spaces, every other control as \xHH
--   printable.data(v [, lines [, keep]]) -> v  a copy of a value (a results document) with every
--                        string, key or value, made printable.whole, or printable.lines where its
--                        field's name is in the set lines ({error = true}); keep: control
--                        characters left in every string (CSV: "\t\n"); tables are copied only
--                        where something changed (with their metatables); the printers of text
--                        start here
--
-- A backslash is left as it is: "\x1b" in the output is either an escape or those four
-- characters in the data (JSON and CSV keep the data).
local core = require "wlrun.core"

local printable = {}

local BAD = "[\0-\31\127-\255]"

local function hex(bytes) return (bytes:gsub(".",
  function(c) return ("\\x%02x"):format(c:byte()) end)) end

-- characters that show nothing (a byte order mark, a zero-width space or joiner, a direction
-- override that reorders what follows, a tag): written \xHH too, so that the text shows they
-- are there (the same set as the messages' printer, src/host/lhost.c)
local function invisible(cp)
  return cp == 0xad or cp == 0x61c or cp == 0x180e or (cp >= 0x200b and cp <= 0x200f)
    or (cp >= 0x2028 and cp <= 0x202e) or (cp >= 0x2060 and cp <= 0x206f) or cp == 0xfeff
    or (cp >= 0xfff9 and cp <= 0xfffb) or (cp >= 0xe0000 and cp <= 0xe007f)
end

local function escape(s, keep)
  local out, i, n = {}, 1, #s
  while i <= n do
    local b = s:byte(i)
    if (b >= 0x20 and b < 0x7f) or (b < 0x20 and keep and keep:find(string.char(b), 1, true)) then
      local j = s:find(BAD, i + 1) or n + 1
      out[#out + 1] = s:sub(i, j - 1)
      i = j
    else
      local len = b >= 0x80 and utf8.len(s, i, i) == 1 and utf8.offset(s, 2, i) - i or 1
      local c = s:sub(i, i + len - 1)
      local cp = len > 1 and utf8.codepoint(c) or b
      out[#out + 1] = (cp < 0x20 or (cp >= 0x7f and cp < 0xa0) or len == 1 or invisible(cp))
        and hex(c) or c
      i = i + len
    end
  end
  return table.concat(out)
end

function printable.text(s, max, keep)
  if max == nil then max = 120 end
  s = tostring(s)
  -- every byte gives at least one character: what lies past max + 8 bytes is cut anyway (a name
  -- of a megabyte is not escaped whole)
  if max and #s > max + 8 then s = s:sub(1, max + 8) end
  if s:find(BAD) then s = escape(s, keep) end
  if not max or #s <= max then return s end
  local cut = max - 3
  -- not inside a UTF-8 character
  while cut > 0 and (s:byte(cut + 1) or 0) & 0xc0 == 0x80 do cut = cut - 1 end
  local head = s:sub(1, cut):gsub("\\x?%x?$", "") -- nor inside an escape
  return head .. "..."
end

function printable.whole(s) return printable.text(s, false) end

function printable.lines(s) return printable.text((tostring(s):gsub("\t", "  ")), false, "\n") end

local function copy(v, lines, keep, key, seen)
  if type(v) == "string" then
    if not v:find(BAD) then return v end
    if lines and lines[key] then return printable.lines(v) end
    return printable.text(v, false, keep)
  end
  if type(v) ~= "table" then return v end
  if seen[v] then return seen[v] end
  seen[v] = v
  local changed
  for k, x in pairs(v) do
    local tk, tx = type(k), type(x)
    -- a number or a boolean is copied as it is: the samples of a document pass without a call
    if tk == "string" or tk == "table" or tx == "string" or tx == "table" then
      local k2, x2 = copy(k, nil, keep, nil, seen), copy(x, lines, keep, k, seen)
      if k2 ~= k or x2 ~= x then
        changed = changed or {}
        changed[#changed + 1] = { k, k2, x2 }
      end
    end
  end
  if not changed then return v end
  local t = {}
  for k, x in pairs(v) do t[k] = x end
  for _, c in ipairs(changed) do
    t[c[1]] = nil
    t[c[2]] = c[3]
  end
  seen[v] = t
  return setmetatable(t, getmetatable(v))
end

-- a value whose every string is printable ASCII is returned as it is, found so in C (a results
-- document of 400 configurations: 28 ms of walking in Lua)
function printable.data(v, lines, keep)
  if core.printable_clean(v) then return v end
  return copy(v, lines, keep, nil, {})
end

return printable
