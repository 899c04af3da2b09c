-- The GPU side of the catalogue of bad inputs (tests/catalogue/): the cases that need a device.
local h = require "helper"
local catalogue = require "catalogue"

describe("bad inputs on a GPU", function()
  for _, c in ipairs(catalogue.load()) do
    if c.gpu then
      h.gpu_it(("[%s] %s -> exit %d"):format(c.class, c.name, c.code),
        function() catalogue.run(c) end)
    end
  end
end)
