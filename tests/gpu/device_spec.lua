-- GPU specs: run where a CUDA device exists, reported as pending by name elsewhere.
local h = require "helper"
local wl = require "wlrun"

describe("devices", function()
  it("device_count never raises; with none it says why", function()
    local n, reason = wl.device_count()
    assert.equal("integer", math.type(n))
    if n == 0 then assert.is_string(reason) end
  end)

  if not h.has_gpu then
    it("wl.device() without a device is a no_device error (exit 4)", function()
      local r = h.run_script("require('wlrun').device()")
      assert.equal(4, r.code, r.stderr)
      assert.matches("no CUDA device", r.stderr)
    end)
  end

  h.gpu_it("queries the device's properties", function()
    local d = wl.device()
    print(
      ("\n    %s, sm_%d%d, %d SMs, %.1f GiB, L2 %.0f MiB, peak %.0f GB/s, driver %d, "
      .. "runtime %d"):format(
      d.name, d.major, d.minor, d.sm_count, d.memory_bytes / 2 ^ 30, d.l2_bytes / 2 ^ 20,
      d.peak_bandwidth / 1e9, d.driver_version, d.runtime_version))
    assert.is_true(#d.name > 0)
    assert.is_true(d.sm_count > 0)
    assert.is_true(d.memory_bytes > 0 and d.memory_free_bytes <= d.memory_bytes)
    assert.is_true(d.l2_bytes > 0)
    assert.is_true(d.peak_bandwidth > 1e11)
    assert.matches("^%d+%.%d+$", d.compute_capability)
  end)

  h.gpu_it("gives the same properties again (read once), the free memory read anew", function()
    local a = wl.device()
    local t = wl.tensor { 64 << 20, dtype = "u8" } -- 64 MiB more in use
    local b = wl.device()
    assert.is_true(b.memory_free_bytes < a.memory_free_bytes)
    a.memory_free_bytes, b.memory_free_bytes = nil, nil
    assert.same(a, b)
    assert.are_not.equal(a, b) -- a fresh table each call: a caller may change its own
    t:free()
  end)

  h.gpu_it("refuses a device index that does not exist", function()
    local ok, e = pcall(wl.device, 4096)
    assert.is_false(ok)
    assert.equal("no_device", e.kind)
  end)
end)
