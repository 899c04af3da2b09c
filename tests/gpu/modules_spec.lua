-- GPU specs of precompiled code (docs/kernels.md, "Precompiled code"): a cubin, a fatbin and
-- PTX built by nvcc (CMake target wlrun_modules, from tests/fixtures/modules/kernels.cu) loaded
-- with wl.kernel{file = ...}, run, and their results checked; a cubin for another
-- architecture refused by name. Each prints what it loaded (arch, registers) for the GPU log.
local h = require "helper"
local wl = require "wlrun"

local M = h.modules
local N = 1000

-- runs y = a * x (scale) or y = a * x + y (axpy) through k and checks every element
local function run_and_check(k, kind)
  local x = wl.tensor { N, dtype = "f32", init = wl.arange() }
  local y = wl.tensor { N, dtype = "f32", init = 1 }
  local launch = k:bind { grid = wl.cdiv(N, 128), block = 128, args = { y, x, 3.0, N } }
  launch()
  wl.sync()
  local got = y:to_host():totable()
  for i = 1, N do
    local want = kind == "axpy" and 3 * (i - 1) + 1 or 3 * (i - 1)
    assert.equal(want, got[i], ("element %d of %s"):format(i, k.name))
  end
  local a = k.attributes
  print(
    ("  %-14s %-12s %-10s %3d registers, binary version %d, ptx version %d, "
    .. "occupancy(128) %.2f"):format(
    k.name, k.source:match("[^/]*$"), k.arch, a.registers, a.binary_version, a.ptx_version,
      k:occupancy(128).occupancy))
end

describe("precompiled modules on a GPU", function()
  h.gpu_it("runs an extern \"C\" kernel and a template from nvcc's cubin", function()
    run_and_check(wl.kernel { file = M .. "/kernels.cubin", name = "scale" }, "scale")
    run_and_check(wl.kernel { file = M .. "/kernels.cubin", name = "axpy<float>" }, "axpy")
  end)

  h.gpu_it("runs a kernel from a fatbin of sm_80 and sm_90 (the driver picks sm_90)", function()
    run_and_check(wl.kernel { file = M .. "/kernels.fatbin", name = "scale" }, "scale")
  end)

  h.gpu_it("runs a kernel from PTX for compute_80, JIT-compiled by the driver", function()
    run_and_check(wl.kernel { file = M .. "/kernels.ptx", name = "axpy<float>" }, "axpy")
  end)

  h.gpu_it("runs with declared params, and a struct by value sized by the cubin", function()
    run_and_check(wl.kernel { file = M .. "/kernels.cubin", name = "scale",
                              params = "float* y, const float* x, float a, int n" }, "scale")
    local k = wl.kernel { file = M .. "/kernels.cubin", name = "shift" }
    local y = wl.tensor { 64, dtype = "i32" }
    k:bind { grid = 1, block = 64, args = { y, string.pack("<di4xxxx", 2.0, 7), 64 } }()
    local got = y:to_host():totable()
    for i = 1, 64 do assert.equal(2 * (i - 1) + 7, got[i]) end
  end)

  h.gpu_it("refuses a cubin for sm_80 on this device, naming both", function()
    local ok, err = pcall(wl.kernel, { file = M .. "/kernels_sm80.cubin", name = "scale" })
    assert.is_false(ok)
    print("  " .. err.message)
    assert.equal("compile", err.kind)
    assert.matches("built for sm_80; this device is sm_%d+", err.message)
  end)
end)

describe("kernels compiled by nvcc through wl.kernel on a GPU", function()
  h.gpu_it("runs a template and an extern \"C\" kernel that nvcc compiled, as NVRTC's do",
    function()
    local src = wl.source(h.source_dir .. "/tests/fixtures/modules/kernels.cu")
    for _, compiler in ipairs { "nvcc", "nvrtc" } do
      run_and_check(wl.kernel { src, name = "scale", compiler = compiler }, "scale")
      run_and_check(wl.kernel { src, name = "axpy<float>", compiler = compiler }, "axpy")
    end
    local k = wl.kernel { src, name = "axpy<float>", compiler = "nvcc" }
    assert.equal("nvcc", k.compiler)
    assert.equal("sm_90", k.arch)
  end)
end)
