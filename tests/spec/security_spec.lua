-- No byte of data becomes code (docs/reliability.md, "Security"): the one way text enters gnuplot
-- code, checked with a real gnuplot over every byte; the process services that replace the
-- shell (temporary directories, removing a tree without following links, finding a program,
-- a child's directory and files).
local process = require "wlrun.process"
local gnuplot = require "wlrun.tools.gnuplot"

local h = require "helper"
local read, write = h.read, h.write

local gp = process.find_program(os.getenv("WLRUN_GNUPLOT") or "gnuplot")

-- what gnuplot prints for each literal: one line each
local function gnuplot_prints(literals)
  local dir = assert(process.temp_dir("wlrun-spec-"))
  local lines = { 'set print "out.txt"' }
  for _, l in ipairs(literals) do lines[#lines + 1] = "print " .. l end
  write(dir .. "/t.gp", table.concat(lines, "\n") .. "\n")
  local r = process.spawn({ gp, "t.gp" }, { cwd = dir, stdin = "/dev/null", stdout = dir .. "/log",
    stderr = dir .. "/log" })
  assert.equal(0, r.code, read(dir .. "/log"))
  local out = {}
  for line in read(dir .. "/out.txt"):gmatch("([^\n]*)\n") do out[#out + 1] = line end
  assert(process.remove_tree(dir))
  return out
end

describe("gnuplot.string", function()
  local it_gp = gp and it or pending

  it_gp(
    "prints every byte as itself, a control character as a space, a byte outside UTF-8 as U+FFFD",
    function()
    local inputs, literals = {}, {}
    for b = 0, 255 do
      for _, s in ipairs { string.char(b), "a" .. string.char(b) .. "1",
        string.char(b, b) .. "'" } do
        inputs[#inputs + 1] = s
        literals[#literals + 1] = gnuplot.string(s)
      end
    end
    local out = gnuplot_prints(literals)
    assert.equal(#inputs, #out)
    for i, s in ipairs(inputs) do
      local want = s:gsub("[%z\1-\31\127]", " "):gsub("[\128-\255]", "\u{FFFD}")
      assert.equal(want, out[i], ("byte %d"):format(s:byte(1)))
    end
  end)

  it_gp("keeps payloads as text: quotes, backslashes, backquotes, macros, comments, UTF-8",
    function()
    local inputs = {
      "'", "''", "'''", "''''", "a''''b", '"', '\\', '\\"', "\\'", "`touch X`", "@GPVAL_TERM",
        "# not a comment",
      "x'\n!touch X\n'", 'x"\nsystem("touch X")\n"', "\\n \\t \\101 \\0421", "µs — ±2% …",
        "%s %n %d", "{^_@}",
    }
    local literals = {}
    for i, s in ipairs(inputs) do
      literals[i] = gnuplot.string(s)
      assert.not_matches("[\n\r`@]", literals[i])
    end
    local out = gnuplot_prints(literals)
    for i, s in ipairs(inputs) do assert.equal((s:gsub("[\n\r]", " ")), out[i]) end
  end)

  it("cuts text longer than its limit, on a character", function()
    local s = gnuplot.string(("é"):rep(100000))
    assert.equal(gnuplot.LIMIT + 3, utf8.len(s)) -- the quotes and "…"
    assert.matches("é…\"$", s)
  end)

  it("doubles % where gnuplot reads a format (tic labels)", function()
    assert.equal('"50%% %%n"', gnuplot.string("50% %n", true))
    assert.equal('"50% %n"', gnuplot.string("50% %n"))
  end)
end)

describe("gnuplot.number", function()
  it("writes integers and finite floats, and refuses anything else", function()
    assert.equal("1024", gnuplot.number(1024))
    assert.equal("0.10000000000000001", gnuplot.number(0.1))
    assert.equal("-1.0000000000000001e+300", gnuplot.number(-1e300))
    for _, v in ipairs { math.huge, -math.huge, 0 / 0, "1; system('x')", true } do
      local ok, e = pcall(gnuplot.number, v, "the x range")
      assert.is_false(ok)
      assert.matches("plot: the x range: .* is not a finite number", e.message)
      assert.equal("usage", e.kind)
    end
  end)
end)

describe("process without a shell", function()
  local dir
  before_each(function() dir = assert(process.temp_dir("wlrun-spec-")) end)
  after_each(function() process.remove_tree(dir) end)

  it("temp_dir makes a new directory only its user can enter, by mkdtemp", function()
    local other = assert(process.temp_dir("wlrun-spec-"))
    assert.are_not.equal(dir, other)
    assert.matches("/wlrun%-spec%-[%w]+$", other)
    local r = process.spawn({ "stat", "-c", "%a", other }, { stdout = dir .. "/mode" })
    assert.equal(0, r.code)
    assert.equal("700\n", read(dir .. "/mode"))
    assert.is_true(process.remove_tree(other))
    assert.has_error(function() process.temp_dir("a/b") end)
  end)

  it("remove_tree removes a tree and never follows a symbolic link out of it", function()
    local outside = assert(process.temp_dir("wlrun-spec-"))
    write(outside .. "/keep", "x")
    assert(process.make_dir(dir .. "/t"))
    assert(process.make_dir(dir .. "/t/a"))
    assert(process.make_dir(dir .. "/t/a/b"))
    write(dir .. "/t/a/b/f", "y")
    assert.equal(0, process.spawn({ "ln", "-s", outside, dir .. "/t/a/to_dir" }).code)
    assert.equal(0, process.spawn({ "ln", "-s", outside .. "/keep", dir .. "/t/to_file" }).code)
    assert.equal(0, process.spawn({ "ln", "-s", outside, dir .. "/link" }).code)
    -- a link given as the tree is refused, and what it points to stays
    local ok, err = process.remove_tree(dir .. "/link")
    assert.is_nil(ok)
    assert.matches("symbolic link", err)
    assert.is_true(process.remove_tree(dir .. "/t"))
    assert.is_nil(process.list_dir(dir .. "/t"))
    assert.equal("x", read(outside .. "/keep"))
    assert.same({ "keep" }, process.list_dir(outside))
    assert.is_true(process.remove_tree(outside))
    local missing, why = process.remove_tree(dir .. "/none")
    assert.is_nil(missing)
    assert.matches("No such file", why)
  end)

  it("find_program finds a program in PATH, or a path, as an absolute path", function()
    assert.matches("^/.*/sh$", process.find_program("sh"))
    local p, why = process.find_program("wlrun-no-such-program")
    assert.is_nil(p)
    assert.equal("not found in PATH", why)
    assert.is_nil(process.find_program("/nonexistent/gnuplot"))
    assert.is_nil(process.find_program("/tmp")) -- a directory is not a program
    assert.is_nil(process.find_program("gnuplot; touch X"))
    assert.has_error(function() process.find_program("sh\0x") end)
  end)

  it("spawn: a directory, standard input, and one file for stdout and stderr", function()
    write(dir .. "/in", "from stdin\n")
    local r = process.spawn({ "sh", "-c", "pwd; cat; echo err >&2; echo end" },
      { cwd = dir, stdin = dir .. "/in", stdout = dir .. "/log", stderr = dir .. "/log" })
    assert.equal(0, r.code)
    assert.equal(dir .. "\nfrom stdin\nerr\nend\n", read(dir .. "/log"))
    assert.equal(127, process.spawn({ "true" }, { cwd = dir .. "/none" }).code)
    assert.has_error(function() process.spawn({ "echo", "a\0b" }) end)
  end)
end)
