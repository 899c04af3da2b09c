-- The plain report of the methodology, one block per configuration (docs/results.md):
--
--   Kernel: gemm_tiled (M=4096, N=4096, K=4096)
--   Device: NVIDIA H200
--   Latency: 1.234 +/- 0.012 ms (mean +/- std, n=100)
--   Median: 1.230 ms (p10..p90 1.221..1.251 ms)
--   Throughput: 123.4 TFLOP/s
--   Warning [cache-hot]: ...
--
-- A skipped or failed configuration gets its Kernel line and the reason or the error. Formats
-- only: every number shown is in the document.
local units = require "wlrun.text.units"
local T = require "wlrun.report.table"

local M = {}

local function kernel_line(doc, c, axes)
  local k = type(c.kernels) == "table" and c.kernels[1]
  local name = k and k.name or T.scenario_name(doc)
  local params = T.describe(c.params, axes)
  return "Kernel: " .. tostring(name) .. (params ~= "" and (" (" .. params .. ")") or "")
end

local function block(doc, c, axes)
  local out = { kernel_line(doc, c, axes) }
  if c.status == "skipped" then
    out[#out + 1] = "Skipped: " .. tostring(c.reason or "")
    return out
  elseif c.status == "failed" then
    out[#out + 1] = ("Failed [%s]: %s"):format(tostring(c.kind or "?"),
      (tostring(c.error or ""):gsub("\n", "\n  ")))
    return out
  elseif not c.stats then
    out[#out + 1] = "Status: " .. tostring(c.status)
    return out
  end
  if type(doc.device) == "table" and doc.device.name then out[#out + 1] = "Device: "
    .. tostring(doc.device.name) end
  local s = c.stats
  if T.finite(s.mean) and T.finite(s.std) then
    out[#out + 1] = ("Latency: %s (mean +/- std, n=%s)"):format(T.mean_std(s.mean, s.std),
      T.value(s.n))
  end
  if T.finite(s.median) then
    out[#out + 1] = ("Median: %s (p10..p90 %s)"):format(units.time(s.median),
      T.time_range(s.p10, s.p90))
  end
  local m = c.metrics or {}
  if T.finite(m.flop_per_s) then
    out[#out + 1] = "Throughput: " .. units.rate(m.flop_per_s, "FLOP/s")
  elseif T.finite(m.bytes_per_s) then
    out[#out + 1] = "Throughput: " .. units.rate(m.bytes_per_s, "B/s")
  end
  if T.finite(m.items_per_s) then out[#out + 1] = "Items: " .. units.rate(m.items_per_s, "/s") end
  for _, d in ipairs(T.custom_metrics_present({ configurations = { c } })) do
    out[#out + 1] = ("Metric %s: %s"):format(d.name,
      T.custom_metric(c.custom_metrics[d.name]) or "-")
  end
  for _, w in ipairs(c.warnings or {}) do
    out[#out + 1] = ("Warning [%s]: %s"):format(tostring(w.code), tostring(w.message or ""))
  end
  return out
end

function M.render(doc)
  doc = T.printable(doc)
  local axes = T.axes(doc)
  local blocks = {}
  for _, c in ipairs(doc.configurations or {}) do
    blocks[#blocks + 1] = table.concat(block(doc, c, axes), "\n")
  end
  if #blocks == 0 then return ("%s: no configurations\n"):format(T.scenario_name(doc)) end
  return table.concat(blocks, "\n\n") .. "\n"
end

return M
