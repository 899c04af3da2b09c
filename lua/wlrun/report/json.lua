-- The results document as JSON (schema wlrun-results, docs/results.md), indented, keys in a
-- stable, readable order. dkjson writes a float with tostring (%.14g), which loses digits: here
-- each float is written with the fewest digits (15 to 17) that read back to the same double,
-- as a float ("1.0", not "1"); NaN and infinities become null. Formats only.
local dkjson = require "dkjson"

local M = {}

local function list(...) return { ... } end

-- key order of each kind of object; keys not listed follow, sorted by name
local orders = {
  top = list("schema", "version", "wlrun", "command_line", "cwd", "started", "finished", "complete", "scenario",
    "settings", "sources", "device", "floor", "configurations"),
  wlrun = list("version", "lua", "nvrtc"),
  scenario = list("name", "description", "file", "hash", "axes"),
  settings = list("run", "adaptive", "output", "compile"),
  run = list("mode", "warmup", "warmup_time", "iters", "flush_l2", "seed", "device", "devices"),
  adaptive_settings = list("enabled", "target_noise", "min_samples", "min_time", "max_time"),
  device = list("name", "arch", "index", "sm_count", "memory_bytes", "l2_bytes", "peak_bandwidth",
    "driver_version", "runtime_version"),
  floor = list("event_pair", "empty_kernel"),
  configuration = list("index", "params", "status", "reason", "error", "kind", "mode", "per", "warmup", "samples",
    "enqueue", "stats", "enqueue_stats", "shape", "adaptive", "work", "metrics", "kernels", "check", "warnings",
    "notes", "clock", "time"),
  stats = list("n", "mean", "std", "median", "min", "max", "p10", "p25", "p75", "p90", "p99", "iqr", "cv"),
  shape = list("outliers_low", "outliers_high", "far_outliers", "bimodal", "mode_low", "mode_high", "trend_rho",
    "trend_z", "trend_change"),
  adaptive = list("target", "converged", "noise", "elapsed", "gpu_time"),
  work = list("flops", "bytes"),
  metrics = list("flop_per_s", "bytes_per_s", "peak_bandwidth_fraction", "peak_fp32_fraction", "samples_per_s"),
  kernel = list("name", "arch", "registers", "static_shared_bytes", "local_bytes"),
  check = list("ok", "message"),
  warning = list("code", "title", "message", "hint"),
  clock = list("before", "after"),
  clock_point = list("sm_mhz", "mem_mhz", "reasons"),
}

-- the kind of each field's value (an array's elements have the array's kind)
local children = {
  top = { wlrun = "wlrun", scenario = "scenario", settings = "settings", sources = "object", device = "device",
          floor = "floor", configurations = "configuration", command_line = "array" },
  scenario = { axes = "array" },
  settings = { run = "run", adaptive = "adaptive_settings", output = "object", compile = "object" },
  configuration = { params = "params", samples = "array", enqueue = "array", stats = "stats",
                    enqueue_stats = "stats", shape = "shape", adaptive = "adaptive", work = "work",
                    metrics = "metrics", kernels = "kernel", check = "check", warnings = "warning",
                    notes = "array", clock = "clock" },
  clock = { before = "clock_point", after = "clock_point" },
  clock_point = { reasons = "array" },
}

-- kinds that are JSON arrays when empty; every other known kind is an object
local arrays = { array = true, configuration = true, kernel = true, warning = true }

-- dkjson's own keyorder (used for objects without a __jsonorder of their own)
M.keyorder = {}
do
  local seen = {}
  for _, kind in ipairs { "top", "configuration", "stats", "warning" } do
    for _, k in ipairs(orders[kind]) do
      if not seen[k] then seen[k], M.keyorder[#M.keyorder + 1] = true, k end
    end
  end
end

-- a piece of JSON text written as it is (a float, or an array of numbers)
local number_mt = { __tojson = function(self) return self[1] end }

-- a float as JSON text: the shortest of %.15g..%.17g that reads back the same
function M.number(v)
  if v ~= v or v == math.huge or v == -math.huge then return "null" end
  if math.type(v) == "integer" then return ("%d"):format(v) end
  local s
  for p = 15, 17 do
    s = ("%." .. p .. "g"):format(v)
    if tonumber(s) == v then break end
  end
  if s:find("^%-?%d+$") then s = s .. ".0" end
  return s
end

local function is_array(t)
  local n = #t
  for k in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 or k > n then return false end
  end
  return true
end

local function sorted_keys(t, first)
  local order, used = {}, {}
  for _, k in ipairs(first or {}) do
    if t[k] ~= nil and not used[k] then used[k], order[#order + 1] = true, k end
  end
  local rest = {}
  for k in pairs(t) do
    if not used[k] then rest[#rest + 1] = k end
  end
  table.sort(rest, function(a, b)
    if type(a) == type(b) and (type(a) == "string" or type(a) == "number") then return a < b end
    return type(a) < type(b)
  end)
  for _, k in ipairs(rest) do order[#order + 1] = k end
  return order
end

-- a copy of the document that dkjson writes as wanted: floats wrapped, objects ordered
local function prepare(v, kind, ctx, seen)
  local t = type(v)
  if t == "number" then
    if math.type(v) == "integer" then return v end
    return setmetatable({ M.number(v) }, number_mt)
  elseif t == "string" or t == "boolean" then
    return v
  elseif t ~= "table" then
    return tostring(v) -- a function or userdata that strayed into the document
  end
  if seen[v] then error("wlrun.report.json: the document has a reference cycle", 0) end
  seen[v] = true
  local out
  if next(v) == nil then
    out = setmetatable({}, { __jsontype = (kind and not arrays[kind] and kind ~= "unknown") and "object" or "array" })
  elseif is_array(v) then
    local numbers = {}
    for i = 1, #v do
      if type(v[i]) ~= "number" then numbers = nil break end
      numbers[i] = M.number(v[i])
    end
    if numbers then -- samples: one piece of text rather than a wrapped float each
      seen[v] = nil
      return setmetatable({ "[" .. table.concat(numbers, ",") .. "]" }, number_mt)
    end
    out = setmetatable({}, { __jsontype = "array" })
    for i = 1, #v do out[i] = prepare(v[i], kind, ctx, seen) end
  else
    local first = kind == "params" and ctx.axes or orders[kind]
    local kids = children[kind] or {}
    out = setmetatable({}, { __jsontype = "object", __jsonorder = sorted_keys(v, first) })
    for k, x in pairs(v) do out[k] = prepare(x, kids[k] or "unknown", ctx, seen) end
  end
  seen[v] = nil
  return out
end

function M.render(doc)
  local axes = type(doc.scenario) == "table" and type(doc.scenario.axes) == "table" and doc.scenario.axes or {}
  local copy = prepare(doc, "top", { axes = axes }, {})
  local text, err = dkjson.encode(copy, { indent = true, keyorder = M.keyorder })
  if not text then error("wlrun.report.json: " .. tostring(err), 0) end
  return text .. "\n"
end

return M
