-- A history command's document as CSV (RFC 4180, as wlrun.report.csv writes a results
-- document): one header and a row per run (show, add), per commit of each configuration (trend),
-- per shift (blame) or per accept; the configuration's parameters as their JSON text; times in
-- seconds, changes as fractions, an empty field where there is no value.
local json = require "wlrun.json"
local C = require "wlrun.report.csv"

local M = {}

local function row(out, cells)
  local fields = {}
  for j, v in ipairs(cells) do fields[j] = type(v) == "number" and C.number(v) or C.field(v) end
  out[#out + 1] = table.concat(fields, ",")
end

local function params(p) return json.encode(json.object(p or {})) end

local function commit(c) return (c.commit or "") .. (c.dirty and "+" or "") end

local by_command = {}

function by_command.show(doc, out)
  row(out, { "run", "time", "scenario", "device", "commit", "branch", "merge_base",
    "configurations", "file" })
  for _, r in ipairs(doc.runs) do
    row(out, { r.id, r.time, r.scenario, r.device, commit(r), r.branch or "", r.merge_base or "",
      r.configurations, r.file })
  end
end

function by_command.trend(doc, out)
  row(out, { "scenario", "device", "params", "commit", "time", "runs", "median", "vs_first",
    "vs_previous" })
  for _, e in ipairs(doc.configurations) do
    for _, p in ipairs(e.points) do
      row(out, { e.scenario, e.device, params(e.params), commit(p), p.time, p.runs, p.median,
        p.change_first or "", p.change_previous or "" })
    end
  end
end

function by_command.blame(doc, out)
  row(out, { "scenario", "device", "params", "kind", "commit", "last_before", "to", "before",
    "after", "change", "p" })
  for _, e in ipairs(doc.configurations) do
    for _, x in ipairs(e.steps) do
      row(out, { e.scenario, e.device, params(e.params), "step", commit(x.first),
        commit(x.last_before), "", x.before, x.after, x.change, x.p })
    end
    for _, x in ipairs(e.drifts) do
      row(out, { e.scenario, e.device, params(e.params), "drift", commit(x.from), "",
        commit(x.to), "", "", x.change, x.p })
    end
  end
end

function by_command.add(doc, out)
  row(out, { "file", "run", "added", "scenario", "configurations", "not_measured", "commit",
    "commit_source", "branch", "merge_base" })
  for _, r in ipairs(doc.runs) do
    row(out, { r.file, r.run, tostring(r.added), r.scenario, r.configurations, r.not_measured,
      commit(r), r.commit_source, r.branch, r.merge_base })
  end
end

function by_command.accept(doc, out)
  row(out, { "scenario", "device", "params", "commit" })
  for _, a in ipairs(doc.accepted) do
    row(out, { a.scenario, a.device, params(a.params), a.commit })
  end
end

function M.render(doc)
  local out = {}
  by_command[doc.command](doc, out)
  return table.concat(out, "\r\n") .. "\r\n"
end

return M
