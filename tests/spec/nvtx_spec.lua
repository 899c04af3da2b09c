-- wl.nvtx in-process, without a tool attached (docs/nvtx.md): the API's checks, its account of
-- pushed and started ranges, errors for bad arguments and unbalanced use. What a tool receives
-- is checked under the recorder in tests/e2e/nvtx_spec.lua.
local wl = require "wlrun"
local nvtx = wl.nvtx

-- the error raised by fn(...): its kind and message
local function raises(fn, ...)
  local ok, e = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  if type(e) == "table" then return e.message, e.kind end
  return tostring(e), nil
end

describe("wl.nvtx", function()
  after_each(function()
    -- every test leaves the default and the automatic domain as it found them
    assert.equal(0, nvtx.depth())
    assert.equal(0, nvtx.domain("wlrun"):depth())
  end)

  it("pushes and pops, returning the depth and the popped range's name", function()
    assert.equal(1, nvtx.push("outer"))
    assert.equal(2, nvtx.push("inner", { color = "red", category = 3, payload = 7 }))
    assert.equal(2, nvtx.depth())
    assert.same({ "outer", "inner" }, nvtx.stack())
    assert.equal("inner", nvtx.pop())
    assert.equal("outer", nvtx.pop())
    assert.same({}, nvtx.stack())
  end)

  it("refuses a pop without a push (kind script)", function()
    local msg, kind = raises(nvtx.pop)
    assert.equal("script", kind)
    assert.matches("wl.nvtx.pop: no range is pushed in the default domain %(a pop without a push%)",
      msg)
    local d = nvtx.domain("spec.pop")
    msg = raises(d.pop, d)
    assert.matches("wl.nvtx domain 'spec.pop': pop: no range is pushed in domain 'spec.pop'", msg)
  end)

  it("range calls the function inside a pushed range and returns its results", function()
    local depth
    local a, b, c = nvtx.range("r", { color = 0x00ff00 }, function(x, y)
      depth = nvtx.depth()
      return x + y, "two", nil
    end, 1, 2)
    assert.same({ 3, "two" }, { a, b, c })
    assert.equal(1, depth)
    assert.equal(42, nvtx.range("no options", function() return 42 end))
    assert.equal(43, nvtx.range("nil options", nil, function() return 43 end))
    assert.equal(0, select("#", nvtx.range("nothing", function() end)))
  end)

  it("range pops on an error and lets the error through unchanged", function()
    local err = setmetatable({ kind = "script", message = "mine" },
      { __tostring = function() return "mine" end })
    local ok, e = pcall(nvtx.range, "failing", function()
      nvtx.push("left open by the error")
      error(err)
    end)
    assert.is_false(ok)
    assert.equal(err, e) -- the same object
    assert.equal(0, nvtx.depth())
    ok, e = pcall(nvtx.range, "failing", function() error("plain " .. "string", 0) end)
    assert.is_false(ok)
    assert.equal("plain string", e)
    assert.equal(0, nvtx.depth())
  end)

  -- a range whose function leaves ranges open closes them with a warning: tests/e2e/nvtx_spec.lua
  it("range refuses a function that popped the range's own entry", function()
    nvtx.push("before")
    local msg = raises(nvtx.range, "r", function() nvtx.pop() nvtx.pop() end)
    assert.matches(
      "wl.nvtx.range 'r' %(the default domain%): a range pushed before it was popped inside it",
      msg)
    assert.equal(0, nvtx.depth())
  end)

  it("range checks its arguments before pushing", function()
    assert.matches(
      "wl.nvtx.range: expected range%(name, %[options,%] function, ...%), got no value for the "
      .. "function",
      (raises(nvtx.range, "r")))
    assert.matches("got number for the function", (raises(nvtx.range, "r", {}, 5)))
    assert.matches("got nil for the function", (raises(nvtx.range, "r", nil, nil)))
    assert.matches("the name must be a string", (raises(nvtx.range, 5, function() end)))
    assert.matches("unknown option 'colour'", (raises(nvtx.range, "r", { colour = 1 },
      function() end)))
    assert.equal(0, nvtx.depth())
    -- a callable table is a function
    local callable = setmetatable({}, { __call = function(_, x) return x * 2 end })
    assert.equal(10, nvtx.range("callable", callable, 5))
  end)

  it("checks names and options", function()
    assert.matches(
      "wl.nvtx.push: the name must be a string or a registered string %(wl.nvtx.register%), "
      .. "got number",
      (raises(nvtx.push, 12)))
    assert.matches("got nil", (raises(nvtx.push)))
    assert.matches("got nil", (raises(nvtx.push, nil, {})))
    assert.matches("options must be a table", (raises(nvtx.push, "x", "red")))
    assert.matches("unknown option 'colour' %(options: color, category, payload%)",
      (raises(nvtx.mark, "x", { colour = 1 })))
    assert.matches("unknown option '1'", (raises(nvtx.mark, "x", { "red" })))
    assert.matches("unknown color 'mauve' %(0xRRGGBB, '#RRGGBB' or one of red, orange",
      (raises(nvtx.mark, "x", { color = "mauve" })))
    assert.matches("color must be 0xRRGGBB", (raises(nvtx.mark, "x", { color = -1 })))
    assert.matches("color must be 0xRRGGBB", (raises(nvtx.mark, "x", { color = 0x100000000 })))
    assert.matches("color must be 0xRRGGBB", (raises(nvtx.mark, "x", { color = 1.5 })))
    assert.matches("color must be 0xRRGGBB", (raises(nvtx.mark, "x", { color = true })))
    assert.matches("category must be a category's name or an id from 0 to 2%^32%-1, got %-1",
      (raises(nvtx.mark, "x", { category = -1 })))
    assert.matches("category must be", (raises(nvtx.mark, "x", { category = 2.5 })))
    assert.matches(
      "payload must be a number %(an integer is sent as int64, a float as double%), got string",
      (raises(nvtx.mark, "x", { payload = "7" })))
    assert.matches("payload must be a number", (raises(nvtx.mark, "x", { payload = true })))
    assert.equal(0, nvtx.depth()) -- a refused push pushed nothing
    -- accepted forms
    for _, c in ipairs { "red", "blue", "gray", "grey", "black", "white", "#1a2B3c", 0, 0xFFFFFF,
      0x80FFFFFF, 0xFFFFFFFF } do
      nvtx.mark("color", { color = c })
    end
    for _, p in ipairs { 0, -5, math.maxinteger, math.mininteger, 2.5, -0.0, 1e300 } do
      nvtx.mark("payload", { payload = p })
    end
    nvtx.mark("category", { category = 0 })
    nvtx.mark("category", { category = 0xFFFFFFFF })
    nvtx.mark("empty", {})
    nvtx.mark("")
  end)

  it("starts and stops ranges by id, refusing an unknown or stopped id", function()
    local a = nvtx.start("a", { color = "teal" })
    local b = nvtx.start("b")
    assert.is_true(math.type(a) == "integer" and b ~= a)
    assert.equal("a", nvtx.stop(a)) -- not nested: a ends before b
    assert.matches("wl.nvtx.stop: no range " .. a .. " is started in the default domain",
      (raises(nvtx.stop, a)))
    assert.matches("expected the id that start returned, got string", (raises(nvtx.stop, "b")))
    local d = nvtx.domain("spec.start")
    assert.matches("no range " .. b .. " is started in domain 'spec.start'", (raises(d.stop, d, b)))
    assert.equal("b", nvtx.stop(b))
    local c = d:start("c")
    assert.equal("c", d:stop(c))
  end)

  it("gives one domain object per name, each with its own stack", function()
    local d = nvtx.domain("spec.dom")
    assert.equal(d, nvtx.domain("spec.dom"))
    assert.equal("spec.dom", d:name())
    assert.equal("wl.nvtx domain 'spec.dom'", tostring(d))
    d:push("in d")
    assert.equal(1, d:depth())
    assert.equal(0, nvtx.depth())
    assert.matches("no range is pushed in the default domain", (raises(nvtx.pop)))
    assert.same({ "in d" }, d:stack())
    assert.equal(5, d:range("r", { color = "blue" }, function() return 5 end))
    d:mark("m", { payload = 1 })
    assert.equal("in d", d:pop())
    assert.matches(
      "wl.nvtx.domain: expected a domain's name %(a non%-empty string%), got an empty string",
      (raises(nvtx.domain, "")))
    assert.matches("got number", (raises(nvtx.domain, 3)))
    assert.matches("wlrun.nvtx.domain expected", (raises(d.push, "x")))
  end)

  it("names categories: by name (numbered on first use) or by id", function()
    local d = nvtx.domain("spec.cat")
    assert.equal(1, d:category("io"))
    assert.equal(2, d:category("compute"))
    assert.equal(1, d:category("io"))
    assert.equal(10, d:category(10, "ten"))
    assert.equal(10, d:category("ten"))
    assert.equal(11, d:category("after ten"))
    assert.equal(20, d:name_category(20, "twenty"))
    assert.equal(21, d:category("next"))
    d:mark("m", { category = "io" })
    d:mark("m", { category = "new by use" })
    assert.equal(22, d:category("new by use"))
    assert.matches("expected category%(name%) or category%(id, name%)",
      (raises(d.category, d, 0, "zero")))
    assert.matches("expected category", (raises(d.category, d, 1.5, "x")))
    assert.matches("expected category", (raises(d.category, d, 3)))
    assert.matches("expected name_category%(id, name%)", (raises(d.name_category, d, "x")))
    -- the default domain has its own numbering
    assert.is_true(math.type(nvtx.category("spec default")) == "integer")
    -- in the automatic domain, the kinds keep their ids
    assert.equal(nvtx.kinds.measurement.category, nvtx.domain("wlrun"):category("measurement"))
    assert.equal(13, nvtx.domain("wlrun"):category("spec user category")) -- the 12 kinds hold 1..12
  end)

  it("registers strings once per domain, usable as names in that domain only", function()
    local d = nvtx.domain("spec.reg")
    local s = d:register("hot loop")
    assert.equal(s, d:register("hot loop"))
    assert.equal("hot loop", tostring(s))
    assert.equal(1, d:push(s, { color = "red" }))
    assert.same({ "hot loop" }, d:stack())
    assert.equal("hot loop", d:pop())
    assert.equal(7, d:range(s, function() return 7 end))
    d:mark(s)
    d:stop(d:start(s))
    assert.matches(
      "wl.nvtx.push: the string 'hot loop' was registered in another domain than the "
      .. "default domain",
      (raises(nvtx.push, s)))
    local g = nvtx.register("global name")
    assert.equal("global name", nvtx.range(g, function() return nvtx.stack()[1] end))
    assert.matches("expected a string, got number", (raises(nvtx.register, 5)))
  end)

  it("names streams only given a wl.stream and a name", function()
    assert.matches("wlrun.stream expected, got string", (raises(nvtx.name_stream, "s", "name")))
    assert.matches("wlrun.stream expected, got no value", (raises(nvtx.name_stream)))
  end)

  it("has automatic ranges with a colour and a category per kind, on by default", function()
    assert.is_true(nvtx.auto_enabled())
    assert.equal("wlrun", nvtx.auto_domain)
    local seen = {}
    for _, kind in ipairs { "scenario", "configuration", "setup", "check", "warmup", "measurement",
      "teardown",
                            "loop", "iteration", "data", "step", "phase" } do
      local k = nvtx.kinds[kind]
      assert.is_table(k, kind)
      assert.equal(nvtx.colors[k.color_name], k.color)
      assert.is_nil(seen[k.color], "two kinds share a colour")
      seen[k.color] = true
    end
    do
      local _scope <close> = nvtx.auto_scope("phase", "forward", 3)
      assert.equal(1, nvtx.domain("wlrun"):depth())
      assert.same({ "forward" }, nvtx.domain("wlrun"):stack())
    end
    assert.equal(0, nvtx.domain("wlrun"):depth())
    assert.same({ 1, 2 }, { nvtx.auto_range("step", "step 1", function(a) return a, 2 end, 1) })
    assert.same({ "data" }, { nvtx.auto_range("data", nil,
      function() return nvtx.domain("wlrun"):stack()[1] end) })
    local s = nvtx.auto_scope("iteration")
    s:close()
    s:close() -- once only
    assert.matches("unknown kind of automatic range 'bogus' %(kinds: scenario, configuration,",
      (raises(nvtx.auto_scope, "bogus")))
    assert.matches("the payload of an automatic range must be a number",
      (raises(nvtx.auto_scope, "phase", "p", "x")))
    assert.matches("expected %(kind, name, function, ...%)",
      (raises(nvtx.auto_range, "phase", "p")))
    assert.matches("the name of an automatic range must be a string",
      (raises(nvtx.auto_scope, "phase", 5)))
    -- the automatic domain's stack is separate from the default domain's
    nvtx.push("user")
    nvtx.auto_range("phase", "p", function() assert.equal("user", nvtx.pop()) end)
  end)
end)
