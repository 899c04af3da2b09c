-- The structure of the C host and of the Lua library, drawn from the code itself
-- (docs/architecture.md, "Layers"): the modules of src/ and their layers, the include graph
-- between modules (no circle, nothing that includes upwards), who declares and who defines each
-- function, who calls the CUDA runtime, and the size of every source file; the folders of
-- lua/wlrun/ and their layers, the require graph (no circle, nothing that requires upwards) and
-- where requires sit. A new file in src/ must be given a module and a layer below (MODULES), a
-- new folder of lua/wlrun/ a layer (LUA_FOLDERS), or this spec fails and says so.
local h = require "helper"
local process = require "wlrun.process"

local ROOT = h.source_dir
-- No cap on a file's lines (issue 36: the cap made files split into two that call each other):
-- one job per file, and no two files that use each other, nor any circle of uses (below).

-- Layers, bottom to top: a file may include the headers of its own layer and of the layers
-- below, never above. Each module is a list of file stems ("json_*": a prefix); a stem that is
-- a header's and a source's (x.h, x.c, x_part.c) makes one module.
local BASE = "base (no Lua, no device)"
local LAUX = "Lua helpers and the Lua bindings of pure-C libraries"
local TOOLKIT = "toolkit (its libraries, compilers and code formats; no device)"
local DEVICE = "device backend"
local BIND = "bindings (wlrun.core)"
local ENGINE = "engine (the timed loops)"
local HOST = "Lua host"
local LAYERS = {
  { name = BASE, modules = {
      settings = { "settings" }, config = { "config" }, cli = { "cli" },
        cli_params = { "cli_params" },
      stats = { "stats" }, compare_stats = { "compare_stats" }, file_beside = { "file_beside" },
        half = { "half" },
      wl_rng = { "wl_rng" }, tensor_dtype = { "tensor_dtype" }, side_thread = { "side_thread" },
        embedded = { "embedded" },
  } },
  { name = LAUX, modules = {
      wl_exit = { "wl_exit" }, laux = { "laux" }, json = { "ljson", "json_*" },
        lsqlite = { "lsqlite" }, lua_guard = { "lua_guard" },
  } },
  { name = TOOLKIT, modules = {
      toolkit_lib = { "toolkit_lib" }, nvrtc_load = { "nvrtc_load" }, nvcc_run = { "nvcc_run" },
      cublas_load = { "cublas_load" }, cupti_load = { "cupti_load" },
        kernel_signature = { "kernel_signature" },
      kernel_module = { "kernel_module" }, kernel_cache = { "kernel_cache" },
        c_params = { "c_params" },
  } },
  { name = DEVICE, modules = {
      backend = { "backend", "backend_*" }, cuda_init_kernels = { "cuda_init_kernels" },
      cublas_prepare = { "cublas_prepare" },
  } },
  { name = BIND, modules = {
      wl_modules = { "wl_modules" }, cuda_device = { "cuda_device" },
        cuda_stream = { "cuda_stream" },
      cuda_graph = { "cuda_graph" }, cuda_tensor = { "cuda_tensor", "cuda_tensor_*" },
      cuda_kernel = { "cuda_kernel", "kernel_compile", "kernel_source", "host_work", "host_kernel",
        "cuda_module" },
      cuda_launch = { "cuda_launch", "launch_args" }, gpu_clock = { "gpu_clock", "nvml" },
        nvtx = { "nvtx", "nvtx_*" },
      lclock = { "lclock" }, lstats = { "lstats" }, lprintable = { "lprintable" },
        lsettings = { "lsettings" },
      lsystem = { "lsystem", "lsystem_files" }, user_library = { "user_library" },
        runtime_ops = { "runtime_ops" },
      gemm_args = { "gemm_args" }, lib_cublas = { "lib_cublas*" },
  } },
  { name = ENGINE, modules = {
      cuda_timing = { "cuda_timing", "l2_flush", "count_nonzero" },
        cupti_timing = { "cupti_timing" },
  } },
  { name = HOST, modules = { lhost = { "lhost" }, lhost_signals = { "lhost_signals" },
    main = { "main" } } },
}

