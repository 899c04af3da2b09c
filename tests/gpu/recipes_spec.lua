-- GPU specs of the recipes scenarios/reduction.lua, softmax.lua and launch_overhead.lua: each
-- runs as a subprocess, its JSON results are read back, and every configuration must have run,
-- passed its check and given plausible numbers. One summary line per recipe in the log.
local h = require "helper"
local json = require "wlrun.json"

-- runs scenarios/NAME.lua with extra arguments; returns the results document
local function run_recipe(name, args)
  local dir = h.tmpdir()
  local out = dir .. "/" .. name .. ".json"
  local r = h.run("scenarios/" .. name .. ".lua --no-progress " .. (args or "") .. " -o "
    .. h.quote(out),
    { cwd = h.source_dir, prefix = "timeout 600" })
  assert.equal(0, r.code, r.stdout .. r.stderr)
  local doc = json.decode(h.read(out))
  assert.is_table(doc, "no results document")
  assert.is_true(doc.complete)
  return doc, r
end

-- every configuration ran and passed its check; returns them indexed by a key of their params
local function all_ok(doc, key)
  local by = {}
  assert.is_true(#doc.configurations > 0)
  for _, c in ipairs(doc.configurations) do
    local what = ("configuration %d (%s)"):format(c.index, json.encode(c.params))
    assert.equal("ok", c.status, what .. ": " .. tostring(c.error or c.reason))
    assert.is_table(c.check, what .. ": no check")
    assert.is_true(c.check.ok, what .. ": check failed: " .. tostring(c.check.message))
    assert.is_true(c.stats.median > 0, what)
    by[key(c.params)] = c
  end
  return by
end

local function gbs(c) return c.metrics.bytes_per_s / 1e9 end

describe("recipes", function()
  h.gpu_it("reduction: every sum is right; the largest n reaches more than half the peak bandwidth",
    function()
    local doc = run_recipe("reduction", "-p n=1048576,16777216,268435456")
    local by = all_ok(doc, function(p) return p.variant .. ":" .. p.n end)
    assert.equal(9, #doc.configurations)
    local parts = {}
    for _, c in ipairs(doc.configurations) do
      assert.equal(4 * c.params.n, c.work.bytes)
      assert.is_true(math.abs(c.metrics.bytes_per_s * c.stats.median / c.work.bytes - 1) < 1e-9)
    end
    for _, v in ipairs { "tree", "atomic", "vec4" } do
      local big = by[v .. ":" .. 268435456]
      parts[#parts + 1] = ("%s %.0f GB/s (%.1f%%, %s)"):format(v, gbs(big),
        100 * big.metrics.peak_bandwidth_fraction,
        big.check.message:match("relative error [^,]*") or "")
      assert.is_true(big.metrics.peak_bandwidth_fraction > 0.5,
        ("%s at 2^28: %.1f%% of peak"):format(v, 100 * big.metrics.peak_bandwidth_fraction))
      assert.is_true(big.metrics.peak_bandwidth_fraction < 1.05,
        "faster than the peak: the bytes are wrong")
      -- more data, more time
      assert.is_true(big.stats.median > by[v .. ":" .. 16777216].stats.median)
    end
    print("\n    reduction, 2^28 floats: " .. table.concat(parts, "; "))
  end)

  h.gpu_it("softmax: every row sampled is right; bf16 moves half the bytes of f32, in less time",
    function()
    local doc = run_recipe("softmax")
    local by = all_ok(doc, function(p) return p.dtype .. ":" .. p.cols end)
    assert.equal(12, #doc.configurations)
    local parts = {}
    for _, cols in ipairs { 256, 512, 1024, 2048, 4096, 8192 } do
      local f, b = by["f32:" .. cols], by["bf16:" .. cols]
      assert.equal(2 * f.params.rows * cols * 4, f.work.bytes)
      assert.equal(f.work.bytes / 2, b.work.bytes)
      for _, c in ipairs { f, b } do
        assert.is_true(c.metrics.peak_bandwidth_fraction > 0.1
          and c.metrics.peak_bandwidth_fraction < 1.05,
          ("%s cols=%d: %.1f%% of peak"):format(c.params.dtype, cols,
            100 * c.metrics.peak_bandwidth_fraction))
      end
      parts[#parts + 1] = ("%d: %.0f/%.0f"):format(cols, gbs(f), gbs(b))
    end
    local best = { f32 = 0, bf16 = 0 }
    for _, c in ipairs(doc.configurations) do
      best[c.params.dtype] = math.max(best[c.params.dtype], c.metrics.peak_bandwidth_fraction)
    end
    assert.is_true(best.f32 > 0.4, ("f32 best %.1f%% of peak"):format(100 * best.f32))
    assert.is_true(best.bf16 > 0.3, ("bf16 best %.1f%% of peak"):format(100 * best.bf16))
    assert.is_true(by["bf16:8192"].stats.median < by["f32:8192"].stats.median,
      "bf16 not faster than f32 at 8192 columns")
    print(
      ("\n    softmax GB/s f32/bf16 by cols: %s; best %.1f%% / %.1f%% of peak; "
      .. "checks: %s / %s"):format(
      table.concat(parts, ", "), 100 * best.f32, 100 * best.bf16,
        by["f32:8192"].check.message:match("^[^(]*"),
      by["bf16:8192"].check.message:match("^[^(]*")))
  end)

  h.gpu_it(
    "launch_overhead: every launch counted; a graph of 100 tiny kernels beats 100 eager launches",
    function()
    local doc = run_recipe("launch_overhead")
    local by = all_ok(doc, function(p) return p.launch .. ":" .. p.chain end)
    assert.equal(6, #doc.configurations)
    local parts = {}
    for _, chain in ipairs { 1, 10, 100 } do
      local e, g = by["eager:" .. chain], by["graph:" .. chain]
      assert.equal("cold", e.mode)
      assert.equal("cold", g.mode)
      parts[#parts + 1] = ("chain %d: eager %.2f us, graph %.2f us per kernel"):format(chain,
        e.stats.median / chain * 1e6, g.stats.median / chain * 1e6)
    end
    local e100, g100 = by["eager:100"].stats.median, by["graph:100"].stats.median
    assert.is_true(g100 < e100, ("chain 100: graph %.1f us, eager %.1f us"):format(g100 * 1e6,
      e100 * 1e6))
    assert.is_true(e100 > by["eager:1"].stats.median, "a chain of 100 no slower than one launch")
    assert.is_true(g100 / 100 < 10e-6, "more than 10 us per graph node")
    print("\n    launch_overhead: " .. table.concat(parts, "; "))
  end)
end)
