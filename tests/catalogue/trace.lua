-- The catalogue of bad inputs, class "trace": `wlrun trace -- CMD` (docs/trace.md) given a bad
-- command line, a program it cannot run, a trace library it cannot use, and trace files that
-- are malformed or hostile (written by `sh -c` into $WLRUN_TRACE_DIR, as a program's trace
-- library would). See tests/catalogue.lua for the fields of a case.
local h = require "helper"

local bin = h.bin:sub(1, 1) == "/" and h.bin or (h.source_dir .. "/" .. h.bin)
-- any ELF shared library passes the check of WLRUN_TRACE_LIB; `sh -c` loads none. The trace
-- directory is made in the case's own (TMPDIR=.): one that cannot be read is kept
local LIB = "TMPDIR=. WLRUN_TRACE_LIB=" .. h.quote(os.getenv("WLRUN_NVTX_RECORDER") or bin)

-- `wlrun trace` of a shell command that writes TEXT as its process's trace file
local function writes(text, options)
  local script = ("printf '%%s' %s > \"$WLRUN_TRACE_DIR/$$.wltrace\""):format(h.quote(text))
  return ("trace %s -- sh -c %s"):format(options or "", h.quote(script))
end

local HEAD = "wltrace\t1\t5\t1\tprog\n"
local STEP = HEAD .. "S\t1\ttrain_step\n"

