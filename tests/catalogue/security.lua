-- The catalogue of bad inputs, class "security": no byte of a results file, of the command
-- line or of the environment becomes code. Hostile names go through `wlrun plot` with a real
-- gnuplot: the plot is made (the text shows as text) or the value is refused, and none of the
-- payloads runs; temporary directories and child processes go without a shell. See
-- tests/catalogue.lua for the fields of a case.
local h = require "helper"
local json = require "wlrun.json"
local process = require "wlrun.process"
local assert = require "luassert"

-- every payload touches a file in MARK (gnuplot runs in a directory of its own, so a relative
-- path would not show); MARK must stay empty
local MARK = h.tmpdir()
local TOUCH = "touch " .. MARK .. "/PWNED"
local P = {
  -- gnuplot's shell escape, on a line of its own
  bang = "x'\n!" .. TOUCH .. "\n'",
  system = "x'\nsystem(\"" .. TOUCH .. "\")\n'",            -- gnuplot's system()
  cr = "x'\r!" .. TOUCH .. "\r'",
  backquote = "`" .. TOUCH .. "`",                          -- gnuplot's command substitution
  quotes = "a\" b'' c\\' \"; system('" .. TOUCH .. "') # \\", -- quotes, backslashes, a comment
  nul = "x'\0\n!" .. TOUCH .. "\n'",
}

local FIX = h.source_dir .. "/tests/fixtures/compare/"

-- the cases that run gnuplot are pending where it is not installed (the GPU machine)
local NO_GNUPLOT = not process.find_program(os.getenv("WLRUN_GNUPLOT") or "gnuplot")
  and "gnuplot is not installed (apt-get install gnuplot-nox)" or nil

-- the text of a fixture results file after mutate(doc)
local function doc(name, mutate)
  local d = assert(json.decode(h.read(FIX .. name)))
  mutate(d)
  return json.encode(d)
end

-- renames parameter `from` in every configuration and in the axes
local function rename_param(d, from, to)
  for i, a in ipairs(d.scenario.axes) do
    if a == from then d.scenario.axes[i] = to end
  end
  for _, c in ipairs(d.configurations) do
    c.params[to], c.params[from] = c.params[from], nil
  end
end

-- nothing ran: MARK is empty, no PWNED where wlrun ran
local function nothing_ran(dir)
  local ran = process.list_dir(MARK)
  -- so that the next case starts clean
  for _, name in ipairs(ran) do os.remove(MARK .. "/" .. name) end
  assert.same({}, ran, "a payload ran")
  assert.is_nil(io.open(dir .. "/PWNED"), "a payload ran")
end

-- the plot was made (an SVG, valid UTF-8) and shows `text` as text; nothing ran
local function plotted(text, image)
  return function(_, dir)
    nothing_ran(dir)
    local svg = h.read(dir .. "/" .. (image or "o.svg"))
    assert.truthy(svg:find("</svg>%s*$"), "not a whole SVG")
    assert.truthy(utf8.len(svg), "the SVG is not valid UTF-8")
    assert.not_matches("[%z\1-\8\11\12\14-\31]", svg, 1, false, "a control character in the SVG")
    if text then assert.truthy(svg:find(text, 1, true), "the SVG does not show: " .. text) end
  end
end

-- refused: nothing ran, and no image
local function refused(_, dir)
  nothing_ran(dir)
  assert.is_nil(io.open(dir .. "/o.svg"), "an image was written")
end

local function plot_of(mutate, args, text, name)
  return { files = { ["h.json"] = doc(name or "sweep.json", mutate) },
    args = "plot h.json -o o.svg " .. (args or ""),
           code = 0, stderr = "^$", check = plotted(text) }
end

-- a comparison document (wlrun compare -o cmp.json) of base.json and slower.json, mutated
local function comparison(mutate)
  local d = assert(json.decode(h.run("compare " .. h.quote(FIX .. "base.json") .. " "
    .. h.quote(FIX .. "slower.json")
    .. " --format json").stdout))
  mutate(d)
  return json.encode(d)
end

local SC = [[local wl = require "wlrun"
return wl.scenario { name = "s", params = { M = { 1, 2 }, v = { "a", "b" } }, run = function() end }
]]

