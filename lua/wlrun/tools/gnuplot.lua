-- Running gnuplot for wlrun plot: finding it, a private directory for its script and data,
-- the script's frame (encoding, terminal, output), its run, and the only two ways a value
-- enters gnuplot code: M.string (text) and M.number (numbers). No shell anywhere: gnuplot is
-- started with a list of arguments in the directory of its files.
local process = require "wlrun.process"
local trim = require "wlrun.text.trim"
local utf8_text = require "wlrun.text.utf8_text"
local isolate = require "wlrun.run.isolate"
local cli = require "wlrun.tools.cli"

local M = {}

local TOOL = "plot"

local function fail(kind, msg) cli.fail(kind, TOOL, msg) end

M.LIMIT = 500 -- characters of one text in a plot; more are cut, with "…"

-- Text as a gnuplot string literal, whatever its bytes. A double-quoted literal in which:
--   control characters (a newline would end the command and start the next) are spaces;
--   bytes that are not UTF-8 are U+FFFD, and text longer than M.LIMIT characters is cut;
--   the characters gnuplot treats specially in such a literal are escaped: \ and " (\\, \"),
--   ` (command substitution) and @ (macros) as octal escapes, so that the line holds neither;
--   with `format` (tic labels, which gnuplot reads as formats), % is doubled.
-- Enhanced-text markup (^ _ @ { }) stays text: the terminals are noenhanced.
-- (Not single quotes, which need no escapes: gnuplot 5.4 misreads two quotes in a row there.)
function M.string(s, format)
  s = tostring(s)
  if #s > 4 * M.LIMIT then s = s:sub(1, 4 * M.LIMIT) end
  s = utf8_text.valid((s:gsub("[%z\1-\31\127]", " ")))
  if utf8.len(s) > M.LIMIT then s = s:sub(1, utf8.offset(s, M.LIMIT + 1) - 1) .. "…" end
  if format then s = s:gsub("%%", "%%%%") end
  return '"' .. s:gsub('[\\"`@]', { ["\\"] = "\\\\", ['"'] = '\\"', ["`"] = "\\140",
    ["@"] = "\\100" }) .. '"'
end

-- A number as gnuplot reads it: an integer, or a finite float with the digits that read back
-- the same; anything else is refused (kind usage), naming `what` it was
function M.number(v, what)
  if math.type(v) == "integer" then return ("%d"):format(v) end
  if math.type(v) == "float" and v == v and v ~= math.huge
    and v ~= -math.huge then return ("%.17g"):format(v) end
  fail("usage", ("%s: %s is not a finite number, which a plot needs"):format(what
    or "a value to plot", tostring(v)))
end

-- the absolute path of gnuplot (WLRUN_GNUPLOT, or gnuplot in PATH)
function M.find()
  local g = os.getenv("WLRUN_GNUPLOT")
  if g == "" then g = nil end
  local path = process.find_program(g or "gnuplot")
  if not path then
    fail("io",
      ("gnuplot is not installed%s: install it (Debian, Ubuntu: apt-get install "
      .. "gnuplot-nox)"):format(
      g and (" ('" .. g .. "' from WLRUN_GNUPLOT not found)") or ""))
  end
  return path
end

-- makes the directory path and those above it that are missing
function M.make_dir(path) cli.make_dirs(TOOL, path) end

-- a new private directory (mkdtemp)
function M.temp_dir() return isolate.temp_dir("wlrun-plot-", TOOL) end

local function write_raw(path, text)
  local f, err = io.open(path, "wb")
  if not f then fail("io", ("cannot write '%s': %s"):format(path, tostring(err))) end
  local ok, werr = f:write(text)
  local closed, cerr = f:close()
  if not (ok and closed) then fail("io", ("cannot write '%s': %s"):format(path,
    tostring(werr or cerr))) end
end

-- renders: writes the data files and the script in dir, runs gnuplot there, returns the image
function M.render(gp, dir, term, ext, body, files)
  for name, text in pairs(files) do write_raw(dir .. "/" .. name, text) end
  local image = "plot." .. ext
  local script = table.concat({
    "# made by wlrun plot; run it again with: cd this directory && gnuplot plot.gp",
    "set encoding utf8",
    term,
    ("set output %s"):format(M.string(image)),
    "set border lw 1",
    "set grid xtics ytics lc rgb '#dddddd' lw 1",
    body,
    "unset output",
  }, "\n") .. "\n"
  write_raw(dir .. "/plot.gp", script)
  local log = dir .. "/gnuplot.log"
  local r = process.spawn({ gp, "plot.gp" }, { cwd = dir, stdin = "/dev/null", stdout = log,
    stderr = log })
  local f = io.open(log, "rb")
  local msg = trim.right(f and f:read("a") or "")
  if f then f:close() end
  if r.how ~= "exit" or r.code ~= 0 then
    local how = r.how == "exit" and ("exit " .. r.code) or r.how == "signal"
      and ("signal " .. r.signal) or r.how
    fail("io", ("gnuplot failed (%s) on %s/plot.gp: %s"):format(how, dir, msg))
  end
  local img = io.open(dir .. "/" .. image, "rb")
  local bytes = img and img:read("a")
  if img then img:close() end
  if not bytes or #bytes == 0 then fail("io", "gnuplot wrote no image: " .. msg) end
  return bytes
end

-- removes the directory and what is in it (no shell, no symbolic link followed)
function M.remove_dir(dir) isolate.remove_dir(dir) end

return M
