-- wlrun.measure.chunk_watch (docs/measuring.md, "Clocks, throttling, energy and memory") on
-- synthetic
-- readings through the interface the engine gives it (core.gpu_sample's fields and a clock):
-- throttled chunks discarded up to the limit, the recovery pause left out of the energy, the
-- energy and power of the chunks kept, too short a measurement, no NVML; and --lock-clocks'
-- values.
local watch = require "wlrun.measure.chunk_watch"
local clocks = require "wlrun.measure.clocks"

-- readings[i] is what the i-th read gives, without energy_j where the read did not ask for the
-- counter; each now() advances the clock by dt seconds (one now() a chunk: the time passes in the
-- chunks). reads.energy counts the readings of the counter.
local function fake(readings, dt)
  local i, t, reads = 0, 0, { energy = 0 }
  local function read(energy)
    i = i + 1
    local r = {}
    for k, v in pairs(readings[math.min(i, #readings)]) do r[k] = v end
    if energy then reads.energy = reads.energy + 1 else r.energy_j = nil end
    return r
  end
  return read, function() t = t + dt return t end, reads
end

local function r0() return { notes = {}, clock = {} } end

describe("wlrun.measure.chunk_watch", function()
  it(
    "keeps chunks at full clock and reports the energy, mean power and energy per launch of "
    .. "those after the counter's first reading", function()
    local read, now, reads = fake({
      { sm_mhz = 1980, energy_j = 100, used_bytes = 10, throttle = {} },
      { sm_mhz = 1980, energy_j = 130, used_bytes = 30, throttle = {} },
      { sm_mhz = 1965, energy_j = 160, used_bytes = 20, throttle = {} },
      { sm_mhz = 1965, energy_j = 200, used_bytes = 20, throttle = {} },
    }, 1)
    local w = watch.new(read, now)
    assert.is_true(w.enabled)
    assert.equal(0, reads.energy) -- not before the first chunk
    for _ = 1, 3 do assert.equal("keep", w:after_chunk(100, 100)) end
    local r = r0()
    w:finish(r)
    assert.equal(3, reads.energy)
    assert.same({ 1980, 1965, 1965 }, r.clock.chunks)
    assert.near(70, r.energy.joules, 1e-9) -- 130 -> 200: the second and third chunks
    assert.near(2, r.energy.seconds, 1e-9)
    assert.near(35, r.energy.mean_power_w, 1e-6)
    assert.near(0.35, r.energy.joules_per_launch, 1e-9)
    assert.equal(200, r.energy.launches)
    assert.equal(30, r.memory.device_used_bytes)
    assert.is_nil(r.throttle)
  end)

  -- a counter of 100 W (the joules are 100 times the time read) and chunks of 1/32 s (times
  -- exact in binary); each now() is the end of a chunk, at 1/32 s steps counted from 1 (watch.new's
  -- own); at: the steps at which the counter was read
  local function counter()
    local c = { t = 0, at = {}, clock = 1980 }
    c.read = function(energy)
      if energy then c.at[#c.at + 1] = math.floor(c.t * 32 + 0.5) end
      return { sm_mhz = c.clock, energy_j = energy and 100 * c.t or nil }
    end
    c.now = function() c.t = c.t + 1 / 32 return c.t end
    return c
  end

  it(
    "reads the counter after ENERGY_PERIOD, then as the span it covers doubles up to "
    .. "ENERGY_MAX_PERIOD, and once more at the end of a measurement long enough to report it",
    function()
    local c = counter()
    local w = watch.new(c.read, c.now)
    for _ = 1, 40 do assert.equal("keep", w:after_chunk(10, 10)) end -- 1.25 s
    local r = r0()
    w:finish(r)
    -- 4 steps (0.125 s) after the start, then 4, 4, 8 and 16 steps on; the end's (step 42)
    assert.same({ 5, 9, 13, 21, 37, 42 }, c.at)
    assert.near(37 / 32, r.energy.seconds, 1e-12) -- from the first reading
    assert.near(100 * 37 / 32, r.energy.joules, 1e-9)
    assert.equal(360, r.energy.launches) -- the 36 chunks after the first reading
    -- a measurement of 10 s: then every ENERGY_MAX_PERIOD (16 steps), 23 readings in all, where
    -- one every 100 ms would be 80 and more
    c = counter()
    w = watch.new(c.read, c.now)
    for _ = 1, 320 do w:after_chunk(10, 10) end
    r = r0()
    w:finish(r)
    local want = { 5, 9, 13, 21 }
    for step = 37, 321, 16 do want[#want + 1] = step end
    want[#want + 1] = 322
    assert.same(want, c.at)
    assert.equal(23, #c.at)
    assert.near(100, r.energy.mean_power_w, 1e-9)
  end)

  it(
    "begins the doubling again after a discarded chunk, which takes at most the chunks since "
    .. "the last reading", function()
    local c = counter()
    local w = watch.new(c.read, c.now)
    for _ = 1, 30 do w:after_chunk(10, 10) end -- readings at steps 5, 9, 13, 21
    c.clock = 900
    -- step 32: the 10 chunks since step 21 go with it
    assert.equal("discard", w:after_chunk(10, 10))
    c.clock = 1980
    w:pause(function() end) -- step 33 (the pause's own time is not the fake clock's)
    for _ = 1, 60 do w:after_chunk(10, 10) end -- steps 34-93
    local r = r0()
    w:finish(r)
    -- 4 steps after the pause, then 4, 4, 8, 16 and 16 (ENERGY_MAX_PERIOD) on; the end's (step 94)
    assert.same({ 5, 9, 13, 21, 37, 41, 45, 53, 69, 85, 94 }, c.at)
    assert.near((21 - 5) / 32 + (94 - 37) / 32, r.energy.seconds, 1e-12)
    assert.near(100 * r.energy.seconds, r.energy.joules, 1e-9)
    assert.equal((16 + 56) * 10, r.energy.launches) -- steps 6-21 and 38-93
  end)

  it("never reads the counter in a measurement shorter than ENERGY_PERIOD", function()
    local read, now, reads = fake({ { sm_mhz = 1980, energy_j = 1 } }, 0.02)
    local w = watch.new(read, now)
    for _ = 1, 4 do w:after_chunk(10, 10) end
    local r = r0()
    w:finish(r)
    assert.equal(0, reads.energy)
    assert.is_nil(r.energy)
  end)

  it(
    "discards a chunk taken below 75 % of the maximum clock or under thermal slowdown, and "
    .. "leaves it and the pause out of the energy", function()
    local read, now = fake({
      -- before the first chunk
      { sm_mhz = 1980, energy_j = 0 },
      -- kept: the counter's first reading
      { sm_mhz = 1980, energy_j = 10 },
      -- below 75 %: discarded
      { sm_mhz = 1200, energy_j = 50 },
      { sm_mhz = 1980, energy_j = 90, throttle = { "sw_thermal_slowdown" } },   -- discarded
      -- kept: a reading again
      { sm_mhz = 1980, energy_j = 100 },
      { sm_mhz = 1980, energy_j = 130 },                                       -- kept
    }, 1)
    local w, slept = watch.new(read, now), 0
    local sleep = function(s) slept = slept + s end
    assert.equal("keep", w:after_chunk(50, 50))
    assert.equal("discard", w:after_chunk(50, 50))
    w:pause(sleep)
    assert.equal("discard", w:after_chunk(50, 50))
    w:pause(sleep)
    assert.equal("keep", w:after_chunk(50, 50))
    assert.equal("keep", w:after_chunk(50, 50))
    local r = r0()
    w:finish(r)
    assert.equal(2 * watch.RECOVERY_PAUSE, slept)
    assert.same({ discarded_chunks = 2, discarded_samples = 100, kept_chunks = 0,
      reasons = { "sm_clock_below_75_percent_of_highest", "sw_thermal_slowdown" } }, r.throttle)
    assert.matches("^throttle: 2 chunks %(100 samples%)", r.notes[1])
    assert.near(30, r.energy.joules, 1e-9) -- only the last kept chunk's: 100 -> 130
    assert.near(1, r.energy.seconds, 1e-9)
    assert.same({ 1980, 1980, 1980 }, r.clock.chunks)
  end)

  it("keeps throttled chunks once MAX_DISCARDED were discarded, and says so", function()
    local read, now = fake({ { sm_mhz = 1980, energy_j = 0 }, { sm_mhz = 900, energy_j = 0 } }, 0.1)
    local w = watch.new(read, now)
    for _ = 1, watch.MAX_DISCARDED do
      assert.equal("discard", w:after_chunk(10, 10))
      w:pause(function() end)
    end
    assert.equal("keep", w:after_chunk(10, 10))
    local r = r0()
    w:finish(r)
    assert.equal(1, r.throttle.kept_chunks)
    assert.matches("1 kept when the limit of 10 was reached", r.notes[1])
  end)

  it(
    "takes a clock locked low for what it is, not for throttling: the reference is the highest "
    .. "clock read", function()
    local read, now = fake({ { sm_mhz = 1000, energy_j = 0 }, { sm_mhz = 1005, energy_j = 1 },
      { sm_mhz = 995, energy_j = 2 } }, 1)
    local w = watch.new(read, now)
    assert.equal("keep", w:after_chunk(10, 10))
    assert.equal("keep", w:after_chunk(10, 10))
    local r = r0()
    w:finish(r)
    assert.is_nil(r.throttle)
    assert.same({ 1005, 995 }, r.clock.chunks)
  end)

  it("does not report the energy of a measurement shorter than the counter needs", function()
    local read, now, reads = fake({ { sm_mhz = 1980, energy_j = 1 },
      { sm_mhz = 1980, energy_j = 1.5 } }, 0.3)
    local w = watch.new(read, now)
    w:after_chunk(10, 10)
    w:after_chunk(10, 10)
    local r = r0()
    w:finish(r)
    assert.equal(2, reads.energy) -- after each chunk, and not at the end: 0.9 s could not reach 1 s
    assert.is_nil(r.energy)
    assert.equal(0, #r.notes)
  end)

  it(
    "reports no energy when a reading lost the counter (its chunk's time would count, not "
    .. "its joules)", function()
    local read, now = fake({
      { sm_mhz = 1980, energy_j = 0 }, { sm_mhz = 1980, energy_j = 100 }, { sm_mhz = 1980 },
      { sm_mhz = 1980, energy_j = 300 }, { sm_mhz = 1980, energy_j = 400 },
    }, 1)
    local w = watch.new(read, now)
    for _ = 1, 4 do assert.equal("keep", w:after_chunk(10, 10)) end
    local r = r0()
    w:finish(r)
    assert.is_nil(r.energy)
  end)

  it("without NVML: one chunk, no clock per chunk, no energy, the used memory still", function()
    local read, now = fake({ { used_bytes = 5 }, { used_bytes = 7 } }, 0.5)
    local w = watch.new(read, now)
    assert.is_false(w.enabled)
    assert.equal("keep", w:after_chunk(100, 100))
    local r = r0()
    w:finish(r)
    assert.is_nil(r.clock.chunks)
    assert.is_nil(r.energy)
    assert.equal(0, #r.notes)
    assert.equal(7, r.memory.device_used_bytes)
  end)
end)

describe("--lock-clocks values", function()
  it("takes off, base, max and a clock in MHz, and refuses anything else naming it", function()
    assert.equal("off", clocks.parse("off"))
    assert.equal("base", clocks.parse("base"))
    assert.equal(1500, clocks.parse("1500"))
    for _, bad in ipairs { "fast", "99", "10001", "1500.5", "-1", "", "0x600" } do
      local ok, e = pcall(clocks.parse, bad)
      assert.is_false(ok, bad)
      assert.equal("usage", e.kind)
      assert.matches("%-%-lock%-clocks: expected off, base, max or a clock in MHz",
        tostring(e.message or e))
    end
  end)

  it("describes the device's clocks record", function()
    assert.equal("SM clock locked at 1980 MHz", clocks.describe { locked = true, mhz = 1980 })
    assert.equal("SM clock not locked", clocks.describe { locked = false })
    assert.equal("SM clock not locked (--lock-clocks refused)",
      clocks.describe { locked = false, refused = "NVML: x" })
    assert.is_nil(clocks.describe(nil))
    -- a bad record says nothing, and raises nothing
    assert.is_nil(clocks.describe { locked = true, mhz = 1.5 })
  end)

  it("is checked by the strict loader in a results document, naming the path", function()
    local load = require "wlrun.results.load"
    local function doc(clocks_record)
      return require("wlrun.results").render { schema = "wlrun-results", version = 1,
        complete = true,
        scenario = { name = "s", axes = {} }, device = { name = "d", clocks = clocks_record },
          configurations = {} }
    end
    assert.same({ locked = true, mhz = 1980, requested = "max" },
      load.decode(doc { locked = true, mhz = 1980, requested = "max" }, "f.json").device.clocks)
    assert.equal("NVML: x", load.decode(doc { locked = false, requested = "base",
      refused = "NVML: x" }, "f.json").device.clocks.refused)
    for _, bad in ipairs {
      { { locked = true, mhz = 1.5 }, "device%.clocks%.mhz is a number, not a whole number >= 0" },
      { { locked = true, mhz = 1e300 }, "device%.clocks%.mhz is a number, not a whole number" },
      { { locked = "yes" }, "device%.clocks%.locked is a string, not true or false" },
      { { locked = false, refused = { 1 } },
        "device%.clocks%.refused is a JSON object or array, not a string" },
      { "fast", "device%.clocks is a string, not an object" },
    } do
      local ok, e = pcall(load.decode, doc(bad[1]), "f.json")
      assert.is_false(ok)
      assert.matches("'f%.json' is malformed: " .. bad[2], e.message)
    end
  end)
end)
