-- Branches in the history (docs/history.md, "Branches"): the branch and merge base a run is
-- stored with, and the runs of a branch's series in the order of its first-parent line. git
-- runs in the current directory only, as for `add` (wlrun.results.git says why); where it
-- cannot say (no repository, a commit it does not know), the branch recorded with each run and
-- the order stored decide.
--
--   branches.of_run(doc_branch, option, commit) -> branch, merge_base   for a run being added
--   branches.select(rows, name) -> rows, {branch, main, merge_base}     a branch's series; each
--                                  row kept gets own = true when it is the branch's own run
--                                  (after the merge base), false when it is the main line's
local process = require "wlrun.process"
local git = require "wlrun.results.git"

local branches = {}

-- the main line: the first of these that git knows (in the order tried for the merge base too)
branches.MAIN_REFS = { "main", "master", "origin/main", "origin/master" }

-- the CI variables that name the branch of a detached HEAD, in the order they are read
branches.CI_VARIABLES = { "GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_REF_NAME" }

-- the branch of a run recorded as the main line's: main, master, or '' (unknown: a run of a
-- database made before branches were recorded, or one added where none could be told)
function branches.is_main(name) return name == "" or name == "main" or name == "master" end

local function ci_branch()
  for _, name in ipairs(branches.CI_VARIABLES) do
    local v = os.getenv(name)
    if v and v ~= "" then return v end
  end
end

local function cwd() return process.cwd() or "." end

local function is_commit(c) return type(c) == "string" and #c >= 7 and #c <= 64
  and c:match("^%x+$") ~= nil end

-- The branch and merge base of a run being added at commit (its sha, '' when unknown): the
-- branch is --branch, else the document's (its provenance), else that of the current
-- directory's checkout when the run's commit is the one checked out (a CI variable when that
-- checkout is a detached HEAD); the merge base is git's, of the commit and the main line. ''
-- for either when it cannot be told.
function branches.of_run(doc_branch, option, commit)
  local here = cwd()
  local name = option or doc_branch
  if not name and commit ~= "" then
    local head = git.head(here)
    if head and head.commit:sub(1, #commit) == commit then name = head.branch or ci_branch() end
  end
  local base = ""
  if is_commit(commit) then
    for _, ref in ipairs(branches.MAIN_REFS) do
      local m = git.merge_base(here, commit, ref)
      if m then
        base = m
        break
      end
    end
  end
  return name or "", base
end

-- the main line git knows: its ref and commits (oldest first), or nil
local function main_line(here)
  for _, ref in ipairs(branches.MAIN_REFS) do
    local line = git.first_parent(here, ref)
    if line then return ref, line end
  end
end

-- whether a run recorded on `recorded` belongs to the series of branch `name` (nil: the main
-- line)
local function recorded_on(recorded, name)
  if name == nil then return branches.is_main(recorded) end
  return recorded == name
end

-- The main line of a repository that has neither main nor master: where no run is recorded on
-- either (or on none), the branch of the first run stored (a trunk of another name); else nil.
local function other_trunk(rows)
  for _, row in ipairs(rows) do
    if branches.is_main(row.branch) then return nil end
  end
  return rows[1] and rows[1].branch
end

-- Reorders the rows that git placed (their line's index in row.place) by it, in the places
-- they hold in the stored order: the others stay where they are.
local function along_line(rows)
  local slots, placed = {}, {}
  for i, row in ipairs(rows) do
    if row.place then slots[#slots + 1], placed[#placed + 1] = i, row end
  end
  for i, row in ipairs(placed) do row.order = i end
  table.sort(placed, function(a, b)
    if a.place ~= b.place then return a.place < b.place end
    return a.order < b.order
  end)
  for k, i in ipairs(slots) do rows[i] = placed[k] end
  return rows
end

-- The rows (query.rows, in the order stored) of branch name's series (nil: the main line).
-- Where git knows the branch, a run whose commit git knows is in the series when its commit is
-- on the branch's first-parent line (the main line's runs up to the merge base, then the
-- branch's), and out of it otherwise; a run of a commit git does not know, or every run where
-- git does not know the branch, is in it by its recorded branch — a branch's own runs, and the
-- main line's up to the merge base (the stored one of the branch's latest run; without it,
-- those that started before the branch's first run).
function branches.select(rows, name)
  local here = cwd()
  local is_main = name == nil or branches.is_main(name)
  local main_ref, main = main_line(here)
  local trunk = not main_ref and other_trunk(rows)
  if trunk then main_ref, main = trunk, git.first_parent(here, trunk) end
  local line = main
  if not is_main then line = git.first_parent(here, name) end
  local series = not is_main and name or trunk or nil -- as recorded_on takes it
  local function on_main(b) return branches.is_main(b) or b == trunk end
  local info = { branch = is_main and (main_ref or "main") or name, main = main_ref or "main" }
  local pos, base_pos = {}, nil
  for i, sha in ipairs(line or {}) do pos[sha] = i end
  if line and not is_main and main_ref then
    info.merge_base = git.merge_base(here, name, main_ref)
    base_pos = info.merge_base and pos[info.merge_base]
  end
  local full = {}
  if line then
    local names, seen = {}, {}
    for _, row in ipairs(rows) do
      if is_commit(row.commit) and not seen[row.commit] then seen[row.commit],
        names[#names + 1] = true, row.commit end
    end
    full = git.resolve(here, names)
  end
  -- the runs of the branch by their recorded branch, for the merge base where git gave none,
  -- and the last main-line run (not placed by git) at that merge base
  local first_own_time, recorded_base, last_base
  for _, row in ipairs(rows) do
    if not is_main and row.branch == name then
      first_own_time = first_own_time or row.time
      if row.merge_base ~= "" then recorded_base = row.merge_base end
    end
  end
  for i, row in ipairs(rows) do
    if recorded_base and not full[row.commit] and on_main(row.branch) and row.commit ~= ""
      and recorded_base:sub(1, #row.commit) == row.commit then
      last_base = i
    end
  end
  info.merge_base = info.merge_base or recorded_base
  local kept = {}
  for i, row in ipairs(rows) do
    local sha = full[row.commit]
    row.place, row.own = nil, nil
    if sha then
      if pos[sha] then
        row.place = pos[sha]
        if base_pos then row.own = pos[sha] > base_pos else row.own = not is_main
          and row.branch == name end
        kept[#kept + 1] = row
      end
    elseif recorded_on(row.branch, series) then
      row.own = not is_main
      kept[#kept + 1] = row
    elseif not is_main and on_main(row.branch) then
      -- the main line's run of a commit git does not place: up to the merge base
      if (last_base and i <= last_base) or (not last_base and first_own_time
        and row.time < first_own_time) then
        row.own = false
        kept[#kept + 1] = row
      end
    end
  end
  return along_line(kept), info
end

return branches
