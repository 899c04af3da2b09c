-- The work metrics of a compared pair of configurations (docs/compare.md, "Work metrics"): for
-- each metric both have beyond the time — items_per_s, the custom metrics of work(p), per
-- second, or as they are where rate = false, and the energy and memory of the measurement —
-- BASE's, NEW's and NEW/BASE. The time's ratio
-- stays the verdict; these say what it means in the scenario's own units, and differ from it
-- where the two runs did different work per launch.
--
--   metrics.of(b, n) -> array of {name, unit, base, new, ratio}, or nil when none
--   metrics.lines(doc) -> a line per compared configuration and metric
local units = require "wlrun.text.units"
local T = require "wlrun.report.table"
local json_out = require "wlrun.report.json"

local finite = units.finite

local M = {}

-- the metrics of the measurement itself: {key in metrics, name, unit}
local MEASURED = { { "mean_power_w", "power", "W" }, { "joules_per_launch", "energy/launch", "J" },
  { "flop_per_joule", "FLOP/J", "FLOP/J" }, { "tensor_peak_bytes", "tensor memory", "B" } }

-- the metrics of one entry: {name = {value =, unit =}}; name "items/s", "tokens/s" or "acc"
local function metrics_of(c)
  local list = {}
  if type(c.metrics) == "table" and finite(c.metrics.items_per_s) then
    list["items/s"] = { value = c.metrics.items_per_s, unit = "/s" }
  end
  -- energy and memory (docs/measuring.md, "Clocks, throttling, energy and memory")
  local m = type(c.metrics) == "table" and c.metrics or {}
  for _, x in ipairs(MEASURED) do
    if finite(m[x[1]]) then list[x[2]] = { value = m[x[1]], unit = x[3] } end
  end
  for k, x in pairs(type(c.custom_metrics) == "table" and c.custom_metrics or {}) do
    if type(x) == "table" then
      local unit = x.unit and tostring(x.unit) or ""
      if finite(x.per_s) then
        list[tostring(k) .. "/s"] = { value = x.per_s, unit = unit .. "/s" }
      elseif finite(x.value) then
        list[tostring(k)] = { value = x.value, unit = unit }
      end
    end
  end
  return list
end

function M.of(b, n)
  local mb, mn = metrics_of(b), metrics_of(n)
  local names = {}
  for k in pairs(mb) do
    if mn[k] and mb[k].unit == mn[k].unit then names[#names + 1] = k end
  end
  if #names == 0 then return nil end
  table.sort(names)
  local out = json_out.array()
  for _, k in ipairs(names) do
    local o = json_out.object()
    o.name = k
    o.unit = mb[k].unit
    o.base = mb[k].value
    o.new = mn[k].value
    o.ratio = mb[k].value ~= 0 and mn[k].value / mb[k].value or 0 / 0
    out[#out + 1] = o
  end
  return out
end

local function amount(v, unit)
  if not finite(v) then return "-" end
  if unit:sub(-2) == "/s" then return units.rate(v, unit) end
  return ("%.4g"):format(v) .. (unit ~= "" and (" " .. unit) or "")
end

function M.lines(doc)
  local lines = {}
  for _, r in ipairs(doc.configurations or {}) do
    for _, x in ipairs(type(r.metrics) == "table" and r.metrics or {}) do
      lines[#lines + 1] = ("%s: %s %s -> %s (NEW/BASE %s)"):format(
        T.describe(r.params, doc.parameters), x.name,
        amount(x.base, x.unit), amount(x.new, x.unit),
          finite(x.ratio) and ("%.3f"):format(x.ratio) or "-")
    end
  end
  return lines
end

return M
