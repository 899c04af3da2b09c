-- process.spawn: the child processes of --isolate (exit codes, signals, timeouts).
local core = require "wlrun.core"
local process = require "wlrun.process"

describe("process.spawn", function()
  it("reports a child's exit code and time", function()
    local r = process.spawn({ "sh", "-c", "exit 3" })
    assert.equal("exit", r.how)
    assert.equal(3, r.code)
    assert.is_true(r.time >= 0)
  end)

  it(
    "starts a child with SIGCHLD and SIGPIPE at their defaults and no signal blocked, whatever "
    .. "wlrun inherited", function()
    -- wlrun started with SIGCHLD and SIGPIPE ignored (as some CI runners start jobs): a child
    -- that inherited SIGCHLD ignored would have its own children reaped for it (waitpid fails)
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p " .. dir))
    local f = assert(io.open(dir .. "/s.lua", "w"))
    f:write([[local process = require "wlrun.process"
local r = process.spawn({ "cat", "/proc/self/status" }, { stdout = arg[1] })
assert(r.code == 0)
]])
    f:close()
    local bin = os.getenv("WLRUN_BIN") or "build/wlrun"
    assert(os.execute(("sh -c 'trap \"\" CHLD PIPE; exec %s %s/s.lua %s/status'"):format(bin, dir,
      dir)))
    local status = assert(io.open(dir .. "/status")):read("a")
    local ign = tonumber(status:match("SigIgn:%s*(%x+)"), 16)
    local blk = tonumber(status:match("SigBlk:%s*(%x+)"), 16)
    assert.equal(0, (ign >> 16) & 1, "SIGCHLD ignored in the child") -- bit n-1 for signal n
    assert.equal(0, (ign >> 12) & 1, "SIGPIPE ignored in the child")
    assert.equal(0, blk)
    os.execute("rm -rf " .. dir)
  end)

  it("waits for a child without waking every few milliseconds (a traced program's CPUs)", function()
    -- the waits that wake the process: a poll every 2 ms would make about 500 in a second
    local function wakes()
      local status = assert(io.open("/proc/self/status")):read("a")
      return tonumber(status:match("voluntary_ctxt_switches:%s*(%d+)"))
    end
    local before = wakes()
    local r = process.spawn({ "sleep", "1" })
    local woke = wakes() - before
    assert.equal(0, r.code)
    if r.waited == "naps" then -- no pidfd here (an old kernel, a seccomp filter): 2 ms naps
      print("\n  spawn: this kernel gives no pidfd: the wait naps 2 ms at a time")
      return
    end
    assert.equal("pidfd", r.waited)
    assert.is_true(woke < 50, ("%d wake-ups"):format(woke))
  end)

  it("reports a child killed by a signal", function()
    local r = process.spawn({ "sh", "-c", "kill -SEGV $$" })
    assert.equal("signal", r.how)
    assert.equal(11, r.signal)
  end)

  it("stops a child that runs past its timeout", function()
    local t0 = core.clock()
    local r = process.spawn({ "sleep", "30" }, { timeout = 0.3 })
    assert.equal("timeout", r.how)
    assert.is_true(core.clock() - t0 < 5)
  end)

  it("also stops a child that ignores SIGTERM", function()
    local r = process.spawn({ "sh", "-c", "trap '' TERM; sleep 30" }, { timeout = 0.2 })
    assert.equal("timeout", r.how)
    assert.is_true(r.time < 5)
  end)

  it("sends the child's output to files", function()
    local out, err = os.tmpname(), os.tmpname()
    local r = process.spawn({ "sh", "-c", "echo out; echo err >&2" },
      { stdout = out, stderr = err })
    assert.equal(0, r.code)
    assert.equal("out\n", io.open(out):read("a"))
    assert.equal("err\n", io.open(err):read("a"))
    os.remove(out)
    os.remove(err)
  end)

  it("reports a program that cannot be started as exit code 127", function()
    local r = process.spawn({ "/nonexistent/program" })
    assert.equal(127, r.code)
  end)

  it("starts children asynchronously with extra environment variables and collects them", function()
    local pid = process.spawn_async({ "sh", "-c", "exit $WLRUN_TEST_CODE" },
      { env = { WLRUN_TEST_CODE = "7", OTHER = "x" } })
    assert.is_true(pid > 0)
    local w
    repeat w = process.wait_any(5) until w == nil or w.pid == pid
    assert.equal(pid, w.pid)
    assert.equal("exit", w.how)
    assert.equal(7, w.code)
    assert.is_nil(process.wait_any(0.01))
  end)

  it("waits for one child by its pid, leaving the others to wait_any", function()
    local gate = os.tmpname() -- the slow child ends once it is gone (not after a fixed while)
    os.remove(gate)
    local slow = process.spawn_async({ "sh", "-c",
      "while [ ! -e \"$0\" ]; do sleep 0.01; done; exit 4", gate })
    local fast = process.spawn_async({ "sh", "-c", "exit 5" })
    local w = process.wait_pid(fast, 5)
    assert.same({ pid = fast, how = "exit", code = 5 }, w)
    -- not ended within the limit: nil alone, still a child
    assert.same({}, { process.wait_pid(slow, 0.01) })
    io.open(gate, "w"):close()
    assert.same({ pid = slow, how = "exit", code = 4 }, process.wait_pid(slow))
    os.remove(gate)
    assert.same({ nil, "no such child" }, { process.wait_pid(slow, 0.01) }) -- collected: gone
    assert.same({ nil, "no such child" }, { process.wait_pid(1, 0.01) }) -- no child of this process
    assert.has_error(function() process.wait_pid(0) end)
  end)

  it("lists and makes directories", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert.is_true(process.make_dir(dir))
    io.open(dir .. "/a", "w"):close()
    assert.same({ "a" }, process.list_dir(dir))
    os.remove(dir .. "/a")
    os.remove(dir)
    assert.is_nil(process.list_dir(dir))
  end)
end)

