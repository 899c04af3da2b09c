-- Running gnuplot for wlrun plot: finding it, a private directory for its script and data,
-- the script's frame (encoding, terminal, output), and its run.
local util = require "wlrun.tools.util"

local M = {}

local TOOL = "plot"

local function fail(kind, msg) util.fail(kind, TOOL, msg) end

local function quote_sh(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- a gnuplot string literal (single quotes: only '' is special)
local function gq(s) return "'" .. tostring(s):gsub("'", "''") .. "'" end
M.quote = gq

function M.find()
  local g = os.getenv("WLRUN_GNUPLOT")
  if g == "" then g = nil end
  g = g or "gnuplot"
  local ok = os.execute("command -v " .. quote_sh(g) .. " >/dev/null 2>&1")
  if not ok then
    fail("io", ("gnuplot is not installed%s: install it (Debian, Ubuntu: apt-get install gnuplot-nox)"):format(
      os.getenv("WLRUN_GNUPLOT") and (" ('" .. g .. "' from WLRUN_GNUPLOT not found)") or ""))
  end
  return g
end

function M.make_dir(path)
  local ok = os.execute("mkdir -p " .. quote_sh(path))
  if not ok then fail("io", ("cannot create the directory '%s'"):format(path)) end
end

function M.temp_dir()
  local p = os.tmpname()
  os.remove(p)
  M.make_dir(p)
  return p
end

local function write_raw(path, text)
  local f, err = io.open(path, "wb")
  if not f then fail("io", ("cannot write '%s': %s"):format(path, tostring(err))) end
  f:write(text)
  f:close()
end

-- renders: writes the data files and the script in dir, runs gnuplot, returns the image bytes
function M.render(gp, dir, term, ext, body, files)
  for name, text in pairs(files) do write_raw(dir .. "/" .. name, text) end
  local image = "plot." .. ext
  local script = table.concat({
    "# made by wlrun plot; run it again with: cd this directory && gnuplot plot.gp",
    "set encoding utf8",
    term,
    ("set output %s"):format(gq(image)),
    "set border lw 1",
    "set grid xtics ytics lc rgb '#dddddd' lw 1",
    body,
    "unset output",
  }, "\n") .. "\n"
  write_raw(dir .. "/plot.gp", script)
  local log = dir .. "/gnuplot.log"
  local ok, how, code = os.execute(("cd %s && %s plot.gp >gnuplot.log 2>&1"):format(quote_sh(dir), quote_sh(gp)))
  local f = io.open(log, "rb")
  local msg = f and f:read("a") or ""
  if f then f:close() end
  if not ok then
    fail("io", ("gnuplot failed (%s %s) on %s/plot.gp: %s"):format(tostring(how), tostring(code), dir,
      msg:gsub("%s+$", "")))
  end
  local img = io.open(dir .. "/" .. image, "rb")
  local bytes = img and img:read("a")
  if img then img:close() end
  if not bytes or #bytes == 0 then fail("io", "gnuplot wrote no image: " .. msg:gsub("%s+$", "")) end
  return bytes
end

-- removes the directory and what is in it (no shell)
function M.remove_dir(dir) require("wlrun.isolate").remove_dir(dir) end

return M
