-- Runs wlrun under the NVTX recorder (tests/nvtx/recorder.c) and reads what it recorded, for
-- the NVTX specs (docs/nvtx.md). require "nvtx.record" from a spec (busted's --lpath has tests/).
local h = require "helper"

local record = {}

local function exists(path)
  local f = path and io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

local function compile_recorder()
  local dir = h.tmpdir()
  local out = dir .. "/libnvtx_recorder.so"
  local cuda = os.getenv("CUDA_HOME") or "/usr/local/cuda"
  local cmd = (
    "cc -shared -fPIC -O2 -fvisibility=hidden -I%s/include %s -o %s -lpthread "
    .. ">%s/cc.log 2>&1"):format(
    h.quote(cuda), h.quote(h.source_dir .. "/tests/nvtx/recorder.c"), h.quote(out), h.quote(dir))
  if os.execute(cmd) and exists(out) then return out end
  return nil, "could not compile tests/nvtx/recorder.c: "
    .. (h.read(dir .. "/cc.log"):match("[^\n]*") or "")
end

-- The recorder library: $WLRUN_NVTX_RECORDER (ctest sets it), a build directory's copy, or
-- compiled from tests/nvtx/recorder.c into a temporary directory (a GPU machine that got only
-- build-static/). Returns the path, or nil and why.
local cached, why
function record.library()
  if cached or why then return cached, why end
  for _, p in ipairs { os.getenv("WLRUN_NVTX_RECORDER"),
    h.source_dir .. "/build-static/libnvtx_recorder.so",
                       h.source_dir .. "/build/libnvtx_recorder.so" } do
    if p ~= "" and exists(p) then
      cached = p
      return p
    end
  end
  cached, why = compile_recorder()
  return cached, why
end

-- The Lua C module with its own copy of NVTX (tests/nvtx/second_instance.c), or nil.
function record.second_instance()
  local p = os.getenv("WLRUN_NVTX_SECOND")
  for _, c in ipairs { p, h.source_dir .. "/build/nvtx_second.so" } do
    if c and c ~= "" and exists(c) then return c end
  end
  return nil
end

local ESCAPES = { ["\\"] = "\\", t = "\t", n = "\n", r = "\r" }

-- the recorder's escapes undone: \\ \t \n \r \xHH
local function unescape(v)
  if not v:find("\\", 1, true) then return v end
  local out, i = {}, 1
  while i <= #v do
    local c = v:sub(i, i)
    if c ~= "\\" then
      out[#out + 1], i = c, i + 1
    elseif v:sub(i + 1, i + 1) == "x" then
      out[#out + 1], i = string.char(tonumber(v:sub(i + 2, i + 3), 16)), i + 4
    else
      out[#out + 1], i = ESCAPES[v:sub(i + 1, i + 1)] or v:sub(i + 1, i + 1), i + 2
    end
  end
  return table.concat(out)
end
record.unescape = unescape

-- one event: {kind =, domain =, level =, ...} with every field a string; .line the raw line
function record.parse_line(line)
  local e = { line = line }
  local first = true
  for part in (line .. "\t"):gmatch("([^\t]*)\t") do
    if first then
      e.kind, first = part, false
    else
      local k, v = part:match("^([^=]+)=(.*)$")
      assert(k, "recorder line without key=value: " .. line)
      e[k] = unescape(v)
    end
  end
  return e
end

function record.parse(text)
  local events = {}
  for line in text:gmatch("[^\n]+") do events[#events + 1] = record.parse_line(line) end
  return events
end

-- Runs wlrun (args: an argument string, as helper.run) under the recorder. opts as helper.run,
-- plus opts.extra_env. Returns the run's result with .events (parsed) and .lines (raw).
function record.run(args, opts)
  opts = opts or {}
  local lib = assert(record.library())
  local file = os.tmpname()
  os.remove(file)
  opts.env = ("NVTX_INJECTION64_PATH=%s WLRUN_NVTX_RECORD=%s %s"):format(h.quote(lib),
    h.quote(file),
    opts.extra_env or "")
  local r = h.run(args, opts)
  local f = io.open(file, "rb")
  local text = f and f:read("a") or ""
  if f then f:close() end
  os.remove(file)
  r.events, r.lines = record.parse(text), {}
  for line in text:gmatch("[^\n]+") do r.lines[#r.lines + 1] = line end
  return r
end

-- Writes a script into a temporary directory and runs it under the recorder.
function record.run_script(source, args, opts)
  local dir = (opts and opts.cwd) or h.tmpdir()
  local path = h.write(dir .. "/script.lua", source)
  opts = opts or {}
  opts.cwd = dir
  return record.run(h.quote(path) .. " " .. (args or ""), opts), path
end

-- the recorded lines minus init lines, optionally only those of one domain ("" the default)
function record.lines(r, domain)
  local out = {}
  for i, e in ipairs(r.events) do
    if e.kind ~= "init" and (domain == nil or e.domain == domain) then
      out[#out + 1] = r.lines[i] end
  end
  return out
end

-- The ranges of a domain as a tree: {name =, category =, color =, payload =, children = {...}}
-- built from push/pop; an unbalanced sequence is an error.
function record.tree(r, domain)
  local root = { children = {} }
  local stack = { root }
  for _, e in ipairs(r.events) do
    if e.domain == domain and e.kind == "push" then
      assert(tonumber(e.level) == #stack - 1, "push at the wrong level: " .. e.line)
      local node = { name = e.name, category = e.category, color = e.color, payload = e.payload,
        children = {} }
      table.insert(stack[#stack].children, node)
      stack[#stack + 1] = node
    elseif e.domain == domain and e.kind == "pop" then
      assert(#stack > 1, "pop without push: " .. e.line)
      assert(stack[#stack].name == e.name, "pop of another range: " .. e.line)
      assert(tonumber(e.level) == #stack - 2, "pop at the wrong level: " .. e.line)
      stack[#stack] = nil
    end
  end
  assert(#stack == 1, "ranges left open")
  return root.children
end

-- "a(b,c)" shapes of a tree, for compact assertions
function record.shape(nodes)
  local parts = {}
  for _, n in ipairs(nodes) do
    parts[#parts + 1] = n.name .. (#n.children > 0 and ("(" .. record.shape(n.children) .. ")")
      or "")
  end
  return table.concat(parts, ", ")
end

return record
