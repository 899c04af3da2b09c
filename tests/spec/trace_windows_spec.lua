-- wlrun trace's iterations bounded by their GPU work (lua/wlrun/trace/windows.lua and the report,
-- docs/trace.md "Iterations"), on handwritten version-2 traces of the loop shapes the
-- methodology's template meets: the step's synchronisation inside its range, just after it, none
-- at all (the loop runs ahead of the GPU), work launched outside every range; and the steps of
-- wlrun's Python hook (the domain "wlrun.auto") where the program has none of its own.
local read = require "wlrun.trace.read"
local report = require "wlrun.trace.report"
local windows = require "wlrun.trace.windows"

local MS = 1000000

local function near(a, b, tol) return math.abs(a - b) <= (tol or 1e-9) * math.max(1,
  math.abs(b)) end

local function assert_near(want, got, what, tol)
  assert.is_true(got ~= nil and near(got, want, tol),
    ("%s: expected %.9g, got %s"):format(what, want, tostring(got)))
end

local function ms(x) return math.floor(x * MS + 0.5) end

-- a version-2 trace of one process from its lines
local function entry_of(opts, lines)
  local text = "wltrace\t2\t7\t1\tprog\n" .. table.concat(lines, "\n") .. "\n"
  return report.entries({ processes = { read.parse(text, "7.wltrace") } }, opts)[1]
end

