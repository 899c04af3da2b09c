-- GPU specs of the step marks (docs/trace.md, "Steps with their GPU work recorded"): with GPU
-- activity on a sample of the steps (--gpu-every auto), each kind of mark (WLRUN_TRACE_MARKS: a
-- set of 13 bytes, the default; a CUDA event; a copy of 13 bytes from pinned host memory) comes
-- timed from CUPTI on the steps not recorded, the library reports no error (the program's own
-- sets, which CUPTI leaves without times on those steps, are not one) and says which marks it
-- made, and the iterations agree with the template's in the same run (tests/trace/torch_loops.py
-- with its own ranges, the sync just after the step's range: on a step not recorded only a mark
-- says where its GPU work ended, after its range closed). With quiet steps (WLRUN_TRACE_QUIET=1:
-- no CUPTI at all on those steps) the sets' and copies' marks are CUDA events there, timed from
-- an anchor behind a recorded step's mark, and the same holds. Pending by name where PyTorch with
-- CUDA is missing.
local h = require "helper"

local python, torch_it, mean_from = h.python, h.torch_it, h.mean_from
local STEPS, WARMUP, BATCH = 60, 10, 64

-- the K records of each kind in the trace files of dir
local function kinds_in(dir)
  local count = {}
  local p = assert(io.popen("cat " .. h.quote(dir) .. "/*.wltrace"))
  for line in p:lines() do
    local kind = line:match("^K\t%d+\t([%w]+)\t")
    if kind then count[kind] = (count[kind] or 0) + 1 end
  end
  p:close()
  return count
end

-- the step ranges (train_step, the program's and the hook's) in the trace files of dir whose end
-- no mark bounds: a mark is made a nanosecond before each boundary (its C record's time), on every
-- step, recorded or not
local function ends_unmarked(dir)
  local sid, marked, ends = nil, {}, {}
  local p = assert(io.popen("cat " .. h.quote(dir) .. "/*.wltrace"))
  local launched, marks = {}, {}
  for line in p:lines() do
    local f = {}
    for x in line:gmatch("[^\t]+") do f[#f + 1] = x end
    if f[1] == "S" and f[3] == "train_step" then sid = f[2]
    elseif f[1] == "C" then launched[f[2]] = f[4]
    elseif f[1] == "K" and f[3] == "event" then marks[#marks + 1] = f[2]
    elseif f[1] == "R" then ends[#ends + 1] = { f[5], f[8] } end
  end
  p:close()
  for _, corr in ipairs(marks) do
    local t = launched[corr]
    if t then marked[t] = true end
  end
  local missing = 0
  local n = 0
  for _, e in ipairs(ends) do
    local at = e[1] == sid and math.tointeger(tonumber(e[2]))
    if at then
      n = n + 1
      if not marked[tostring(at - 1)] then missing = missing + 1 end
    end
  end
  return missing, n
end

local MADE = { set = "sets", event = "CUDA events", copy = "copies",
  ["set, quiet"] = "sets, quiet steps", ["copy, quiet"] = "copies, quiet steps" }

describe("wlrun trace's step marks on the steps not recorded", function()
  -- "quiet": WLRUN_TRACE_QUIET=1, no CUPTI at all on those steps, the marks timed from anchors
  for _, kind in ipairs { "set", "event", "copy", "set, quiet", "copy, quiet" } do
    torch_it(kind .. " marks come timed and bound the iterations", function()
      local dir = h.tmpdir()
      local r = h.run(
        ("trace --gpu-every auto --warmup %d --batch-size %d --quiet --trace-dir %s -o %s -- %s %s "
        .. "--shape after --steps %d --warmup %d --batch %d --out %s"):format(
        WARMUP, BATCH, h.quote(dir .. "/t"), h.quote(dir .. "/trace.json"), h.quote(python),
        h.quote(h.source_dir .. "/tests/trace/torch_loops.py"), STEPS, WARMUP, BATCH,
        h.quote(dir .. "/prog.json")),
        { env = ("WLRUN_TRACE_MARKS=%s WLRUN_TRACE_QUIET=%d"):format(kind:match("^%a+"),
          kind:find("quiet") and 1 or 0), prefix = "timeout 120" })
      assert.equal(0, r.code, r.stdout .. r.stderr)
      local c = require("wlrun.results").decode(h.read(dir .. "/trace.json"), "trace.json")
        .configurations[1]
      assert.matches("step marks: " .. MADE[kind], c.trace.cupti.reason, 1, true)
      for _, w in ipairs(c.warnings or {}) do
        assert.is_true(w.code ~= "trace-errors" and w.code ~= "records-lost", w.message)
      end
      assert.is_true(c.trace.gpu_steps and #c.trace.gpu_steps < STEPS - WARMUP,
        "every step was recorded")
      local n = kinds_in(dir .. "/t")
      -- a mark at each step's boundary at least (and the program's own events where they are
      -- marks: PyTorch records one after each copy from pinned memory)
      assert.is_true((n.event or 0) >= STEPS, ("%d marks"):format(n.event or 0))
      -- every step's end marked (not only the recorded steps'): the last one's may go with the exit
      local missing, steps = ends_unmarked(dir .. "/t")
      assert.is_true(steps >= STEPS and missing <= 2,
        ("%d of %d steps' ends without a mark"):format(missing, steps))
      local prog = require("wlrun.json").decode(h.read(dir .. "/prog.json"))
      local iter, p_iter = c.stats.mean, mean_from(prog.iter, WARMUP + 1)
      print(("\n    %s marks: %d, iter %.3f ms (template %.3f, %+.2f%%), data %.3f ms (template "
        .. "%.3f)"):format(kind, n.event, iter * 1e3, p_iter * 1e3, 100 * (iter / p_iter - 1),
        c.loop.data_stats.mean * 1e3, mean_from(prog.data, WARMUP + 1) * 1e3))
      assert.is_true(math.abs(iter / p_iter - 1) <= 0.02, "iter")
    end)
  end
end)
