#!/usr/bin/env bash
# Runs every fuzzer of the module for real, one after another, each for
# SECONDS (default 30), and prints a line per fuzzer with its verdict. The
# seed corpora already run as ordinary tests in `go test ./...`; this
# script explores beyond them. A failing input is written by Go under the
# package's testdata/fuzz/FuzzX/ folder: commit it as a regression seed.
#
# Go minimizes every new interesting input before it fuzzes on, for up to
# 60 s each by default; on inputs of a few kilobytes that can take the
# whole run while the exec count stands still. Minimizing is capped here at
# a thirtieth of SECONDS (at least 1 s; MINIMIZE overrides it), so that the
# time goes to fuzzing. The execs figure counts fuzzing executions only.
#
# Usage: scripts/fuzz-all.sh [SECONDS] [PACKAGE PATTERN, default ./...]
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
pattern=${2:-./...}
minimize=${MINIMIZE:-$(( secs / 30 > 1 ? secs / 30 : 1 ))s}
status=0
# go test -list prints the matching names of each package, then "ok PKG".
while read -r pkg names; do
  for f in $names; do
    out=$(go test -run '^$' -fuzz "^${f}\$" -fuzztime "${secs}s" -fuzzminimizetime "$minimize" "$pkg" 2>&1)
    rc=$?
    execs=$(grep -o 'execs: [0-9]*' <<<"$out" | tail -1 | grep -o '[0-9]*$')
    if [ $rc = 0 ]; then
      printf 'ok    %-40s %-20s %s execs\n' "$pkg" "$f" "${execs:-?}"
    else
      printf 'FAIL  %-40s %-20s\n' "$pkg" "$f"
      tail -20 <<<"$out" | sed 's/^/      /'
      status=1
    fi
  done
done < <(go test -list '^Fuzz' "$pattern" 2>/dev/null | awk '
  /^Fuzz/ { names = names " " $1; next }
  /^ok/   { if (names != "") print $2 names; names = "" }')
exit $status
