-- A small training loop, timed the methodology's way (docs/loops.md): a 3-layer MLP
-- (ReLU, softmax cross-entropy, SGD) written with NVRTC kernels, fed by a loader that reads
-- batches from a binary file on disk into pinned host memory and copies them to the device
-- asynchronously. The "slow" loader sleeps per batch and trips the data-bottleneck rule.
--   wlrun scenarios/training_loop.lua
--   wlrun scenarios/training_loop.lua -p loader=fast -p batch=2048 -o out/train.json
local wl = require "wlrun"

local src = wl.source "kernels/mlp.cu"
local D, H, C = 256, 4096, 16      -- features, hidden width, classes
local N = 65536                    -- samples in the data set
local LR = 0.05
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local DATA = os.getenv("WLRUN_DATA_DIR") and (os.getenv("WLRUN_DATA_DIR") .. "/mlp.bin")
  or (here .. "data/mlp_" .. D .. "x" .. C .. "_" .. N .. ".bin")

local function k(name) return wl.kernel { src, name = name } end

-- the data file, made on first use: features ~ N(0, 1), labels from a random linear teacher
local function ensure_data()
  if wl.compile_only() then return end -- nothing runs: no data to make
  local f = io.open(DATA, "rb")
  if f then f:close() return end
  local dir = DATA:match("^(.*)/")
  local made, why = require("wlrun.process").make_dir(dir) -- no shell: the path is data
  assert(made, ("cannot make the directory '%s': %s"):format(dir, tostring(why)))
  local X = wl.tensor { N, D, init = wl.normal(0, 1, { seed = 1 }) }
  local Tch = wl.tensor { D, C, init = wl.normal(0, 1, { seed = 2 }) }
  local R = wl.tensor { N, D + 1 }
  k("make_records"):bind { grid = wl.cdiv(N, 128), block = 128, args = { X, Tch, R, N, D, C } }()
  local bytes = R:to_host():bytes()
  local tmp = DATA .. ".tmp"
  local out = assert(io.open(tmp, "wb"))
  assert(out:write(bytes))
  out:close()
  assert(os.rename(tmp, DATA))
end

local function gemm(TA, TB)
  return k(("matmul<%s, %s>"):format(TA and "true" or "false", TB and "true" or "false"))
end

-- C = op(A) op(B) (+ beta C): a launch of the tiled kernel
local function mm(kernel, A, B, Cm, M, Nn, K, beta)
  return kernel:bind { grid = { wl.cdiv(Nn, 32), wl.cdiv(M, 32) }, block = { 32, 32 },
                       args = { A, B, Cm, M, Nn, K, 1.0, beta or 0.0 } }
end

local function elementwise(kernel, n, args)
  return kernel:bind { grid = math.min(wl.cdiv(n, 256), 4096), block = 256, args = args }
end

