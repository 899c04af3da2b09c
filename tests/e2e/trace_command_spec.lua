-- wl.command (docs/trace.md, "For scenarios"): a scenario whose configurations each run a
-- program under the trace library, its parameters swept; each entry is that run's report.
-- Runs tests/trace/nvtx_program.c (WLRUN_TRACE_PROGRAM) with the real library
-- (WLRUN_TRACE_LIB); pending by name where ctest does not set them.
local h = require "helper"

local lib, program = os.getenv("WLRUN_TRACE_LIB"), os.getenv("WLRUN_TRACE_PROGRAM")
local function real(name, fn)
  if lib and program then return it(name, fn) end
  pending(name .. " -- skipped: WLRUN_TRACE_LIB and WLRUN_TRACE_PROGRAM not set (ctest sets them)")
end

local function env() return ("WLRUN_TRACE_LIB=%s WLRUN_TRACE_PROGRAM=%s"):format(h.quote(lib),
  h.quote(program)) end

local SWEEP = [[
local wl = require "wlrun"
local prog = os.getenv("WLRUN_TRACE_PROGRAM")
return wl.command {
  name = "nvtx_steps",
  params = { mode = { "steps", "exit3", "sleep", "missing" } },
  command = function(p)
    if p.mode == "sleep" then return { "sleep", 30 } end
    if p.mode == "missing" then return { "no-such-program-wlrun", "x" } end
    return { prog, p.mode }
  end,
  warmup = 0, timeout = "5s", -- (each configuration's: a traced start on a loaded machine)
}
]]

local function decode(path) return require("wlrun.results").decode(h.read(path), path) end

describe("wl.command", function()
  real(
    "runs each configuration's program traced: the report, a failure's exit code, a timeout, a "
    .. "missing program", function()
    local dir = h.tmpdir()
    local r = h.run_script(SWEEP, "-o " .. h.quote(dir .. "/r.json"), { env = env() })
    assert.equal(1, r.code, r.stderr) -- some configurations failed
    assert.matches("%[0003%]: iter %d+%.%d+ ms", r.stdout)
    local doc = decode(dir .. "/r.json")
    local by = {}
    for _, c in ipairs(doc.configurations) do by[c.params.mode] = c end
    local ok = by.steps
    assert.equal("ok", ok.status)
    assert.equal("loop", ok.mode)
    assert.equal(3, #ok.samples)
    assert.equal(32, ok.loop.batch_size) -- the step range's payload
    assert.equal("cpu", ok.trace.timing)
    -- at least the 21 ms each step sleeps, and its phases inside it (no ceiling tied to the
    -- scheduler)
    local step, phases = 0, 0
    for _, t in ipairs(ok.samples) do
      assert.is_true(t > 0.020 and t < 1, tostring(t))
      step = step + t / #ok.samples
    end
    for _, ph in ipairs(ok.loop.phases) do phases = phases + (ph.top and ph.mean or 0) end
    assert.is_true(phases > 0.020 and phases <= step * (1 + 1e-9),
      ("phases %.9f in a step of %.9f"):format(phases, step))
    assert.equal("failed", by.exit3.status)
    assert.matches("exited with code 3", by.exit3.error)
    assert.equal("failed", by.sleep.status)
    assert.equal("timeout", by.sleep.kind)
    assert.matches("stopped after 5 s", by.sleep.error)
    assert.equal("failed", by.missing.status)
    assert.matches("cannot run 'no%-such%-program%-wlrun': not found in PATH", by.missing.error)
  end)

  real("--compile-only checks the programs and runs nothing", function()
    local r = h.run_script(SWEEP, "--compile-only -p mode=steps,missing --format json",
      { env = env() })
    local doc = require("wlrun.json").decode(r.stdout)
    assert.equal("compiled", doc.configurations[1].status)
    assert.equal("failed", doc.configurations[2].status)
  end)

  real("options that time wl.bench or count iterations are refused", function()
    local r = h.run_script(SWEEP, "--iters 5", { env = env() })
    assert.equal(2, r.code)
    assert.matches("%-%-iters does not apply to nvtx_steps: a traced program %(wl%.command%)",
      r.stderr)
    r = h.run_script(SWEEP, "--mode graph", { env = env() })
    assert.equal(2, r.code)
  end)

  real("records the kernels of the steps that WLRUN_TRACE_GPU_EVERY names, and refuses a bad one",
    function()
    local script = [[
local wl = require "wlrun"
local says = 'echo "every: $WLRUN_TRACE_GPU_EVERY" >&2; exec "$0" steps'
return wl.command { name = "every", warmup = 0,
  command = function() return { "sh", "-c", says, os.getenv("WLRUN_TRACE_PROGRAM") } end }
]]
    for _, c in ipairs { { "", "auto" }, { "WLRUN_TRACE_GPU_EVERY=1", "1" } } do
      local r = h.run_script(script, "", { env = env() .. " " .. c[1] })
      assert.equal(0, r.code, r.stderr)
      assert.truthy((r.stdout .. r.stderr):find("every: " .. c[2] .. "\n", 1, true), r.stderr)
    end
    local r = h.run_script(script, "", { env = env() .. " WLRUN_TRACE_GPU_EVERY=often" })
    assert.is_not.equal(0, r.code)
    assert.truthy((r.stdout .. r.stderr):find("WLRUN_TRACE_GPU_EVERY (auto, or N): expected a "
      .. "whole number >= 1, got 'often'", 1, true), r.stdout .. r.stderr)
  end)

  it("refuses a bad declaration (with the script's line) or a bad command(p)", function()
    local cases = {
      { "wl.command { name = 'x' }", "'command' must be a function" },
      { "wl.command { name = 'x', command = { 'true' }, env = { WLRUN_TRACE_DIR = '/tmp' } }",
        "WLRUN_TRACE_DIR is wlrun's own" },
      { "wl.command { name = 'x', command = { 'true' }, timeout = -1 }",
        "timeout: expected seconds > 0" },
      { "wl.command { name = 'x', command = { 'true' }, warmup = 1.5 }",
        "warmup must be a whole number" },
      { "wl.command { name = 'x', command = { 'true' }, stepp = 'a' }", "stepp" },
      { "wl.command { name = 'x', command = function() return {} end }", "must return a list" },
    }
    for _, c in ipairs(cases) do
      local r = h.run_script("local wl = require 'wlrun'\nreturn " .. c[1] .. "\n",
        "--compile-only",
        { env = "WLRUN_TRACE_LIB=" .. h.quote(lib or "/nonexistent") })
      assert.is_not.equal(0, r.code, c[1])
      assert.is_truthy((r.stderr .. r.stdout):find(c[2], 1, true),
        c[1] .. ": " .. r.stderr .. r.stdout)
    end
  end)
end)
