-- wlrun.json (src/laux/ljson.c, json_encode.c, json_decode.c, json_double.c): round trips of every
-- kind of value, the float text, the table rules (arrays, objects, marks, opts.objects), the key
-- order, strings (escapes, invalid UTF-8), errors with their paths, and decode's refusals with
-- line, column and position.
local json = require "wlrun.json"

local function fails(fn, ...)
  local ok, e = pcall(fn, ...)
  assert.is_false(ok)
  return tostring(e)
end

-- decode refusing TEXT: nil, a message with the line and column, the three numbers
local function refused(text)
  local v, msg, line, column, position = json.decode(text)
  assert.is_nil(v)
  assert.is_string(msg)
  assert.equal("integer", math.type(line))
  assert.equal("integer", math.type(column))
  assert.equal("integer", math.type(position))
  assert.matches(("^invalid JSON at line %d, column %d: "):format(line, column), msg)
  assert.is_true(position >= 1 and position <= #text + 1)
  return msg, line, column, position
end

-- the same value, numbers of the same subtype (1 and 1.0 differ, so do 0.0 and -0.0), marks
local function same(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) == "number" then
    return math.type(a) == math.type(b) and a == b and (a ~= 0 or 1 / a == 1 / b)
  end
  if type(a) ~= "table" then return a == b end
  if getmetatable(a) ~= getmetatable(b) then return false end
  for k, v in pairs(a) do
    if not same(v, b[k]) then return false end
  end
  for k in pairs(b) do
    if a[k] == nil then return false end
  end
  return true
end

local function round_trip(v)
  local text = json.encode(v)
  local back, err = json.decode(text)
  assert.is_nil(err)
  assert.is_true(same(v, back), "round trip of " .. text)
  assert.equal(text, json.encode(back))
  return text
end

-- Is S well-formed UTF-8 (utf8.len refuses surrogates and overlongs, as JSON readers do)?
local function valid_utf8(s)
  return utf8.len(s) ~= nil
end

describe("json.encode and json.decode", function()
  it("round-trip every kind of value", function()
    assert.equal("null", json.encode(nil))
    assert.equal("true", round_trip(true))
    assert.equal("false", round_trip(false))
    assert.equal('"text"', round_trip("text"))
    assert.equal("42", round_trip(42))
    assert.equal("-7", round_trip(-7))
    assert.equal("2.5", round_trip(2.5))
    assert.equal('{"a":[1,2,{"b":"c"}],"d":{"e":true}}',
      round_trip { a = { 1, 2, { b = "c" } }, d = { e = true } })
    assert.equal("[[],{}]", round_trip { json.array(), json.object() })
    assert.is_nil(json.decode("null"))
    assert.is_nil(select(2, json.decode("null"))) -- a value, not an error
  end)

  it("write floats as the shortest text that reads back, always as floats", function()
    local cases = {
      { 0.1, "0.1" }, { 1 / 3, "0.3333333333333333" }, { 1e-300, "1e-300" },
      { 5e-324, "4.94065645841247e-324" }, { 2.0 ^ 53 + 1, "9007199254740992.0" }, { -0.0, "-0.0" },
      { 1.0, "1.0" }, { 123456789012.0, "123456789012.0" }, { 1e300, "1e+300" }, { 0.0, "0.0" },
      { 1e15, "1e+15" }, { 1e-5, "1e-05" }, { 0.0001, "0.0001" },
        { 2 ^ 63, "9.223372036854776e+18" },
    }
    for _, c in ipairs(cases) do
      assert.equal(c[2], round_trip(c[1]))
    end
    for _ = 1, 2000 do -- random doubles: bit-exact
      local x = string.unpack("<d", string.pack("<i8",
        math.random(math.mininteger, math.maxinteger)))
      if x == x and x ~= math.huge and x ~= -math.huge then
        local back = json.decode(json.encode(x))
        assert.equal(string.pack("<d", x), string.pack("<d", back))
      end
    end
  end)

  it("write NaN and the infinities as null", function()
    assert.equal("[null,null,null]", json.encode { 0 / 0, math.huge, -math.huge })
    assert.equal('{"cv":null,"n":1}', json.encode { cv = 0 / 0, n = 1 })
  end)

  it("keep integers apart from floats, to the limits of 64 bits", function()
    assert.equal("9223372036854775807", round_trip(math.maxinteger))
    assert.equal("-9223372036854775808", round_trip(math.mininteger))
    assert.equal("integer", math.type(json.decode("1024")))
    assert.equal("float", math.type(json.decode("1024.0")))
    assert.equal("float", math.type(json.decode("1e3")))
    assert.equal("float", math.type(json.decode("1E3")))
    local v = json.decode('{"params": {"n": 5, "m": 2}}')
    assert.equal("integer", math.type(v.params.n))
  end)

  it("write a table with a field n as an object, never as an array", function()
    assert.equal('{"n":3}', round_trip { n = 3 })
    assert.equal('{"params":{"m":2,"n":5}}', round_trip { params = { n = 5, m = 2 } })
  end)

  it("write sequences as arrays, and any other integer keys as an object", function()
    assert.equal("[1,2,3]", json.encode { 1, 2, 3 })
    assert.equal('{"1":"a","3":"c"}', json.encode { [1] = "a", [3] = "c" })
    assert.equal('{"0":"z","1":"a"}', json.encode { [0] = "z", [1] = "a" })
    assert.equal('{"-1":0,"2":1}', json.encode { [-1] = 0, [2] = 1 })
    assert.equal('{"1":1,"x":2}', json.encode { 1, x = 2 })
    local t = { 1, 2, 3 }
    t[2] = nil -- a hole
    assert.equal('{"1":1,"3":3}', json.encode(t))
    t.x = { 4 } -- as many keys as #t may say: still not 1..n
    assert.equal('{"1":1,"3":3,"x":[4]}', json.encode(t))
    assert.equal('{\n  "1": 1,\n  "3": 3,\n  "x": [4]\n}', json.encode(t, { indent = true }))
  end)

  it("write empty tables as [] unless marked, or listed in opts.objects", function()
    assert.equal("[]", json.encode {})
    assert.equal("{}", json.encode(json.object()))
    assert.equal("[]", json.encode(json.array()))
    assert.equal('{"a":{},"b":[],"c":[[],[]]}',
      json.encode({ a = {}, b = {}, c = { {}, {} } }, { objects = { "a" } }))
    assert.equal('{"a":{},"b":[],"c":[{},{}]}', -- a set works too; elements go by the array's key
      json.encode({ a = {}, b = {}, c = { {}, {} } }, { objects = { a = true, c = true } }))
    assert.equal('{"b":[]}', json.encode({ b = {} }, { arrays = { "b" } }))
    -- the mark wins
    assert.equal('{"b":{}}', json.encode({ b = json.object() }, { arrays = { "b" } }))
    assert.equal('{"b":[]}', json.encode({ b = json.array() }, { objects = { "b" } }))
    -- an object mark holds when not empty
    assert.equal('{"1":"a"}', json.encode(json.object { "a" }))
  end)

  it("mark tables with one shared metatable each, refusing other metatables", function()
    local t = {}
    assert.equal(t, json.object(t))
    assert.is_true(json.is_object(t))
    assert.is_false(json.is_array(t))
    assert.equal(t, json.object(t)) -- again: fine
    assert.equal(getmetatable(json.object()), getmetatable(t))
    assert.matches("json.array: the table is marked json.object already", fails(json.array, t))
    assert.matches("json.object: the table has a metatable already",
      fails(json.object, setmetatable({}, {})))
    assert.is_true(json.is_array(json.array()))
    assert.is_false(json.is_array({}))
    assert.is_false(json.is_object("x"))
  end)

  it("decode empty containers marked, so that they are written back the same", function()
    local v = json.decode('{"a": {}, "b": [], "c": {"d": null}, "e": [null]}')
    assert.is_true(json.is_object(v.a))
    assert.is_true(json.is_array(v.b))
    assert.is_true(json.is_object(v.c))
    assert.is_true(json.is_array(v.e))
    assert.is_nil(getmetatable(v))
    assert.equal('{"a":{},"b":[],"c":{},"e":[]}', json.encode(v))
  end)

  it("decode null as nil: an absent key, a hole in an array", function()
    local v = json.decode('{"a": null, "b": [1, null, 3], "c": 1}')
    assert.is_nil(v.a)
    assert.is_nil(next(v, "c") == "a" and true or nil)
    assert.equal(1, v.b[1])
    assert.is_nil(v.b[2])
    assert.equal(3, v.b[3])
  end)

  it("order keys: orders[parent key], else order, then the rest sorted, integers first", function()
    local opts = { order = { "schema", "name" }, orders = { params = { "variant", "M", "N" } } }
    local doc = { zeta = 1, name = "x", schema = "s", alpha = 2,
                  params = { N = 3, M = 2, variant = "v", name = "p", K = 1 },
                  configurations = { { params = { N = 1, variant = "a", M = 0 }, name = "c",
                    b = 1 } } }
    assert.equal('{"schema":"s","name":"x","alpha":2,"configurations":[{"name":"c","b":1,'
      .. '"params":{"variant":"a","M":0,"N":1}}],"params":{"variant":"v","M":2,"N":3,"K":1,'
        .. '"name":"p"},"zeta":1}',
      json.encode(doc, opts))
    assert.equal('{"1":1,"2":2,"10":10,"B":0,"a":0,"b":0}',
      json.encode { [10] = 10, [2] = 2, [1] = 1, b = 0, a = 0, B = 0 })
    assert.equal('{"-5":0,"7":0}', json.encode { [7] = 0, [-5] = 0 })
  end)

  it("write the same text whatever the hash order", function()
    local a, b = {}, {}
    for i = 1, 200 do a["k" .. i] = i end
    for i = 200, 1, -1 do b["k" .. i] = i end
    assert.equal(json.encode(a), json.encode(b))
  end)

  it("indent with two spaces, scalar arrays on one line, no trailing newline", function()
    local text = json.encode({ a = 1, b = { 1, 2.5, "x", true }, c = { { d = {} } },
      e = json.object() }, { indent = true })
    assert.equal(
      '{\n  "a": 1,\n  "b": [1,2.5,"x",true],\n  "c": [\n    {\n      "d": []\n    }\n  ],\n  '
      .. '"e": {}\n}', text)
    assert.equal("[]", json.encode({}, { indent = true }))
    assert.equal("5", json.encode(5, { indent = true }))
    local samples = {}
    for i = 1, 100000 do samples[i] = i / 7 end
    local s = json.encode({ samples = samples }, { indent = true })
    assert.equal(2, select(2, s:gsub("\n", "")))
  end)

  it("escape strings, control characters included, and keep NUL", function()
    assert.equal('"a\\"b\\\\c/d"', round_trip('a"b\\c/d'))
    assert.equal('"\\n\\t\\r\\b\\f\\u0000\\u0001\\u001f"', round_trip("\n\t\r\b\f\0\1\31"))
    assert.equal('"a\\u0000b"', round_trip("a\0b"))
    assert.equal(3, #json.decode('"a\\u0000b"'))
    assert.equal('"\127"', round_trip("\127"))
    assert.equal('"é€😀"', round_trip("é€😀"))
    assert.equal("😀", json.decode('"\\ud83d\\ude00"'))
    assert.equal('{"k\\n":1}', round_trip { ["k\n"] = 1 })
  end)

  it("write every byte outside valid UTF-8 as \\u00XX, so that the text is always valid UTF-8",
    function()
    local cases = {
      -- never valid; stray continuation
      { "\xff", "\\u00ff" }, { "\xfe", "\\u00fe" }, { "\x80", "\\u0080" },
      { "\xc0\xaf", "\\u00c0\\u00af" }, { "\xc1\xbf", "\\u00c1\\u00bf" }, -- overlong 2-byte
      { "\xe0\x80\xaf", "\\u00e0\\u0080\\u00af" }, -- overlong 3-byte
      { "\xf0\x80\x80\xaf", "\\u00f0\\u0080\\u0080\\u00af" }, -- overlong 4-byte
      -- surrogates
      { "\xed\xa0\x80", "\\u00ed\\u00a0\\u0080" }, { "\xed\xbf\xbf", "\\u00ed\\u00bf\\u00bf" },
      -- > U+10FFFF
      { "\xf4\x90\x80\x80", "\\u00f4\\u0090\\u0080\\u0080" },
        { "\xf5\x80\x80\x80", "\\u00f5\\u0080\\u0080\\u0080" },
      -- truncated
      { "\xe4\xb8", "\\u00e4\\u00b8" }, { "\xf0\x9f\x98", "\\u00f0\\u009f\\u0098" },
        { "\xc3", "\\u00c3" },
      -- next to valid text
      { "a\xe4\xb8b", "a\\u00e4\\u00b8b" }, { "\xc3\xa9\xff\xc3\xa9", "é\\u00ffé" },
      -- the valid edges
      { "\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf", "\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf" },
    }
    for _, c in ipairs(cases) do
      local text = json.encode(c[1])
      assert.equal('"' .. c[2] .. '"', text)
      assert.is_true(valid_utf8(text))
      assert.is_string(json.decode(text))
    end
    local bytes = {}
    for i = 0, 255 do bytes[#bytes + 1] = string.char(i) end
    local all = table.concat(bytes):rep(3)
    -- jansson refuses NUL in keys (only there)
    local text = json.encode { [all:gsub("%z", "")] = all }
    assert.is_true(valid_utf8(text))
    assert.is_table(json.decode(text))
  end)

  it("refuse values JSON cannot hold, naming where they are", function()
    local doc = { configurations = { {}, {}, { metrics = { x = print } } } }
    assert.equal("json.encode: a function at configurations[3].metrics.x cannot be written as JSON",
      fails(json.encode, doc))
    assert.equal("json.encode: a thread at the top level cannot be written as JSON",
      fails(json.encode, coroutine.create(print)))
    assert.matches("json.encode: a userdata at a%[1%] cannot be written as JSON",
      fails(json.encode, { a = { io.stdout } }))
    assert.matches('json.encode: a function at %["a key"%] cannot',
      fails(json.encode, { ["a key"] = print }))
    assert.equal("json.encode: a key of type boolean in configurations[2].params",
      fails(json.encode, { configurations = { {}, { params = { [true] = 1 } } } }))
    assert.equal("json.encode: a key of type float in the top level",
      fails(json.encode, { [1.5] = 1 }))
    assert.equal("json.encode: a key of type table in x", fails(json.encode, { x = { [{}] = 1 } }))
    assert.equal('json.encode: the keys 1 and "1" in p would both be written as "1"',
      fails(json.encode, { p = { [1] = 1, ["1"] = 2 } }))
  end)

  it("refuse reference cycles, not shared tables", function()
    local doc = { scenario = { } }
    doc.scenario.axes = doc
    assert.equal("json.encode: a reference cycle at scenario.axes", fails(json.encode, doc))
    local t = { 1 }
    t[2] = t
    assert.equal("json.encode: a reference cycle at [2]", fails(json.encode, t))
    local shared = { 1, 2 }
    assert.equal('{"a":[1,2],"b":[1,2]}', json.encode { a = shared, b = shared })
  end)

  it("refuse nesting deeper than 1000 levels", function()
    local function nest(n)
      local t = {}
      local c = t
      for _ = 2, n do
        c.a = {}
        c = c.a
      end
      return t
    end
    assert.is_string(json.encode(nest(1000)))
    assert.matches("^json.encode: nesting deeper than 1000 levels at a%.a%.a%.a%.a%(%.%.%.%)%.a",
      fails(json.encode, nest(1001)))
  end)

  it("check the options", function()
    assert.equal("json.encode: unknown option 'indnet'", fails(json.encode, {}, { indnet = true }))
    assert.equal("json.encode: option 'indent' must be a boolean, not a number",
      fails(json.encode, {}, { indent = 2 }))
    assert.equal("json.encode: option 'order' must be a list of strings",
      fails(json.encode, {}, { order = { 1 } }))
    assert.equal("json.encode: option 'order' must be a list of strings, not a string",
      fails(json.encode, {}, { order = "a" }))
    assert.equal("json.encode: option 'orders.p' must be a list of strings, not a boolean",
      fails(json.encode, {}, { orders = { p = true } }))
    assert.matches("json.encode: option 'objects' must be a list of keys or a set",
      fails(json.encode, {}, { objects = { a = 1 == 2 } }))
    assert.equal("json.encode: options 'objects' and 'arrays' both name 'x'",
      fails(json.encode, {}, { objects = { "x" }, arrays = { x = true } }))
    assert.matches("bad argument #2 to '.*encode' %(table expected, got string%)",
      fails(json.encode, {}, "indent"))
  end)
end)

describe("json.decode refuses", function()
  it("trailing data, truncated text, empty text", function()
    local msg, line, column, position = refused("{}x")
    assert.equal("invalid JSON at line 1, column 3: end of file expected near 'x'", msg)
    assert.same({ 1, 3, 3 }, { line, column, position })
    refused("{} {}")
    refused('{"a": [1, 2')
    refused('"abc')
    msg = refused("")
    assert.matches("empty", msg)
    refused("   \n ")
  end)

  it("with the line and column of the error", function()
    local msg, line, column, position = refused('{\n  "a": 1,\n  "b": ]\n}')
    assert.equal(3, line)
    assert.equal(8, column)
    assert.equal(20, position) -- the byte of ']', counted from 1
    assert.matches("^invalid JSON at line 3, column 8: ", msg)
  end)

  it("duplicate keys, invalid UTF-8, lone surrogates", function()
    assert.matches("duplicate object key", refused('{"a": 1, "a": 2}'))
    assert.matches("0xff", refused('"\xff"'))
    assert.matches("unable to decode byte", refused('"\xed\xa0\x80"'))
    assert.matches("invalid Unicode", refused('"\\ud800"'))
    assert.matches("invalid Unicode", refused('"\\udc00x"'))
  end)

  it("integers beyond 64 bits, saying so", function()
    local msg = refused("[1, 9223372036854775808]")
    assert.matches("too big integer", msg)
    assert.matches("beyond 64 bits", msg)
    assert.matches("too big negative integer", refused("-9223372036854775809"))
    assert.equal(9.223372036854776e18, json.decode("9223372036854775808.0"))
  end)

  it("NaN and Infinity, comments, single quotes, trailing commas", function()
    for _, text in ipairs { "NaN", "[Infinity]", "-Infinity", "[1] // c", "{'a': 1}", "[1,]",
      '{"a":1,}', "01", "+1" } do
      refused(text)
    end
  end)

  it("nothing else: any value at the top, NUL in strings, nesting as deep as json.encode writes",
    function()
    assert.equal("x", json.decode('"x"'))
    assert.equal(1.5, json.decode(" 1.5 "))
    assert.is_false(json.decode("false"))
    assert.equal("a\0b", json.decode('"a\\u0000b"'))
    local deep = json.decode(("["):rep(1000) .. ("]"):rep(1000))
    assert.is_table(deep)
    assert.equal(2000, #json.encode(deep)) -- what decode reads, encode writes again
  end)

  it("nesting deeper than json.encode writes (1000 levels): nil and the reason", function()
    local v, msg = json.decode(("["):rep(1001) .. ("]"):rep(1001))
    assert.is_nil(v)
    assert.equal("nesting deeper than 1000 levels", msg)
    v, msg = json.decode('{"a":' .. ('{"b":'):rep(1000) .. "1" .. ("}"):rep(1001))
    assert.is_nil(v)
    assert.equal("nesting deeper than 1000 levels", msg)
  end)
end)

describe("json on a large document", function()
  it("decodes and re-encodes ~7 MB exactly", function()
    local configurations = {}
    for c = 1, 400 do
      local samples = {}
      for i = 1, 1000 do samples[i] = (c * 1000 + i) / 3e7 end
      configurations[c] = { index = c, params = { n = c }, samples = samples,
        warnings = json.array() }
    end
    local text = json.encode({ configurations = configurations }, { indent = true })
    assert.is_true(#text > 7e6)
    local doc = assert(json.decode(text))
    assert.equal(400, #doc.configurations)
    assert.equal(1000, #doc.configurations[400].samples)
    assert.equal(configurations[123].samples[456], doc.configurations[123].samples[456])
    assert.equal(text, json.encode(doc, { indent = true }))
  end)
end)

describe("json for strict readers and ordered writers", function()
  it("refuses a null inside an array when asked, naming where it is", function()
    assert.same({ a = { 1, 2 } }, json.decode('{"a": [1, 2]}', { array_nulls = false }))
    local v, msg = json.decode('{"c": [{"s": [1.0, null]}]}', { array_nulls = false })
    assert.is_nil(v)
    assert.equal("c[1].s[2] is null (arrays may not hold null here)", msg)
    assert.equal("[1] is null (arrays may not hold null here)",
      select(2, json.decode("[null]", { array_nulls = false })))
    -- an object's null is absent
    assert.same({ a = 1 }, json.decode('{"a": 1, "b": null}', { array_nulls = false }))
    assert.error_matches(function() json.decode("{}", { strict = true }) end,
      "json_spec%.lua:%d+: json%.decode: unknown option 'strict' %(options: array_nulls%)$")
    assert.has_error(function() json.decode("{}", { array_nulls = "no" }) end)
  end)

  it("refuses an order that is not a list of strings", function()
    for _, o in ipairs { { order = { a = 1 } }, { order = { "a", 2 } },
      { orders = { params = { a = 1 } } },
                         { orders = { params = { [2] = "x" } } } } do
      assert.has_error(function() json.encode({ a = 1 }, o) end)
    end
  end)

  it("takes a table's own metatable fields __jsontype and __jsonorder", function()
    local order = {}
    local o = setmetatable({}, { __jsontype = "object", __jsonorder = order,
      __newindex = function(t, k, v) order[#order + 1] = k rawset(t, k, v) end })
    o.zeta = 1
    o.alpha = 2
    o.mid = 3
    assert.equal('{"zeta":1,"alpha":2,"mid":3}', json.encode(o))
    assert.equal('{"e":{},"f":[]}', json.encode { e = setmetatable({}, { __jsontype = "object" }),
                                                 f = setmetatable({}, { __jsontype = "array" }) })
  end)
end)
