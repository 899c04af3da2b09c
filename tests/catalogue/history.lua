-- The catalogue of bad inputs, class "history": `wlrun history` (docs/history.md) given a
-- database that is not one, a results file that is not one, a place that cannot hold the
-- database, a bad command line or setting. See tests/catalogue.lua for the fields of a case.
local F = require "history_fixtures"

local GOOD = F.document { configs = { { params = { n = 1 }, samples = { 1.0, 1.1, 0.9 } } } }

-- a good document with its first `from` replaced by `to`
local function spoilt(from, to)
  local text, n = GOOD:gsub(from, to, 1)
  assert(n == 1, "the fixture has no " .. from)
  return text
end

return {
  { name = "history: a database that is text", code = 9, args = "history show --db h.db",
    files = { ["h.db"] = ("not a database\n"):rep(200) },
      stderr = "^wlrun: history: database 'h%.db': file is not a database\n" },
  { name = "history: adding to a database that is text", code = 9,
    args = "history add r.json --db h.db --commit a",
    files = { ["h.db"] = ("not a database\n"):rep(200), ["r.json"] = GOOD },
    stderr = "^wlrun: history: database 'h%.db': file is not a database\n" },
  { name = "history: an empty file as the database", code = 9, args = "history trend --db h.db",
    files = { ["h.db"] = "" },
      stderr = "^wlrun: history: database 'h%.db': an empty database: no run was added to it" },
  { name = "history: no file descriptor left (EMFILE) for SQLite's log", code = 9,
    args = "history add r.json --db h.db --commit a",
    -- descriptors 3 to 9 closed first: a test runner's inherited ones would take the few left
    prefix = [[sh -c 'for fd in 3 4 5 6 7 8 9; do eval "exec $fd>&-"; done; ulimit -n 5 && ]]
      .. [[exec "$0" "$@"']],
    files = { ["r.json"] = GOOD },
    stderr = "^wlrun: history: cannot write the database 'h%.db': Too many open files\n" },
  { name = "history: a database that is a directory", code = 9, args = "history show --db h.db",
    files = { ["h.db/x"] = "" },
      stderr = "^wlrun: history: the database 'h%.db' is a directory, not a file\n" },
  { name = "history: no database at the path", code = 9, args = "history blame --db none.db",
    stderr = "^wlrun: history: no history database at 'none%.db'" },
  { name = "history: the database's directory does not exist", code = 9,
    args = "history add r.json --db a/b/h.db --commit a",
    files = { ["r.json"] = GOOD },
      stderr
      =
      "^wlrun: history: cannot make the database 'a/b/h%.db': the directory 'a/b' does "
      .. "not exist\n" },
  { name = "history: a sample that is a string", code = 2,
    args = "history add r.json --db h.db --commit a",
    files = { ["r.json"] = spoilt('"samples": %[', '"samples": ["x", ') },
    stderr
      =
      "^wlrun: history: 'r%.json' is malformed: configurations%[1%]%.samples%[1%] is not a "
      .. "finite number\n",
    check = function(_, dir) assert(io.open(dir .. "/h.db") == nil, "a database was made") end },
  { name = "history: a parameter that is an object", code = 2,
    args = "history add r.json --db h.db --commit a",
    files = { ["r.json"] = spoilt('"n": 1', '"n": {"$ne": 1}') },
    stderr = "^wlrun: history: 'r%.json' is malformed: configurations%[1%]%.params%.n is a table" },
  { name = "history: a results file that is not JSON", code = 2,
    args = "history add r.json --db h.db --commit a",
    files = { ["r.json"] = "'); DROP TABLE runs; --" },
      stderr = "^wlrun: history: 'r%.json' is not valid JSON: line 1" },
  { name = "history: a results file of another schema", code = 2,
    args = "history add r.json --db h.db --commit a",
    files = { ["r.json"] = '{"schema": "wlrun-compare", "version": 1, "configurations": []}' },
    stderr = "^wlrun: history: 'r%.json' is not a wlrun%-results document" },
  { name = "history: a results file that is not there", code = 9,
    args = "history add gone.json --db h.db --commit a",
    stderr = "^wlrun: history: cannot read 'gone%.json'" },
  { name = "history: --fail-on that is not a percentage", code = 2,
    args = "history blame --fail-on 5x",
    stderr
      = "^wlrun: history: %-%-fail%-on: expected a percentage >= 0, like 5 or 2%.5%%, got '5x'\n" },
  { name = "history: an option of another command", code = 2,
    args = "history add r.json --fail-on 5",
    stderr = "^wlrun: history: %-%-fail%-on does not apply to add" },
  { name = "history: --filter that is not Lua", code = 2,
    args = "history trend --db h.db --filter 'n >'",
    stderr = "^wlrun: %-%-filter 'n >': " },
  { name = "history: -p without a value", code = 2, args = "history show --db h.db -p n=",
    stderr = "^wlrun: history: %-p 'n=': no value after '='" },
  { name = "history: --branch that could be an option of git", code = 2,
    args = "history trend --db h.db --branch=-x",
    stderr
      =
      "^wlrun: history: %-%-branch: expected a branch's name of letters, digits, '%.', '_', '/' "
      .. "and '%-' %(at most 200%), got '%-x'\n" },
  { name = "history: --branch with '..' (a range to git)", code = 2,
    args = "history add r.json --branch main..x",
    stderr = "^wlrun: history: %-%-branch: expected a branch's name" },
  { name = "history: [history] db with no value", code = 3, args = "history show",
    ini = "[history]\ndb =\n", stderr = "^wlrun: wlrun%.ini:2: history%.db: empty value" },
}
