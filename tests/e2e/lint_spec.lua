-- luacheck (Debian's lua-check) over every Lua file of the repository, with .luacheckrc: no
-- warning (unused and shadowed names, globals, unreachable code). Pending, by name, where
-- luacheck is not installed; .ci/run fails where it is missing (scripts/bootstrap.sh installs
-- it with the test packages).
local h = require "helper"

local function have(program) return (os.execute("command -v " .. program .. " >/dev/null 2>&1")) end

describe("the Lua code", function()
  if not have("luacheck") then
    pending(
      "luacheck finds no warning -- skipped: luacheck is not installed (apt-get install lua-check)")
    return
  end
  it("has no luacheck warning (.luacheckrc)", function()
    -- the files git tracks (not what a developer keeps beside them, ignored), else every one
    local p = assert(io.popen(("cd %s && if git rev-parse --git-dir >/dev/null 2>&1; then "
      .. "git ls-files -z -- '*.lua' | xargs -0 luacheck --formatter plain --no-color; "
      .. "else luacheck . --formatter plain --no-color; fi 2>&1; echo \"exit $?\""):format(
      h.quote(h.source_dir))))
    local out = p:read("a")
    p:close()
    assert.matches("exit 0\n$", out, 1, false, out)
  end)
end)
