-- luacheck (Debian's lua-check) over wlrun's Lua: the library, the specs, the benchmarks, the
-- scenarios, the examples and the build's scripts; .ci/run runs `luacheck .` and fails on a warning.
std = "lua54"
-- a callback's arguments are its caller's contract, used or not
unused_args = false
ignore = {
  "211/_.+", -- a local named _x is kept on purpose: a to-be-closed scope (`local _range <close> = ...`)
  "581", -- `not (x > y)` is not `x <= y` where x or y is NaN: the statistics' comparisons mean it
}
-- Lines: at most 100 columns (issue 36), code and comments; the lines inside a long string
-- ([[...]]: the scripts, sources and outputs the specs write) are data and keep their length. A
-- code line that ends such a string over 100 columns says `-- luacheck: ignore 631`.
max_line_length = 100
max_string_line_length = false
exclude_files = { "build*/**", ".git/**" }

files["tests/**/*_spec.lua"] = { std = "+busted" }
files["tests/helper.lua"] = { std = "+busted" }
files["tests/**"] = {
  -- a spec's `it` blocks reuse its outer names (dir, deb) for their own
  ignore = { "421", "431" },
}
