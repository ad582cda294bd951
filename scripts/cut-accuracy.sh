#!/bin/sh
# Inference cutting, accuracy: test accuracy with 30 % of the inference
# blocks' edges cut, by rule, against no cut, as the median (and range) over
# seeds; each seed is one random split, initialization and training.
#
# Usage: scripts/cut-accuracy.sh [SEEDS] [ROWS]
#   SEEDS  number of seeds, 0 .. SEEDS-1 (default 5)
#   ROWS   comma-separated rows to run (default cora-gcn,cora-sage,small-sage):
#            cora-gcn    GCN on Cora, full batch, 200 epochs
#            cora-sage   GraphSAGE on Cora, fanouts 25,10, batches of 512,
#                        200 epochs
#            small-sage  GraphSAGE on synth-small, fanouts 15,10, batches of
#                        1024, 20 epochs
#            cora-gat, cora-appnp
#                        GAT / APPNP on Cora, full batch, their defaults
# Environment:
#   GNNSCOPE  the gnnscope binary (default: built from this checkout into a
#             temporary folder)
#   CORA      the Cora file, relative to the repository's root (default
#             ../shared/datasets/cora.npz, beside the repository)
#   KEEP      a folder to keep every run's JSON in
#
# Columns: the median test accuracy and its points against no cut (each
# run selects its epoch on the cut graph), and the paired points: the median
# over seeds of each run's test accuracy minus that of the same selected
# weights on the whole graph (test_acc_uncut), the cut's cost on one model.
#
# Rows: no cut; the rules degree-sum, degree-product, degree-cap and random
# with the defaults (every node keeps the largest number of neighbors that
# still leaves 30 % of the edges beyond it, --cut-min-keep 0; GCN
# normalizes the cut graph with its own degrees, --cut-norm renorm);
# degree-sum, degree-product and random with no neighbors protected
# (--cut-min-keep -1), the rules alone; for GCN, also degree-product with
# --cut-norm scale and keep.
# Needs python3.
set -eu

seeds=${1:-5}
rows=${2:-cora-gcn,cora-sage,small-sage}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cora=${CORA:-../shared/datasets/cora.npz}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gs=${GNNSCOPE:-}
if [ -z "$gs" ]; then
	go build -o "$tmp/gnnscope" .
	gs=$tmp/gnnscope
fi
out=${KEEP:-$tmp/runs}
mkdir -p "$out"

cuts="none:
degree-sum:--eval-cut 0.3 --cut-rule degree-sum
degree-product:--eval-cut 0.3 --cut-rule degree-product
degree-cap:--eval-cut 0.3 --cut-rule degree-cap
random:--eval-cut 0.3 --cut-rule random
degree-sum/unprotected:--eval-cut 0.3 --cut-rule degree-sum --cut-min-keep -1
degree-product/unprotected:--eval-cut 0.3 --cut-rule degree-product --cut-min-keep -1
random/unprotected:--eval-cut 0.3 --cut-rule random --cut-min-keep -1"
gcncuts="degree-product/scale:--eval-cut 0.3 --cut-rule degree-product --cut-norm scale
degree-product/keep:--eval-cut 0.3 --cut-rule degree-product --cut-norm keep"

for row in $(echo "$rows" | tr ',' ' '); do
	list=$cuts
	case $row in
	cora-gcn)
		base="--data $cora --model gcn --sampler full --epochs 200"
		list="$cuts
$gcncuts"
		;;
	cora-sage) base="--data $cora --model sage --sampler neighbor --fanout 25,10 --batch-size 512 --epochs 200" ;;
	small-sage) base="--data synth-small --model sage --fanout 15,10 --batch-size 1024 --epochs 20" ;;
	cora-gat) base="--data $cora --model gat --sampler full" ;;
	cora-appnp) base="--data $cora --model appnp --sampler full" ;;
	*)
		echo "unknown row $row" >&2
		exit 2
		;;
	esac
	echo "$list" >"$out/$row.cuts"
	echo "$base" >"$out/$row.base"
	seed=0
	while [ "$seed" -lt "$seeds" ]; do
		echo "$list" | while IFS=: read -r name flags; do
			echo "$row seed $seed: $name" >&2
			# shellcheck disable=SC2086
			"$gs" train $base $flags --seed "$seed" --json -q </dev/null >"$out/$row.$(echo "$name" | tr / _).$seed.json"
		done
		seed=$((seed + 1))
	done
done

python3 - "$out" "$seeds" $(echo "$rows" | tr ',' ' ') <<'EOF'
import json, statistics, sys

out, seeds, rows = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
for row in rows:
    base = open(f"{out}/{row}.base").read().strip()
    print(f"{row}: gnnscope train {base} --seed S [cut flags]; test accuracy, median over seeds 0-{seeds - 1} (min-max); points against no cut")
    print()
    print("| cut | flags | median | min-max | points | paired points | edges cut |")
    print("|---|---|---|---|---|---|---|")
    ref = None
    for line in open(f"{out}/{row}.cuts").read().strip().split("\n"):
        name, flags = line.split(":", 1)
        runs = [json.load(open(f"{out}/{row}.{name.replace('/', '_')}.{s}.json")) for s in range(seeds)]
        acc = [r["test_acc"] for r in runs]
        m = statistics.median(acc)
        if ref is None:
            ref = m
        cut = statistics.median([r.get("eval_cut_edges", 0) for r in runs])
        # Paired: each run's selected weights on the cut graph against the
        # same weights on the whole graph (test_acc_uncut), median over seeds.
        pairs = [100 * (r["test_acc"] - r["test_acc_uncut"]) for r in runs if "test_acc_uncut" in r]
        paired = f"{statistics.median(pairs):+.2f}" if len(pairs) == len(runs) else ""
        print(f"| {name} | `{flags}` | {m:.4f} | {min(acc):.4f}-{max(acc):.4f} | {100 * (m - ref):+.2f} | {paired} | {cut:.0f} |")
    print()
EOF
