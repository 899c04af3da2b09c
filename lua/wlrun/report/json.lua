-- The json printer (docs/results.md): a results document, or a part of one (an entry, a line
-- of the journal), as JSON text. The keys of every object come first in the order below, the
-- rest sorted by name; the tables that are objects even when empty are written {}; floats
-- with the digits that read back the same (wlrun.json).
--   printer.encode(value [, compact [, axes]]) -> text   indented, or one line when compact;
--                                                     params in the order of axes
--   printer.render(doc) -> text                        the document as the printer writes it
--   printer.object(), printer.array(t), printer.text(value)
--                                                      the other documents wlrun writes (a
--                                                      comparison, the history, gbench):
--                                                      objects that keep the order their keys
--                                                      were set in, arrays, indented text
local json = require "wlrun.json"

local printer = {}

local function list(...) return { ... } end

-- keys first in every object, in this order; the rest follow sorted by name
local key_order = list(
  -- the document
  "schema", "version", "wlrun", "command_line", "cwd", "started", "finished", "complete",
    "compile_only", "scenario",
  "provenance", "settings", "sources", "device", "floor", "shard", "devices",
  -- a configuration
  "index", "params", "status", "reason", "error", "kind", "mode", "per", "blocked", "warmup",
    "samples", "enqueue", "stats",
  "enqueue_stats", "shape", "adaptive", "work", "metrics", "custom_metrics", "baseline", "kernels",
    "check", "loop", "warnings", "notes", "clock",
  "throttle", "energy", "memory", "time", "wall",
  -- their parts
  "name", "description", "file", "hash", "axes", "total_configurations", "arch", "n", "mean", "std",
    "median", "min",
  "max", "p10", "p25", "p75", "p90", "p99", "iqr", "cv", "code", "title", "message", "hint",
    "before", "after",
  "flops", "bytes", "reads", "writes", "items", "dtype", "value", "unit", "per_s")

local settings_order = list("run", "adaptive", "output", "compile")
local provenance_order = list("git", "host", "cpu", "os", "driver", "toolkit", "wlrun",
  "command_line")

-- keys whose value is an object even when empty (every other empty table is an array)
local objects = { params = true, settings = true, sources = true, metrics = true, work = true,
  output = true,
  compile = true, run = true, scenario = true, device = true, floor = true, stats = true,
    wlrun = true, shape = true,
  check = true, clock = true, before = true, after = true, loop = true, adaptive = true,
    shard = true,
  provenance = true, blocked = true, energy = true, memory = true, throttle = true, wall = true }

-- text of a document (or a part of one, like an entry): indented, or one line when compact
function printer.encode(value, compact, axes)
  if axes == nil and type(value) == "table" and type(value.scenario) == "table" then
    axes = value.scenario.axes end
  return json.encode(value, { indent = not compact, order = key_order, objects = objects,
                              orders = { params = type(axes) == "table" and axes or nil,
                                settings = settings_order,
                                            provenance = provenance_order,
                                              git = list("commit", "dirty", "branch"),
                                            cpu = list("model", "count"),
                                              os = list("name", "release", "arch") } })
end

-- the JSON text of a document, as the json printer writes it
function printer.render(doc) return printer.encode(doc) .. "\n" end

-- The other documents wlrun writes (a comparison, the history, gbench): objects made with
-- object() keep the order in which their keys were set; floats are written with the digits
-- that read back the same; NaN and infinities as null
function printer.object()
  local order = {}
  return setmetatable({}, {
    __jsontype = "object", __jsonorder = order,
    __newindex = function(t, k, v)
      order[#order + 1] = k
      rawset(t, k, v)
    end,
  })
end

function printer.array(t) return json.array(t or {}) end

-- indented text of such a document
function printer.text(value) return json.encode(value, { indent = true }) .. "\n" end

return printer
