-- The measurement engine (docs/measuring.md): warmup, timing modes, stopping rules, statistics
-- and warnings around the timed loops of src/engine/cuda_timing.c.
local core = require "wlrun.core"
local engine = require "wlrun.engine"
local checks = require "wlrun.measure.checks"
local chunk_watch = require "wlrun.measure.chunk_watch"
local kernel_times = require "wlrun.measure.kernel_times"
local fields = require "wlrun.fields"
local settings = require "wlrun.settings"
local units = require "wlrun.text.units"

local bench = {}

bench.TARGET_SAMPLE = 100e-6 -- batch/graph: launches per sample chosen to last about this long
bench.MAX_PER = 10000        -- at most this many launches per sample
bench.PAIR_SHARE = 0.005     -- batch/graph: the event pair's floor at most 0.5 % of a sample
bench.AUTO_FACTOR = 10       -- auto: below 10x the cold-launch floor, cold is not trusted
-- auto decides by a first launch whose GPU time, less its enqueue, is 4x that
bench.SURE_FACTOR = 4
bench.CHUNK_TIME = 0.05      -- a chunk of samples lasts about this long...
bench.FIRST_CHUNK_TIME = 0.005 -- ...after a first one of about this long by the warmup's estimate
bench.CHUNK_GROWTH = 4       -- each chunk at most 4x the one before
bench.MAX_CHUNK = 10000      -- samples
-- blocked cold samples: a block holds about this much GPU time (1 to 16
bench.BLOCK_TIME = 0.002
                             -- samples; one queued again, its blocking kernel having given up,
                             -- costs little)
-- adaptive: the best noise of the last 8 chunks against the 8 before...
bench.PLATEAU_CHUNKS = 8
bench.PLATEAU_GAIN = 0.01    -- ...better by less than 1 %: the noise has stopped improving

