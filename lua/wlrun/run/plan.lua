-- The plan of a scenario run (docs/scenarios.md): the parameter space expanded (wlrun.run.sweep:
-- axes, where, -p, --filter), the slice of this process (--shard or a launcher's variables:
-- wlrun.run.shard) and what a previous run already finished (--resume). A plan is data: it touches
-- no device and runs nothing. Each configuration is {index =, params =, key =}: index is its
-- position in the whole space (the same in every shard and every child process), key its
-- identity across runs (results.key).
--
--   plan.build(sc, script, cli) -> {axes, space, list, todo, resumed, total, pruned, filtered,
--                                    shard, resume_path, resumed_from}
--     space     every configuration of the space, in order
--     list      the configurations of this process (its shard), in order
--     todo      those of list still to run
--     resumed   {[index] = entry} of list that --resume's file finished (plan.finished)
--     resume_outside  how many finished entries of that file this run's selection leaves out
--     resumed_from    {path, provenance, device, floor} of that file (each may be nil)
local core = require "wlrun.core"
local process = require "wlrun.process"
local printable = require "wlrun.text.printable"
local results = require "wlrun.results"
local sweep = require "wlrun.run.sweep"
local shard = require "wlrun.run.shard"

local plan = {}

-- Whether --resume takes an entry as finished: measured (ok) or skipped; compiled too under
-- --compile-only, which does no more. A measuring run measures a compiled one: it holds no
-- measurement. Failed ones run again.
function plan.finished(entry, compile_only)
  return entry.status == "ok" or entry.status == "skipped"
    or (compile_only and entry.status == "compiled") or false
end

-- --resume FILE: its finished entries by key
function plan.resumable(path, sc, script, compile_only)
  local old = results.load(path, { prefix = "--resume: " })
  if type(old.scenario) ~= "table" or old.scenario.name ~= sc.name then
    local text = printable.text
    local name = type(old.scenario) == "table" and old.scenario.name
    core.error("usage", ("--resume %s: its scenario is %s, this one is '%s'"):format(path,
      type(name) == "string" and ("'" .. text(name, 60) .. "'") or "not named",
        text(tostring(sc.name), 60)), 0)
  end
  local warning
  if old.scenario.hash ~= process.hash(results.read_file(script) or "") then
    warning = ("--resume %s was made by another version of %s (its hash differs)"):format(path,
      script)
  end
  local done = {}
  for _, c in ipairs(old.configurations) do
    if plan.finished(c, compile_only) and type(c.params) == "table" then
      done[results.key(c.params)] = c
    end
  end
  return done, warning, type(old.provenance) == "table" and old.provenance or nil, old
end

function plan.build(sc, script, cli)
  local space = sweep.expand(sc, cli.params, cli.filter)
  for _, cfg in ipairs(space.list) do cfg.key = results.key(cfg.params) end
  local p = {
    axes = space.axes, space = space.list, total = space.total, pruned = space.pruned,
      filtered = space.filtered,
    list = space.list, todo = {}, resumed = {}, notes = {},
  }
  local slice, info = shard.select(space.list, { shard = cli.shard })
  if info then
    p.list, p.shard = slice, info
    p.notes[#p.notes + 1] = shard.message(info)
  end
  local done = {}
  if cli.resume then
    local warning, provenance, old
    done, warning, provenance, old = plan.resumable(cli.resume, sc, script, cli.compile_only)
    p.resumed_from = { path = cli.resume, provenance = provenance, device = old.device,
      floor = old.floor }
    if warning then p.notes[#p.notes + 1] = "warning: " .. warning end
  end
  local taken = {}
  for _, cfg in ipairs(p.list) do
    local old = done[cfg.key]
    if old then
      p.resumed[cfg.index] = old
      taken[cfg.key] = true
    else
      p.todo[#p.todo + 1] = cfg
    end
  end
  p.resume_outside = 0 -- finished in --resume's file, but not in this run's selection
  for key in pairs(done) do
    if not taken[key] then p.resume_outside = p.resume_outside + 1 end
  end
  return p
end

-- the configuration of the space with this index (a child process's), or nil
function plan.find(p, index)
  for _, cfg in ipairs(p.space) do
    if cfg.index == index then return cfg end
  end
end

return plan
