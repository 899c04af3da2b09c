-- End-to-end: `wlrun trace -- CMD` (docs/trace.md) on real programs. Most programs here are
-- shell scripts that write .wltrace files themselves into $WLRUN_TRACE_DIR (fixtures of
-- tests/fixtures/trace/), which runs the reader, the report, the printers and the exit codes
-- for real without the trace library; WLRUN_TRACE_LIB names a stand-in shared library that
-- they never load. The bad inputs: CMD missing, not found, not executable, failing, killed;
-- no step range; a hostile trace file; Ctrl-C and SIGTERM; --timeout. The last cases run
-- tests/trace/nvtx_program.c (WLRUN_TRACE_PROGRAM) under the real trace library
-- (WLRUN_TRACE_LIB, as ctest sets them): the CPU-only path of a C program with NVTX3 ranges.
local h = require "helper"
local json = require "wlrun.json"

local F = h.source_dir .. "/tests/fixtures/trace/"
local q = h.quote

local bin = h.bin:sub(1, 1) == "/" and h.bin or (h.source_dir .. "/" .. h.bin)
-- any ELF shared library passes wlrun's check of WLRUN_TRACE_LIB; the scripts load none
local STAND_IN = os.getenv("WLRUN_NVTX_RECORDER") or bin

-- a shell script in a fresh directory: copies the FIXTURE files into the trace directory as
-- its own, prints a line, then runs `tail` (its exit, or a signal)
local function program(tail)
  local dir = h.tmpdir()
  local path = h.write(dir .. "/prog.sh", ([[#!/bin/sh
for f in $FIXTURE; do cp "$f" "$WLRUN_TRACE_DIR/$(basename "$f")"; done
echo "program: stdout"
echo "program: stderr" >&2
%s
]]):format(tail or "exit 0"))
  assert(os.execute("chmod +x " .. q(path)))
  return path, dir
end

local function trace(args, fixture, opts)
  opts = opts or {}
  local env = ("WLRUN_TRACE_LIB=%s FIXTURE=%s %s"):format(q(opts.lib or STAND_IN), q(fixture or ""),
    opts.env or "")
  return h.run("trace " .. args, { env = env, cwd = opts.cwd })
end

local function json_of(text)
  local doc, err = json.decode(text)
  assert(doc, err)
  return doc
end

local BASIC = F .. "basic/100.wltrace"

