#!/usr/bin/env bash
# cache-curve.sh: the feature cache's hit rate by size on one dataset. For
# caches of 5, 10, 20 and 40 % of the feature matrix's rows it prints the
# hit rate of the degree ranking, of the frequency ranking (a pre-sampling
# pass over epoch 0) and of the oracle (the measured epoch's own access
# counts: the best cache of that size), measured on epoch 1 of GraphSAGE
# sampling with the training defaults (fanouts 25,10, batches of 512, seed
# 0), and the host-to-device feature bytes of the epoch with each cache.
# gnnscope checks that those bytes are exactly the misses' share of the
# bytes without a cache, and fails otherwise. The table goes to stdout,
# followed by the load average; progress goes to stderr.
#
# Usage: scripts/cache-curve.sh [DATA [FLAGS...]] > table.txt
#   DATA   dataset (default synth-products): a preset, .npz file, OGB or
#          Planetoid folder, or .gsd file
#   FLAGS  more flags of `gnnscope bench cache` (--sizes 1,5,10,20,40,
#          --fanout 15,10,5, --batch-size 1024, --seed 1, --json ...)
# Environment: GNNSCOPE names the gnnscope binary (default: built from this
# checkout into a temporary folder).
#
# synth-products (2.4M nodes, 100 features) took 6 to 34 s on 2 shared
# cores (by their load) with its dataset cache in place (a first run
# generates it, which takes longer) and a peak of 2.7 GB resident.
set -euo pipefail

case ${1:-} in
-h | --help)
	sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
	exit 0
	;;
esac
data=${1:-synth-products}
[ $# -gt 0 ] && shift

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gs=${GNNSCOPE:-}
if [ -z "$gs" ]; then
	(cd "$(dirname "$0")/.." && go build -o "$tmp/gnnscope" .)
	gs=$tmp/gnnscope
fi

"$gs" bench cache --data "$data" "$@"
if [ -r /proc/loadavg ]; then
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
