-- `wlrun trace [options] -- CMD [ARGS...]` (docs/trace.md): runs a program with wlrun's trace
-- library injected (NVTX_INJECTION64_PATH, CUDA_INJECTION64_PATH), reads what each of its
-- processes wrote (wlrun.trace.read) and reports its step ranges as a training loop
-- (wlrun.trace.report): a results document of loop configurations, printed and written as
-- `wlrun run` does.
--
-- Exit codes: those of wlrun for its own errors (2: bad options, CMD not found or not
-- executable, no step range; 9: the trace library missing, a trace file malformed); otherwise
-- the program's: its exit code when it failed, 128 + N when signal N killed it; 130 (143) when
-- wlrun was sent SIGINT (SIGTERM), which the program got too; 5 when --timeout stopped it. The
-- report of what the program did is printed and written in every case it can be made.
local core = require "wlrun.core"
local process = require "wlrun.process"
local files = require "wlrun.text.files"
local stdio = require "wlrun.text.stdio"
local units = require "wlrun.text.units"
local peaks = require "wlrun.measure.peaks"
local loop = require "wlrun.measure.loop"
local printers = require "wlrun.report"
local sink_of = require "wlrun.report.sink"
local results = require "wlrun.results"
local provenance = require "wlrun.results.provenance"
local read = require "wlrun.trace.read"
local trace_report = require "wlrun.trace.report"
local notes = require "wlrun.trace.notes"
local ranks = require "wlrun.trace.ranks"
local traced = require "wlrun.trace.run"
local isolate = require "wlrun.run.isolate"
local columns = require "wlrun.report.columns"
local cli = require "wlrun.tools.cli"

local M = {}
local TOOL = "trace"

local function fail(kind, msg) cli.fail(kind, TOOL, msg) end

