#!/usr/bin/env bash
# Probes of the process and terminal faults of issue 37 (points 3, 7, 8,
# 10, 14, 15) against the real binary, each in a store of its own; prints
# one line per probe (held / FAILED / skipped, and why) and exits 1 when
# any probe failed. The unit tests beside the code cover the same points
# (runner/tree_test.go, runner/diskfull_test.go, runner/settle_test.go,
# runner/external_bytes_test.go, cli/ui/terminal_test.go); this script
# runs them as a user would. The disk-full probe mounts a tmpfs: root only.
#
# scripts/faults.sh runs it too (its procs: rows).
#
# Usage: scripts/faults-procs.sh [-b BINARY]
set -uo pipefail
cd "$(dirname "$0")/.."
bin=
while getopts b: o; do
	case $o in
	b) bin=$OPTARG ;;
	*) exit 2 ;;
	esac
done
scratch=$(mktemp -d)
cleanup() {
	mountpoint -q "$scratch/tmpfs" 2>/dev/null && umount "$scratch/tmpfs"
	rm -rf "$scratch"
}
trap cleanup EXIT
if [ -z "$bin" ]; then
	bin=$scratch/gnnscope
	go build -o "$bin" . || exit 1
fi
failed=0
report() { # probe, verdict, detail
	printf '%-28s %-8s %s\n' "$1" "$2" "$3"
	[ "$2" = FAILED ] && failed=1
}
# procs_of JOURNAL: processes whose environment names the run's journal.
procs_of() {
	grep -lsz "^GNNSCOPE_JOURNAL=$1\$" /proc/[0-9]*/environ 2>/dev/null | wc -l
}

# 14: non-UTF-8 bytes in a --cmd argument reach the command unchanged.
export GNNSCOPE_HOME=$scratch/store14
arg=$(printf 'caf\xe9-\xff')
"$bin" run --cmd "sh -c 'printf %s \"\$1\" > \"\$2\"' sh '$arg' $scratch/arg" --wait >/dev/null 2>&1
if [ "$(cat "$scratch/arg" 2>/dev/null)" = "$arg" ]; then
	report "14 non-UTF-8 argument" held "bytes unchanged"
else
	report "14 non-UTF-8 argument" FAILED "got $(od -c "$scratch/arg" 2>/dev/null | head -1)"
fi

# 7: children the trainer leaves behind end with the run.
export GNNSCOPE_HOME=$scratch/store7
"$bin" run --cmd "sh -c 'sleep 300 & setsid sleep 300 & exit 0'" --wait >/dev/null 2>&1
journal=$(ls "$GNNSCOPE_HOME"/sessions/*/runs/*.jsonl 2>/dev/null | head -1)
n=$(procs_of "$journal")
if [ "$n" = 0 ]; then report "7 leftover children" held "none left after the run"; else report "7 leftover children" FAILED "$n left"; fi

# 8 and 10: kill -9 of the worker, then cancel ends the trainer's children.
export GNNSCOPE_HOME=$scratch/store8
"$bin" run --cmd "sh -c 'sleep 300 & sleep 300 & wait'" >/dev/null 2>&1
sleep 2
journal=$(ls "$GNNSCOPE_HOME"/sessions/*/runs/*.jsonl 2>/dev/null | head -1)
pid=$(sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' "${journal%.jsonl}.pid" 2>/dev/null)
[ -n "$pid" ] && kill -9 "$pid"
sleep 1
out=$("$bin" run --cancel last 2>&1)
sleep 0.5
n=$(procs_of "$journal")
if [ "$n" = 0 ] && ! grep -q "nothing to cancel" <<<"$out"; then
	report "8 worker killed, cancel" held "the orphans were killed"
else
	report "8 worker killed, cancel" FAILED "$n left: $(head -1 <<<"$out")"
fi

# 15: TERM=dumb falls back to the headless list, with a message.
export GNNSCOPE_HOME=$scratch/store15
out=$(TERM=dumb "$bin" ui 2>&1)
if grep -q "TERM=dumb" <<<"$out" && ! grep -q $'\e\\[' <<<"$out"; then
	report "15 TERM=dumb" held "headless list, no escape codes"
else
	report "15 TERM=dumb" FAILED "$(head -1 <<<"$out")"
fi

# 3: a journal that fills the disk mid-run is partial, run --wait exits 1.
mkdir -p "$scratch/tmpfs"
if mount -t tmpfs -o size=4m tmpfs "$scratch/tmpfs" 2>/dev/null; then
	export GNNSCOPE_HOME=$scratch/tmpfs/store
	mkdir -p "$GNNSCOPE_HOME"
	avail=$(df -B1 --output=avail "$scratch/tmpfs" | tail -1)
	head -c $((avail - 96 * 1024)) /dev/zero >"$scratch/tmpfs/filler" 2>/dev/null
	"$bin" run --variants baseline --epochs 40 --wait >/dev/null 2>&1 # one run: a second would start on a full disk (its empty pid file is point 4)
	rc=$?
	rm -f "$scratch/tmpfs/filler"
	status=$("$bin" sessions show last --json 2>/dev/null | grep -o '"status": *"[a-z ]*"' | head -1)
	if [ $rc = 1 ] && grep -q partial <<<"$status"; then
		report "3 disk full mid-run" held "partial, exit 1"
	else
		report "3 disk full mid-run" FAILED "exit $rc, $status"
	fi
else
	report "3 disk full mid-run" skipped "cannot mount a tmpfs (needs root)"
fi
exit $failed
