-- Runs the cases of tests/fixtures/misuse.lua (tests/e2e/misuse_spec.lua,
-- tests/gpu/misuse_spec.lua).
local h = require "helper"

local M = {}

M.fixture = dofile(h.source_dir .. "/tests/fixtures/misuse.lua")
M.cache = h.tmpdir() -- one kernel cache for every run: the kernels compile once

-- Runs PRELUDE followed by the case's lines with the given options; returns helper.run's result.
function M.run(case, args)
  return h.run_script(M.fixture.prelude .. case[2] .. "\n",
    args .. " --cache-dir " .. h.quote(M.cache))
end

-- The error's first line without "wlrun: " and the "FILE:LINE: " in front (warnings skipped):
-- the position of an error raised inside the library depends on the path the library took.
function M.message(stderr)
  for line in stderr:gmatch("[^\n]+") do
    if not line:match("^wlrun: warning: ") then
      return (line:gsub("^wlrun: ", ""):gsub("^[^:%s]+%.lua:%d+: ", ""))
    end
  end
  return ""
end

return M
