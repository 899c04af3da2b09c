-- A mutation fuzzer over results documents (issue 37, "a loader whose promise is kept"): every
-- results file of tests/fixtures, and a loop's and a trace's document, mutated at random (a key
-- removed, a value replaced by another type, a number made negative, huge or a different one, an
-- array emptied or cut, a sample changed so that the stats disagree), then read by the strict
-- loader and, where it accepts the text, given to every printer and tool that reads a document:
-- the text, table, Markdown and CSV printers, the loop summary, the Google Benchmark export, the
-- comparison both ways, the merge, the HTML report and the history's record. Every error must be
-- one of wlrun's own, with a kind (a usage error naming the file and the path); an error with no
-- kind ("attempt to index a nil value") is an internal error and fails the spec with the mutation
-- that made it. WLRUN_FUZZ_MUTATIONS sets how many (default 1500; scripts/fuzz-results.sh runs
-- more), WLRUN_FUZZ_SEED the seed.
local json = require "wlrun.json"
local load = require "wlrun.results.load"

local ROOT = os.getenv("WLRUN_SOURCE_DIR") or "."
local N = tonumber(os.getenv("WLRUN_FUZZ_MUTATIONS") or "") or 1500
local SEED = tonumber(os.getenv("WLRUN_FUZZ_SEED") or "") or 20261204

local h = require "helper"
local read = h.read

local SEEDS = {
  "tests/fixtures/results/sample.json", "tests/fixtures/results/h200-bandwidth.json",
  "tests/fixtures/results/metrics-base.json", "tests/fixtures/compare/sweep.json",
  "tests/fixtures/compare/base.json", "tests/fixtures/merge/shard_1.json",
    "tests/fixtures/merge/partial.json",
}

-- a loop configuration and a traced one, as wlrun writes them, from a seed document
local function loop_document(base)
  local doc = json.decode(json.encode(base))
  local c = doc.configurations[1]
  c.mode, c.status = "loop", "ok"
  c.samples = { 0.010, 0.011, 0.012, 0.010 }
  c.stats = require("wlrun.core").stats.summary(c.samples)
  c.loop = { batch_size = 64, data = { 0.001, 0.002, 0.001, 0.001 }, throughput = 5800.0,
    data_ratio = 0.12,
    total_time = 0.044, data_stats = require("wlrun.core").stats.summary { 0.001, 0.002, 0.001,
      0.001 },
    phases = { { name = "forward", mean = 0.004, median = 0.004, share = 0.4, top = true },
               { name = "backward", mean = 0.005, median = 0.005, share = 0.5, top = true } },
    outside = { mean = 0.001, median = 0.001, share = 0.1 } }
  c.trace = { step = "train_step", data = "data", timing = "gpu", steps = 6, ranges = "program",
    run_ahead = { lag_mean = 0.0, steps_max = 0 } }
  c.enqueue, c.enqueue_stats, c.kernel_times, c.span_stats = nil, nil, nil, nil
  return doc
end

