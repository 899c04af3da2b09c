-- The catalogue of bad inputs (tests/catalogue/, docs/reliability.md): each one gets a clear
-- message naming what was wrong and where, its exit code, and never a crash, a hang or an
-- internal error. The cases that need a GPU run in tests/gpu/catalogue_spec.lua.
local h = require "helper"
local catalogue = require "catalogue"

local cases = catalogue.load()

describe("bad inputs", function()
  it("the catalogue holds at least 150 cases", function()
    assert.is_true(#cases >= 150, ("%d cases"):format(#cases))
  end)

  for _, c in ipairs(cases) do
    if c.skip and not c.gpu then
      pending(("[%s] %s -- skipped: %s"):format(c.class, c.name, c.skip))
    elseif not c.gpu and not (c.no_gpu and h.has_gpu) then
      it(("[%s] %s -> exit %d"):format(c.class, c.name, c.code), function() catalogue.run(c) end)
    end
  end
end)
