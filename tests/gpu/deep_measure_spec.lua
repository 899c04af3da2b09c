-- GPU specs of issue 18's measurement (docs/measuring.md): cold samples with the L2 flush behind
-- a blocking kernel, the SM clock of each chunk, energy and memory per configuration, and
-- --lock-clocks (locked, or refused with a warning, never a failed run).
local h = require "helper"
local wl = require "wlrun"
local json = require "wlrun.json"

local SPIN = [[
extern "C" __global__ void spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
extern "C" __global__ void stamp(long long *log, unsigned int *count, unsigned long long ns, int item) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
  unsigned int i = atomicAdd(count, 1u);
  log[3 * i] = t0, log[3 * i + 1] = t, log[3 * i + 2] = item;
}
extern "C" __global__ void copy(float* __restrict__ y, const float* __restrict__ x, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) y[i] = x[i];
}]]

local function spin(us)
  return wl.kernel({ SPIN, name = "spin" }):bind { grid = 1, block = 1,
    args = { math.floor(us * 1000) } }
end

describe("deep measurement on a GPU", function()
  -- docs/measuring.md: behind the blocking kernel no host latency is in a sample; what stays is
  -- the GPU's own cost of an event pair around one launch, which only a graph amortises
  h.gpu_it(
    "flushed cold samples of a 7 us kernel are taken behind a blocking kernel, never slower "
    .. "than without it", function()
    local b = spin(7)
    local cold = wl.bench(b, { mode = "cold", flush_l2 = true, warmup = 20, iters = 400 })
    assert.equal("cold", cold.mode)
    assert.is_true(cold.flush_l2)
    assert.same({ gave_up = 0, kept = 0 }, cold.blocked)
    assert.matches("blocking kernel", table.concat(cold.notes, "\n"))
    -- without the blocking kernel (a function: Lua between launches)
    local plain = wl.bench(function() b:launch() end,
      { mode = "cold", flush_l2 = true, warmup = 20, iters = 400 })
    assert.is_nil(plain.blocked)
    local graph = wl.bench(b, { mode = "graph", warmup = 20, iters = 400 })
    assert.is_true(cold.stats.median <= plain.stats.median + 0.2e-6,
      ("blocked %.3f us, unblocked %.3f us"):format(cold.stats.median * 1e6,
        plain.stats.median * 1e6))
    assert.is_true(cold.stats.median > graph.stats.median
      and cold.stats.median < graph.stats.median + 3.5e-6,
      ("blocked %.3f us, graph %.3f us, event pair %.3f us"):format(cold.stats.median * 1e6,
        graph.stats.median * 1e6,
        cold.floor.event_pair * 1e6))
  end)

  -- docs/measuring.md: the next block is queued on a second stream while the GPU runs the one
  -- before; the samples still run one at a time, in order, each of its own item
  h.gpu_it(
    "blocked samples on two streams never overlap: in order, each of its item, on a stream of "
    .. "any priority", function()
    local stream = wl.stream { priority = -1 }
    local k = wl.kernel { SPIN, name = "stamp" }
    -- each launch of the items logs its start, its end (globaltimer) and its item
    local function logged(n, warmup, items, after)
      -- room for the warmup's launches (at least one, to size the chunks), the samples, the one
      -- after
      local log, count = wl.tensor { 3 * (n + warmup + 2), dtype = "i64" },
        wl.tensor { 1, dtype = "u32" }
      -- their zeros, queued on wlrun's stream, before the launches on this one
      wl.current_stream():sync()
      local list = {}
      for item = 1, items do
        list[item] = k:bind { grid = 1, block = 1, stream = stream,
          args = { log, count, 20000, item } }
      end
      local r = wl.bench(#list == 1 and list[1] or list,
        { mode = "cold", flush_l2 = true, warmup = warmup, iters = n })
      if after then k:bind { grid = 1, block = 1, stream = stream,
        args = { log, count, 1000, 9 } }() end
      stream:sync()
      local launches, t = count:to_host()[1], log:to_host()
      log:free(); count:free()
      return r, launches, t
    end
    local n, warmup = 100, 3 -- 7 blocks, the last one short
    local r, launches, t = logged(n, warmup, 3)
    assert.same({ gave_up = 0, kept = 0 }, r.blocked)
    assert.equal(n, #r.samples)
    assert.equal(n + warmup, launches)
    local ended, item = 0, 0
    for i = 0, launches - 1 do
      local t0, t1, it = t[3 * i + 1], t[3 * i + 2], t[3 * i + 3]
      assert.is_true(t0 >= ended, ("launch %d began %d ns before the one before it ended"):format(
        i + 1, ended - t0))
      -- the items in turn: the warmup's from the first, and each chunk of samples from the first
      -- again
      assert.is_true(it == item % 3 + 1 or (i >= warmup and it == 1),
        ("launch %d: item %d after item %d"):format(i + 1, it, item))
      ended, item = t1, it
    end
    -- each sample holds its kernel's 20 us and the event pair's own: no flush, no wait for the host
    for i, s in ipairs(r.samples) do assert.is_true(s > 19e-6 and s < 30e-6,
      ("sample %d: %.3f us"):format(i, s * 1e6)) end
    -- 20 samples: the second block, on the second stream, is the last; work queued on the work's
    -- stream after the measurement runs after it
    local r2, launches2, t2 = logged(20, 0, 1, true)
    assert.same({ gave_up = 0, kept = 0 }, r2.blocked)
    -- the warmup's one launch (warmup = 0 still sizes the chunks by one), 20, the one after
    assert.equal(22, launches2)
    local last = 3 * (launches2 - 1)
    assert.equal(9, t2[last + 3])
    for i = 0, launches2 - 2 do
      assert.is_true(t2[last + 1] >= t2[3 * i + 2],
        "the launch after began before launch " .. (i + 1))
    end
    stream:destroy()
  end)

  h.gpu_it(
    "the flush is in every blocked sample: a copy that fits the L2 reads slower flushed than hot",
    function()
    local n = 2 * 1024 * 1024 -- 8 MB each way: fits the H200's 50 MB L2
    local x, y = wl.tensor { n, dtype = "f32", init = wl.normal() }, wl.tensor { n, dtype = "f32" }
    local k = wl.kernel({ SPIN, name = "copy" }):bind { grid = 264, block = 256,
      args = { y, x, n } }
    local flushed = wl.bench(k, { mode = "cold", flush_l2 = true, warmup = 20, iters = 200 })
    local hot = wl.bench(k, { mode = "graph", warmup = 20, iters = 200 })
    assert.truthy(flushed.blocked)
    assert.is_true(flushed.stats.median > 1.1 * hot.stats.median,
      ("flushed %.2f us, hot %.2f us"):format(flushed.stats.median * 1e6, hot.stats.median * 1e6))
    x:free(); y:free()
  end)

  h.gpu_it(
    "auto with the flush times a short kernel in cupti mode: within 0.5 us of graph "
    .. "replays, flushed", function()
    local b = spin(7)
    local r = wl.bench(b, { flush_l2 = true, warmup = 20, iters = 400 })
    assert.equal("cupti", r.mode)
    assert.is_true(r.flush_l2)
    assert.matches("cupti mode, the kernel's own time", table.concat(r.notes, "\n"))
    local graph = wl.bench(b, { mode = "graph", warmup = 20, iters = 400 })
    assert.is_true(math.abs(r.stats.median - graph.stats.median) < 0.5e-6,
      ("auto %.3f us, graph %.3f us"):format(r.stats.median * 1e6, graph.stats.median * 1e6))
    -- a long kernel too; a graph of it stays cold, behind the blocking kernel
    local long = wl.bench(spin(200), { flush_l2 = true, warmup = 5, iters = 50 })
    assert.equal("cupti", long.mode)
    local l = spin(200)
    local g = wl.graph(function() l() end)
    local graphed = wl.bench(g, { flush_l2 = true, warmup = 5, iters = 50 })
    assert.equal("cold", graphed.mode)
    assert.truthy(graphed.blocked)
  end)

  h.gpu_it(
    "cupti mode flushes the L2 before each sample: kernel-only time, flushed, without the event "
    .. "pair's cost", function()
    local spin7 = spin(7)
    local flushed = wl.bench(spin7, { mode = "cupti", flush_l2 = true, warmup = 20, iters = 200 })
    local plain = wl.bench(spin7, { mode = "cupti", warmup = 20, iters = 200 })
    assert.is_true(flushed.flush_l2)
    assert.is_nil(flushed.blocked)
    assert.is_true(math.abs(flushed.stats.median - plain.stats.median) < 0.2e-6
      and flushed.stats.median < 8e-6,
      ("flushed %.3f us, not flushed %.3f us"):format(flushed.stats.median * 1e6,
        plain.stats.median * 1e6))
    local n = 2 * 1024 * 1024
    local x, y = wl.tensor { n, dtype = "f32", init = wl.normal() }, wl.tensor { n, dtype = "f32" }
    local k = wl.kernel({ SPIN, name = "copy" }):bind { grid = 264, block = 256,
      args = { y, x, n } }
    local cold = wl.bench(k, { mode = "cupti", flush_l2 = true, warmup = 20, iters = 200 })
    local hot = wl.bench(k, { mode = "cupti", warmup = 20, iters = 200 })
    assert.is_true(cold.stats.median > 1.1 * hot.stats.median,
      ("flushed %.2f us, hot %.2f us"):format(cold.stats.median * 1e6, hot.stats.median * 1e6))
    x:free(); y:free()
  end)

  h.gpu_it("records the SM clock of each chunk, the energy and mean power, and the used memory",
    function()
    local r = wl.bench(spin(200), { mode = "cold", warmup = 10, iters = 6000 }) -- 1.2 s
    assert.truthy(r.memory and r.memory.device_used_bytes > 0)
    if not wl.gpu_clock().nvml then return end -- no NVML: no clock per chunk, no energy
    assert.is_true(#r.clock.chunks >= 20, "chunks: " .. #r.clock.chunks)
    for _, mhz in ipairs(r.clock.chunks) do assert.is_true(mhz > 100 and mhz < 5000,
      tostring(mhz)) end
    assert.truthy(r.energy, table.concat(r.notes, "\n"))
    assert.is_true(r.energy.mean_power_w > 20 and r.energy.mean_power_w < 1500,
      tostring(r.energy.mean_power_w))
    assert.near(r.energy.joules / r.energy.seconds, r.energy.mean_power_w, 1e-9)
    -- the chunks from the counter's first reading (about 100 ms in) on
    assert.is_true(r.energy.launches >= 4500 and r.energy.launches < 6000,
      tostring(r.energy.launches))
    assert.is_true(r.energy.seconds >= 1 and r.energy.seconds < 1.2, tostring(r.energy.seconds))
    assert.near(r.energy.joules / r.energy.launches, r.energy.joules_per_launch, 1e-12)
  end)

  h.gpu_it(
    "a scenario's entries carry energy, memory and FLOP/J; --lock-clocks locks or is refused "
    .. "with a warning", function()
    local dir = h.tmpdir()
    h.write(dir .. "/s.lua", ([[
local wl = require "wlrun"
local K = [==[%s]==]
return wl.scenario {
  name = "energy", params = { n = { 1048576, 4194304 } }, timing = { mode = "cold", iters = 300, warmup = 10, min_time = 1.1, adaptive = true },
  setup = function(p)
    local x, y = wl.tensor { p.n, dtype = "f32", init = wl.normal() }, wl.tensor { p.n, dtype = "f32" }
    return { x = x, y = y, go = wl.kernel({ K, name = "copy" }):bind { grid = 264, block = 256, args = { y, x, p.n } } }
  end,
  run = "go",
  work = function(p) return { flops = p.n, bytes = 8 * p.n } end,
}]]):format(SPIN))
    local r = h.run(("%s -o %s --lock-clocks base"):format(h.quote(dir .. "/s.lua"),
      h.quote(dir .. "/o.json")))
    assert.equal(0, r.code, r.stderr)
    local doc = json.decode(h.read(dir .. "/o.json"))
    local c = doc.device.clocks
    if c.locked then
      assert.matches("SM clock locked at %d+ MHz", r.stdout)
    else
      assert.matches("%-%-lock%-clocks base refused: ", r.stderr)
      assert.truthy(c.refused)
    end
    for i, e in ipairs(doc.configurations) do
      local n = e.params.n
      assert.equal(8 * n, e.memory.tensor_peak_bytes, "configuration " .. i)
      assert.is_true(e.memory.device_used_bytes >= 8 * n)
      if wl.gpu_clock().nvml and e.energy then
        assert.near(n / e.energy.joules_per_launch, e.metrics.flop_per_joule,
          1e-6 * e.metrics.flop_per_joule)
      end
    end
  end)
end)
