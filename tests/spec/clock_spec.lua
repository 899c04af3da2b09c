local wl = require "wlrun"

describe("host clocks", function()
  it("wl.clock is monotonic seconds", function()
    local a = wl.clock()
    local b = wl.clock()
    assert.is_number(a)
    assert.is_true(b >= a)
  end)

  it("wl.clock_ns is an integer count of nanoseconds", function()
    local a = wl.clock_ns()
    assert.equal("integer", math.type(a))
    assert.is_true(wl.clock_ns() >= a)
  end)

  it("wl.sleep sleeps at least the time asked", function()
    local t0 = wl.clock_ns()
    wl.sleep(0.05)
    local dt = (wl.clock_ns() - t0) / 1e9
    assert.is_true(dt >= 0.05, "slept " .. dt)
    assert.is_true(dt < 1, "slept " .. dt)
  end)

  it("wl.sleep rejects negative and non-numeric times", function()
    assert.has_error(function() wl.sleep(-1) end)
    assert.has_error(function() wl.sleep("soon") end)
    assert.has_error(function() wl.sleep(0 / 0) end)
  end)
end)
