-- cupti mode (docs/measuring.md, "Kernel time through CUPTI"): the samples of core.time_cupti
-- chunk by chunk, and the per-kernel breakdown of a measurement, r.kernel_times: for each
-- kernel name, in the order of first launch, its launches per sample (count), the median
-- duration of one launch (median, seconds) and its share of the kernel time (share, 0..1).
local core = require "wlrun.core"
local engine = require "wlrun.engine"
local units = require "wlrun.text.units"

local kernel_times = {}

-- what the chunks of a measurement gave so far, by result: {samples =, order = {name...},
-- durations = {[name] = {s...}}, unattributed =}
local gathered = setmetatable({}, { __mode = "k" })

-- n samples of work in cupti mode (flush: the L2 flushed before each): the chunk (gpu,
-- enqueue, span, kernels), for kernel_times.gather once the engine keeps it
function kernel_times.measure(work, n, flush) return engine.time_cupti(work, n, flush) end

-- a chunk kept, into r's breakdown (a chunk discarded for throttling is not gathered)
function kernel_times.gather(r, c)
  local g = gathered[r] or { samples = 0, order = {}, durations = {}, unattributed = 0 }
  gathered[r] = g
  g.samples = g.samples + #c.gpu
  g.unattributed = g.unattributed + c.unattributed
  for _, k in ipairs(c.kernels) do
    local d = g.durations[k.name]
    if not d then
      d = {}
      g.durations[k.name] = d
      g.order[#g.order + 1] = k.name
    end
    table.move(k.durations, 1, #k.durations, #d + 1, d)
  end
  r.spans = r.spans or {}
  table.move(c.span, 1, #c.span, #r.spans + 1, r.spans)
  return c
end

-- the breakdown of what r's chunks gave: {{name =, count =, median =, share =}...}
function kernel_times.breakdown(g)
  local sums, total = {}, 0
  for _, name in ipairs(g.order) do
    local s = 0
    for _, v in ipairs(g.durations[name]) do s = s + v end
    sums[name], total = s, total + s
  end
  local list = {}
  for _, name in ipairs(g.order) do
    local d = g.durations[name]
    list[#list + 1] = { name = name, count = #d / g.samples, median = core.stats.summary(d).median,
      share = total > 0 and sums[name] / total or 0 }
  end
  return list
end

-- r.kernel_times and r.span_stats from the chunks, and a note naming the kernels
function kernel_times.finish(r)
  local g = gathered[r]
  if not g then return r end
  gathered[r] = nil
  r.kernel_times = kernel_times.breakdown(g)
  r.span_stats = core.stats.summary(r.spans)
  local parts = {}
  for i, k in ipairs(r.kernel_times) do
    if i > 5 then
      parts[#parts + 1] = ("%d more"):format(#r.kernel_times - 5)
      break
    end
    parts[#parts + 1] = ("%s %s x%g (%.0f %%)"):format(k.name, units.time(k.median), k.count,
      100 * k.share)
  end
  r.notes[#r.notes + 1] = (
    "cupti: kernel time only, from CUPTI's records; span median %s; %s"):format(
    units.time(r.span_stats.median), table.concat(parts, ", "))
  if g.unattributed > 0 then
    r.notes[#r.notes + 1] = (
      "cupti: %d kernel records outside the samples (another thread's work) were left out"):format(
      g.unattributed)
  end
  return r
end

return kernel_times
