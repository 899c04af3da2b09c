-- wlrun init [DIR]: a benchmark recipe skeleton in a user's repository (docs/install.md,
-- "Adopting wlrun in a repository"): a scenario with a kernel, a check and metrics
-- (bench/axpy.lua), a commented wlrun.ini, a section of README.md and a CI script
-- (bench/ci.sh) that compiles every kernel without a GPU and, with one, runs the recipe and
-- compares it with a stored baseline. Files that exist are never overwritten: nothing is
-- written when one of them is there (usage, exit 2), whatever it is (a file, even one we cannot
-- read, a directory, a FIFO, a link); README.md is appended to, once, when it is a file we can
-- read, and anything else there is refused.
local process = require "wlrun.process"
local text_files = require "wlrun.text.files"
local stdio = require "wlrun.text.stdio"
local cli = require "wlrun.tools.cli"
local templates = require "wlrun.tools.init_templates"

local TOOL = "init"
local M = {}

local HELP = [[
Usage: wlrun init [DIR]

Writes a benchmark recipe skeleton into DIR (default: the current directory), the root of
your repository:

    bench/axpy.lua       a scenario: a kernel compiled by NVRTC, a sweep, a check against
                         the host and metrics (GB/s, % of peak bandwidth)
    .github/workflows/benchmarks.yml, bench/gitlab-ci.yml
                         CI workflows (GitHub Actions; GitLab CI, to include) that run
                         bench/ci.sh on a CPU runner and on a runner labelled gpu
    .gitignore           out/ and .wlrun/ (appended once; made when missing)
    bench/ci.sh          a CI job any CI can call (sh bench/ci.sh): --compile-only without a GPU; with one,
                         each recipe and `wlrun compare --fail-above 5` against its own
                         bench/NAME.baseline.json once you have stored one
    wlrun.ini            the settings of runs from DIR, with comments
    README.md            a "Benchmarks" section (appended; made when missing)

A file that exists is not overwritten: nothing is written then (exit 2). Then:
    wlrun --compile-only bench/axpy.lua      no GPU needed
    wlrun bench/axpy.lua -o bench/axpy.baseline.json   on the GPU that CI runs on

    -h, --help           this text
]]

-- what is at path, never following a link nor opening anything: "file", "directory", "link",
-- "fifo", "socket", "other" (a device), or nil when nothing is there
local function kind_of(path) return (process.file_type(path)) end

local KINDS = { file = "a file", directory = "a directory", link = "a symbolic link",
  fifo = "a FIFO",
  socket = "a socket", other = "a special file" }

-- a directory, or a link to one (what mkdir -p goes through); whether it can be read or entered is
-- the writes' to say (a directory we cannot list is still no file in the way)
local function is_dir(path) return process.file_type(path, true) == "directory" end

local function refuse(kind, msg) cli.fail(kind, TOOL, msg .. ": nothing written") end

