-- Benchmark (not a test): where the rest of auto's gap to a raw graph comes from on short kernels
-- (docs/benchmarks.md, "auto: no launch cost left in a sample"). The same kernel timed five ways,
-- at 7, 73 and 730 us, in ROUNDS alternating rounds:
--   record     cupti mode, one launch a sample (auto's choice): CUPTI's record of the kernel;
--   node       cupti mode on a wl.graph of 100 launches: the median record of one graph node;
--   span/100   the same graphs: first start to last end in CUPTI's records, per node;
--   graph      graph mode, 100 launches a sample, CUDA events and no CUPTI: the period per launch;
--   raw        a raw C graph of 100 launches (evidence_raw, events, no CUPTI; the timer spin only).
-- Two kernels (tests/bench/kernels/spin.cu): `spin` ends on %globaltimer, whose ticks could make
-- its length depend on where it starts; `spin_cycles` counts its SM's clock cycles instead. The
-- last columns are the differences from the graph's period per launch, in ns: where they are the
-- same at every length, they are a fixed cost per kernel, not a share of the kernel's work.
--   wlrun tests/bench/cupti_record.lua -- PATH/TO/evidence_raw
local wl = require "wlrun"
local core = require "wlrun.core"

local raw = arg[1] or "build/evidence_raw"
local ROUNDS = 3
local MHZ = 1980 -- spin_cycles' cycles per us (the H100's and H200's top SM clock; only its
-- length's order matters: each kernel is compared with itself)
local kernels = {
  timer = wl.kernel { wl.source "kernels/spin.cu", name = "spin" },
  cycles = wl.kernel { wl.source "kernels/spin.cu", name = "spin_cycles" },
}

local function middle(v) return core.stats.summary(v).median end

local function raw_graph(ns)
  local p = assert(io.popen(("%s spin %d graph 100 100"):format(raw, ns)))
  local out = p:read("a")
  p:close()
  return assert(tonumber(out:match("^(%S+)")), "evidence_raw printed: " .. out)
end

-- one round of one kernel at one length: {record, node, span, graph, raw}, seconds per launch
local function round_of(kind, us)
  local b = kernels[kind]:bind { grid = 1, block = 1,
    args = { kind == "timer" and us * 1000 or us * MHZ } }
  local iters = us >= 730 and 60 or 300
  local g_iters = us >= 730 and 3 or 20
  local record = wl.bench(b, { mode = "cupti", flush_l2 = false, warmup = 20, iters = iters })
  local g100 <close> = wl.graph(function() for _ = 1, 100 do b() end end)
  local nodes = wl.bench(g100, { mode = "cupti", flush_l2 = false, warmup = 3, iters = g_iters })
  local graph = wl.bench(b, { mode = "graph", batch = 100, warmup = 3, iters = g_iters })
  return { record.stats.median, nodes.kernel_times[1].median, nodes.span_stats.median / 100,
    graph.stats.median, kind == "timer" and raw_graph(us * 1000) or nil }
end

print(("CUPTI's record of a kernel against a graph's period per launch, %s, %d alternating "
  .. "rounds (medians)"):format(wl.device().name, ROUNDS))
print(("%-7s %6s %11s %11s %11s %11s %11s %9s %9s %9s"):format("kernel", "us", "record",
  "node", "span/100", "graph", "raw", "rec-gr ns", "node-gr", "span-gr"))
local gaps = {}
for _, us in ipairs { 7, 73, 730 } do
  for _, kind in ipairs { "timer", "cycles" } do
    local cols = { {}, {}, {}, {}, {} }
    for r = 1, ROUNDS do
      local got = round_of(kind, us)
      for c = 1, 5 do cols[c][r] = got[c] end
    end
    local m = {}
    for c = 1, 5 do m[c] = #cols[c] > 0 and middle(cols[c]) or nil end
    local gr = m[4]
    gaps[#gaps + 1] = (m[1] - gr) * 1e9
    print(("%-7s %6d %11.4f %11.4f %11.4f %11.4f %11s %9.0f %9.0f %9.0f"):format(kind, us,
      m[1] * 1e6, m[2] * 1e6, m[3] * 1e6, gr * 1e6, m[5] and ("%.4f"):format(m[5] * 1e6) or "-",
      (m[1] - gr) * 1e9, (m[2] - gr) * 1e9, (m[3] - gr) * 1e9))
  end
end
table.sort(gaps)
print(("record less the graph's period per launch: %.0f to %.0f ns at every length and kernel; "
  .. "at 7 us that is %.2f %% to %.2f %%"):format(gaps[1], gaps[#gaps], gaps[1] / 70,
  gaps[#gaps] / 70))
