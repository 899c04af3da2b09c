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

-- the marks in the trace files of dir (K records of kind "event"), and the step ranges
-- (train_step, the program's and the hook's) whose end no mark bounds: a mark is made a
-- nanosecond before each boundary (its C record's time), on every step, recorded or not
local function marks_in(dir)
  local marks, missing, steps = 0, 0, 0
  for _, p in ipairs(require("wlrun.trace.read").dir(dir).processes) do
    marks = marks + #p.marks
    local marked = {}
    for _, m in ipairs(p.marks) do
      if p.launched[m.corr] then marked[p.launched[m.corr]] = true end
    end
    for _, r in ipairs(p.ranges) do
      if r.name == "train_step" and r.stop then
        steps = steps + 1
        if not marked[r.stop - 1] then missing = missing + 1 end
      end
    end
  end
  return marks, missing, steps
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
      local marks, missing, steps = marks_in(dir .. "/t")
      -- a mark at each step's boundary at least (and the program's own events where they are
      -- marks: PyTorch records one after each copy from pinned memory)
      assert.is_true(marks >= STEPS, ("%d marks"):format(marks))
      -- every step's end marked (not only the recorded steps'): the last one's may go with the exit
      assert.is_true(steps >= STEPS and missing <= 2,
        ("%d of %d steps' ends without a mark"):format(missing, steps))
      local prog = require("wlrun.json").decode(h.read(dir .. "/prog.json"))
      local iter, p_iter = c.stats.mean, mean_from(prog.iter, WARMUP + 1)
      print(("\n    %s marks: %d, iter %.3f ms (template %.3f, %+.2f%%), data %.3f ms (template "
        .. "%.3f)"):format(kind, marks, iter * 1e3, p_iter * 1e3, 100 * (iter / p_iter - 1),
        c.loop.data_stats.mean * 1e3, mean_from(prog.data, WARMUP + 1) * 1e3))
      assert.is_true(math.abs(iter / p_iter - 1) <= 0.02, "iter")
    end)
  end
end)
