-- Reading the history (docs/history.md): the stored results as rows, grouped into series (one
-- per configuration: scenario, device, parameters) and, within a series, into commits. The
-- order of a series is the order of its runs' times (the time each run started; runs of the
-- same time in the order they were added). `wlrun history` and the report read it here.
--
--   query.rows(db, {scenario =, device =, keep = function(params)}) -> rows, oldest first
--   query.series(rows) -> { {scenario, device, params, params_json, rows}, ... }
--   query.commits(series) -> { {commit, dirty, time, rows, median}, ... } in the series' order
--   query.samples(db, row) -> the row's samples
--   query.names(db, "scenario" or "device") -> the scenarios or devices of the runs, sorted
local core = require "wlrun.core"
local json = require "wlrun.json"
local printable = require "wlrun.text.printable"
local schema = require "wlrun.results.schema"
local stats = require "wlrun.compare.stats"

local query = {}

local SELECT = [[
SELECT r.id AS run, r.scenario, r.device, r.commit_sha, r.dirty, r.commit_source, r.time, r.added, r.file,
       r.branch, r.merge_base,
       x.params, x.unit, x.n, x.median, x.mean, x.min, x.max, x.stddev
FROM results x JOIN runs r ON r.id = x.run
WHERE (?1 IS NULL OR r.scenario = ?1) AND (?2 IS NULL OR r.device = ?2)
ORDER BY r.time, r.id]]

local function finite(v) return type(v) == "number" and v == v and v > -math.huge
  and v < math.huge end

local function corrupt(db, msg) core.error("io", ("%s: %s"):format(tostring(db), msg), 0) end

-- a time as the results loader takes one (wlrun.results.load): not negative, at most a year
local a_time = schema.is_duration

-- the parameters of a row: a JSON object of numbers, strings and booleans (a file someone
-- else wrote is checked like any input)
local function decode_params(db, row)
  local p = json.decode(row.params or "")
  local ok = type(p) == "table" and not json.is_array(p)
  for k, v in pairs(ok and p or {}) do
    ok = ok and type(k) == "string" and (type(v) == "string" or type(v) == "boolean" or finite(v))
  end
  if not ok then
    corrupt(db, ("run %s: parameters that are not a JSON object of values: %s"):format(row.run,
      printable.text(tostring(row.params))))
  end
  return p
end

local STATS = { "median", "mean", "min", "max", "stddev" }

