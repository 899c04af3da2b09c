#!/usr/bin/env bash
# The worked example of docs/history.md: a git repository of 15 commits and, at each, a results
# file as a run of bench/reduce.lua there would leave it (made up by tests/history_fixtures.lua:
# n=16777216 turns 12 % slower at the ninth commit, n=1048576 stays flat), added with `wlrun
# history add`; then show, trend, blame and the --fail-on gate. Fixed names and dates make the
# same commits every time, so the output is the one the page shows.
# Last, the HTML report of the history and of the last results file (wlrun report).
#   WLRUN   the wlrun to run (default: build/wlrun)
#   REPORT  a directory to copy the report's index.html into (default: not kept)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
wlrun=$(realpath "${WLRUN:-$root/build/wlrun}")
keep=${REPORT:+$(realpath -m "$REPORT")}
base=$(mktemp -d /tmp/wlrun-history-example.XXXXXX)
trap 'rm -rf "$base"' EXIT
repo=$base/repo
mkdir "$repo"
cd "$repo"

export GIT_AUTHOR_NAME=Ada GIT_AUTHOR_EMAIL=ada@example.com GIT_COMMITTER_NAME=Ada
export GIT_COMMITTER_EMAIL=ada@example.com GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
git init -q -b main .
printf '.wlrun/\nout/\n' >.gitignore
mkdir -p bench out

# the results of a run at commit $1, as bench/reduce.lua would have written them
cat >"$base/run.lua" <<EOF
package.path = "$root/tests/?.lua;" .. package.path
local F = require "history_fixtures"
local i = tonumber(arg[1])
local slow = i >= 9 and 1.12 or 1.0
local text = F.document { scenario = "reduce", file = "bench/reduce.lua", cwd = "$repo", started = F.time(i),
  configs = { { params = { n = 1048576 }, samples = F.samples(21.4e-6, 100, 0.01, i) },
              { params = { n = 16777216 }, samples = F.samples(231e-6 * slow, 100, 0.01, 100 + i) } } }
local f = assert(io.open(arg[2], "w"))
f:write(text)
f:close()
EOF

run() {
  echo "\$ wlrun $*"
  "$wlrun" "$@" 2>&1 || echo "(exit code $?)"
}

for i in $(seq 1 15); do
  unroll=$([ "$i" -ge 9 ] && echo 2 || echo 4)
  printf -- '-- reduction sweep, commit %d\nlocal UNROLL = %d\n' "$i" "$unroll" >bench/reduce.lua
  GIT_AUTHOR_DATE="2026-01-01T$(printf %02d $((i - 1))):00:00Z"
  export GIT_AUTHOR_DATE GIT_COMMITTER_DATE="$GIT_AUTHOR_DATE"
  git add -A
  git commit -q -m "commit $i$([ "$i" -eq 9 ] && echo ': unroll by 2' || true)"
  "$wlrun" "$base/run.lua" "$i" out/reduce.json
  run history add out/reduce.json
done
echo
run history add out/reduce.json
echo
run history show
echo
run history trend -p n=16777216
echo
run history blame
echo
run history blame --fail-on 5 -p n=16777216
echo
echo "\$ git log --oneline | sed -n '7,8p'"
git log --oneline | sed -n '7,8p'
echo
run report --html out/report --db .wlrun/history.db out/reduce.json
if [ -n "$keep" ]; then mkdir -p "$keep" && cp out/report/index.html "$keep/"; fi
