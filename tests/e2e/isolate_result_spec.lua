-- End-to-end: under --isolate, what a child's script writes in the place of the child's result
-- (its path is core.cli.worker_output) does not pass for a result: garbage, or another
-- configuration's entry, is that configuration's failure, and the others are kept
-- (lua/wlrun/run/isolate.lua, isolate.own_entry).
local h = require "helper"
local load = require "wlrun.results.load"

local FORGER = [[
local wl = require "wlrun"
local getpid = require("wlrun.process").getpid
local function forge(text)
  local f = assert(io.open(require("wlrun.core").cli.worker_output, "w"))
  f:write(text)
  f:close()
  os.execute("kill -KILL " .. getpid())
end
return wl.scenario { name = "iso", params = { n = { 1, 2, 3, 4 } },
  setup = function(p)
    if p.n == 2 then forge("{garbage") end
    if p.n == 3 then
      forge('{"schema":"wlrun-results","version":1,"configurations":[{"index":77,"params":{"n":1},"status":"ok"}]}')
    end
    return {}
  end,
  run = function() end }
]]

describe("--isolate, a child's result", function()
  it("forged by its script is that configuration's failure, not another's entry", function()
    local dir = h.tmpdir()
    local script = h.write(dir .. "/iso.lua", FORGER)
    local r = h.run(h.quote(script) .. " --compile-only --arch sm_90 --isolate -q -o o.json",
      { cwd = dir })
    assert.equal(1, r.code, r.stderr)
    local doc = load.load(dir .. "/o.json")
    assert.equal(4, #doc.configurations)
    local by = {}
    for _, c in ipairs(doc.configurations) do by[c.index] = c end
    assert.equal("compiled", by[1].status)
    assert.equal("compiled", by[4].status)
    assert.equal("failed", by[2].status)
    assert.equal("failed", by[3].status)
    assert.matches("it holds configuration 77, not configuration 3", by[3].error)
    assert.is_nil(by[77])
  end)
end)