-- the directories to make, outermost first (those that are not there), as mkdir -p would
local function missing_dirs(path)
  local list, at = {}, path:sub(1, 1) == "/" and "" or nil
  for part in path:gmatch("[^/]+") do
    at = at and (at .. "/" .. part) or part
    local kind = kind_of(at)
    if not kind then
      list[#list + 1] = at
    elseif not is_dir(at) then
      refuse("usage", ("'%s' is %s, not a directory"):format(at, KINDS[kind]))
    end
  end
  return list
end

-- README.md: nil when missing, else its text; anything but a regular file we can read is refused
local function readme_text(path)
  local kind = kind_of(path)
  if not kind then return nil end
  if kind ~= "file" then refuse("usage", ("%s is %s, not a file to add a section to"):format(path,
    KINDS[kind])) end
  return (stdio.read(path, function(_, msg) refuse("io", msg) end))
end

-- init writes nothing where one of its files is there already
local function refuse_overwriting(files)
  local there = {}
  for _, f in ipairs(files) do
    if kind_of(f.path) then there[#there + 1] = f.path end
  end
  if #there > 0 then
    cli.fail("usage", TOOL,
      ("not overwriting %s: nothing written (move %s away, or init another directory)"):format(
      table.concat(there, ", "), #there == 1 and "it" or "them"))
  end
end

-- Everything is checked before anything is written; then each file is made new beside its
-- target (wlrun.text.files), and all are renamed into place once all are made, README.md last. A
-- failure before the renames removes what was made, the directories too.
function M.main(args)
  local o, pos = cli.parse_args(TOOL, args, { ["-h"] = { key = "help" }, ["--help"] = {} })
  if o.help then
    stdio.write(HELP)
    return
  end
  if #pos > 1 then cli.fail("usage", TOOL, ("one directory at most, got '%s' and '%s'"):format(
    pos[1], pos[2])) end
  local dir = pos[1] or "."
  if dir == "-" then cli.fail("usage", TOOL, "DIR is a directory; '-' names none") end
  local kind = kind_of(dir)
  if kind and not is_dir(dir) then cli.fail("usage", TOOL,
    ("'%s' is %s, not a directory"):format(dir, KINDS[kind])) end

  local files = {
    { path = dir .. "/bench/axpy.lua", text = templates.scenario },
    { path = dir .. "/bench/ci.sh", text = templates.ci },
    { path = dir .. "/bench/gitlab-ci.yml", text = templates.gitlab },
    { path = dir .. "/.github/workflows/benchmarks.yml", text = templates.github },
    { path = dir .. "/wlrun.ini", text = templates.ini },
  }
  refuse_overwriting(files)
  local dirs = missing_dirs(dir .. "/bench")
  local listed = {}
  for _, d in ipairs(dirs) do listed[d] = true end
  for _, d in ipairs(missing_dirs(dir .. "/.github/workflows")) do
    if not listed[d] then dirs[#dirs + 1] = d end
  end
  -- .gitignore: the lines added once, at its end (made when missing)
  local ignore = dir .. "/.gitignore"
  local ignored = readme_text(ignore)
  if not (ignored and ignored:find("\nout/\n", 1, true) or (ignored or ""):find("^out/\n")) then
    local sep = (ignored or "") == "" and "" or (ignored:sub(-1) == "\n" and "\n" or "\n\n")
    files[#files + 1] = { path = ignore, text = (ignored or "") .. sep .. templates.gitignore }
  end
  local readme = dir .. "/README.md"
  local old = readme_text(readme)
  local said
  if old and (old:find("\n## Benchmarks\n", 1, true) or old:find("^## Benchmarks\n")) then
    said = ("%s has a Benchmarks section already: left as it is\n"):format(readme)
  else
    local sep = (old or "") == "" and "" or (old:sub(-1) == "\n" and "\n" or "\n\n")
    files[#files + 1] = { path = readme, text = (old or "") .. sep .. templates.readme }
    said = ("%s %s\n"):format(old and "added a Benchmarks section to" or "wrote", readme)
  end

  local made = {}
  local function undo(msg)
    for _, f in ipairs(made) do text_files.discard(f) end
    for i = #dirs, 1, -1 do os.remove(dirs[i]) end
    refuse("io", msg)
  end
  for _, d in ipairs(dirs) do
    local ok, err = process.make_dir(d)
    if not ok then undo(("cannot make directory '%s': %s"):format(d, tostring(err))) end
  end
  for i, f in ipairs(files) do
    local file, err = text_files.create(f.path)
    local ok = file ~= nil
    if ok then
      made[i] = file
      ok, err = file:write(f.text)
    end
    if ok then ok, err = file:close() end
    if not ok then undo(("cannot write %s: %s"):format(f.path, tostring(err))) end
  end
  for i, f in ipairs(files) do
    local ok, err = text_files.rename(made[i])
    if not ok then cli.fail("io", TOOL, ("cannot write %s: %s"):format(f.path, tostring(err))) end
    if f.path ~= readme then stdio.write(("wrote %s\n"):format(f.path)) end
  end
  stdio.write(said)
  stdio.write("next: wlrun --compile-only bench/axpy.lua (no GPU needed); sh bench/ci.sh in CI\n")
end

return M
