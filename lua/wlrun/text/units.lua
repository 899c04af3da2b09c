-- Formatting of quantities with scaled units (for reports; printers format, never compute).
local units = {}

-- a number that is neither NaN nor infinite (JSON writes the others as null)
function units.finite(v) return type(v) == "number" and v == v and v ~= math.huge
  and v ~= -math.huge end

-- the one table of each kind of unit: {scale, name}, largest first
units.TIME = { { 1, "s" }, { 1e-3, "ms" }, { 1e-6, "us" }, { 1e-9, "ns" } }
units.BYTES = { { 2 ^ 40, "TiB" }, { 2 ^ 30, "GiB" }, { 2 ^ 20, "MiB" }, { 2 ^ 10, "KiB" },
  { 1, "B" } }
units.ENERGY = { { 1, "J" }, { 1e-3, "mJ" }, { 1e-6, "uJ" }, { 1e-9, "nJ" } }
units.RATE = { { 1e15, "P" }, { 1e12, "T" }, { 1e9, "G" }, { 1e6, "M" }, { 1e3, "k" }, { 1, "" } }

-- the unit of steps that shows v (by magnitude): {scale, name}; the smallest below it all
function units.pick(steps, v)
  local a = math.abs(v)
  for _, s in ipairs(steps) do
    if a >= s[1] then return s end
  end
  return steps[#steps]
end

function units.time_unit(v) return units.pick(units.TIME, v) end

local function scaled(v, steps, fmt)
  if v ~= v then return "nan" end
  local s = units.pick(steps, v)
  return (fmt or "%.3g %s"):format(v / s[1], s[2])
end

-- seconds -> "1.23 ms"
function units.time(s, fmt) return scaled(s, units.TIME, fmt or "%.4g %s") end

-- joules -> "12.3 uJ"
function units.energy(j) return scaled(j, units.ENERGY, "%.4g %s") end

function units.bytes(b) return scaled(b, units.BYTES, "%.4g %s") end

-- 1.5e12, "FLOP/s" -> "1.5 TFLOP/s"
function units.rate(v, unit) return scaled(v, units.RATE, "%.4g %s") .. unit end

function units.percent(f) return ("%.2f%%"):format(100 * f) end

return units
