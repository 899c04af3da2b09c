-- End-to-end: what wl.kernel and wl.source read is a regular file of at most 64 MiB, read once
-- per header, and the code NVRTC gets is the whole of it (src/bind/cuda_kernel.c): a FIFO, a device
-- or a directory is refused by what it is (no hang, no endless read), headers that include one
-- another are read once each (not exponentially often), and a NUL byte in the code is refused
-- (NVRTC would drop what follows it).
local h = require "helper"

local function run(dir, body)
  h.write(dir .. "/t.lua", "local wl = require 'wlrun'\n" .. body .. "\n")
  return h.run("--compile-only --arch sm_90 --no-cache t.lua", { cwd = dir, prefix = "timeout 60" })
end

describe("kernel source files", function()
  local dir
  setup(function()
    dir = h.tmpdir()
    assert(os.execute(("cd %s && mkfifo fifo && mkdir adir"):format(h.quote(dir))))
    local header = { "#pragma once" }
    for i = 2, 11 do header[i] = '#include "self.h"' end
    h.write(dir .. "/self.h", table.concat(header, "\n") .. "\n")
    h.write(dir .. "/k.cu", '#include "self.h"\nextern "C" __global__ void k() {}\n')
    h.write(dir .. "/f.cu", '#include "fifo"\nextern "C" __global__ void k() {}\n')
  end)

  it("refuses a FIFO, a device and a directory by what they are", function()
    for _, c in ipairs {
      { "wl.kernel { file = 'fifo', name = 'k' }",
        "cannot read kernel source fifo: not a regular file" },
      { "wl.source 'fifo'", "cannot read kernel source fifo: not a regular file" },
      { "wl.kernel { file = '/dev/zero', name = 'k', format = 'cubin' }",
        "wl.kernel 'k': cannot read /dev/zero: not a regular file" },
      { "wl.kernel { file = 'adir', name = 'k' }",
        "cannot read kernel source adir: a directory, not a file" },
      -- NVRTC would open it and block
      { "wl.kernel { wl.source 'f.cu', name = 'k' }",
        "wl.kernel 'k': #include of ./fifo is not a regular file" },
    } do
      local r = run(dir, c[1])
      assert.equal(9, r.code, c[1] .. ": " .. r.stderr)
      assert.truthy(r.stderr:find(c[2], 1, true), r.stderr)
    end
  end)

  it("reads headers that include one another once each", function()
    local t0 = os.time()
    local r = run(dir, "wl.kernel { wl.source 'k.cu', name = 'k' }")
    assert.equal(0, r.code, r.stderr)
    assert.is_true(os.time() - t0 < 30) -- 10^8 reads before, never finishing
  end)

  it("refuses code with a NUL byte in it", function()
    local r = run(dir,
      [[wl.kernel { 'extern "C" __global__ void k() {}\0 not C++ }}}', name = 'k' }]])
    assert.equal(1, r.code, r.stderr)
    assert.matches("wl.kernel 'k': the code holds a NUL byte at offset 33", r.stderr)
  end)
end)