describe("wlrun trace", function()
  it("runs the program, prints the iterations and the loop's summary with GPU time per phase",
    function()
    local prog, dir = program()
    local r = trace("--warmup 1 --kernels -o " .. q(dir .. "/r.json") .. " -- " .. q(prog), BASIC)
    assert.equal(0, r.code, r.stderr)
    assert.matches("^program: stdout\n", r.stdout) -- the program's output passes through
    assert.matches("program: stderr", r.stderr)
    assert.matches("\n%[0001%]: iter 10%.00 ms, data 2%.00 ms, fps 6400%.0\n%[0002%]", r.stdout)
    -- a step every 20 ms
    assert.matches("#1 prog%.sh: 3 iterations of 64 samples: 3200%.0 samples/s", r.stdout)
    assert.matches("  phases %(GPU time per iteration%):\n    forward +2%.5 ms   25%.0%%\n",
      r.stdout)
    assert.matches(
      "#1 trace of process 100 %(python3 train%.py %-%-steps 4%): 4 'train_step' steps, 3 "
      .. "measured; GPU times from CUPTI", r.stdout)
    assert.matches("GPU per step: busy 7 ms %(70%.0%% of the step%): top phases 7 ms", r.stdout)
    assert.matches("\n    forward    gemm_kernel    1%.0      2 ms\n", r.stdout)
    local doc = require("wlrun.results.load").load(dir .. "/r.json") -- the strict loader
    assert.equal("loop", doc.configurations[1].mode)
    assert.equal("gpu", doc.configurations[1].trace.timing)
    assert.equal(prog, doc.trace.program)
    assert.same({ how = "exit", code = 0 }, doc.trace.exit)
    assert.is_true(doc.complete)
    assert.equal(1, doc.settings.run.warmup)
    -- the document works with the other tools
    local c = h.run("compare " .. q(dir .. "/r.json") .. " " .. q(dir .. "/r.json"))
    assert.equal(0, c.code, c.stderr)
    local x = h.run("export " .. q(dir .. "/r.json"))
    assert.equal(0, x.code, x.stderr)
  end)

  it("records a sample of the steps' kernels by default: --gpu-every, else the environment's",
    function()
    local path = program('echo "every: $WLRUN_TRACE_GPU_EVERY"')
    for _, c in ipairs { { "", "", "auto" }, { "--gpu-every 1", "", "1" },
      { "", "WLRUN_TRACE_GPU_EVERY=7", "7" }, { "", "WLRUN_TRACE_GPU_EVERY=", "auto" },
      { "--gpu-every auto", "WLRUN_TRACE_GPU_EVERY=1", "auto" } } do
      local r = trace(c[1] .. " --warmup 0 -- " .. q(path), BASIC, { env = c[2] })
      assert.equal(0, r.code, r.stderr)
      assert.truthy(r.stdout:find("every: " .. c[3] .. "\n", 1, true), c[1] .. c[2] .. r.stdout)
    end
  end)

  it("keeps standard output for the report alone with --format json", function()
    local prog = program()
    local r = trace("--warmup 1 --format json -q -- " .. q(prog), BASIC)
    assert.equal(0, r.code, r.stderr)
    local doc = json_of(r.stdout)
    assert.equal("wlrun-results", doc.schema)
    assert.matches("program: stdout", r.stderr)
    assert.not_matches("%[0001%]", r.stderr) -- --quiet
  end)

  it("takes CMD after the options without --, and finds it in PATH", function()
    local r = trace("--warmup 1 --batch-size 10 sh -c "
      .. q('cp "$FIXTURE" "$WLRUN_TRACE_DIR/1.wltrace"'), BASIC)
    assert.equal(0, r.code, r.stderr)
    assert.matches("fps 1000%.0", r.stdout)
    assert.matches("#1 sh: 3 iterations of 10 samples", r.stdout)
  end)

  it(
    "gives the program the trace library and the directory, and the step to synchronise with "
    .. "--sync-steps", function()
    local lib = STAND_IN
    local prog = program(
      [[echo "env: ]]
      .. [[$NVTX_INJECTION64_PATH|$CUDA_INJECTION64_PATH|$WLRUN_TRACE_SYNC|$WLRUN_TRACE_DIR"]])
    local r = trace("--warmup 1 --sync-steps --step train_step -- " .. q(prog), BASIC)
    assert.equal(0, r.code, r.stderr)
    local nvtx, cuda, sync, dir = r.stdout:match("env: ([^|]*)|([^|]*)|([^|]*)|([^\n]*)")
    assert.equal(lib, nvtx)
    assert.equal(lib, cuda)
    assert.equal("train_step", sync)
    assert.matches("/wlrun%-trace%-", dir)
    assert.is_nil(io.open(dir .. "/100.wltrace")) -- the temporary directory is gone
    local plain = trace("--warmup 1 -- " .. q(prog), BASIC)
    assert.matches("env: [^|]*|[^|]*||", plain.stdout) -- no WLRUN_TRACE_SYNC without --sync-steps
  end)

  it("keeps the raw files with --trace-dir, and refuses a directory that holds some", function()
    local prog, dir = program()
    local r = trace("--warmup 1 --trace-dir " .. q(dir .. "/raw") .. " -- " .. q(prog), BASIC)
    assert.equal(0, r.code, r.stderr)
    assert.truthy(io.open(dir .. "/raw/100.wltrace"))
    r = trace("--trace-dir " .. q(dir .. "/raw") .. " -- " .. q(prog), BASIC)
    assert.equal(2, r.code)
    assert.matches("already holds trace files %(100%.wltrace%)", r.stderr)
    -- a relative directory is given to the program as an absolute one: it may change its own
    r = trace("--warmup 1 --trace-dir raw2 -- sh -c "
      .. q('cd / && cp "$FIXTURE" "$WLRUN_TRACE_DIR/5.wltrace"'), BASIC,
      { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    assert.truthy(io.open(dir .. "/raw2/5.wltrace"))
  end)

  it("reports CPU times only, and says why, when CUPTI was off", function()
    local prog = program()
    local r = trace("--warmup 1 -- " .. q(prog), F .. "cpu_only/200.wltrace")
    assert.equal(0, r.code, r.stderr)
    assert.matches("phases %(CPU time per iteration%):", r.stdout)
    assert.matches(
      "#1 cpu%-only: CPU times only %(no GPU / CUPTI: libcupti%.so%.13: cannot open shared "
      .. "object file%)", r.stdout)
    assert.matches("#1 data%-bottleneck: data loading takes 50%%", r.stdout)
    assert.matches("#1 open%-ranges: ranges still open when process 200 ended: 'train_step' %(1%)",
      r.stdout)
    assert.matches("wlrun: trace: #1: no 'data' ranges: the data time is the whole gap", r.stderr)
  end)

  it("makes one configuration per process with steps", function()
    local prog = program()
    local r = trace("--warmup 1 --format json -- " .. q(prog),
      F .. "ranks/300.wltrace " .. F .. "ranks/301.wltrace "
      .. F .. "ranks/302.wltrace")
    assert.equal(0, r.code, r.stderr)
    local doc = json_of(r.stdout)
    assert.equal(2, #doc.configurations)
    assert.same({ process = 2 }, doc.configurations[2].params)
    assert.same({ "process" }, doc.scenario.axes)
    assert.equal(3, doc.trace.processes)
    assert.matches("process 1 %(pid 300%):\n%[0001%]", r.stderr)
  end)

  describe("passes the program's failure on, with the report", function()
    it("its exit code", function()
      local prog, dir = program("exit 3")
      local r = trace("--warmup 1 -o " .. q(dir .. "/r.json") .. " -- " .. q(prog), BASIC)
      assert.equal(3, r.code)
      assert.matches("%[0003%]: iter", r.stdout)
      assert.matches("wlrun: trace: the program exited with code 3; the report is in .*/r%.json\n$",
        r.stderr)
      local doc = require("wlrun.results.load").load(dir .. "/r.json")
      assert.same({ how = "exit", code = 3 }, doc.trace.exit)
      assert.is_true(doc.complete)
    end)

    it("its death by a signal, as 128 + the signal", function()
      local prog = program("kill -KILL $$")
      local r = trace("--warmup 1 -- " .. q(prog), BASIC)
      assert.equal(137, r.code)
      assert.matches("wlrun: trace: the program was killed by signal 9; the report is above",
        r.stderr)
      assert.matches("#1 prog%.sh", r.stdout)
      assert.matches("%(incomplete", r.stdout)
    end)

    it("and a report that cannot be made as a warning", function()
      local prog = program("exit 4")
      local r = trace("-- " .. q(prog), "")
      assert.equal(4, r.code)
      assert.matches("wlrun: warning: trace: the program wrote no trace", r.stderr)
      assert.matches("wlrun: trace: the program exited with code 4; no report", r.stderr)
    end)
  end)

  describe("refuses", function()
    it("a command line without CMD, or with bad options (exit 2)", function()
      for _, c in ipairs {
        { "", "no command to trace: wlrun trace %[options%] %-%- CMD" },
        { "--warmup 2 --", "no command to trace" },
        { "--warmup", "option %-%-warmup needs a value" },
        { "--warmup x -- true", "%-%-warmup: expected a whole number >= 0, got 'x'" },
        { "--batch-size 0 -- true", "%-%-batch%-size: expected a whole number >= 1, got '0'" },
        { "--format xml -- true",
          "%-%-format: expected table, plain, csv, markdown, json, got 'xml'" },
        { "-o r.xyz -- true", "cannot tell the output format of 'r%.xyz'" },
        { "--timeout 0 -- true", "%-%-timeout: expected a duration above 0" },
        { "--timeout -1s -- true",
          "%-%-timeout: expected a duration above 0 and at most 604800s %(like 30s or 2m%), "
          .. "got '%-1s'" },
        { "--timeout soon -- true",
          "%-%-timeout: expected a duration above 0 and at most 604800s %(like 30s or 2m%), "
          .. "got 'soon'" },
        { "--bogus -- true", "unknown option '%-%-bogus'" },
        { "--step '' -- true", "%-%-step: a range name expected" },
        { "--gpu-every 0 -- true",
          "%-%-gpu%-every %(auto, or N%): expected a whole number >= 1, got '0'" },
        { "--gpu-every some -- true",
          "%-%-gpu%-every %(auto, or N%): expected a whole number >= 1, got 'some'" },
      } do
        local r = trace(c[1])
        assert.equal(2, r.code, c[1] .. ": " .. r.stderr)
        assert.matches("^wlrun: trace: " .. c[2], r.stderr, nil, false, c[1])
      end
      local r = trace("-- true", nil, { env = "WLRUN_TRACE_GPU_EVERY=1.5" })
      assert.equal(2, r.code, r.stderr)
      assert.matches("^wlrun: trace: WLRUN_TRACE_GPU_EVERY %(auto, or N%): expected a whole "
        .. "number >= 1, got '1%.5'", r.stderr)
    end)

    it("a CMD that is not found, not executable, or a directory (exit 2)", function()
      local r = trace("-- no-such-program-wlrun-trace")
      assert.equal(2, r.code)
      assert.matches(
        "^wlrun: trace: cannot run 'no%-such%-program%-wlrun%-trace': not found in PATH\n",
        r.stderr)
      local dir = h.tmpdir()
      h.write(dir .. "/plain.sh", "echo hi\n")
      r = trace("-- " .. q(dir .. "/plain.sh"))
      assert.equal(2, r.code)
      assert.matches(
        "cannot run '.*/plain%.sh': not an executable file %(missing, a directory, or without "
        .. "execute permission%)", r.stderr)
      r = trace("-- " .. q(dir))
      assert.equal(2, r.code)
      assert.matches("not an executable file", r.stderr)
    end)

    it("a missing or wrong trace library (exit 9)", function()
      local r = trace("-- true", nil, { lib = "/nonexistent/libwlrun_trace.so" })
      assert.equal(9, r.code)
      assert.matches(
        "WLRUN_TRACE_LIB='/nonexistent/libwlrun_trace%.so' is not a shared library that "
        .. "can be read", r.stderr)
      local dir = h.tmpdir()
      r = trace("-- true", nil, { lib = h.write(dir .. "/lib.so", "text") })
      assert.equal(9, r.code)
    end)

    it("a trace with no step range, listing the ranges seen (exit 2)", function()
      local prog = program()
      local r = trace("--step step -- " .. q(prog), BASIC)
      assert.equal(2, r.code)
      assert.matches(
        "wlrun: trace: no closed range named 'step' in the 1 process traced; the ranges seen "
        .. "%(20 in all%), by count: 'backward' %(4%)", r.stderr)
      assert.matches("name the step's range with %-%-step NAME", r.stderr)
      r = trace("-- " .. q(prog), "")
      assert.equal(2, r.code)
      assert.matches("the program wrote no trace", r.stderr)
    end)

    it("a hostile trace file, naming it, and keeps the files (exit 9)", function()
      local prog = program()
      local r = trace("-- " .. q(prog), F .. "hostile/666.wltrace")
      assert.equal(9, r.code)
      assert.matches("wlrun: warning: trace: the trace files are kept in [^\n]*/wlrun%-trace%-",
        r.stderr)
      assert.matches(
        "wlrun: trace: 666%.wltrace: range 1 is its own ancestor %(a cycle of parents%)", r.stderr)
      local kept = r.stderr:match("the trace files are kept in ([^\n]+)")
      assert.truthy(io.open(kept .. "/666.wltrace"))
      os.execute("rm -rf " .. q(kept))
    end)

    it("to print a trace's control bytes raw", function()
      local prog = program()
      local r = trace("-- " .. q(prog), F .. "escapes/7.wltrace")
      assert.equal(2, r.code)
      assert.truthy(r.stderr:find("'\\x1b[2J\\x1b[31mred' (1)", 1, true), r.stderr)
      assert.truthy(r.stderr:find("'step\\x0d\\x0awlrun: fake line' (1)", 1, true), r.stderr)
      assert.is_nil(r.stderr:find("\27", 1, true))
      assert.is_nil(r.stderr:find("\nwlrun: fake line", 1, true))
    end)
  end)

  describe("passes signals on", function()
    -- runs wlrun trace in the background, sends it sig once the program has set its traps
    local function signalled(sig, extra)
      local prog, dir = program([[
trap 'echo "program: got INT"; exit 130' INT
trap 'echo "program: got TERM"; exit 143' TERM
: > ready
i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
echo "program: not stopped"]])
      local driver = h.write(dir .. "/driver.sh", ([[
cd %s
WLRUN_TRACE_LIB=%s FIXTURE=%s %s trace --warmup 1 %s -o r.json -- %s >out 2>err &
W=$!
i=0; while [ ! -e ready ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
kill -%s $W
wait $W
echo $? > rc
]]):format(q(dir), q(STAND_IN), q(BASIC), q(bin), extra or "", q(prog), sig))
      assert(os.execute("sh " .. q(driver)))
      return { code = tonumber(h.read(dir .. "/rc")), stdout = h.read(dir .. "/out"),
        stderr = h.read(dir .. "/err"), dir = dir }
    end

    it("Ctrl-C: the program gets it, the partial report is written, exit 130", function()
      local r = signalled("INT")
      assert.equal(130, r.code, r.stderr)
      assert.matches("program: got INT", r.stdout)
      assert.not_matches("not stopped", r.stdout)
      assert.matches("#1 prog%.sh", r.stdout)
      assert.matches(
        "wlrun: trace: interrupted by Ctrl%-C %(SIGINT%), passed on to the program; the report "
        .. "is in r%.json", r.stderr)
      local doc = require("wlrun.results.load").load(r.dir .. "/r.json")
      assert.is_false(doc.complete)
      assert.equal(2, doc.trace.interrupted)
      assert.equal(3, #doc.configurations[1].samples)
    end)

    -- Ctrl-C typed at a terminal goes to its whole foreground process group, the program
    -- included: wlrun must not send it a second time (python3's pty module plays the terminal)
    local python = require("wlrun.process").find_program("python3")
    local at_terminal = python and it or function(name) pending(name
      .. " -- skipped: no python3 to play a terminal") end
    at_terminal("Ctrl-C at a terminal reaches the program once, and wlrun waits for it", function()
      local prog, dir = program([[
n=0
trap 'n=$((n+1)); echo "program: INT $n"' INT
: > ready
i=0; while [ ! -e seen ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
echo "program: $n INT in all"]])
      local driver = h.write(dir .. "/terminal.py", ([[
import os, pty, select, sys, time
os.chdir(%q)
pid, fd = pty.fork()
if pid == 0:
    os.environ.update(WLRUN_TRACE_LIB=%q, FIXTURE=%q)
    os.execv(%q, ["wlrun", "trace", "--warmup", "1", "-q", "--", %q])
for _ in range(600):
    if os.path.exists("ready"): break
    time.sleep(0.05)
os.write(fd, b"")
# the program counts Ctrl-Cs until it has shown the first and then had half a second more (for
# a second one, from wlrun, to arrive); its trap handler has the time it needs, whatever the load
out = b""
seen_at = None
while True:
    if seen_at is None and b"program: INT 1" in out:
        seen_at = time.monotonic()
    if seen_at is not None and time.monotonic() - seen_at > 0.5 and not os.path.exists("seen"):
        open("seen", "w").close()
    if not select.select([fd], [], [], 0.1)[0]:
        continue
    try:
        d = os.read(fd, 4096)
    except OSError:
        break
    if not d: break
    out += d
_, status = os.waitpid(pid, 0)
open("out", "wb").write(out)
print(os.waitstatus_to_exitcode(status))
]]):format(dir, STAND_IN, BASIC, bin, prog))
      local f = assert(io.popen(q(python) .. " " .. q(driver)))
      local code = tonumber(f:read("a"))
      f:close()
      local out = h.read(dir .. "/out")
      assert.equal(130, code, out)
      assert.matches("program: 1 INT in all", out)
      assert.matches(
        "interrupted by Ctrl%-C %(SIGINT%), passed on to the program; the report is above", out)
    end)

    it("SIGTERM: exit 143", function()
      local r = signalled("TERM")
      assert.equal(143, r.code, r.stderr)
      assert.matches("program: got TERM", r.stdout)
      assert.matches("interrupted by SIGTERM", r.stderr)
    end)

    it("--timeout stops the program (SIGTERM) and exits 5 with the report", function()
      local prog, dir = program([[trap 'exit 143' TERM
i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done]])
      -- the fixture must be in the trace directory when --timeout (timed from the program's
      -- start) stops the program: 3 s leave room for a slow cp on a busy machine
      local r = trace("--warmup 1 --timeout 3s -o " .. q(dir .. "/r.json") .. " -- " .. q(prog),
        BASIC)
      assert.equal(5, r.code, r.stderr)
      assert.matches("wlrun: trace: stopped by %-%-timeout after 3 s; the report is in", r.stderr)
      assert.is_false(require("wlrun.results.load").load(dir .. "/r.json").complete)
    end)
  end)

  describe("with the trace library, on a C program with NVTX3 ranges", function()
    local lib, nvtx = os.getenv("WLRUN_TRACE_LIB"), os.getenv("WLRUN_TRACE_PROGRAM")
    local real = h.trace_it
    local function run(args, mode) return trace(args .. " -- " .. q(nvtx) .. " " .. mode, nil,
      { lib = lib }) end

    real("shows a WLRUN_TRACE_GPU_SHARE that is no per cent as the library's error", function()
      for _, v in ipairs { "abc", "0", "150" } do
        local r = trace("--warmup 1 -- " .. q(nvtx) .. " steps", nil,
          { lib = lib, env = "WLRUN_TRACE_GPU_SHARE=" .. v })
        assert.equal(0, r.code, r.stderr)
        assert.matches("trace%-errors: in process %d+: WLRUN_TRACE_GPU_SHARE=" .. v
          .. " is not a per cent above 0 and at most 100: %-%-gpu%-every auto keeps 1 %%", r.stdout)
      end
      local r = trace("--warmup 1 -- " .. q(nvtx) .. " steps", nil,
        { lib = lib, env = "WLRUN_TRACE_GPU_SHARE=0.25" })
      assert.equal(0, r.code, r.stderr)
      assert.falsy(r.stdout:find("WLRUN_TRACE_GPU_SHARE", 1, true), r.stdout)
    end)

    real(
      "reports its steps: data 4 ms, forward 6, backward 12, optimizer 3, batch 32 from "
      .. "the payload", function()
      local r = run("--warmup 1 --format json", "steps")
      assert.equal(0, r.code, r.stderr)
      local doc = json_of(r.stdout)
      local c = doc.configurations[1]
      assert.equal(2, #c.samples)
      -- at least the time slept (a loaded machine only adds to it), and the phases inside their
      -- step: no ceilings tied to the scheduler beyond a second
      for j = 1, 2 do
        assert.is_true(c.samples[j] >= 0.021 and c.samples[j] < 1, tostring(c.samples[j]))
        assert.is_true(c.loop.data[j] >= 0.004 and c.loop.data[j] < 1, tostring(c.loop.data[j]))
      end
      assert.equal(32, c.loop.batch_size)
      local want = { forward = 0.006, backward = 0.012, optimizer = 0.003 }
      local phases = 0
      for _, ph in ipairs(c.loop.phases) do
        assert.is_true(ph.top)
        assert.is_true(ph.mean >= want[ph.name], ph.name .. " " .. ph.mean)
        phases = phases + ph.mean
      end
      local step = (c.samples[1] + c.samples[2]) / 2
      assert.is_true(phases <= step * (1 + 1e-9),
        ("phases %.9f in a step of %.9f"):format(phases, step))
      assert.equal(3, #c.loop.phases)
      assert.equal("cpu", c.trace.timing)
      assert.equal("trainer", c.trace.process.thread)
      assert.equal("none", c.trace.cupti.state)
      -- among its warnings (a loaded machine may stretch the 4 ms of data into a data-bottleneck
      -- warning beside it, first in the list)
      local codes = {}
      for _, w in ipairs(c.warnings) do codes[w.code] = true end
      assert.is_true(codes["cpu-only"], json.encode(c.warnings))
      assert.equal("ranges", c.trace.data_source)
    end)

    real("says there are fewer steps than the warmup (exit 2)", function()
      local r = run("", "steps")
      assert.equal(2, r.code)
      assert.matches(
        "wlrun: trace: process %d+ has 3 closed 'train_step' ranges, not more than %-%-warmup 5",
        r.stderr)
    end)

    real("traces the first --steps steps and no more: the ranges open then written as open",
      function()
      local dir = h.tmpdir()
      local r = run("--warmup 2 --steps 20 --format json --trace-dir " .. q(dir .. "/t"),
        "many 500")
      assert.equal(0, r.code, r.stderr)
      local c = json_of(r.stdout).configurations[1]
      assert.equal(20, c.trace.steps)
      assert.equal(18, #c.samples)
      assert.matches("the first 20 steps were traced %(%-%-steps 20%)",
        table.concat(c.notes, "\n"))
      -- the file: 20 steps closed, the epoch and run ranges open at the stop, the exit
      local text = assert(io.popen("cat " .. q(dir) .. "/t/*.wltrace")):read("a")
      local sid = text:match("\nS\t(%d+)\ttrain_step\n")
      local _, steps = text:gsub("\nR\t%d+\t%d+\t%d+\t" .. sid .. "\t", "")
      assert.equal(20, steps)
      local _, open = text:gsub("\nO\t", "")
      assert.equal(2, open) -- epoch (push/pop) and run (start/end)
      assert.matches("\nX\texit\n$", text)
      -- 0: every step
      r = run("--warmup 2 --steps 0 --format json", "many 500")
      assert.equal(0, r.code, r.stderr)
      assert.equal(500, json_of(r.stdout).configurations[1].trace.steps)
      -- the default: 1000
      r = run("--warmup 2 --format json", "many 1500")
      assert.equal(1000, json_of(r.stdout).configurations[1].trace.steps)
      r = run("--warmup 5 --steps 5", "many 10")
      assert.equal(2, r.code)
      assert.matches("%-%-steps 5 traces no step past %-%-warmup 5", r.stderr)
    end)

    real("passes exit(3) on, with the ranges left open named", function()
      local r = run("--warmup 0 --step before_exit", "exit3")
      assert.equal(3, r.code, r.stderr)
      assert.matches("open%-ranges: ranges still open when process %d+ ended: 'open_at_exit' %(1%)",
        r.stdout)
      assert.matches("wlrun: trace: the program exited with code 3; the report is above", r.stderr)
    end)

    real("passes a SIGKILL on as 137, with the report of what was written", function()
      local r = run("--warmup 0 --step before_kill", "kill")
      assert.equal(137, r.code, r.stderr)
      assert.matches(
        "process%-killed: process %d+ ended without a normal exit %(killed by a signal, or _exit%)",
        r.stdout)
    end)

    real("follows a forked child: its own process, its own steps", function()
      local r = run("--warmup 0 --step child --format json", "fork")
      assert.equal(0, r.code, r.stderr)
      local doc = json_of(r.stdout)
      assert.equal(2, doc.trace.processes)
      assert.equal(1, #doc.configurations)
      local c = doc.configurations[1]
      assert.is_true(c.samples[1] >= 0.005)
      assert.is_true(c.trace.process.ppid > 1)
    end)

    real("takes the steps of every thread", function()
      local r = run("--warmup 0 --step worker --format json", "threads")
      assert.equal(0, r.code, r.stderr)
      local c = json_of(r.stdout).configurations[1]
      assert.equal(800, #c.samples)
      assert.equal("inner", c.loop.phases[1].name)
    end)
  end)
end)
