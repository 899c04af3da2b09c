-- Misuses of the API on a GPU and under --compile-only, side by side: the same exit code and the
-- same error (without file:line) both ways, and the one tests/fixtures/misuse.lua expects.
local h = require "helper"
local m = require "misuse_run"
local wl = require "wlrun"

describe("misuse of the API, on a GPU and under --compile-only", function()
  local arch -- the device's, so that --compile-only compiles what the GPU run loads
  local function compile_only_args()
    arch = arch or wl.device().arch
    return "--compile-only --arch " .. arch
  end

  for _, c in ipairs(m.fixture.cases) do
    h.gpu_it(c[1], function()
      local gpu = m.run(c, "")
      local cpu = m.run(c, compile_only_args())
      assert.equal(c[3], gpu.code, gpu.stderr)
      assert.equal(c[4], m.message(gpu.stderr))
      assert.equal(gpu.code, cpu.code, cpu.stderr)
      assert.equal(m.message(gpu.stderr), m.message(cpu.stderr))
    end)
  end
end)
