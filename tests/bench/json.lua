-- wlrun.json against dkjson on synthetic results documents shaped like docs/results.md: 1,000
-- configurations x 1,000 samples (about 21 MB), and x 300 samples (about 7 MB); encode and
-- decode, each the best of a few runs, in CPU seconds (os.clock: the machine may be shared).
--   wlrun tests/bench/json.lua [configurations samples]    (one document of that size)
-- The samples are what wl.bench stores: float32 milliseconds from CUDA events, in seconds, so
-- they need 16 or 17 digits. dkjson is read from /usr/share/lua/5.4 (Debian's lua-dkjson);
-- without it only wlrun.json runs.
local json = require "wlrun.json"

local function document(nconf, nsamples)
  local rng = 12345
  local function random() -- a fixed LCG: the same document on every run
    rng = (rng * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
    return (rng >> 11) / (1 << 52)
  end
  local configurations = {}
  for c = 1, nconf do
    local samples = {}
    local base = 1e-4 * (1 + 100 * random())
    for i = 1, nsamples do
      local ms = string.unpack("f", string.pack("f", 1e3 * base * (1 + 0.05 * random())))
      samples[i] = ms / 1e3
    end
    configurations[c] = {
      index = c,
      params = { variant = ({ "naive", "tiled", "regtile" })[c % 3 + 1], M = 128 * c, N = 4096,
        K = 1024, n = 5 },
      status = "ok", mode = "cold", per = 1, warmup = 50,
      samples = samples,
      stats = { n = nsamples, mean = base, std = base * 0.01, median = base, min = base * 0.98,
                max = base * 1.2, p10 = base * 0.99, p25 = base, p75 = base * 1.01,
                  p90 = base * 1.02,
                p99 = base * 1.1, iqr = base * 0.02, cv = 0.01 * random() },
      work = { flops = 2.0 * 128 * c * 4096 * 1024, bytes = 4.0 * (128 * c + 4096) * 1024 },
      metrics = { flop_per_s = 1e14 * random(), bytes_per_s = 1e11 * random() },
      kernels = { { name = "gemm_tiled", registers = 38, static_shared_bytes = 8192,
        local_bytes = 0 } },
      check = { ok = true, message = "max relative error 2.1e-6" },
      warnings = json.array(), notes = json.array(),
      time = 0.84 * random(),
    }
  end
  return { schema = "wlrun-results", version = 1, complete = true,
           scenario = { name = "bench", axes = { "variant", "M", "N", "K" } },
           configurations = configurations }
end

local function best(runs, fn)
  local t = math.huge
  local result
  for _ = 1, runs do
    collectgarbage()
    local t0 = os.clock()
    result = fn()
    t = math.min(t, os.clock() - t0)
  end
  return t, result
end

local dkjson
do
  local path = package.searchpath("dkjson", "/usr/share/lua/5.4/?.lua")
  if path then dkjson = dofile(path) end
end

local function measure(nconf, nsamples)
  local doc = document(nconf, nsamples)
  local t_enc, text = best(5, function() return json.encode(doc) end)
  local t_dec = best(5, function() return assert(json.decode(text)) end)
  print(("%d configurations x %d samples: %.1f MB of JSON"):format(nconf, nsamples, #text / 1e6))
  print(("  %-14s %12s %12s"):format("", "encode (s)", "decode (s)"))
  print(("  %-14s %12.3f %12.3f"):format("wlrun.json", t_enc, t_dec))
  if dkjson then
    local d_enc, dtext = best(2, function() return dkjson.encode(doc) end)
    local d_dec = best(2, function() return assert(dkjson.decode(dtext)) end)
    print(("  %-14s %12.3f %12.3f"):format("dkjson", d_enc, d_dec))
    print(("  %-14s %11.1fx %11.1fx"):format("dkjson / ours", d_enc / t_enc, d_dec / t_dec))
  else
    print("  dkjson: not found in /usr/share/lua/5.4 (apt-get install lua-dkjson); skipped")
  end
  return t_enc, t_dec, #text
end

if arg and arg[1] then
  measure(assert(tonumber(arg[1])), assert(tonumber(arg[2] or 1000)))
else
  local t_enc = measure(1000, 1000)
  local _, t_dec, size = measure(1000, 300)
  print(
    ("targets: encode of 1,000 x 1,000 well under 0.2 s: %.3f s; decode of %.1f MB at most 0.2 "
    .. "s: %.3f s (%s)"):format(
    t_enc, size / 1e6, t_dec, t_dec <= 0.2 and "met" or "missed"))
end
