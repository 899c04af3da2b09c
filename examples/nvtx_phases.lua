-- Annotating a multi-phase workload with NVTX (docs/nvtx.md), so that an Nsight Systems timeline
-- reads like the program:
--   nsys profile -o phases wlrun examples/nvtx_phases.lua      (then open phases.nsys-rep)
-- A small "training" loop: load a batch (host), preprocess it (host), a step on the GPU when
-- there is one, and a checkpoint every few epochs. The host phases run anywhere; without a GPU
-- the device step is skipped, and the script says so.
local wl = require "wlrun"
local nvtx = wl.nvtx

local EPOCHS, STEPS, BATCH = 3, 4, 20000

-- One domain for the application, its own categories, and registered strings for the names
-- used on every step (a tool then receives a handle instead of the text each time).
local app = nvtx.domain("nvtx_phases")
local HOST, DEVICE, IO = app:category("host"), app:category("device"), app:category("io")
local LOAD, PREP, STEP = app:register("load batch"), app:register("preprocess"),
  app:register("gpu step")

-- the GPU part, when there is a GPU
local ndev, why = wl.device_count()
local step
if ndev > 0 then
  local k = wl.kernel { [[
    extern "C" __global__ void saxpy(float* y, const float* x, float a, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) y[i] = a * x[i] + y[i];
    }]], name = "saxpy" }
  local n = 1 << 22
  local x, y = wl.tensor { n, init = wl.normal() }, wl.tensor { n, init = 0 }
  local stream = wl.stream()
  nvtx.name_stream(stream, "training stream") -- the stream's row in the timeline
  local launch = k:bind { grid = wl.cdiv(n, 256), block = 256, stream = stream,
    args = { y, x, 0.5, n } }
  step = function()
    launch:launch(10)
    stream:sync()
  end
else
  print(
    ("no CUDA device here (%s):\n  the GPU step is skipped; the host phases still run, "
    .. "annotated"):format(why))
end

-- host work: a batch of random numbers, then its mean and spread
local function load_batch(seed)
  local rng, b = seed, {}
  for i = 1, BATCH do
    rng = (rng * 1103515245 + 12345) % 2147483648
    b[i] = rng / 2147483648
  end
  return b
end

local function preprocess(b)
  local sum, sq = 0, 0
  for _, v in ipairs(b) do sum, sq = sum + v, sq + v * v end
  local mean = sum / #b
  return mean, math.sqrt(sq / #b - mean * mean)
end

local t0 = wl.clock()
-- a start/stop range for the whole run: it may end anywhere, here after the loop
local whole = app:start("training", { color = "gray" })
for epoch = 1, EPOCHS do
  -- payload: the epoch's number, shown with the range
  app:range("epoch " .. epoch, { color = "blue", payload = epoch }, function()
    for s = 1, STEPS do
      local batch = app:range(LOAD, { category = HOST, color = "green" }, load_batch,
        epoch * 100 + s)
      local mean, spread = app:range(PREP, { category = HOST, color = "yellow" }, preprocess, batch)
      if step then app:range(STEP, { category = DEVICE, color = "red", payload = mean }, step) end
      if s == STEPS then
        -- a marker: an instant, with a float payload
        app:mark("epoch done", { payload = spread })
      end
    end
    if epoch % 2 == 0 then
      -- push/pop, for code that cannot be wrapped in a function
      app:push("checkpoint", { category = IO, color = "purple" })
      local path = os.tmpname()
      local f = assert(io.open(path, "w"))
      f:write(("epoch %d\n"):format(epoch))
      f:close()
      os.remove(path)
      app:pop()
    end
  end)
end
app:stop(whole)
local gpu = step and (wl.compile_only() and " (the GPU step checked, not run: --compile-only)"
  or " (with the GPU step)") or ""
print(("%d epochs of %d steps in %.1f ms%s; open ranges left: %d"):format(EPOCHS, STEPS,
  (wl.clock() - t0) * 1e3, gpu,
  app:depth()))
