-- The bootstrap, the rank sum and the geometric mean's interval of `wlrun compare` in C
-- (core.stats.bootstrap_ratio, rank_sum, geomean_interval; src/base/compare_stats.c) against the
-- Lua
-- definitions they replaced (wlrun.compare.stats.use_c = false):
-- the same verdicts, intervals, p-values and replicates, to the last bit, on the results
-- fixtures and on random sample sets; and the samples C leaves to Lua.
local S = require "wlrun.compare.stats"
local document = require "wlrun.compare.document"
local render = require "wlrun.compare.render"
local cli = require "wlrun.tools.cli"
local core = require "wlrun.core"
local h = require "helper"

local fixtures = h.source_dir .. "/tests/fixtures/results/"

local function with_c(use_c, f, ...)
  S.use_c = use_c
  local ok, a, b = pcall(f, ...)
  S.use_c = true
  assert(ok, a)
  return a, b
end

-- both paths' answers, which must be equal (NaN equal to NaN)
local function both(f, ...)
  return with_c(false, f, ...), with_c(true, f, ...)
end

local function same(a, b, where)
  if type(a) == "table" and type(b) == "table" then
    for k, v in pairs(a) do same(v, b[k], where .. "." .. tostring(k)) end
    for k in pairs(b) do assert(a[k] ~= nil, where .. "." .. tostring(k)
      .. ": only on the C path") end
    return
  end
  if a ~= a and b ~= b then return end
  assert(a == b, ("%s: Lua %s, C %s"):format(where, tostring(a), tostring(b)))
end

-- a document's samples scaled by `factor` and a deterministic wobble: a NEW to compare with
local function perturbed(doc, factor, wobble)
  local out = cli.load("compare", doc)
  for i, c in ipairs(out.configurations) do
    if type(c.samples) == "table" then
      for j, v in ipairs(c.samples) do c.samples[j] = v * factor * (
        1 + wobble * math.sin(i * 13 + j)) end
    end
  end
  return out
end

local function random_samples(rng, n, center, spread, step)
  local xs = {}
  for i = 1, n do
    local v = center * (1 + spread * (rng:uniform() - 0.5))
    if step then v = math.floor(v / step + 0.5) * step end -- ties
    xs[i] = v
  end
  return xs
end

describe("compare in C and in Lua", function()
  it("the C path is on by default and is the C module", function()
    assert.is_true(S.use_c)
    assert.is_function(core.stats.bootstrap_ratio)
    assert.is_function(core.stats.rank_sum)
  end)

  it("gives the same comparison documents on the results fixtures", function()
    local files = { "h200-bandwidth.json", "metrics-base.json", "metrics-new.json", "sample.json" }
    local compared = 0
    for _, bf in ipairs(files) do
      local news = { perturbed(fixtures .. bf, 1, 0), perturbed(fixtures .. bf, 1.03, 0.01),
        perturbed(fixtures .. bf, 0.9, 0.05), perturbed(fixtures .. bf, 1.005, 0.002) }
      for _, nf in ipairs(files) do news[#news + 1] = cli.load("compare", fixtures .. nf) end
      for k, new in ipairs(news) do
        for _, opts in ipairs { {}, { noise = 0.05, seed = -7, resamples = 500, fail_above = 0.01,
          alpha = 0.05 } } do
          local a, b = both(function() return document.compare(cli.load("compare", fixtures .. bf),
            new, opts) end)
          same(a, b, ("%s vs NEW %d"):format(bf, k))
          assert.equal(render.render(a, "json"), render.render(b, "json"))
          compared = compared + #a.configurations
        end
      end
    end
    assert.is_true(compared > 100, "compared " .. compared)
  end)

  it("gives the same numbers and replicates on random sample sets", function()
    local rng = S.rng(2026)
    local verdicts, logs = {}, {}
    for trial = 1, 150 do
      local n1, n2 = 1 + rng:index(trial % 3 == 0 and 300 or 40),
        1 + rng:index(trial % 3 == 0 and 300 or 40)
      local step = trial % 2 == 0 and 1e-3 or nil
      local base = random_samples(rng, n1, 1, 0.2, step)
      local new = random_samples(rng, n2, 1 + 0.1 * (rng:uniform() - 0.5), 0.2 * rng:uniform(),
        step)
      local opts = { seed = S.derive_seed(trial, "t" .. trial),
        resamples = ({ 100, 2000, 777 })[trial % 3 + 1],
        confidence = ({ 0.95, 0.9, 0.99 })[trial % 3 + 1] }
      local a, b = both(S.compare_samples, base, new, opts)
      same(a, b, "trial " .. trial)
      assert.equal(opts.resamples, #b.log_replicates)
      verdicts[b.verdict] = (verdicts[b.verdict] or 0) + 1
      logs[#logs + 1] = b.log_replicates -- of unequal lengths: the shortest counts
    end
    local a, b = both(function() return { S.geomean_interval(logs, 0.9) } end)
    same(a, b, "geometric mean's interval")
    assert.is_true(b[1] < b[2])
    -- the trials reach more than one verdict
    local kinds = 0
    for _ in pairs(verdicts) do kinds = kinds + 1 end
    assert.is_true(kinds >= 3)
  end)

  it("leaves to Lua the samples it does not take, with the same answers", function()
    assert.is_nil(core.stats.bootstrap_ratio({ 1, 0, 2 }, { 1, 2 }, 100, 0.95, 1))
    assert.is_nil(core.stats.bootstrap_ratio({ 1, 2 }, { 1, -1 }, 100, 0.95, 1))
    assert.is_nil(core.stats.bootstrap_ratio({ 1, 1 / 0 }, { 1, 2 }, 100, 0.95, 1))
    assert.is_nil(core.stats.rank_sum({ 1, 0 / 0 }, { 1, 2 }))
    local cases = {
      { { 1, 0, 2, 3 }, { 2, 3, 4 } }, { { 1, 2, 3 }, { -1, 2, 3, 1 / 0 } },
        { { 1, 2, 3 }, { 4, 5, 6 } },
    }
    for i, c in ipairs(cases) do
      local a, b = both(S.compare_samples, c[1], c[2], { seed = 3 })
      same(a, b, "case " .. i)
    end
    -- not whole: Lua's loop
    local a, b = both(S.bootstrap_ratio, { 1, 2, 3 }, { 2, 3 }, { resamples = 150.5 })
    same(a, b, "resamples 150.5")
  end)

  it("the rank sum equals the Lua definition's with ties and empty sides", function()
    for _, c in ipairs { { { 1, 2, 2, 5 }, { 2, 3, 5 } }, { {}, { 1, 1 } }, { { 3, 3 }, {} },
      { { -0.0 }, { 0.0 } } } do
      local a, b = both(S.mann_whitney, c[1], c[2])
      same(a, b, "rank sum")
    end
  end)
end)
