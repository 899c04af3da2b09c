-- Launch overhead: a chain of `chain` tiny dependent kernels (each adds 1 to every element of a
-- 1 KiB buffer, on one stream), launched eagerly from a Lua loop (one bound launch per kernel)
-- or replayed as a CUDA graph captured once in setup (wl.graph). The timing is cold: one sample
-- is one whole chain between its own pair of events, so the median is the GPU time of a chain.
-- How to read the table: the cost of one kernel is median / chain. At chain = 1 both ways
-- show the cold floor of a single launch (an event pair around one launch, about 5-7 us on an
-- H200); at chain = 100 eager shows the rate at which the host can enqueue launches (or the GPU
-- run them back to back, whichever is slower: the launch-bound warning says which) and graph the
-- rate at which the GPU runs a graph's kernel nodes. There is no work in FLOP or bytes, so no
-- derived metric: the per-kernel cost is the result.
--   wlrun scenarios/launch_overhead.lua
--   wlrun scenarios/launch_overhead.lua -p chain=1000 -p launch=graph -o out/launch.json
local wl = require "wlrun"

local src = wl.source "kernels/tiny.cu"
local N = 256 -- elements of the buffer: one block

return wl.scenario {
  name = "launch_overhead",
  description = "a chain of tiny kernels: eager launches from Lua vs one CUDA graph replay",
  params = {
    chain = { 1, 10, 100 },
    -- not "mode": the tables and CSV already have a "mode" column, the timing mode
    launch = { "eager", "graph" },
  },
  order = { "chain", "launch" },
  timing = { mode = "cold", warmup = 20, iters = 200 },

  setup = function(p)
    local s = {}
    s.p = wl.tensor { N, dtype = "u32" } -- zeros
    s.launch = wl.kernel { src, name = "tiny" }:bind { grid = 1, block = N, args = { s.p, N } }
    local chain, launch = p.chain, s.launch
    local function eager() for _ = 1, chain do launch() end end
    if p.launch == "eager" then
      s.run = eager
    else
      s.graph = wl.graph(eager) -- captures the chain's launches: nothing runs yet
      s.run = s.graph
    end
    return s
  end,

  run = "run",

  -- the work ran once before the check; nine more runs here, then every element counts 10 chains
  check = function(p, s)
    for _ = 1, 9 do s.run() end
    wl.sync()
    local h, want = s.p:to_host(), 10 * p.chain
    for i = 1, N do
      if h[i] ~= want then
        return false, ("p[%d] = %d after 10 chains of %d, expected %d"):format(i - 1, h[i], p.chain,
          want)
      end
    end
    return true, ("every element counts %d launches"):format(want)
  end,
}