local cases = {}
local function add(name, c)
  c.name = name
  -- it runs gnuplot
  if c.gnuplot or c.code == 0 and c.args:match("^plot ") then c.skip = NO_GNUPLOT end
  cases[#cases + 1] = c
end

add("plot: a newline and gnuplot's ! in the scenario name",
  plot_of(function(d) d.scenario.name = P.bang end, nil, "!" .. TOUCH))
add("plot: a newline and system() in the scenario name",
  plot_of(function(d) d.scenario.name = P.system end, nil, "system(\"" .. TOUCH .. "\")"))
add("plot: a carriage return in the scenario name",
  plot_of(function(d) d.scenario.name = P.cr end, nil, TOUCH))
add("plot: backquotes in the scenario name", plot_of(function(d) d.scenario.name = P.backquote end,
  nil, "`" .. TOUCH .. "`"))
add("plot: quotes, backslashes and # in the scenario name",
  plot_of(function(d) d.scenario.name = P.quotes end, nil, TOUCH))
add("plot: a NUL byte before a newline in the scenario name",
  plot_of(function(d) d.scenario.name = P.nul end, nil, TOUCH))
add("plot: a newline in the device name", plot_of(function(d) d.device.name = P.bang end, nil,
  TOUCH))
add("plot: a newline in a parameter's value", plot_of(function(d)
  for _, c in ipairs(d.configurations) do c.params.variant = c.params.variant .. P.bang end
end, nil, "variant=naive"))
add("plot: a newline in a parameter's name", plot_of(
  function(d) rename_param(d, "variant", "v" .. P.system) end, nil,
  TOUCH))
add("plot: a newline in the name of the x parameter", plot_of(function(d)
  for _, n in ipairs { "M", "N", "K" } do rename_param(d, n, n .. P.bang) end
end, nil, "M" .. "x' !" .. TOUCH))
add("plot: a newline in a metric's name, plotted with --y", plot_of(function(d)
  for _, c in ipairs(d.configurations) do
    if c.metrics then c.metrics[P.bang] = 1.5 end
  end
end, "--y " .. h.quote(P.bang), TOUCH))
add("plot: newlines in kernel names", plot_of(function(d)
  for _, c in ipairs(d.configurations) do
    for _, k in ipairs(c.kernels or {}) do k.name = P.system end
  end
end))
add("plot: enhanced-text markup and XML in names is shown as text", plot_of(function(d)
  d.scenario.name = "x^2_{i} @y &z <script>"
end, nil, "x^2_{i} @y &amp;z &lt;script>"))
add("plot: a scenario name of 100,000 characters",
  plot_of(function(d) d.scenario.name = ("long"):rep(25000) end, nil,
  "longlong"))
add("plot: a histogram of a configuration with hostile parameters", plot_of(function(d)
  d.scenario.name = P.bang
  d.configurations[3].params.variant = P.system
end, "--config 3", TOUCH))

-- the command line
add("plot: a newline and ! in --title", plot_of(function() end, "--title " .. h.quote(P.bang),
  "!" .. TOUCH))
add("plot: system() in --title", plot_of(function() end, "--title " .. h.quote(P.system), TOUCH))
add("plot: a title ending in a backslash", plot_of(function() end,
  "--title " .. h.quote("ends in \\"), "ends in \\<"))
add("plot: a --title that is not UTF-8", plot_of(function() end,
  "--title " .. h.quote("caf\xe9 \xff\xfe"), "caf\u{FFFD}"))
add("plot: a percent sign in --title", plot_of(function() end,
  "--title " .. h.quote("100% %s %n %d"), "100% %s %n %d"))
add("plot: --x naming no parameter, with a newline",
  { files = { ["h.json"] = doc("sweep.json", function() end) },
  args = "plot h.json -o o.svg --x " .. h.quote(P.bang), code = 2,
  stderr = "^wlrun: plot: %-%-x: no configuration has a parameter 'x'", check = refused })
add("plot: --y naming no metric, with a newline",
  { files = { ["h.json"] = doc("sweep.json", function() end) },
  args = "plot h.json -o o.svg --y " .. h.quote(P.system), code = 2,
  stderr = "^wlrun: plot: no measured configuration has 'x'", check = refused })
add("plot: --keep into a directory named with a newline and quotes", {
  files = { ["h.json"] = doc("sweep.json", function() end) },
  args = "plot h.json -o o.svg --keep " .. h.quote("k/" .. P.bang), code = 0, stderr = "^$",
  check = function(r, dir)
    plotted()(r, dir)
    assert.truthy(h.read(dir .. "/k/" .. P.bang .. "/plot.gp"):find('set output "plot.svg"', 1,
      true))
  end })
local IMAGE = "o'\n!touch \"$PWNED_AT\"\n'.svg" -- no '/': PWNED_AT names the file in MARK
add("plot: an image path with a newline and quotes", {
  files = { ["h.json"] = doc("sweep.json", function() end) }, env = "PWNED_AT=" .. MARK .. "/PWNED",
  args = "plot h.json -o " .. h.quote(IMAGE), code = 0, stderr = "^$",
    check = plotted(nil, IMAGE) })
add("plot: a comparison with hostile files, scenario, parameters and a percent sign", {
  files = { ["cmp.json"] = comparison(function(d)
    d.base.file, d.new.file, d.base.scenario = P.bang, P.system, P.backquote
    d.base.device = P.quotes
    for _, c in ipairs(d.configurations) do c.params.variant = "50% %n " .. P.bang end
  end) },
  args = "plot cmp.json -o o.svg", code = 0, stderr = "^$",
    check = plotted("50% %n x' !" .. TOUCH) })
add("plot: a comparison whose noise threshold is text", {
  files = { ["cmp.json"] = comparison(function(d) d.settings.noise = "0.02'\n!" .. TOUCH
    .. "\n'" end) },
  args = "plot cmp.json -o o.svg", code = 2, stderr
    = "^wlrun: plot: 'cmp%.json': settings%.noise is not a number",
  check = refused })
add("plot: a comparison whose configuration is a number", {
  files = { ["cmp.json"] = comparison(function(d) d.configurations[2] = 5 end) },
  args = "plot cmp.json -o o.svg", code = 2,
  stderr = "^wlrun: plot: 'cmp%.json': configurations%[2%] is not a compared configuration",
    check = refused })
add("plot: a comparison whose parameters are a number, and its summary too", {
  files = { ["cmp.json"] = comparison(function(d) d.configurations[1].params, d.summary = 5,
    5 end) },
  args = "plot cmp.json -o o.svg", code = 2,
  stderr = "^wlrun: plot: 'cmp%.json': configurations%[1%] is not a compared configuration",
    check = refused })
add("plot: a comparison whose summary is a number", {
  files = { ["cmp.json"] = comparison(function(d) d.summary = 5 end) },
  args = "plot cmp.json -o o.svg", code = 0, stderr = "^$", check = plotted("no change") })
add("plot: WLRUN_GNUPLOT holding a shell command", {
  files = { ["h.json"] = doc("sweep.json", function() end) },
  env = "WLRUN_GNUPLOT=" .. h.quote("gnuplot; " .. TOUCH), args = "plot h.json -o o.svg", code = 9,
  stderr = "gnuplot is not installed %('gnuplot; touch .*' from WLRUN_GNUPLOT not found%)",
    check = refused })
add("plot: TMPDIR that does not exist", { files = {
  ["h.json"] = doc("sweep.json", function() end) },
  env = "TMPDIR=/nonexistent/tmp", args = "plot h.json -o o.svg", code = 9, gnuplot = true,
  stderr
    =
    "^wlrun: plot: cannot make a temporary directory in '/nonexistent/tmp': No such file or "
    .. "directory",
  check = refused })
add(
  "--isolate: TMPDIR that does not exist, said before the outputs are opened: an older "
  .. "r.json stays", {
  script = SC, env = "TMPDIR=/nonexistent/tmp", files = { ["r.json"] = '{"kept": true}\n' },
  args = "--compile-only --arch sm_90 --isolate -o r.json", code = 9,
  stderr = "cannot make a temporary directory in '/nonexistent/tmp': No such file or directory",
  check = function(_, dir)
    assert.equal('{"kept": true}\n', h.read(dir .. "/r.json"))
    assert.is_nil(io.open(dir .. "/r.json.journal"))
  end })
add("--isolate: a -p value holding shell code reaches the child as one argument", { script = SC,
  args = "--compile-only --arch sm_90 --isolate -o r.json -p "
    .. h.quote("v=a'; " .. TOUCH .. "; echo '"), code = 0,
  check = function(_, dir)
    nothing_ran(dir)
    local d = require("wlrun.results.load").load(dir .. "/r.json")
    assert.equal(2, #d.configurations)
    assert.equal("a'; " .. TOUCH .. "; echo '", d.configurations[1].params.v)
    assert.equal("compiled", d.configurations[1].status)
  end })

-- an option given twice
add("plot: -o given twice", { files = { ["h.json"] = doc("sweep.json", function() end) },
  args = "plot h.json -o o.svg -o p.svg", code = 2,
  stderr = "^wlrun: plot: %-o given twice %('o%.svg', then 'p%.svg'%)", check = refused })
add("plot: -o and --output both given", { files = {
  ["h.json"] = doc("sweep.json", function() end) },
  args = "plot h.json --output=o.svg -o p.svg", code = 2,
  stderr = "^wlrun: plot: %-o given twice %('o%.svg', then 'p%.svg'%)", check = refused })
add("export: -o given twice", { args = "export " .. h.quote(FIX .. "base.json")
  .. " -o a.json -o b.json", code = 2,
  stderr = "^wlrun: export: %-o given twice %('a%.json', then 'b%.json'%)",
  check = function(_, dir) assert.same({}, process.list_dir(dir)) end })
add("plot: --title given twice", { files = { ["h.json"] = doc("sweep.json", function() end) },
  args = "plot h.json -o o.svg --title a --title b", code = 2,
  stderr = "^wlrun: plot: %-%-title given twice %('a', then 'b'%)", check = refused })

-- an option table whose metatable answers a field one way when it is checked and another when
-- it is used: only a table's own fields are options, each read once
local FLIP = [[local wl = require "wlrun"
local big, small = wl.tensor { 1024 }, wl.tensor { 16 }
local n = 0
local function flip(own, field, first, later)
  return setmetatable(own, { __index = function(_, k) if k == field then n = n + 1 return n == 1 and first or later end end })
end
%s
]]
add("wl.ops.memcpy: a dst that __index answers big when checked, small when bound",
  { args = "--compile-only --arch sm_90", code = 1,
    script = FLIP:format("wl.ops.memcpy(flip({ src = big }, 'dst', big, small))"),
    stderr = "script%.lua:7: wl%.ops%.memcpy: 'dst' %(a tensor%) is required, got nil" })
add("wl.cublas.gemm: a c that __index answers once, then another tensor",
  { args = "--compile-only --arch sm_90", code = 1,
    script = FLIP:format(
      "wl.cublas.gemm(flip({ a = big, b = big, m = 32, n = 32, k = 32 }, 'c', big, small))"),
    stderr = "script%.lua:7: wl%.cublas%.gemm: c is required" })
add("bind: a stream that only __index answers is not an option (the current stream)",
  { args = "--compile-only --arch sm_90", code = 0,
    script = FLIP:format(
      "assert(wl.kernel { 'extern \"C\" __global__ void f(float* p) {}', name = 'f' "
      .. "}:bind(flip({ grid = 1, block = 1, args = { big } }, 'stream', 7, 7)).stream == nil)") })


-- a kernel's name built from a parameter, as docs/kernels.md shows (name = "gemm_" .. p.variant):
-- NVRTC pastes the name into the program it compiles, so a -p value must not become code there
local NAMED = [[local wl = require "wlrun"
local src = 'extern "C" __global__ void gemm_naive(float* p) {}'
return wl.scenario { name = "kp", params = { variant = { "naive" } },
  setup = function(p) return { k = wl.kernel { src, name = "gemm_" .. p.variant } } end, run = function() end }
]]
add("wl.kernel: a name with a newline and a declaration after it (from -p)",
  { args
    = "--compile-only --arch sm_90 --no-cache -p 'variant=naive\n__device__ int injected = 1;'",
    code = 1, script = NAMED,
    stderr
      =
      "the name 'gemm_naive\\x0A__device__ int injected = 1;' holds a control character at byte "
      .. "11: a kernel's name is a C%+%+ name" })
add("wl.kernel: a name with an #include of a file on a line of its own",
  { args = "--compile-only --arch sm_90 --no-cache -p 'variant=naive\n#include \"/etc/passwd\"'",
    code = 1, script = NAMED,
    stderr = "holds a control character at byte 11",
    check = function(r) assert.not_matches("root:", r.stderr) end })
add("wl.kernel: a name with ';' and braces",
  { args = "--compile-only --arch sm_90 --no-cache -p 'variant=naive; __device__ void f() {}'",
    code = 1, script = NAMED,
    stderr = "holds a character that no name expression holds at byte 11" })
add("wl.kernel: names with character literals, a digit separator and a tab are names",
  { args = "--compile-only --arch sm_90 --no-cache", code = 0,
    script = [[local wl = require "wlrun"
local src = "template <char C> __global__ void c(int *p) {}\ntemplate <long long N> __global__ void h(int *p) {}\n"
  .. "template <typename T> __global__ void g(T *p) {}"
for _, name in ipairs { "c<'a'>", "h<1'000>", "g<unsigned\tint>" } do print(wl.kernel { src, name = name }.lowered_name) end]], -- luacheck: ignore 631
    stdout = "_Z1cILc97EEvPi\n_Z1hILx1000EEvPi\n_Z1gIjEvPT_\n" })
add("wl.kernel: a template name with its arguments is a name",
  { args = "--compile-only --arch sm_90 --no-cache", code = 0,
    script = [[local k = require("wlrun").kernel { "template <int N> __global__ void t(float *p) {}", name = "t<(2 + 1) * 4>" }
print(k.lowered_name)]], stdout = "_Z1tILi12EEvPf" })
add("--dry-run: a parameter value and a scenario name with escape sequences and a newline",
  { args = "--dry-run -p 'v=\27[31mred,x\ny'", code = 0,
    script = [[local wl = require "wlrun"
return wl.scenario { name = "a\27[2Jb", params = { v = { "a" } }, run = function() end }]],
    stdout = "a\\x1b%[2Jb: 2 configurations",
    check = function(r)
      assert.not_matches("\27", r.stdout)
      assert.matches("v=\\x1b%[31mred\n", r.stdout)
      assert.matches("v=x\\x0ay\n", r.stdout)
    end })

return cases
