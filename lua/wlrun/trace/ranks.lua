-- Several processes with steps (DDP ranks under torchrun, docs/trace.md "Several processes"): one
-- line over them all. Pure: the report's entries in, a summary out.
--
--   ranks.summary(entries) -> nil (fewer than two measured processes), or
--     {processes, steps (measured in all), batch (the processes' batches added), samples_per_s
--      (that batch per period of the slowest process), slowest (its index), slowest_iter (its
--      mean iteration, s), spread_mean, spread_max (s: per step, the slowest process's iteration
--      less the fastest's, over the steps all of them measured)}
local ranks = {}

local function mean(xs)
  local t = 0
  for _, x in ipairs(xs) do t = t + x end
  return #xs > 0 and t / #xs or 0
end

function ranks.summary(entries)
  local ok = {}
  for _, e in ipairs(entries) do
    if e.status == "ok" and e.loop and #e.samples > 0 then ok[#ok + 1] = e end
  end
  if #ok < 2 then return nil end
  local batch, slowest, slowest_period, slowest_iter, steps = 0, nil, -1, 0, math.huge
  local samples = 0 -- per step, each process's exact mean (its batches may differ)
  for _, e in ipairs(ok) do
    batch = batch + e.loop.batch_size
    samples = samples + e.loop.throughput * e.loop.total_time / #e.samples
    local period = e.loop.total_time / #e.samples
    if period > slowest_period then slowest, slowest_period, slowest_iter = e.index, period,
      mean(e.samples) end
    steps = math.min(steps, #e.samples)
  end
  local spread = {}
  for j = 1, steps do
    local lo, hi = math.huge, -math.huge
    for _, e in ipairs(ok) do lo, hi = math.min(lo, e.samples[j]), math.max(hi, e.samples[j]) end
    spread[j] = hi - lo
  end
  local spread_max = 0
  for _, x in ipairs(spread) do spread_max = math.max(spread_max, x) end
  return { processes = #ok, steps = steps, batch = batch,
    samples_per_s = slowest_period > 0 and samples / slowest_period or 0,
    slowest = slowest, slowest_iter = slowest_iter, spread_mean = mean(spread),
      spread_max = spread_max }
end

return ranks
