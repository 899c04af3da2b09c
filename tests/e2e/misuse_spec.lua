-- Misuses of the API under --compile-only (no GPU): each raises the error, and exits with the
-- code, that the same script gets on a GPU (tests/fixtures/misuse.lua; the GPU side is
-- tests/gpu/misuse_spec.lua, which runs every case both ways).
local m = require "misuse_run"

local ARGS = "--compile-only --arch sm_90"

describe("misuse of the API under --compile-only", function()
  it("runs the prelude of the cases cleanly", function()
    local r = m.run({ "prelude", "print('ok')" }, ARGS)
    assert.equal(0, r.code, r.stderr)
    assert.matches("^ok\n", r.stdout)
  end)

  it("has at least 25 cases, each named once", function()
    local seen = {}
    for _, c in ipairs(m.fixture.cases) do
      assert.is_nil(seen[c[1]], c[1])
      seen[c[1]] = true
    end
    assert.is_true(#m.fixture.cases >= 25)
  end)

  for _, c in ipairs(m.fixture.cases) do
    it(c[1], function()
      local r = m.run(c, ARGS)
      assert.equal(c[3], r.code, r.stderr)
      assert.equal(c[4], m.message(r.stderr))
    end)
  end
end)
