-- A kernel compiled at run time, tensors generated on the device, one launch timed with events.
-- (Timing by hand, for teaching: the measurement engine does warmup and statistics for you.)
local wl = require "wlrun"

local k = wl.kernel { [[
  template <typename T> __global__ void axpy(T* y, const T* x, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
  }]], name = "axpy<float>" }

local n = 1 << 24
local x = wl.tensor { n, dtype = "f32", init = wl.normal() }
local y = wl.tensor { n, dtype = "f32", init = 1 }
local launch = k:bind { grid = wl.cdiv(n, 256), block = 256, args = { y, x, 2.0, n } }

local e0, e1 = wl.event(), wl.event()
launch() -- once untimed: the first launch loads the module
e0:record(); launch(); e1:record()
local s, why = e0:elapsed(e1)
if not s then -- --compile-only: the kernel compiled and the launch was checked, but nothing ran
  print(("axpy over %d floats: %s"):format(n, why))
  return
end
print(("axpy over %d floats: %.1f us, %.0f GB/s"):format(n, s * 1e6, 3 * 4 * n / s / 1e9))

local h = y:to_host()
print(("y[1] = %.4f (1 + 2 * 2 * x[1] with x[1] = %.4f)"):format(h[1], x:to_host()[1]))
