-- Sharding (lua/wlrun/run/shard.lua, docs/cluster.md): every configuration in exactly one slice for
-- many K/N and space shapes, with and without costs; the cost balance; determinism; the
-- launcher's environment (Slurm job arrays, srun, Open MPI, PMI) with fake environments,
-- their precedence and malformed values; the device of a local rank; costs from a document.
local shard = require "wlrun.run.shard"
local results = require "wlrun.results"
local S = require "wlrun.compare.stats" -- its seeded PRNG

-- a space of n configurations {index =, params =}: two axes, or one, or none (n <= 1)
local function space(n, shape)
  local list = {}
  for i = 1, n do
    local p
    if shape == "one" then
      p = { size = i * 64 }
    elseif shape == "mixed" then
      p = { variant = ({ "naive", "tiled", "wmma" })[i % 3 + 1], M = 2 ^ (i % 7 + 6) // 1,
        fast = i % 2 == 0, id = i }
    else
      p = { variant = i % 2 == 0 and "tiled" or "naive", M = 256 * i }
    end
    list[i] = { index = i, params = p }
  end
  return list
end

-- random costs for a list, seeded; some configurations left without one when `holes`
local function random_costs(list, seed, holes)
  local rng = S.rng(seed)
  local costs = {}
  for _, c in ipairs(list) do
    local v = 0.01 + 10 * rng:uniform() ^ 2
    if not (holes and rng:uniform() < 0.2) then costs[results.key(c.params)] = v end
  end
  return costs
end

