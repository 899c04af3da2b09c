-- The text of a loop's summary (docs/loops.md): throughput, iteration and data times, the
-- phases and what lies outside them, the warnings. Formats only.
--   render(s, name)        s: a summary as wlrun.measure.loop.summarize makes it
--   of_entry(c)            the same summary from a loop configuration of a results document
local units = require "wlrun.text.units"
local printable = require "wlrun.text.printable"

local P = printable.whole

local M = {}

local function T(v) return units.finite(v) and units.time(v) or "-" end

function M.render(s, name)
  local out = {
    ("%s: %d iterations of %d samples: %.1f samples/s (steady-state total %s)"):format(
      P(name or "loop"),
      s.iters, s.batch_size, s.throughput, T(s.total_time)),
    ("  iter  mean %s  median %s  p90 %s  p99 %s"):format(T(s.iter.mean), T(s.iter.median),
      T(s.iter.p90), T(s.iter.p99)),
    ("  data  mean %s  median %s  p90 %s  p99 %s  (%.1f%% of iter)"):format(T(s.data.mean),
      T(s.data.median),
      T(s.data.p90), T(s.data.p99), 100 * s.data_ratio),
  }
  if s.flops then
    out[#out + 1] = ("  %s (%.4g FLOP per sample)%s"):format(units.rate(s.flops.achieved, "FLOP/s"),
      s.flops.per_sample, s.flops.mfu and ("; MFU %.1f%% of the dense %s peak, %s"):format(
        100 * s.flops.mfu, P(s.flops.dtype), units.rate(s.flops.peak, "FLOP/s")) or "")
  end
  if #s.phases > 0 and s.outside then
    out[#out + 1] = s.timing == "cpu" and "  phases (CPU time per iteration):"
      or "  phases (GPU time per iteration):"
    for _, ph in ipairs(s.phases) do
      out[#out + 1] = ("    %-16s %10s  %5.1f%%%s"):format(P(ph.name), T(ph.mean), 100 * ph.share,
        ph.top and "" or "  (nested)")
    end
    out[#out + 1] = ("    %-16s %10s  %5.1f%%"):format("(outside)", T(s.outside.mean),
      100 * s.outside.share)
  end
  for _, w in ipairs(s.warnings or {}) do
    out[#out + 1] = ("  warning [%s] %s (hint: %s)"):format(P(w.code), P(w.message), P(w.hint))
  end
  return table.concat(out, "\n")
end

local function number(v) return type(v) == "number" and v or 0 / 0 end

-- the summary of a loop configuration (its warnings stay with the document's)
function M.of_entry(c)
  local L = c.loop
  if type(L) ~= "table" or type(c.stats) ~= "table"
    or type(L.data_stats) ~= "table" then return nil end
  return { iters = math.tointeger(c.stats.n) or #(c.samples or {}),
    batch_size = math.tointeger(L.batch_size) or 0,
    throughput = number(L.throughput), total_time = number(L.total_time), iter = c.stats,
      data = L.data_stats,
    data_ratio = number(L.data_ratio), phases = type(L.phases) == "table" and L.phases or {},
    outside = type(L.outside) == "table" and L.outside or nil, warnings = {},
    flops = type(L.achieved_flops) == "number" and { achieved = L.achieved_flops,
      per_sample = number(L.flops_per_sample),
      mfu = type(L.mfu) == "number" and L.mfu or nil,
        dtype = type(L.dtype) == "string" and L.dtype or "?",
      peak = number(L.peak_flops) } or nil,
    -- wlrun trace: "cpu" without CUPTI
    timing = type(c.trace) == "table" and c.trace.timing or nil }
end

return M
