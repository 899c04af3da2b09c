-- wlrun init [DIR]: a benchmark recipe skeleton in a user's repository (docs/install.md,
-- "Adopting wlrun in a repository"): a scenario with a kernel, a check and metrics
-- (bench/axpy.lua), a commented wlrun.ini, a section of README.md and a CI script
-- (bench/ci.sh) that compiles every kernel without a GPU and, with one, runs the recipe and
-- compares it with a stored baseline. Files that exist are never overwritten: nothing is
-- written when one of them is there (usage, exit 2); README.md is appended to, once.
local util = require "wlrun.tools.util"
local templates = require "wlrun.tools.init_templates"

local TOOL = "init"
local M = {}

local HELP = [[
Usage: wlrun init [DIR]

Writes a benchmark recipe skeleton into DIR (default: the current directory), the root of
your repository:

    bench/axpy.lua       a scenario: a kernel compiled by NVRTC, a sweep, a check against
                         the host and metrics (GB/s, % of peak bandwidth)
    bench/ci.sh          a CI job any CI can call (sh bench/ci.sh): --compile-only without a GPU; with one,
                         the recipe and `wlrun compare --fail-above 5` against
                         bench/baseline.json once you have stored one
    wlrun.ini            the settings of runs from DIR, with comments
    README.md            a "Benchmarks" section (appended; made when missing)

A file that exists is not overwritten: nothing is written then (exit 2). Then:
    wlrun --compile-only bench/axpy.lua      no GPU needed
    wlrun bench/axpy.lua -o bench/baseline.json   on the GPU that CI runs on

    -h, --help           this text
]]

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

local function is_dir(path) return require("wlrun.process").list_dir(path) ~= nil end

-- path and the directories above it, as mkdir -p
local function mkdir(path)
  local at = path:sub(1, 1) == "/" and "" or nil
  for part in path:gmatch("[^/]+") do
    at = at and (at .. "/" .. part) or part
    local ok, err = require("wlrun.process").make_dir(at)
    if not ok and not is_dir(at) then util.fail("io", TOOL, ("cannot make directory '%s': %s"):format(at, err)) end
  end
end

function M.main(args)
  local o, pos = util.parse_args(TOOL, args, { ["-h"] = { key = "help" }, ["--help"] = {} })
  if o.help then
    require("wlrun.stdio").write(HELP)
    return
  end
  if #pos > 1 then util.fail("usage", TOOL, ("one directory at most, got '%s' and '%s'"):format(pos[1], pos[2])) end
  local dir = pos[1] or "."
  if dir == "-" then util.fail("usage", TOOL, "DIR is a directory; '-' names none") end
  if exists(dir) and not is_dir(dir) then util.fail("usage", TOOL, ("'%s' is a file, not a directory"):format(dir)) end

  local files = {
    { path = "bench/axpy.lua", text = templates.scenario },
    { path = "bench/ci.sh", text = templates.ci },
    { path = "wlrun.ini", text = templates.ini },
  }
  local there = {}
  for _, f in ipairs(files) do
    if exists(dir .. "/" .. f.path) then there[#there + 1] = dir .. "/" .. f.path end
  end
  if #there > 0 then
    util.fail("usage", TOOL, ("not overwriting %s: nothing written (move %s away, or init another directory)"):format(
      table.concat(there, ", "), #there == 1 and "it" or "them"))
  end

  mkdir(dir)
  mkdir(dir .. "/bench")
  for _, f in ipairs(files) do
    local path = util.write(TOOL, dir .. "/" .. f.path, f.text)
    require("wlrun.stdio").write(("wrote %s\n"):format(path))
  end

  local readme = dir .. "/README.md"
  local old = exists(readme) and util.read_file(TOOL, readme) or ""
  if old:find("\n## Benchmarks\n", 1, true) or old:find("^## Benchmarks\n") then
    require("wlrun.stdio").write(("%s has a Benchmarks section already: left as it is\n"):format(readme))
  else
    local sep = old == "" and "" or (old:sub(-1) == "\n" and "\n" or "\n\n")
    util.write(TOOL, readme, old .. sep .. templates.readme)
    require("wlrun.stdio").write(("%s %s\n"):format(old == "" and "wrote" or "added a Benchmarks section to", readme))
  end
  require("wlrun.stdio").write("next: wlrun --compile-only bench/axpy.lua (no GPU needed); sh bench/ci.sh in CI\n")
end

return M
