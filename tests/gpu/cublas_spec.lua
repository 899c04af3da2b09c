-- GPU specs of wl.cublas.gemm and wl.cublaslt.matmul (docs/cublas.md):
-- results against a host reference for each dtype and compute type, transposes,
-- leading dimensions, alpha and beta; every timing mode, graph capture included; and the
-- TFLOP/s of the GEMMs users compare with, printed (SGEMM 4096^3; TF32, BF16, FP16 8192^3).
-- Elsewhere each is reported as pending by name.
local h = require "helper"
local wl = require "wlrun"

local LIBS = { { "cublas.gemm", function(o) return wl.cublas.gemm(o) end },
               { "cublaslt.matmul", function(o) return wl.cublaslt.matmul(o) end } }

-- relative error allowed against sum |alpha a b| + |beta c|: the rounding of the inputs (tf32),
-- of the accumulation (fp16) and of the output (f16, bf16)
local TOLERANCE = { ["f64 fp64"] = 1e-12, ["f32 fp32"] = 1e-5, ["f32 tf32"] = 4e-3,
  ["f16 fp32"] = 2e-3,
                    ["f16 fp16"] = 2e-2, ["bf16 fp32"] = 1e-2 }

-- element (r, c) of a row-major matrix with leading dimension ld, in a flat table
local function at(t, r, c, ld) return t[(r - 1) * ld + c] end

-- checks C = alpha op(A) op(B) + beta C0 computed by make with options o (the tensors are made
-- here)
local function check_gemm(make, dtype, compute, o)
  local m, n, k = o.m, o.n, o.k
  local arows, acols = o.transa and k or m, o.transa and m or k
  local brows, bcols = o.transb and n or k, o.transb and k or n
  local lda, ldb, ldc = o.lda or acols, o.ldb or bcols, o.ldc or n
  local A = wl.tensor { (arows - 1) * lda + acols, dtype = dtype, init = wl.uniform(-1, 1) }
  local B = wl.tensor { (brows - 1) * ldb + bcols, dtype = dtype, init = wl.uniform(-1, 1) }
  local C = wl.tensor { (m - 1) * ldc + n, dtype = dtype, init = wl.uniform(-1, 1) }
  local a, b, c0 = A:to_host():totable(), B:to_host():totable(), C:to_host():totable()
  local g = make { a = A, b = B, c = C, m = m, n = n, k = k, transa = o.transa, transb = o.transb,
    alpha = o.alpha,
                   beta = o.beta, lda = o.lda, ldb = o.ldb, ldc = o.ldc, compute = compute }
  g()
  wl.sync()
  local c = C:to_host():totable()
  local alpha, beta, worst = o.alpha or 1, o.beta or 0, 0
  for i = 1, m do
    for j = 1, n do
      local sum, scale = 0, 0
      for p = 1, k do
        local x = o.transa and at(a, p, i, lda) or at(a, i, p, lda)
        local y = o.transb and at(b, j, p, ldb) or at(b, p, j, ldb)
        sum, scale = sum + x * y, scale + math.abs(x * y)
      end
      local old = at(c0, i, j, ldc)
      local want = alpha * sum + beta * old
      local err = math.abs(at(c, i, j, ldc) - want) / (
        math.abs(alpha) * scale + math.abs(beta * old) + 1e-30)
      worst = math.max(worst, err)
    end
  end
  -- the padding between rows of C is not written
  for i = 1, m - 1 do
    for j = n + 1, ldc do assert.equal(at(c0, i, j, ldc), at(c, i, j, ldc)) end
  end
  A:free(); B:free(); C:free()
  return worst
end

local CASES = { { "f32", "fp32" }, { "f32", "tf32" }, { "f64", "fp64" }, { "f16", "fp32" },
  { "f16", "fp16" },
                { "bf16", "fp32" } }

