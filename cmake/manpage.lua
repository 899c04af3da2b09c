-- Writes wlrun's man page from docs/cli.md, the text that `wlrun --help` prints, so that the two
-- never differ: run at build time by the wlrun just built (cmake/install.cmake).
--   wlrun cmake/manpage.lua docs/cli.md OUT.1 VERSION
-- The first line ("wlrun - what it is") is the NAME section; a line of capitals at the margin,
-- maybe followed by "(...)", starts a section; everything else is kept as it is, line for line,
-- in no-fill mode (the help is already laid out), with roff's special characters escaped.
local input, output, version = ...
assert(input and output and version, "usage: wlrun cmake/manpage.lua docs/cli.md OUT.1 VERSION")

local function read(path)
  local f = assert(io.open(path, "rb"))
  local text = assert(f:read("a"))
  f:close()
  return text
end

-- a line of text for roff: backslash written as \e, '-' as a minus (options copied from the page
-- then work), a leading '.' or '\'' (a request) made text with \&
local function escape(line)
  line = line:gsub("\\", "\\e"):gsub("%-", "\\-")
  if line:find("^[.']") then line = "\\&" .. line end
  return line
end

local function is_heading(line) return line:find("^[A-Z][A-Z ,]*[A-Z]$") or line:find("^[A-Z][A-Z ,]*[A-Z] %(.*%)$") end

local text = read(input)
local lines = {}
for line in (text:gsub("\n$", "") .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = line end
local name = table.remove(lines, 1)
assert(name:find("^wlrun %- "), input .. ":1: expected 'wlrun - ...' (the NAME line)")

local out = {
  ('.TH WLRUN 1 "" "wlrun %s" "User Commands"'):format(version),
  ".SH NAME",
  escape(name),
}
local open = false
for i, line in ipairs(lines) do
  if is_heading(line) then
    if open then out[#out + 1] = ".fi" end
    -- the heading's own blank line before it is roff's business
    if out[#out] == "" then table.remove(out) end
    out[#out + 1] = ('.SH "%s"'):format(escape(line):gsub('"', '""'))
    out[#out + 1] = ".nf"
    open = true
  elseif open or line ~= "" then
    if not open then
      out[#out + 1] = ".SH DESCRIPTION"
      out[#out + 1] = ".nf"
      open = true
    end
    out[#out + 1] = escape(line)
  end
  assert(not line:find("\t"), ("%s:%d: a tab; the help is laid out with spaces"):format(input, i + 1))
end
if open then out[#out + 1] = ".fi" end

local tmp = output .. ".tmp"
local f = assert(io.open(tmp, "wb"))
assert(f:write(table.concat(out, "\n"), "\n"))
assert(f:close())
assert(os.rename(tmp, output))