-- what a child left, as the executors collect it (wlrun.run.isolate)
describe("isolate.collect", function()
  local h = require "helper"
  local isolate = require "wlrun.run.isolate"
  local results = require "wlrun.results"
  local cfg = { index = 3, params = { n = 7 } }

  local function left(text)
    local dir = h.tmpdir()
    if text then h.write(dir .. "/3.json", text) end
    h.write(dir .. "/3.err", "line one\nline two\n")
    return isolate.collect(cfg, { how = "exit", code = 0, time = 0.5 }, dir .. "/3.json",
      dir .. "/3.err", 0)
  end

  it("takes the entry the child wrote", function()
    local doc = { schema = results.SCHEMA, version = results.VERSION,
                  configurations = { { index = 3, params = { n = 7 }, status = "ok",
                    samples = { 1e-3 } } } }
    local entry = left(results.render(doc))
    assert.equal("ok", entry.status)
    assert.is_true(entry.isolated)
  end)

  it("names why a result it cannot read was refused, instead of saying there was none", function()
    local doc = { schema = results.SCHEMA, version = results.VERSION,
                  configurations = { { index = 3, params = { n = 7 }, status = "ok",
                    samples = { "fast" } } } }
    local entry = left(results.render(doc))
    assert.equal("failed", entry.status)
    assert.equal("crash", entry.kind)
    assert.matches("wrote a result wlrun cannot read: .*configurations%[1%]%.samples%[1%]",
      entry.error)
    assert.same({ n = 7 }, entry.params)
  end)

  it("says the child wrote nothing, with the end of its stderr", function()
    local entry = left(nil)
    assert.equal("crash", entry.kind)
    assert.matches("exited with code 0 and wrote no result:\nline one\nline two", entry.error)
  end)
end)

