-- --devices: a worker per GPU pulling configurations from a shared queue (docs/cluster.md).
local h = require "helper"
local wl = require "wlrun"

local SCENARIO = [[
local wl = require "wlrun"
local src = [=[extern "C" __global__ void spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}]=]
return wl.scenario {
  name = "queue", params = { i = wl.range(1, 12) },
  timing = { mode = "cold", warmup = 5, iters = 600 }, -- 0.6 s a configuration
  setup = function(p)
    return { launch = wl.kernel { src, name = "spin" }:bind { grid = 1, block = 1, args = { 1000000 } } }
  end,
  run = "launch",
}
]]

local function run(args)
  local dir = h.tmpdir()
  h.write(dir .. "/queue.lua", SCENARIO)
  local t0 = wl.clock()
  local r = h.run("queue.lua --no-progress -o out.json " .. args, { cwd = dir })
  local doc = r.code == 0 and require("wlrun.results").decode(h.read(dir .. "/out.json"),
    "out.json")
  return r, doc, wl.clock() - t0
end

describe("--devices", function()
  h.gpu_it("runs every configuration once from the queue on one device, recording the device",
    function()
    local r, doc = run("--devices 0")
    assert.equal(0, r.code, r.stderr)
    assert.equal(12, #doc.configurations)
    for i, c in ipairs(doc.configurations) do
      assert.equal(i, c.index)
      assert.equal("ok", c.status)
      assert.equal(0, c.device_index)
    end
    -- the parent did no GPU work: the device record and the floor are its worker's
    assert.is_string(doc.device.name)
    assert.is_true(doc.floor.event_pair > 0 and doc.floor.empty_kernel > 0)
    assert.same({ 0 }, doc.devices)
    -- the parent's account: when its worker had its context and floor, from the process's start
    assert.is_true(doc.wall.workers_ready > 0 and doc.wall.workers_ready < doc.wall.total,
      tostring(doc.wall.workers_ready))
    assert.is_nil(doc.wall.device)
    assert.is_string(doc.provenance.driver.cuda)
    assert.is_string(doc.provenance.toolkit.runtime)
    assert.matches("Device: ", r.stdout)
  end)

  h.gpu_it(
    "does not start again, for ever, a worker that exits before it has its GPU; the "
    .. "configurations fail naming why", function()
    local dir = h.tmpdir()
    -- the worker (CUDA_VISIBLE_DEVICES set by the parent) fails loading the scenario
    h.write(dir .. "/early.lua", [[
if os.getenv("CUDA_VISIBLE_DEVICES") and os.getenv("WLRUN_EARLY_TEST") then error("this worker has no GPU for you") end
return require("wlrun").scenario { name = "early", params = { i = { 1, 2, 3 } }, run = function() end }
]])
    local r = h.run("early.lua --no-progress --devices 0 -o out.json",
      { cwd = dir, env = "env -u CUDA_VISIBLE_DEVICES WLRUN_EARLY_TEST=1", prefix = "timeout 60" })
    assert.is_true(r.code ~= 0 and r.code ~= 124, r.code .. ": " .. r.stderr)
    assert.matches("3 of 3 configurations failed", r.stderr)
    assert.matches("device 0: .*this worker has no GPU for you", r.stderr)
    local failed = select(2, h.read(dir .. "/out.json"):gsub('"status":%s*"failed"', ""))
    assert.equal(3, failed)
  end)

  h.gpu_it(
    "gives its worker the GPU this process sees as that index, where CUDA_VISIBLE_DEVICES names "
    .. "it by UUID", function()
    -- as under Slurm: --devices 0 is the first GPU of the job's list, not the host's GPU 0
    local dir = h.tmpdir()
    h.write(dir .. "/seen.lua", [[
return require("wlrun").scenario { name = "seen", params = { i = { 1, 2 } },
  setup = function() local f = assert(io.open("seen." .. os.getenv("WLRUN_WORKER_DEVICE"), "w"))
    f:write(os.getenv("CUDA_VISIBLE_DEVICES")) f:close() end,
  run = function() end }
]])
    local gpu = "GPU-" .. wl.device().uuid
    local r = h.run("seen.lua --no-progress --devices 0 -o out.json",
      { cwd = dir, env = "CUDA_VISIBLE_DEVICES=" .. gpu })
    assert.equal(0, r.code, r.stderr)
    assert.equal(gpu, h.read(dir .. "/seen.0"))
    local doc = require("wlrun.results").decode(h.read(dir .. "/out.json"), "out.json")
    for _, c in ipairs(doc.configurations) do assert.equal(0, c.device_index) end
    assert.equal(wl.device().pci_bus_id, doc.device.pci_bus_id)
  end)

  if wl.device_count and (wl.device_count()) >= 2 then
    h.gpu_it("two GPUs finish a sweep in clearly less time than one, with the same results",
      function()
      local r1, one, t1 = run("")
      local r2, two, t2 = run("--devices 0,1")
      assert.equal(0, r1.code, r1.stderr)
      assert.equal(0, r2.code, r2.stderr)
      local used = {}
      for i, c in ipairs(two.configurations) do
        assert.equal(i, c.index)
        used[c.device_index] = (used[c.device_index] or 0) + 1
        -- the same kernel gives the same time on either GPU (a 1 ms spin: within 1 %)
        assert.is_true(math.abs(c.stats.median - one.configurations[i].stats.median) < 0.01e-3)
      end
      print(
        ("\n    12 configurations: one GPU %.2f s, --devices 0,1 %.2f s: ratio %.2f; device 0 "
        .. "ran %d, device 1 ran %d"):format(
        t1, t2, t2 / t1, used[0] or 0, used[1] or 0))
      assert.is_true((used[0] or 0) > 0 and (used[1] or 0) > 0)
      assert.same({ 0, 1 }, two.devices)
      assert.equal(one.device.name, two.device.name)
      assert.is_true(t2 < 0.8 * t1, ("%.2f s against %.2f s"):format(t2, t1))
    end)
  else
    require("busted").pending(
      "[gpu] --devices 0,1 against one GPU -- skipped: needs two CUDA devices")
  end
end)
