#!/bin/sh
# Trains the same model full-batch and with GNNAutoScale (GAS) on one
# dataset and compares their device memory and test accuracy: the peak of
# a training batch (max_batch_peak_bytes: parameters, gradients, optimizer
# moments, the batch's input and the step's own peak; full-batch training
# has one batch, the whole graph), the run's overall device peak
# (peak_bytes, evaluation included), and the test accuracy at the epoch of
# best validation accuracy. Both runs train until their validation
# accuracy has not improved for 100 epochs (at most EPOCHS). It exits with
# status 1 when GAS's batch peak is above MAX_RATIO of full-batch's or its
# accuracy more than MAX_DROP below.
#
# Usage: scripts/gas-memory.sh [DATA [PARTS [PER_BATCH [EPOCHS [FLAGS...]]]]]
#   DATA       dataset (default synth-small)
#   PARTS      GAS parts (default 128)
#   PER_BATCH  parts per GAS batch (default 4)
#   EPOCHS     at most this many epochs for both runs (default 1000)
#   FLAGS      model flags for both runs (default: --model sage --layers 3
#              --hidden 64); --part-balance goes to the GAS run only.
#              Values are split at spaces.
# Environment: GNNSCOPE names the gnnscope binary (default: built from this
# checkout into a temporary folder); MAX_RATIO (default 0.40) and MAX_DROP
# (default 0.01) set the checks; SEED (default 0) the seed of both runs.
# It takes about half an hour on synth-small with 2 cores: keep it out of
# unit tests.
set -eu

data=${1:-synth-small}
parts=${2:-128}
per=${3:-4}
epochs=${4:-1000}
if [ $# -gt 4 ]; then
	shift 4
else
	set -- --model sage --layers 3 --hidden 64
fi
max_ratio=${MAX_RATIO:-0.40}
max_drop=${MAX_DROP:-0.01}
seed=${SEED:-0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gs=${GNNSCOPE:-}
if [ -z "$gs" ]; then
	(cd "$(dirname "$0")/.." && go build -o "$tmp/gnnscope" .)
	gs=$tmp/gnnscope
fi

# GAS-only flags stay out of the full-batch run (train refuses flags that
# do not apply to a run).
full_flags=
gas_flags=
value=
for a in "$@"; do
	if [ -n "$value" ]; then
		gas_flags="$gas_flags $a"
		value=
		continue
	fi
	case $a in
	--part-balance) gas_flags="$gas_flags $a" value=1 ;;
	--part-balance=*) gas_flags="$gas_flags $a" ;;
	*)
		full_flags="$full_flags $a"
		gas_flags="$gas_flags $a"
		;;
	esac
done

# shellcheck disable=SC2086
"$gs" train --data "$data" --sampler full --epochs "$epochs" --patience 100 --seed "$seed" --json -q $full_flags >"$tmp/full.json"
# shellcheck disable=SC2086
"$gs" train --data "$data" --sampler gas --parts "$parts" --parts-per-batch "$per" \
	--epochs "$epochs" --patience 100 --seed "$seed" --json -q $gas_flags >"$tmp/gas.json"

# field FILE KEY: the first top-level number KEY in a train --json object.
field() {
	sed -n "s/^  \"$2\": *\([0-9.eE+-]*\),\{0,1\}$/\1/p" "$1" | head -n 1
}
for run in full gas; do
	eval "${run}_acc=\$(field \$tmp/\$run.json test_acc)"
	eval "${run}_batch=\$(field \$tmp/\$run.json max_batch_peak_bytes)"
	eval "${run}_peak=\$(field \$tmp/\$run.json peak_bytes)"
	eval "${run}_epoch=\$(field \$tmp/\$run.json epoch_s)"
	eval "${run}_best=\$(field \$tmp/\$run.json best_epoch)"
	eval "${run}_epochs=\$(sed -n 's/^  \"epochs\": *\([0-9]*\),$/\1/p' \$tmp/\$run.json | tail -n 1)"
done
hbytes=$(field "$tmp/gas.json" history_bytes)
stale=$(field "$tmp/gas.json" staleness_mean)
relerr=$(field "$tmp/gas.json" history_rel_err)

echo "data $data, at most $epochs epochs, patience 100, seed $seed, flags: $*; GAS: $parts parts, $per per batch"
awk -v fa="$full_acc" -v ga="$gas_acc" -v fb="$full_batch" -v gb="$gas_batch" \
	-v fp="$full_peak" -v gp="$gas_peak" -v fe="$full_epoch" -v ge="$gas_epoch" \
	-v hb="$hbytes" -v st="$stale" -v re="$relerr" -v mr="$max_ratio" -v md="$max_drop" \
	-v fbe="$full_best" -v gbe="$gas_best" -v fn="$full_epochs" -v gn="$gas_epochs" '
	function mib(b) { return sprintf("%.1f MiB", b / 1048576) }
	BEGIN {
		printf "%-6s %-10s %-12s %-12s %-12s %s\n", "run", "test acc", "best/epochs", "batch peak", "run peak", "s/epoch"
		printf "%-6s %-10.4f %-12s %-12s %-12s %.3f\n", "full", fa, fbe "/" fn, mib(fb), mib(fp), fe
		printf "%-6s %-10.4f %-12s %-12s %-12s %.3f\n", "gas", ga, gbe "/" gn, mib(gb), mib(gp), ge
		printf "GAS batch peak / full-batch peak: %.3f (limit %.2f); accuracy gap %+.4f (limit -%.2f)\n", gb / fb, mr, ga - fa, md
		printf "GAS histories: %s on the host, staleness mean %.2f steps, relative error %.4f at the last refresh\n", mib(hb), st, re
		ok = gb <= mr * fb && ga >= fa - md
		print ok ? "ok" : "FAIL"
		exit ok ? 0 : 1
	}'
