-- A results document as the history stores it (docs/history.md, "What is stored"): one run
-- (scenario, device, commit, time, identity) and one row per measured configuration (its
-- parameters as canonical JSON, the summary of its samples, the samples). The document comes
-- from the strict loader; what the loader lets through unchecked (a newer wlrun's parts) is
-- checked here before it is used.
local core = require "wlrun.core"
local json = require "wlrun.json"
local process = require "wlrun.process"
local results = require "wlrun.results"
local git = require "wlrun.results.git"

local record = {}

local function str(v) return type(v) == "string" and v or nil end

local ISO = "^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ$"

-- The commit a document records (its provenance, issue 18: provenance.commit and
-- provenance.dirty, or provenance.git.commit and .dirty), or nil.
function record.document_commit(doc)
  local p = type(doc.provenance) == "table" and doc.provenance or nil
  local g = p and type(p.git) == "table" and p.git or p
  local sha = g and str(g.commit)
  if not (sha and sha:match("^%x+$") and #sha >= 7 and #sha <= 64) then return nil end
  return { commit = sha:lower(), dirty = g.dirty == true, source = "document",
    branch = str(g.branch) }
end

-- The commit of a run: --commit, else the document's, else the one checked out in the current
-- directory's repository now (the checkout the user runs wlrun in, as their own `git status`
-- would); {commit = "" , source = ""} when none is known. Never git in a directory the
-- document names (its cwd, its scenario's file): a repository's configuration can make git run
-- a program of its own (a filter, a hook), and a results file is data, whoever wrote it.
function record.commit(doc, option)
  if option then return { commit = option, dirty = false, source = "option" } end
  local c = record.document_commit(doc)
  if c then return c end
  local head = git.head(process.cwd() or ".")
  if head then return { commit = head.commit, dirty = head.dirty, source = "git" } end
  return { commit = "", dirty = false, source = "" }
end

-- canonical JSON of a configuration's parameters: keys sorted, numbers as the document has
-- them (1024 and 1024.0 are different configurations, as results.key says)
function record.params_json(params)
  local copy = json.object()
  for k, v in pairs(params or {}) do copy[k] = v end
  return json.encode(copy)
end

-- The run in a loaded document: {identity, scenario, device, time, configurations = {rows}},
-- and the number of configurations left out (not measured, or a second one with the same
-- parameters). path: the file, for the record.
function record.run(doc, path)
  local rows, seen, left = {}, {}, 0
  local summary = core.stats.summary
  for _, c in ipairs(doc.configurations) do
    local samples = c.samples
    local params = record.params_json(c.params)
    if c.status ~= "ok" or type(samples) ~= "table" or #samples == 0 or seen[params] then
      left = left + 1
    else
      seen[params] = true
      local s = summary(samples)
      rows[#rows + 1] = {
        params = params, unit = "s", n = s.n, median = s.median, mean = s.mean, min = s.min,
          max = s.max,
        stddev = s.n > 1 and s.std or 0.0, samples = json.encode(json.array(samples)),
      }
    end
  end
  local sc = type(doc.scenario) == "table" and doc.scenario or {}
  local started = str(doc.started)
  return {
    -- the run itself, whatever the file's layout: the same document added twice is one run
    identity = process.hash(results.encode(doc, true)),
    scenario = str(sc.name) or str(sc.file) or "unnamed",
    device = type(doc.device) == "table" and str(doc.device.name) or "",
    time = started and started:match(ISO) and started or process.utc_now(),
    file = path,
    configurations = rows,
  }, left
end

local INSERT_RUN = [[
INSERT INTO runs (identity, scenario, device, commit_sha, dirty, commit_source, time, added, file, branch, merge_base)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) ON CONFLICT (identity) DO NOTHING]]

local INSERT_RESULT = [[
INSERT INTO results (run, params, unit, n, median, mean, min, max, stddev, samples)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)]]

-- Stores a run (record.run, with its branch and merge_base: '' when unknown) at a commit
-- (record.commit) inside the caller's transaction.
-- Returns {id, added = true}, or the run already stored with that identity {id, added =
-- false, commit, time}.
function record.insert(db, run, commit)
  local n = db:run(INSERT_RUN, run.identity, run.scenario, run.device, commit.commit, commit.dirty,
    commit.source,
    run.time, process.utc_now(), run.file, run.branch or "", run.merge_base or "")
  if n == 0 then
    local old = db:rows("SELECT id, commit_sha, added FROM runs WHERE identity = ?1",
      run.identity)[1]
    return { id = old.id, added = false, commit = old.commit_sha, time = old.added }
  end
  local id = db:last_insert_rowid()
  local st <close> = db:prepare(INSERT_RESULT)
  for _, r in ipairs(run.configurations) do
    st:run(id, r.params, r.unit, r.n, r.median, r.mean, r.min, r.max, r.stddev, r.samples)
  end
  return { id = id, added = true }
end

return record