local function codes(e)
  local s = {}
  for _, w in ipairs(e.warnings or {}) do s[#s + 1] = w.code end
  return table.concat(s, " ")
end

-- A loop of n steps on thread 7 with ids from 100: data [d0, d1], then a step range [s0, s1]
-- holding fwd [s0, f1] and bwd [f1, s1]; each step launches a copy in data (GPU [c0, c1]) and a
-- kernel in fwd and in bwd (GPU [k0, k1] and [k1, k2]). shape(i) gives the times in ms.
local function loop_lines(n, shape, extra)
  local lines = { "S\t1\ttrain_step", "S\t2\tdata", "S\t3\tfwd", "S\t4\tbwd", "S\t5\tk", "G\ton" }
  for i = 1, n do
    local t = shape(i)
    local id = 100 + 10 * i
    lines[#lines + 1] = ("R\t%d\t7\t0\t2\t0\t%d\t%d\t-"):format(id, ms(t.d0), ms(t.d1))
    lines[#lines + 1] = ("R\t%d\t7\t%d\t3\t0\t%d\t%d\t-"):format(id + 2, id + 1, ms(t.s0), ms(t.f1))
    lines[#lines + 1] = ("R\t%d\t7\t%d\t4\t0\t%d\t%d\t-"):format(id + 3, id + 1, ms(t.f1), ms(t.s1))
    lines[#lines + 1] = ("R\t%d\t7\t0\t1\t0\t%d\t%d\t64"):format(id + 1, ms(t.s0), ms(t.s1))
    lines[#lines + 1] = ("C\t%d\t%d\t%d"):format(id, id, ms(t.d1) - 1)
    lines[#lines + 1] = ("C\t%d\t%d\t%d"):format(id + 2, id + 2, ms(t.s0) + 1)
    lines[#lines + 1] = ("C\t%d\t%d\t%d"):format(id + 3, id + 3, ms(t.f1) + 1)
    lines[#lines + 1] = ("K\t%d\tmemcpy\t0\t7\t%d\t%d\t4096\t5"):format(id, ms(t.c0), ms(t.c1))
    lines[#lines + 1] = ("K\t%d\tkernel\t0\t7\t%d\t%d\t0\t5"):format(id + 2, ms(t.k0), ms(t.k1))
    lines[#lines + 1] = ("K\t%d\tkernel\t0\t7\t%d\t%d\t0\t5"):format(id + 3, ms(t.k1), ms(t.k2))
  end
  for _, l in ipairs(extra or {}) do lines[#lines + 1] = l end
  lines[#lines + 1] = "X\texit"
  return lines
end

-- the report's phases by name, checked to be forward, backward and optimizer in that order
local function three_phases(e)
  local got, by = {}, {}
  for _, ph in ipairs(e.trace.phases) do got[#got + 1], by[ph.name] = ph.name, ph end
  assert.same({ "forward", "backward", "optimizer" }, got)
  return by
end

-- appenders to lines for one iteration whose times are in ms from b (ns): R(rid, parent, sid, t0,
-- t1, payload), a range of wlrun's hook (domain sid 9); K(corr, rid, kind, call, g0, g1), a call
-- in range rid and its GPU work; at(x), the time x
local function hook_lines(lines, b)
  local function at(x) return b + math.floor(x * MS + 0.5) end
  local function R(rid, parent, sid, t0, t1, payload)
    lines[#lines + 1] = ("R\t%d\t7\t%d\t%d\t9\t%d\t%d\t%s"):format(rid, parent, sid, at(t0),
      at(t1), payload or "-")
  end
  local function K(corr, rid, kind, call, g0, g1)
    lines[#lines + 1] = ("C\t%d\t%d\t%d"):format(corr, rid, at(call))
    lines[#lines + 1] = ("K\t%d\t%s\t0\t7\t%d\t%d\t0\t6"):format(corr, kind, at(g0), at(g1))
  end
  return R, K, at
end

local function phase(e, name)
  for _, ph in ipairs(e.loop.phases) do
    if ph.name == name then return ph end
  end
end

describe("trace windows", function()
  it("frontier: the latest end of the work launched strictly before each time", function()
    local work = { { start = 0, stop = 5, at = 1 }, { start = 5, stop = 9, at = 2 },
      { start = 9, stop = 7, at = 6 },
      { start = 1, stop = 100, at = nil } }
    local F = windows.frontier(work, function(w) return w.at end, { 1, 2, 3, 6, 7 })
    assert.is_nil(F[1])
    assert.equal(5, F[2])
    assert.equal(9, F[3])
    assert.equal(9, F[6])
    assert.equal(9, F[7]) -- a later launch that ends sooner moves nothing back
  end)

  it("clip: the union of intervals within each window", function()
    local out = windows.clip({ { 5, 12 }, { 0, 3 }, { 2, 4 }, { 11, 15 }, { 20, 20 } },
      { 1, 10, 16 }, { 6, 14, 30 })
    assert.same({ 4, 4, 0 }, out) -- [1,4] + [5,6]; [10,14]; nothing
  end)

  it("of: the loop's wait after a step ends it where it came soon after, or while the GPU ran",
    function()
    -- three steps of 100 ms, their GPU work 50 ms past each close for the second only
    local steps = { { start = 0, stop = 100 * MS }, { start = 200 * MS, stop = 300 * MS },
      { start = 400 * MS, stop = 500 * MS } }
    local F = { [0] = nil, [100 * MS] = 90 * MS, [200 * MS] = 90 * MS, [300 * MS] = 350 * MS,
      [400 * MS] = 350 * MS, [500 * MS] = 490 * MS }
    local function stop_of(i, wait)
      return windows.of(steps, F, true, { [i] = wait }).stop[i]
    end
    -- 0.5 ms after the close, the GPU idle: the loop's tail, the step's
    assert.equal(101 * MS, stop_of(1, { start = 100.5 * MS, stop = 101 * MS }))
    -- 5 ms after it, the GPU idle: within a tenth of the step but past WAIT_MAX, the loop's other
    -- work (a batch made on the CPU): not the step's
    assert.equal(100 * MS, stop_of(1, { start = 105 * MS, stop = 106 * MS }))
    -- 20 ms after it, while the step's GPU work still ran: it waited for the step
    assert.equal(351 * MS, stop_of(2, { start = 320 * MS, stop = 351 * MS }))
    -- returned before the GPU's end: nothing changes, and it is not said to end the step
    local win = windows.of(steps, F, true, { [2] = { start = 300.1 * MS, stop = 300.2 * MS } })
    assert.equal(350 * MS, win.stop[2])
    assert.is_nil(win.waited[2])
    -- without GPU times, the short tail only
    win = windows.of(steps, F, false, { [1] = { start = 100.5 * MS, stop = 101 * MS },
      [2] = { start = 320 * MS, stop = 351 * MS } })
    assert.same({ 101 * MS, 300 * MS, 500 * MS }, win.stop)
  end)

  it("waited and of: a hook's step whose range the library ended at the loop's wait", function()
    -- the range ends at the wait's return (entered at 95 ms, inside it); the data range after it
    -- begins there
    local steps = { { rid = 1, tid = 7, start = 0, stop = 100 * MS },
      { rid = 3, tid = 7, start = 200 * MS, stop = 300 * MS } }
    local wait = { tid = 7, rid = 1, start = 95 * MS, stop = 100 * MS }
    local waited = windows.waited(steps, { wait }, { [7] = { 100 * MS, 200 * MS } })
    assert.equal(wait, waited[1])
    -- a wait entered inside a range that did not end at its return is none
    local early = { tid = 7, rid = 1, start = 95 * MS, stop = 99 * MS }
    assert.same({}, windows.waited(steps, { early }, { [7] = { 100 * MS, 200 * MS } }))
    -- the GPU idle by its return: the step's end is the wait's, and it is said so
    local F = { [0] = nil, [100 * MS] = 98 * MS, [200 * MS] = 98 * MS, [300 * MS] = 290 * MS }
    local win = windows.of(steps, F, true, waited)
    assert.equal(100 * MS, win.stop[1])
    assert.is_true(win.waited[1])
    -- work launched before it outlasting it (another stream's): the GPU's end, not the wait's
    F[100 * MS] = 120 * MS
    win = windows.of(steps, F, true, waited)
    assert.equal(120 * MS, win.stop[1])
    assert.is_nil(win.waited[1])
    -- without GPU times
    assert.is_true(windows.of(steps, F, false, waited).waited[1])
  end)

  it("of: the loop's wait before a step begins it where it returned soon before, its data ending "
    .. "at its entry", function()
    -- two steps of 100 ms, the second's range opening at 200 ms; the GPU idle from 150 ms
    local steps = { { start = 0, stop = 100 * MS }, { start = 200 * MS, stop = 300 * MS } }
    local F = { [100 * MS] = 150 * MS, [200 * MS] = 150 * MS, [300 * MS] = 290 * MS }
    local function of(wait) return windows.of(steps, F, true, nil, { [2] = wait }) end
    -- returned 0.2 ms before the range opened (an autocast's entry between): the step's
    local win = of({ start = 199 * MS, stop = 199.8 * MS })
    assert.equal(199.8 * MS, win.start[2])
    assert.is_true(win.began[2])
    assert.equal(199 * MS, win.data_end[2])
    assert.equal(win.start[1], win.data_end[1]) -- no wait before the first: its window's start
    -- 5 ms before it: past WAIT_MAX, the loop's other work; nothing changes
    win = of({ start = 194 * MS, stop = 195 * MS })
    assert.equal(200 * MS, win.start[2])
    assert.is_nil(win.began[2])
    assert.equal(200 * MS, win.data_end[2])
    -- entered before the previous window's end (the wait after the step before, the same call):
    -- not this step's
    win = windows.of(steps, { [100 * MS] = 199.9 * MS, [200 * MS] = 199.9 * MS,
      [300 * MS] = 290 * MS }, true, nil, { [2] = { start = 199 * MS, stop = 199.8 * MS } })
    assert.equal(200 * MS, win.start[2])
    -- the GPU work launched before the range ended after the wait returned (another thread's):
    -- the step begins when it ends
    win = windows.of(steps, { [100 * MS] = 150 * MS, [200 * MS] = 199.9 * MS,
      [300 * MS] = 290 * MS }, true, nil, { [2] = { start = 150 * MS, stop = 199.8 * MS } })
    assert.equal(199.9 * MS, win.start[2])
    assert.equal(150 * MS, win.data_end[2])
  end)

  it("before: a wait returned before the step's range opened, no range opened between", function()
    local steps = { { tid = 7, rid = 1, start = 0, stop = 100 }, { tid = 7, rid = 5, start = 200,
      stop = 300 } }
    local befores = { { tid = 7, rid = 5, start = 180, stop = 190 },
      { tid = 7, rid = 1, start = -10, stop = 5 }, { tid = 8, rid = 5, start = 10, stop = 20 } }
    -- rid 1's returned after its range opened; tid 8's is another thread's
    assert.same({ [2] = befores[1] }, windows.before(steps, befores, { [7] = { 0, 150, 200 } }))
    -- a range opened on the thread after it returned (a fetch): none
    assert.same({}, windows.before(steps, befores, { [7] = { 0, 195, 200 } }))
  end)
end)

describe("trace iterations bounded by their GPU work", function()
  -- the template's shape: data 1 ms (its copy done in it), the step range 2 ms of launches, its GPU
  -- work 6 ms, then torch.cuda.synchronize() just after the range closes; period 8 ms
  local function sync_after(i)
    local b = 8 * (i - 1)
    return { d0 = b, d1 = b + 1, c0 = b + 0.5, c1 = b + 0.9, s0 = b + 1, f1 = b + 2, s1 = b + 3,
      k0 = b + 1.1, k1 = b + 4, k2 = b + 7 }
  end

  it("a sync just after the step range: iter runs to the end of the GPU work, nothing negative",
    function()
    local e = entry_of({ warmup = 1 }, loop_lines(6, sync_after))
    assert.equal(5, #e.samples)
    for j = 1, 5 do
      -- from the range's start (1) to the GPU's end (7)
      assert_near(0.006, e.samples[j], "iter " .. j)
      assert_near(0.001, e.loop.data[j], "data " .. j) -- [0, 1]: the data range, its copy inside
    end
    assert_near(64 / 0.008, e.loop.throughput, "samples/s")
    assert_near(0.0029, phase(e, "fwd").mean, "fwd GPU")
    assert_near(0.003, phase(e, "bwd").mean, "bwd GPU")
    assert.is_true(e.loop.outside.mean >= 0)
    assert_near(0.0001, e.loop.outside.mean, "outside") -- [1, 1.1]: the GPU idle at the start
    assert.equal("", codes(e)) -- one stream: no phase-overlap
    assert_near(0.004, e.trace.run_ahead.lag_mean, "the GPU's work outlasts the range by 4 ms")
    assert.equal(0, e.trace.run_ahead.steps_max)
    assert.matches("ends 4 ms after its 'train_step' range closes",
      table.concat(e.notes or {}, "\n"))
    assert.is_nil(table.concat(e.notes or {}, "\n"):find("the GPU is busy", 1, true))
  end)

  it("a launch-bound step (the GPU idle most of it): a note, with the phases' CPU times", function()
    -- data 0.2 ms, then 2 ms of launches (fwd 1 ms, bwd 1 ms) whose GPU work takes 0.4 ms in all
    -- and is done before the range closes
    local function launch_bound(i)
      local b = 2.2 * (i - 1)
      return { d0 = b, d1 = b + 0.2, c0 = b + 0.05, c1 = b + 0.1, s0 = b + 0.2, f1 = b + 1.2,
        s1 = b + 2.2, k0 = b + 0.5, k1 = b + 0.7, k2 = b + 1.4 }
    end
    local e = entry_of({ warmup = 1 }, loop_lines(6, launch_bound))
    for j = 1, 5 do assert_near(0.002, e.samples[j], "iter " .. j, 1e-6) end
    assert_near(0.0009, e.trace.gpu_busy_mean, "busy", 1e-6)
    local notes = table.concat(e.notes or {}, "\n")
    assert.matches("the GPU is busy 900 us of an iteration's 2 ms %(45%%; mean%)", notes)
    assert.matches("the top phases' CPU times: fwd 1 ms, bwd 1 ms", notes)
    assert.equal("", codes(e)) -- a note, not a warning
  end)

  it("no sync at all: the loop runs ahead, each iteration is one period of the GPU", function()
    -- the CPU makes a step every 2 ms (data 0.5 ms, launches 1.5 ms); the GPU needs 6 ms a step
    -- (a 0.5 ms copy, kernels of 2.5 and 3 ms), so it runs 6 ms per step, far behind
    local function none(i)
      local b = 2 * (i - 1)
      local g = 6 * (i - 1)
      return { d0 = b, d1 = b + 0.5, s0 = b + 0.5, f1 = b + 1, s1 = b + 2,
        c0 = g + 0.5, c1 = g + 1, k0 = g + 1, k1 = g + 3.5, k2 = g + 6.5 }
    end
    local e = entry_of({ warmup = 2 }, loop_lines(12, none))
    assert.equal(10, #e.samples)
    for j = 1, 10 do
      assert_near(0.0055, e.samples[j], "iter " .. j) -- [copy's end, kernels' end]
      assert_near(0.0005, e.loop.data[j], "data " .. j) -- the copy, after the previous step's work
    end
    assert_near(64 / 0.006, e.loop.throughput, "samples/s: one step per 6 ms of GPU")
    local notes = table.concat(e.notes or {}, "\n")
    assert.matches("the program runs up to %d+ steps ahead of the GPU", notes)
    assert.is_true(e.trace.run_ahead.steps_max >= 5)
    assert.is_true(e.loop.outside.mean >= 0)
    assert.equal("", codes(e))
  end)

  it("a sync inside the step range: the windows are the ranges", function()
    local function inside(i)
      local t = sync_after(i)
      t.s1 = t.k2 + 0.1 -- the range closes after the GPU work
      t.f1 = t.s0 + 1
      return t
    end
    local e = entry_of({ warmup = 1 }, loop_lines(6, inside))
    for j = 1, 5 do assert_near(0.0061, e.samples[j], "iter " .. j) end
    assert_near(0, e.trace.run_ahead.lag_mean, "lag")
    -- the 0.9 ms from the range's end to the next data range is neither data nor step: samples/s
    -- counts it, and the one note says how much, with samples/s over iter and data alone
    assert_near(0.0009, e.trace.between_mean, "between")
    assert_near(64 / 0.008, e.loop.throughput, "samples/s")
    assert.equal(1, #e.notes)
    assert.matches("^900 us a step %(mean; at most 900 us; 11%% of the measured period in all%) "
      .. "lies outside the steps and their data.*samples/s %(8000%.0%) counts it.*"
      .. "over the iterations and their data alone it is 9014%.1$", e.notes[1])
  end)

  it("work launched outside every range still bounds the windows (C with rid 0)", function()
    -- a copy launched at 1.5 ms with no range open runs [1.6, 2.6]; the step's range opens at 2
    local e = entry_of({ warmup = 0 }, {
      "S\t1\ttrain_step", "S\t5\tk", "G\ton",
      "R\t1\t7\t0\t1\t0\t0\t1000000\t-",
      "C\t9\t0\t1500000", "K\t9\tmemcpy\t0\t7\t1600000\t2600000\t64\t5",
      "R\t2\t7\t0\t1\t0\t2000000\t3000000\t-",
      "X\texit",
    })
    assert_near(0.0004, e.samples[2], "iter: from the copy's end (2.6) to the range's end (3)")
    assert_near(0.0016, e.loop.data[2], "data: the whole gap without data ranges")
  end)

  it("phase-overlap only when the step's GPU work overlaps in time", function()
    local function streams(i)
      local t = sync_after(i)
      t.k1 = t.k0 + 3 -- fwd's kernel [1.1, 4.1] and bwd's [1.1 + ..]: made to overlap below
      return t
    end
    local lines = loop_lines(4, streams)
    -- bwd's kernels start with fwd's, on another stream
    for i, l in ipairs(lines) do
      local corr, start, stop = l:match("^K\t(%d+)\tkernel\t0\t7\t(%d+)\t(%d+)")
      if corr and tonumber(corr) % 10 == 3 then
        local s0 = tonumber(start) - 3 * MS
        lines[i] = ("K\t%s\tkernel\t0\t8\t%d\t%d\t0\t5"):format(corr, s0,
          s0 + (tonumber(stop) - tonumber(start)))
      end
    end
    local e = entry_of({ warmup = 1 }, lines)
    assert.matches("phase%-overlap", codes(e))
    assert.is_true(e.loop.outside.mean >= 0)
  end)

  it("no phase-overlap where kernels overlap inside a phase on one stream (dependent launch)",
    function()
    -- each step's fwd gets a second kernel [2.1, 3.1] inside its first [1.1, 4], and bwd one that
    -- starts 0.05 ms before fwd's ends ([3.95, 4.5]): as a kernel launched with programmatic
    -- dependent launch starts before the one before it ends
    local extra = {}
    for i = 1, 4 do
      local t, id = sync_after(i), 100 + 10 * i
      extra[#extra + 1] = ("C\t%d\t%d\t%d"):format(id + 7, id + 2, ms(t.s0) + 2)
      extra[#extra + 1] = ("K\t%d\tkernel\t0\t7\t%d\t%d\t0\t5"):format(id + 7, ms(t.k0 + 1),
        ms(t.k0 + 2))
      extra[#extra + 1] = ("C\t%d\t%d\t%d"):format(id + 8, id + 3, ms(t.f1) + 2)
      extra[#extra + 1] = ("K\t%d\tkernel\t0\t7\t%d\t%d\t0\t5"):format(id + 8, ms(t.k1 - 0.05),
        ms(t.k1 + 0.5))
    end
    local e = entry_of({ warmup = 1 }, loop_lines(4, sync_after, extra))
    assert_near(0.0029, phase(e, "fwd").mean, "fwd: the union of its kernels, [1.1, 4]")
    assert_near(0.00305, phase(e, "bwd").mean, "bwd: the union of its kernels, [3.95, 7]")
    assert.equal("", codes(e))
  end)

  it("CPU times only: says an iteration is its range's CPU time", function()
    local lines = loop_lines(4, sync_after)
    lines[6] = "G\toff\tWLRUN_TRACE_GPU=0"
    local e = entry_of({ warmup = 1 }, lines)
    assert_near(0.002, e.samples[1], "the range")
    local function cpu_only(entry)
      for _, w in ipairs(entry.warnings) do
        if w.code == "cpu-only" then return w.message end
      end
    end
    assert.matches(
      "an iteration is its step range's CPU time, which can end before the step's GPU work does",
      cpu_only(e))
    local synced = entry_of({ warmup = 1, sync_steps = true }, lines)
    assert.matches("the steps were synchronised", cpu_only(synced))
  end)
end)

describe("trace report with wlrun's Python hook", function()
  -- the hook's ranges: data, then train_step (payload: the batch) holding forward, backward and
  -- optimizer, in the domain wlrun.auto (sid 9)
  local function auto_lines(user)
    local lines = { "S\t1\ttrain_step", "S\t2\tdata", "S\t3\tforward", "S\t4\tbackward",
      "S\t5\toptimizer",
      "S\t6\tk", "S\t9\twlrun.auto", "S\t10\tmy_fwd", "G\ton" }
    for i = 1, 5 do
      local b = 10 * MS * (i - 1)
      local id = 100 + 10 * i
      lines[#lines + 1] = ("R\t%d\t7\t0\t2\t9\t%d\t%d\t-"):format(id, b, b + MS)
      lines[#lines + 1] = ("R\t%d\t7\t%d\t3\t9\t%d\t%d\t-"):format(id + 2, id + 1, b + MS,
        b + 3 * MS)
      if user then -- the program's own range inside the hook's forward
        lines[#lines + 1] = ("R\t%d\t7\t%d\t10\t0\t%d\t%d\t-"):format(id + 5, id + 2, b + MS,
          b + 2 * MS)
        lines[#lines + 1] = ("R\t%d\t7\t0\t%s\t0\t%d\t%d\t-"):format(id + 6, user, b + MS - 1,
          b + 9 * MS + 1)
      end
      lines[#lines + 1] = ("R\t%d\t7\t%d\t4\t9\t%d\t%d\t-"):format(id + 3, id + 1, b + 3 * MS,
        b + 7 * MS)
      lines[#lines + 1] = ("R\t%d\t7\t%d\t5\t9\t%d\t%d\t-"):format(id + 4, id + 1, b + 7 * MS,
        b + 9 * MS)
      -- the hook's step pushed inside the program's own step range, when there is one
      lines[#lines + 1] = ("R\t%d\t7\t%d\t1\t9\t%d\t%d\t32"):format(id + 1, user and id + 6 or 0,
        b + MS, b + 9 * MS)
      lines[#lines + 1] = ("C\t%d\t%d\t%d"):format(id, user and id + 5 or id + 2, b + MS + 1)
      lines[#lines + 1] = ("K\t%d\tkernel\t0\t7\t%d\t%d\t0\t6"):format(id, b + MS + 10, b + 2 * MS)
    end
    -- the hook's last data range, never closed
    lines[#lines + 1] = "O\t999\t7\t0\t2\t9\t60000000\t-"
    lines[#lines + 1] = "X\texit"
    return lines
  end

  it("takes the hook's steps where the program has none, its payload as the batch size", function()
    local e = entry_of({ warmup = 1 }, auto_lines())
    assert.equal("ok", e.status)
    assert.equal("auto", e.trace.ranges)
    assert.equal(4, #e.samples)
    assert.equal(32, e.loop.batch_size)
    assert.equal("loader", e.trace.batch_source)
    assert_near(0.008, e.samples[1], "iter")
    assert_near(0.001, e.loop.data[1], "data")
    local names = {}
    for _, ph in ipairs(e.trace.phases) do names[#names + 1] = ph.name end
    assert.same({ "forward", "backward", "optimizer" }, names)
    assert.matches("wlrun's automatic PyTorch ranges", table.concat(e.notes, "\n"))
    assert.equal("", codes(e)) -- the hook's open range is no open-ranges warning
  end)

  it("takes the program's own steps when it has them, the hook's ranges left out", function()
    local e = entry_of({ warmup = 1, step = "my_step" }, (function()
      local l = auto_lines("11")
      table.insert(l, 1, "S\t11\tmy_step")
      return l
    end)())
    assert.equal("program", e.trace.ranges)
    local names = {}
    for _, ph in ipairs(e.trace.phases) do names[#names + 1] = ph.name end
    assert.same({ "my_fwd" }, names) -- the hook's forward gone, its work is my_fwd's
    assert_near(0.00099999, e.trace.phases[1].gpu_mean, "my_fwd's GPU time", 1e-6)
    -- the program's steps carry no payload: the samples are the loader's batches the hook saw
    assert.equal(32, e.loop.batch_size)
    assert.equal("loader", e.trace.batch_source)
    assert.matches("the step ranges carry no payload: the samples are the batches the "
      .. "DataLoader gave", table.concat(e.notes, "\n"))
  end)

  it("counts the loader's batches in the program's own steps only where they overlap", function()
    -- my_step around steps 2 to 5 only: the hook's first step overlaps none of them; a second
    -- hook step of 16 inside the third own step adds to it; --batch-size still decides
    local l = auto_lines()
    table.insert(l, 1, "S\t11\tmy_step")
    for i = 2, 5 do
      local b = 10 * MS * (i - 1)
      table.insert(l, #l, ("R\t%d\t7\t0\t11\t0\t%d\t%d\t-"):format(500 + i, b + MS - 1,
        b + 9 * MS + 1))
    end
    table.insert(l, #l, ("R\t600\t7\t0\t1\t9\t%d\t%d\t16"):format(20 * MS + 5 * MS,
      20 * MS + 6 * MS))
    local e = entry_of({ warmup = 1, step = "my_step" }, l)
    assert.equal("program", e.trace.ranges)
    assert.equal(3, #e.samples)
    assert.equal("loader", e.trace.batch_source)
    assert.equal(32 * 3 + 16, math.floor(e.loop.throughput * e.loop.total_time + 0.5))
    e = entry_of({ warmup = 1, step = "my_step", batch_size = 8 }, l)
    assert.equal(8, e.loop.batch_size)
    assert.equal("option", e.trace.batch_source)
  end)

  it("counts a hook step left open (--steps stopped the recording) as the others' mean batch",
    function()
    -- the program's last step closed, the hook's last step still open when the recording stopped
    local l = auto_lines("11")
    table.insert(l, 1, "S\t11\tmy_step")
    for i = #l, 1, -1 do
      if l[i]:match("^R\t151\t") then l[i] = l[i]:gsub("^R(\t151\t.-\t%d+)\t%d+\t32$", "O%1\t-") end
    end
    local e = entry_of({ warmup = 1, step = "my_step" }, l)
    assert.equal(4, #e.samples)
    assert.equal(32, e.loop.batch_size)
    assert.equal(4 * 32, math.floor(e.loop.throughput * e.loop.total_time + 0.5))
    assert.is_nil(table.concat(e.notes, "\n"):find("fetched no batch", 1, true))
  end)

  it("ends the hook's data at the batch in hand: the fetch's end or its copy, not a sync after",
    function()
    -- the hook's data range [0, 2] holds the fetch (its payload: ended at 0.5), the copy launched
    -- at 0.8 (GPU [0.9, 1.0]) and a synchronisation until 2; the step [2, 9]. Without a copy,
    -- the data ends with the fetch.
    local function lines_of(copy)
      local lines = { "S\t1\ttrain_step", "S\t2\tdata", "S\t6\tk", "S\t9\twlrun.auto", "G\ton" }
      for i = 1, 5 do
        local b, id = 10 * MS * (i - 1), 100 + 10 * i
        lines[#lines + 1] = ("R\t%d\t7\t0\t2\t9\t%d\t%d\t%d"):format(id, b, b + 2 * MS,
          b + MS // 2)
        lines[#lines + 1] = ("R\t%d\t7\t0\t1\t9\t%d\t%d\t32"):format(id + 1, b + 2 * MS,
          b + 9 * MS)
        if copy then
          lines[#lines + 1] = ("C\t%d\t%d\t%d"):format(id, id, b + 8 * MS // 10)
          lines[#lines + 1] = ("K\t%d\tmemcpy\t0\t7\t%d\t%d\t4096\t6"):format(id, b + 9 * MS // 10,
            b + MS)
        end
        lines[#lines + 1] = ("C\t%d\t%d\t%d"):format(id + 1, id + 1, b + 2 * MS + 1)
        lines[#lines + 1] = ("K\t%d\tkernel\t0\t7\t%d\t%d\t0\t6"):format(id + 1, b + 2 * MS + 10,
          b + 8 * MS)
      end
      lines[#lines + 1] = "X\texit"
      return lines
    end
    local e = entry_of({ warmup = 1 }, lines_of(true))
    assert.equal("auto", e.trace.ranges)
    assert_near(0.001, e.loop.data[1], "data with the copy")
    assert_near(0.001, e.loop.data_stats.mean, "data mean with the copy")
    e = entry_of({ warmup = 1 }, lines_of(false))
    assert_near(0.0005, e.loop.data_stats.mean, "data mean without a copy")
  end)

  it("gives the work launched in the hook's ranges to the program's range open at its launch",
    function()
    -- the program's train_step [0.5, 9.5] holds forward [0.6, 3], backward [3.1, 7] and
    -- optimizer [7.1, 9]; the hook's step opens inside the program's forward and outlives it
    -- (the library re-parents it to train_step), its forward [1, 3.2] and backward [3.2, 7.05]
    -- straddle the program's. Work launched in the hook's forward at 1.1 is the forward's, at
    -- 3.15 the backward's; in the hook's backward at 4, the backward's.
    local lines = { "S\t1\ttrain_step", "S\t3\tforward", "S\t4\tbackward", "S\t5\toptimizer",
      "S\t6\tk", "S\t9\twlrun.auto", "G\ton" }
    local function at(b, x) return b + math.floor(x * MS + 0.5) end
    for i = 1, 5 do
      local b, id = 10 * MS * (i - 1), 100 + 10 * i
      local function R(rid, parent, sid, dom, t0, t1, payload)
        lines[#lines + 1] = ("R\t%d\t7\t%d\t%d\t%d\t%d\t%d\t%s"):format(rid, parent, sid, dom,
          at(b, t0), at(b, t1), payload or "-")
      end
      local function K(corr, rid, call, g0, g1)
        lines[#lines + 1] = ("C\t%d\t%d\t%d"):format(corr, rid, at(b, call))
        lines[#lines + 1] = ("K\t%d\tkernel\t0\t7\t%d\t%d\t0\t6"):format(corr, at(b, g0), at(b, g1))
      end
      R(id + 1, 0, 1, 0, 0.5, 9.5, 32)        -- the program's train_step
      R(id + 2, id + 1, 3, 0, 0.6, 3)         -- its forward
      R(id + 3, id + 1, 1, 9, 1, 9.5)         -- the hook's step
      R(id + 4, id + 3, 3, 9, 1, 3.2)         -- the hook's forward
      R(id + 5, id + 4, 4, 0, 3.1, 7)         -- the program's backward, in the hook's forward
      R(id + 6, id + 3, 4, 9, 3.2, 7.05)      -- the hook's backward
      R(id + 7, id + 3, 5, 0, 7.1, 9)         -- the program's optimizer
      K(id + 1, id + 4, 1.1, 1.2, 2.9)
      K(id + 2, id + 4, 3.15, 3.2, 4)
      K(id + 3, id + 6, 4, 4, 6.5)
      K(id + 4, id + 7, 7.2, 7.2, 8.5)
    end
    lines[#lines + 1] = "X\texit"
    local e = entry_of({ warmup = 1 }, lines)
    assert.equal("program", e.trace.ranges)
    assert.equal(4, #e.samples)
    local by = three_phases(e)
    assert_near(0.0017, by.forward.gpu_mean, "forward's GPU time", 1e-6)
    assert_near(0.0033, by.backward.gpu_mean, "backward's GPU time", 1e-6)
    assert_near(0.0013, by.optimizer.gpu_mean, "optimizer's GPU time", 1e-6)
    assert_near(0.0063, e.trace.gpu_busy_mean, "GPU busy", 1e-6)
  end)

  it("begins a step that began late (a forward the hook did not see) at its batch in hand",
    function()
    -- the hook's data range [0, 4]: the batch in hand at 0.5 (its payload), its copy launched at
    -- 0.8 (GPU [0.9, 1.2]), then the forward's kernel, which called no module, launched at 1.5
    -- (GPU [1.6, 3.5]); the step opens at backward, 4, with a forward of no length whose payload
    -- is 0.5; backward [4, 7] (GPU [4.2, 6.5]), optimizer [7, 9] (GPU [7.2, 8.5]); a call at
    -- 0.6 that started no GPU work (an event recorded) is neither copy nor kernel. Evaluated:
    -- the forward was taken for evaluation (a frozen backbone under no_grad), which closed the
    -- data at 1.4, and its kernel was launched in no range.
    local function lines_of(evaluated, epoch)
      local lines = { "S\t1\ttrain_step", "S\t2\tdata", "S\t3\tforward", "S\t4\tbackward",
        "S\t5\toptimizer", "S\t6\tk", "S\t8\tepoch", "S\t9\twlrun.auto", "G\ton" }
      local top = epoch and 1 or 0
      if epoch then lines[#lines + 1] = ("R\t1\t7\t0\t8\t0\t%d\t%d\t-"):format(0, 60 * MS) end
      for i = 1, 5 do
        local id = 100 + 10 * i
        local R, K, at = hook_lines(lines, 10 * MS * (i - 1))
        R(id, top, 2, 0.1, evaluated and 1.4 or 4, at(0.5)) -- data
        R(id + 1, top, 1, 4, 9, 32)            -- the step
        R(id + 2, id + 1, 3, 4, 4, at(0.5)) -- the marker
        R(id + 3, id + 1, 4, 4, 7)             -- backward
        R(id + 4, id + 1, 5, 7, 9)             -- optimizer
        lines[#lines + 1] = ("C\t%d\t%d\t%d"):format(id + 9, id, at(0.6)) -- an event's: no work
        K(id, id, "memcpy", 0.8, 0.9, 1.2)
        K(id + 1, evaluated and top or id, "kernel", 1.5, 1.6, 3.5)
        K(id + 2, id + 3, "kernel", 4.1, 4.2, 6.5)
        K(id + 3, id + 4, "kernel", 7.2, 7.2, 8.5)
      end
      lines[#lines + 1] = "X\texit"
      return lines
    end
    -- epoch: all inside a program's range "epoch", in which the evaluated forward's kernel is
    -- launched (the innermost range open then)
    for _, case in ipairs { { false }, { true }, { true, true } } do
      local evaluated, epoch = case[1], case[2]
      local what = (evaluated and "evaluated" or "unseen") .. (epoch and " in an epoch" or "")
      local e = entry_of({ warmup = 1 }, lines_of(evaluated, epoch))
      assert.equal("auto", e.trace.ranges)
      assert.equal(4, #e.samples)
      -- the window from the copy's end (the template's sync before t0) to the step's end
      assert_near(0.0078, e.samples[1], what .. ": iter", 1e-6)
      assert_near(0.0011, e.loop.data_stats.mean, what .. ": data: the fetch and the copy", 1e-6)
      local by = three_phases(e)
      assert_near(0.0019, by.forward.gpu_mean, what .. ": forward's GPU time", 1e-6)
      assert_near(0.0032, by.forward.cpu_mean, what .. ": forward's CPU time", 1e-5)
      assert_near(0.0055, e.trace.gpu_busy_mean, what .. ": GPU busy", 1e-6)
    end
  end)

  it("begins a late step at its batch's copy where the forward's kernels were not recorded",
    function()
    -- the same data range [0, 4] (in hand at 0.5, the copy launched at 0.8, GPU [0.9, 1.2]) on
    -- steps whose kernels were not recorded (--gpu-every): of the unseen forward only a set and a
    -- copy out of the GPU are seen (at 2 and 2.5, GPU [2.1, 2.2] and [2.6, 2.7], in either
    -- order), which are not the batch's arrival; the step opens at backward, 4
    for _, first in ipairs { "memset", "memcpy DtoH" } do
      local lines = { "S\t1\ttrain_step", "S\t2\tdata", "S\t3\tforward", "S\t4\tbackward",
        "S\t5\toptimizer", "S\t6\tk", "S\t7\tmemcpy DtoH", "S\t9\twlrun.auto", "G\ton" }
      for i = 1, 5 do
        local id = 100 + 10 * i
        local R, K, at = hook_lines(lines, 10 * MS * (i - 1))
        local function out_of_gpu(t) -- a copy to the host, named by its direction
          lines[#lines + 1] = ("C\t%d\t%d\t%d"):format(id + 2, id, at(t))
          lines[#lines + 1] = ("K\t%d\tmemcpy\t0\t7\t%d\t%d\t0\t7"):format(id + 2,
            at(t + 0.1), at(t + 0.2))
        end
        R(id, 0, 2, 0.1, 4, at(0.5)) -- data
        R(id + 1, 0, 1, 4, 9, 32) -- the step
        R(id + 2, id + 1, 3, 4, 4, at(0.5)) -- the marker
        R(id + 3, id + 1, 4, 4, 7) -- backward
        R(id + 4, id + 1, 5, 7, 9) -- optimizer
        K(id, id, "memcpy", 0.8, 0.9, 1.2)
        K(id + 1, id, "memset", first == "memset" and 2 or 2.5, first == "memset" and 2.1 or 2.6,
          first == "memset" and 2.2 or 2.7)
        out_of_gpu(first == "memset" and 2.5 or 2)
        K(id + 3, id + 3, "kernel", 4.1, 4.2, 6.5)
        K(id + 4, id + 4, "kernel", 7.2, 7.2, 8.5)
      end
      lines[#lines + 1] = "X\texit"
      local e = entry_of({ warmup = 1 }, lines)
      assert.equal(4, #e.samples)
      assert_near(0.0078, e.samples[1], first .. " first: iter from the copy's end", 1e-6)
      assert_near(0.0011, e.loop.data_stats.mean, first .. " first: data, the fetch and the copy",
        1e-6)
    end
  end)

  it("gives a later micro-batch's evaluation before its training to the forward", function()
    -- gradient accumulation: the step [1, 20] holds forward [1, 3], backward [3, 6], the second
    -- micro-batch's data [7, 9.5] (in hand at 7.5, then a frozen backbone under no_grad, its
    -- kernel launched at 8), a marker at 9.5 (payload 7.5), forward [9.5, 12], backward [12, 15],
    -- optimizer [15, 19]
    local lines = { "S\t1\ttrain_step", "S\t2\tdata", "S\t3\tforward", "S\t4\tbackward",
      "S\t5\toptimizer", "S\t6\tk", "S\t9\twlrun.auto", "G\ton" }
    for i = 1, 4 do
      local id = 100 + 20 * i
      local R, K, at = hook_lines(lines, 25 * MS * (i - 1))
      R(id, 0, 2, 0, 1, at(0.5))
      R(id + 1, 0, 1, 1, 20, 32)
      R(id + 2, id + 1, 3, 1, 3)
      R(id + 3, id + 1, 4, 3, 6)
      R(id + 4, id + 1, 2, 7, 9.5, at(7.5))
      R(id + 5, id + 1, 3, 9.5, 9.5, at(7.5))
      R(id + 6, id + 1, 3, 9.5, 12)
      R(id + 7, id + 1, 4, 12, 15)
      R(id + 8, id + 1, 5, 15, 19)
      K(id, id + 4, "kernel", 8, 8.1, 9)
    end
    lines[#lines + 1] = "X\texit"
    local e = entry_of({ warmup = 1 }, lines)
    assert.equal("auto", e.trace.ranges)
    local by = {}
    for _, ph in ipairs(e.trace.phases) do by[ph.name] = ph end
    assert_near(0.0065, by.forward.cpu_mean, "forward: both micro-batches and the backbone", 1e-6)
    assert_near(0.0009, by.forward.gpu_mean, "forward's GPU time: the backbone's", 1e-6)
    assert_near(0.0005, by.data.cpu_mean, "the second micro-batch's fetch", 1e-6)
  end)

  it("leaves a late step as it is where its data range does not hold the payload's time",
    function()
    -- a hostile or broken file: the data range [2, 3] says its batch was in hand at 1
    local lines = { "S\t1\ttrain_step", "S\t2\tdata", "S\t3\tforward", "S\t9\twlrun.auto" }
    for i = 1, 4 do
      local id = 100 + 10 * i
      local R, _, at = hook_lines(lines, 10 * MS * (i - 1))
      R(id, 0, 2, 2, 3, at(1))
      R(id + 1, 0, 1, 4, 9, 32)
      R(id + 2, id + 1, 3, 4, 4, at(1))
    end
    lines[#lines + 1] = "X\texit"
    local e = entry_of({ warmup = 0 }, lines)
    for i, x in ipairs(e.samples) do assert_near(0.005, x, ("iteration %d"):format(i), 1e-6) end
    for i, d in ipairs(e.loop.data) do assert.is_true(d >= 0, ("data %d: %s"):format(i, d)) end
  end)

  it("moves no range that holds the late step under its forward (no parent loop)", function()
    -- a program's "iter" range opened after the batch in hand, around the step, in every other
    -- iteration: it stays the step's parent
    local lines = { "S\t1\ttrain_step", "S\t2\tdata", "S\t3\tforward", "S\t4\titer",
      "S\t9\twlrun.auto" }
    for i = 1, 4 do
      local b, id = 10 * MS * i, 100 + 10 * i
      local own = i % 2 == 0
      lines[#lines + 1] = ("R\t%d\t7\t0\t2\t9\t%d\t%d\t%d"):format(id, b, b + MS, b + MS // 2)
      if own then
        lines[#lines + 1] = ("R\t%d\t7\t0\t4\t0\t%d\t%d\t-"):format(id + 3, b + MS * 6 // 10,
          b + 9 * MS)
      end
      lines[#lines + 1] = ("R\t%d\t7\t%d\t1\t9\t%d\t%d\t16"):format(id + 1, own and id + 3 or 0,
        b + 4 * MS, b + 9 * MS)
      lines[#lines + 1] = ("R\t%d\t7\t%d\t3\t9\t%d\t%d\t%d"):format(id + 2, id + 1, b + 4 * MS,
        b + 4 * MS, b + MS // 2)
    end
    lines[#lines + 1] = "X\texit"
    local e = entry_of({ warmup = 0 }, lines)
    assert.equal(4, e.trace.steps)
    for i, x in ipairs(e.samples) do assert_near(0.0085, x, ("iteration %d"):format(i), 1e-6) end
  end)

  it("never takes the hook's steps with auto = false (--step given)", function()
    local ok, err = pcall(entry_of, { warmup = 1, auto = false }, auto_lines())
    assert.is_false(ok)
    assert.matches("no closed range named 'train_step'", err.message)
  end)
end)