-- The one header that declares what other modules define: the registration functions.
local REGISTRY = { wl_modules = true }
-- Who may include the host's header.
local HOST_HEADER, HOST_INCLUDERS = "lhost.h", { ["lhost.c"] = true, ["main.c"] = true }
-- Who may call the CUDA runtime (every other module goes through the backend).
local CUDA_CALLERS = { backend = true, cuda_init_kernels = true }
-- strings of an error code
local CUDA_ANYWHERE = { cudaGetErrorName = true, cudaGetErrorString = true }

-- The Lua library (lua/wlrun/, docs/architecture.md): its layers, bottom to top, one folder each
-- (LUA_FOLDERS; a few files at the top level: two leaves, the public API, the host's entry
-- point). A module requires its own layer's modules and the lower layers', never a higher
-- one's; the modules of the C host (wlrun.core and the others) are below them all. Requires
-- sit at the top of a file: one inside a function says why in a comment beside it. A new file
-- outside these folders, or a new folder, fails this spec until it is given a layer here.
local LUA_ROOT = "lua/wlrun"
local LEAVES = "leaves: text, the settings in force, the check of field names"
local MEASURE = "measure (timing a workload)"
local REPORT = "report (the printers)"
local RESULTS = "results (the results document)"
local TRACE = "trace (a traced program and its report)"
local RUN = "run (a scenario run)"
local API = "the public API (require \"wlrun\")"
local COMPARE = "compare (two runs compared)"
local HISTORY = "history (results across commits)"
local HTML = "html (wlrun report's page)"
local TOOLS = "tools (the commands' front doors)"
local ENTRY = "the host's entry point"
local LUA_LAYERS = { LEAVES, MEASURE, REPORT, RESULTS, TRACE, RUN, API, COMPARE, HISTORY, HTML,
  TOOLS, ENTRY }
local LUA_FOLDERS = {
  text = LEAVES, measure = MEASURE, report = REPORT, results = RESULTS, trace = TRACE, run = RUN,
  compare = COMPARE, history = HISTORY, html = HTML, tools = TOOLS,
}
local LUA_TOP = { ["settings.lua"] = LEAVES, ["fields.lua"] = LEAVES, ["init.lua"] = API,
  ["host.lua"] = ENTRY }
local LUA_FROM_C = { -- preloaded by the host (src/host/lhost.c)
  ["wlrun.core"] = true, ["wlrun.engine"] = true, ["wlrun.process"] = true, ["wlrun.json"] = true,
    ["wlrun.sqlite"] = true,
}
-- No function over MAX_FUNCTION lines (issue 36: functions that read as a sequence of named
-- steps), in C and in Lua, unless it is a table of cases (FUNCTION_EXCEPTIONS says which and
-- why). FUNCTION_PENDING: over it today, reported as pending by name; remove a line when it passes.
local MAX_FUNCTION = 80
local FUNCTION_EXCEPTIONS = {}
local FUNCTION_PENDING = {
}

