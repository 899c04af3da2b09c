-- Benchmark (not a test): what `wlrun compare` costs against the number of configurations,
-- with the bootstrap and the rank sum of the U test in C (src/base/compare_stats.c) and, as the
-- baseline in the same run, with the Lua definitions they replaced (wlrun.compare.stats.use_c =
-- false).
-- Each side reads the two documents from disk, compares and renders the table, as the command
-- does. The documents are made here: SAMPLES samples per configuration, quantised to 10 ns (ties
-- for the U test), a quarter each meant to come out same, slower, faster and uncertain. It also
-- checks that both paths give the same verdicts, intervals and p-values. Wall times, and the C
-- path's CPU time (it runs a bootstrap on several threads where there are CPUs). Needs no GPU.
--   wlrun tests/bench/compare_scale.lua [SAMPLES] [MAX_CONFIGS]
local core = require "wlrun.core"
local report = require "wlrun.report"
local process = require "wlrun.process"
local stats = require "wlrun.compare.stats"
local document = require "wlrun.compare.document"
local render = require "wlrun.compare.render"
local cli = require "wlrun.tools.cli"

local SAMPLES = tonumber(arg and arg[1]) or 100
local MAX = tonumber(arg and arg[2]) or 1000

-- configuration i's samples, BASE (new = false) or NEW
local function samples(i, new)
  local kind, s = i % 4, {}
  local shift = not new and 0 or ({ [0] = 0, 0.05, -0.05, 0.02 })[kind]
  local spread = kind == 3 and 0.04 or 0.01
  for j = 1, SAMPLES do
    local t = 1e-5 * (1 + 0.001 * i) * (1 + shift + spread * math.sin(i * 7 + j * (new and 3 or 1)))
    s[j] = math.floor(t / 1e-8 + 0.5) * 1e-8
  end
  return s
end

local function results_of(n, new)
  local doc = { schema = "wlrun-results", version = 1, complete = true,
    scenario = { name = "bench", axes = { "n" } }, settings = { run = { mode = "cold" } },
      sources = {},
    device = { name = "none" }, configurations = {} }
  for i = 1, n do
    local s = samples(i, new)
    doc.configurations[i] = { index = i, params = { n = i }, status = "ok", mode = "cold", per = 1,
      warmup = 10,
      samples = s, stats = core.stats.summary(s) }
  end
  return doc
end

local dir = os.tmpname()
os.remove(dir)
assert(process.make_dir(dir))
local base_path, new_path = dir .. "/base.json", dir .. "/new.json"

-- the command's work: read both, compare, render the table
local function run(use_c)
  stats.use_c = use_c
  local t0, c0 = core.clock(), os.clock()
  local doc = document.compare(cli.load("compare", base_path), cli.load("compare", new_path), {})
  render.render(doc, "table")
  local t, cpu = core.clock() - t0, os.clock() - c0
  stats.use_c = true
  return t, doc, cpu
end

local function same_results(a, b)
  if #a.configurations ~= #b.configurations then return false end
  for i, x in ipairs(a.configurations) do
    local y = b.configurations[i]
    for _, k in ipairs { "verdict", "lo", "hi", "p", "u", "ratio" } do
      if x[k] ~= y[k] and not (x[k] ~= x[k] and y[k] ~= y[k]) then return false end
    end
  end
  local s, t = a.summary, b.summary
  return s.geomean_lo == t.geomean_lo and s.geomean_hi == t.geomean_hi
end

local function first_line(path)
  local f = io.open(path)
  if not f then return "?" end
  local line = f:read("l") or "?"
  f:close()
  return line
end
print(("wlrun compare of two documents, %d samples per configuration, 2000 resamples"):format(
  SAMPLES))
print(("load average before: %s (wall times: the C path uses up to one thread per CPU)"):format(
  first_line("/proc/loadavg")))
print(("%8s %10s %10s %12s %8s %18s %9s %s"):format("configs", "Lua (s)", "C (s)", "C CPU (s)",
  "ratio",
  "C per config (ms)", "vs first", "verdicts (same/slower/faster/uncertain)"))
local first, all_same = nil, true
for _, n in ipairs { 100, 300, 1000 } do
  if n > MAX then break end
  report.write(results_of(n, false), base_path, "json")
  report.write(results_of(n, true), new_path, "json")
  local t_lua, doc_lua = run(false)
  local t_c, doc_c, cpu_c = math.huge, nil, nil
  for _ = 1, 3 do -- the best of three
    local t, d, cpu = run(true)
    if t < t_c then t_c, doc_c, cpu_c = t, d, cpu end
  end
  local per = t_c / n
  first = first or per
  local same = same_results(doc_lua, doc_c)
  all_same = all_same and same
  local s = doc_c.summary
  print(("%8d %10.3f %10.3f %12.3f %7.1fx %18.3f %9.2f %d/%d/%d/%d %s"):format(n, t_lua, t_c, cpu_c,
    t_lua / t_c,
    per * 1e3, per / first, s.same, s.slower, s.faster, s.uncertain,
      same and "identical" or "DIFFERENT"))
end
os.remove(base_path)
os.remove(new_path)
os.remove(dir)
print(
  "ratio: the Lua baseline's wall time over C's; C CPU: all threads' CPU time; linear: 'vs "
  .. "first' near 1")
if not all_same then
  print("the C and Lua paths DISAGREE")
  os.exit(1)
end
print("verdicts, intervals, p-values and the geometric mean's interval identical on both paths")
