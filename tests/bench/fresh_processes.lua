-- Benchmark helper (not a test): a child script run in fresh wlrun processes, once each way of a
-- list per round, the order turned every round; what the children print as "NAME VALUE" lines is
-- gathered by way and name. Loaded by dofile from the benchmarks beside it.
--   local fresh = dofile(here .. "fresh_processes.lua")
--   local got = fresh.run { bin = ..., child = SOURCE, hows = { "a", "b" }, rounds = 5,
--     args = function(how) return { how, ... } end,   -- the child's arguments (default: how)
--     env = function(how) return "NAME=VALUE " end }   -- a prefix of its command line (default:
-- none)
--   got[how][name]: the numbers printed under name, one a process; got[how].words[name]: the
--   last word printed under name where it is no number
--   fresh.median(list); fresh.kernel(here, "spin.cu"): a kernel's source, as an absolute path
local fresh = {}

local function q(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

function fresh.run(o)
  local base = os.tmpname() -- made empty by it: the script is beside it, with .lua
  local script = base .. ".lua"
  local function clean() os.remove(script) os.remove(base) end
  local f = assert(io.open(script, "w"))
  assert(f:write(o.child))
  assert(f:close())
  local got = {}
  for _, how in ipairs(o.hows) do got[how] = { words = {} } end
  for round = 1, o.rounds do
    for i = 1, #o.hows do
      local how = o.hows[(i + round - 2) % #o.hows + 1]
      local args = {}
      for j, a in ipairs(o.args and o.args(how) or { how }) do args[j] = q(a) end
      local p = assert(io.popen(("%s%s %s -- %s 2>&1"):format(o.env and o.env(how) or "", q(o.bin),
        q(script),
        table.concat(args, " "))))
      local text = p:read("a")
      if not p:close() then
        clean()
        error(how .. " failed:\n" .. text)
      end
      for line in text:gmatch("[^\n]+") do
        local name, value = line:match("^(.-) (%S+)$")
        if name and tonumber(value) then
          got[how][name] = got[how][name] or {}
          table.insert(got[how][name], tonumber(value))
        elseif name then
          got[how].words[name] = value
        end
      end
    end
  end
  clean()
  return got
end

-- the absolute path of a kernel's source beside the benchmarks (kernels/NAME under here, the
-- benchmark's own directory), for a child script that runs from elsewhere
function fresh.kernel(here, name)
  local path = here .. "kernels/" .. name
  return path:sub(1, 1) == "/" and path or os.getenv("PWD") .. "/" .. path
end

function fresh.median(t)
  t = table.move(t or {}, 1, #(t or {}), 1, {})
  table.sort(t)
  return #t % 2 == 1 and t[(#t + 1) // 2] or #t > 0 and (t[#t // 2] + t[#t // 2 + 1]) / 2 or 0 / 0
end

return fresh
