-- End-to-end: text from a results file or a script never sends a control character to the
-- terminal (docs/results.md, "Text from the data"). A results document whose every string
-- holds an OSC title, a colour, a carriage return and a newline that would fake a line goes
-- through every printer and subcommand that writes text for people: export's table, plain and
-- Markdown, compare, merge, and a --compile-only run with a hostile scenario name and parameter
-- value. Their output holds no byte below 0x20 but newline, no DEL and
-- no C1, and the escaped text is there to be read. The CSV, which is data, keeps every byte.
local h = require "helper"
local F = require "history_fixtures"
local results = require "wlrun.results"
local wl = require "wlrun"

local q = h.quote
local H = "\27]0;PWNED\7\27[31m...\r\nFAKE LINE\194\155"
-- how it is printed (\x0aFAKE LINE where newlines go too)
local SHOWN = [[\x1b]0;PWNED\x07\x1b[31m...\x0d]]

local function document(slow)
  local function cfg(i, n, v)
    local xs = F.samples(1e-3 * n * (slow or 1), 20, 0.01, i)
    return { index = i, params = { [H] = v, n = n }, status = "ok", mode = "cold", per = 1,
      samples = xs,
      stats = wl.stats.summary(xs), kernels = { { name = H } },
      warnings = { { code = "noisy", message = H, hint = H } } }
  end
  return results.encode {
    schema = results.SCHEMA, version = results.VERSION, wlrun = { version = "0.1.0" },
    command_line = { "wlrun", H }, started = "2026-01-01T00:00:00Z", complete = true,
    scenario = { name = H, file = "x.lua", axes = { H, "n" } },
    device = { name = H, arch = "sm_90" },
    configurations = {
      cfg(1, 1, H), cfg(2, 2, H .. "2"),
      { index = 3, params = { [H] = "b", n = 3 }, status = "failed", kind = "cuda", error = H },
      { index = 4, params = { [H] = "c", n = 4 }, status = "skipped", reason = H },
    },
  } .. "\n"
end

-- the first control byte of a text (but those allowed), as "0x1b at 17", or nil
local function control(text, allowed)
  allowed = allowed or "\n"
  local i = 1
  while true do
    i = text:find("[%z\1-\31\127\194]", i)
    if not i then return nil end
    local b = text:byte(i)
    if b == 194 then
      if (text:byte(i + 1) or 0) < 0xa0 then return ("C1 at %d"):format(i) end
    elseif not allowed:find(string.char(b), 1, true) then
      return ("0x%02x at %d: %q"):format(b, i, text:sub(math.max(1, i - 20), i + 20))
    end
    i = i + 1
  end
end

-- SHOWN as Markdown writes it: a ']' escaped, so that no link can close (docs/reliability.md)
-- in Markdown, the escapes' backslashes and the brackets are escaped too (rendered as themselves)
local SHOWN_MD = (SHOWN:gsub("[\\%[%]]", "\\%0"))

local function clean(what, r, allowed)
  assert.is_nil(control(r.stdout, allowed), what .. ": stdout")
  assert.is_nil(control(r.stderr), what .. ": stderr")
  local shown = what:find("markdown") and SHOWN_MD or SHOWN
  assert.truthy(r.stdout:find(shown, 1, true) or r.stderr:find(shown, 1, true),
    what .. ": the escaped text is shown\n" .. r.stdout)
end

describe("text from the data reaches the terminal without control characters", function()
  local dir, base, new
  setup(function()
    dir = h.tmpdir()
    base = h.write(dir .. "/base.json", document())
    new = h.write(dir .. "/new.json", document(1.5))
  end)
  teardown(function() os.execute("rm -rf " .. q(dir)) end)

  for _, format in ipairs { "table", "plain", "markdown" } do
    it("export --format " .. format, function()
      local r = h.run("export " .. q(base) .. " --format " .. format)
      assert.equal(0, r.code, r.stderr)
      clean("export " .. format, r)
      assert.matches("FAKE LINE", r.stdout)
      assert.is_nil(r.stdout:find("\nFAKE LINE", 1, true), "a line of its own:\n" .. r.stdout)
    end)
  end

  it("export --format csv: every byte of the data kept, in a field quoted as RFC 4180 says",
    function()
    local r = h.run("export " .. q(base) .. " --format csv")
    assert.equal(0, r.code, r.stderr)
    local quoted = '"' .. H:gsub('"', '""') .. '"'
    assert.truthy(r.stdout:find(quoted, 1, true), r.stdout) -- the header's parameter name, as it is
    assert.is_nil(r.stdout:find("\\x0d", 1, true), r.stdout)
  end)

  it("the table's columns are measured on the escaped text", function()
    local r = h.run("export " .. q(base) .. " --format table")
    local lines = {}
    for l in r.stdout:gmatch("[^\n]+") do lines[#lines + 1] = l end
    local head, rule, row = lines[2], lines[3], lines[4]
    assert.matches("^#  ", head)
    -- the status column starts at the same place in the title, the rule and the row
    local col = head:find("status", 1, true)
    assert.truthy(col, head)
    assert.equal("ok", row:sub(col, col + 1), row)
    assert.equal("-", rule:sub(col, col))
    assert.equal(" ", rule:sub(col - 1, col - 1))
  end)

  it("compare, as a table and as Markdown", function()
    for _, fmt in ipairs { "table", "markdown" } do
      local r = h.run("compare " .. q(base) .. " " .. q(new) .. " --format " .. fmt)
      assert.truthy(r.code == 0 or r.code == 7, r.stderr)
      clean("compare " .. fmt, r)
    end
  end)

  it("merge's printed report and its warnings", function()
    local r = h.run("merge " .. q(base))
    assert.equal(0, r.code, r.stderr)
    clean("merge", r)
  end)

  it(
    "a --compile-only run with a hostile scenario name and parameter value: table, messages, "
    .. "-o files", function()
    local script = ([[
local wl = require "wlrun"
local H = %q
return wl.scenario {
  name = "x" .. H, params = { v = { H, "plain" }, n = { 1, 2 } },
  setup = function(p)
    if p.n == 2 and p.v == H then wl.skip("skip " .. H) end
    if p.n == 2 then error("boom " .. H, 0) end
    return {}
  end,
  run = function() end,
}
]]):format(H)
    local r = h.run_script(script, "--compile-only --arch sm_90 -o out.json -o out.txt -o out.md")
    assert.equal(1, r.code, r.stderr)
    assert.is_nil(control(r.stdout), "stdout")
    assert.is_nil(control(r.stderr), "stderr")
    assert.truthy(r.stderr:find(SHOWN, 1, true), r.stderr)
    local run_dir = r.cmd:match("cd '([^']+)'")
    for _, f in ipairs { "out.txt", "out.md" } do
      local text = h.read(run_dir .. "/" .. f)
      assert.is_nil(control(text), f)
      assert.truthy(text:find(f == "out.md" and SHOWN_MD or SHOWN, 1, true), f)
    end
    r = h.run("export " .. q(run_dir .. "/out.json") .. " --format table")
    assert.equal(0, r.code, r.stderr)
    clean("the run's table", r)
    r = h.run_script(script, "--compile-only --arch sm_90 --format markdown")
    assert.is_nil(control(r.stdout), "stdout")
    assert.truthy(r.stdout:find(SHOWN_MD, 1, true), r.stdout)
  end)
end)