function query.rows(db, sel)
  sel = sel or {}
  local out = {}
  for _, row in ipairs(db:rows(SELECT, sel.scenario, sel.device)) do
    for _, k in ipairs(STATS) do
      if not a_time(row[k]) then corrupt(db, ("run %s (%s): a %s that is not a time of 0 to a "
        .. "year: %s"):format(row.run, printable.text(tostring(row.params), 60), k,
        printable.text(tostring(row[k]), 40))) end
    end
    if math.type(row.n) ~= "integer" or row.n < 1 then
      corrupt(db, ("run %s (%s): a sample count that is not a positive integer: %s"):format(
        row.run, printable.text(tostring(row.params), 60), printable.text(tostring(row.n), 40)))
    end
    if type(row.commit_sha) ~= "string" or type(row.time) ~= "string" then
      corrupt(db, ("run %s: no commit or time"):format(row.run))
    end
    -- a table made without NOT NULL
    if type(row.scenario) ~= "string" or type(row.device) ~= "string" then
      corrupt(db, ("run %s: no scenario or device"):format(row.run))
    end
    row.param_values = decode_params(db, row)
    row.commit, row.commit_sha = row.commit_sha, nil
    row.dirty = row.dirty == 1
    -- '' where a file made otherwise holds no text (the schema says NOT NULL DEFAULT '')
    if type(row.branch) ~= "string" then row.branch = "" end
    if type(row.merge_base) ~= "string" then row.merge_base = "" end
    if not sel.keep or sel.keep(row.param_values) then out[#out + 1] = row end
  end
  return out
end

-- orders two values of a parameter: numbers by value, before strings, before booleans
local function less(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return ta == "number" or (ta == "string" and tb == "boolean") end
  if ta == "boolean" then return not a and b end
  return a < b
end

local function params_less(a, b)
  local names, seen = {}, {}
  for _, p in ipairs { a, b } do
    for k in pairs(p) do
      if not seen[k] then seen[k], names[#names + 1] = true, k end
    end
  end
  table.sort(names)
  for _, k in ipairs(names) do
    local x, y = a[k], b[k]
    if x == nil or y == nil then
      if x ~= y then return x == nil end
    elseif x ~= y then
      return less(x, y)
    end
  end
  return false
end

function query.series(rows)
  local by_key, list = {}, {}
  for _, row in ipairs(rows) do
    local key = row.scenario .. "\0" .. row.device .. "\0" .. row.params
    local s = by_key[key]
    if not s then
      s = { scenario = row.scenario, device = row.device, params = row.param_values,
        params_json = row.params, rows = {} }
      by_key[key] = s
      list[#list + 1] = s
    end
    s.rows[#s.rows + 1] = row
  end
  table.sort(list, function(a, b)
    if a.scenario ~= b.scenario then return a.scenario < b.scenario end
    if a.device ~= b.device then return a.device < b.device end
    if params_less(a.params, b.params) ~= params_less(b.params, a.params) then
      return params_less(a.params, b.params) end
    return a.params_json < b.params_json
  end)
  return list
end

local median = stats.median

-- A series by commit: the runs of one commit (and one state of its work tree: a dirty run is
-- not the commit's) are one point, at the time of its first run, whose value is the median of
-- its runs' medians. A run of no known commit is a point of its own.
function query.commits(series)
  local points, by = {}, {}
  for _, row in ipairs(series.rows) do
    local key = row.commit ~= "" and (row.commit .. (row.dirty and "+" or "")) or ("#" .. row.run)
    local p = by[key]
    if not p then
      p = { commit = row.commit, dirty = row.dirty, time = row.time, rows = {} }
      by[key] = p
      points[#points + 1] = p
    end
    p.rows[#p.rows + 1] = row
  end
  for _, p in ipairs(points) do
    local m = {}
    for i, row in ipairs(p.rows) do m[i] = row.median end
    p.median = median(m)
  end
  return points
end

local NAMES = {
  scenario = "SELECT DISTINCT scenario AS name FROM runs ORDER BY name",
  device = "SELECT DISTINCT device AS name FROM runs ORDER BY name",
}

function query.names(db, what)
  local out = {}
  local sql = assert(NAMES[what], what)
  for i, r in ipairs(db:rows(sql)) do out[i] = r.name end
  return out
end

-- The index in points (query.commits of series) of the commit whose level `wlrun history
-- accept` took as the series' new normal — the latest accept of a commit that the points hold
-- (one made on a branch's series is not the main line's) — or nil (the table is the schema's
-- since version 3).
function query.accepted(db, series, points)
  local at = {}
  for i, p in ipairs(points) do at[p.commit] = i end
  for _,
    r in ipairs(
    db:rows(
    "SELECT commit_sha FROM accepted WHERE scenario = ?1 AND device = ?2 AND params = ?3 ORDER "
    .. "BY rowid DESC",
    series.scenario, series.device, series.params_json)) do
    if at[r.commit_sha] then return at[r.commit_sha] end
  end
end

-- the samples of a row, checked as the results loader checks them: a JSON array of as many
-- times (0 to a year) as the row's count
function query.samples(db, row)
  local r = db:rows("SELECT samples FROM results WHERE run = ?1 AND params = ?2", row.run,
    row.params)[1]
  local xs = r and json.decode(r.samples or "", { array_nulls = false })
  local ok = type(xs) == "table" and not json.is_object(xs)
  for k, v in pairs(ok and xs or {}) do ok = ok and math.type(k) == "integer" and k >= 1
    and k <= #xs and a_time(v) end
  local where = ("run %s (%s)"):format(row.run, printable.text(tostring(row.params), 60))
  if not ok then corrupt(db, where .. ": samples that are not a JSON array of times of 0 to a "
    .. "year") end
  if #xs ~= row.n then
    corrupt(db, ("%s: %d samples where the row counts %s"):format(where, #xs,
      printable.text(tostring(row.n), 40)))
  end
  return xs
end

return query
