-- The close of --devices' queue (lua/wlrun/run/executor.lua, Devices:close): after a run that took
-- every configuration it waits for the workers' own ends, and a Ctrl-C during that wait ends
-- the workers at once, removes the queue and stops the process. Stand-in workers here: shells
-- that ignore SIGINT and SIGTERM, so that only the close's SIGKILL ends them.
local h = require "helper"

local SCRIPT = [[
local executor = require "wlrun.run.executor"
local process = require "wlrun.process"
local exec = executor.devices({ 0 }, 0)
exec.dir = require("wlrun.run.isolate").temp_dir()
for _ = 1, 2 do
  exec.workers[process.spawn_async({ "sh", "-c", "trap '' TERM INT; while :; do sleep 0.1; done" }, {})] = 0
end
exec.stopped = false -- a run that took every configuration: close waits for the workers' ends
local f = assert(io.open("started", "w"))
f:write(exec.dir, "\n")
for pid in pairs(exec.workers) do f:write(pid, "\n") end
f:close()
exec:close()
print("closed")
]]

local function alive(pid)
  local f = io.open(("/proc/%d/stat"):format(pid))
  if not f then return false end
  local state = f:read("a"):match("^%d+ %b() (%a)")
  f:close()
  return state ~= "Z"
end

describe("--devices' close", function()
  it("gives up waiting for the workers at a Ctrl-C: they are killed, the queue removed, exit 130",
    function()
    local dir = h.tmpdir()
    h.write(dir .. "/s.lua", SCRIPT)
    local bin = h.bin:sub(1, 1) == "/" and h.bin or (h.source_dir .. "/" .. h.bin)
    local t0 = os.time()
    os.execute(([[cd %s && (%s s.lua >out 2>err </dev/null & pid=$!; n=0;
      while [ ! -e started ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done; sleep 0.3;
      kill -INT $pid; wait $pid; echo $? >rc)]]):format(h.quote(dir), h.quote(bin)))
    local took = os.time() - t0
    assert.equal(130, tonumber(h.read(dir .. "/rc")), h.read(dir .. "/err"))
    assert.matches("interrupted", h.read(dir .. "/err"))
    assert.equal("", h.read(dir .. "/out")) -- close raised the interruption again
    assert.is_true(took < 6, ("%d s (the close waits 10 s without the Ctrl-C)"):format(took))
    local started = h.read(dir .. "/started")
    local queue = started:match("^([^\n]+)")
    assert.is_nil(io.open(queue), queue .. " is still there")
    for pid in started:gmatch("\n(%d+)") do
      assert.is_false(alive(tonumber(pid)), "worker " .. pid .. " is still running")
    end
  end)
end)
