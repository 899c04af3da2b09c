-- The command line of a child wlrun (an --isolate configuration, a --devices worker, a process
-- that compiles kernels ahead): the parent's, without what only the parent does (outputs,
-- resume), with extra options before a "--" (after it, everything is the script's and goes
-- through as it is). The child reads the same settings and wlrun.ini as the parent.
local core = require "wlrun.core"
local process = require "wlrun.process"

return function(extra)
  local argv = core.cli.argv
  local args = { process.self_exe() or argv[1] }
  local skip = { ["-o"] = true, ["--output"] = true, ["--resume"] = true }
  local i = 2
  while i <= #argv and argv[i] ~= "--" do
    local a = argv[i]
    if skip[a] then
      i = i + 2
    elseif a:match("^%-o.") or a:match("^%-%-output=") or a:match("^%-%-resume=") then
      i = i + 1
    else
      args[#args + 1] = a
      i = i + 1
    end
  end
  for _, a in ipairs(extra) do args[#args + 1] = a end
  for _, a in ipairs { "--no-progress", "--quiet" } do args[#args + 1] = a end
  table.move(argv, i, #argv, #args + 1, args) -- "--" and the script's own arguments
  return args
end