M.usage = [[
Usage: wlrun trace [options] -- CMD [ARGS...]

Runs CMD with wlrun's NVTX and CUPTI trace library and reports its training loop from its
NVTX ranges (docs/trace.md): the ranges named --step are the iterations, those named --data
the data loading, the ranges nested in a step its phases, with each phase's GPU time where
CUPTI works (CPU times otherwise). The report is a results document of loop configurations
(docs/loops.md), one per process with steps: -o, compare, plot, export and merge read it.

    --step NAME          the step's range (default train_step; without one, a PyTorch
                         program's steps are found by wlrun's hook: its optimizer steps)
    --data NAME          the data loading's range (default data); without any, the data
                         time is the gap between one step's end and the next one's start
    --batch-size N       samples per step (default: the step range's integer payload, else 1)
    --warmup N           steps left out at the start (default 5)
    --steps N            trace the first N steps of each process (default 1000; 0: every
                         step): nothing is recorded after them, so a long run's trace stays
                         small
    --gpu-every N        record the kernels of one step in N (default auto: one in as many
                         as keep the recording's cost of a launch-bound step near 1 %; 1:
                         every step); every step's iteration is still bounded by its GPU work
    --sync-steps         synchronise the device before the start and the end of each step
                         (not needed: an iteration ends with its GPU work anyway; this
                         changes the program, as the methodology's template does)
    --no-auto-ranges     no start-up hook in Python programs (the automatic ranges of
                         PyTorch's DataLoader, forward, backward and optimizer steps)
    --flops-per-sample F the model's FLOP per sample (forward and backward): achieved
                         FLOP/s and MFU against the device's dense peak
    --dtype D            the dtype of that peak: f32, tf32, bf16 (default), f16
    --kernels            the top kernels by GPU time of each phase
    --timeout T          stop CMD after T (2s, 500ms, 1m): SIGTERM, SIGKILL a second later
    --trace-dir DIR      keep the raw trace files in DIR (default: a temporary directory,
                         removed afterwards)
    --name NAME          the report's name (default: CMD's name and its script's)
    -o, --output FILE    write the results; the extension gives the format: .json .csv .md
                         .txt (may be repeated); - is standard output, in --format's
                         format (default json) and alone there
    --format FMT         standard output: table (default), plain, csv, markdown, json
    -q, --quiet          no per-iteration lines and no notes
    -h, --help           this text

Exit code: CMD's when it failed (128 + N when signal N killed it), 130 after Ctrl-C, 5 after
--timeout, else wlrun's (2: a bad command line or no step range; 9: the trace library or a
trace file); the report is written in every case it can be made.
]]

local spec = {
  ["--step"] = { value = true }, ["--data"] = { value = true }, ["--batch-size"] = { value = true },
  ["--warmup"] = { value = true }, ["--steps"] = { value = true }, ["--sync-steps"] = {},
  ["--gpu-every"] = { value = true },
    ["--kernels"] = {},
    ["--timeout"] = { value = true },
  ["--trace-dir"] = { value = true }, ["--name"] = { value = true }, ["--no-auto-ranges"] = {},
  ["--flops-per-sample"] = { value = true }, ["--dtype"] = { value = true },
  ["-o"] = { value = true, multi = true, key = "output" },
    ["--output"] = { value = true, multi = true, key = "output" },
  ["--format"] = { value = true }, ["-q"] = { key = "quiet" }, ["--quiet"] = {},
  ["-h"] = { key = "help" }, ["--help"] = {},
}

-- wlrun's options, then CMD: after "--", or from the first argument that is no option (nor an
-- option's value)
function M.split(args)
  local i, n = 1, #args
  while i <= n do
    local a = args[i]
    if a == "--" then return table.move(args, 1, i - 1, 1, {}),
      table.move(args, i + 1, n, 1, {}) end
    if a:sub(1, 1) ~= "-" or a == "-" then return table.move(args, 1, i - 1, 1, {}),
      table.move(args, i, n, 1, {}) end
    local s = spec[a]
    if s and s.value then i = i + 1 end -- its value, even one that starts with '-'
    i = i + 1
  end
  return args, {}
end

local whole = traced.whole

-- the options, checked
function M.options(args)
  local o, pos = cli.parse_args(TOOL, args, spec)
  if #pos > 0 then
    fail("usage", ("unexpected argument '%s' (CMD follows the options, after --)"):format(
    pos[1])) end
  local step, data = o.step or trace_report.DEFAULTS.step, o.data or trace_report.DEFAULTS.data
  for _, x in ipairs { { "--step", step }, { "--data", data } } do
    if x[2] == "" then fail("usage", x[1] .. ": a range name expected") end
  end
  local opts = {
    step = step, data = data, warmup = o.warmup and whole(o.warmup, "--warmup", 0)
      or trace_report.DEFAULTS.warmup,
    batch_size = o.batch_size and whole(o.batch_size, "--batch-size", 1) or nil,
    kernels = o.kernels or false, sync_steps = o.sync_steps or false, quiet = o.quiet or false,
    format = o.format or "table", trace_dir = o.trace_dir, name = o.name, help = o.help,
    warmup_given = o.warmup ~= nil,
    steps = o.steps and whole(o.steps, "--steps", 0) or trace_report.DEFAULTS.steps,
    gpu_every = traced.gpu_every(o.gpu_every),
    -- wlrun's Python hook: put into the program unless --no-auto-ranges; its steps taken when the
    -- program has none of its own, unless --step names the step's range
    auto_ranges = not o.no_auto_ranges, auto = not o.no_auto_ranges and o.step == nil,
  }
  if o.flops_per_sample then
    local f = tonumber(o.flops_per_sample)
    if not (f and f > 0 and f < math.huge) then
      fail("usage", ("--flops-per-sample: expected a number > 0 (like 1.2e9), got '%s'"):format(
        o.flops_per_sample))
    end
    opts.flops_per_sample = f
  end
  if o.dtype and not peaks.is_dtype(o.dtype) then
    fail("usage", ("--dtype: expected %s, got '%s'"):format(table.concat(peaks.DTYPES, ", "),
      o.dtype))
  end
  opts.dtype = o.dtype or loop.DEFAULT_DTYPE
  if opts.steps > 0 and opts.steps <= opts.warmup then
    fail("usage", ("--steps %d traces no step past --warmup %d: give more steps (or 0: every "
      .. "step)"):format(opts.steps, opts.warmup))
  end
  local known = {}
  for _, f in ipairs(printers.formats) do known[f] = true end
  if not known[opts.format] then
    fail("usage", ("--format: expected %s, got '%s'"):format(table.concat(printers.formats, ", "),
      opts.format))
  end
  if o.timeout then
    local t = core.setting_value("run", "config_timeout", o.timeout)
    if not t or t <= 0 then
      fail("usage",
        ("--timeout: expected a duration above 0 and at most 604800s (like 30s or 2m), "
        .. "got '%s'"):format(
        o.timeout))
    end
    opts.timeout = t
  end
  opts.outputs = {}
  -- -o -: the report on standard output, alone, in json unless --format
  for _, path in ipairs(o.output or {}) do
    local f = path == "-" and "-" or printers.format_for_path(path)
    if f == "-" then
      opts.format, opts.report_only = o.format or "json", true
    elseif not f then
      fail("usage",
      ("cannot tell the output format of '%s' from its extension (.json .csv .md .txt)"):format(
      path)) end
    if f ~= "-" then opts.outputs[#opts.outputs + 1] = { path = path, format = f } end
  end
  return opts
end

local function basename(path) return path:match("([^/]*)$") end

-- "python3 train.py": the program's name and, when its first argument is a file, that one's
-- a Python's own options before its script (-u, -W arg), and its module (-m MOD) or -c
local function python_name(name, cmd)
  local i = 2
  while cmd[i] and cmd[i]:sub(1, 1) == "-" and cmd[i] ~= "-" do
    if cmd[i] == "-m" and cmd[i + 1] then return name .. " -m " .. cmd[i + 1] end
    if cmd[i] == "-c" then return name .. " -c" end
    i = i + ((cmd[i] == "-W" or cmd[i] == "-X") and 2 or 1)
  end
  return nil, i
end

function M.default_name(cmd)
  local name = basename(cmd[1])
  local i = 2
  if name:match("^python") then
    local full
    full, i = python_name(name, cmd)
    if full then return full end
  end
  local a = cmd[i]
  if a and a:sub(1, 1) ~= "-" and a:find("%.%w+$") then name = name .. " " .. basename(a) end
  return name
end

local function prepare_dir(dir)
  local ok, err = process.make_dir(dir)
  if not ok then fail("io", ("--trace-dir: cannot create '%s': %s"):format(dir, tostring(err))) end
  local names, lerr = process.list_dir(dir)
  if not names then fail("io", ("--trace-dir: cannot read '%s': %s"):format(dir,
    tostring(lerr))) end
  for _, n in ipairs(names) do
    if n:sub(-8) == ".wltrace" then
      fail("usage",
        ("--trace-dir: '%s' already holds trace files (%s): give an empty or new directory"):format(
        dir, n))
    end
  end
end

-- the document of a traced run
function M.document(o, cmd, program, run, entries)
  local multi = #entries > 1
  local settings = { run = { warmup = o.warmup },
    trace = { step = o.step, data = o.data, batch_size = o.batch_size,
    sync_steps = o.sync_steps, kernels = o.kernels, auto_ranges = o.auto_ranges ~= false,
    steps = o.steps, gpu_every = o.gpu_every,
    flops_per_sample = o.flops_per_sample, dtype = o.flops_per_sample and o.dtype or nil } }
  local ok, nvrtc = pcall(core.nvrtc_version)
  local doc = {
    schema = results.SCHEMA, version = results.VERSION,
    wlrun = { version = core.version, lua = _VERSION, nvrtc = ok and nvrtc or nil },
    command_line = core.cli.argv, cwd = process.cwd(), started = run.started, complete = false,
    scenario = { name = o.name or M.default_name(cmd),
      description = "wlrun trace of: " .. table.concat(cmd, " "),
      file = program, hash = process.hash(table.concat(cmd, "\0")),
        axes = multi and { "process" } or {} },
    settings = settings, sources = o.warmup_given and { ["run.warmup"] = "cli" } or {},
    trace = run.info,
    -- no scenario file: the commit is that of the repository the program was started from
    provenance = provenance.collect { dir = process.cwd() },
    configurations = entries,
  }
  return results.finish(doc, run.complete)
end

-- the per-iteration lines of the measured steps (the methodology's form: wl.loop's)
local function iteration_lines(sink, entries)
  for _, e in ipairs(entries) do
    if e.status == "ok" then
      if #entries > 1 then
        sink:iteration(("process %d (pid %d):"):format(e.index, e.trace.process.pid))
      end
      for j, iter in ipairs(e.samples) do sink:iteration(
        loop.format_line(j, iter, e.loop.data[j], e.loop.batch_size)) end
    end
  end
end

-- below the report (table and plain): per process what it was, the step's GPU busy time and
-- where it went, and with --kernels the top kernels of each phase per iteration
function M.details(entries, kernels)
  local out = {}
  for _, e in ipairs(entries) do
    local t = e.trace
    if e.status == "ok" and t then
      local n = #e.samples
      local pr = t.process
      out[#out + 1] = ("#%d trace of process %d (%s): %d '%s' steps, %d measured; %s"):format(
        e.index, pr.pid,
        read.printable(pr.command or "?", 60), t.steps, t.step, n,
          t.timing == "gpu" and "GPU times from CUPTI"
        or ("CPU times only (no GPU / CUPTI: %s)"):format(notes.cpu_reason(t.cupti)))
      if t.timing == "gpu" and t.gpu_busy_mean then -- (none where no measured step was recorded)
        local phases = 0
        for _, ph in ipairs(t.phases) do
          if ph.top then phases = phases + ph.gpu_mean end
        end
        local iter = e.stats.mean
        out[#out + 1] = (
          "  GPU per step: busy %s (%.1f%% of the step): top phases %s, in no phase %s; "
          .. "launched outside the step %s%s"):format(
          units.time(t.gpu_busy_mean), 100 * t.gpu_busy_mean / iter, units.time(phases),
            units.time(t.gpu_outside_mean),
          units.time(t.gpu_unattributed_mean), t.data_gpu_mean
            and ("; data %s"):format(units.time(t.data_gpu_mean)) or "")
      end
      if kernels and t.timing == "gpu" and t.gpu_busy_mean then
        local rows = {}
        local groups = {}
        for _, ph in ipairs(t.phases or {}) do groups[#groups + 1] = { ph.name, ph.kernels } end
        if t.data_kernels then groups[#groups + 1] = { "(" .. t.data .. ")", t.data_kernels } end
        for _, g in ipairs(groups) do
          for _, k in ipairs(g[2] or {}) do
            rows[#rows + 1] = { read.printable(g[1], 24), read.printable(k.name, 72),
              ("%.1f"):format(k.count / n),
              units.time(k.time / n) }
          end
        end
        out[#out + 1] = ("  top kernels by GPU time per step:")
        if #rows == 0 then
          out[#out + 1] = "    (no GPU work was attributed to a phase)"
        else
          for _, line in ipairs(columns.align({ { title = "phase" }, { title = "kernel" },
            { title = "calls", right = true },
            { title = "GPU time", right = true } }, rows)) do
            out[#out + 1] = "    " .. line
          end
        end
      end
      out[#out + 1] = ""
    end
  end
  return table.concat(out, "\n")
end

-- how the program ended, in words, and the exit code wlrun passes on (nil: it succeeded)
function M.outcome(r)
  if r.interrupted then
    local name = r.interrupted == 2 and "Ctrl-C (SIGINT)" or core.stop_signal()
      or ("signal " .. r.interrupted)
    return ("interrupted by %s, passed on to the program"):format(name), 128 + r.interrupted,
      "interrupted"
  end
  if r.how == "timeout" then return "stopped by --timeout", nil, "timeout" end
  if r.how == "signal" then return ("the program was killed by signal %d"):format(r.signal),
    128 + r.signal, "signal" end
  if r.code == 127 then -- execvp failed after find_program found it (or the program's own 127)
    return "the program exited with code 127 (it could not be started, or a command it ran was "
      .. "not found)", 127, "exit"
  end
  if r.code ~= 0 then return ("the program exited with code %d"):format(r.code), r.code, "exit" end
  return nil
end

local function run_info(o, cmd, program, lib, r, dir, nprocs, entries)
  local exit = { how = r.how, code = r.code, signal = r.signal }
  return { command = cmd, program = program, library = lib, time = r.time, exit = exit,
    interrupted = r.interrupted, sync_steps = o.sync_steps, dir = o.trace_dir and dir or nil,
      processes = nprocs,
    ranks = ranks.summary(entries) }
end

-- the line over several processes with steps (DDP ranks), below the details
function M.ranks_line(g)
  if not g then return "" end
  return (
    "all %d processes: global batch %d, %.1f samples/s (the slowest, #%d, sets the pace: iter "
    .. "%s); per step, the slowest process's iteration less the fastest's: mean %s, max %s over "
    .. "%d steps\n"):format(
    g.processes, g.batch, g.samples_per_s, g.slowest, units.time(g.slowest_iter),
      units.time(g.spread_mean),
    units.time(g.spread_max), g.steps)
end

-- before CMD runs, as a scenario run checks its outputs
local function check_outputs(outputs)
  for _, out in ipairs(outputs) do
    local ok, err = files.check(out.path)
    if not ok then fail("io", ("cannot write results to '%s': %s"):format(out.path, err)) end
  end
end

-- where the trace files go: --trace-dir, checked, else a temporary directory of wlrun's own
local function trace_dir(o)
  if o.trace_dir then
    prepare_dir(o.trace_dir)
    return o.trace_dir
  end
  return isolate.temp_dir("wlrun-trace-", "wlrun " .. TOOL)
end

-- the report of the run's entries: printed (unless -q, after the iteration lines and the notes),
-- then written to each output (after the report, which a failed write must not cost); returns
-- the first output that could not be written
local function report(o, sink, cmd, program, lib, started, run)
  local r, entries = run.result, run.entries
  local info = run_info(o, cmd, program, lib, r, run.dir, #run.trace.processes, entries)
  local doc = M.document(o, cmd, program, { started = started, info = info,
    complete = r.how == "exit" and not r.interrupted }, entries)
  if not o.quiet then
    iteration_lines(sink, entries)
    for _, e in ipairs(entries) do
      for _, n in ipairs(e.notes or {}) do sink:message(("trace: #%d: %s"):format(e.index, n)) end
    end
  end
  local text = printers.render(doc, o.format)
  if o.format == "table" or o.format == "plain" then
    text = text .. (text:sub(-2) == "\n\n" and "" or "\n") .. M.details(entries, o.kernels)
      .. M.ranks_line(info.ranks)
  end
  sink:report(text)
  local unwritten
  for _, out in ipairs(o.outputs) do
    local ok, e = pcall(printers.write, doc, out.path, out.format)
    if not ok then unwritten = unwritten or tostring(type(e) == "table" and e.message or e) end
  end
  return unwritten
end

-- the raw files: kept where the user asked, where they could not be read, and where an
-- output could not be written (what was measured is in them); returns what to say of that output
local function raw_files(o, sink, dir, problem, unwritten)
  if unwritten then
    return ("%s; the report is above, the trace files are %s %s"):format(unwritten,
      o.trace_dir and "in" or "kept in", dir)
  elseif not o.trace_dir then
    if problem and type(problem) == "table" and problem.kind == "io" then
      sink:warning(process.file_type(dir, true) == "directory"
        and ("trace: the trace files are kept in %s"):format(dir)
        or ("trace: the trace directory %s is gone (removed while the program ran): no trace "
          .. "file is left"):format(dir))
    else
      local done, err = process.remove_tree(dir)
      if not done then sink:warning(("trace: cannot remove %s: %s"):format(dir, tostring(err))) end
    end
  end
  return unwritten
end

-- the end: where the program failed (how: outcome's words), its exit code and the message; else
-- wlrun's own error, if any (the trace's problem, an output not written, a failed process)
local function ending(o, sink, run, how, code, kind, unwritten)
  local problem, entries = run.problem, run.entries
  if how then
    if problem then sink:warning(tostring(type(problem) == "table" and problem.message
      or problem)) end
    if unwritten then sink:warning("trace: " .. unwritten) end
    local where = entries and (#o.outputs > 0 and not unwritten
      and ("the report is in " .. o.outputs[1].path)
      or "the report is above") or "no report"
    if kind == "timeout" then
      core.error("timeout", ("trace: %s after %s; %s"):format(how, units.time(o.timeout,
        "%.3g %s"), where), 0)
    end
    return code, ("trace: %s; %s"):format(how, where)
  end
  if problem then error(problem, 0) end
  if unwritten then fail("io", unwritten) end
  local failed = {}
  for _, e in ipairs(entries) do
    if e.status == "failed" then failed[#failed + 1] = e.error end
  end
  if #failed > 0 then fail("usage", failed[1] .. (#failed > 1
    and (" (and %d more processes)"):format(#failed - 1) or "")) end
end

-- runs CMD traced; returns the exit code and the message of the end (nil, nil: success)
local function trace(o, cmd)
  local program = traced.program(cmd[1])
  local lib = traced.library()
  check_outputs(o.outputs)
  local dir = trace_dir(o)
  -- a directory of wlrun's own goes however this ends (an error, a stop before the report),
  -- unless it is kept below for what it holds
  local settled = o.trace_dir ~= nil
  local _ <close> = setmetatable({}, { __close = function() if not settled then
    process.remove_tree(dir) end end })
  local sink <close> = sink_of.new { format = o.format, quiet = o.quiet, progress = false,
    report_only = o.report_only }
  local argv = { program }
  for i = 2, #cmd do argv[i] = cmd[i] end
  local started = process.utc_now()
  local run = traced.run(o, argv, lib, dir, { timeout = o.timeout or 0, forward_signals = true },
    function(text) sink:warning(text) end)
  dir = run.dir
  local how, code, kind = M.outcome(run.result)
  local unwritten -- the first output that could not be written
  if run.entries then unwritten = report(o, sink, cmd, program, lib, started, run) end
  unwritten = raw_files(o, sink, dir, run.problem, unwritten)
  settled = true
  return ending(o, sink, run, how, code, kind, unwritten)
end

function M.main(args)
  local before, cmd = M.split(args or {})
  local o = M.options(before)
  if o.help then
    stdio.write(M.usage)
    return
  end
  if #cmd == 0 then
    fail("usage",
    "no command to trace: wlrun trace [options] -- CMD [ARGS...] (wlrun trace --help)") end
  local code, message = trace(o, cmd)
  if code then
    -- the program's own exit code, which may lie beyond wlrun's error codes (126 to 255)
    io.stderr:write("wlrun: ", message, "\n")
    io.stderr:flush()
    io.stdout:flush()
    os.exit(code, true)
  end
end

return M