-- Why adaptive sampling stops after a chunk, or nil to take another: noise is the noise of the
-- median after each chunk so far, n the samples, elapsed the seconds measuring. "target": the
-- target is met (with min_samples and min_time); "plateau": the noise has stopped improving
-- (drifting or multi-modal samples, which more samples do not make quieter: nvbench's stdrel
-- criterion stops on the same grounds); "max_time": the time limit.
function bench.stop_reason(noise, cfg, n, elapsed)
  local enough = n >= cfg.min_samples and elapsed >= cfg.min_time
  if enough and noise[#noise] <= cfg.target_noise then return "target" end
  local k = bench.PLATEAU_CHUNKS
  if enough and #noise >= 2 * k then
    local before, recent = math.huge, math.huge
    for i = #noise - 2 * k + 1, #noise - k do before = math.min(before, noise[i]) end
    for i = #noise - k + 1, #noise do recent = math.min(recent, noise[i]) end
    if recent > before * (1 - bench.PLATEAU_GAIN) then return "plateau" end
  end
  if elapsed >= cfg.max_time then return "max_time" end
  return nil
end

-- The samples of the next chunk. est: a sample's GPU time by the warmup (without the L2 flush,
-- the blocking kernel or the synchronisation a sample also costs); done, wall: the samples of
-- the chunks taken so far and their wall time, everything included; last: the last chunk's
-- samples; min: the first chunk's least (adaptive: min_samples); whole: the items of a rotation
-- list, which each chunk begins again from the first (src/engine/cuda_timing.c), so that a chunk
-- holds
-- whole rotations and every item has as many samples. The first chunk lasts about
-- FIRST_CHUNK_TIME by est, so that a measurement which meets its target at once is not held for
-- a whole chunk of flushes; the next ones about CHUNK_TIME by what a sample really took, growing
-- at most CHUNK_GROWTH times a chunk.
function bench.chunk_size(est, done, wall, last, min, whole)
  local n
  if done == 0 then
    n = math.max(min or 1, math.ceil(bench.FIRST_CHUNK_TIME / math.max(est, 1e-9)))
  else
    n = math.min(math.ceil(bench.CHUNK_TIME / math.max(wall / done, 1e-9)),
      last * bench.CHUNK_GROWTH)
  end
  whole = whole or 1
  n = math.max(1, math.min(bench.MAX_CHUNK, n))
  return math.max(whole, n // whole * whole + (n % whole > 0 and whole or 0))
end

-- the options of wl.bench (and of a scenario's timing table) that are settings: the option
-- name -> {section, name} of the setting (docs/config.md)
bench.settings_of = {
  mode = { "run", "mode" }, warmup = { "run", "warmup" }, warmup_time = { "run", "warmup_time" },
  iters = { "run", "iters" }, flush_l2 = { "run", "flush_l2" },
    adaptive = { "adaptive", "enabled" },
  target_noise = { "adaptive", "target_noise" }, min_samples = { "adaptive", "min_samples" },
  min_time = { "adaptive", "min_time" }, max_time = { "adaptive", "max_time" },
}

-- every option: the settings, and the two that are not (launches per sample, graph warmup):
-- {lowest, highest} whole number
local own_opts = { batch = { 1, 1000000 }, graph_warmup = { 0, 1000000 } }
local known_opts = { batch = true, graph_warmup = true }
for k in pairs(bench.settings_of) do known_opts[k] = true end
bench.known_opts = known_opts

-- Checks a table of options (wl.bench's, a scenario's timing table): unknown names, and each
-- value by the rule of the setting it maps to (src/base/settings.c: the same parser and range as
-- its command-line option and wlrun.ini key). what: "wl.bench" or "FILE:LINE: timing"; level:
-- as for error (0: the message alone).
function bench.check_options(opts, what, level)
  fields.check(opts, known_opts, what, level, "option")
  local names = {}
  for k in pairs(opts) do names[#names + 1] = k end
  table.sort(names)
  for _, opt in ipairs(names) do
    local v, s, err = opts[opt], bench.settings_of[opt], nil
    if s then
      err = select(2, core.setting_value(s[1], s[2], v))
    elseif type(v) ~= "number" or math.tointeger(v) == nil or v < own_opts[opt][1]
      or v > own_opts[opt][2] then
      err = ("expected a whole number from %d to %d, got %s"):format(own_opts[opt][1],
        own_opts[opt][2],
        type(v) == "number" and tostring(v) or type(v) == "string" and ("a string ('%s')"):format(v)
          or "a " .. type(v))
    end
    if err then core.error("script", ("%s: option '%s': %s"):format(what, opt, err),
      level == 0 and 0 or level + 1) end
  end
end

-- effective configuration: built-in < wlrun.ini < opts (the scenario) < command line
local function configure(opts)
  bench.check_options(opts, "wl.bench", 3)
  local cfg = { batch = opts.batch and math.tointeger(opts.batch),
    graph_warmup = opts.graph_warmup and math.tointeger(opts.graph_warmup) or 3 }
  for opt, s in pairs(bench.settings_of) do cfg[opt] = (settings.value(s[1], s[2], opts[opt])) end
  return cfg
end

local floor_cache
function bench.floor()
  floor_cache = floor_cache or engine.timing_floor(200)
  return floor_cache
end

local function median(t)
  local c = table.move(t, 1, #t, 1, {})
  table.sort(c)
  local n = #c
  return n % 2 == 1 and c[(n + 1) // 2] or (c[n // 2] + c[n // 2 + 1]) / 2
end

-- relative half-width of the distribution-free 95 % confidence interval of the median
-- (src/base/stats.c, wl_median_noise: its order statistics selected in C, in O(n), as it is taken
-- after every chunk of an adaptive measurement; math.huge for fewer than 6 samples)
function bench.median_noise(samples) return core.stats.median_noise(samples) end

local function append(dst, src, r)
  table.move(src.gpu, 1, #src.gpu, #dst.gpu + 1, dst.gpu)
  table.move(src.enqueue, 1, #src.enqueue, #dst.enqueue + 1, dst.enqueue)
  if src.blocked and r and r.blocked then
    r.blocked.gave_up = r.blocked.gave_up + src.blocked.gave_up
    r.blocked.kept = r.blocked.kept + src.blocked.kept
  end
end

-- the items of work: a rotation list (a plain table), or the one item
local function items(work) return type(work) == "table" and getmetatable(work) == nil and work
  or { work } end

-- auto times short bound launches as graphs; a Lua function may synchronise or allocate, which
-- a capture refuses, so functions are batched instead, and so is host work that may not be
-- captured (docs/libraries.md)
local function capturable(work)
  for _, w in ipairs(items(work)) do
    if not core.is_launch(w) or not core.launch_capturable(w) then return false end
  end
  return true
end

-- cold samples with the L2 flush are queued behind a blocking kernel (free of launch overhead)
-- when every item only queues GPU work: a kernel, host work a graph may capture, a wl.graph
local function blockable(work)
  for _, w in ipairs(items(work)) do
    local mt = type(w) == "userdata" and getmetatable(w)
    local graph = type(mt) == "table" and mt.__name == "wlrun.graph"
    if not graph and not (core.is_launch(w) and core.launch_capturable(w)) then return false end
  end
  return true
end

-- every item a bound launch of a kernel (not host work, not a graph): one kernel a sample, whose
-- own time CUPTI gives
local function kernels_only(work)
  for _, w in ipairs(items(work)) do
    if not core.is_launch(w) or w.kernel.kind ~= "kernel" then return false end
  end
  return true
end

-- The first rotation's launches (warm: the warmup's, each item of a rotation list once, in its
-- order) without the host's time of their enqueues, when every one says that the work is long
-- beyond the one-time costs it may hold; else nil. Those costs are the host's: a module loaded, a
-- library's first call happen in the enqueue, while the GPU, its start event taken, waits. So a
-- launch whose GPU time, less its enqueue's host time, is still SURE_FACTOR times auto's line
-- is long: auto measures it cold without a launch more to decide by.
local function long_beyond_doubt(warm, rotation, floor)
  if #warm.gpu < rotation then return nil end -- an item not launched yet
  local line, kernel = bench.SURE_FACTOR * bench.AUTO_FACTOR * floor.empty_kernel, {}
  for i = 1, #warm.gpu do
    kernel[i] = warm.gpu[i] - (warm.enqueue[i] or math.huge)
    if kernel[i] < line then return nil end
  end
  return kernel
end

-- the name of the first bound host work in work that a graph may not capture, or nil
local function uncapturable(work)
  for _, w in ipairs(items(work)) do
    if core.is_launch(w) and not core.launch_capturable(w) then return w.kernel.name end
  end
end

-- warmup: cold launches until both the count and the time are reached (host mode: host loop);
-- got: what the warmup's first launch gave where it ran already (the scenario's check's run)
local function warmup(work, cfg, got)
  local t0 = core.clock()
  got = got or { gpu = {}, enqueue = {} }
  local time = cfg.mode == "host" and engine.time_host or engine.time_cold
  while #got.gpu < cfg.warmup or core.clock() - t0 < cfg.warmup_time do
    local chunk = math.max(1, math.min(cfg.warmup - #got.gpu, 1000))
    if #got.gpu >= cfg.warmup then chunk = 10 end
    append(got, time(work, chunk, false))
  end
  if #got.gpu == 0 then append(got, time(work, 1, false)) end -- one launch to size batches
  return got, core.clock() - t0
end

-- the samples of a block of blocked cold samples, for a sample of est seconds
function bench.per_block(est) return math.max(1,
  math.min(16, math.floor(bench.BLOCK_TIME / math.max(est, 1e-9)))) end

local function measure_chunk(work, cfg, r, n, est)
  if r.mode == "cold" then return engine.time_cold(work, n, cfg.flush_l2, r.blocked ~= nil, 2,
    bench.per_block(est))
  elseif r.mode == "batch" then return engine.time_batch(work, n, r.per)
  elseif r.mode == "graph" then return engine.time_graph(work, n, r.per, cfg.graph_warmup)
  elseif r.mode == "cupti" then return kernel_times.measure(work, n, cfg.flush_l2)
  else return engine.time_host(work, n) end
end

local function working_set(work)
  local list = items(work)
  local seen, bytes, zero, known = {}, 0, {}, false
  for _, w in ipairs(list) do
    local ok, tensors = pcall(function() return w.tensors end)
    if ok and tensors then
      known = true
      for _, t in ipairs(tensors) do
        if not seen[t.tensor] then
          seen[t.tensor] = true
          bytes = bytes + t.tensor.nbytes
          if t.input and not t.tensor.freed and engine.count_nonzero(t.tensor) == 0 then
            zero[#zero + 1] = ("argument %d of %s"):format(t.arg, w.kernel.name)
          end
        end
      end
    end
  end
  return known and bytes or nil, zero
end

-- Launches per batch or graph sample for a launch of est seconds: a sample of about
-- TARGET_SAMPLE, and long enough that the event pair's floor is at most PAIR_SHARE of it.
function bench.launches_per_sample(est, floor)
  est = math.max(est, 1e-9)
  local pair = floor and floor.event_pair or 0
  local per = math.max(math.ceil(bench.TARGET_SAMPLE / est),
    math.ceil(pair / (bench.PAIR_SHARE * est)))
  return math.max(1, math.min(bench.MAX_PER, per))
end

-- auto's mode (docs/measuring.md): CUPTI's record of the kernel itself wherever every item is
-- one kernel and CUPTI is free (no launch cost in any sample, warm or flushed); else cold
-- behind the blocking kernel with the flush; else cold for launches long beyond the floor, and
-- graph (batch for what a graph cannot capture) below it.
local function choose_auto(r, work, est, blocks)
  local floor, flush = r.floor.empty_kernel, r.flush_l2
  local kernels = kernels_only(work)
  local cupti_free, why = false, nil
  if kernels then cupti_free, why = engine.cupti_ready() end
  if cupti_free then
    r.mode = "cupti"
    r.notes[#r.notes + 1] = (
      "auto: every sample is one kernel and CUPTI is free: cupti mode, the kernel's own time%s "
      .. "(no launch cost in the samples)"):format(
      flush and " with the L2 flushed before each" or ", warm")
    return
  end
  local because = kernels and ("CUPTI is not free here (%s)"):format(why or "it does not load")
    or "the work is not one bound kernel a sample (a function, a graph, host work or a "
      .. "library call)"
  if blocks then
    r.mode = "cold"
    r.notes[#r.notes + 1] = (
      "auto: %s, and the L2 is flushed before each sample: cold mode, each sample queued behind "
      .. "a blocking kernel"):format(because)
    return
  end
  r.mode = est >= bench.AUTO_FACTOR * floor and "cold" or (capturable(work) and "graph" or "batch")
  r.notes[#r.notes + 1] = (
    "auto: %s; a launch takes about %s against a cold-launch floor of %s: %s mode"):format(
    because, units.time(est), units.time(floor), r.mode)
end

-- check: checked(run_once), given by a scenario with a check, is called before the warmup,
-- outside the watch, to call run_once() — the warmup's first launch, whose sample the warmup
-- keeps — and check its output, so that the check's run is not a launch of its own besides the
-- warmup's. Returns that launch's samples and its time, or nothing.
local function check_first(work, cfg, checked)
  if not checked then return nil, nil end
  local first, first_time
  checked(function()
    local t = core.clock()
    -- each item once
    first = (cfg.mode == "host" and engine.time_host or engine.time_cold)(work, #items(work), false)
    first_time = core.clock() - t
  end)
  return first, first_time
end

-- Warm up. What decides auto's mode and the launches of a batch or graph sample is a launch after
-- the configuration's first rotation, which may hold one-time costs (loading a module, a
-- library's first call: 77 ms for cuBLAS's first f32 GEMM on the H200, docs/benchmarks.md): one
-- more rotation where the warmup holds no other, unless auto sees that the first is long beyond
-- those costs (long_beyond_doubt). Returns the estimate of one launch (s) and the warmup's time.
local function warm_up(work, cfg, r, first, first_time)
  local warm, warm_time = core.nvtx.auto_range("warmup", nil, warmup, work, cfg, first) -- nvtx
  local rotation = #items(work)
  local decides = cfg.mode == "auto" or cfg.mode == "batch" or cfg.mode == "graph"
  local only_first = #warm.gpu <= rotation
  local long = decides and only_first and cfg.mode == "auto"
    and long_beyond_doubt(warm, rotation, r.floor)
  if decides and only_first and not long then
    local t = core.clock()
    append(warm, engine.time_cold(work, rotation, false))
    warm_time = warm_time + (core.clock() - t)
  end
  warm_time = warm_time + (first_time or 0)
  r.warmup = { n = #warm.gpu, time = warm_time }
  local est = median(long or #warm.gpu > rotation
    and table.move(warm.gpu, rotation + 1, #warm.gpu, 1, {}) or warm.gpu)
  return est, warm_time
end

-- the mode the samples are taken in (auto's choice, graph refused for what it cannot capture),
-- whether they have the L2 flushed and are blocked, and the launches of a batch or graph sample
local function decide_mode(work, cfg, r, est)
  local blocks = cfg.flush_l2 and blockable(work)
  if r.mode == "auto" then choose_auto(r, work, est, blocks) end
  local refused = r.mode == "graph" and uncapturable(work)
  if refused then
    r.mode = "batch"
    r.notes[#r.notes + 1] = ("graph: '%s' may not be captured in a CUDA graph: batch mode"):format(
      refused)
  end
  local flushes = r.mode == "cold" or r.mode == "cupti"
  if cfg.flush_l2 and not flushes then
    r.notes[#r.notes + 1] = "--flush-l2 applies to cold and cupti samples only; ignored in "
      .. r.mode .. " mode"
  end
  r.flush_l2 = cfg.flush_l2 and flushes -- what the samples really had
  if r.flush_l2 and blocks and r.mode == "cold" then
    r.blocked = { gave_up = 0, kept = 0 }
    if r.requested_mode == "cold" then
      r.notes[#r.notes + 1]
        = "cold: the L2 is flushed before each sample: each sample queued behind a blocking kernel"
    end
  end
  if r.mode == "batch" or r.mode == "graph" then r.per = cfg.batch
    or bench.launches_per_sample(est, r.floor) end
end

-- The samples in chunks: take(n) measures one chunk, whose samples are kept, or discarded when the
-- GPU throttled (then a pause); next_chunk() sizes the next from the chunks' own samples and wall
-- time (kept or discarded). -> take, next_chunk, got (the kept samples), sized, watch
local function chunks(work, cfg, r, est)
  local got = { gpu = {}, enqueue = {} }
  local watch = chunk_watch.new(core.gpu_sample, core.clock)
  local sized = { done = 0, wall = 0, last = 0, min = cfg.adaptive and cfg.min_samples or 1 }
  local function next_chunk()
    return bench.chunk_size(est * r.per, sized.done, sized.wall, sized.last, sized.min,
      #items(work))
  end
  local function take(n)
    local t_chunk = core.clock()
    local c = measure_chunk(work, cfg, r, n, est)
    sized.done, sized.wall, sized.last = sized.done + #c.gpu, sized.wall + (core.clock() - t_chunk),
      n
    if watch:after_chunk(#c.gpu, #c.gpu * r.per) == "keep" then
      append(got, c, r)
      if r.mode == "cupti" then kernel_times.gather(r, c) end
      return c
    end
    watch:pause(core.sleep)
  end
  return take, next_chunk, got, sized, watch
end

-- adaptive trials: chunks until the median's noise reaches the target or a stopping rule says
-- why not (bench.stop_reason), each kept chunk's samples, median and noise kept: why a plateau
local function adaptive_trials(take, next_chunk, got, cfg, r)
  local t0, gpu_time = core.clock(), 0
  r.adaptive = { target = cfg.target_noise, converged = false }
  r.adaptive_chunks = {}
  local history = {}
  repeat
    local c = take(next_chunk())
    for _, v in ipairs(c and c.gpu or {}) do gpu_time = gpu_time + v * r.per end
    local noise, elapsed = bench.median_noise(got.gpu), core.clock() - t0
    if c then
      history[#history + 1] = noise
      r.adaptive_chunks[#r.adaptive_chunks + 1] = { n = #c.gpu,
        median = core.stats.summary(c.gpu).median, noise = noise }
    end
    r.adaptive.noise, r.adaptive.elapsed, r.adaptive.gpu_time = noise, elapsed, gpu_time
    r.adaptive.stopped = #history > 0 and bench.stop_reason(history, cfg, #got.gpu, elapsed)
      or (elapsed >= cfg.max_time and "max_time") or nil
    r.adaptive.converged = r.adaptive.stopped == "target"
  until r.adaptive.stopped
end

-- The trials, between two reads of the SM clock: a fixed count in chunks of about CHUNK_TIME
-- (the clock of each where NVML gives it, and the timing events of one chunk reused by the next:
-- a sample costs its two numbers, not two events), or adaptive. -> the kept samples
local function trials(work, cfg, r, est, wall)
  -- nvtx
  local _measuring <close> = core.nvtx.auto_scope("measurement", nil,
    not cfg.adaptive and cfg.iters or nil)
  local t_clock = core.clock()
  r.clock = { before = core.gpu_clock() }
  r.wall = { floor = wall.floor, inputs = wall.inputs, warmup = wall.warmup,
    clocks = core.clock() - t_clock }
  local t_measure = core.clock()
  if core.cublas.prepared().working then -- host work on a thread of wlrun's own (docs/cublas.md)
    r.notes[#r.notes + 1]
      =
      "measured while wl.cublas.prepare's thread asked cuBLAS's heuristics: the host's enqueue "
      .. "times may read higher (docs/cublas.md); the GPU's are not touched"
  end
  local take, next_chunk, got, sized, watch = chunks(work, cfg, r, est)
  if not cfg.adaptive then
    while #got.gpu < cfg.iters do take(math.min(next_chunk(), cfg.iters - #got.gpu)) end
  else
    adaptive_trials(take, next_chunk, got, cfg, r)
  end
  watch:finish(r)
  r.wall.measure = core.clock() - t_measure
  -- of measure: inside the timed loops (each chunk's synchronisation included)
  r.wall.chunks = sized.wall
  t_clock = core.clock()
  r.clock.after = core.gpu_clock()
  r.wall.clocks = r.wall.clocks + (core.clock() - t_clock)
  return got
end

-- summaries: the statistics of the samples, the notes and the warnings of the checks
local function summaries(r, got, wall)
  if r.mode == "cupti" then kernel_times.finish(r) end
  local t_summary = core.clock()
  bench.summarize(r, got.gpu, got.enqueue)
  if r.mode == "cold" and r.stats.n > 0 and r.stats.median > 0 then
    r.notes[#r.notes + 1] = (
      "cold: each sample holds the GPU's own cost of one launch between its events, up to the "
      .. "cold-launch floor (%s, %.1f %% of the median); cupti mode leaves it out"):format(
      units.time(r.floor.empty_kernel), 100 * r.floor.empty_kernel / r.stats.median)
  end
  r.warnings = checks.evaluate(r, { device = core.device(), working_set = wall.ws,
    zero_inputs = wall.zero })
  r.wall.summary = core.clock() - t_summary
end

-- wl.bench(work, opts) -> result (see docs/measuring.md), in nvbench's phases: check the options,
-- initialise (the floor, the working set), check the first launch, warm up, decide the mode,
-- the trials, the summaries. checked: see check_first.
function bench.run(work, opts, checked)
  opts = opts or {}
  if type(opts) ~= "table" then core.error("script", "wl.bench: options must be a table", 2) end
  local cfg = configure(opts)
  if core.compile_only() then -- the do-nothing backend: the timed loop's checks, once per work
    local time = cfg.mode == "cupti" and engine.time_cupti or engine.time_cold
    time(work, math.max(1, #items(work)), false)
    return nil, core.not_measured -- no result: nothing ran, there is no number to print
  end
  local wall0 = core.clock()
  local r = {
    requested_mode = cfg.mode, mode = cfg.mode, flush_l2 = cfg.flush_l2, per = 1, notes = {},
    floor = bench.floor(), -- measured by the first wl.bench of the process, then kept
  }
  local wall = { floor = core.clock() - wall0 }
  wall.ws, wall.zero = working_set(work)
  wall.inputs = core.clock() - wall0 - wall.floor
  local first, first_time = check_first(work, cfg, checked)
  engine.set_measuring(true)
  local _measuring_flag <close> = setmetatable({},
    { __close = function() engine.set_measuring(false) end })
  local est
  est, wall.warmup = warm_up(work, cfg, r, first, first_time)
  decide_mode(work, cfg, r, est)
  local got = trials(work, cfg, r, est, wall)
  engine.set_measuring(false)
  r.watch = engine.watch()
  summaries(r, got, wall)
  r.time = core.clock() - wall0
  return setmetatable(r, bench.result_mt)
end

-- the samples and their summaries into result r (what results.record_bench keeps)
function bench.summarize(r, samples, enqueue)
  r.samples, r.enqueue = samples, enqueue
  r.stats = core.stats.summary(samples)
  r.enqueue_stats = core.stats.summary(enqueue)
  r.shape = core.stats.shape(samples)
  return r
end

bench.result_mt = {
  __name = "wlrun.result",
  __tostring = function(r)
    local T, s = units.time, r.stats
    local lines = {
      ("%s mode%s, n=%d (warmup %d): median %s, mean %s +/- %s (std), min %s, p90 %s, max %s; "
        .. "enqueue %s"):format(
        r.mode, r.per > 1 and (" (" .. r.per .. " launches per sample)") or "", s.n, r.warmup.n,
          T(s.median),
        T(s.mean), T(s.std), T(s.min), T(s.p90), T(s.max), T(r.enqueue_stats.median)),
    }
    for _, n in ipairs(r.notes) do lines[#lines + 1] = "note: " .. n end
    for _, w in ipairs(r.warnings) do
      lines[#lines + 1] = ("warning [%s] %s (hint: %s)"):format(w.code, w.message, w.hint)
    end
    return table.concat(lines, "\n")
  end,
}

return bench
