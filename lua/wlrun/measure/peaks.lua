-- The dense arithmetic peaks of a device by dtype (docs/lua-api.md, "Devices"): the one table
-- of FLOP per clock per SM by architecture, times the SMs and the SM clock wl.device() reads.
local peaks = {}

-- FLOP (a multiply-add counts 2) per clock per SM, dense (no structured sparsity): f32 on the
-- CUDA cores, tf32 / bf16 / f16 (f32 accumulation) on the tensor cores. Only architectures whose
-- numbers are published (the A100 and H100 whitepapers) are listed; others give no peak.
peaks.FLOP_PER_CLOCK_PER_SM = {
  sm_80 = { f32 = 128, tf32 = 1024, bf16 = 2048, f16 = 2048 },
  sm_90 = { f32 = 256, tf32 = 2048, bf16 = 4096, f16 = 4096 },
}

peaks.DTYPES = { "f32", "tf32", "bf16", "f16" }

function peaks.is_dtype(v)
  for _, d in ipairs(peaks.DTYPES) do
    if v == d then return true end
  end
  return false
end

-- {dtype = FLOP/s} for a wl.device() table; empty for an architecture not in the table
function peaks.of(device)
  local per = device and peaks.FLOP_PER_CLOCK_PER_SM[device.arch]
  local out = {}
  if per and device.sm_count and device.sm_clock_khz then
    for dtype, flop in pairs(per) do out[dtype] = flop * device.sm_count * device.sm_clock_khz
      * 1e3 end
  end
  return out
end

-- FLOP/s of one dtype on the device, or nil where unknown
function peaks.flops(device, dtype) return peaks.of(device)[dtype] end

return peaks
