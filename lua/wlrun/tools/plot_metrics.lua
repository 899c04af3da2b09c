-- What the y axis of `wlrun plot` can show (wlrun.tools.plot_kinds): a metric's label, its
-- value in a configuration and its unit, and the metrics a results document offers.
local units = require "wlrun.text.units"
local plot_metrics = {}

local time_keys = { mean = true, std = true, median = true, min = true, max = true, p10 = true,
                    p25 = true, p75 = true, p90 = true, p99 = true, iqr = true }
local pick = units.pick

-- the time unit for values up to `max` ({scale, name}), with the micro sign
local function time_unit(max)
  local u = units.time_unit(max)
  return u[2] == "us" and { u[1], "µs" } or u
end

-- what a metric is: {label, value(c) -> number|nil, scale(max) -> scale, unit text}
local function metric(key)
  if time_keys[key] then
    return {
      name = key, label = key == "median" and "median time per launch"
        or (key .. " of the time per launch"),
      value = function(c) return c.stats and c.stats[key] end,
      unit = function(max) local u = time_unit(max) return u[1], u[2] end,
      bars = key == "median",
    }
  elseif key == "n" then
    return { name = key, label = "samples", value = function(c) return c.stats and c.stats.n end,
             unit = function() return 1, "" end }
  elseif key == "cv" then
    return { name = key, label = "coefficient of variation",
             value = function(c) return c.stats and c.stats.cv end,
             unit = function() return 0.01, "%" end }
  elseif key == "flop_per_s" or key == "bytes_per_s" then
    local base = key == "flop_per_s" and "FLOP/s" or "B/s"
    return {
      name = key, label = key == "flop_per_s" and "throughput" or "bandwidth",
      value = function(c) return c.metrics and c.metrics[key] end,
      unit = function(max) local p = pick(units.RATE, max) return p[1], p[2] .. base end,
    }
  elseif key:match("_fraction$") then
    local what = key:gsub("_fraction$", ""):gsub("_", " ")
    return { name = key, label = "share of " .. what,
             value = function(c) return c.metrics and c.metrics[key] end,
             unit = function() return 0.01, "%" end }
  end
  return { name = key, label = key, value = function(c) return c.metrics and c.metrics[key] end,
           unit = function() return 1, "" end }
end

local function available_metrics(doc)
  local seen, list = {}, {}
  local function add(k)
    if not seen[k] then seen[k], list[#list + 1] = true, k end
  end
  for _, c in ipairs(doc.configurations) do
    if c.stats then
      for _, k in ipairs { "median", "mean", "min", "max", "p10", "p90", "std", "cv" } do
        if c.stats[k] ~= nil then add(k) end
      end
    end
    local ks = {}
    for k in pairs(c.metrics or {}) do ks[#ks + 1] = k end
    table.sort(ks)
    for _, k in ipairs(ks) do add(k) end
  end
  return list
end

plot_metrics.time_unit = time_unit
plot_metrics.metric = metric
plot_metrics.available = available_metrics
return plot_metrics
