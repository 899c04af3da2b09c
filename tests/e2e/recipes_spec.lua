-- End-to-end, no GPU needed: the recipes scenarios/reduction.lua, softmax.lua and
-- launch_overhead.lua list their configurations, compile every kernel for sm_90 without an
-- NVRTC warning, and bind every launch (--compile-only checks the arguments).
local h = require "helper"

local root = h.source_dir:sub(1, 1) == "/" and h.source_dir
  or (os.getenv("PWD") .. "/" .. h.source_dir)

local recipes = {
  reduction = {
    configurations = 27, -- 3 variants x n = 2^20 .. 2^28
    first = "n=1048576, variant=tree",
    last = "n=268435456, variant=vec4",
    kernels = { reduce_tree = 3, reduce_atomic = 3, zero_scalar = 1, reduce_vec4 = 5,
      reduce_reference = 3 },
  },
  softmax = {
    configurations = 12, -- 2 dtypes x 6 (cols, rows) pairs
    first = "dtype=f32, cols=256, rows=262144",
    last = "dtype=bf16, cols=8192, rows=8192",
    kernels = { ["softmax<float>"] = 4, ["softmax<__nv_bfloat16>"] = 4 },
  },
  launch_overhead = {
    configurations = 6, -- chain 1, 10, 100 x eager, graph
    first = "chain=1, launch=eager",
    last = "chain=100, launch=graph",
    kernels = { tiny = 2 },
  },
}

local function count(t)
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n
end

local function escape(s) return (s:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?<>]", "%%%0")) end

describe("the recipes without a GPU", function()
  for _, name in ipairs { "reduction", "softmax", "launch_overhead" } do
    local want = recipes[name]
    it(name .. " lists its " .. want.configurations .. " configurations", function()
      local r = h.run("scenarios/" .. name .. ".lua --dry-run", { cwd = h.source_dir })
      assert.equal(0, r.code, r.stderr)
      assert.matches("^" .. name .. ": " .. want.configurations .. " configurations %("
        .. want.configurations
        .. " in the space, 0 pruned by where, 0 by %-%-filter%)\n", r.stdout)
      assert.matches("\n   1  " .. escape(want.first) .. "\n", r.stdout)
      assert.matches(("\n%4d  "):format(want.configurations) .. escape(want.last) .. "\n$",
        r.stdout)
    end)

    it(name .. " compiles its kernels for sm_90 and binds every launch", function()
      local cache = h.tmpdir()
      local r = h.run("scenarios/" .. name .. ".lua --compile-only --arch sm_90 --cache-dir "
        .. h.quote(cache),
        { cwd = h.source_dir })
      assert.equal(0, r.code, r.stderr)
      assert.equal("", r.stderr)
      assert.matches("compile%-only: " .. count(want.kernels) .. " distinct kernels? from",
        r.stdout)
      for kernel, params in pairs(want.kernels) do
        assert.matches("\n  " .. escape(kernel) .. "%s+sm_90%s+nvrtc [%d.]+%s+" .. params
          .. " params", r.stdout)
      end
    end)
  end

  it("every recipe kernel compiles without an NVRTC warning", function()
    local lines = { 'local wl = require "wlrun"', "local logs = {}" }
    for file, names in pairs {
      ["reduce.cu"] = { "reduce_tree", "reduce_atomic", "zero_scalar", "reduce_vec4",
        "reduce_reference" },
      ["softmax.cu"] = { "softmax<float>", "softmax<__nv_bfloat16>" },
      ["tiny.cu"] = { "tiny" },
      ["gemm_bf16.cu"] = { "gemm_bf16_mma<128, 4>", "gemm_bf16_mma<256, 3>" },
      ["gemm_check.cu"] = { "gemm_check_rows<float>", "gemm_check_rows<__nv_bfloat16>" },
    } do
      for _, kname in ipairs(names) do
        lines[#lines + 1] = ("do local k = wl.kernel { file = %q, name = %q } "
          .. "if k.log ~= '' then print('WARNING ' .. k.name .. ': ' .. k.log) else "
            .. "print('clean ' .. k.name) end end")
          :format(root .. "/scenarios/kernels/" .. file, kname)
      end
    end
    local r = h.run_script(table.concat(lines, "\n") .. "\n",
      "--compile-only --arch sm_90 --no-cache")
    assert.equal(0, r.code, r.stderr)
    assert.not_matches("WARNING", r.stdout)
    local clean = 0
    for _ in r.stdout:gmatch("clean ") do clean = clean + 1 end
    assert.equal(12, clean, r.stdout)
  end)

  it(
    "gemm_sweep skips the tensor-core kernel where K is not a multiple of 8, and cuBLAS "
    .. "binds any K", function()
    local dir = h.tmpdir()
    local r = h.run(h.quote(root .. "/scenarios/gemm_sweep.lua")
      .. " --compile-only --arch sm_90 -p K=1000,1004 -o r.json"
      .. " --filter "
        .. h.quote("M == 1024 and (variant == 'mma_bf16' or variant == 'cublas_bf16')"),
        { cwd = dir })
    assert.equal(0, r.code, r.stderr)
    local status = {}
    for _, c in ipairs(require("wlrun.results").load(dir .. "/r.json").configurations) do
      status[c.params.variant .. " " .. c.params.K] = c.status
        .. (c.reason and (": " .. c.reason) or "")
    end
    assert.same({ ["mma_bf16 1000"] = "compiled",
      ["mma_bf16 1004"] = "skipped: mma_bf16 needs N and K multiples of 8 (16-byte rows)",
                  ["cublas_bf16 1000"] = "compiled", ["cublas_bf16 1004"] = "compiled" }, status)
  end)

  it("reduction skips vec4 where n is not a multiple of 4, and compiles the rest", function()
    local r = h.run("scenarios/reduction.lua --compile-only --arch sm_90 --no-cache -p n=1001",
      { cwd = h.source_dir })
    assert.equal(0, r.code, r.stderr)
    assert.matches("compile%-only: 4 distinct kernels", r.stdout)
    assert.not_matches("reduce_vec4", r.stdout)
  end)

  it("softmax binds rows that are not whole 16-byte vectors (the scalar path)", function()
    local r = h.run("scenarios/softmax.lua --compile-only --arch sm_90 --no-cache"
      .. " -p cols=3,100,1001,4097,6000,49152 -p rows=7,5,3,2,2,1", { cwd = h.source_dir })
    assert.equal(0, r.code, r.stderr)
    assert.matches("compile%-only: 2 distinct kernels from 12 wl.kernel calls", r.stdout)
  end)
end)
