-- GPU specs of loop workloads: the shipped training loop learns, its timings are consistent,
-- and only the slow loader trips the bottleneck rule.
local h = require "helper"

describe("training loop", function()
  h.gpu_it(
    "the loss falls, fps matches batch and time, phases cover the step, slow data is flagged",
    function()
    local dir = h.tmpdir()
    local r = h.run("scenarios/training_loop.lua --no-progress -o " .. dir .. "/train.json",
      { cwd = h.source_dir, env = "WLRUN_DATA_DIR=" .. dir })
    assert.equal(0, r.code, r.stderr)
    assert.matches("%[0001%]: iter [%d.]+ ms, data [%d.]+ ms, fps [%d.]+", r.stdout)
    assert.matches("training_loop: 50 iterations of 1024 samples", r.stdout)
    local doc = require("wlrun.results").decode(h.read(dir .. "/train.json"), "train.json")
    local by = {}
    for _, c in ipairs(doc.configurations) do by[c.params.loader] = c end
    for loader, c in pairs(by) do
      assert.equal("ok", c.status, loader)
      assert.is_true(c.check.ok, loader .. ": " .. tostring(c.check.message))
      local l = c.loop
      -- fps: batch x iterations over the summed iteration and data times
      local total = 0
      for i, t in ipairs(c.samples) do total = total + t + l.data[i] end
      assert.is_true(math.abs(l.throughput - 1024 * #c.samples / total) < 1e-6 * l.throughput)
      -- the three phases hold at least 90 % of the step's time (the stated tolerance)
      local phases = 0
      for _, ph in ipairs(l.phases) do if ph.top then phases = phases + ph.mean end end
      print(
        ("\n    %s: iter %.2f ms, data %.2f ms, phases %.2f ms (%.1f%%), %.0f "
        .. "samples/s, %s"):format(loader,
        c.stats.mean * 1e3, l.data_stats.mean * 1e3, phases * 1e3, 100 * phases / c.stats.mean,
          l.throughput,
        c.check.message))
      assert.is_true(phases >= 0.9 * c.stats.mean and phases <= 1.1 * c.stats.mean, loader)
    end
    local function codes(c)
      local t = {}
      for _, w in ipairs(c.warnings) do t[#t + 1] = w.code end
      return table.concat(t, ",")
    end
    assert.equal("", codes(by.fast))
    assert.matches("data%-bottleneck", codes(by.slow))
  end)
end)
