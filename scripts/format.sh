#!/usr/bin/env bash
# Formats every C, C++ and CUDA file tracked in git in place with clang-format 14 (as on Debian
# 12; .clang-format at the root: 2 spaces, 100 columns). --check changes nothing: it names the
# files clang-format would change and the lines over 100 columns, and fails if there is any
# (.ci/run runs it so).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v clang-format >/dev/null || { echo "format: clang-format is not installed (apt-get install clang-format)" >&2; exit 1; }
version=$(clang-format --version)
case "$version" in
  *" version 14."*) ;;
  *) echo "format: .clang-format is written for clang-format 14, this is: $version" >&2
     [ "${1:-}" = --check ] && exit 1 ;;
esac
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cu' '*.cpp')
if [ "${1:-}" != --check ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
status=0
unformatted=$(for f in "${files[@]}"; do clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || echo "$f"; done)
if [ -n "$unformatted" ]; then
  echo "format: not formatted (run scripts/format.sh):" >&2
  echo "$unformatted" | sed 's/^/  /' >&2
  status=1
fi
long=$(awk 'length($0) > 100 { print "  " FILENAME ":" FNR ": " length($0) " columns" }' "${files[@]}")
if [ -n "$long" ]; then
  echo "format: lines over 100 columns:" >&2
  echo "$long" >&2
  status=1
fi
exit $status
