-- End-to-end: what a command writes to standard output and cannot (a full disk: /dev/full) fails
-- it with exit 9 and one message, whichever subcommand wrote it — the help, a table, a report,
-- an export, a script's print — never exit 0 with nothing written (wl_host_check_stdout in
-- src/host/lhost.c, lua/wlrun/text/stdio.lua).
local h = require "helper"

local q = h.quote
local bin = h.bin:sub(1, 1) == "/" and h.bin or (h.source_dir .. "/" .. h.bin)
local shard = h.source_dir .. "/tests/fixtures/merge/shard_1.json"

-- runs wlrun ARGS with standard output on /dev/full (ENV: "NAME=VALUE ..." before it): exit
-- code, standard error
local function to_full(args, env)
  local err = os.tmpname()
  local _, _, code = os.execute(("cd %s && %s %s %s </dev/null >/dev/full 2>%s"):format(
    q(h.tmpdir()), env or "", q(bin), args,
    q(err)))
  local f = assert(io.open(err))
  local text = f:read("a")
  f:close()
  os.remove(err)
  return code, text
end

describe("standard output that cannot be written", function()
  for _, args in ipairs {
    "--version", "--help", "export " .. q(shard), "export " .. q(shard) .. " -o -",
      "export --format table " .. q(shard),
    "compare " .. q(shard) .. " " .. q(shard), "merge " .. q(shard), "history --help",
  } do
    it("fails 'wlrun " .. args:gsub(h.source_dir .. "/", "") .. "' with exit 9 and one message",
      function()
      local code, err = to_full(args)
      assert.equal(9, code, err)
      local _, n = err:gsub("cannot write to standard output", "")
      assert.equal(1, n, err)
      assert.is_truthy(err:find("No space left on device", 1, true)
        or err:find("a write failed", 1, true), err)
    end)
  end

  it(
    "fails a script's print and io.write with exit 9 and one message, ending at once or through "
    .. "the exit handlers", function()
    local dir = h.tmpdir()
    for _, body in ipairs { 'print("hello")', 'io.write("a")', 'print(string.rep("x", 100000))' } do
      local script = h.write(dir .. "/p.lua", body .. "\n")
      for _, env in ipairs { "", "WLRUN_EXIT_HANDLERS=1" } do
        local code, err = to_full(q(script), env)
        assert.equal(9, code, body .. " " .. env .. ": " .. err)
        local _, n = err:gsub("cannot write to standard output", "")
        assert.equal(1, n, err)
        -- the reason, although the write that failed was long before the check
        assert.is_truthy(err:find("No space left on device", 1, true), err)
      end
    end
  end)

  it("fails a scenario's report with exit 9, its -o file written in full", function()
    local dir = h.tmpdir()
    local script = h.write(dir .. "/s.lua", [[
      local wl = require "wlrun"
      return wl.scenario { name = "s", params = { n = { 1, 2 } }, setup = function() return {} end, run = function() end }
    ]])
    local code, err = to_full(("--compile-only %s -o %s"):format(q(script), q(dir .. "/r.json")))
    assert.equal(9, code, err)
    assert.equal(2, #require("wlrun.json").decode(h.read(dir .. "/r.json")).configurations)
  end)
end)
