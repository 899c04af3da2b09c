local wl = require "wlrun"

describe("settings", function()
  it("has the methodology's defaults", function()
    assert.equal(50, wl.settings.run.warmup)
    assert.equal(100, wl.settings.run.iters)
    assert.equal("auto", wl.settings.run.mode)
    assert.equal(0.005, wl.settings.adaptive.target_noise)
    assert.equal("default", wl.setting_origin("run", "warmup").source)
  end)

  it("lets a scenario's value win over a default, and says so", function()
    local v, from = wl.setting("run", "iters", 20)
    assert.equal(20, v)
    assert.equal("scenario", from)
    v, from = wl.setting("run", "iters")
    assert.equal(100, v)
    assert.equal("default", from)
  end)

  it("refuses unknown settings", function()
    assert.has_error(function() wl.setting("run", "nope") end, "unknown setting run.nope")
  end)

  it("reads a scenario's value by the setting's own rule, as the command line does", function()
    assert.equal(10, (wl.setting("adaptive", "max_time", "10s")))
    assert.equal(0.25, (wl.setting("adaptive", "max_time", 0.25)))
    -- percent, kept as a fraction
    assert.equal(0.005, (wl.setting("adaptive", "target_noise", 0.5)))
    assert.equal(0.02, (wl.setting("adaptive", "target_noise", "2%")))
    assert.equal(1000, (wl.setting("run", "iters", 1e3)))
    assert.equal(math.type(1000), math.type((wl.setting("run", "iters", 1e3))))
    assert.is_false((wl.setting("adaptive", "enabled", false)))
  end)

  it("refuses a scenario's value the command line would refuse, and one of the wrong type",
    function()
    local core = require "wlrun.core"
    local cases = {
      { "adaptive", "max_time", math.huge,
        "expected a duration from 0s to 86400s %(like 2s, 500ms, 50us%), got 'inf'" },
      { "adaptive", "enabled", "false",
        "expected a boolean %(true or false%), got a string %('false'%)" },
      { "adaptive", "target_noise", -3,
        "expected a percentage from 0.0001%% to 100%% %(like 0.5 or 0.5%%%), got '%-3'" },
      { "adaptive", "min_samples", 0, "expected a whole number from 1 to 1000000000, got '0'" },
      { "run", "iters", "100",
        "expected a whole number from 1 to 1000000000, got a string %('100'%)" },
      { "run", "iters", 2.5, "got '2.5'" },
      { "run", "mode", "turbo", "expected one of cold|batch|graph|host|auto|cupti, got 'turbo'" },
      { "run", "warmup_time", 0 / 0, "got '%-?nan'" },
      { "run", "flush_l2", 1, "expected a boolean %(true or false%), got a number" },
    }
    for _, c in ipairs(cases) do
      local v, err = core.setting_value(c[1], c[2], c[3])
      assert.is_nil(v)
      assert.matches(c[4], err)
    end
    local ok, e = pcall(wl.setting, "adaptive", "max_time", "forever")
    assert.is_false(ok)
    assert.matches("wl.setting: adaptive.max_time: expected a duration", e.message)
  end)

  it("reads every percentage by one rule: a bare number is percent", function()
    local core = require "wlrun.core"
    assert.equal(0.005, core.percent("0.5"))
    assert.equal(0.005, core.percent("0.5 %"))
    assert.equal(0.05, core.percent(5))
    assert.is_nil(core.percent("five"))
    assert.is_nil(core.percent("0x10"))
    assert.is_nil(core.percent("1e999"))
  end)
end)

describe("errors with kinds", function()
  it("carry a kind and a message with the caller's position", function()
    local ok, e = pcall(wl.error, "cuda", "it broke")
    assert.is_false(ok)
    assert.equal("cuda", e.kind)
    assert.matches("it broke$", tostring(e))
  end)

  it("refuse an unknown kind", function()
    assert.has_error(function() wl.error("weird", "x") end)
  end)
end)
