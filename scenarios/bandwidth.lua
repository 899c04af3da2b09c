-- Memory bandwidth: copy, scale and triad kernels at several sizes, against a device-to-device
-- cudaMemcpy of the same size (the reference row), in GB/s and % of the device's peak.
--   wlrun scenarios/bandwidth.lua -o out/bandwidth.json
local wl = require "wlrun"

local src = wl.source "kernels/stream.cu"
local MiB = 1 << 20

-- bytes moved per element: reads plus writes
local traffic = { memcpy = 2, copy = 2, scale = 2, triad = 3 }

return wl.scenario {
  name = "bandwidth",
  description = "STREAM-like copy, scale, triad vs cudaMemcpy (device to device)",
  params = {
    op = { "memcpy", "copy", "scale", "triad" },
    size_mib = { 256, 1024, 4096 }, -- all above the L2, each copy well above the timing floor
  },
  order = { "size_mib", "op" },
  timing = { mode = "cold", flush_l2 = true, warmup = 10, iters = 50 },

  -- the kernels of the run's ops, compiled ahead (docs/kernels.md, "Compiled ahead")
  prepare = function(configs)
    local kernels = {}
    for _, p in ipairs(configs) do
      if p.op ~= "memcpy" then kernels[#kernels + 1] = { src, name = p.op } end
    end
    wl.prepare_kernels(kernels)
  end,

  setup = function(p)
    local n = p.size_mib * MiB // 4 -- floats per array
    local s = {}
    s.x = wl.tensor { n, init = wl.uniform(-1, 1) }
    s.y = wl.tensor { n }
    if p.op == "memcpy" then -- cudaMemcpyAsync on the stream the measurement records its events on
      local current = wl.current_stream()
      s.run = function() s.y:copy_from(s.x, current) end
      return s
    end
    local grid, block = 1024, 512 -- grid-stride loops: enough blocks to fill any current GPU
    local k = wl.kernel { src, name = p.op }
    if p.op == "copy" then
      s.run = k:bind { grid = grid, block = block, args = { s.y, s.x, n // 4 } }
    elseif p.op == "scale" then
      s.run = k:bind { grid = grid, block = block, args = { s.y, s.x, 3.0, n // 4 } }
    else
      s.z = wl.tensor { n, init = wl.uniform(-1, 1) }
      s.run = k:bind { grid = grid, block = block, args = { s.y, s.x, s.z, 3.0, n // 4 } }
    end
    return s
  end,

  run = "run",

  check = function(p, s)
    local x, y = s.x:to_host(), s.y:to_host()
    local z = s.z and s.z:to_host()
    local n = #x
    for _, i in ipairs { 1, 2, n // 3, n // 2, n - 1, n } do
      local want = p.op == "scale" and 3 * x[i] or p.op == "triad" and x[i] + 3 * z[i] or x[i]
      if math.abs(y[i] - want) > 1e-6 * (1 + math.abs(want)) then
        return false, ("y[%d] = %g, expected %g"):format(i, y[i], want)
      end
    end
    return true
  end,

  work = function(p)
    return { bytes = traffic[p.op] * p.size_mib * MiB }
  end,
}
