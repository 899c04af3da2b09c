-- Configurations in child processes (docs/reliability.md): --isolate, --config-timeout, and the
-- automatic switch after a kernel fault has poisoned the CUDA context. The parent runs
-- `wlrun <the same command line> --worker-config I --worker-output FILE`; the child runs
-- configuration I alone and writes its entry of the results document to FILE.
local core = require "wlrun.core"

local isolate = {}

-- the parent's command line, without what only the parent does (outputs, resume)
local function child_args(extra)
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
  for _, a in ipairs(extra) do args[#args + 1] = a end
  for _, a in ipairs { "--no-progress", "--quiet" } do args[#args + 1] = a end
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

-- the entry of configuration cfg from what its child left: the JSON it wrote to `out`, or a
-- failure made from how it ended (r: core.spawn's or core.wait_any's result) and its stderr
function isolate.collect(cfg, r, out, errf, timeout)
  local text, stderr = read(out), read(errf)
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

local function temp_names()
  local base = os.tmpname()
  os.remove(base)
  return base .. ".json", base .. ".err"
end

-- runs configuration cfg in a child and waits; returns its entry (and an interrupt error)
function isolate.run(cfg, timeout)
  local out, errf = temp_names()
  local r = core.spawn(child_args { "--worker-config", tostring(cfg.index), "--worker-output", out },
    { timeout = timeout, stdout = "/dev/null", stderr = errf })
  return isolate.collect(cfg, r, out, errf, timeout)
end

-- --devices: a shared queue in a directory. DIR/todo/I stands for configuration I; a worker
-- claims it by renaming it to DIR/taken/I.PID (a rename is atomic: two workers cannot both
-- win), runs it and writes its entry to DIR/done/I.json. One worker per device
-- (CUDA_VISIBLE_DEVICES), restarted when it exits early (a fault poisons its CUDA context, so a
-- worker stops after one) while work is left. on_entry(entry) is called as each finishes.
function isolate.run_on_devices(list, devices, timeout, on_entry)
  local dir = os.tmpname()
  os.remove(dir)
  for _, d in ipairs { dir, dir .. "/todo", dir .. "/taken", dir .. "/done" } do assert(core.make_dir(d)) end
  local by_index = {}
  for _, cfg in ipairs(list) do
    by_index[cfg.index] = cfg
    local f = assert(io.open(("%s/todo/%d"):format(dir, cfg.index), "w"))
    f:close()
  end
  local workers, remaining, seen, claimed_at, killed = {}, #list, {}, {}, {}
  local function start(dev)
    local pid = core.spawn_async(child_args { "--worker-queue", dir },
      { stdout = "/dev/null", stderr = ("%s/stderr.%d"):format(dir, dev), env = { CUDA_VISIBLE_DEVICES = tostring(dev) } })
    workers[pid] = dev
  end
  local function finish(index, entry)
    seen[index] = true
    remaining = remaining - 1
    on_entry(entry)
  end
  for _, dev in ipairs(devices) do if #list > 0 then start(dev) end end
  while remaining > 0 do
    for _, name in ipairs(core.list_dir(dir .. "/done") or {}) do
      local index = tonumber(name:match("^(%d+)%.json$"))
      if index and not seen[index] then
        local text = read(("%s/done/%s"):format(dir, name))
        local doc = text and require("dkjson").decode(text)
        if doc and doc.configurations and doc.configurations[1] then
          local entry = doc.configurations[1]
          entry.isolated = true
          finish(index, entry)
        end
      end
    end
    local now = core.clock()
    for _, name in ipairs(core.list_dir(dir .. "/taken") or {}) do
      local index, pid = name:match("^(%d+)%.(%d+)$")
      claimed_at[name] = claimed_at[name] or now
      pid = tonumber(pid)
      if timeout > 0 and now - claimed_at[name] > timeout and workers[pid] and not killed[pid] then
        core.kill(pid, 15)
        killed[pid] = { at = now, index = tonumber(index) }
      elseif killed[pid] and now - killed[pid].at > 1 then
        core.kill(pid, 9)
      end
    end
    local w = remaining > 0 and core.wait_any(0.05)
    if w and workers[w.pid] then
      local dev = workers[w.pid]
      workers[w.pid] = nil
      -- what it held and did not finish failed with it
      for _, name in ipairs(core.list_dir(dir .. "/taken") or {}) do
        local index, pid = name:match("^(%d+)%.(%d+)$")
        index, pid = tonumber(index), tonumber(pid)
        if pid == w.pid and not seen[index] and not read(("%s/done/%d.json"):format(dir, index)) then
          if killed[pid] then w.how = "timeout" end
          w.time = now - (claimed_at[name] or now)
          local entry = isolate.collect(by_index[index], w, "/nonexistent", ("%s/stderr.%d"):format(dir, dev), timeout)
          entry.device_index = dev
          os.remove(("%s/taken/%s"):format(dir, name))
          finish(index, entry)
        end
      end
      if w.how == "signal" and w.signal == 2 or w.code == 130 then
        core.error("interrupted", "interrupted (Ctrl-C)", 0)
      end
      if #(core.list_dir(dir .. "/todo") or {}) > 0 then start(dev) end
    end
  end
  for pid in pairs(workers) do core.kill(pid, 15) end
  while core.wait_any(2) do end
  os.execute("rm -rf '" .. dir .. "'")
end

-- the worker of --devices: claims configurations from the queue until it is empty
function isolate.queue_worker(sc, space, dir, run_config, ctx)
  local by_index = {}
  for _, cfg in ipairs(space.list) do by_index[cfg.index] = cfg end
  local pid, dev = core.getpid(), tonumber(os.getenv("CUDA_VISIBLE_DEVICES") or "")
  local report = require "wlrun.report"
  while true do
    local names = core.list_dir(dir .. "/todo") or {}
    table.sort(names, function(a, b) return tonumber(a) < tonumber(b) end)
    local index
    for _, name in ipairs(names) do
      if os.rename(("%s/todo/%s"):format(dir, name), ("%s/taken/%s.%d"):format(dir, name, pid)) then
        index = tonumber(name)
        break
      end
    end
    if not index then return end
    local entry = run_config(sc, by_index[index], ctx)
    entry.device_index = dev
    report.write_text(report.render({ schema = "wlrun-results", version = 1, configurations = { entry } }, "json"),
      ("%s/done/%d.json"):format(dir, index), "a result")
    os.remove(("%s/taken/%d.%d"):format(dir, index, pid))
    if entry.kind == "interrupted" or not core.context_ok() then return end
  end
end

-- the child's side: configuration `index` of the space, written to `out`
function isolate.worker(sc, space, index, out, run_config, ctx)
  local cfg
  for _, c in ipairs(space.list) do
    if c.index == index then cfg = c end
  end
  if not cfg then
    core.error("usage", ("--worker-config %d: the space has %d configurations"):format(index, #space.list), 0)
  end
  local entry = run_config(sc, cfg, ctx)
  local report = require "wlrun.report"
  report.write({ schema = "wlrun-results", version = 1, configurations = { entry } }, out, "json")
end

return isolate
