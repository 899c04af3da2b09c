-- wlrun trace's numbers (lua/wlrun/trace/report.lua) against docs/trace.md's definitions, on
-- handwritten traces whose expected values are worked out by hand in the comments: iter, data
-- (the outermost data ranges of the step's thread that start in the iteration's window), phases
-- (outermost occurrence of a name, top = the step's direct children), GPU time per phase, busy
-- (union), in no phase, launched outside the step, the data's GPU work; nested steps; times
-- near 2^63.
local read = require "wlrun.trace.read"
local report = require "wlrun.trace.report"

local MS = 1000000

local function near(a, b) return math.abs(a - b) <= 1e-9 * math.max(1, math.abs(b)) end

local function assert_near(want, got, what)
  assert.is_true(near(got, want), ("%s: expected %.9g, got %s"):format(what, want, tostring(got)))
end

local function assert_list(want, got, what)
  assert.equal(#want, #got, what .. ": length")
  for i = 1, #want do assert_near(want[i], got[i], ("%s[%d]"):format(what, i)) end
end

local function trace_of(lines)
  local text = "wltrace\t1\t7\t1\tprog\n" .. table.concat(lines, "\n") .. "\n"
  return { processes = { read.parse(text, "7.wltrace") } }
end

-- R rid tid parent name start end (times in ms, names by sid)
local function R(rid, tid, parent, sid, start, stop)
  return ("R\t%d\t%d\t%d\t%d\t0\t%d\t%d\t-"):format(rid, tid, parent, sid, math.floor(start * MS),
    math.floor(stop * MS))
end

-- K corr start end (ms) on stream s, name sid 9
local function K(corr, start, stop, stream)
  return ("K\t%d\tkernel\t0\t%d\t%d\t%d\t0\t9"):format(corr, stream or 7, math.floor(start * MS),
    math.floor(stop * MS))
end

local function phase(e, name)
  for _, ph in ipairs(e.trace.phases) do
    if ph.name == name then return ph end
  end
  error("no phase " .. name)
end

local function codes(e)
  local s = {}
  for _, w in ipairs(e.warnings or {}) do s[#s + 1] = w.code end
  return table.concat(s, " ")
end

describe("trace report's numbers, worked out by hand", function()
  -- thread 7: steps S1 [0, 10], S2 [12, 22], S3 [25, 35] ms; warmup 1 measures S2 and S3.
  --   data on thread 7: D1 [10.5, 11.5] starts in S2's window (10, 22]: 1 ms; D2 [22.5, 24] with
  --   a data range inside it (counted once) starts in S3's window (22, 35]: 1.5 ms. Thread 8's
  --   data [23, 30] is left out (the step's thread has data ranges).
  --   S2: fwd [12.5, 15.5] holding layer [13, 14] holding layer [13.2, 13.8]; bwd [16, 20].
  --   S3: fwd [26, 28]; opt [29, 30].
  -- GPU work (G on), by the range its launch names:
  --   c1 in the inner layer [13, 13.5]: fwd and layer 0.5 ms each in S2
  --   c2 in bwd [16, 18]: 2 ms;  c3 in S2 itself [20.5, 21]: in no phase, 0.5 ms
  --   c4 launched in no range (no C) running [17, 17.5]: launched outside the step, 0.5 ms
  --   c5 in D1 [11, 11.2]: the data's GPU work of S2's iteration, 0.2 ms
  --   c6, c7 in S3's fwd on two streams, [26, 27] and [26.5, 27.5]: fwd 1.5 ms, as busy (a
  --   phase's GPU time is the union of its work: the overlap inside one phase counts once)
  -- so busy = S2: 0.5 + 2 + 0.5 = 3 ms (c4 is not the step's), S3: 1.5 ms.
  local lines = {
    "S\t1\ttrain_step", "S\t2\tdata", "S\t3\tfwd", "S\t4\tlayer", "S\t5\tbwd", "S\t6\topt",
      "S\t9\tk",
    "G\ton\ttest",
    R(1, 7, 0, 1, 0, 10),
    R(2, 7, 0, 2, 10.5, 11.5),
    R(3, 7, 0, 1, 12, 22), R(4, 7, 3, 3, 12.5, 15.5), R(5, 7, 4, 4, 13, 14),
      R(6, 7, 5, 4, 13.2, 13.8),
    R(7, 7, 3, 5, 16, 20),
    R(8, 7, 0, 2, 22.5, 24), R(9, 7, 8, 2, 23, 23.5), R(10, 8, 0, 2, 23, 30),
    R(11, 7, 0, 1, 25, 35), R(12, 7, 11, 3, 26, 28), R(13, 7, 11, 6, 29, 30),
    "C\t1\t6", "C\t2\t7", "C\t3\t3", "C\t5\t2", "C\t6\t12", "C\t7\t12",
    K(1, 13, 13.5), K(2, 16, 18), K(3, 20.5, 21), K(4, 17, 17.5), K(5, 11, 11.2), K(6, 26, 27),
      K(7, 26.5, 27.5, 8),
    "X\texit",
  }

  it("iter, data, phases and GPU times as docs/trace.md defines them", function()
    local e = report.entries(trace_of(lines), { warmup = 1 })[1]
    assert.equal("ok", e.status)
    assert.equal(3, e.trace.steps)
    assert_list({ 0.010, 0.010 }, e.samples, "iter")
    assert_list({ 0.001, 0.0015 }, e.loop.data, "data")
    assert.equal("step", e.trace.data_threads)
    assert.equal("gpu", e.trace.timing)
    local fwd, layer, bwd, opt = phase(e, "fwd"), phase(e, "layer"), phase(e, "bwd"),
      phase(e, "opt")
    assert.is_true(fwd.top and bwd.top and opt.top)
    assert.is_false(layer.top)
    assert_list({ 0.003, 0.002 }, fwd.cpu, "fwd cpu")
    assert_list({ 0.001, 0 }, layer.cpu, "layer cpu (the inner layer counted in the outer)")
    assert_list({ 0.004, 0 }, bwd.cpu, "bwd cpu")
    assert_list({ 0, 0.001 }, opt.cpu, "opt cpu")
    assert_list({ 0.0005, 0.0015 }, fwd.gpu, "fwd gpu")
    assert_list({ 0.0005, 0 }, layer.gpu, "layer gpu")
    assert_list({ 0.002, 0 }, bwd.gpu, "bwd gpu")
    assert_list({ 0.003, 0.0015 }, e.trace.gpu_busy, "busy")
    assert_list({ 0.0005, 0 }, e.trace.gpu_outside, "in no phase")
    assert_list({ 0.0005, 0 }, e.trace.gpu_unattributed, "launched outside the step")
    assert_list({ 0.0002, 0 }, e.trace.data_gpu, "data gpu")
    -- unattributed 0.25 ms a step against busy 2.25: above 5 %, 10 % of the work; S3's two
    -- kernels overlap in time, but inside one phase: no phase-overlap (the phases' work, each a
    -- union, adds up to the busy time)
    assert.equal("gpu-unattributed", codes(e))
    assert.matches("^10%% of the GPU work", e.warnings[1].message)
  end)

  it("a step range inside a step range is no iteration of its own: it is one of the step's phases",
    function()
    -- S1 [0, 10] holds train_step [1, 9] holding fwd [2, 5]; S2 [20, 30] the same, 20 ms later
    local e = report.entries(trace_of {
      "S\t1\ttrain_step", "S\t3\tfwd",
      R(1, 7, 0, 1, 0, 10), R(2, 7, 1, 1, 1, 9), R(3, 7, 2, 3, 2, 5),
      R(4, 7, 0, 1, 20, 30), R(5, 7, 4, 1, 21, 29), R(6, 7, 5, 3, 22, 25),
      "X\texit",
    }, { warmup = 0 })[1]
    assert.equal(2, e.trace.steps)
    assert_list({ 0.010, 0.010 }, e.samples, "iter")
    assert_list({ 0.008, 0.008 }, phase(e, "train_step").cpu, "the inner step as a phase")
    assert.is_true(phase(e, "train_step").top)
    assert_list({ 0.003, 0.003 }, phase(e, "fwd").cpu, "fwd")
  end)

  it("a step inside a step left open (the outer never popped) is an iteration", function()
    local e = report.entries(trace_of {
      "S\t1\ttrain_step",
      "O\t1\t7\t0\t1\t0\t0\t-", R(2, 7, 1, 1, 1, 9), R(3, 7, 1, 1, 11, 19),
    }, { warmup = 0 })[1]
    assert_list({ 0.008, 0.008 }, e.samples, "iter")
  end)

  it("escapes a huge phase name once, not once per iteration (was: minutes for 1000 steps)",
    function()
    local name = ("\\x01a"):rep(200000) -- 600 KB escaped in the file: 200000 control bytes
    local list = { "S\t1\ttrain_step", "S\t2\t" .. name }
    for i = 1, 1000 do
      list[#list + 1] = R(2 * i, 7, 0, 1, i, i + 0.5)
      list[#list + 1] = R(2 * i + 1, 7, 2 * i, 2, i + 0.1, i + 0.4)
    end
    local t0 = os.clock()
    local e = report.entries(trace_of(list), { warmup = 1 })[1]
    assert.is_true(os.clock() - t0 < 10, ("took %.1f s"):format(os.clock() - t0))
    assert.equal(999, #e.samples)
    assert.is_true(#e.trace.phases[1].name <= report.NAME_MAX)
    assert.matches("^\\x01a\\x01a", e.trace.phases[1].name)
  end)

  it("sums times near 2^63 ns without wrapping round to negative ones", function()
    -- data D1 [20, 20 + 5e18], D2 [30, 30 + 5e18] in the gap before S2: their union is 5e18 + 10
    -- ns;
    -- the period of S2 (from S1's end, 10 ns, to S2's, 9.2e18 + 10) is past 2^62
    local big = 5000000000000000000
    local e = report.entries(trace_of {
      "S\t1\ttrain_step", "S\t2\tdata",
      "R\t1\t7\t0\t1\t0\t0\t10\t-",
      ("R\t2\t7\t0\t2\t0\t20\t%d\t-"):format(20 + big),
        ("R\t3\t7\t0\t2\t0\t30\t%d\t-"):format(30 + big),
      "R\t4\t7\t0\t1\t0\t9200000000000000000\t9200000000000000010\t-",
      "X\texit",
    }, { warmup = 1 })[1]
    assert_near(5e9 + 1e-8, e.loop.data[1], "data (s)")
    assert_near(9.2e9, e.loop.total_time, "the period (s)")
    assert_near(1e-8, e.samples[1], "iter (s)")
  end)
end)
