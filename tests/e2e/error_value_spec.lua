-- End-to-end: an error value whose __tostring or __index raises (or returns what is not text)
-- fails its own configuration only, with a message saying it could not be shown; the sweep
-- goes on and -o holds every configuration (docs/reliability.md). And wlrun.run.error_value itself.
local h = require "helper"
local json = require "wlrun.json"
local error_value = require "wlrun.run.error_value"

local SCRIPT = [[
local wl = require "wlrun"
local function raising(text) return function() error(text) end end
return wl.scenario {
  name = "error-values", params = { a = { 1, 2, 3, 4, 5, 6, 7 } },
  setup = function(p)
    if p.a == 2 then error(setmetatable({}, { __tostring = raising("tostring raised") })) end
    if p.a == 3 then error(setmetatable({}, { __index = raising("index raised") })) end
    if p.a == 4 then error(setmetatable({}, { __tostring = function() return {} end })) end
    if p.a == 5 then
      error(setmetatable({}, { __index = raising("index raised"),
        __tostring = function() error(setmetatable({}, { __tostring = raising("worse") })) end }))
    end
    return {}
  end,
  teardown = function(p)
    if p.a == 6 then error(setmetatable({}, { __index = raising("teardown's index raised") })) end
  end,
  run = function() end,
}
]]

describe("a script's error value that cannot be shown", function()
  it("fails its own configuration; the sweep goes on and -o holds every configuration", function()
    local r, path = h.run_script(SCRIPT, "--compile-only --arch sm_90 -o out.json")
    assert.equal(1, r.code, r.stderr)
    local doc = assert(json.decode(h.read(path:match("^(.*)/") .. "/out.json")))
    assert.equal(7, #doc.configurations)
    local by = {}
    for _, c in ipairs(doc.configurations) do by[c.params.a] = c end
    assert.equal("compiled", by[1].status)
    for _, a in ipairs { 2, 4, 5 } do
      assert.equal("failed", by[a].status)
      assert.matches("could not be shown", by[a].error)
    end
    assert.matches("tostring raised", by[2].error)
    assert.matches("'__tostring' must return a string", by[4].error)
    assert.equal("failed", by[3].status)
    assert.matches("^an error value: table: ", by[3].error)
    assert.equal("failed", by[6].status)
    assert.matches("^teardown: an error value: table: ", by[6].error)
    assert.equal("compiled", by[7].status)
    assert.matches("5 of 7 configurations failed", r.stderr)
  end)
end)

describe("wlrun.run.error_value", function()
  local bad = setmetatable({}, { __index = function() error("no") end,
    __tostring = function() error("no") end })

  it("reads a field without running a raising __index", function()
    assert.is_nil(error_value.field(bad, "message"))
    assert.equal(1, error_value.field(setmetatable({ x = 1 },
      { __index = function() error("no") end }), "x"))
    assert.equal(2, error_value.field(setmetatable({}, { __index = { y = 2 } }), "y"))
    assert.is_nil(error_value.field("text", "len"))
  end)

  it("shows a value, or says it could not be shown", function()
    assert.equal("plain", error_value.text("plain"))
    assert.equal("12", error_value.text(12))
    assert.matches("could not be shown: .*no", error_value.text(bad))
    assert.matches("could not be shown: '__tostring' must return a string",
      error_value.text(setmetatable({}, { __tostring = function() return true end })))
  end)

  it("keeps wlrun's own errors and wl.skip's as they are, and makes the others plain", function()
    local own = { kind = "cuda", message = "launch failed" }
    assert.equal(own, error_value.of(own))
    local e = error_value.of(bad)
    assert.is_nil(getmetatable(e))
    assert.matches("could not be shown", e.message)
    assert.same({ message = "boom", kind = "script" }, error_value.of("boom"))
    local m = error_value.of(setmetatable({ message = "m", kind = "io", exit = 3 }, {}))
    assert.same({ message = "m", kind = "io", exit = 3 }, m)
  end)
end)