-- one `it` per function over MAX_FUNCTION lines (or pending, or excepted), and one that says how
-- many were measured; key: "path name"
local function function_lengths(describe_what, list)
  local long = {}
  for _, f in ipairs(list) do
    if f.lines > MAX_FUNCTION and not FUNCTION_EXCEPTIONS[f.key] then long[#long + 1] = f end
  end
  it(("has no function over %d lines in %s (%d functions measured)"):format(MAX_FUNCTION,
    describe_what, #list), function()
    assert.is_true(#list > 100, #list .. " functions found")
    local over = {}
    for _, f in ipairs(long) do
      if not FUNCTION_PENDING[f.key] then over[#over + 1] = ("%s:%d %s (%d lines)"):format(f.path,
        f.line, f.name, f.lines) end
    end
    assert.same({}, over, "functions over " .. MAX_FUNCTION .. " lines: read them as named steps")
  end)
  for _, f in ipairs(long) do
    if FUNCTION_PENDING[f.key] then pending(("%s:%d %s: %d lines (at most %d)"):format(f.path,
      f.line, f.name, f.lines, MAX_FUNCTION)) end
  end
end

---------------------------------------------------------------------------------------------

local read = h.read

local function stem(file) return (file:gsub("%.[%w]+$", "")) end

-- module and layer index of each stem
local function module_of(s)
  local found, layer
  for li, l in ipairs(LAYERS) do
    for m, pats in pairs(l.modules) do
      for _, p in ipairs(pats) do
        local hit = p:sub(-1) == "*" and s:sub(1, #p - 1) == p:sub(1, -2) or s == p
        if hit then
          assert(not found or found == m, ("src/%s: in two modules, %s and %s"):format(s, found, m))
          found, layer = m, li
        end
      end
    end
  end
  return found, layer
end

local layer_of = {}
for li, l in ipairs(LAYERS) do for m in pairs(l.modules) do layer_of[m] = li end end

-- the sources of src/: {name, text, module}
-- The folders of src/, one layer each (docs/architecture.md): the tree shows the layers. No
-- source file sits at src/'s top level. src/trace is the injected library of wlrun trace, built
-- apart (its own spec: trace_library_spec).
local FOLDERS = { base = BASE, laux = LAUX, toolkit = TOOLKIT, device = DEVICE, bind = BIND,
  engine = ENGINE, host = HOST }
local APART = { trace = true }

local function sources()
  local files = {}
  local function scan(dir, folder)
    local names = assert(process.list_dir(dir))
    table.sort(names)
    for _, n in ipairs(names) do
      if not folder and FOLDERS[n] then
        scan(dir .. "/" .. n, n)
      elseif folder and not n:find("%.") and process.list_dir(dir .. "/" .. n) then
        scan(dir .. "/" .. n, folder) -- a folder inside a layer's is that layer's
      elseif n:match("%.[ch]$") or n:match("%.cu$") then
        files[#files + 1] = { name = (folder and folder .. "/" or "") .. n, base = n,
          folder = folder,
                              text = read(dir .. "/" .. n), module = (module_of(stem(n))) }
      end
    end
  end
  scan(ROOT .. "/src")
  return files
end

-- the sources of src/trace (the injected library of wlrun trace, built apart): {name, text}
local function trace_sources()
  local files = {}
  for _, folder in ipairs { "trace" } do
    local names = assert(process.list_dir(ROOT .. "/src/" .. folder))
    table.sort(names)
    for _, n in ipairs(names) do
      if n:match("%.[ch]$") then
        files[#files + 1] = { name = folder .. "/" .. n, base = n, folder = folder,
          text = read(ROOT .. "/src/" .. folder .. "/" .. n) }
      end
    end
  end
  return files
end

-- the code alone: comments, string and character literals blanked (lines kept), C++-only
-- blocks (#ifdef __cplusplus) dropped, so that patterns see only C
local function code_of(text)
  local out, i, n = {}, 1, #text
  while i <= n do
    local c, d = text:sub(i, i), text:sub(i, i + 1)
    if d == "/*" then
      local j = text:find("*/", i + 2, true) or n - 1
      out[#out + 1] = text:sub(i, j + 1):gsub("[^\n]", " ")
      i = j + 2
    elseif d == "//" then
      local j = text:find("\n", i, true) or n + 1
      i = j
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n and text:sub(j, j) ~= c and text:sub(j, j) ~= "\n" do
        j = j + (text:sub(j, j) == "\\" and 2 or 1)
      end
      out[#out + 1] = c .. (" "):rep(math.max(j - i - 1, 0)) .. c
      i = j + 1
    else
      out[#out + 1] = c
      i = i + 1
    end
  end
  return "\n" .. (table.concat(out):gsub("#ifdef __cplusplus\n.-#endif", ""))
end

local function includes(text)
  local list = {}
  for line in text:gmatch("[^\n]*") do
    local hname = line:match('^%s*#%s*include%s*"([^"]+)"')
    if hname then list[#list + 1] = hname end
  end
  return list
end

-- the functions a header declares (top level, outside struct bodies and preprocessor lines)
local function declared(text)
  local code = code_of(text):gsub("\\\n", " "):gsub("\n%s*#[^\n]*", "\n")
  local names, depth, stmt = {}, 0, {}
  for c in code:gmatch(".") do
    if c == "{" then depth = depth + 1
    elseif c == "}" then depth = depth - 1; stmt = {}
    elseif depth == 0 then
      if c == ";" then
        local s = table.concat(stmt)
        local name = s:match("([%a_][%w_]*)%s*%(")
        if name and not s:match("^%s*typedef") and not s:match("%(%s*%*") then
          names[#names + 1] = name end
        stmt = {}
      else
        stmt[#stmt + 1] = c
      end
    end
  end
  return names
end

-- the functions a source file defines: name(...) { at the top level; with exported_only, those
-- defined without `static` (other files may call them)
local function defined(text, exported_only)
  local code = code_of(text):gsub("\n%s*#[^\n]*", "\n")
  local names, depth, last = {}, 0, 1
  for i = 1, #code do
    local c = code:sub(i, i)
    if c == "{" then
      if depth == 0 then
        local head = code:sub(last, i - 1)
        local name = head:match("([%a_][%w_]*)%s*%b()%s*$")
        if name and not head:match("=%s*[^;]*$")
          and not (exported_only and head:match("%f[%w_]static%f[^%w_]")) then
          names[#names + 1] = name
        end
      end
      depth = depth + 1
    elseif c == "}" then
      depth = depth - 1
      if depth == 0 then last = i + 1 end
    elseif c == ";" and depth == 0 then
      last = i + 1
    end
  end
  return names
end

-- The use graph of the C files: a file uses another when it calls or names a function that the
-- other defines for other files. uses[a][b] = the first such name.
local function use_graph(files)
  local owner = {}
  for _, f in ipairs(files) do
    if f.name:match("%.c$") or f.name:match("%.cu$") then
      for _, n in ipairs(defined(f.text, true)) do owner[n] = f.name end
    end
  end
  local uses = {}
  for _, f in ipairs(files) do
    if f.name:match("%.c$") or f.name:match("%.cu$") then
      uses[f.name] = {}
      for word in code_of(f.text):gmatch("%f[%w_]([%a_][%w_]*)%f[^%w_]") do
        local o = owner[word]
        if o and o ~= f.name and not uses[f.name][o] then uses[f.name][o] = word end
      end
    end
  end
  return uses
end

-- the functions a source file defines and their lengths in lines: {{name =, line =, lines =}...}
local function c_function_lengths(text)
  local code = code_of(text):sub(2) -- without the newline code_of puts first
  local list, depth, last, line, open = {}, 0, 1, 1, nil
  for i = 1, #code do
    local c = code:sub(i, i)
    if c == "\n" then
      line = line + 1
    elseif c == "{" then
      if depth == 0 then
        local head = code:sub(last, i - 1)
        local name = head:match("([%a_][%w_]*)%s*%b()%s*$")
        if name and not head:match("=%s*[^;]*$") then open = { name = name, line = line } end
      end
      depth = depth + 1
    elseif c == "}" then
      depth = depth - 1
      if depth == 0 then
        last = i + 1
        if open then list[#list + 1] = { name = open.name, line = open.line,
          lines = line - open.line + 1 } end
        open = nil
      end
    elseif c == ";" and depth == 0 then
      last = i + 1
    end
  end
  return list
end

-- Fails naming the first circle of a graph (edges[a][b]: a uses b), walked in name order; an
-- edge whose value is a string is shown with it ("a -> b (what a uses of b)").
local function assert_no_circle(edges, what)
  local state, path = {}, {}
  local function visit(m)
    if state[m] == "done" or not edges[m] then return end
    if state[m] == "open" then
      local i = #path
      while path[i] ~= m do i = i - 1 end
      local circle = { table.unpack(path, i) }
      circle[#circle + 1] = m
      local shown = { circle[1] }
      for k = 2, #circle do
        local via = edges[circle[k - 1]][circle[k]]
        shown[k] = type(via) == "string" and ("%s (%s)"):format(circle[k], via) or circle[k]
      end
      error(what .. ": " .. table.concat(shown, " -> "), 0)
    end
    state[m], path[#path + 1] = "open", m
    local next = {}
    for n in pairs(edges[m]) do next[#next + 1] = n end
    table.sort(next)
    for _, n in ipairs(next) do visit(n) end
    state[m], path[#path] = "done", nil
  end
  local all = {}
  for m in pairs(edges) do all[#all + 1] = m end
  table.sort(all)
  for _, m in ipairs(all) do visit(m) end
end

-- The requires of a Lua text and where they sit: {list = {{name =, line =, in_function =}...},
-- comments = {[line] = true}}. A small reader of Lua's tokens: comments and strings (short and
-- long) are skipped whole, and the blocks are followed by their keywords (function, do, if,
-- repeat; end, until), so that a require inside a function is told from one at the top. name:
-- the module's, or the prefix of a name made at run time ("wlrun.tools." .. tool).
-- the name of the function whose keyword is tokens[k]: `function a.b:c(`, `local function f(`,
-- `x.y = function(`, else "(anonymous)"
local function lua_function_name(tokens, k)
  local parts, j = {}, k + 1
  while tokens[j] and (tokens[j].kind == "name" or tokens[j].value == "."
    or tokens[j].value == ":") do
    parts[#parts + 1] = tokens[j].value
    j = j + 1
  end
  if #parts > 0 then return table.concat(parts) end
  parts, j = {}, k - 2
  if tokens[k - 1] and tokens[k - 1].value == "=" then
    local keywords = { ["end"] = true, ["local"] = true, ["return"] = true, ["then"] = true,
      ["do"] = true, ["else"] = true }
    while tokens[j] and (tokens[j].kind == "name" and not keywords[tokens[j].value]
      or tokens[j].value == ".") do
      table.insert(parts, 1, tokens[j].value)
      j = j - 1
    end
  end
  return #parts > 0 and table.concat(parts) or "(anonymous)"
end

local function lua_requires(text)
  local tokens, comments = {}, {}
  local i, n, line = 1, #text, 1
  local function skip_to(j) -- past text[i..j-1], counting its lines
    for _ in text:sub(i, j - 1):gmatch("\n") do line = line + 1 end
    i = j
  end
  while i <= n do
    local c = text:sub(i, i)
    local long = text:match("^%[(=*)%[", c == "-" and i + 2 or i)
    if c == "\n" or c:match("%s") then
      skip_to(i + 1)
    elseif text:sub(i, i + 1) == "--" then
      comments[line] = true
      local stop = long and select(2, text:find("]" .. long .. "]", i, true))
        or text:find("\n", i, true) or n
      local first = line
      skip_to(long and stop + 1 or stop)
      for l = first, line do comments[l] = true end
    elseif c == '"' or c == "'" then
      local j, at = i + 1, line
      while j <= n and text:sub(j, j) ~= c do j = j + (text:sub(j, j) == "\\" and 2 or 1) end
      tokens[#tokens + 1] = { kind = "string", value = text:sub(i + 1, j - 1), line = at }
      skip_to(j + 1)
    elseif c == "[" and long then
      local at = line
      local _, stop = text:find("]" .. long .. "]", i, true)
      tokens[#tokens + 1] = { kind = "string", value = "", line = at }
      skip_to((stop or n) + 1)
    elseif c:match("[%a_]") then
      local word = text:match("^[%w_]+", i)
      tokens[#tokens + 1] = { kind = "name", value = word, line = line }
      i = i + #word
    elseif c:match("%d") then
      i = i + #text:match("^%d[%w%.]*", i)
    else
      local op = text:match("^%.%.%.?", i) or c
      tokens[#tokens + 1] = { kind = "op", value = op, line = line }
      i = i + #op
    end
  end
  local list, blocks, in_function, functions = {}, {}, 0, {}
  local opens = { ["function"] = true, ["do"] = true, ["if"] = true, ["repeat"] = true }
  for k, t in ipairs(tokens) do
    local before = tokens[k - 1]
    local field = before and before.kind == "op" and (before.value == "." or before.value == ":")
    if t.kind == "name" and not field then
      if opens[t.value] then
        blocks[#blocks + 1] = { word = t.value, line = t.line,
          name = t.value == "function" and lua_function_name(tokens, k) }
        if t.value == "function" then in_function = in_function + 1 end
      elseif t.value == "end" or t.value == "until" then
        local b = table.remove(blocks)
        if b and b.word == "function" then
          in_function = in_function - 1
          functions[#functions + 1] = { name = b.name, line = b.line, lines = t.line - b.line + 1 }
        end
      elseif t.value == "require" then
        local a, b = tokens[k + 1], tokens[k + 2]
        local name = a and a.kind == "string" and a or b and (a.value == "(" or a.value == ",")
          and b.kind == "string" and b
        list[#list + 1] = { name = name and name.value or "?", line = t.line,
          in_function = in_function > 0 }
      end
    end
  end
  return { list = list, comments = comments, functions = functions }
end

---------------------------------------------------------------------------------------------

describe("the C host's structure (src/)", function()
  local files = sources()

  it("gives every file of src/ a module and a layer", function()
    assert.is_true(#files > 20)
    for _, f in ipairs(files) do
      assert.truthy(f.module, ("src/%s has no module: give it one in the layer table of %s"):format(
        f.name,
        "tests/e2e/structure_spec.lua (and docs/architecture.md)"))
    end
  end)

  it("keeps each layer's folder to that layer, and every folder of src/ is a layer's", function()
    for _, f in ipairs(files) do
      if f.folder and f.module then
        assert.equal(FOLDERS[f.folder], LAYERS[layer_of[f.module]].name,
          ("src/%s is in folder %s (layer '%s') but its module %s is of layer '%s'"):format(f.name,
            f.folder,
            FOLDERS[f.folder], f.module, LAYERS[layer_of[f.module]].name))
      else
        error(("src/%s is at src/'s top level: put it in the folder of its layer"):format(f.name),
          0)
      end
    end
    for _, n in ipairs(assert(process.list_dir(ROOT .. "/src"))) do
      if not n:find("%.") then
        assert.truthy(FOLDERS[n] or APART[n],
          ("src/%s/ is no layer's folder: name it in FOLDERS of %s"):format(n,
          "tests/e2e/structure_spec.lua (and docs/architecture.md)"))
      end
    end
  end)

  it("includes only its own project headers, and each exists", function()
    local present = {}
    for _, f in ipairs(files) do present[f.base] = true end
    for _, f in ipairs(files) do
      for _, inc in ipairs(includes(f.text)) do
        assert.truthy(present[inc], ("src/%s includes \"%s\", which is not in src/"):format(f.name,
          inc))
      end
    end
  end)

  it("never includes upwards: a layer includes its own and the lower layers' headers", function()
    for _, f in ipairs(files) do
      for _, inc in ipairs(includes(f.text)) do
        local m = module_of(stem(inc))
        if m and f.module then
          assert.is_true(layer_of[m] <= layer_of[f.module],
            ("src/%s (%s, layer '%s') includes %s (%s, layer '%s')"):format(
            f.name, f.module, LAYERS[layer_of[f.module]].name, inc, m, LAYERS[layer_of[m]].name))
        end
      end
    end
  end)

  it("has no include circle between modules", function()
    local edges = {}
    for _, f in ipairs(files) do
      if not f.module then goto next_file end
      edges[f.module] = edges[f.module] or {}
      for _, inc in ipairs(includes(f.text)) do
        local m = module_of(stem(inc))
        if m and m ~= f.module then edges[f.module][m] = inc end
      end
      ::next_file::
    end
    assert_no_circle(edges, "include circle")
  end)

  it("has no two files that use each other, nor any circle of uses (the files of src/trace too)",
    function()
    local all = {}
    for _, f in ipairs(files) do all[#all + 1] = f end
    for _, f in ipairs(trace_sources()) do all[#all + 1] = f end
    local uses = use_graph(all)
    assert.truthy(next(uses))
    assert_no_circle(uses, "circle of uses between files")
  end)

  it("declares each function in the header of the module that defines it", function()
    local where = {}
    for _, f in ipairs(files) do
      if f.name:match("%.c$") or f.name:match("%.cu$") then
        for _, n in ipairs(defined(f.text)) do where[n] = f end
      end
    end
    local checked = 0
    for _, f in ipairs(files) do
      if f.name:match("%.h$") and not REGISTRY[f.module] then
        for _, n in ipairs(declared(f.text)) do
          local def = where[n]
          if def then -- the others are defined outside src/ (the embedded files: build/embedded.c)
            checked = checked + 1
            assert.equal(f.module, def.module,
              ("%s is declared in src/%s (module %s) but defined in src/%s (module %s)"):format(
              n, f.name, f.module, def.name, def.module))
          end
        end
      end
    end
    assert.is_true(checked > 50, "found only " .. checked .. " declarations")
  end)

  it("includes the host's header only from the host", function()
    for _, f in ipairs(files) do
      for _, inc in ipairs(includes(f.text)) do
        if inc == HOST_HEADER then
          assert.truthy(HOST_INCLUDERS[f.base],
            ("src/%s includes %s, which only the host includes"):format(f.name, HOST_HEADER))
        end
      end
    end
  end)

  it("calls the CUDA runtime only from the device backend", function()
    for _, f in ipairs(files) do
      if not CUDA_CALLERS[f.module] then
        for call in code_of(f.text):gmatch("%f[%w_](cuda%u[%w_]*)%s*%(") do
          local a_type = call:match("_t$") -- cudaError_t (*fn)(...)
          assert.truthy(CUDA_ANYWHERE[call] or a_type,
            ("src/%s calls %s: go through the device backend (backend.h)"):format(f.name, call))
        end
      end
    end
  end)

  it("finds what it checks (the parsers at work on a known file)", function()
    local launch, stream
    for _, f in ipairs(files) do
      if f.base == "cuda_launch.h" then launch = f end
      if f.base == "cuda_stream.c" then stream = f end
    end
    local decls = {}
    for _, n in ipairs(declared(launch.text)) do decls[n] = true end
    assert.truthy(decls.wl_test_bound and decls.wl_bound_check and decls.wl_bound_enqueue)
    assert.is_nil(decls.wl_bound) -- struct wl_bound; is no function
    local defs = {}
    for _, n in ipairs(defined(stream.text)) do defs[n] = true end
    assert.truthy(defs.wl_current_stream and defs.wl_open_stream and defs.stream_close)
    assert.same({ "cuda_device.h" }, includes("#include <lua.h>\n  # include \"cuda_device.h\"\n"))
    local lengths = c_function_lengths(
      "/* a { */\nstatic int f(int x) {\n  if (x) { return 1; }\n  return 0;\n}\nint g(void) { "
      .. "return 2; }\n")
    assert.same({ { name = "f", line = 2, lines = 4 }, { name = "g", line = 6, lines = 1 } },
      lengths)
  end)

  local functions, with_trace = {}, {}
  for _, f in ipairs(files) do with_trace[#with_trace + 1] = f end
  for _, f in ipairs(trace_sources()) do with_trace[#with_trace + 1] = f end
  for _, f in ipairs(with_trace) do
    for _, fn in ipairs(c_function_lengths(f.text)) do
      fn.path = "src/" .. f.name
      fn.key = fn.path .. " " .. fn.name
      functions[#functions + 1] = fn
    end
  end
  function_lengths("src/ (src/trace too)", functions)
end)

describe("the Lua library's structure (lua/wlrun/)", function()
  -- module name of a file: lua/wlrun/run/plan.lua -> wlrun.run.plan, .../report/init.lua ->
  -- wlrun.report
  local function module_name(p) return (p:gsub("^lua/", ""):gsub("%.lua$", ""):gsub("/",
    "."):gsub("%.init$", "")) end

  -- every .lua file under lua/wlrun, at any depth: {path, folder (nil at the top), name, layer}
  local function lua_files()
    local out = {}
    local function walk(dir, folder)
      local names = process.list_dir(ROOT .. "/" .. dir)
      if not names then return end
      table.sort(names)
      for _, n in ipairs(names) do
        local p = dir .. "/" .. n
        if n:match("%.lua$") then
          local layer = folder and LUA_FOLDERS[folder] or not folder and LUA_TOP[n] or nil
          out[#out + 1] = { path = p, folder = folder, name = module_name(p), layer = layer }
        elseif process.list_dir(ROOT .. "/" .. p) then
          walk(p, folder or n)
        end
      end
    end
    walk(LUA_ROOT)
    return out
  end

  local files = lua_files()
  local by_name, layer_index = {}, {}
  for i, l in ipairs(LUA_LAYERS) do layer_index[l] = i end
  for _, f in ipairs(files) do by_name[f.name] = f end

  -- the layer index of a required module (0: a module of the C host), or nil, what it is
  local function layer_of_module(name)
    if LUA_FROM_C[name] then return 0 end
    if name:sub(-1) == "." then -- a name made at run time from this prefix: a folder's modules
      local folder = name:match("^wlrun%.([%w_]+)%.$")
      return folder and LUA_FOLDERS[folder] and layer_index[LUA_FOLDERS[folder]]
    end
    local f = by_name[name]
    return f and f.layer and layer_index[f.layer]
  end

  local parsed = {}
  for _, f in ipairs(files) do parsed[f.path] = lua_requires(read(ROOT .. "/" .. f.path)) end

  it("finds the library and what it checks (the reader of requires at work on a known text)",
    function()
    assert.is_true(#files > 50)
    local r = lua_requires(table.concat({
      'local a = require "wlrun.core" -- a',
      "local s = [[ require 'x' ]] --[==[ require('y')",
      "]==] local function f()",
      "  if true then return require('wlrun.run.plan') end",
      "  -- why",
      "  local t = { pcall(require, 'wlrun.json') }",
      "  for i = 1, 2 do repeat local _ = require('wlrun.' .. i) until true end",
      "end",
      "local b = require 'wlrun.text.trim'",
    }, "\n"))
    local got = {}
    for _, q in ipairs(r.list) do got[#got + 1] = ("%s:%d:%s"):format(q.name, q.line,
      q.in_function and "f" or "top") end
    assert.same({ "wlrun.core:1:top", "wlrun.run.plan:4:f", "wlrun.json:6:f", "wlrun.:7:f",
      "wlrun.text.trim:9:top" }, got)
    assert.truthy(r.comments[1] and r.comments[5] and not r.comments[4] and not r.comments[6])
  end)

  it(
    "keeps every file in a layer's folder (or a top-level file of a layer), and every folder is "
    .. "a layer's", function()
    for _, f in ipairs(files) do
      assert.truthy(f.layer,
        f.folder
        and ("%s: lua/wlrun/%s/ is no layer's folder: name it in LUA_FOLDERS of %s"):format(
        f.path, f.folder, "tests/e2e/structure_spec.lua (and docs/architecture.md)")
        or ("%s sits at lua/wlrun/'s top level: put it in the folder of its layer"):format(f.path))
    end
  end)

  it(
    "never requires upwards: a module requires its own and the lower layers' modules, and "
    .. "each exists", function()
    local checked = 0
    for _, f in ipairs(files) do
      for _, q in ipairs(parsed[f.path].list) do
        if q.name == "wlrun" or q.name:match("^wlrun%.") then
          local li = layer_of_module(q.name)
          assert.truthy(li,
            ("%s:%d requires '%s', which is no module of the library or of the C host"):format(
            f.path,
            q.line, q.name))
          assert.is_true(li <= layer_index[f.layer],
            ("%s:%d (layer '%s') requires %s (layer '%s')"):format(f.path,
            q.line, f.layer, q.name, li == 0 and "the C host" or LUA_LAYERS[li]))
          checked = checked + 1
        end
      end
    end
    assert.is_true(checked > 200, "checked " .. checked .. " requires")
  end)

  -- Every require of the library's own modules, wherever it sits in the file (one inside a
  -- function still makes a circle). "wlrun" is the public API: the modules it loads must not
  -- need it back (settings come from wlrun.settings, a leaf).
  it("has no circle of requires: no module needs one that needs it back", function()
    local edges = {}
    for _, f in ipairs(files) do
      edges[f.name] = {}
      for _, q in ipairs(parsed[f.path].list) do
        if q.name ~= f.name then edges[f.name][q.name] = true end
      end
    end
    assert_no_circle(edges, "require circle")
  end)

  it(
    "requires at the top of a file, or says why not in a comment beside a require inside a "
    .. "function", function()
    for _, f in ipairs(files) do
      local r = parsed[f.path]
      for _, q in ipairs(r.list) do
        if q.in_function then
          assert.truthy(r.comments[q.line] or r.comments[q.line - 1],
            ("%s:%d: require '%s' inside a function: "
            .. "require it at the top of the file, or say why not in a comment on this line or "
              .. "the line before"):format(
            f.path, q.line, q.name))
        end
      end
    end
  end)

  it("measures functions (the reader at work on a known text)", function()
    local got = {}
    for _,
      fn in ipairs(
      lua_requires(
      "local function f()\n  if x then\n  end\nend\nfunction a.b:c() end\nt.x = "
      .. "function()\n\nend\n").functions) do
      got[#got + 1] = ("%s:%d:%d"):format(fn.name, fn.line, fn.lines)
    end
    assert.same({ "f:1:4", "a.b:c:5:1", "t.x:6:3" }, got)
  end)

  local functions = {}
  for _, f in ipairs(files) do
    for _, fn in ipairs(parsed[f.path].functions) do
      fn.path = f.path
      fn.key = f.path .. " " .. fn.name
      functions[#functions + 1] = fn
    end
  end
  function_lengths("lua/wlrun/", functions)
end)