-- the paths (lists of keys) of every value in t
local function paths(t, prefix, out)
  out = out or {}
  for k, v in pairs(t) do
    local p = { table.unpack(prefix) }
    p[#p + 1] = k
    out[#out + 1] = p
    if type(v) == "table" then paths(v, p, out) end
  end
  return out
end

local function at(t, path)
  for i = 1, #path - 1 do t = t[path[i]] end
  return t, path[#path]
end

local REPLACEMENTS = { "text", -1, 0, 1e308, -1e-300, 2 ^ 53, true, {}, { 1, 2 }, { a = 1 },
  "2026-02-31T10:00:00Z",
  "T99:99:99Z", 0.5, 4.00652 }

-- one mutation of doc (in place); returns what it did
local function mutate(doc, rng)
  local list = paths(doc, {})
  local path = list[rng(#list)]
  local parent, key = at(doc, path)
  local what = table.concat((function()
    local s = {}
    for i, k in ipairs(path) do s[i] = tostring(k) end
    return s
  end)(), ".")
  local old = parent[key]
  local r = rng(6)
  if r == 1 then
    if math.type(key) == "integer" then table.remove(parent, key) else parent[key] = nil end
    return "removed " .. what
  elseif r == 2 and type(old) == "number" then
    parent[key] = old * (rng(2) == 1 and -1 or 1000) + rng(3) - 2
    return "changed the number " .. what
  elseif r == 3 and type(old) == "table" and #old > 0 then
    for i = #old, 2, -1 do old[i] = nil end
    if rng(2) == 1 then old[1] = nil end
    return "cut the array " .. what
  elseif r == 4 and type(old) == "table" then
    local keys = {}
    for k in pairs(old) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    if #keys > 0 then old[keys[rng(#keys)]] = nil end
    return "removed a key of " .. what
  end
  local v = REPLACEMENTS[rng(#REPLACEMENTS)]
  if type(v) == "table" then v = json.decode(json.encode(v)) end
  parent[key] = v
  return ("replaced %s by %s"):format(what, json.encode(v))
end

-- an error of wlrun's own has a kind; anything else is internal
local function internal(e)
  if type(e) == "table" and type(e.kind) == "string" then return nil end
  return type(e) == "table" and tostring(e.message) or tostring(e)
end

local function consumers(doc, original)
  local report = require "wlrun.report"
  local list = {}
  for _, f in ipairs(report.formats) do
    list[#list + 1] = { "report " .. f, function() return report.render(doc, f) end }
  end
  list[#list + 1] = { "loop summary", function()
    local ls = require "wlrun.report.loop_summary"
    for _, c in ipairs(doc.configurations) do
      local s = ls.of_entry(c)
      if s then ls.render(s, "loop") end
    end
  end }
  list[#list + 1] = { "export gbench", function() return require("wlrun.tools.export").gbench(doc,
    {}) end }
  list[#list + 1] = { "compare new", function() return require("wlrun.compare.document").compare(
    original, doc, {}) end }
  list[#list + 1] = { "compare base", function() return require("wlrun.compare.document").compare(
    doc, original, {}) end }
  list[#list + 1] = { "merge", function() return require("wlrun.results.merge").merge({ doc, doc },
    { "a.json", "b.json" }) end }
  list[#list + 1] = { "html", function()
    return require("wlrun.html.report").render({ documents = { { doc = doc, path = "m.json" } },
      selection = {} })
  end }
  list[#list + 1] = { "history record", function() return require("wlrun.history.record").run(doc,
    "m.json") end }
  return list
end

describe("results documents under mutation", function()
  it(("give wlrun's own errors only, never an internal one (%d mutations)"):format(N), function()
    local seeds = {}
    for _, p in ipairs(SEEDS) do seeds[#seeds + 1] = { name = p,
      doc = json.decode(read(ROOT .. "/" .. p)) } end
    seeds[#seeds + 1] = { name = "loop", doc = loop_document(seeds[1].doc) }
    for _, s in ipairs(seeds) do -- every seed loads and goes through every consumer as it is
      local doc = load.decode(json.encode(s.doc), s.name)
      for _, c in ipairs(consumers(doc, doc)) do
        local ok, e = pcall(c[2])
        assert.is_true(ok or internal(e) == nil, ("%s: %s on the seed itself: %s"):format(s.name,
          c[1], internal(e)))
      end
    end
    local rng = h.lcg(SEED)
    local failures, accepted = {}, 0
    for i = 1, N do
      local seed = seeds[(i - 1) % #seeds + 1]
      local doc = json.decode(json.encode(seed.doc))
      local did = mutate(doc, rng)
      local text = json.encode(doc)
      local ok, loaded = pcall(load.decode, text, "m.json")
      if not ok then
        local bad = internal(loaded)
        if bad then failures[#failures + 1] = ("%s, %s: the loader: %s"):format(seed.name, did,
          bad) end
      else
        accepted = accepted + 1
        local original = load.decode(json.encode(seed.doc), seed.name)
        for _, c in ipairs(consumers(loaded, original)) do
          local fine, e = pcall(c[2])
          local bad = not fine and internal(e)
          if bad then failures[#failures + 1] = ("%s, %s: %s: %s"):format(seed.name, did, c[1],
            bad) end
        end
      end
      if #failures >= 10 then break end
    end
    print(("\n    %d mutations, %d accepted by the loader, %d internal errors"):format(N, accepted,
      #failures))
    assert.equal(0, #failures, table.concat(failures, "\n"))
  end)

  it(("give wlrun's own errors only as bytes of a document or a journal (%d mutations)"):format(N),
    function()
    local journal = require "wlrun.results.journal"
    local texts = {}
    for _, p in ipairs(SEEDS) do texts[#texts + 1] = { name = p, text = read(ROOT .. "/" .. p) } end
    do -- a journal as a run leaves it: the header line, then one configuration a line
      local doc = json.decode(texts[1].text)
      local dir = h.tmpdir()
      local configs = doc.configurations
      doc.configurations, doc.complete = {}, false
      local w = journal.open(doc, { { path = dir .. "/r.json", format = "json" } })
      for _, c in ipairs(configs) do w:add(c) end
      w.file:flush()
      texts[#texts + 1] = { name = "journal", text = read(dir .. "/r.json.journal"),
        journal = dir .. "/m.json.journal" }
      w:finish(false)
    end
    local rng = h.lcg(SEED + 1)
    local failures = {}
    for i = 1, N do
      local seed = texts[(i - 1) % #texts + 1]
      local t = seed.text
      local a, r = rng(#t), rng(5)
      local did
      if r == 1 then
        t, did = t:sub(1, a - 1) .. string.char(rng(256) - 1) .. t:sub(a + 1),
          ("byte %d changed"):format(a)
      elseif r == 2 then
        t, did = t:sub(1, a - 1) .. t:sub(a + rng(64)), ("bytes from %d cut out"):format(a)
      elseif r == 3 then
        t, did = t:sub(1, a), ("cut at %d"):format(a)
      elseif r == 4 then
        local b = rng(#t)
        t, did = t:sub(1, a) .. t:sub(b, b + rng(200)) .. t:sub(a + 1),
          ("bytes of %d copied to %d"):format(b, a)
      else
        local digit = t:find("%d", a)
        if digit then t = t:sub(1, digit - 1) .. tostring(rng(10) - 1) .. t:sub(digit + 1) end
        did = ("a digit at %s changed"):format(tostring(digit))
      end
      local ok, e
      if seed.journal then
        local f = assert(io.open(seed.journal, "wb"))
        f:write(t)
        f:close()
        ok, e = pcall(load.load, seed.journal)
      else
        ok, e = pcall(load.decode, t, "m.json")
      end
      local bad = not ok and internal(e)
      if bad then failures[#failures + 1] = ("%s, %s: %s"):format(seed.name, did, bad) end
      if #failures >= 10 then break end
    end
    print(("\n    %d byte mutations, %d internal errors"):format(N, #failures))
    assert.equal(0, #failures, table.concat(failures, "\n"))
  end)
end)
