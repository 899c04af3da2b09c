-- Benchmark (not a test): what writing a run's results costs per configuration, against the
-- number of configurations, for every output format at once (-o x.json -o x.csv -o x.md
-- -o x.txt). Each configuration is an entry as wl.bench records one (100 samples, their
-- statistics, a warning, kernels, metrics). The writer journals each entry as it finishes and
-- renders the outputs once at the end (wlrun.results.journal); the baseline beside it is the
-- old way, every output rewritten after every configuration. Needs no GPU.
--   wlrun tests/bench/output_cost.lua [SAMPLES]
local journal = require "wlrun.results.journal"
local report = require "wlrun.report"
local core = require "wlrun.core"
local process = require "wlrun.process"

local SAMPLES = tonumber(arg and arg[1]) or 100

local function entry(i)
  local samples, enqueue = {}, {}
  for j = 1, SAMPLES do
    samples[j] = 1e-5 * (1 + 0.01 * math.sin(i * 7 + j))
    enqueue[j] = 3e-6 * (1 + 0.01 * math.cos(i + j))
  end
  local stats = core.stats.summary(samples)
  return {
    index = i, params = { n = i, variant = i % 2 == 0 and "tiled" or "naive", K = 1 << (i % 10) },
    status = "ok", mode = "graph", per = 12, warmup = 50, samples = samples, enqueue = enqueue,
    stats = stats, enqueue_stats = core.stats.summary(enqueue), shape = core.stats.shape(samples),
    work = { flops = 2 * i * i, bytes = 8 * i },
      metrics = { flop_per_s = 2 * i * i / stats.median },
    kernels = { { name = "k", source = "k.cu", arch = "sm_90", registers = 32,
      static_shared_bytes = 0 } },
    warnings = { { code = "cache-hot", title = "t", message = "the working set fits in L2",
      hint = "flush it" } },
    notes = { "auto: graph mode" }, clock = { before = { sm_mhz = 1980 },
      after = { sm_mhz = 1980 } }, time = 0.01,
  }
end

local function new_doc()
  return { schema = "wlrun-results", version = 1, complete = false,
    scenario = { name = "bench", axes = { "K", "n", "variant" } },
    settings = { run = { mode = "auto" } }, sources = {}, device = { name = "none" },
      configurations = {} }
end

local dir = os.tmpname()
os.remove(dir)
assert(process.make_dir(dir))
local outputs = {}
for _, ext in ipairs { "json", "csv", "md", "txt" } do
  outputs[#outputs + 1] = { path = ("%s/r.%s"):format(dir, ext),
    format = report.format_for_path("r." .. ext) }
end

local entries = {}
local function entries_upto(n)
  for i = #entries + 1, n do entries[i] = entry(i) end
  return entries
end

-- the journal and one rendering at the end
local function journaled(n)
  local list = entries_upto(n)
  local t0 = core.clock()
  local w = journal.open(new_doc(), outputs)
  for i = 1, n do w:add(list[i]) end
  w:finish(true)
  return core.clock() - t0
end

-- the old way: every output rendered again after each configuration
local function rewritten(n)
  local list = entries_upto(n)
  local doc = new_doc()
  local t0 = core.clock()
  for i = 1, n do
    doc.configurations[i] = list[i]
    for _, o in ipairs(outputs) do report.write(doc, o.path, o.format) end
  end
  return core.clock() - t0
end

print(("output cost of a run, %d samples per configuration, outputs: .json .csv .md .txt"):format(
  SAMPLES))
print(("%8s %12s %16s %10s %12s"):format("configs", "total (s)", "per config (ms)", "vs first",
  "old way (s)"))
local first
for _, n in ipairs { 125, 250, 500, 1000, 2000 } do
  local t = math.min(journaled(n), journaled(n), journaled(n)) -- the best of three
  local per = t / n
  first = first or per
  local old = n <= 250 and ("%12.3f"):format(rewritten(n)) or ("%12s"):format("-")
  print(("%8d %12.3f %16.3f %10.2f %s"):format(n, t, per * 1e3, per / first, old))
end
for _, o in ipairs(outputs) do os.remove(o.path) end
os.remove(dir)
print("linear: the cost per configuration stays flat as the count grows ('vs first' near 1)")
