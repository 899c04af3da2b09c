-- Adaptive stopping's rule (lua/wlrun/measure/bench.lua, bench.stop_reason) on synthetic noise
-- histories: the target, the plateau (nvbench's stdrel stops on the same grounds), the time limit;
-- and the sizes of the chunks samples are taken in (bench.chunk_size).
local bench = require "wlrun.measure.bench"

local cfg = { target_noise = 0.005, min_samples = 10, min_time = 0, max_time = 15 }

-- the noise of the median of n stationary samples falls as 1/sqrt(n): chunks of 100 samples
local function shrinking(chunks, start)
  local h = {}
  for i = 1, chunks do h[i] = start / math.sqrt(i) end
  return h
end

describe("adaptive stopping", function()
  it("stops at the target once min_samples and min_time are met", function()
    assert.equal("target", bench.stop_reason({ 0.004 }, cfg, 100, 0.05))
    assert.is_nil(bench.stop_reason({ 0.004 }, cfg, 5, 0.05)) -- too few samples
    assert.is_nil(bench.stop_reason({ 0.004 }, { target_noise = 0.005, min_samples = 10,
      min_time = 0.5, max_time = 15 },
      100, 0.05)) -- too soon
  end)

  it("goes on while the noise still shrinks as 1/sqrt(n)", function()
    for chunks = 1, 200 do
      assert.is_nil(bench.stop_reason(shrinking(chunks, 0.2), cfg, 100 * chunks, 0.05 * chunks),
        tostring(chunks))
    end
  end)

  it("stops when the noise has stopped improving (drifting or two-group samples)", function()
    local h = {}
    for i = 1, 16 do h[i] = 0.02 + 0.0005 * ((i * 7) % 3) end -- flat around 2 %, jittering
    assert.equal("plateau", bench.stop_reason(h, cfg, 1600, 0.8))
    -- not enough chunks to tell
    assert.is_nil(bench.stop_reason({ table.unpack(h, 1, 15) }, cfg, 1500, 0.75))
    h[16] = 0.015 -- a real improvement in the last window: go on
    assert.is_nil(bench.stop_reason(h, cfg, 1600, 0.8))
  end)

  it("says max_time at the time limit, and the plateau is not judged before min_time", function()
    assert.equal("max_time", bench.stop_reason(shrinking(300, 0.5), cfg, 30000, 15.01))
    local flat = {}
    for i = 1, 20 do flat[i] = 0.03 end
    assert.is_nil(bench.stop_reason(flat, { target_noise = 0.005, min_samples = 10, min_time = 5,
      max_time = 15 }, 2000, 1))
  end)

  it("an infinite noise (too few samples to bound the median) never meets the target", function()
    assert.is_nil(bench.stop_reason({ math.huge }, cfg, 3, 0.01))
  end)
end)

describe("the chunks samples are taken in", function()
  it("start at about 5 ms by the warmup's estimate, at least min_samples", function()
    assert.equal(1000, bench.chunk_size(5e-6, 0, 0, 0, 10))  -- a 5 us kernel
    assert.equal(10, bench.chunk_size(0.1, 0, 0, 0, 10))     -- a 100 ms kernel: min_samples
    assert.equal(1, bench.chunk_size(0.1, 0, 0, 0, 1))        -- fixed stopping: no least
    assert.equal(10000, bench.chunk_size(1e-9, 0, 0, 0, 10))  -- never more than 10,000
  end)

  it("then last about 50 ms by what a sample really took, flushes and synchronisation included",
    function()
    -- 1000 samples of a 5 us kernel took 45 ms (a 40 us L2 flush each): 1112 more, not 10,000
    assert.equal(1112, bench.chunk_size(5e-6, 1000, 0.045, 1000, 10))
    -- a 100 ms kernel: one sample a chunk, so that the time limit is kept to the sample
    assert.equal(1, bench.chunk_size(0.1, 10, 1.0, 10, 10))
  end)

  it("grow at most 4x a chunk, so that a first chunk slowed by one-time costs does not mislead",
    function()
    -- 1 us a sample: would be 50,000
    assert.equal(400, bench.chunk_size(1e-6, 100, 0.0001, 100, 10))
    assert.equal(10000, bench.chunk_size(1e-6, 20000, 0.02, 5000, 10))
  end)

  it("hold whole rotations of a rotation list, which each chunk begins again from its first item",
    function()
    -- 25 by time: one more for the second item
    assert.equal(26, bench.chunk_size(200e-6, 0, 0, 0, 1, 2))
    assert.equal(27, bench.chunk_size(200e-6, 0, 0, 0, 1, 3))
    assert.equal(24, bench.chunk_size(1, 0, 0, 0, 10, 24))      -- the least is a whole rotation
    -- past 10,000 rather than a part rotation
    assert.equal(10010, bench.chunk_size(1e-9, 0, 0, 0, 10, 22))
    assert.equal(25, bench.chunk_size(200e-6, 0, 0, 0, 1, 1))
  end)

  it("sizes a block of blocked cold samples to about 2 ms of GPU time, 1 to 16 samples", function()
    assert.equal(1, bench.per_block(0.1))    -- a 100 ms kernel: one a block
    assert.equal(1, bench.per_block(0.002))
    assert.equal(2, bench.per_block(0.001))
    assert.equal(10, bench.per_block(200e-6))
    assert.equal(16, bench.per_block(10e-6)) -- short kernels: the most a block holds
    assert.equal(16, bench.per_block(0))
  end)
end)