return wl.loop {
  name = "training_loop",
  description = "3-layer MLP (256-4096-4096-16), SGD, batches read from a file",
  params = { batch = { 1024 }, loader = { "fast", "slow" } },
  batch_size = function(p) return p.batch end,
  warmup = 5, iters = 50,

  setup = function(p)
    ensure_data()
    local B = p.batch
    local s = { file = not wl.compile_only() and assert(io.open(DATA, "rb")), record = (D + 1) * 4 }
    local function he(fan_in) return wl.normal(0, math.sqrt(2 / fan_in)) end
    s.W1, s.b1 = wl.tensor { D, H, init = he(D) }, wl.tensor { H }
    s.W2, s.b2 = wl.tensor { H, H, init = he(H) }, wl.tensor { H }
    s.W3, s.b3 = wl.tensor { H, C, init = he(H) }, wl.tensor { C }
    s.dW1, s.db1 = wl.tensor { D, H }, wl.tensor { H }
    s.dW2, s.db2 = wl.tensor { H, H }, wl.tensor { H }
    s.dW3, s.db3 = wl.tensor { H, C }, wl.tensor { C }
    s.pinned = wl.host_tensor { B, D + 1, pinned = true }
    s.R = wl.tensor { B, D + 1 }
    s.X, s.labels = wl.tensor { B, D }, wl.tensor { B, dtype = "i32" }
    s.H1, s.H2, s.Y = wl.tensor { B, H }, wl.tensor { B, H }, wl.tensor { B, C }
    s.dH1, s.dH2, s.dY = wl.tensor { B, H }, wl.tensor { B, H }, wl.tensor { B, C }
    s.loss, s.cursor = wl.tensor { 1024 }, wl.tensor { 1, dtype = "i32" }
    s.stream = wl.current_stream()

    local nn, nt, tn = gemm(false, false), gemm(true, false), gemm(false, true)
    local bias, relu_bw, sum, sgd = k("bias_act"), k("relu_backward"), k("col_sum"), k("sgd")
    s.unpack = elementwise(k("unpack"), B * (D + 1), { s.R, s.X, s.labels, B, D })
    s.forward = {
      mm(nn, s.X, s.W1, s.H1, B, H, D), elementwise(bias, B * H, { s.H1, s.b1, B, H, 1 }),
      mm(nn, s.H1, s.W2, s.H2, B, H, H), elementwise(bias, B * H, { s.H2, s.b2, B, H, 1 }),
      mm(nn, s.H2, s.W3, s.Y, B, C, H), elementwise(bias, B * C, { s.Y, s.b3, B, C, 0 }),
      k("softmax_xent"):bind { grid = wl.cdiv(B, 128), block = 128,
                               args = { s.Y, s.labels, s.dY, s.loss, s.cursor, B, C } },
    }
    s.backward = {
      mm(nt, s.H2, s.dY, s.dW3, H, C, B), sum:bind { grid = 1, block = 32,
        args = { s.dY, s.db3, B, C } },
      mm(tn, s.dY, s.W3, s.dH2, B, H, C), elementwise(relu_bw, B * H, { s.dH2, s.H2, B * H }),
      mm(nt, s.H1, s.dH2, s.dW2, H, H, B), sum:bind { grid = wl.cdiv(H, 128), block = 128,
        args = { s.dH2, s.db2, B, H } },
      mm(tn, s.dH2, s.W2, s.dH1, B, H, H), elementwise(relu_bw, B * H, { s.dH1, s.H1, B * H }),
      mm(nt, s.X, s.dH1, s.dW1, D, H, B), sum:bind { grid = wl.cdiv(H, 128), block = 128,
        args = { s.dH1, s.db1, B, H } },
    }
    s.optimizer = {}
    for _, pair in ipairs { { s.W1, s.dW1 }, { s.b1, s.db1 }, { s.W2, s.dW2 }, { s.b2, s.db2 },
                            { s.W3, s.dW3 }, { s.b3, s.db3 } } do
      s.optimizer[#s.optimizer + 1] = elementwise(sgd, #pair[1], { pair[1], pair[2], LR, #pair[1] })
    end
    s.optimizer[#s.optimizer + 1] = k("next_step"):bind { grid = 1, block = 1, args = { s.cursor } }
    return s
  end,

  -- batch i: read from the file into pinned memory, copy to the device asynchronously, unpack
  data = function(i, s, p)
    local B = p.batch
    local first = ((i - 1) * B) % (N - B)
    s.file:seek("set", first * s.record)
    s.pinned:set_bytes(assert(s.file:read(B * s.record)))
    s.R:copy_from(s.pinned, s.stream)
    s.unpack()
    if p.loader == "slow" then wl.sleep(0.02) end -- a loader that cannot keep up
    return s
  end,

  step = function(batch, s)
    wl.phase("forward", function() for _, l in ipairs(s.forward) do l() end end)
    wl.phase("backward", function() for _, l in ipairs(s.backward) do l() end end)
    wl.phase("optimizer", function() for _, l in ipairs(s.optimizer) do l() end end)
  end,

  -- after the loop: the loss, recorded per step on the device, must have fallen
  check = function(p, s)
    local steps = s.cursor:to_host()[1]
    local loss = s.loss:to_host()
    local first, last = loss[1], loss[steps]
    print(("%s: loss %.4f at step 1, %.4f at step %d"):format(p.loader, first, last, steps))
    return last < 0.9 * first, ("loss %.4f -> %.4f over %d steps"):format(first, last, steps)
  end,

  teardown = function(p, s) if s.file then s.file:close() end end,
}
