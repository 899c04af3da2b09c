-- `wlrun info`: versions, and the properties of every CUDA device (wlrun.core's, as wl.device()
-- gives them).
local core = require "wlrun.core"

local info = {}

local function bytes(n)
  local units = { "B", "KiB", "MiB", "GiB", "TiB" }
  local u = 1
  while n >= 1024 and u < #units do n, u = n / 1024, u + 1 end
  return u == 1 and ("%d B"):format(n) or ("%.1f %s"):format(n, units[u])
end

local function version(v) -- 13000 -> 13.0
  return ("%d.%d"):format(v // 1000, (v % 1000) // 10)
end

function info.main()
  local has_nvrtc, nvrtc = pcall(core.nvrtc_version)
  print(("wlrun %s, %s, NVRTC %s"):format(core.version, _VERSION,
    has_nvrtc and nvrtc or ("not found (" .. tostring(type(nvrtc) == "table" and nvrtc.message
      or nvrtc) .. ")")))
  local n, reason = core.device_count()
  if n == 0 then
    core.error("no_device", "no CUDA device: " .. tostring(reason), 0)
  end
  for i = 0, n - 1 do
    local d = core.device(i)
    if i == 0 then
      print(("CUDA driver %s, runtime %s"):format(version(d.driver_version),
        version(d.runtime_version)))
    end
    print(("\ndevice %d: %s"):format(i, d.name))
    local rows = {
      { "compute capability", ("%s (%s)"):format(d.compute_capability, d.arch) },
      { "multiprocessors", d.sm_count },
      { "memory", ("%s%s"):format(bytes(d.memory_bytes),
        d.memory_free_bytes and (", " .. bytes(d.memory_free_bytes) .. " free") or "") },
      { "L2 cache", bytes(d.l2_bytes) },
      { "SM clock", ("%d MHz (max)"):format(d.sm_clock_khz // 1000) },
      { "memory clock", ("%d MHz, %d-bit bus"):format(d.memory_clock_khz // 1000,
        d.memory_bus_bits) },
      { "peak bandwidth", ("%.1f GB/s (2 x clock x bus width)"):format(d.peak_bandwidth / 1e9) },
      { "shared memory", ("%s per block (%s opt-in), %s per SM"):format(bytes(d.shared_per_block),
        bytes(d.shared_per_block_optin), bytes(d.shared_per_sm)) },
      { "registers", ("%d per SM, %d per block"):format(d.registers_per_sm,
        d.registers_per_block) },
      { "threads", ("%d per block, %d per SM, warp %d"):format(d.max_threads_per_block,
        d.max_threads_per_sm, d.warp_size) },
      { "PCI bus", d.pci_bus_id },
      { "UUID", d.uuid },
    }
    for _, r in ipairs(rows) do print(("  %-20s %s"):format(r[1], tostring(r[2]))) end
  end
end

return info