-- --devices: the parent does no GPU work; each worker writes its GPU's device record and floor
-- (DIR/device/DEV.json) and the document takes the first listed GPU's (wlrun.run.executor)
describe("--devices' device records", function()
  local isolate = require "wlrun.run.isolate"
  local executor = require "wlrun.run.executor"
  local h = require "helper"
  local function queue()
    local dir = h.tmpdir()
    assert(os.execute("mkdir -p " .. h.quote(dir .. "/device")))
    return dir
  end
  local H200 = { name = "NVIDIA H200", arch = "sm_90", driver_version = 13000,
    runtime_version = 13000, l2_bytes = 62914560 }

  it("are written and read back whole through the strict loader", function()
    local dir = queue()
    assert.is_nil(isolate.read_device(dir, 1)) -- not written yet
    isolate.write_device(dir, 1, H200, { event_pair = 1.3e-6, empty_kernel = 4.5e-6 })
    local r = isolate.read_device(dir, 1)
    assert.same(H200, r.device)
    assert.same({ event_pair = 1.3e-6, empty_kernel = 4.5e-6 }, r.floor)
    h.write(dir .. "/device/2.json",
      '{"schema": "wlrun-results", "version": 1, "device": "not an object"}')
    assert.is_nil(isolate.read_device(dir, 2)) -- a record that cannot be read is none
  end)

  it(
    "give the document the first listed GPU's device and floor, the driver's provenance and the "
    .. "GPUs used", function()
    local exec = executor.devices({ 3, 1 }, 0)
    exec.records = { [1] = { device = { name = "other" }, floor = { event_pair = 1 } },
                     [3] = { device = H200, floor = { event_pair = 2e-6, empty_kernel = 5e-6 } } }
    local doc = { provenance = {}, configurations = { { index = 1, device_index = 3 },
      { index = 2, device_index = 1 },
      { index = 3, device_index = 3 }, { index = 4, status = "failed" } } }
    exec:describe(doc)
    assert.equal("NVIDIA H200", doc.device.name)
    assert.equal(2e-6, doc.floor.event_pair)
    assert.equal("13.0", doc.provenance.driver.cuda)
    assert.equal("13.0", doc.provenance.toolkit.runtime)
    assert.same({ 1, 3 }, doc.devices)
    -- the first GPU's worker never wrote one
    exec.records = { [1] = { device = { name = "other" }, floor = {} } }
    doc = { provenance = {}, configurations = {} }
    exec:describe(doc)
    assert.equal("other", doc.device.name)
    assert.is_nil(doc.devices)
    executor.devices({ 0 }, 0):describe(doc) -- no worker wrote one: nothing is taken
    assert.equal("other", doc.device.name)
    doc = { provenance = {}, configurations = {} } -- --resume with nothing left to run: the file's
    executor.devices({ 0 }, 0):describe(doc, { device = H200, floor = { event_pair = 3e-6 } })
    assert.equal("NVIDIA H200", doc.device.name)
    assert.equal(3e-6, doc.floor.event_pair)
    assert.equal("13.0", doc.provenance.driver.cuda)
  end)
end)

-- --devices names devices as this process sees them: under Slurm (CUDA_VISIBLE_DEVICES=2,3),
-- --devices 0,1 are the job's GPUs 2 and 3, never the host's 0 and 1
describe("the GPU a --devices worker is given (executor.visible_device)", function()
  local executor = require "wlrun.run.executor"
  it("is the index itself where this process sees every GPU", function()
    assert.equal("0", executor.visible_device(0, nil))
    assert.equal("3", executor.visible_device(3, nil))
  end)
  it(
    "is that entry of this process's CUDA_VISIBLE_DEVICES: an index, a GPU or MIG UUID, "
    .. "spaces trimmed", function()
    assert.equal("2", executor.visible_device(0, "2,3"))
    assert.equal("3", executor.visible_device(1, "2,3"))
    assert.equal("GPU-8f6a2c1e-0000-1111-2222-333344445555",
      executor.visible_device(1,
        "GPU-1b2c3d4e-aaaa-bbbb-cccc-ddddeeeeffff, GPU-8f6a2c1e-0000-1111-2222-333344445555"))
    assert.equal("MIG-5c0f2e0a-1234-5678-9abc-def012345678",
      executor.visible_device(0, "MIG-5c0f2e0a-1234-5678-9abc-def012345678"))
  end)
  it("is none for a device this process does not see (the devices' check refuses it)", function()
    assert.is_nil(executor.visible_device(2, "2,3"))
    assert.is_nil(executor.visible_device(0, ""))
    assert.is_nil(executor.visible_device(1, "0,,1"))
  end)
end)

describe("isolate.stderr_first", function()
  local isolate = require "wlrun.run.isolate"
  local h = require "helper"
  it("is the first line a child wrote, its error message, without the traceback after it",
    function()
    local dir = h.tmpdir()
    h.write(dir .. "/e",
      "\n  wlrun: early.lua:1: this worker has no GPU for you\nstack traceback:\n\t[C]: in ?\n")
    assert.equal("wlrun: early.lua:1: this worker has no GPU for you",
      isolate.stderr_first(dir .. "/e"))
    h.write(dir .. "/long", ("x"):rep(400) .. "\n")
    assert.equal(303, #isolate.stderr_first(dir .. "/long"))
    assert.equal("it wrote nothing on its standard error", isolate.stderr_first(dir .. "/none"))
  end)
end)
