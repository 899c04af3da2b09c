-- wlrun.text.printable.data and its fast path in C (core.printable_clean), and what the text
-- printers
-- leave out before it (report.table.shown).
local core = require "wlrun.core"
local printable = require "wlrun.text.printable"
local T = require "wlrun.report.table"

describe("core.printable_clean", function()
  it("is true where every string, key or value, at any depth, is printable ASCII", function()
    assert.is_true(core.printable_clean({ a = "x", b = { c = { "d", 1, 2.5, true } }, [3] = "e" }))
    assert.is_true(core.printable_clean("plain text"))
    assert.is_true(core.printable_clean(42))
    assert.is_true(core.printable_clean({}))
  end)

  it("is false for a control byte, DEL or a byte from 0x80, in a value or a key, however deep",
    function()
    for _, s in ipairs { "a\27[2J", "tab\there", "del\127", "\xce\xbcs", "nul\0" } do
      assert.is_false(core.printable_clean(s), s)
      assert.is_false(core.printable_clean({ { { x = s } } }), s)
      assert.is_false(core.printable_clean({ ok = { [s] = 1 } }), s)
    end
  end)

  it("looks inside a table used as a key", function()
    assert.is_false(core.printable_clean({ [{ "\27" }] = 1 }))
  end)

  it("leaves a table seen twice, or nested past its depth, to the Lua walk (false)", function()
    local shared = { "x" }
    assert.is_false(core.printable_clean({ shared, shared }))
    local cycle = {}
    cycle.self = cycle
    assert.is_false(core.printable_clean(cycle))
    local deep = "x"
    for _ = 1, 100 do deep = { deep } end
    assert.is_false(core.printable_clean(deep))
  end)

  it("needs a value", function()
    assert.has_error(function() core.printable_clean() end)
  end)
end)

describe("printable.data", function()
  it("gives a clean value back as it is, the same table", function()
    local doc = { configurations = { { params = { n = 1 }, samples = { 1e-6, 2e-6 } } } }
    assert.equal(doc, printable.data(doc))
  end)

  it("escapes what needs it in a copy, a table shared copied once", function()
    local shared = { name = "a\27[31mred" }
    local doc = { x = shared, y = shared, ["k\1"] = "v", error = "line 1\nline 2\27" }
    local out = printable.data(doc, { error = true })
    assert.are_not.equal(doc, out)
    assert.equal("a\\x1b[31mred", out.x.name)
    assert.equal(out.x, out.y)
    assert.equal("v", out["k\\x01"])
    assert.equal("line 1\nline 2\\x1b", out.error)
    assert.equal("a\27[31mred", shared.name) -- the data itself is left alone
  end)

  it("keeps valid UTF-8 and the control characters asked for", function()
    assert.same({ "\xce\xbcs", "a\tb" }, printable.data({ "\xce\xbcs", "a\tb" }, nil, "\t"))
  end)
end)

describe("report.table.shown", function()
  it("leaves out the samples and enqueue times of configurations with a count", function()
    local c = { index = 1, stats = { n = 2, median = 1 }, samples = { 1, 2 }, enqueue = { 3, 4 },
      params = {} }
    local doc = { scenario = { name = "s" }, configurations = { c } }
    local shown = T.shown(doc)
    assert.is_nil(shown.configurations[1].samples)
    assert.is_nil(shown.configurations[1].enqueue)
    assert.equal(1, shown.configurations[1].stats.median)
    assert.same({ 1, 2 }, c.samples) -- the document is left alone
    assert.equal(doc.scenario, shown.scenario)
  end)

  it("keeps them where the stats have no count (a loop's summary counts the samples)", function()
    local c = { stats = { median = 1 }, samples = { 1, 2 } }
    assert.same({ 1, 2 }, T.shown({ configurations = { c } }).configurations[1].samples)
  end)

  it("gives what is not a document back as it is", function()
    assert.equal("x", T.shown("x"))
    local t = { a = 1 }
    assert.equal(t, T.shown(t))
  end)
end)
