-- The catalogue of bad inputs (docs/reliability.md, "Bad input"), one file per class in
-- tests/catalogue/, each returning a list of cases. A case is a table:
--   name      what it is (unique in the catalogue)
--   script    the text of a script to run (SCRIPT.lua in a fresh directory), or nil
--   args      the rest of the command line (already quoted where needed)
--   env       "NAME=value ..." put before the command
--   prefix    a command put before wlrun (like "timeout -s INT 2")
--   ini       the text of ./wlrun.ini;  files: {[relative path] = text} written beside it
--   code      the exit code wlrun must give;  stderr, stdout: patterns their text must match
--   check     function(r, dir): more assertions (r: code, stdout, stderr; dir: where it ran)
--   gpu       true: runs only where there is a GPU (tests/gpu/catalogue_spec.lua)
--   no_gpu    true: runs only where there is none
--   skip      a reason: the case is reported as pending, by name, instead (like gnuplot missing)
-- Every case also asserts: no death by a signal, no Lua PANIC, and a message that is not placed
-- in wlrun's own library files (an internal error instead of a message about the input).
local h = require "helper"
local assert = require "luassert"

local catalogue = {}

catalogue.classes = { "basics", "security", "memory", "values", "errors", "config", "lost",
  "host_work", "libraries", "modules", "trace", "history", "report", "results" }

function catalogue.load()
  local all, names = {}, {}
  for _, class in ipairs(catalogue.classes) do
    local path = h.source_dir .. "/tests/catalogue/" .. class .. ".lua"
    local f = io.open(path)
    if f then
      f:close()
      for _, c in ipairs(dofile(path)) do
        assert(not names[c.name], "the catalogue has two cases named " .. c.name)
        names[c.name] = true
        c.class = class
        all[#all + 1] = c
      end
    end
  end
  return all
end

function catalogue.run(c)
  local dir = h.tmpdir()
  if c.ini then h.write(dir .. "/wlrun.ini", c.ini) end
  for rel, text in pairs(c.files or {}) do
    local sub = rel:match("^(.*)/[^/]*$")
    if sub then assert(os.execute("mkdir -p " .. h.quote(dir .. "/" .. sub))) end
    h.write(dir .. "/" .. rel, text)
  end
  local opts = { cwd = dir, env = c.env, prefix = c.prefix }
  local r
  if c.script then
    r = h.run_script(c.script, (c.args or "") .. " --cache-dir " .. h.quote(dir .. "/cache"), opts)
  else
    r = h.run(c.args or "", opts)
  end
  local what = ("[%s] %s"):format(c.class, c.name)
  -- 130 (Ctrl-C) and 128 + a signal that a case sends on purpose (SIGTERM: 143) are wlrun's own
  -- clean ends; the case's message and outputs tell them from a death by that signal
  assert.is_true(r.how == "exit" and (r.code < 128 or r.code == 130 or r.code == c.code),
    what .. ": died of a signal: " .. r.stderr)
  assert.not_matches("PANIC", r.stderr, 1, false, what)
  local first = r.stderr:match("^[^\n]*") -- the message; a traceback may follow
  assert.not_matches("lua/wlrun/[%w_/]+%.lua:%d+:", first, 1, false,
    what .. ": an internal error, not a message")
  assert.equal(c.code, r.code, what .. ": " .. r.stderr)
  if c.stderr then assert.matches(c.stderr, r.stderr, 1, false, what) end
  if c.stdout then assert.matches(c.stdout, r.stdout, 1, false, what) end
  if c.check then c.check(r, dir) end
  return r
end

return catalogue
