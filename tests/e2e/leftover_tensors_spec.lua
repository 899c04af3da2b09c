-- End-to-end: tensors a configuration leaves behind outside its state (a check's temporaries,
-- copies to the host) are freed before the next configuration, by a full collection that runs
-- only then (lua/wlrun/run/configuration.lua): one every configuration made a long sweep quadratic.
local h = require "helper"

describe("tensors a configuration leaves behind", function()
  it("are freed before the next configuration starts", function()
    local r = h.run_script([[
      local wl = require "wlrun"
      local seen = {}
      return wl.scenario { name = "leftovers", params = { n = { 1, 2, 3 } },
        setup = function(p)
          seen[#seen + 1] = wl.memory().host_bytes
          local scratch = wl.host_tensor { 1 << 20, dtype = "f32" } -- 4 MiB, in no state
          if p.n == 3 then assert(seen[2] == 0 and seen[3] == 0, ("left over: %d, %d"):format(seen[2], seen[3])) end
          return {}
        end,
        run = function() end }
    ]], "--compile-only --arch sm_90 -q")
    assert.equal(0, r.code, r.stderr)
  end)
end)
