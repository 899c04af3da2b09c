-- The catalogue of bad inputs, class "lost": nothing lost, nothing hung, no error swallowed or
-- misplaced. Ctrl-C honoured inside wlrun's own loops in C and in wl.sleep; --config-timeout
-- applied to plain scripts and under --compile-only; a teardown error, os.exit in a sweep and a
-- plain table returned instead of wl.scenario{} reported; every field of k:bind{} named in its
-- errors. See tests/catalogue.lua for the fields of a case.
local load = require "wlrun.results.load"
local assert = require "luassert"

local CO = "--compile-only --arch sm_90"
-- Ctrl-C after N seconds; killed outright (a signal: the case fails) 10 s after that, so that a
-- Ctrl-C that is not honoured ends the case instead of hanging it
local function ctrl_c(n) return ("timeout --preserve-status -k 10 -s INT %s"):format(n) end
-- Ctrl-C once the script has written the file READY where it must be interrupted (a fifth of a
-- second later, for the few instructions between the file and the loop), however long it took to
-- get there; timeout(1) passes the Ctrl-C on and kills wlrun outright 10 s after it
local function ctrl_c_at(ready)
  return ([[sh -c 'timeout --preserve-status -k 10 -s INT 120 "$@" & t=$!; ]]
    .. [[while [ ! -e %s ] && kill -0 $t 2>/dev/null; do sleep 0.05; done; sleep 0.2; kill ]]
      .. [[-INT $t; wait $t' sh]]):format(ready)
end

-- SIG (TERM, HUP, QUIT, USR1, USR2) sent to wlrun itself once READY exists, as a cluster's
-- scheduler sends it (no timeout(1) between them: it would not pass SIGUSR1 on); a watchdog kills
-- wlrun outright 120 s later, so that a signal not honoured ends the case instead of hanging it
local function signal_at(sig, ready)
  return ([[sh -c '"$@" & t=$!; (sleep 120; kill -KILL $t 2>/dev/null) & w=$!; ]]
    .. [[while [ ! -e %s ] && kill -0 $t 2>/dev/null; do sleep 0.05; done; sleep 0.2; ]]
      .. [[kill -%s $t; ]]
    .. [[wait $t; r=$?; kill $w 2>/dev/null; exit $r' sh]]):format(ready, sig)
end

-- wlrun's standard output read by head -c 1, which exits after a byte: a pipe without a reader
local CLOSED_STDOUT = [[sh -c '("$@"; echo $? > code) | head -c 1 >/dev/null; exit $(cat code)' sh]]
-- the same read by READER, then the file `closed` made once the pipe has no reader left (its
-- subshell's end of it closed first), for a scenario to wait on (WAIT_CLOSED) instead of a while
-- that a loaded machine may outlast
local function closed_after(reader)
  return ([[sh -c '("$@"; echo $? > code) | (%s; exec 0<&-; : >closed); exit $(cat code)' sh]])
    :format(reader)
end
local WAIT_CLOSED =
  "local t = 0 while not io.open('closed') and t < 600 do wl.sleep(0.1) t = t + 1 end"

-- a scenario over n = 1..4 around BODY (fields of wl.scenario)
local function sweep(body)
  return ([[local wl = require "wlrun"
return wl.scenario { name = "lost", params = { n = { 1, 2, 3, 4 } },
  %s }
]]):format(body)
end

-- the results document r.json holds these statuses (and the run says whether it completed)
local function doc_is(complete, statuses, more)
  return function(_, dir)
    local doc = load.load(dir .. "/r.json")
    assert.equal(complete, doc.complete)
    local got = {}
    for i, c in ipairs(doc.configurations) do got[i] = c.status end
    assert.same(statuses, got)
    assert.is_nil(io.open(dir .. "/r.json.journal")) -- every output written, the journal gone
    if more then more(doc, dir) end
  end
end

-- of the four configurations, the second alone failed, with this kind
local function second_failed(kind)
  return doc_is(true, { "compiled", "failed", "compiled", "compiled" }, function(doc)
    assert.equal(kind, doc.configurations[2].kind)
  end)
end

-- a bound launch of an empty kernel, for the launch loops (CPU: under --compile-only; on a GPU,
-- Ctrl-C after 5 s, once NVRTC has compiled it)
local LAUNCH = [[local wl = require "wlrun"
local k = wl.kernel { 'extern "C" __global__ void nop(float* p) { }', name = "nop" }
local x = wl.tensor { 16 }
local l = k:bind { grid = 1, block = 1, args = { x } }
]]
-- the same, then the file 'bound' that ctrl_c_at waits for: the loop comes next
local BOUND = LAUNCH .. "io.open('bound', 'w'):close()\n"

-- a bind with one field changed
local function bind(field)
  return LAUNCH .. "k:bind { grid = 1, block = 1, args = { x }, " .. field .. " }\n"
end

-- The signals of a terminal and a cluster end a run as Ctrl-C does, in every phase of every kind
-- of run (docs/reliability.md, "Interrupts"): each signal in each phase below, with its exit code
-- (128 + the signal), one message naming it, and every output. A phase: the script (it writes
-- the file 'ready' where the signal must come), the arguments, and what the message says after
-- the signal's name.
local SIGNALS = { { "TERM", 15 }, { "HUP", 1 }, { "QUIT", 3 }, { "USR1", 10 }, { "USR2", 12 } }
local READY = "io.open('ready', 'w'):close() "
local SLOW_COMPILE = [[wl.kernel { "template <int N> struct F { __device__ static float f(float x) { return F<N - 1>::f(x * 1.0001f + N) + F<N - 2>::f(x) * 0.5f; } };\n"
      .. "template <> struct F<0> { __device__ static float f(float x) { return x; } };\n"
      .. "template <> struct F<1> { __device__ static float f(float x) { return x + 1.0f; } };\n"
      .. "extern \"C\" __global__ void k(float *p) { p[threadIdx.x] = F<17>::f(p[threadIdx.x]); }", name = "k" }]] -- luacheck: ignore 631
local SECOND = " during configuration 2 of 4; 1 finished configurations are in r%.json"
-- the second of the sweep's configurations was interrupted, the first kept (with this status)
local function second_interrupted(sig, first)
  return doc_is(false, { first or "compiled", "failed" }, function(doc, dir)
    assert.equal("interrupted", doc.configurations[2].kind)
    -- "interrupted (SIGTERM)"; a teardown's says so first, a wl.command's names the program
    assert.matches(("interrupted.*SIG%s"):format(sig), doc.configurations[2].error)
    assert.truthy(io.open(dir .. "/r.csv")) -- every output written
  end)
end
local SIGNAL_PHASES = {
  { phase = "a configuration's setup", args = CO .. " -o r.json -o r.csv", says = SECOND,
    script = sweep("setup = function(p) if p.n == 2 then " .. READY
      .. "wl.sleep(60) end return {} end, run = function() end") },
  { phase = "a teardown", args = CO .. " -o r.json -o r.csv", says = SECOND,
    script = sweep(
      "setup = function() return {} end, run = function() end, teardown = function(p) if p.n "
      .. "== 2 then " .. READY
      .. "wl.sleep(60) end end") },
  { phase = "NVRTC's compile", args = CO .. " --no-cache -o r.json -o r.csv", says = SECOND,
    script = sweep("setup = function(p) if p.n == 2 then " .. READY .. SLOW_COMPILE
      .. " end return {} end, run = function() end") },
  { phase = "an --isolate child", args = CO .. " --isolate -o r.json -o r.csv", says = SECOND,
    script = sweep("setup = function(p) if p.n == 2 then " .. READY
      .. "wl.sleep(60) end return {} end, run = function() end") },
  { phase = "a shard (--shard 1/2)", args = CO .. " --shard 1/2 -o r.json -o r.csv",
    says = " during configuration 2 of 2; 1 finished configurations are in r%.json",
    script = "local count = 0\n"
      .. sweep("setup = function(p) count = count + 1 if count == 2 then " .. READY
      .. "wl.sleep(60) end return {} end, run = function() end") },
  { phase = "a wl.command program", args = "-o r.json -o r.csv", says = SECOND, first = "failed",
    script = [[local wl = require "wlrun"
return wl.command { name = "c", params = { n = { 1, 2, 3, 4 } }, warmup = 0,
  command = function(p) return { "sh", "-c", p.n == 2 and "touch ready; sleep 60" or "true" } end }
]] },
  { phase = "a scenario's prepare (nothing measured yet)", args = CO .. " -o r.json",
    says = " at .*script%.lua:3",
    script = sweep("prepare = function() " .. READY
      .. "wl.sleep(60) end, setup = function() return {} end, run = function() end"),
    check = function(_, dir) assert.is_nil(io.open(dir .. "/r.json")) end },
  { phase = "a measurement on a GPU", gpu = true, args = "-o r.json -o r.csv", says = SECOND,
    first = "ok",
    script = LAUNCH .. [[return wl.scenario { name = "long", params = { n = { 1, 2, 3, 4 } },
  timing = { mode = "host", iters = 1, warmup = 0 },
  run = function(p) if p.n == 2 then io.open('ready', 'w'):close() end l:launch(p.n == 2 and 2e7 or 1) end }
]] },
  { phase = "a wl.loop step on a GPU", gpu = true, args = "-o r.json -o r.csv", says = SECOND,
    first = "ok",
    script = [[local wl = require "wlrun"
return wl.loop { name = "loop", params = { n = { 1, 2, 3, 4 } }, warmup = 0, iters = 2, batch_size = 1, print_iters = false,
  data = function() return 1 end,
  step = function(_, _, p) if p.n == 2 then io.open('ready', 'w'):close() wl.sleep(60) end end }
]] },
  { phase = "a --devices worker on a GPU", gpu = true, args = "--devices 0 -o r.json -o r.csv",
    says = " during configuration %d of 4; 1 finished configurations are in r%.json",
    script = LAUNCH .. [[return wl.scenario { name = "long", params = { n = { 1, 2, 3, 4 } },
  timing = { mode = "host", iters = 1, warmup = 0 },
  run = function(p) if p.n == 2 then io.open('ready', 'w'):close() end l:launch(p.n == 2 and 2e7 or 1) end }
]], check = function(_, dir)
      local doc = load.load(dir .. "/r.json")
      assert.is_false(doc.complete)
      assert.equal("ok", doc.configurations[1].status)
      assert.truthy(io.open(dir .. "/r.csv"))
    end },
  { phase = "a plain script", says = " at .*script%.lua:2", check = function() end,
    script = "local wl = require 'wlrun'\n" .. READY .. "wl.sleep(60)\n" },
}

local function signal_cases()
  local cases = {}
  for _, s in ipairs(SIGNALS) do
    local sig, code = s[1], 128 + s[2]
    for _, ph in ipairs(SIGNAL_PHASES) do
      cases[#cases + 1] = {
        name = ("SIG%s during %s: exit %d, the message, every output"):format(sig, ph.phase, code),
          code = code,
        prefix = signal_at(sig, "ready"), args = ph.args, script = ph.script, gpu = ph.gpu,
        stderr = ("interrupted %%(SIG%s%%)"):format(sig) .. ph.says,
        check = ph.check or second_interrupted(sig, ph.first) }
    end
    cases[#cases + 1] = {
      name = ("SIG%s during wlrun trace's program: passed on, exit %d"):format(sig, code),
        code = code,
      prefix = signal_at(sig, "ready"), args = "trace -- sh -c 'touch ready; sleep 60'",
      stderr = ("trace: interrupted by SIG%s, passed on to the program; no report"):format(sig) }
  end
  return cases
end

-- a signal that reaches wlrun while an --isolate child is in its end (its entry written): the
-- sweep stops after that entry (it was lost: the sweep went on to its end and exited 0)
local LATE_END = sweep([[setup = function(p)
    if p.n == 1 then -- this child's end is long: the signal comes then
      _G.slow_end = setmetatable({}, { __gc = function() io.open("ready", "w"):close() wl.sleep(3) end })
    end
    return {}
  end, run = function() end]])
-- a SIGHUP ignored on purpose (nohup) stays ignored, in wlrun and in its --isolate children
local function nohup_hup_at(ready)
  return ([[sh -c 'trap "" HUP; "$@" & t=$!; (sleep 120; kill -KILL $t 2>/dev/null) & w=$!; ]]
    .. [[while [ ! -e %s ] && kill -0 $t 2>/dev/null; do sleep 0.05; done; ]]
    .. [[sleep 0.2; kill -HUP $t; ]]
    .. [[wait $t; r=$?; kill $w 2>/dev/null; exit $r' sh]]):format(ready)
end

local cases = {
  { name = "SIGTERM while an --isolate child ends, its entry written: the sweep stops after it",
    code = 143, prefix = signal_at("TERM", "ready"), args = CO .. " --isolate -o r.json -o r.csv",
    script = LATE_END,
    stderr = "interrupted %(SIGTERM%) during configuration 2 of 4; "
      .. "1 finished configurations are in r%.json",
    check = doc_is(false, { "compiled" }) },
  { name = "nohup: a SIGHUP ignored stays ignored while an --isolate child runs; the sweep ends",
    code = 0, prefix = nohup_hup_at("ready"), args = CO .. " --isolate -o r.json",
    script = sweep("setup = function(p) if p.n == 2 then io.open('ready', 'w'):close() "
      .. "wl.sleep(1) end return {} end, run = function() end"),
    check = doc_is(true, { "compiled", "compiled", "compiled", "compiled" }) },
  ---- a closed pipe ends a run as a stop signal does, exit 9 (the signals: above) ----
  { name = "a closed standard output (| head -c 1) stops the sweep at the next write, exit 9",
    code = 9, prefix = closed_after("head -c 1 >/dev/null"), args = CO .. " -o r.json -o r.csv",
    script = sweep(
      "setup = function(p) print(('x'):rep(10)) io.stdout:flush() "
      .. "if p.n == 1 then " .. WAIT_CLOSED .. " end "
      .. "return {} end, run = function() end"),
    stderr = "^wlrun: interrupted %(cannot write to standard output: Broken pipe%) during "
      .. "configuration 2 of 4; 1 finished configurations are in r%.json\n$",
    check = doc_is(false, { "compiled", "failed" }, function(doc, dir)
      assert.equal("interrupted", doc.configurations[2].kind)
      assert.equal("interrupted (cannot write to standard output: Broken pipe)",
        doc.configurations[2].error)
      local f = assert(io.open(dir .. "/r.csv"))
      local _, rows = f:read("a"):gsub("\n", "")
      f:close()
      assert.equal(3, rows) -- the header and both entries
    end) },
  { name = "a standard output closed when only the report is left: the write's error, exit 9",
    code = 9, prefix = closed_after("true"), args = CO .. " -o r.json",
    script = sweep("setup = function(p) if p.n == 1 then " .. WAIT_CLOSED .. " end return {} end, "
      .. "run = function() end"),
    stderr = "^wlrun: cannot write to standard output: Broken pipe\n$",
    check = doc_is(true, { "compiled", "compiled", "compiled", "compiled" }) },
  { name = "a closed standard output stops a plain script at its next write, exit 9",
    code = 9, prefix = CLOSED_STDOUT,
    script = "for _ = 1, 100 do print('x') require('wlrun').sleep(0.05) end\n"
      .. "io.open('ended', 'w'):close()",
    stderr = "^wlrun: interrupted %(cannot write to standard output: Broken pipe%) at "
      .. "[^\n]*script%.lua:1\n$",
    check = function(_, dir) assert.is_nil(io.open(dir .. "/ended")) end },
  ---- Ctrl-C inside wlrun's own loops and waits ----
  { name = "Ctrl-C during a long wl.sleep", code = 130, prefix = ctrl_c_at("sleeping"),
    script = "io.open('sleeping', 'w'):close()\nrequire('wlrun').sleep(60)",
      stderr = "interrupted %(Ctrl%-C%)" },
  { name = "Ctrl-C stops wl.sleep(30) long before its end", code = 130,
    script = [[local wl = require "wlrun"
os.execute(("(i=0; while [ ! -e sleeping ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; kill -INT %d) &")
  :format(require("wlrun.process").getpid()))
local t0 = wl.clock()
local ok, e = pcall(function() io.open("sleeping", "w"):close() wl.sleep(30) end)
local f = assert(io.open("elapsed", "w"))
f:write(wl.clock() - t0)
f:close()
error(e, 0)
]], stderr = "interrupted %(Ctrl%-C%)",
    check = function(_, dir)
      local f = assert(io.open(dir .. "/elapsed"))
      local elapsed = tonumber(f:read("a"))
      f:close()
      -- interrupted, not slept out: the signal comes within a poll (50 ms) of the file, and the
      -- sleep ends at once (EINTR) or within its 20 ms slice; 5 s leave room for a loaded machine
      assert.is_true(elapsed < 5, ("Ctrl-C stopped wl.sleep(30) at %.3f s"):format(elapsed))
    end },
  { name = "Ctrl-C during launch:launch(n) looped in C", code = 130, prefix = ctrl_c_at("bound"),
    args = CO,
    script = BOUND .. "l:launch(1e11)", stderr = "interrupted %(Ctrl%-C%) at .*script%.lua:6\n$" },
  { name = "Ctrl-C during the batch loop of the measurement", code = 130,
    prefix = ctrl_c_at("bound"), args = CO,
    script = BOUND .. "require('wlrun.engine').time_batch(l, 1000, 1000000)",
      stderr = "interrupted %(Ctrl%-C%)" },
  { name = "Ctrl-C during graph replays of the measurement", code = 130,
    prefix = ctrl_c_at("bound"), args = CO,
    script = BOUND
      .. "local g = wl.graph(function() l() end)\nrequire('wlrun.engine').time_batch(g, 1000, "
      .. "1000000)",
    stderr = "interrupted %(Ctrl%-C%)" },
  { name = "Ctrl-C during the warm-up replays of graph mode", code = 130,
    prefix = ctrl_c_at("bound"), args = CO,
    script = BOUND .. "require('wlrun.engine').time_graph(l, 10, 100, 1e11)",
      stderr = "interrupted %(Ctrl%-C%)" },
  { name = "Ctrl-C during a configuration keeps the finished ones", code = 130,
    prefix = ctrl_c_at("second"),
    args = CO .. " -o r.json",
    script = sweep(
      "setup = function(p) if p.n == 2 then io.open('second', 'w'):close() wl.sleep(60) end "
      .. "return {} end, "
      .. "run = function() end"),
    stderr
      =
      "interrupted %(Ctrl%-C%) during configuration 2 of 4; 1 finished configurations are "
      .. "in r%.json",
    check = doc_is(false, { "compiled", "failed" }, function(doc)
      assert.equal("interrupted", doc.configurations[2].kind)
    end) },
  { name = "Ctrl-C during a teardown", code = 130, prefix = ctrl_c_at("teardown"),
    args = CO .. " -o r.json",
    script = sweep("setup = function() return {} end, run = function() end, "
      .. "teardown = function() io.open('teardown', 'w'):close() wl.sleep(60) end"),
    stderr = "interrupted %(Ctrl%-C%) during configuration 1 of 4",
    check = doc_is(false, { "failed" }, function(doc)
      assert.equal("interrupted", doc.configurations[1].kind)
      assert.matches("^teardown: interrupted", doc.configurations[1].error)
    end) },

  ---- --config-timeout: applied to plain scripts and under --compile-only ----
  { name = "--config-timeout: a plain script that never ends", code = 5,
    args = "--config-timeout 1s",
    script = "while true do end",
      stderr = "script%.lua ran past %-%-config%-timeout %(1 s%) and was stopped" },
  { name = "--config-timeout: a plain script in a long wl.sleep", code = 5,
    args = "--config-timeout 0.5s",
    script = "require('wlrun').sleep(60)", stderr = "ran past %-%-config%-timeout %(0%.5 s%)" },
  { name = "--config-timeout: a plain script that swallows the stop", code = 5,
    args = "--config-timeout 0.5s",
    script = "while true do pcall(function() while true do end end) end",
    stderr
      =
      "ran past %-%-config%-timeout %(0%.5 s%) and was stopped; still running a second later, "
      .. "exiting at once" },
  { name = "config_timeout from wlrun.ini: a plain script that never ends", code = 5,
    ini = "[run]\nconfig_timeout = 1s\n",
    script = "while true do end", stderr = "ran past %-%-config%-timeout %(1 s%)" },
  { name = "--config-timeout: a scenario script whose top level never ends", code = 5,
    args = CO .. " --config-timeout 1s",
    script = "while true do end\n" .. sweep("run = function() end"),
      stderr = "ran past %-%-config%-timeout" },
  { name = "--config-timeout: a where that never ends (the plan)", code = 5,
    args = CO .. " --config-timeout 1s -o r.json", prefix = "timeout 20",
    script = sweep("where = function(p) while true do end end, run = function() end"),
    stderr = "^wlrun: [^ ]*script%.lua ran past %-%-config%-timeout %(1 s%) and was stopped at "
      .. "[^ ]*script%.lua:3",
    check = function(_, dir) assert.is_nil(io.open(dir .. "/r.json")) end },
  { name = "--config-timeout: a --filter that never ends", code = 5, prefix = "timeout 20",
    args = "--dry-run --config-timeout 1s --filter '(function() while true do end end)()'",
    script = sweep("run = function() end"),
    stderr = "^wlrun: %-%-filter '%(function%(%) while true do end end%)%(%)' ran past "
      .. "%-%-config%-timeout %(1 s%) and was stopped\n" },
  { name = "--config-timeout: a --filter that never ends after a where, from wlrun.ini", code = 5,
    prefix = "timeout 20", ini = "[run]\nconfig_timeout = 1s\n",
    args = "--dry-run --filter 'n < 2 or string.rep(\"x\", 100):find(\"y\") or "
      .. "(function() while true do end end)()'",
    script = sweep("where = function(p) return true end, run = function() end"),
    stderr = "^wlrun: %-%-filter 'n < 2 or .-' ran past %-%-config%-timeout %(1 s%) and was "
      .. "stopped",
    check = function(r) assert.not_matches("script%.lua", r.stderr) end },
  { name = "--config-timeout under --compile-only: a setup that never ends", code = 5,
    args = CO .. " --config-timeout 1s -o r.json",
    script = sweep(
      "setup = function(p) if p.n == 2 then while true do end end return {} end, run = "
      .. "function() end"),
    stderr = "configuration 2 %(n=2%) failed: ran past %-%-config%-timeout %(1 s%) and was stopped",
    check = second_failed("timeout") },
  { name = "--isolate under --compile-only runs each configuration in a child process", code = 0,
    args = CO .. " --isolate -o r.json", script = sweep("run = function() end"),
    stdout = "and those of 4 configurations in child processes",
    check = doc_is(true, { "compiled", "compiled", "compiled", "compiled" }, function(doc)
      for _, c in ipairs(doc.configurations) do assert.is_true(c.isolated) end
    end) },

  ---- a teardown error is not swallowed ----
  { name = "a teardown that raises fails its configuration", code = 1, args = CO .. " -o r.json",
    script = sweep(
      "run = function() end, teardown = function(p) if p.n == 2 then error('cleanup "
      .. "broke') end end"),
    stderr = "configuration 2 %(n=2%) failed: teardown: .*script%.lua:%d+: cleanup broke",
    check = second_failed("script") },
  { name = "a teardown error after a run error: both named, the first the configuration's",
    code = 1,
    args = CO .. " -o r.json",
    script = sweep(
      "run = function() error('run broke') end, teardown = function() error('cleanup broke') end"),
    stderr = "failed: .*script%.lua:%d+: run broke",
    check = doc_is(true, { "failed", "failed", "failed", "failed" }, function(doc)
      assert.matches(
        "^[^\n]*script%.lua:%d+: run broke.*%(and teardown: [^\n]*script%.lua:%d+: cleanup "
        .. "broke%)$",
        doc.configurations[1].error)
    end) },
  { name = "a teardown error of a skipped configuration", code = 1, args = CO .. " -o r.json",
    script = sweep("run = function(p) if p.n == 1 then wl.skip('not this one') end end, "
      .. "teardown = function() error('cleanup broke') end"),
    stderr = "configuration 1 %(n=1%) failed: teardown: ",
    check = doc_is(true, { "failed", "failed", "failed", "failed" }) },
  { name = "a teardown error keeps the measurement already in the entry", code = 1, gpu = true,
    args = "--iters 5 --warmup 2 -o r.json",
    script = [[local wl = require "wlrun"
local k = wl.kernel { 'extern "C" __global__ void nop(float* p) { }', name = "nop" }
return wl.scenario { name = "td", params = { n = { 1, 2 } },
  setup = function() local x = wl.tensor { 16 } return { x = x, l = k:bind { grid = 1, block = 1, args = { x } } } end,
  run = "l", teardown = function(p) if p.n == 1 then error('cleanup broke') end end }
]], stderr = "configuration 1 %(n=1%) failed: teardown: .*script%.lua:%d+: cleanup broke",
    check = doc_is(true, { "failed", "ok" }, function(doc)
      local c = doc.configurations[1]
      assert.equal(5, #c.samples)
      assert.is_number(c.stats.median)
    end) },

  ---- os.exit during a sweep never reports success ----
  { name = "os.exit(0) in the middle of a sweep", code = 1, args = CO .. " -o r.json",
    script = sweep(
      "setup = function(p) if p.n == 3 then os.exit(0) end return {} end, run = function() end"),
    stderr
      =
      "script%.lua:%d+: os%.exit%(0%) during configuration 3 %(n=3%): the run stops here; 2 "
      .. "finished configurations are in r%.json",
    check = doc_is(false, { "compiled", "compiled", "failed" }) },
  { name = "os.exit(true) in a run function", code = 1, args = CO .. " -o r.json",
    script = sweep("run = function() os.exit(true) end"),
    stderr = "os%.exit%(true%) during configuration 1 %(n=1%): the run stops here",
    check = doc_is(false, { "failed" }) },
  { name = "os.exit with a code that is no integer: the script's line, as Lua's own says it",
    code = 1, script = "local x = 1\nos.exit(\"x\")\n",
    stderr = "script%.lua:2: bad argument #1 to 'exit' %(number expected, got string%)" },
  { name = "os.exit(1.5): the script's line", code = 1, script = "os.exit(1.5)\n",
    stderr = "script%.lua:1: bad argument #1 to 'exit' %(number has no integer "
      .. "representation%)" },
  { name = "os.exit with a code of its own keeps it", code = 7, args = CO .. " -o r.json",
    script = sweep(
      "setup = function(p) if p.n == 2 then os.exit(7) end return {} end, run = function() end"),
    stderr = "os%.exit%(7%) during configuration 2",
      check = doc_is(false, { "compiled", "failed" }) },
  { name = "os.exit kept in a local before the run", code = 1, args = CO .. " -o r.json",
    script = "local exit = os.exit\n"
      .. sweep(
      "setup = function(p) if p.n == 2 then exit() end return {} end, run = function() end"),
    stderr = "os%.exit%(%) during configuration 2",
      check = doc_is(false, { "compiled", "failed" }) },
  { name = "os.exit in a teardown", code = 1, args = CO .. " -o r.json",
    script = sweep(
      "run = function() end, teardown = function(p) if p.n == 2 then os.exit(0) end end"),
    stderr = "os%.exit%(0%) during configuration 2 %(n=2%): the run stops here",
    check = doc_is(false, { "compiled", "failed" }) },
  { name = "os.exit(0) in a child process fails its configuration", code = 1,
    args = CO .. " --isolate -o r.json",
    script = sweep(
      "setup = function(p) if p.n == 3 then os.exit(0) end return {} end, run = function() end"),
    stderr
      =
      "configuration 3 %(n=3%) failed: .*os%.exit%(0%) during configuration 3 %(n=3%): the "
      .. "configuration fails",
    check = doc_is(true, { "compiled", "compiled", "failed", "compiled" }) },

  ---- a plain table returned instead of wl.scenario{} ----
  { name = "a plain table returned instead of wl.scenario{}", code = 1,
    script = "return { name = 'x', params = { n = { 1, 2 } }, run = function() end }",
    stderr
      =
      "script%.lua returned a plain table with a scenario's field 'run': wrap it in "
      .. "wl%.scenario{%.%.%.}" },
  { name = "a plain table with a setup but no run", code = 1,
    script = "return { setup = function() return {} end }", stderr = "a scenario's field 'setup'" },
  { name = "a plain script may still return a list", code = 0,
    script = "print('ran')\nreturn { 1, 2, 3 }",
    stdout = "^ran\n$" },

  ---- every field of k:bind{} named in its errors ----
  { name = "bind: smem of the wrong type", code = 1, args = CO, script = bind("smem = 'lots'"),
    stderr
      =
      "script%.lua:5: bind: smem must be a whole number of bytes from 0 to 1073741824, "
      .. "got 'lots'" },
  { name = "bind: a fractional smem", code = 1, args = CO, script = bind("smem = 1.5"),
    stderr = "bind: smem must be a whole number of bytes .*, got 1%.5" },
  { name = "bind: a table for smem", code = 1, args = CO, script = bind("smem = {}"),
    stderr = "bind: smem must be a whole number of bytes .*, got table" },
  { name = "bind: a tensor for the stream", code = 1, args = CO, script = bind("stream = x"),
    stderr = "bind: stream must be a wl%.stream, got tensor f32%[16%]" },
  { name = "bind: args that are not a list", code = 1, args = CO, script = bind("args = 3"),
    stderr = "bind: args must be a list, got number" },
  { name = "bind: a string for the grid", code = 1, args = CO,
    script = LAUNCH .. "k:bind { grid = 'x', block = 1, args = { x } }",
    stderr = "bind: grid must be a number or a list of 1 to 3 numbers, got 'x'" },
  { name = "bind: a table in the block's list", code = 1, args = CO,
    script = LAUNCH .. "k:bind { grid = 1, block = { 1, {} }, args = { x } }",
    stderr = "bind: block%.y must be a whole number from 1 to 1024, got table" },
  { name = "bind: no table at all", code = 1, args = CO, script = LAUNCH .. "k:bind(16)",
    stderr = "bind: expected a table {grid =, block =, smem =, stream =, args =}, got number" },

  ---- on a GPU: the long loops of real launches (Ctrl-C once the CUDA context is up) ----
  { name = "Ctrl-C during launch:launch(2e7) on a GPU", code = 130, gpu = true, prefix = ctrl_c(5),
    script = LAUNCH .. "l:launch(2e7)\nprint('all launched')",
    stderr = "interrupted %(Ctrl%-C%) at .*script%.lua:5\n$",
    check = function(r) assert.not_matches("all launched", r.stdout) end },
  { name = "Ctrl-C during wl.bench's batch loop on a GPU", code = 130, gpu = true,
    prefix = ctrl_c(5),
    script = LAUNCH
      .. "wl.bench(l, { mode = 'batch', batch = 1000000, iters = 1000, warmup = 1 "
      .. "})\nprint('measured')",
    stderr = "interrupted %(Ctrl%-C%)", check = function(r) assert.not_matches("measured",
      r.stdout) end },
  { name = "Ctrl-C during graph mode's warm-up replays on a GPU", code = 130, gpu = true,
    prefix = ctrl_c(5),
    script = LAUNCH
      .. "wl.bench(l, { mode = 'graph', batch = 100, graph_warmup = 1000000, iters = 10, warmup "
      .. "= 1 })\nprint('measured')",
    stderr = "interrupted %(Ctrl%-C%)", check = function(r) assert.not_matches("measured",
      r.stdout) end },
  { name = "Ctrl-C during a measurement on a GPU keeps the configurations measured before",
    code = 130, gpu = true,
    prefix = ctrl_c(8), args = "-o r.json",
    script = LAUNCH .. [[return wl.scenario { name = "long", params = { n = { 1, 2 } },
  timing = { mode = "host", iters = 1, warmup = 0 },
  run = function(p) l:launch(p.n == 1 and 1 or 2e7) end }
]],
      stderr
      =
      "interrupted %(Ctrl%-C%) during configuration 2 of 2; 1 finished configurations are "
      .. "in r%.json",
    check = doc_is(false, { "ok", "failed" }, function(doc)
      assert.equal("interrupted", doc.configurations[2].kind)
    end) },
  ---- os.exit before the first configuration: never a success; where cannot change the sweep ----
  { name = "os.exit(0) in prepare", code = 1, args = CO .. " -o r.json",
    script = sweep(
      "prepare = function() os.exit(0) end, setup = function() return {} end, run = "
      .. "function() end"),
    stderr
      =
      "script%.lua:3: os%.exit%(0%) during scenario 'lost', before its first configuration: the "
      .. "run stops; nothing was measured",
    check = function(_, dir) assert.is_nil(io.open(dir .. "/r.json")) end },
  { name = "os.exit(3) in where", code = 3, args = CO,
    script = sweep("where = function() os.exit(3) end, run = function() end"),
    stderr = "os%.exit%(3%) during scenario 'lost', before its first configuration" },
  { name = "where changes the parameters it is given: no configuration changes", code = 0,
    args = CO .. " -o r.json",
    script = sweep(
      "where = function(p) p.n = 7 return true end, setup = function() return {} end, run = "
      .. "function() end"),
    check = doc_is(true, { "compiled", "compiled", "compiled", "compiled" }, function(doc)
      for i, c in ipairs(doc.configurations) do assert.equal(i, c.params.n) end
    end) },
  ---- Ctrl-C while NVRTC compiles: NVRTC's own handler would end the process with exit 4 ----
  { name = "Ctrl-C during a kernel's compile keeps the finished configurations", code = 130,
    prefix = ctrl_c_at("compiling"), args = CO .. " --no-cache -o r.json",
    script = sweep([[setup = function(p)
    if p.n == 2 then io.open("compiling", "w"):close() end
    -- about 2 s of NVRTC's time (templates instantiated 2^17 times)
    wl.kernel { "template <int N> struct F { __device__ static float f(float x) { return F<N - 1>::f(x * 1.0001f + N) + F<N - 2>::f(x) * 0.5f; } };\n"
      .. "template <> struct F<0> { __device__ static float f(float x) { return x; } };\n"
      .. "template <> struct F<1> { __device__ static float f(float x) { return x + 1.0f; } };\n"
      .. "extern \"C\" __global__ void k(float *p) { p[threadIdx.x] = F<" .. (p.n == 2 and 17 or 2) .. ">::f(p[threadIdx.x]); }", name = "k" }
    return {}
  end, run = function() end]]),
    stderr
      =
      "interrupted %(Ctrl%-C%) during configuration 2 of 4; 1 finished configurations are "
      .. "in r%.json",
    check = doc_is(false, { "compiled", "failed" }, function(doc)
      assert.equal("interrupted", doc.configurations[2].kind)
    end) },

}
for _, c in ipairs(signal_cases()) do cases[#cases + 1] = c end
return cases
