-- Configurations in child processes (docs/reliability.md): --isolate, --config-timeout, and the
-- automatic switch after a kernel fault has poisoned the CUDA context. The parent runs
-- `wlrun <the same command line> --worker-config I --worker-output FILE`; the child runs
-- configuration I alone and writes its entry of the results document to FILE.
local core = require "wlrun.core"

local isolate = {}

-- the parent's command line, without what only the parent does (outputs, resume)
local function child_args(index, out)
  local argv = core.cli.argv
  local args = { core.self_exe() or argv[1] }
  local skip = { ["-o"] = true, ["--output"] = true, ["--resume"] = true }
  local i = 2
  while i <= #argv do
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
  for _, a in ipairs { "--worker-config", tostring(index), "--worker-output", out, "--no-progress", "--quiet" } do
    args[#args + 1] = a
  end
  return args
end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function tail(text, lines)
  local t = {}
  for line in (text or ""):gmatch("[^\n]+") do t[#t + 1] = line end
  return table.concat(t, "\n", math.max(1, #t - lines + 1))
end

local signals = { [4] = "SIGILL", [6] = "SIGABRT", [7] = "SIGBUS", [8] = "SIGFPE", [9] = "SIGKILL",
                  [11] = "SIGSEGV", [15] = "SIGTERM" }

-- runs configuration cfg in a child; returns its entry (and an interrupt error, like run_config)
function isolate.run(cfg, timeout)
  local base = os.tmpname()
  local out, errf = base .. ".json", base .. ".err"
  local r = core.spawn(child_args(cfg.index, out), { timeout = timeout, stdout = "/dev/null", stderr = errf })
  local text, stderr = read(out), read(errf)
  os.remove(base)
  os.remove(out)
  os.remove(errf)
  if text then
    local doc = require("dkjson").decode(text)
    local entry = doc and doc.configurations and doc.configurations[1]
    if entry then
      entry.isolated = true
      if entry.kind == "interrupted" then return entry, { kind = "interrupted", message = entry.error } end
      return entry
    end
  end
  local entry = { index = cfg.index, params = cfg.params, status = "failed", isolated = true, time = r.time }
  if r.how == "timeout" then
    entry.kind = "timeout"
    entry.error = ("ran past --config-timeout (%.3g s) and was stopped"):format(timeout)
  elseif r.how == "signal" then
    if r.signal == 2 then return entry, { kind = "interrupted", message = "interrupted" } end
    entry.kind = "crash"
    entry.error = ("the child process died of signal %d (%s)"):format(r.signal, signals[r.signal] or "?")
  elseif r.code == 130 then
    entry.kind, entry.error = "interrupted", "interrupted"
    return entry, { kind = "interrupted", message = "interrupted" }
  else
    entry.kind = "crash"
    entry.error = ("the child process exited with code %d and wrote no result"):format(r.code)
  end
  local t = tail(stderr, 5)
  if t ~= "" then entry.error = entry.error .. ":\n" .. t end
  return entry
end

-- the child's side: configuration `index` of the space, written to `out`
function isolate.worker(sc, space, index, out, run_config, ctx)
  local cfg = space.list[index]
  if not cfg then
    core.error("usage", ("--worker-config %d: the space has %d configurations"):format(index, #space.list), 0)
  end
  local entry = run_config(sc, cfg, ctx)
  local report = require "wlrun.report"
  report.write({ schema = "wlrun-results", version = 1, configurations = { entry } }, out, "json")
end

return isolate
