-- `wlrun plot FILE.json -o OUT.svg|OUT.png [options]` (docs/compare.md): plots through gnuplot.
--   sweep  a metric against a swept parameter, one line per combination of the other
--          parameters (log2 x axis when the values are powers of two)
--   hist   the distribution of one configuration's samples
--   ratio  the ratios NEW/BASE of a comparison (wlrun compare ... -o cmp.json) with their
--          intervals
-- The kinds write their gnuplot script and data (wlrun.tools.plot_kinds); the script and its
-- data are written to a temporary directory (or --keep DIR), gnuplot renders into it, and the
-- image is then written to OUT atomically.
local stdio = require "wlrun.text.stdio"
local cli = require "wlrun.tools.cli"
local gnuplot = require "wlrun.tools.gnuplot"
local kinds = require "wlrun.tools.plot_kinds"
local M = {}
local TOOL = "plot"

local function fail(kind, msg) cli.fail(kind, TOOL, msg) end

-- every text in the script goes through gnuplot.string (wlrun.tools.gnuplot)
local gq = gnuplot.string

---------------------------------------------------------------------------------------------
-- the terminal

local function terminal(path, size)
  -- standard output: text, SVG
  local ext = path == "-" and "svg" or (path:match("%.([^./\\]+)$") or ""):lower()
  if ext == "svg" then
    local w, h = 960, 600
    if size then w, h = size[1], size[2] end
    return ext,
      ("set terminal svg size %d,%d dynamic noenhanced font 'Sans,12' background "
      .. "rgb 'white'"):format(w, h)
  elseif ext == "png" then
    local w, h = 1200, 750
    if size then w, h = size[1], size[2] end
    return ext,
      ("set terminal pngcairo size %d,%d noenhanced font 'Sans,11' background rgb 'white'"):format(
      w, h)
  end
  fail("usage", ("cannot tell the image format of '%s' from its extension (.svg or .png)"):format(
    path))
end

M.usage = [[
Usage: wlrun plot FILE.json -o OUT.svg|OUT.png [options]

Plots a results file or a comparison (- reads standard input) through gnuplot
(docs/compare.md).

    -o, --output FILE    the image: .svg or .png (required; one image, so -o
                         given twice is refused); - is standard output, in SVG
    --kind KIND          sweep: a metric against a swept parameter, a line per
                         combination of the other parameters (default for results);
                         hist: the distribution of one configuration's samples
                         (default with --config); ratio: the ratios of a comparison
                         (default for a file from wlrun compare -o cmp.json)
    --x PARAM            sweep: the parameter on the x axis (default: the numeric
                         parameter with the most values)
    --y METRIC           sweep: median (default), mean, min, p10, p90, cv,
                         flop_per_s, bytes_per_s, peak_bandwidth_fraction, ...
    --config N           hist: the configuration with index N (default: the first
                         one measured)
    --filter EXPR        only configurations for which the Lua expression over the
                         parameters is true (like variant == "tiled")
    --title TEXT         the plot's title
    --size WxH           the image size in pixels (default 960x600 SVG, 1200x750 PNG)
    --keep DIR           write the gnuplot script and data to DIR and keep them
    -h, --help           this text

Needs gnuplot (Debian, Ubuntu: apt-get install gnuplot-nox); WLRUN_GNUPLOT names
another gnuplot binary. Names and titles are always text in the plot, never
gnuplot code, whatever their characters.
]]

local spec = {
  ["-o"] = { value = true, key = "output" }, ["--output"] = { value = true },
  ["--kind"] = { value = true }, ["--x"] = { value = true }, ["--y"] = { value = true },
  ["--config"] = { value = true }, ["--filter"] = { value = true }, ["--title"] = { value = true },
  ["--size"] = { value = true }, ["--keep"] = { value = true },
  ["-h"] = { key = "help" }, ["--help"] = {},
}

function M.main(args)
  local o, pos = cli.parse_args(TOOL, args or {}, spec)
  if o.help then
    stdio.write(M.usage)
    return
  end
  if #pos ~= 1 then
    fail("usage", ("expected one results or comparison file, got %d (wlrun plot --help)"):format(
      #pos))
  end
  if not o.output then fail("usage", "no image given: -o OUT.svg or -o OUT.png") end
  local size
  if o.size then
    local w, h = o.size:match("^(%d+)[xX](%d+)$")
    w, h = tonumber(w), tonumber(h)
    if not (w and h and w >= 100 and h >= 100 and w <= 10000 and h <= 10000) then
      fail("usage", ("--size: expected WIDTHxHEIGHT in pixels, like 1200x750, got '%s'"):format(
        o.size))
    end
    size = { w, h }
  end
  local ext, term = terminal(o.output, size)
  if o.config then
    local n = math.tointeger(tonumber(o.config))
    if not n then fail("usage", ("--config: expected a configuration index, got '%s'"):format(
      o.config)) end
    o.config = n
  end
  if o.kind and not kinds[o.kind] then
    fail("usage", ("--kind: expected sweep, hist or ratio, got '%s'"):format(o.kind))
  end
  local doc = cli.load(TOOL, pos[1], { ["wlrun-compare"] = 1 })
  o.file = pos[1]
  local kind = o.kind
  if doc.schema == "wlrun-compare" then
    if kind and kind ~= "ratio" then
      fail("usage", ("'%s' is a comparison (wlrun compare): it plots with --kind ratio"):format(
        pos[1]))
    end
    kind = "ratio"
  elseif kind == "ratio" then
    fail("usage",
      ("--kind ratio plots a comparison (wlrun compare BASE.json NEW.json -o cmp.json), and "
      .. "'%s' is a results file"):format(pos[1]))
  elseif not kind then
    local measured = 0
    for _, c in ipairs(doc.configurations) do
      if c.status == "ok" then measured = measured + 1 end
    end
    kind = (o.config or measured == 1) and "hist" or "sweep"
  end
  if kind ~= "sweep" and (o.x or o.y) then fail("usage", "--x and --y apply to --kind sweep") end
  if kind ~= "hist" and o.config then fail("usage", "--config applies to --kind hist") end
  local files = {}
  local body = kinds[kind](doc, o, files)
  local gp = gnuplot.find()
  if o.title then body = ("set title %s\n"):format(gq(o.title))
    .. body:gsub("^set title [^\n]*\n", "", 1) end
  local dir = o.keep
  if dir then gnuplot.make_dir(dir) else dir = gnuplot.temp_dir() end
  local ok, bytes = pcall(gnuplot.render, gp, dir, term, ext, body, files)
  if not o.keep then gnuplot.remove_dir(dir) end
  if not ok then error(bytes, 0) end
  cli.write(TOOL, o.output, bytes)
end

return M