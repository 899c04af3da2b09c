-- The one entry point of the C host into Lua (src/host/lhost.c calls host.main() in a protected
-- call): what wlrun does with its command line. A script runs as lua.c would run it (global
-- arg, its arguments as ...); when it returns a scenario, the scenario runs (wlrun.run.runner);
-- info and the tools are modules of wlrun.tools with a main(args).
local core = require "wlrun.core"
local process = require "wlrun.process"
local stdio = require "wlrun.text.stdio"
local compiled = require "wlrun.report.compiled"
local journal = require "wlrun.results.journal"
local scenario = require "wlrun.run.scenario"
local compile_ahead = require "wlrun.run.compile_ahead"

local host = {}

-- options that only mean something to a scenario
local function scenario_only(cli)
  if #cli.params > 0 then return "-p" end
  if cli.filter then return "--filter" end
  if cli.dry_run then return "--dry-run" end
  if #cli.outputs > 0 then return "-o" end
  if cli.resume then return "--resume" end
  if cli.shard then return "--shard" end
  if cli.devices then return "--devices" end
  for _, s in ipairs { { "run", "isolate", "--isolate" }, { "run", "prepare", "--no-prepare" },
                       { "output", "format", "--format" } } do
    if core.settings_origin[s[1]][s[2]].source == "cli" then return s[3] end
  end
end

-- the script's chunk, called by a tail call: its traceback line reads "in main chunk"
local function call(chunk, ...) return chunk(...) end

-- a table returned in place of wl.scenario{...}: refused, since it would run nothing
local scenario_fields = { "run", "params", "setup", "name" }
local function looks_like_scenario(v)
  if type(v) ~= "table" or getmetatable(v) ~= nil then return nil end
  for _, f in ipairs(scenario_fields) do
    if rawget(v, f) ~= nil then return f end
  end
end

-- --config-timeout T limits the script's top level too (docs/reliability.md): a plain script
-- as a whole, a scenario script until its plan is made (its top level, then where and --filter
-- over the space: wlrun.run.runner ends the limit; each configuration then gets T in its child
-- process). Not in a child process: the parent's limit covers it.
local function limit_top_level(cli)
  local t = core.settings.run.config_timeout
  if t > 0 and not cli.worker_config and not cli.worker_queue then
    core.time_limit(t, ("%s ran past --config-timeout (%.3g s) and was stopped"):format(cli.script,
      t))
  end
end

-- Where standard output is the report's alone (-o -, or --format for machines on the command
-- line: both for scenarios only), the script's top level writes to standard error too; the
-- returned value gives standard output back when closed (the sink holds it again).
local function stdout_held(cli)
  local format, hold = core.settings.output.format, false
  for _, path in ipairs(cli.outputs) do hold = hold or path == "-" end
  if core.settings_origin.output.format.source == "cli" and format ~= "table"
    and format ~= "plain" then hold = true end
  local fd = hold and process.hold_stdout() or nil
  return setmetatable({}, { __close = function() if fd then process.release_stdout(fd) end end })
end

local function run_script(cli)
  local args = cli.script_args
  _G.arg = table.move(args, 1, #args, 1, { [0] = cli.script })
  -- a device (/dev/zero: endless bytes) is no script; a FIFO is (`wlrun <(gen.sh)`)
  local kind = process.file_type(cli.script, true)
  if kind == "other" or kind == "socket" then
    core.error("io", ("cannot read %s: a device or socket, not a file: give the scenario's "
      .. "script"):format(cli.script), 0)
  end
  local chunk, err = loadfile(cli.script, "t")
  if not chunk then -- "cannot open/read FILE": the file (exit 9); else its syntax (exit 1)
    if err:find("binary chunk", 1, true) then -- Lua's message names no file
      err = ("%s: %s: wlrun runs Lua source, not precompiled chunks (luac)"):format(cli.script, err)
    end
    core.error(err:find("^cannot %a+ ") and "io" or "script", err, 0)
  end
  journal.hook_exit() -- before the script can keep its own os.exit
  -- wl.prepare_kernels's processes: what they have not compiled by the end is not needed
  local _ <close> = setmetatable({}, { __close = function(_, failed)
    compile_ahead.finish(failed == nil and "term" or "kill")
  end })
  limit_top_level(cli)
  local result
  do
    local _ <close> = stdout_held(cli)
    result = call(chunk, table.unpack(args))
  end
  -- the runner (and the run machinery it needs) is loaded for a scenario only: a plain script runs
  -- without it
  if scenario.is(result) then return require("wlrun.run.runner").run(result, cli.script) end
  core.time_limit(0)
  local field = looks_like_scenario(result)
  if field then
    core.error("script",
      ("%s returned a plain table with a scenario's field '%s': wrap it in wl.scenario{...} "
      .. "to run it as a scenario"):format(cli.script, field), 0)
  end
  local only = scenario_only(cli)
  if only then
    core.error("usage", ("%s applies to scenarios, and %s returned no wl.scenario{...}"):format(
      only, cli.script), 0)
  end
  if core.compile_only() then
    stdio.write(compiled.text())
    io.stdout:flush()
  end
end

function host.main()
  local cli = core.cli
  if cli.compile_jobs then return compile_ahead.worker(cli.compile_jobs) end -- internal
  -- info and a tool load their own modules, the command asked for only
  if cli.command == "info" then return require("wlrun.tools.info").main() end
  -- the tool named on the command line (cli.c's list): wlrun.tools.<name>
  if cli.command == "tool" then return require("wlrun.tools." .. cli.tool).main(cli.tool_args) end
  return run_script(cli)
end

return host
