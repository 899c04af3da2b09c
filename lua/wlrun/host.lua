-- The one entry point of the C host into Lua (src/lhost.c calls host.main() in a protected
-- call): what wlrun does with its command line. A script runs as lua.c would run it (global
-- arg, its arguments as ...); when it returns a scenario, the scenario runs (wlrun.runner);
-- info and the tools are modules with a main(args).
local core = require "wlrun.core"

local host = {}

-- options that only mean something to a scenario
local function scenario_only(cli)
  if #cli.params > 0 then return "-p" end
  if cli.filter then return "--filter" end
  if cli.dry_run then return "--dry-run" end
  if #cli.outputs > 0 then return "-o" end
end

-- the script's chunk, called by a tail call: its traceback line reads "in main chunk"
local function call(chunk, ...) return chunk(...) end

local function run_script(cli)
  local args = cli.script_args
  _G.arg = table.move(args, 1, #args, 1, { [0] = cli.script })
  local chunk, err = loadfile(cli.script, "t")
  if not chunk then -- "cannot open/read FILE": the file (exit 9); else its syntax (exit 1)
    core.error(err:find("^cannot %a+ ") and "io" or "script", err, 0)
  end
  local result = call(chunk, table.unpack(args))
  if require("wlrun.scenario").is(result) then return require("wlrun.runner").run(result, cli.script) end
  local only = scenario_only(cli)
  if only then
    core.error("usage", ("%s applies to scenarios, and %s returned no wl.scenario{...}"):format(only, cli.script), 0)
  end
  if core.compile_only() then
    io.stdout:write(require("wlrun.compiled").text())
    io.stdout:flush()
  end
end

function host.main()
  local cli = core.cli
  if cli.command == "info" then return require("wlrun.info").main() end
  if cli.command == "tool" then return require("wlrun.tools." .. cli.tool).main(cli.tool_args) end
  return run_script(cli)
end

return host
