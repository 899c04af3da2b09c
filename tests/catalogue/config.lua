-- The catalogue of bad inputs, class "config": wlrun.ini (docs/config.md, "The rules of the
-- file"). See tests/catalogue.lua for the fields of a case. A case either refuses the file,
-- naming it and the line (exit 3), or cannot read it, naming it (exit 9), or reads what a
-- careful reading of the file gives (exit 0), the line of a setting printed by the script.

-- prints iters and the line it came from ("7\twlrun.ini:3")
local ITERS
  =
  "local wl = require 'wlrun'\nprint(wl.settings.run.iters, wl.setting_origin('run', "
  .. "'iters').origin)"
local LONG_COMMENT = "; " .. ("a comment longer than inih's line buffer of 200 bytes, "):rep(5)
  .. "\n"
local LONG_PATH = "/tmp/" .. ("a-long-directory-name/"):rep(14) .. "cache"
local root = io.popen("id -u"):read("l") == "0" -- root reads a file of mode 000 anyway

local cases = {
  { name = "ini: a long comment, a typo after it: the typo's own line", code = 3,
    ini = "[run]\n" .. LONG_COMMENT .. "iters = 7\nwarmpu = 1\n",
      stderr = "wlrun.ini:4: unknown key 'warmpu' in section %[run%]" },
  { name = "ini: a long comment in a valid file is a comment", code = 0,
    ini = "[run]\n" .. LONG_COMMENT .. "iters = 7\n", script = ITERS,
      stdout = "^7\twlrun.ini:3\n" },
  { name = "ini: a long cache_dir path is one value", code = 0,
    ini = "[compile]\ncache_dir = " .. LONG_PATH .. "\n",
    files = {
      ["s.lua"]
      =
      "local wl = require 'wlrun'\nprint(wl.settings.compile.cache_dir, "
      .. "wl.setting_origin('compile', 'cache_dir').origin)" },
    args = "s.lua", stdout = "^" .. LONG_PATH:gsub("%-", "%%-") .. "\twlrun.ini:2\n" },
  { name = "ini: a long value does not move the lines after it", code = 3,
    ini = "[compile]\ncache_dir = " .. LONG_PATH .. "\nwarmpu = 1\n",
      stderr = "wlrun.ini:3: unknown key 'warmpu' in section %[compile%]" },
  { name = "ini: a key given twice in a section", code = 3,
    ini = "[run]\niters = 10\nwarmup = 5\niters = 20\n",
      stderr = "wlrun.ini:4: duplicate key 'iters' in section %[run%] %(first on line 2%)" },
  { name = "ini: a section given twice", code = 3,
    ini = "[run]\niters = 10\n[output]\nquiet = on\n[run]\nwarmup = 5\n",
      stderr = "wlrun.ini:5: duplicate section %[run%] %(first on line 1%)" },
  { name = "ini: keys that differ only by case", code = 3,
    ini = "[run]\niters = 10\nITERS = 20\n", stderr
      = "wlrun.ini:3: unknown key 'ITERS' in section %[run%] %(keys are lower case: 'iters'%)" },
  { name = "ini: a section name in capitals", code = 3,
    ini = "[Run]\niters = 10\n",
      stderr = "wlrun.ini:1: unknown section %[Run%] %(section names are lower case: %[run%]%)" },
  { name = "ini: a key in another section than its own", code = 3,
    ini = "[run]\nmin_time = 1s\n",
      stderr
      =
      "wlrun.ini:2: unknown key 'min_time' in section %[run%] %('min_time' is a key of "
      .. "%[adaptive%]%)" },
  { name = "ini: a key before any section header", code = 3,
    ini = "iters = 10\n[run]\n",
      stderr = "wlrun.ini:1: 'iters' comes before any section header %(it belongs in %[run%]%)" },
  { name = "ini: ./wlrun.ini is a directory", code = 9, files = { ["wlrun.ini/notes.txt"] = "" },
    script = "print('ran')",
      stderr = "^wlrun: wlrun.ini: cannot read configuration: it is a directory, not a file" },
  { name = "ini: --config names a directory", code = 9, files = { ["conf/notes.txt"] = "" },
    script = "print('ran')", args = "--config conf",
      stderr = "^wlrun: conf: cannot read configuration: it is a directory, not a file" },
  { name = "ini: --config - (standard input is not read there)", code = 9,
    script = "print('ran')", args = "--config -",
      stderr = "^wlrun: %-: the configuration is not read from standard input: give a file" },
  { name = "ini: --config names a FIFO (not waited on)", code = 9,
    prefix = "mkfifo fifo.ini && timeout 20",
    script = "print('ran')", args = "--config fifo.ini",
      stderr = "^wlrun: fifo.ini: cannot read configuration: it is a FIFO" },
  { name = "ini: ./wlrun.ini is a broken symbolic link", code = 9,
    prefix = "ln -s missing.ini wlrun.ini &&",
    script = "print('ran')",
      stderr = "^wlrun: wlrun.ini: cannot read configuration: No such file or directory" },
  { name = "ini: --config names a symbolic link to itself", code = 9,
    prefix = "ln -s loop.ini loop.ini &&",
    script = "print('ran')", args = "--config loop.ini",
      stderr = "^wlrun: loop.ini: cannot read configuration: Too many levels of symbolic links" },
  { name = "ini: --config names a binary file", code = 3,
    files = { ["a.out"] = "\127ELF\2\1\1\0\0\0\0\0\0\0\0\0" },
    script = "print('ran')", args = "--config a.out",
      stderr = "^wlrun: a.out:1: control character U%+007F at column 1" },
  { name = "ini: --config /dev/null: no configuration at all", code = 0,
    ini = "[run]\nwarmpu = 1\n",
    script = ITERS, args = "--config /dev/null", stdout = "^100\t\n" },
  { name = "ini: a section header without its ']'", code = 3,
    ini = "[run\niters = 10\n",
      stderr = "wlrun.ini:1: syntax error: the section header '%[run' has no closing '%]'" },
  { name = "ini: text after a section header", code = 3,
    ini = "[run] iters = 10\n",
      stderr = "wlrun.ini:1: text after the section header %[run%]: 'iters = 10'" },
  { name = "ini: an indented line is not the last value's continuation", code = 3,
    ini = "[run]\niters = 10\n    20\n", stderr =
      "wlrun.ini:3: syntax error: expected %[section%] or key = value, got '20'" },
  { name = "ini: a NUL byte in a line", code = 3,
    ini = "[run]\niters = 10\0 ; and the rest\nwarmpu = 1\n",
      stderr = "wlrun.ini:2: a NUL byte at column 11" },
  { name = "ini: invalid UTF-8", code = 3,
    ini = "[run]\n; caf\xC3\xA9 is fine\n; caf\xE9 is Latin-1\n",
      stderr = "wlrun.ini:3: byte 0xE9 at column 6 is not UTF%-8" },
  { name = "ini: a UTF-16 file", code = 3,
    ini = "\xFF\xFE[\0r\0u\0n\0]\0\n\0", stderr =
      "wlrun.ini:1: byte 0xFF at column 1 is not UTF%-8: wlrun.ini is UTF%-8 text %(this file "
      .. "is UTF%-16%)" },
  { name = "ini: a terminal escape sequence in a comment", code = 3,
    ini = "[run]\n; \27[2J cleared\n",
      stderr = "wlrun.ini:2: control character U%+001B at column 3" },
  { name = "ini: CR LF line endings and a byte order mark are accepted", code = 0,
    ini = "\xEF\xBB\xBF; made on Windows\r\n[run]\r\niters = 7\r\n", script = ITERS,
      stdout = "^7\twlrun.ini:3\n" },
  { name = "ini: a CR alone does not end a line", code = 3,
    ini = "[run]\rwarmup = 3\riters = 7\r", stderr
      = "wlrun.ini:1: a carriage return %(CR%) inside the line, at column 6" },
  { name = "ini: a CR alone at the end of the file", code = 3,
    ini = "[run]\niters = 7\r", stderr
      = "wlrun.ini:2: a carriage return %(CR%) that ends the file, at column 10" },
  { name = "ini: a byte order mark inside the file", code = 3,
    ini = "[run]\n\xEF\xBB\xBFiters = 7\n", stderr
      = "wlrun.ini:2: a byte order mark %(U%+FEFF%) at column 1" },
  { name = "ini: comments after a value, with ';' or '#' after a blank", code = 0,
    ini = "[run]\nwarmup = 3 # three\niters = 7 ; seven\n", script = ITERS,
      stdout = "^7\twlrun.ini:3\n" },
  { name = "ini: a ';' right after a value is part of it", code = 3,
    ini = "[run]\niters = 7;seven\n",
      stderr
      = "wlrun.ini:2: run.iters: expected a whole number from 1 to 1000000000, got '7;seven'" },
  { name = "ini: an empty value", code = 3,
    ini = "[run]\niters =\n",
      stderr = "wlrun.ini:2: run.iters: empty value %(delete the line to keep the default%)" },
  { name = "ini: a value in quotes", code = 3,
    ini = "[run]\nmode = \"cold\"\n",
      stderr
      =
      "wlrun.ini:2: run.mode: values are written without quotes: mode = cold, not mode = "
      .. "\"cold\"" },
  { name = "ini: blanks around '=' and before a key are not part of them", code = 0,
    ini = "[run]\n\n\t  iters\t =   7  \n", script = ITERS, stdout = "^7\twlrun.ini:3\n" },
  { name = "ini: a file over 1 MiB", code = 3, ini = ("; " .. ("x"):rep(98) .. "\n"):rep(11000),
    stderr
      =
      "wlrun.ini:10382: the file is over 1048576 bytes %(1 MiB, the most a wlrun.ini may have%) "
      .. "by this line" },
}

if not root then
  cases[#cases + 1] = { name = "ini: a file that cannot be read (mode 000)", code = 9,
    ini = "[run]\n",
    prefix = "chmod 000 wlrun.ini &&", script = "print('ran')",
    stderr = "^wlrun: wlrun.ini: cannot read configuration: Permission denied" }
end

for _, c in ipairs(cases) do
  if c.script == nil and c.args == nil then c.script = "print('ran')" end
end
return cases
