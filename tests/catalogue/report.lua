-- The catalogue of bad inputs, class "report": `wlrun report --html` (docs/history.md, "A report
-- as a web page") given results files that are missing, not JSON, malformed or hostile, a
-- directory that is a file, holds other files or cannot be written, and a --db that is not a
-- history. See tests/catalogue.lua for the fields of a case.
local R = require "report_fixtures"

local GOOD = R.sweep()

local root = io.popen("id -u"):read("l") == "0"
local setpriv = require("wlrun.process").find_program("setpriv")

local function no_page(_, dir)
  local f = io.open(dir .. "/out/index.html")
  if f then f:close() end
  assert(f == nil, "a page was written")
end

local cases = {
  { name = "report: a results file that is not there", code = 9,
    args = "report --html out gone.json",
    stderr = "^wlrun: report: cannot read 'gone%.json'", check = no_page },
  { name = "report: a results file that is not JSON", code = 2, args = "report --html out r.json",
    files = { ["r.json"] = "<html><script>alert(1)</script>" },
      stderr = "^wlrun: report: 'r%.json' is not valid JSON: line 1",
    check = no_page },
  { name = "report: a sample that is markup", code = 2, args = "report --html out r.json",
    files = { ["r.json"] = (GOOD:gsub('"samples": %[',
      '"samples": ["<img src=x onerror=alert(1)>", ', 1)) },
    stderr
      =
      "^wlrun: report: 'r%.json' is malformed: configurations%[1%]%.samples%[1%] is not a "
      .. "finite number\n",
    check = no_page },
  { name = "report: a results file of another schema", code = 2, args = "report --html out r.json",
    files = { ["r.json"] = '{"schema": "wlrun-compare", "version": 1, "configurations": []}' },
    stderr = "^wlrun: report: 'r%.json' is not a wlrun%-results document" },
  { name = "report: a hostile results file is shown as text", code = 0,
    args = "report --html out r.json -q",
    files = { ["r.json"] = R.hostile() }, stdout = "^$",
    check = function(_, dir)
      local f = assert(io.open(dir .. "/out/index.html"))
      local text = f:read("a")
      f:close()
      assert(not text:find("<img", 1, true), "markup of the file reached the page")
      assert(select(2, text:gsub("<script", "")) == 1, "a second script")
    end },
  { name = "report: --html that is a file", code = 9, args = "report --html out r.json",
    files = { ["out"] = "mine\n", ["r.json"] = GOOD },
      stderr = "^wlrun: report: %-%-html 'out' is a file, not a directory\n" },
  { name = "report: --html below a file", code = 9, args = "report --html r.json/out r.json",
    files = { ["r.json"] = GOOD },
      stderr = "^wlrun: report: cannot make the directory 'r%.json/out': Not a directory\n" },
  { name = "report: --html that holds other files", code = 2, args = "report --html out r.json",
    files = { ["out/thesis.tex"] = "mine\n", ["r.json"] = GOOD },
    stderr = "^wlrun: report: %-%-html 'out' holds other files %(thesis%.tex%)" },
  { name = "report: --db that is text", code = 9, args = "report --html out --db h.db",
    files = { ["h.db"] = ("not a database\n"):rep(200) },
      stderr = "^wlrun: report: database 'h%.db': file is not a database\n",
    check = no_page },
  { name = "report: --db that is a results file", code = 9,
    args = "report --html out r.json --db r.json",
    files = { ["r.json"] = GOOD },
      stderr = "^wlrun: report: database 'r%.json': file is not a database\n", check = no_page },
  { name = "report: --db that is not there", code = 9, args = "report --html out --db none.db",
    stderr = "^wlrun: report: no history database at 'none%.db'" },
  { name = "report: no --html", code = 2, args = "report r.json",
    stderr = "^wlrun: report: %-%-html DIR is needed" },
  { name = "report: a device's clocks record that is not a clock", code = 2,
    args = "report --html out r.json",
    files = { ["r.json"] = (function()
      local results = require "wlrun.results"
      local doc = results.decode(GOOD, "r.json")
      doc.device = doc.device or { name = "d" }
      doc.device.clocks = { locked = true, mhz = 1.5 }
      return results.encode(doc)
    end)() },
    stderr
      =
      "^wlrun: report: 'r%.json' is malformed: device%.clocks%.mhz is a number, not a whole "
      .. "number >= 0\n",
    check = no_page },
}

-- a directory without write access (as root only under another user: root writes anywhere)
local unwritable = { name = "report: --html that cannot be written", code = 9,
  args = "report --html out r.json",
  files = { ["out/.keep"] = "", ["r.json"] = GOOD },
  stderr = "^wlrun: report: cannot write 'out/index%.html': Permission denied\n" }
if not root then
  unwritable.prefix = "rm out/.keep && chmod 555 out &&"
  cases[#cases + 1] = unwritable
elseif setpriv then
  unwritable.prefix
    = "rm out/.keep && chmod 555 out && setpriv --reuid=nobody --regid=nogroup --clear-groups"
  cases[#cases + 1] = unwritable
else
  unwritable.skip = "running as root without setpriv: a directory cannot be read-only"
  cases[#cases + 1] = unwritable
end


-- results files that are not files: a device never ends a read; a directory is not one
for _, c in ipairs {
  { "compare: /dev/zero as a results file", "compare /dev/zero /dev/zero",
    "compare: cannot read '/dev/zero': it is a device, not a file" },
  { "export: a directory as a results file", "export .",
    "cannot read '%.': it is a directory, not a file" },
  { "--resume /dev/zero", "--dry-run --resume /dev/zero script.lua",
    "%-%-resume: cannot read '/dev/zero': it is a device, not a file" },
} do
  cases[#cases + 1] = { name = c[1], code = 9, args = c[2], stderr = c[3],
    files = {
      ["script.lua"]
      =
      "local wl = require 'wlrun'\nreturn wl.scenario { name = 's', params = { n = { 1 } }, run "
      .. "= function() end }\n" } }
end
cases[#cases + 1] = { name = "WLRUN_SHARD_COSTS=/dev/zero", code = 9, args = "--dry-run script.lua",
  env = "SLURM_STEP_ID=0 SLURM_PROCID=0 SLURM_NTASKS=2 WLRUN_SHARD_COSTS=/dev/zero",
  files = {
    ["script.lua"]
    =
    "local wl = require 'wlrun'\nreturn wl.scenario { name = 's', params = { n = { 1, 2 } }, "
    .. "run = function() end }\n" },
  stderr = "WLRUN_SHARD_COSTS=/dev/zero: cannot read '/dev/zero': it is a device, not a file" }

return cases
