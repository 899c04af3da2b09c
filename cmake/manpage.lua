-- Writes wlrun's man page from the texts that wlrun prints, so that the page and the help never
-- differ: docs/cli.md (the text of `wlrun --help`) and what each subcommand's `wlrun TOOL --help`
-- prints, asked of the wlrun just built. Run at build time by that wlrun (cmake/install.cmake):
--   wlrun cmake/manpage.lua docs/cli.md OUT.1 VERSION WLRUN
-- Sections: NAME (the help's first line), SYNOPSIS (USAGE), DESCRIPTION (the text after it),
-- OPTIONS, CONFIGURATION, COMMANDS (each subcommand's own --help, in USAGE's order; the help's
-- short sections of the subcommands are left out for them), EXIT STATUS (EXIT CODES),
-- ENVIRONMENT, FILES, SEE ALSO; a section of the help that this script does not know is kept
-- under its own name. Lists ("    TERM   description", continued at the description's column)
-- become tagged paragraphs (.TP), the rest filled text; every word of the help is kept, in order
-- (tests/e2e/install_spec.lua checks that each line of each --help is in the page).
local input, output, version, wlrun = ...
assert(input and output and version and wlrun,
  "usage: wlrun cmake/manpage.lua docs/cli.md OUT.1 VERSION WLRUN")

local function read(path)
  local f = assert(io.open(path, "rb"))
  local text = assert(f:read("a"))
  f:close()
  return text
end

local function lines_of(text)
  local lines = {}
  for line in (text:gsub("\n$", "") .. "\n"):gmatch("(.-)\n") do
    assert(not line:find("\t"), "a tab in the help; it is laid out with spaces: " .. line)
    lines[#lines + 1] = line
  end
  return lines
end

-- the quoted argument of a shell command
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- what `wlrun ARGS` prints on standard output (exit status 0 wanted)
local function help_of(args)
  local p = assert(io.popen(q(wlrun) .. " " .. args .. " 2>/dev/null"))
  local text = p:read("a")
  local ok, how, code = p:close()
  assert(ok, ("%s %s: exit %s %s"):format(wlrun, args, tostring(how), tostring(code)))
  return text
end

-- a line of text for roff: backslash written as \e, '-' as a minus (options copied from the page
-- then work), a leading '.' or '\'' (a request) made text with \&
local function escape(line)
  line = line:gsub("\\", "\\e"):gsub("%-", "\\-")
  if line:find("^[.']") then line = "\\&" .. line end
  return line
end

local function quoted_arg(s) return '"' .. escape(s):gsub('"', '""') .. '"' end

-- a list's term in fonts: options bold, their arguments italic; a term with no option (a verb, a
-- file, an exit code, a variable) bold as a whole when `plain`, else its first word bold
local function term_fonts(term, plain)
  if plain then return "\\fB" .. escape(term) .. "\\fR" end
  local any_option = term:find("^%-") or term:find("[%s,]%-")
  local first = true
  return (term:gsub("[^%s,|%[%]]+", function(word)
    local bold = word:find("^%-") or (first and not any_option)
    first = false
    return (bold and "\\fB" or "\\fI") .. escape(word) .. "\\fR"
  end))
end

local function indent_of(line) return #line:match("^ *") end

-- Renders a block of help lines (no heading) into out: paragraphs filled, lists as .TP. Each list
-- item starts at indent 4 (`base`); its description starts after a run of two spaces, or at the
-- block's description column (the indent its continuation lines share) after one; lines indented
-- further continue it; a line of names alone is a term of its own that the next item's term joins
-- (.TQ).
local function render_block(out, lines, plain_terms)
  local counts, col = {}, nil
  for _, l in ipairs(lines) do
    local n = indent_of(l)
    if l ~= "" and n > 4 then counts[n] = (counts[n] or 0) + 1 end
  end
  for n, c in pairs(counts) do
    if not col or c > counts[col] or (c == counts[col] and n < col) then col = n end
  end
  -- "para": inside filled text; "item": inside a list item; "term": a term alone
  local state = "none"
  for _, line in ipairs(lines) do
    local n = indent_of(line)
    if line == "" then
      if state == "para" then state = "gap" end
    elseif n == 0 then
      if state ~= "para" then out[#out + 1] = ".PP" end
      out[#out + 1] = escape(line)
      state = "para"
    elseif n <= 4 or state == "none" or state == "gap" or state == "para" then
      local body = line:sub(n + 1)
      local term, desc = body:match("^(.-%S)  +(%S.*)$")
      if not term and col and #line > col and line:sub(col, col) == " "
        and line:sub(col + 1, col + 1) ~= " " then
        term, desc = line:sub(n + 1, col - 1):match("^(.-)%s*$"), line:sub(col + 1)
      end
      term = term or body
      -- the description's indent: as in the help, within reason
      out[#out + 1] = state == "term" and ".TQ" or (".TP %dn"):format(
        math.max(4, math.min((col or 28) - n, 24)))
      out[#out + 1] = term_fonts(term, plain_terms)
      if desc then
        out[#out + 1] = escape(desc)
        state = "item"
      else
        state = "term"
      end
    else -- a continuation of the item's description
      out[#out + 1] = escape(line:sub(n + 1))
      state = "item"
    end
  end
end

local function render_nofill(out, lines)
  out[#out + 1] = ".nf"
  for _, l in ipairs(lines) do out[#out + 1] = escape(l) end
  out[#out + 1] = ".fi"
end

-- ---- the main help: docs/cli.md, split into its sections ----
local lines = lines_of(read(input))
local name = table.remove(lines, 1)
assert(name:find("^wlrun %- "), input .. ":1: expected 'wlrun - ...' (the NAME line)")

local function is_heading(line) return line:find("^[A-Z][A-Z ,]*[A-Z]$")
  or line:find("^[A-Z][A-Z ,]*[A-Z] %(.*%)$") end

local sections, order = {}, {}
local current
for _, line in ipairs(lines) do
  if is_heading(line) then
    current = { heading = line, lines = {} }
    sections[line:match("^[A-Z][A-Z ,]*[A-Z]")] = current
    order[#order + 1] = current
  else
    assert(current or line == "", input .. ": text before the first section: " .. line)
    if current then table.insert(current.lines, line) end
  end
end
local function section(key)
  local s = assert(sections[key], input .. ": no section " .. key)
  s.used = true
  return s.lines
end

-- USAGE: the synopsis is its indented lines; the text after them describes wlrun
local usage, description = {}, {}
for _, l in ipairs(section("USAGE")) do
  if #description == 0 and l:find("^    ") then usage[#usage + 1] = l:sub(5)
  elseif #usage > 0 and (#description > 0 or l ~= "") then description[#description + 1] = l end
end

-- the subcommands, in USAGE's order, with their line there ("wlrun info   versions, ...")
local tools, tool_line = {}, {}
for _, l in ipairs(usage) do
  local tool = l:match("^wlrun ([a-z]+)")
  if tool and not tool_line[tool] then
    tools[#tools + 1] = tool
    tool_line[tool] = l
  end
end
-- the help's short sections of the subcommands ("COMPARE, PLOT, EXPORT (...)"): their own
-- --help stands for them
for _, s in ipairs(order) do
  local names = s.heading:match("^([A-Z][A-Z ,]*[A-Z])")
  local all = true
  for word in names:gmatch("[^, ]+") do all = all and tool_line[word:lower()] ~= nil end
  if all then s.used = true end
end

local out = {
  ('.TH WLRUN 1 "" "wlrun %s" "User Commands"'):format(version),
  ".nh", -- no hyphens inserted into options and paths
  ".ad l",
  ".SH NAME",
  escape(name),
  ".SH SYNOPSIS",
}
render_nofill(out, usage)
out[#out + 1] = ".SH DESCRIPTION"
render_block(out, description)
out[#out + 1] = ".SH OPTIONS"
render_block(out, section("OPTIONS"))
out[#out + 1] = ".SH CONFIGURATION"
render_block(out, section("CONFIGURATION"))

-- ---- COMMANDS: each subcommand's own help ----
local main_help = help_of("--help")
out[#out + 1] = ".SH COMMANDS"
for _, tool in ipairs(tools) do
  out[#out + 1] = ".SS " .. quoted_arg("wlrun " .. tool)
  local text = help_of(tool .. " --help")
  if text == main_help then -- (info: nothing of its own) its line of USAGE
    out[#out + 1] = escape(tool_line[tool]:gsub("^wlrun %S+%s*", ""))
  else
    local tl = lines_of(text)
    local syn = {}
    while tl[1] and tl[1] ~= "" do
      syn[#syn + 1] = table.remove(tl, 1):gsub("^Usage: ", ""):gsub("^       ", "")
    end
    assert(#syn > 0 and syn[1]:find("^wlrun " .. tool),
      ("wlrun %s --help: expected 'Usage: wlrun %s ...' first"):format(tool, tool))
    render_nofill(out, syn)
    render_block(out, tl)
  end
end

out[#out + 1] = ".SH EXIT STATUS"
render_block(out, section("EXIT CODES"), true)
out[#out + 1] = ".SH ENVIRONMENT"
render_block(out, section("ENVIRONMENT"), true)

-- whatever section the help grows that this script does not know
for _, s in ipairs(order) do
  if not s.used then
    out[#out + 1] = ".SH " .. quoted_arg(s.heading)
    render_block(out, s.lines)
  end
end

-- FILES: where the files named above are (the help names each where it is used)
out[#out + 1] = ".SH FILES"
local files = {
  { "wlrun.ini",
    "the settings of runs (CONFIGURATION), in the current directory; --config names another" },
  { ".wlrun/history.db",
    "the history database of wlrun history and report, at the root of the git repository; --db "
    .. "or [history] db names another" },
  { "~/.cache/wlrun/",
    "the compiled-kernel cache ($XDG_CACHE_HOME/wlrun where that is set); --cache-dir, "
    .. "[compile] cache_dir or WLRUN_CACHE_DIR names another" },
  { "PREFIX/lib/wlrun/libwlrun_trace.so",
    "the trace library that wlrun trace injects, found relative to the wlrun binary "
    .. "(../lib/wlrun/, or beside it); WLRUN_TRACE_LIB names another" },
  { "PREFIX/share/wlrun/",
    "the shipped recipes (scenarios/), examples (examples/) and documentation (docs/)" },
  { "PREFIX/include/wlrun/work.h", "the ABI of a user's library (docs/libraries.md)" },
}
for _, f in ipairs(files) do
  out[#out + 1] = ".TP"
  out[#out + 1] = "\\fI" .. escape(f[1]) .. "\\fR"
  out[#out + 1] = escape(f[2])
end
out[#out + 1] = ".PP"
out[#out + 1] = "PREFIX is where wlrun is installed: /usr from the .deb."

out[#out + 1] = ".SH SEE ALSO"
out[#out + 1] = "\\fBlua\\fR(1), \\fBgnuplot\\fR(1), \\fBgit\\fR(1), \\fBbusted\\fR(1)"
out[#out + 1] = ".PP"
out[#out + 1]
  = "The documentation in PREFIX/share/wlrun/docs/ (README.md first), the docs/ named above."

local tmp = output .. ".tmp"
local f = assert(io.open(tmp, "wb"))
assert(f:write(table.concat(out, "\n"), "\n"))
assert(f:close())
assert(os.rename(tmp, output))