describe("cuBLAS and cuBLASLt GEMM on a GPU", function()
  h.gpu_it("a block of a larger matrix, given as a strided view with the parent's row length as ld",
    function()
    local big = wl.tensor { 64, 64, init = wl.uniform(-1, 1) }
    local B, C = wl.tensor { 32, 8, init = wl.uniform(-1, 1) }, wl.tensor { 16, 8 }
    local all, b = big:to_host():totable(), B:to_host():totable()
    for _, lib in ipairs(LIBS) do
      lib[2] { a = big:view { offset = 2 * 64 + 3, shape = { 16, 32 }, strides = { 64, 1 } }, b = B,
        c = C,
               m = 16, n = 8, k = 32, lda = 64 }()
      wl.sync()
      local c, worst = C:to_host():totable(), 0
      for i = 1, 16 do
        for j = 1, 8 do
          local want = 0
          for p = 1, 32 do want = want + at(all, 2 + i, 3 + p, 64) * at(b, p, j, 8) end
          worst = math.max(worst, math.abs(at(c, i, j, 8) - want) / 32)
        end
      end
      print(
        ("\n    %s over rows 3-18, columns 4-35 of a 64x64 matrix: worst scaled error %.2g"):format(
        lib[1], worst))
      assert.is_true(worst < 1e-5, lib[1] .. ": " .. worst)
    end
  end)

  h.gpu_it("finds the libraries", function()
    local lib = assert(wl.cublas.library())
    local lt = assert(wl.cublaslt.library())
    print(("\n    cuBLAS %d at %s; cuBLASLt %d at %s"):format(lib.version, lib.path, lt.version,
      lt.path))
  end)

  h.gpu_it(
    "computes row-major C = alpha op(A) op(B) + beta C for each dtype, compute, transpose and ld",
    function()
    local shapes = {
      { m = 37, n = 29, k = 23 },
      { m = 37, n = 29, k = 23, transa = true },
      { m = 37, n = 29, k = 23, transb = true },
      { m = 37, n = 29, k = 23, transa = true, transb = true, alpha = -1.5, beta = 0.5 },
      { m = 16, n = 24, k = 40, lda = 43, ldb = 27, ldc = 30, alpha = 0.25, beta = 2 },
    }
    for _, lib in ipairs(LIBS) do
      for _, case in ipairs(CASES) do
        local key = case[1] .. " " .. case[2]
        for _, o in ipairs(shapes) do
          local worst = check_gemm(lib[2], case[1], case[2], o)
          assert.is_true(worst <= TOLERANCE[key], (
            "%s %s %dx%dx%d%s%s: relative error %.3g above %.3g"):format(
            lib[1], key, o.m, o.n, o.k, o.transa and " transa" or "", o.transb and " transb" or "",
              worst,
            TOLERANCE[key]))
        end
      end
    end
  end)

  h.gpu_it("is timed in every mode and captured in a graph, leaving the right result", function()
    for _, lib in ipairs(LIBS) do
      local n = 256
      local A = wl.tensor { n, n, init = wl.uniform(-1, 1) }
      local I = wl.tensor { n, n }
      local eye = wl.host_tensor { n, n }
      for i = 1, n do eye[(i - 1) * n + i] = 1 end
      I:copy_from(eye)
      local C = wl.tensor { n, n }
      -- C = A I = A, whatever the mode
      local g = lib[2] { a = A, b = I, c = C, m = n, n = n, k = n }
      for _, mode in ipairs { "cold", "batch", "graph", "host" } do
        C:fill(0)
        local r = wl.bench(g, { mode = mode, warmup = 3, iters = 10 })
        assert.equal(mode, r.mode)
        assert.is_true(r.stats.median > 0)
        assert.same(A:to_host():totable(), C:to_host():totable())
      end
      local graph = wl.graph(function() g() g() end)
      C:fill(0)
      graph:launch()
      wl.sync()
      assert.same(A:to_host():totable(), C:to_host():totable())
    end
  end)

  h.gpu_it(
    "made inside a timed body, its workspace is an allocation there (warning alloc-in-measure)",
    function()
    local A, B, C = wl.tensor { 64, 64 }, wl.tensor { 64, 64 }, wl.tensor { 64, 64 }
    local r = wl.bench(function() wl.cublas.gemm { a = A, b = B, c = C, m = 64, n = 64,
      k = 64 }() end,
                       { warmup = 2, iters = 5 })
    local codes = {}
    for _, w in ipairs(r.warnings) do codes[#codes + 1] = w.code end
    assert.truthy(table.concat(codes, " "):find("alloc-in-measure", 1, true),
      table.concat(codes, " "))
  end)

  h.gpu_it("prints TFLOP/s: SGEMM 4096^3, TF32, BF16 and FP16 8192^3, graph and cold mode",
    function()
    local rows = { { "f32", "fp32", 4096 }, { "f32", "tf32", 8192 }, { "bf16", "fp32", 8192 },
      { "f16", "fp32", 8192 } }
    local d = wl.device()
    print(("\n    %s: TFLOP/s (median)"):format(d.name))
    local bf16
    for _, row in ipairs(rows) do
      local dtype, compute, n = row[1], row[2], row[3]
      local A = wl.tensor { n, n, dtype = dtype, init = wl.uniform(-1, 1) }
      local B = wl.tensor { n, n, dtype = dtype, init = wl.uniform(-1, 1) }
      local C = wl.tensor { n, n, dtype = dtype }
      for _, lib in ipairs(LIBS) do
        local g = lib[2] { a = A, b = B, c = C, m = n, n = n, k = n, compute = compute }
        local rate = {}
        for _, mode in ipairs { "graph", "cold" } do
          local r = wl.bench(g, { mode = mode, warmup = 10, iters = 50 })
          rate[mode] = 2 * n ^ 3 / r.stats.median / 1e12
        end
        print(("    %-16s %-4s %-4s %d^3: graph %7.1f, cold %7.1f"):format(lib[1], dtype, compute,
          n, rate.graph,
          rate.cold))
        if dtype == "bf16" and lib[1] == "cublas.gemm" then bf16 = rate.graph end
        if dtype ~= "f32" or compute == "tf32" then
          assert.is_true(rate.graph > 150, lib[1] .. " " .. dtype .. ": tensor cores not in use?")
        end
      end
      A:free(); B:free(); C:free()
    end
    print(("    target: bf16 cuBLAS 8192^3 above 700 TFLOP/s: %s (%.1f)"):format(bf16 > 700
      and "met" or "MISSED", bf16))
  end)
end)

-- wl.cublas.prepare in processes of their own: cuBLAS and cuBLASLt are loaded and warm in this one
describe("cuBLAS's first call of each kind asked ahead (wl.cublas.prepare)", function()
  -- C = A B with A, B of ones: every element of C is k
  local GEMM = [[
local function ones_gemm(dtype, compute)
  local A = wl.tensor { 64, 32, dtype = dtype, init = wl.fill(1) }
  local B = wl.tensor { 32, 16, dtype = dtype, init = wl.fill(1) }
  local C = wl.tensor { 64, 16, dtype = dtype }
  wl.cublas.gemm { a = A, b = B, c = C, m = 64, n = 16, k = 32, compute = compute }()
  local c = C:to_host():totable()
  for i = 1, #c do assert(c[i] == 32, ("C[%d] = %s"):format(i, c[i])) end
  return "ok"
end
]]

  local function script(body) return 'local wl = require "wlrun"\n' .. GEMM .. body end

  h.gpu_it(
    "asks each kind once on a thread; the GEMMs after it are right; prepared() says what it did",
    function()
    local r = h.run_script(script([[
print("started", wl.cublas.prepare { { dtype = "f32" }, { dtype = "f32", compute = "tf32" }, { dtype = "bf16" }, { dtype = "f32" } })
-- nothing new: false at once, the thread still at work (it takes 100 ms and more)
print("again", wl.cublas.prepare { { dtype = "bf16" }, { dtype = "f32", compute = "fp32" } }, wl.cublas.prepared().working)
print(ones_gemm("f32", "fp32"), ones_gemm("f32", "tf32"), ones_gemm("bf16"), ones_gemm("f16", "fp16"))
local p = wl.cublas.prepared()
print(("asked %d prepared %d running %s working %s why %s seconds %s"):format(p.asked, p.prepared, p.running,
  p.working, p.why, p.seconds > 0 and p.seconds < 10 and p.waited >= 0))
]]), "")
    assert.equal(0, r.code, r.stderr)
    assert.equal("", r.stderr)
    assert.matches("^started\ttrue\nagain\tfalse\ttrue\nok\tok\tok\tok\n"
      .. "asked 3 prepared 3 running false working false why nil seconds true\n", r.stdout)
  end)

  h.gpu_it("asked before any context, the thread makes it; the device it took stays the process's",
    function()
    local r = h.run_script(script([[
print("started", wl.cublas.prepare { { dtype = "f32" } })
local other = wl.device_count() > 1 and 1 or nil
print("other", other == nil or not pcall(wl.select_device, other), pcall(wl.select_device, 0))
print(ones_gemm("f32", "fp32"), wl.cublas.prepared().prepared, wl.device().index)
]]), "")
    assert.equal(0, r.code, r.stderr)
    assert.matches("^started\ttrue\nother\ttrue\ttrue\nok\t1\t0\n", r.stdout)
  end)

  h.gpu_it("a measurement taken while the thread works says so in a note; one after it does not",
    function()
    local r = h.run_script(script([[
local k = wl.kernel { 'extern "C" __global__ void nothing() {}', name = "nothing" }:bind { grid = 1, block = 1 }
wl.cublas.prepare { { dtype = "f32" }, { dtype = "bf16" }, { dtype = "f16" } }
local during = wl.bench(k, { mode = "cold", warmup = 1, iters = 20 })
while wl.cublas.prepared().working do wl.sleep(0.01) end
local after = wl.bench(k, { mode = "cold", warmup = 1, iters = 20 })
-- the prepare thread's note among the others (a cold sample's note of its launch cost)
local function theirs(notes)
  local n, text = 0, nil
  for _, s in ipairs(notes) do
    if s:find("wl.cublas.prepare's thread", 1, true) then n, text = n + 1, s end
  end
  return n, text
end
local n1, text = theirs(during.notes)
print(n1, text, (theirs(after.notes)))
local p = wl.cublas.prepared() -- a thread at its end is joined: the account is there
print(p.asked, p.prepared, p.running)
]]), "")
    assert.equal(0, r.code, r.stderr)
    assert.matches(
      "^1\tmeasured while wl%.cublas%.prepare's thread asked cuBLAS's heuristics: the host's "
      .. "enqueue times may read higher %(docs/cublas%.md%); the GPU's are not "
      .. "touched\t0\n3\t3\tfalse\n", r.stdout)
  end)

  h.gpu_it(
    "a process that ends while the thread works ends as it would: returning, failing, os.exit",
    function()
    -- at once (the thread in dlopen) and later (inside cuBLASLt's heuristics, whose own exit
    -- handlers would run first): every end waits for the thread, and none crashes
    for _, delay in ipairs { 0, 0.05, 0.12, 0.2 } do
      for _, case in ipairs { { "", 0, "^$" }, { "error('stop here')", 1,
        "script%.lua:%d+: stop here" },
                              { "os.exit(3)", 3, "^$" }, { "os.exit(4, true)", 4, "^$" },
                                { "os.exit(false)", 1, "^$" } } do
        local r = h.run_script(
          script(("wl.cublas.prepare { { dtype = 'f32' }, { dtype = 'bf16' }, { dtype = 'f16' } }\n"
          .. "wl.sleep(%s)\n%s"):format(delay, case[1])), "")
        local what = ("%s after %s s"):format(case[1], delay)
        assert.equal("exit", r.how, what .. ": ended by a signal: " .. r.stderr)
        assert.equal(case[2], r.code, what .. ": " .. r.stderr)
        assert.matches(case[3], r.stderr, nil, false)
      end
    end
  end)

  h.gpu_it("a cuBLASLt that does not load is kept in prepared().why and changes nothing else",
    function()
    local r = h.run_script(script([[
print(wl.cublas.prepare { { dtype = "bf16" } })
print(ones_gemm("bf16"))
local p = wl.cublas.prepared()
print(p.asked, p.prepared, p.why)
print(pcall(wl.cublaslt.matmul, {}))
]]), "", { env = "WLRUN_CUBLASLT=/nonexistent.so" })
    assert.equal(0, r.code, r.stderr)
    assert.matches("^true\nok\n1\t0\tcuBLASLt: WLRUN_CUBLASLT=/nonexistent%.so does not load",
      r.stdout)
  end)

  h.gpu_it(
    "the GEMM recipe asks for its cuBLAS kinds in prepare; --no-prepare leaves them to the "
    .. "first call", function()
    for _, args in ipairs { "", "--no-prepare" } do
      local dir = h.tmpdir()
      local r = h.run(h.quote(h.source_dir .. "/scenarios/gemm_sweep.lua") .. " -q -o "
        .. h.quote(dir .. "/r.json")
        .. " -p variant=cublas_bf16,cublas_tf32 --filter 'M == 1024 and K == 1024' --max-time 0.2 "
          .. args)
      assert.equal(0, r.code, r.stderr)
      local doc = require("wlrun.json").decode(h.read(dir .. "/r.json"))
      assert.equal(2, #doc.configurations)
      for _, c in ipairs(doc.configurations) do assert.equal("ok", c.status) end
      if args == "" then assert.is_number(doc.wall.prepare) else assert.is_nil(doc.wall.prepare) end
      assert.equal(args == "", doc.settings.run.prepare)
    end
  end)
end)