-- checks that slices 1..n of list partition it, each in list's order; returns the slices
local function check_partition(list, n, costs)
  local seen, slices = {}, {}
  for k = 1, n do
    local s = shard.slice(list, k, n, costs)
    slices[k] = s
    local last = 0
    for _, c in ipairs(s) do
      assert(not seen[c.index], ("configuration %d in two slices (n = %d, #list = %d)"):format(
        c.index, n, #list))
      seen[c.index] = k
      assert(c.index > last, "a slice is not in the list's order")
      last = c.index
    end
  end
  for _, c in ipairs(list) do
    assert(seen[c.index], ("configuration %d in no slice (n = %d, #list = %d)"):format(c.index, n,
      #list))
  end
  return slices
end

describe("shard.slice", function()
  it(
    "puts every configuration in exactly one slice: n = 1..17, 0..100 configurations, three shapes",
    function()
    for _, shape in ipairs { "two", "one", "mixed" } do
      for m = 0, 100 do
        local list = space(m, shape)
        for n = 1, 17 do check_partition(list, n) end
      end
    end
  end)

  it("by count: round-robin by position, counts differ by at most one", function()
    local list = space(10)
    local got = {}
    for _, c in ipairs(shard.slice(list, 2, 3)) do got[#got + 1] = c.index end
    assert.same({ 2, 5, 8 }, got)
    for m = 0, 60 do
      for n = 1, 17 do
        local lo, hi = math.huge, -1
        for _, s in ipairs(check_partition(space(m), n)) do
          lo, hi = math.min(lo, #s), math.max(hi, #s)
        end
        assert.is_true(hi - lo <= 1)
      end
    end
    -- by position, not by index: a filtered space (indices with gaps) still spreads evenly
    local filtered = {}
    for i = 1, 12 do filtered[i] = { index = 3 * i, params = { x = i } } end
    for k = 1, 4 do assert.equal(3, #shard.slice(filtered, k, 4)) end
    assert.equal(filtered[1], shard.slice(filtered, 1, 4)[1])
  end)

  it("with costs: every configuration in exactly one slice, known costs or not", function()
    for _, shape in ipairs { "two", "mixed" } do
      for m = 0, 100, 9 do
        local list = space(m, shape)
        for n = 1, 17 do
          check_partition(list, n, random_costs(list, m * 31 + n))
          check_partition(list, n, random_costs(list, m * 37 + n, true)) -- some unknown: the median
        end
      end
    end
    -- costs for other configurations only (another sweep): round-robin
    local list = space(9)
    local other = { [results.key { y = 1 }] = 3 }
    for k = 1, 3 do assert.same(shard.slice(list, k, 3), shard.slice(list, k, 3, other)) end
    assert.same(shard.slice(list, 1, 3), shard.slice(list, 1, 3, {}))
  end)

  it(
    "with costs: the largest slice is within 1.5x of the lower bound on any split (random "
    .. "costs, seeded)", function()
    -- lower bound of the best split: max(total / n, the largest cost, the n-th + (n+1)-th
    -- largest when there are more configurations than shards). Longest processing time first
    -- stays within 1.5x of it (a configuration that ends last starts before total / n and
    -- costs at most the (n+1)-th largest).
    local worst = 0
    for seed = 1, 12 do
      for _, m in ipairs { 5, 17, 40, 100, 333 } do
        local list = space(m, "mixed")
        local costs = random_costs(list, seed * 1000 + m)
        for _, n in ipairs { 2, 3, 4, 7, 8, 16, 17 } do
          local values, total = {}, 0
          for _, c in ipairs(list) do
            local v = costs[results.key(c.params)]
            values[#values + 1], total = v, total + v
          end
          table.sort(values, function(a, b) return a > b end)
          local bound = math.max(total / n, values[1])
          if #values > n then bound = math.max(bound, values[n] + values[n + 1]) end
          local largest = 0
          for _, s in ipairs(check_partition(list, n, costs)) do
            local sum = 0
            for _, c in ipairs(s) do sum = sum + costs[results.key(c.params)] end
            largest = math.max(largest, sum)
          end
          assert(largest <= 1.5 * bound + 1e-9,
            ("seed %d, %d configurations, %d shards: largest %.4g, bound %.4g"):format(
            seed, m, n, largest, bound))
          worst = math.max(worst, largest / bound)
        end
      end
    end
    assert.is_true(worst < 1.5)
  end)

  it("with costs: is much better balanced than round-robin on skewed costs", function()
    -- every 4th configuration costs 100 times more: round-robin on 4 shards puts them all in one
    local list = space(48)
    local costs = {}
    for i, c in ipairs(list) do costs[results.key(c.params)] = i % 4 == 1 and 10 or 0.1 end
    local function largest(cs)
      local worst = 0
      for k = 1, 4 do
        local sum = 0
        for _, c in ipairs(shard.slice(list, k, 4, cs)) do
          sum = sum + costs[results.key(c.params)] end
        worst = math.max(worst, sum)
      end
      return worst
    end
    assert.near(12 * 10, largest(nil), 1e-9)
    assert.near(3 * 10 + 9 * 0.1, largest(costs), 1e-9) -- (12 x 10 + 36 x 0.1) / 4
  end)

  it("gives an unknown configuration the median known cost", function()
    local list = space(4)
    local key = function(i) return results.key(list[i].params) end
    -- known: #1 = 9, #2 = 1, #3 = 3 (median 3); #4 unknown -> 3. LPT over 2 shards: #1 -> 1;
    -- then #3 (3, index 3) and #4 (3, index 4) -> 2; #2 (1) -> 2 (3 + 3 = 6 < 9)
    local costs = { [key(1)] = 9, [key(2)] = 1, [key(3)] = 3 }
    local function indices(s)
      local t = {}
      for _, c in ipairs(s) do t[#t + 1] = c.index end
      return t
    end
    assert.same({ 1 }, indices(shard.slice(list, 1, 2, costs)))
    assert.same({ 2, 3, 4 }, indices(shard.slice(list, 2, 2, costs)))
    -- non-finite or negative costs count as unknown
    costs[key(2)] = 0 / 0
    costs[key(3)] = -1
    check_partition(list, 2, costs)
  end)

  it("is deterministic: the same list and costs give the same slices, run after run", function()
    local list = space(57, "mixed")
    local costs = random_costs(list, 5, true)
    for n = 1, 9 do
      for k = 1, n do
        local a, b = shard.slice(list, k, n, costs), shard.slice(list, k, n, costs)
        assert.same(a, b)
        -- ties: all costs equal -> by index, lowest shard first: round-robin in index order
        local flat = {}
        for _, c in ipairs(list) do flat[results.key(c.params)] = 1 end
        assert.same(shard.slice(list, k, n), shard.slice(list, k, n, flat))
      end
    end
  end)

  it("refuses a K/N outside 1 <= K <= N", function()
    for _, kn in ipairs { { 0, 2 }, { 3, 2 }, { 1, 0 }, { 1.5, 2 } } do
      local ok, err = pcall(shard.slice, space(3), kn[1], kn[2])
      assert.is_false(ok)
      assert.equal("usage", err.kind)
    end
  end)
end)

describe("shard.parse", function()
  it("reads K/N", function()
    assert.same({ k = 2, n = 8 }, shard.parse("2/8"))
    assert.same({ k = 1, n = 1 }, shard.parse("1/1"))
    assert.same({ k = 1000000, n = 1000000 }, shard.parse("1000000/1000000"))
  end)

  it("refuses anything else with the C side's message", function()
    for _, text in ipairs { "0/2", "3/2", "2", "2/", "/2", "a/b", "1/2/3", "-1/2", "1.5/2", "",
      "1/1000001", "2/8x" } do
      local ok, err = pcall(shard.parse, text)
      assert.is_false(ok, text)
      assert.equal("usage", err.kind)
      assert.equal(("--shard '%s': expected K/N with 1 <= K <= N (like 2/8)"):format(text),
        err.message)
    end
  end)
end)

describe("shard.detect", function()
  local function env(t) return function(name) return t[name] end end

  it("finds nothing outside a launcher", function()
    assert.is_nil(shard.detect(env {}))
    assert.is_nil(shard.detect(env { HOME = "/root", SLURM_JOB_ID = "12" }))
  end)

  it("Slurm job arrays: k = id - min + 1 of COUNT (or MAX - MIN + 1)", function()
    assert.same({ k = 2, n = 3, source = "SLURM_ARRAY_TASK_ID", launcher = "Slurm job array" },
      shard.detect(env { SLURM_ARRAY_TASK_ID = "2", SLURM_ARRAY_TASK_MIN = "1",
        SLURM_ARRAY_TASK_MAX = "3",
                         SLURM_ARRAY_TASK_COUNT = "3", SLURM_ARRAY_JOB_ID = "40" }))
    -- 0-based arrays
    local s = shard.detect(env { SLURM_ARRAY_TASK_ID = "0", SLURM_ARRAY_TASK_MIN = "0",
      SLURM_ARRAY_TASK_COUNT = "8" })
    assert.same({ 1, 8 }, { s.k, s.n })
    -- COUNT missing: MAX - MIN + 1
    s = shard.detect(env { SLURM_ARRAY_TASK_ID = "12", SLURM_ARRAY_TASK_MIN = "10",
      SLURM_ARRAY_TASK_MAX = "13" })
    assert.same({ 3, 4 }, { s.k, s.n })
    -- a step: --array=1-7:2 -> ids 1, 3, 5, 7
    s = shard.detect(env { SLURM_ARRAY_TASK_ID = "5", SLURM_ARRAY_TASK_MIN = "1",
      SLURM_ARRAY_TASK_MAX = "7",
                           SLURM_ARRAY_TASK_COUNT = "4", SLURM_ARRAY_TASK_STEP = "2" })
    assert.same({ 3, 4 }, { s.k, s.n })
    -- the batch step of an array task also has SLURM_PROCID: the array wins, no local rank
    s = shard.detect(env { SLURM_ARRAY_TASK_ID = "3", SLURM_ARRAY_TASK_MIN = "1",
      SLURM_ARRAY_TASK_COUNT = "3",
                           SLURM_PROCID = "0", SLURM_NTASKS = "1", SLURM_LOCALID = "0" })
    assert.same({ 3, 3, "SLURM_ARRAY_TASK_ID" }, { s.k, s.n, s.source })
    assert.is_nil(s.local_rank)
  end)

  it("srun: SLURM_PROCID of SLURM_NTASKS (the step's), local rank SLURM_LOCALID", function()
    local s = shard.detect(env { SLURM_PROCID = "5", SLURM_NTASKS = "8", SLURM_LOCALID = "1",
      SLURM_STEP_ID = "0",
                                 SLURM_JOB_ID = "7" })
    assert.same({ k = 6, n = 8, source = "SLURM_PROCID", local_rank = 1, launcher = "srun" }, s)
    -- the step's task count wins over the allocation's
    s = shard.detect(env { SLURM_PROCID = "1", SLURM_NTASKS = "8", SLURM_STEP_NUM_TASKS = "2",
      SLURM_STEP_ID = "3" })
    assert.same({ 2, 2 }, { s.k, s.n })
    -- a batch script sees SLURM_PROCID=0 and its allocation's SLURM_NTASKS, but it is one
    -- process: no shard
    assert.is_nil(shard.detect(env { SLURM_PROCID = "0", SLURM_NTASKS = "4", SLURM_LOCALID = "0",
      SLURM_JOB_ID = "7" }))
    assert.is_nil(shard.detect(env { SLURM_PROCID = "0", SLURM_NTASKS = "4",
      SLURM_STEP_ID = "batch" }))
  end)

  it("Open MPI: OMPI_COMM_WORLD_RANK of OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK",
    function()
    assert.same({ k = 4, n = 4, source = "OMPI_COMM_WORLD_RANK", local_rank = 3,
      launcher = "Open MPI" },
      shard.detect(env { OMPI_COMM_WORLD_RANK = "3", OMPI_COMM_WORLD_SIZE = "4",
        OMPI_COMM_WORLD_LOCAL_RANK = "3" }))
    local s = shard.detect(env { OMPI_COMM_WORLD_RANK = "0", OMPI_COMM_WORLD_SIZE = "2" })
    assert.same({ 1, 2 }, { s.k, s.n })
    assert.is_nil(s.local_rank)
  end)

  it("PMI (MPICH, Intel MPI): PMI_RANK of PMI_SIZE, MPI_LOCALRANKID or PMI_LOCAL_RANK", function()
    assert.same({ k = 2, n = 16, source = "PMI_RANK", local_rank = 1,
      launcher = "PMI (MPICH, Intel MPI)" },
      shard.detect(env { PMI_RANK = "1", PMI_SIZE = "16", MPI_LOCALRANKID = "1" }))
    assert.equal(5, shard.detect(env { PMI_RANK = "13", PMI_SIZE = "16",
      PMI_LOCAL_RANK = "5" }).local_rank)
    assert.equal(1, shard.detect(env { PMI_RANK = "13", PMI_SIZE = "16", PMI_LOCAL_RANK = "5",
      MPI_LOCALRANKID = "1" }).local_rank)
  end)

  it("looks in order: job array, srun, Open MPI, PMI", function()
    local all = { SLURM_ARRAY_TASK_ID = "2", SLURM_ARRAY_TASK_MIN = "1",
      SLURM_ARRAY_TASK_COUNT = "2",
                  SLURM_PROCID = "2", SLURM_NTASKS = "3", SLURM_STEP_ID = "0",
                  OMPI_COMM_WORLD_RANK = "3", OMPI_COMM_WORLD_SIZE = "5",
                  PMI_RANK = "4", PMI_SIZE = "6" }
    local order = { "SLURM_ARRAY_TASK_ID", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK" }
    local expect = { { 2, 2 }, { 3, 3 }, { 4, 5 }, { 5, 6 } }
    for i, source in ipairs(order) do
      local s = shard.detect(env(all))
      assert.same({ source, expect[i][1], expect[i][2] }, { s.source, s.k, s.n })
      all[source] = nil
    end
    assert.is_nil(shard.detect(env(all)))
  end)

  it("a single process (N = 1) is not a shard; empty variables are unset", function()
    assert.is_nil(shard.detect(env { OMPI_COMM_WORLD_RANK = "0", OMPI_COMM_WORLD_SIZE = "1" }))
    assert.is_nil(shard.detect(env { SLURM_ARRAY_TASK_ID = "1", SLURM_ARRAY_TASK_MIN = "1",
      SLURM_ARRAY_TASK_COUNT = "1" }))
    assert.is_nil(shard.detect(env { PMI_RANK = "", PMI_SIZE = "" }))
    -- a table works as the environment too
    assert.equal(2, shard.detect { PMI_RANK = "1", PMI_SIZE = "2" }.k)
  end)

  it("malformed values: usage errors naming the variable", function()
    local cases = {
      { { SLURM_ARRAY_TASK_ID = "two", SLURM_ARRAY_TASK_MIN = "1", SLURM_ARRAY_TASK_COUNT = "3" },
        "SLURM_ARRAY_TASK_ID='two'" },
      { { SLURM_ARRAY_TASK_ID = "2", SLURM_ARRAY_TASK_COUNT = "3" },
        "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_MIN is not" },
      { { SLURM_ARRAY_TASK_ID = "2", SLURM_ARRAY_TASK_MIN = "1" },
        "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_MAX is not" },
      { { SLURM_ARRAY_TASK_ID = "2", SLURM_ARRAY_TASK_MIN = "1", SLURM_ARRAY_TASK_COUNT = "0" },
        "SLURM_ARRAY_TASK_COUNT='0'" },
      { { SLURM_ARRAY_TASK_ID = "9", SLURM_ARRAY_TASK_MIN = "1", SLURM_ARRAY_TASK_MAX = "9",
        SLURM_ARRAY_TASK_COUNT = "3" },
        "SLURM_ARRAY_TASK_ID=9 is not one of the 3 tasks" },
      { { SLURM_ARRAY_TASK_ID = "1", SLURM_ARRAY_TASK_MIN = "4", SLURM_ARRAY_TASK_MAX = "9" },
        "SLURM_ARRAY_TASK_ID=1 is not one" },
      { { SLURM_ARRAY_TASK_ID = "1", SLURM_ARRAY_TASK_MIN = "4", SLURM_ARRAY_TASK_MAX = "2" },
        "SLURM_ARRAY_TASK_MAX=2 is below" },
      { { SLURM_PROCID = "x", SLURM_NTASKS = "2", SLURM_STEP_ID = "0" }, "SLURM_PROCID='x'" },
      { { SLURM_PROCID = "2", SLURM_NTASKS = "2", SLURM_STEP_ID = "0" },
        "SLURM_PROCID=2 is not below SLURM_NTASKS=2" },
      { { SLURM_PROCID = "0", SLURM_NTASKS = "2", SLURM_LOCALID = "-1", SLURM_STEP_ID = "0" },
        "SLURM_LOCALID='%-1'" },
      { { OMPI_COMM_WORLD_RANK = "1" },
        "OMPI_COMM_WORLD_RANK is set but OMPI_COMM_WORLD_SIZE is not" },
      { { OMPI_COMM_WORLD_RANK = "1", OMPI_COMM_WORLD_SIZE = "2.5" },
        "OMPI_COMM_WORLD_SIZE='2%.5'" },
      { { OMPI_COMM_WORLD_RANK = "-1", OMPI_COMM_WORLD_SIZE = "2" }, "OMPI_COMM_WORLD_RANK='%-1'" },
      { { PMI_RANK = "1", PMI_SIZE = "0" }, "PMI_SIZE='0'" },
      { { PMI_RANK = "0", PMI_SIZE = "2", MPI_LOCALRANKID = "a" }, "MPI_LOCALRANKID='a'" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(shard.detect, env(c[1]))
      assert.is_false(ok, c[2])
      assert.equal("usage", err.kind)
      assert.matches("environment variable " .. c[2], err.message)
    end
  end)
end)

describe("shard.local_device", function()
  it("is the local rank modulo the device count", function()
    assert.equal(0, shard.local_device(0, 2))
    assert.equal(1, shard.local_device(1, 2))
    assert.equal(0, shard.local_device(2, 2))
    assert.equal(3, shard.local_device(7, 4))
    -- one visible device (CUDA_VISIBLE_DEVICES=N per rank): always 0
    for r = 0, 9 do assert.equal(0, shard.local_device(r, 1)) end
  end)

  it("is nil without a rank or a device", function()
    assert.is_nil(shard.local_device(nil, 4))
    assert.is_nil(shard.local_device(1, 0))
    assert.is_nil(shard.local_device(-1, 2))
  end)
end)

describe("runner.rank_device: the device a run takes from its launcher's local rank", function()
  local runner = require "wlrun.run.runner"
  local p = { shard = { k = 2, n = 4, local_rank = 1 } }
  it(
    "is the rank's device in the run, and in its children of --isolate, --config-timeout or a "
    .. "broken context", function()
    assert.equal(1, runner.rank_device(p, {}, false, "default", 2))
    -- a --worker-config child has the same environment: the same device as its parent, not 0
    assert.equal(1, runner.rank_device(p, { worker_config = 3 }, false, "default", 2))
  end)
  it(
    "is none where a device is set, with --devices (each worker has its GPU), --compile-only, "
    .. "or no rank or device", function()
    assert.is_nil(runner.rank_device(p, {}, false, "command line", 2))
    assert.is_nil(runner.rank_device(p, {}, false, "wlrun.ini", 2))
    assert.is_nil(runner.rank_device(p, { devices = "0,1" }, false, "default", 2))
    assert.is_nil(runner.rank_device(p, { worker_queue = "/tmp/q" }, false, "default", 2))
    assert.is_nil(runner.rank_device(p, {}, true, "default", 2))
    assert.is_nil(runner.rank_device({ shard = { k = 1, n = 2 } }, {}, false, "default", 2))
    assert.is_nil(runner.rank_device({}, {}, false, "default", 2))
    assert.is_nil(runner.rank_device(p, {}, false, "default", 0))
  end)
end)

describe("costs", function()
  local doc = {
    schema = "wlrun-results", version = 1,
    configurations = {
      { index = 1, params = { v = "a", M = 1 }, status = "ok", time = 2.5 },
      { index = 2, params = { v = "b", M = 1 }, status = "failed", time = 0.1 },
      { index = 3, params = { v = "c", M = 1 }, status = "ok" }, -- no time: unknown
      { index = 4, params = { v = "d", M = 1 }, status = "ok", time = 0 / 0 },
    },
  }

  it("shard.costs_from: each configuration's time by its parameters", function()
    local costs = shard.costs_from(doc)
    assert.same({ [results.key { v = "a", M = 1 }] = 2.5, [results.key { v = "b", M = 1 }] = 0.1 },
      costs)
    assert.same({}, shard.costs_from({}))
  end)

  it("shard.load_costs reads a results file; errors name it", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "wb"))
    f:write(require("wlrun.report").render(doc, "json"))
    f:close()
    assert.equal(2.5, shard.load_costs(path)[results.key { v = "a", M = 1 }])
    f = assert(io.open(path, "wb"))
    f:write("{}")
    f:close()
    local ok, err = pcall(shard.load_costs, path)
    assert.is_false(ok)
    assert.equal("usage", err.kind)
    assert.matches("is not a wlrun%-results document %(its schema is missing%)", err.message)
    os.remove(path)
    ok, err = pcall(shard.load_costs, path)
    assert.is_false(ok)
    assert.equal("io", err.kind)
  end)
end)

describe("shard.select", function()
  local list = space(10)

  it("without --shard or a launcher: the whole list", function()
    local s, info = shard.select(list, { getenv = function() return nil end })
    assert.equal(list, s)
    assert.is_nil(info)
  end)

  it("--shard K/N wins over the environment, whose local rank still counts", function()
    local env = { OMPI_COMM_WORLD_RANK = "0", OMPI_COMM_WORLD_SIZE = "2",
      OMPI_COMM_WORLD_LOCAL_RANK = "1" }
    local s, info = shard.select(list, { shard = { k = 3, n = 4 },
      getenv = function(n) return env[n] end })
    assert.equal(2, #s)
    assert.same({ 3, 7 }, { s[1].index, s[2].index })
    assert.same({ 3, 4, "--shard", 1, 2, 10 }, { info.k, info.n, info.source, info.local_rank,
      info.count, info.total })
    assert.equal("shard 3/4 (from --shard): 2 of 10 configurations", shard.message(info))
    -- malformed variables do not matter then
    s, info = shard.select(list, { shard = { k = 1, n = 2 },
      getenv = function(n) return n == "PMI_RANK" and "x" or nil end })
    assert.same({ 1, 2, 5 }, { info.k, info.n, #s })
    assert.is_nil(info.local_rank)
  end)

  it("from the environment, balanced by the costs file WLRUN_SHARD_COSTS names", function()
    local path = os.tmpname()
    local doc = { schema = "wlrun-results", version = 1, configurations = {} }
    for i, c in ipairs(list) do doc.configurations[i] = { index = i, params = c.params,
      time = i == 1 and 100 or 1 } end
    local f = assert(io.open(path, "wb"))
    f:write(require("wlrun.report").render(doc, "json"))
    f:close()
    local env = { SLURM_ARRAY_TASK_ID = "1", SLURM_ARRAY_TASK_MIN = "1",
      SLURM_ARRAY_TASK_COUNT = "2", WLRUN_SHARD_COSTS = path }
    local s, info = shard.select(list, { getenv = function(n) return env[n] end })
    assert.equal(1, #s) -- #1 alone costs more than all the others
    assert.equal(1, s[1].index)
    assert.equal(
      ("shard 1/2 (from SLURM_ARRAY_TASK_ID): 1 of 10 configurations, balanced by the "
      .. "times in %s"):format(path),
      shard.message(info))
    os.remove(path)
  end)
end)