return {
  { name = "trace: no command", args = "trace", env = LIB, code = 2,
    stderr = "^wlrun: trace: no command to trace" },
  { name = "trace: -- and no command", args = "trace --warmup 1 --", env = LIB, code = 2,
    stderr = "^wlrun: trace: no command to trace" },
  { name = "trace: a command not in PATH", args = "trace -- wlrun-no-such-command", env = LIB,
    code = 2,
    stderr = "^wlrun: trace: cannot run 'wlrun%-no%-such%-command': not found in PATH" },
  { name = "trace: a command without execute permission", args = "trace -- ./plain.sh", env = LIB,
    code = 2,
    files = { ["plain.sh"] = "echo hi\n" }, stderr
      = "^wlrun: trace: cannot run '%./plain%.sh': not an executable file" },
  { name = "trace: a directory as the command", args = "trace -- ./sub", env = LIB, code = 2,
    files = { ["sub/x"] = "" },
      stderr = "^wlrun: trace: cannot run '%./sub': not an executable file" },
  { name = "trace: the program removes the trace directory: said so, not that it is kept",
    args = "trace -- sh -c " .. h.quote('rm -rf "$WLRUN_TRACE_DIR"'), env = LIB, code = 9,
    stderr = "trace: the trace directory %S+ is gone %(removed while the program ran%): no "
      .. "trace file is left" },
  { name = "trace: a negative warmup", args = "trace --warmup -1 -- true", env = LIB, code = 2,
    stderr = "^wlrun: trace: %-%-warmup: expected a whole number >= 0, got '%-1'" },
  { name = "trace: --batch-size given twice", args = "trace --batch-size 1 --batch-size 2 -- true",
    env = LIB, code = 2,
    stderr = "^wlrun: trace: %-%-batch%-size given twice" },
  { name = "trace: a trace library that is not a library", args = "trace -- true", code = 9,
    env = "WLRUN_TRACE_LIB=./lib.so", files = { ["lib.so"] = "not ELF" },
    stderr = "^wlrun: trace: WLRUN_TRACE_LIB='%./lib%.so' is not a shared library" },
  { name = "trace: a program that writes no trace", args = "trace -- true", env = LIB, code = 2,
    stderr = "^wlrun: trace: the program wrote no trace" },
  { name = "trace: no range named like the step",
    args = writes(STEP .. "R\t1\t5\t0\t1\t0\t1\t2\t-\n", "--step step"),
    env = LIB, code = 2,
      stderr
      =
      "^wlrun: trace: no closed range named 'step' in the 1 process traced; the ranges seen %(1 "
      .. "in all%), by count: 'train_step' %(1%)" },
  { name = "trace: fewer steps than the warmup",
    args = writes(STEP .. "R\t1\t5\t0\t1\t0\t1\t2\t-\nX\texit\n"),
    env = LIB, code = 2,
      stderr
      = "wlrun: trace: process %d+ has 1 closed 'train_step' range, not more than %-%-warmup 5" },
  { name = "trace: a file that is not a trace", args = writes("hello\n"), env = LIB, code = 9,
    stderr = "wlrun: trace: %d+%.wltrace:1: not a wlrun trace file",
    check = function(r, dir) -- the files kept, where it says
      local kept = r.stderr:match("the trace files are kept in ([^\n]+)")
      assert(kept and kept:sub(1, #dir + 1) == dir .. "/", r.stderr)
      assert(io.open(kept .. "/" .. r.stderr:match("(%d+%.wltrace):1:")))
    end },
  { name = "trace: an unknown record", args = writes(HEAD .. "Q\t1\n"), env = LIB, code = 9,
    stderr = "wlrun: trace: %d+%.wltrace:2: an unknown record 'Q'" },
  { name = "trace: a record with a field too many",
    args = writes(STEP .. "R\t1\t5\t0\t1\t0\t1\t2\t-\t9\n"), env = LIB,
    code = 9, stderr = "%d+%.wltrace:3: R: 10 fields, expected 9" },
  { name = "trace: a string used before it is defined",
    args = writes(HEAD .. "R\t1\t5\t0\t1\t0\t1\t2\t-\n"), env = LIB,
    code = 9, stderr = "%d+%.wltrace:2: name: string 1 is used before it is defined" },
  { name = "trace: a number that overflows", args = writes(STEP
    .. "R\t1\t5\t0\t1\t0\t1\t99999999999999999999\t-\n"),
    env = LIB, code = 9,
      stderr = "%d+%.wltrace:3: end: '99999999999999999999' is not a whole number" },
  { name = "trace: a cycle of parents", args = writes(STEP
    .. "R\t1\t5\t2\t1\t0\t1\t2\t-\nR\t2\t5\t1\t1\t0\t1\t2\t-\n"),
    env = LIB, code = 9, stderr = "%d+%.wltrace: range 1 is its own ancestor" },
  { name = "trace: control bytes in range names are printed escaped",
    args = writes(HEAD .. "S\t1\t\\x1b[2Jname\nR\t1\t5\t0\t1\t0\t1\t2\t-\n"), env = LIB, code = 2,
    check = function(r)
      assert(r.stderr:find("'\\x1b[2Jname' (1)", 1, true), r.stderr)
      assert(not r.stderr:find("\27", 1, true), "a raw escape byte reached the terminal")
    end },
  -- not regular files: a FIFO hung the reader for ever (opening it waits for a writer)
  { name = "trace: a FIFO named like a trace file", prefix = "timeout 20",
    args = "trace -- sh -c " .. h.quote('mkfifo "$WLRUN_TRACE_DIR/$$.wltrace"'), env = LIB,
      code = 9,
    stderr = "wlrun: trace: %d+%.wltrace: a fifo: the trace library writes regular files only" },
  { name = "trace: a symbolic link named like a trace file", prefix = "timeout 20",
    args = "trace -- sh -c " .. h.quote('ln -s /dev/tty "$WLRUN_TRACE_DIR/$$.wltrace"'), env = LIB,
      code = 9,
    stderr
      =
      "wlrun: trace: %d+%.wltrace: a symbolic link: the trace library writes regular files only" },
  { name = "trace: a directory named like a trace file",
    args = "trace -- sh -c " .. h.quote('mkdir "$WLRUN_TRACE_DIR/$$.wltrace"'), env = LIB, code = 9,
    stderr
      = "wlrun: trace: %d+%.wltrace: a directory: the trace library writes regular files only" },
  { name = "trace: a file cut short is read up to its last whole line",
    args = writes(STEP .. "R\t1\t5\t0\t1\t0\t1\t2\t-\nR\t2\t5\t0\t1\t0\t3\t4", "--warmup 0"),
      env = LIB, code = 0,
    stdout
      =
      "process%-killed: process %d+ ended without a normal exit %(killed by a signal, or "
      .. "_exit%), its trace file cut short" },
}
