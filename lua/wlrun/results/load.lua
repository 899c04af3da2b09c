-- The one strict reader of results documents (docs/results.md), used by --resume, shard
-- costs, the child processes' entries and every tool: the text must be one JSON value (nothing
-- after it), of schema wlrun-results at the version this wlrun writes, and every part wlrun
-- reads must have its type: parameters are numbers, strings or booleans, samples are finite
-- numbers. A journal (results.journal) reads as the incomplete document it stands for.
-- Errors name the file and the position: a line and column for JSON, a path for the rest.
local core = require "wlrun.core"
local json = require "wlrun.json"
local printable = require "wlrun.text.printable"
local stdio = require "wlrun.text.stdio"
local schema = require "wlrun.results.schema"

local M = {}

local JOURNAL = "wlrun-journal"

local function fail(opts, kind, msg)
  core.error(kind, (opts.prefix or "") .. msg, 0)
end

-- the error of a version this wlrun does not read; one that is not a number (the text "1") says so
local function unsupported(opts, name, schema_name, got, want)
  local what = got == nil and "has no version" or math.type(got)
    and ("version %s is not supported"):format(got)
    or ("has a version that is not a number: %s"):format(printable.text(json.encode(got), 40))
  fail(opts, "usage", ("'%s': %s %s (this wlrun reads version %d)"):format(name,
    tostring(schema_name), what, want))
end

-- a sequence (keys 1..n, no holes, or none): for telling an array from an object
local function sequence(t)
  local n = 0
  for k in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 then return nil end
    n = n + 1
  end
  return #t == n and n or nil
end

-- Checks a decoded wlrun-results document (wlrun.results.schema); raises (kind usage) naming
-- `name` and the path of what is wrong.
function M.validate(doc, name, opts)
  local e = schema.check(doc)
  if e then fail(opts or {}, "usage", ("'%s' is malformed: %s"):format(name, e)) end
  return doc
end

-- schema and version of a decoded value; `accept` lists other schemas ({["wlrun-compare"] = 1})
local function check_schema(doc, name, opts)
  local want = { [schema.NAME] = schema.VERSION }
  for s, v in pairs(opts.accept or {}) do want[s] = v end
  if type(doc) ~= "table" or sequence(doc) and next(doc) ~= nil then
    fail(opts, "usage", ("'%s' is not a JSON object"):format(name))
  end
  local version = want[doc.schema]
  if not version then
    local names = {}
    for s in pairs(want) do names[#names + 1] = s end
    table.sort(names)
    fail(opts, "usage", ("'%s' is not a %s document (its schema is %s)"):format(name,
      table.concat(names, " or "),
      doc.schema == nil and "missing" or type(doc.schema) ~= "string"
        and ("a " .. type(doc.schema) .. ", not a name")
        or ("'" .. printable.text(doc.schema, 60) .. "'")))
  end
  if doc.version ~= version then unsupported(opts, name, doc.schema, doc.version, version) end
end

-- entries one per line without the journal's header line before them (its first line is an
-- entry: a JSON object with an index, status or params), which reads as JSON with extra text
local function headless_journal(text)
  local first = text:match("^%s*([^\n]*)\n%s*%S")
  local v = first and json.decode(first, { array_nulls = false })
  return type(v) == "table" and (v.index ~= nil or v.status ~= nil or v.params ~= nil)
end

-- one JSON value; line: the line of a journal it is on (its errors name that line)
local function decode_json(text, name, opts, line)
  local v, msg = json.decode(text, { array_nulls = false })
  if v == nil and msg and not line and headless_journal(text) then
    fail(opts, "usage",
      ("'%s' is not a wlrun journal: it has no header line (its first line is a "
      .. "configuration's entry, "
      .. "not {\"schema\":\"%s\",...})"):format(name, JOURNAL))
  end
  if v == nil and msg then
    -- a null in an array (non-finite numbers are written so)
    if not msg:find("^invalid JSON at ") then
      fail(opts, "usage", ("'%s' is malformed: %s%s"):format(name,
        line and ("line " .. line .. ": ") or "", msg))
    end
    msg = msg:gsub("^invalid JSON at ", "")
    if line then msg = msg:gsub("^line 1,", "line " .. line .. ",") end
    fail(opts, "usage", ("'%s' is not valid JSON: %s"):format(name, msg))
  end
  return v
end

-- a journal: a header line, then one entry per line; a last line cut short by a crash is left out
local function decode_journal(text, name, opts)
  local lines = {}
  for line in text:gmatch("([^\n]*)\n") do lines[#lines + 1] = line end
  local tail = text:match("[^\n]*$")
  local head = decode_json(lines[1] or tail, name, opts, 1)
  if type(head) ~= "table" or head.schema ~= JOURNAL or type(head.document) ~= "table" then
    fail(opts, "usage", ("'%s' is not a wlrun journal"):format(name))
  end
  if head.version ~= 1 then unsupported(opts, name, JOURNAL, head.version, 1) end
  local doc = head.document
  doc.configurations = {}
  for i = 2, #lines do
    if lines[i] ~= "" then doc.configurations[#doc.configurations + 1] = decode_json(lines[i], name,
      opts, i) end
  end
  if #lines >= 1 and tail ~= "" then doc.truncated = true end -- the last entry was being written
  doc.complete = false
  doc.journal = true
  return doc
end

function M.is_journal(text)
  local at = text:find("%S")
  return at ~= nil and text:find('{"schema":"' .. JOURNAL .. '"', at, true) == at
end

-- the text without a leading UTF-8 byte order mark, which JSON writers on Windows put first
function M.without_bom(text)
  if text:sub(1, 3) == "\xEF\xBB\xBF" then return text:sub(4) end
  return text
end

-- A results document from its text: decoded, schema and version checked, validated.
-- opts: prefix (put before every message, like "compare: "), accept (other schemas).
function M.decode(text, name, opts)
  opts = opts or {}
  text = M.without_bom(text)
  local doc
  if M.is_journal(text) then
    doc = decode_journal(text, name, opts)
  else
    doc = decode_json(text, name, opts)
  end
  check_schema(doc, name, opts)
  if doc.schema == schema.NAME then
    M.validate(doc, name, opts)
  elseif type(doc.configurations) ~= "table" then
    fail(opts, "usage", ("'%s' is malformed: no configurations array"):format(name))
  end
  return doc
end

-- The text of the file at path, or of standard input for "-", and its name ("<stdin>"), a
-- leading byte order mark left out: the one reader of results files; unreadable: kind io.
function M.read(path, opts)
  opts = opts or {}
  local text, name = stdio.read(path, function(kind, msg) fail(opts, kind, msg) end)
  return M.without_bom(text), opts.name or name
end

-- The document in the file at path (a results document or a journal), or on standard input
-- for "-" (named "<stdin>"); unreadable: kind io.
function M.load(path, opts)
  opts = opts or {}
  local text, name = M.read(path, opts)
  return M.decode(text, name, opts)
end

return M
