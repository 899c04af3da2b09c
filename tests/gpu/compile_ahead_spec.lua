-- GPU specs of kernels compiled ahead (docs/kernels.md, "Compiled ahead"): with no --arch, the
-- target is the device's, asked of the driver before any CUDA context; the GEMM sweep with an
-- empty cache, its kernels compiled ahead by its prepare, measures every configuration.
local h = require "helper"
local json = require "wlrun.json"

local function entries(dir)
  local p = io.popen("ls " .. h.quote(dir) .. " | grep -c 'wlk$'")
  local n = tonumber(p:read("a"))
  p:close()
  return n
end

describe("kernels compiled ahead on a device", function()
  h.gpu_it("takes the device's architecture without a context and compiles for it", function()
    local cache = h.tmpdir()
    local r = h.run_script([[
local wl = require "wlrun"
local src = 'extern "C" __global__ void one(float* p) { p[0] = 1.0f; }\n'
  .. 'extern "C" __global__ void two(float* p) { p[0] = 2.0f; }\n'
print("given", wl.prepare_kernels { { src, name = "one" }, { src, name = "two" } })
for _ = 1, 600 do
  local p = io.popen("ls " .. arg[1] .. " | grep -c 'wlk$'")
  local n = tonumber(p:read("a"))
  p:close()
  if n >= 2 then break end
  os.execute("sleep 0.05")
end
local x = wl.tensor { 1 }
for _, name in ipairs { "one", "two" } do
  local k = wl.kernel { src, name = name }
  k:bind { grid = 1, block = 1, args = { x } }()
  wl.sync()
  print(name, k.arch == wl.device().arch, k.from_cache,
    x:to_host():totable()[1])
end
local s = wl.compile_stats()
print(("compiles=%d hits=%d ahead=%d"):format(s.compiles, s.cache_hits, s.ahead))
]], "--cache-dir " .. h.quote(cache) .. " -- " .. h.quote(cache))
    assert.equal(0, r.code, r.stderr)
    assert.equal("given\t2\none\ttrue\tfalse\t1.0\ntwo\ttrue\tfalse\t2.0\n"
      .. "compiles=2 hits=0 ahead=2\n", r.stdout)
    assert.equal(2, entries(cache))
  end)

  h.gpu_it("runs the GEMM sweep from an empty cache, its kernels compiled ahead", function()
    local cache, out = h.tmpdir(), os.tmpname() .. ".json"
    local r = h.run(("%s/scenarios/gemm_sweep.lua --filter 'M == 1024 and K == 1024' "
      .. "--max-time 0.2s --quiet --cache-dir %s -o %s"):format(h.source_dir, h.quote(cache),
      h.quote(out)))
    assert.equal(0, r.code, r.stderr)
    local f = assert(io.open(out))
    local doc = json.decode(f:read("a"))
    f:close()
    os.remove(out)
    assert.equal(7, #doc.configurations)
    for _, e in ipairs(doc.configurations) do assert.equal("ok", e.status, e.error) end
    assert.equal(6, entries(cache)) -- the 6 kernels of the sweep's variants and checks
    print(("  gemm_sweep (7 configurations) from an empty cache: wall prepare %.3f s, device "
      .. "%.3f s, configurations %.3f s"):format(doc.wall.prepare or 0, doc.wall.device or 0,
      doc.wall.configurations or 0))
  end)
end)
