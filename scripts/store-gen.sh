#!/usr/bin/env bash
# Builds a large store for measuring listing: one real session of
# synth-tiny (one run of EPOCHS epochs), copied into SESSIONS sessions of
# RUNS runs each (the run's journal copied under new run names, listed in
# launch.json; session.json under new ids). Prints the store's root.
#
# Usage: scripts/store-gen.sh [-b BINARY] [-s SESSIONS] [-r RUNS] [-e EPOCHS] DIR
set -euo pipefail
cd "$(dirname "$0")/.."
bin= nses=11 nruns=1500 epochs=5
while getopts b:s:r:e: o; do
	case $o in
	b) bin=$OPTARG ;; s) nses=$OPTARG ;; r) nruns=$OPTARG ;; e) epochs=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
out=${1:?usage: store-gen.sh [-b BINARY] [-s SESSIONS] [-r RUNS] [-e EPOCHS] DIR}
if [ -z "$bin" ]; then
	bin=$(mktemp -d)/gnnscope
	go build -o "$bin" .
fi
tmpl=$(mktemp -d)
trap 'rm -rf "$tmpl"' EXIT
GNNSCOPE_HOME=$tmpl "$bin" run --variants baseline --epochs "$epochs" --wait >/dev/null 2>&1
src=$(ls -d "$tmpl"/sessions/*/)
mkdir -p "$out/sessions"
for i in $(seq 1 "$nses"); do
	id=$(printf '20260101-%06d-%04x' "$i" "$i")
	dst=$out/sessions/$id
	mkdir -p "$dst/runs"
	sed "s/$(basename "$src")/$id/g" "$src/session.json" >"$dst/session.json"
	runs=
	for j in $(seq 1 "$nruns"); do
		run=$(printf 'r%05d' "$j")
		sed "s/\"run\":\"baseline\"/\"run\":\"$run\"/" "$src/runs/baseline.jsonl" >"$dst/runs/$run.jsonl"
		runs=$runs${runs:+,}\"$run\"
	done
	printf '{"mode":"sequential","runs":[%s],"started":"2026-01-01T00:00:00Z"}\n' "$runs" >"$dst/launch.json"
done
chmod -R go-rwx "$out"
echo "$out"
