-- GPU specs of `wlrun trace` on a real PyTorch training loop (tests/trace/torch_train.py, issue
-- 17): the traced iteration times agree with the methodology's own manual timing of the same
-- steps in the same run, the slow loader trips data-bottleneck and the fast one does not, and
-- the phases' GPU times add up to the step's GPU busy time. Skipped by name where PyTorch with
-- CUDA is missing. WLRUN_PYTHON names the interpreter (default python3).
local h = require "helper"

local python, torch_it = h.python, h.torch_it

local function median(xs)
  local s = {}
  for i, x in ipairs(xs) do s[i] = x end
  table.sort(s)
  local n = #s
  return n % 2 == 1 and s[(n + 1) // 2] or (s[n // 2] + s[n // 2 + 1]) / 2
end

local json = require("wlrun.results")

-- traces torch_train.py with args; returns the configuration and the manual step times
local function trace(dir, args, extra) -- extra: wlrun trace's options
  local template = dir .. "/template.json"
  local r = h.run(("trace --batch-size 256 --quiet %s -o %s -- %s %s --template %s %s"):format(extra
    or "",
    h.quote(dir .. "/trace.json"), h.quote(python),
      h.quote(h.source_dir .. "/tests/trace/torch_train.py"),
    h.quote(template), args))
  assert.equal(0, r.code, r.stdout .. r.stderr)
  local doc = json.decode(h.read(dir .. "/trace.json"), "trace.json")
  assert.equal(1, #doc.configurations, r.stdout)
  local manual = require("wlrun.json").decode(h.read(template)).step_times
  return doc.configurations[1], manual, r
end

local function codes(c)
  local t = {}
  for _, w in ipairs(c.warnings or {}) do t[#t + 1] = w.code end
  return table.concat(t, ",")
end

describe("wlrun trace of a PyTorch training loop", function()
  torch_it(
    "agrees with the manual timing within 2 %, phases add up to the GPU busy time within 5 %",
    function()
    local dir = h.tmpdir()
    local c, manual = trace(dir, "--steps 40 --hidden 8192 --batch 256 --workers 4")
    assert.equal("ok", c.status)
    assert.equal("gpu", c.trace.timing, c.trace.cupti.reason)
    assert.equal(35, #c.samples) -- 40 steps, 5 of warmup
    -- the same steps, pairwise: the step range inside the template's synchronised window
    local worst, ratios = 0, {}
    for i, t in ipairs(c.samples) do
      local m = manual[i + 5]
      ratios[i] = t / m
      worst = math.max(worst, math.abs(t / m - 1))
    end
    local phases = 0
    for _, ph in ipairs(c.trace.phases) do if ph.top then phases = phases + ph.gpu_mean end end
    print(
      ("\n    iter %.3f ms (manual %.3f ms), median ratio %.4f, worst %.2f%%; GPU busy %.3f ms, "
      .. "phases %.3f ms (%.1f%%)"):format(
      median(c.samples) * 1e3, median(manual) * 1e3, median(ratios), 100 * worst,
        c.trace.gpu_busy_mean * 1e3,
      phases * 1e3, 100 * phases / c.trace.gpu_busy_mean))
    assert.is_true(math.abs(median(ratios) - 1) <= 0.02, "median ratio " .. median(ratios))
    assert.is_true(math.abs(phases / c.trace.gpu_busy_mean - 1) <= 0.05)
    assert.equal("", codes(c))
  end)

  torch_it("a slow loader trips data-bottleneck; the fast one above does not", function()
    local dir = h.tmpdir()
    local c = trace(dir, "--steps 30 --hidden 8192 --batch 256 --workers 2 --delay-ms 0.2")
    print(("\n    slow loader: iter %.3f ms, data %.3f ms (%.0f%%): %s"):format(c.stats.mean * 1e3,
      c.loop.data_stats.mean * 1e3, 100 * c.loop.data_ratio, codes(c)))
    assert.matches("data%-bottleneck", codes(c))
  end)

  torch_it("--sync-steps and --kernels: each phase's top kernels, the step synchronised", function()
    local dir = h.tmpdir()
    local c, _, r = trace(dir, "--steps 12 --hidden 2048 --batch 256 --workers 2",
      "--sync-steps --kernels")
    assert.equal("ok", c.status)
    local names = {}
    for _, ph in ipairs(c.trace.phases) do
      names[#names + 1] = ph.name
      if ph.top then assert.is_true(#ph.kernels > 0, ph.name) end
    end
    assert.same({ "forward", "backward", "optimizer" }, names)
    assert.is_truthy(r.stdout:find("top kernels", 1, true))
  end)

  torch_it("MFU: achieved FLOP/s from --flops-per-sample, against the H200's dense bf16 peak",
    function()
    local dir = h.tmpdir()
    -- the MLP's FLOP per sample: 6 x its weights (2 forward, 4 backward), 1024 -> 4 x 4096 -> 1000
    local weights = 1024 * 4096 + 3 * 4096 * 4096 + 4096 * 1000
    local c = trace(dir, "--steps 30 --hidden 4096 --batch 256 --workers 4",
      ("--flops-per-sample %d"):format(6 * weights))
    assert.equal("ok", c.status)
    local L = c.loop
    print(("\n    MFU %.1f%%: %.1f TFLOP/s of the %s peak %.1f TFLOP/s (device %d)"):format(
      100 * L.mfu, L.achieved_flops / 1e12,
      L.dtype, L.peak_flops / 1e12, c.trace.device))
    assert.equal("bf16", L.dtype)
    assert.is_true(L.peak_flops > 5e14, tostring(L.peak_flops))
    assert.is_true(L.mfu > 0 and L.mfu < 1, tostring(L.mfu))
    assert.is_true(math.abs(L.achieved_flops - 6 * weights * L.throughput) < 1e-6
      * L.achieved_flops)
  end)

  torch_it("torchrun with two ranks on one GPU (gloo): a report per rank and the line over them",
    function()
    local dir = h.tmpdir()
    local r = h.run(
      ("trace --warmup 5 --quiet -o %s -- %s -m torch.distributed.run --nproc_per_node 2 %s "
      .. "--device cuda --steps 40 --slow-rank 1"):format(
      h.quote(dir .. "/ddp.json"), h.quote(python),
        h.quote(h.source_dir .. "/tests/trace/torch_ddp.py")))
    assert.equal(0, r.code, r.stdout .. r.stderr)
    local doc = json.decode(h.read(dir .. "/ddp.json"), "ddp.json")
    assert.equal(2, #doc.configurations, r.stdout)
    for _, c in ipairs(doc.configurations) do
      assert.equal("ok", c.status)
      assert.equal("gpu", c.trace.timing)
      assert.equal("auto", c.trace.ranges)
      assert.equal(32, c.loop.batch_size)
    end
    local g = doc.trace.ranks
    print(
      ("\n    2 ranks: global batch %d, %.1f samples/s, slowest #%d, spread mean %.3f ms, "
      .. "max %.3f ms"):format(g.batch,
      g.samples_per_s, g.slowest, g.spread_mean * 1e3, g.spread_max * 1e3))
    assert.equal(64, g.batch)
    assert.equal(2, g.processes)
  end)

  torch_it(
    "wl.command sweeps the script's own parameters, one trace each, GPU phases in every entry",
    function()
    local dir = h.tmpdir()
    local script = ([[
local wl = require "wlrun"
return wl.command {
  name = "torch_mlp",
  params = { hidden = { 1024, 4096 } },
  command = function(p)
    return { %q, %q, "--steps", 20, "--hidden", p.hidden, "--batch", 256, "--workers", 2 }
  end,
  batch_size = 256, timeout = "5m",
}
]]):format(python, h.source_dir .. "/tests/trace/torch_train.py")
    local r = h.run_script(script, "--quiet -o " .. h.quote(dir .. "/sweep.json"))
    assert.equal(0, r.code, r.stdout .. r.stderr)
    local doc = json.decode(h.read(dir .. "/sweep.json"), "sweep.json")
    assert.equal(2, #doc.configurations)
    local means, busy = {}, {}
    for i, c in ipairs(doc.configurations) do
      assert.equal("ok", c.status, c.error)
      assert.equal("gpu", c.trace.timing)
      assert.equal(15, #c.samples)
      means[i], busy[i] = c.stats.mean, c.trace.gpu_busy_mean
    end
    print(
      ("\n    wl.command: hidden 1024 %.3f ms, 4096 %.3f ms per step; GPU busy %.3f "
      .. "ms, %.3f ms"):format(
      means[1] * 1e3, means[2] * 1e3, busy[1] * 1e3, busy[2] * 1e3))
    -- the steps' wall time is the loader's (two workers make each batch on the CPU), so only the
    -- GPU's busy time tells the sizes apart (about 11 times the FLOPs at 4096)
    assert.is_true(busy[2] > busy[1], ("GPU busy %g s against %g s"):format(busy[2], busy[1]))
  end)
end)
