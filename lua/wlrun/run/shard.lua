-- Sharding a sweep (docs/cluster.md): which slice of the parameter space this process runs
-- (`--shard K/N`, or detected from a Slurm or MPI launcher's environment), the slice itself
-- (balanced by count, or by estimated cost from a previous results file), and the CUDA device
-- of a rank. Pure Lua: no device, no I/O except shard.load_costs.
--
--   shard.detect(getenv)              -> nil | {k =, n =, source =, local_rank =}
--   shard.parse("K/N")                -> {k =, n =}                  (--shard's text)
--   shard.slice(list, k, n [, costs]) -> the k-th of n slices of list, in list's order
--   shard.local_device(rank, count)   -> rank % count                (device index)
--   shard.costs_from(doc)             -> {[params key] = seconds}    (a results document)
--   shard.load_costs(path)            -> the same, from a results file
--   shard.select(list, opts)          -> slice, info                  (all of the above)
--   shard.message(info)               -> "shard K/N (from SOURCE): M of T configurations"
local core = require "wlrun.core"
local results = require "wlrun.results"
local loader = require "wlrun.results.load"

local shard = {}

-- an error of kind `kind` (usage: exit 2; io: exit 9)
local function fail(kind, msg) core.error(kind, msg, 0) end

local function params_key(params) return results.key(params) end

---------------------------------------------------------------------------------------------
-- the launcher's environment

-- the value of a variable, nil when unset or empty
local function var(getenv, name)
  local v = getenv(name)
  if v == nil or v == "" then return nil end
  return tostring(v)
end

-- the most shards a sweep is cut into (--shard's N, a launcher's process count): a document's
-- shard.n is read back up to 10^7 (wlrun.results.schema), so every shard's output stays readable
shard.MAX_N = 1000000

-- a whole number from a variable (nil when unset), up to max where given; a usage error naming
-- it otherwise
local function int(getenv, name, min, max)
  local v = var(getenv, name)
  if v == nil then return nil end
  local n = v:match("^%s*([+-]?%d+)%s*$")
  n = n and math.tointeger(tonumber(n))
  if not n or n < (min or 0) then
    fail("usage", ("environment variable %s='%s': expected a whole number >= %d"):format(name, v,
      min or 0))
  end
  if max and n > max then
    fail("usage", ("environment variable %s='%s': expected a whole number from %d to %d (the "
      .. "most shards a sweep is cut into)"):format(name, v, min or 0, max))
  end
  return n
end

local function need(getenv, name, because, min, max)
  local v = int(getenv, name, min, max)
  if v == nil then
    fail("usage",
      ("environment variable %s is set but %s is not: cannot tell this process's shard"):format(
      because, name))
  end
  return v
end

-- a 0-based rank among `size` processes -> {k, n}
local function from_rank(getenv, rank_name, size_name, local_names, source)
  local rank = int(getenv, rank_name, 0)
  if rank == nil then return nil end
  local size = need(getenv, size_name, rank_name, 1, shard.MAX_N)
  if rank >= size then
    fail("usage", ("environment variable %s=%d is not below %s=%d"):format(rank_name, rank,
      size_name, size))
  end
  local local_rank
  for _, name in ipairs(local_names) do
    local_rank = int(getenv, name, 0)
    if local_rank then break end
  end
  return { k = rank + 1, n = size, source = source or rank_name, local_rank = local_rank }
end

-- Slurm job array: task ids MIN, MIN+STEP, ..., MAX (SLURM_ARRAY_TASK_COUNT of them)
local function slurm_array(getenv)
  local id = int(getenv, "SLURM_ARRAY_TASK_ID", 0)
  if id == nil then return nil end
  local min = need(getenv, "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_ID", 0)
  local count = int(getenv, "SLURM_ARRAY_TASK_COUNT", 1, shard.MAX_N)
  if count == nil then
    local max = need(getenv, "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_ID", 0)
    if max < min then
      fail("usage",
        ("environment variable SLURM_ARRAY_TASK_MAX=%d is below SLURM_ARRAY_TASK_MIN=%d"):format(
        max, min))
    end
    if max - min >= shard.MAX_N then -- max >= min >= 0: no wrap-around
      fail("usage", ("environment variables SLURM_ARRAY_TASK_MIN=%d and SLURM_ARRAY_TASK_MAX=%d "
        .. "span more than %d tasks: a sweep is cut into at most %d shards"):format(min, max,
        shard.MAX_N, shard.MAX_N))
    end
    count = max - min + 1
  end
  local step = int(getenv, "SLURM_ARRAY_TASK_STEP", 1) or 1
  local k = id >= min and (id - min) % step == 0 and (id - min) // step + 1 or nil
  if not k or k > count then
    fail("usage",
      ("environment variable SLURM_ARRAY_TASK_ID=%d is not one of the %d tasks from "
      .. "SLURM_ARRAY_TASK_MIN=%d%s: "
      .. "shards need an array of consecutive ids, like --array=1-%d (or --shard K/N in "
        .. "the script)"):format(id, count,
      min, step > 1 and (" by SLURM_ARRAY_TASK_STEP=" .. step) or "", count))
  end
  return { k = k, n = count, source = "SLURM_ARRAY_TASK_ID" }
end

-- srun: a job step's tasks. A batch script also sees SLURM_PROCID=0 and SLURM_NTASKS (its
-- allocation's task count) without being one of several tasks: only a step started by srun
-- (SLURM_STEP_ID set, and not the batch or extern step) is sharded.
local function slurm_step(getenv)
  if var(getenv, "SLURM_PROCID") == nil then return nil end
  local step = var(getenv, "SLURM_STEP_ID") or var(getenv, "SLURM_STEPID")
  if step == nil or not step:match("^%s*%d+%s*$") then return nil end
  local size_name = var(getenv, "SLURM_STEP_NUM_TASKS") and "SLURM_STEP_NUM_TASKS" or "SLURM_NTASKS"
  return from_rank(getenv, "SLURM_PROCID", size_name, { "SLURM_LOCALID" })
end

-- the launchers, in the order they are looked for
shard.launchers = {
  { name = "Slurm job array", detect = slurm_array },
  { name = "srun", detect = slurm_step },
  { name = "Open MPI", detect = function(getenv)
      return from_rank(getenv, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
        { "OMPI_COMM_WORLD_LOCAL_RANK" })
    end },
  { name = "PMI (MPICH, Intel MPI)", detect = function(getenv)
      return from_rank(getenv, "PMI_RANK", "PMI_SIZE", { "MPI_LOCALRANKID", "PMI_LOCAL_RANK" })
    end },
}

-- The shard this process is, from its launcher's environment: {k = 1-based, n =, source =
-- the variable it came from, local_rank = the rank on this host or nil}; nil when no launcher
-- is seen or it started a single process (n = 1: nothing to split). getenv: os.getenv, or a
-- function over a table in the tests. Malformed values are usage errors naming the variable.
function shard.detect(getenv)
  getenv = getenv or os.getenv
  if type(getenv) == "table" then
    local t = getenv
    getenv = function(name) return t[name] end
  end
  for _, l in ipairs(shard.launchers) do
    local s = l.detect(getenv)
    if s then
      s.launcher = l.name
      if s.n == 1 then return nil end
      return s
    end
  end
  return nil
end

-- --shard K/N (the C side validates it first; this mirrors its rule)
function shard.parse(text)
  local ks, ns = tostring(text):match("^%s*([+]?%d+)/%s*([+]?%d+)$")
  local k, n = math.tointeger(tonumber(ks)), math.tointeger(tonumber(ns))
  if not k or not n or k < 1 or n < 1 or k > n or n > shard.MAX_N then
    fail("usage", ("--shard '%s': expected K/N with 1 <= K <= N (like 2/8)"):format(tostring(text)))
  end
  return { k = k, n = n }
end

---------------------------------------------------------------------------------------------
-- the slice

local function finite_cost(v) return type(v) == "number" and v == v and v >= 0 and v < math.huge end

-- a binary heap of shards ordered by (total, shard)
local function less(a, b) return a.total < b.total or (a.total == b.total and a.id < b.id) end

local function heap_push(h, x)
  h[#h + 1] = x
  local i = #h
  while i > 1 do
    local p = i // 2
    if not less(h[i], h[p]) then break end
    h[i], h[p] = h[p], h[i]
    i = p
  end
end

local function heap_pop(h)
  local top, last = h[1], h[#h]
  h[#h] = nil
  if #h > 0 then
    h[1] = last
    local i = 1
    while true do
      local l, r, m = 2 * i, 2 * i + 1, i
      if l <= #h and less(h[l], h[m]) then m = l end
      if r <= #h and less(h[r], h[m]) then m = r end
      if m == i then break end
      h[i], h[m] = h[m], h[i]
      i = m
    end
  end
  return top
end

-- the shard (1..n) of each position of list, by cost: longest processing time first
local function assign_by_cost(list, n, costs)
  local est, known = {}, {}
  for i, c in ipairs(list) do
    local v = type(c.params) == "table" and costs[params_key(c.params)] or nil
    if finite_cost(v) then est[i], known[#known + 1] = v, v end
  end
  if #known == 0 then return nil end
  table.sort(known)
  local m = #known
  local median = m % 2 == 1 and known[(m + 1) // 2] or (known[m // 2] + known[m // 2 + 1]) / 2
  local order = {}
  for i = 1, #list do
    est[i] = est[i] or median
    order[i] = i
  end
  local function index(i) return math.tointeger(list[i].index) or i end
  table.sort(order, function(a, b)
    if est[a] ~= est[b] then return est[a] > est[b] end
    if index(a) ~= index(b) then return index(a) < index(b) end
    return a < b
  end)
  -- the shard with the least total (lowest id on ties): the heap's top, or the next shard
  -- that has nothing yet (total 0)
  local heap, next_empty, where = {}, 1, {}
  for _, i in ipairs(order) do
    local s
    if next_empty <= n and (#heap == 0 or less({ total = 0, id = next_empty }, heap[1])) then
      s = { total = 0, id = next_empty }
      next_empty = next_empty + 1
    else
      s = heap_pop(heap)
    end
    where[i] = s.id
    s.total = s.total + est[i]
    heap_push(heap, s)
  end
  return where
end

-- The k-th of n slices of list (configurations {index =, params =}, in the space's order),
-- in list's order. Every configuration is in exactly one slice, for any n.
--   without costs: round-robin by position: position i (1-based) goes to shard (i-1) % n + 1,
--     so every shard gets a mix of the space and the counts differ by at most one;
--   with costs ({[results.key(params)] = seconds}): longest processing time first:
--     by estimated cost, largest first (ties by index), each to the shard with the least total
--     so far (ties: the lowest shard); a configuration without a known cost counts as the
--     median of the known ones. When none is known, round-robin.
function shard.slice(list, k, n, costs)
  if math.type(k) ~= "integer" or math.type(n) ~= "integer" or k < 1 or n < 1 or k > n then
    fail("usage", ("shard %s/%s: expected whole numbers with 1 <= K <= N"):format(tostring(k),
      tostring(n)))
  end
  local where = costs and next(costs) ~= nil and assign_by_cost(list, n, costs) or nil
  local out = {}
  for i, c in ipairs(list) do
    local s = where and where[i] or ((i - 1) % n + 1)
    if s == k then out[#out + 1] = c end
  end
  return out
end

-- The CUDA device of a process with this rank on its host. With CUDA_VISIBLE_DEVICES set (as
-- Slurm does for --gpus-per-task or --gres), the runtime numbers the visible devices from 0,
-- so the same rule holds: one visible device -> device 0. nil without a rank or a device.
function shard.local_device(local_rank, device_count)
  if math.type(local_rank) ~= "integer" or local_rank < 0 then return nil end
  if math.type(device_count) ~= "integer" or device_count < 1 then return nil end
  return local_rank % device_count
end

---------------------------------------------------------------------------------------------
-- costs from a previous run

-- {[results.key(params)] = seconds}: each configuration's `time` (the wall time it took,
-- setup and teardown included) in a results document; whatever its status
function shard.costs_from(doc)
  local costs = {}
  for _, c in ipairs(type(doc) == "table" and type(doc.configurations) == "table"
    and doc.configurations or {}) do
    if type(c) == "table" and type(c.params) == "table" and finite_cost(c.time) then
      costs[params_key(c.params)] = c.time
    end
  end
  return costs
end

-- the same from a results file, through the one strict loader (unreadable: kind io; not a
-- results document: kind usage)
function shard.load_costs(path, what)
  return shard.costs_from(loader.load(path, { name = path,
    prefix = what and (what .. ": ") or nil }))
end

---------------------------------------------------------------------------------------------
-- everything together, for the runner

-- The slice this process runs, and what was decided:
--   opts.shard           {k =, n =} from --shard K/N (core.cli.shard; wins over the environment)
--   opts.getenv          os.getenv by default
--   opts.costs           a costs map; else the file named by WLRUN_SHARD_COSTS, when set
-- Returns list itself and nil when there is no sharding; else the slice and info = {k, n,
-- source ("--shard" or the variable), local_rank, count = #slice, total = #list, costs =
-- the costs file or nil}.
function shard.select(list, opts)
  opts = opts or {}
  local getenv = opts.getenv or os.getenv
  local info
  local explicit = opts.shard
  if explicit then
    info = shard.parse(("%s/%s"):format(explicit.k, explicit.n))
    info.source = "--shard"
    local ok, env = pcall(shard.detect, getenv) -- the local rank still chooses the device
    info.local_rank = ok and env and env.local_rank or nil
  else
    info = shard.detect(getenv)
  end
  if not info then return list, nil end
  local costs = opts.costs
  if not costs then
    local path = getenv("WLRUN_SHARD_COSTS")
    if path and path ~= "" then
      costs = shard.load_costs(path, "WLRUN_SHARD_COSTS=" .. path)
      info.costs = path
    end
  end
  local slice = shard.slice(list, info.k, info.n, costs)
  info.count, info.total = #slice, #list
  return slice, info
end

-- "shard 2/8 (from SLURM_ARRAY_TASK_ID): 13 of 100 configurations", and the costs' file
function shard.message(info)
  return ("shard %d/%d (from %s): %d of %d configuration%s%s"):format(info.k, info.n, info.source,
    info.count,
    info.total, info.total == 1 and "" or "s", info.costs
      and (", balanced by the times in " .. info.costs) or "")
end

return shard
