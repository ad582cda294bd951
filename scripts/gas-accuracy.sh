#!/bin/sh
# GNNAutoScale (GAS) accuracy on Cora: each model trained full-batch and
# under GAS (40 parts, 10 per batch) on the same seeds, test accuracy as the
# median (and range) over seeds beside each other, with GAS's staleness,
# history error and history size; then the acceptance checks: GCN under GAS
# at least 0.80 and within 1 point of full-batch, GCNII under GAS at least
# 0.82 (medians). It exits with status 1 when a check of a row it ran fails.
#
# Usage: scripts/gas-accuracy.sh [SEEDS] [ROWS]
#   SEEDS  number of seeds, 0 .. SEEDS-1 (default 5); each seed is one
#          random per-class split (20 / 500 / 1000) and one initialization
#   ROWS   comma-separated models (default gcn,gcnii; all five:
#          gcn,sage,gat,appnp,gcnii):
#            gcn    2 layers of 16, lr 0.01, weight decay 5e-4, dropout 0.5,
#                   200 epochs
#            sage, gat, appnp
#                   their defaults, 200 epochs
#            gcnii  its defaults (64 layers, 1500 epochs, patience 100):
#                   several minutes a run on 2 cores
# Environment:
#   GNNSCOPE  the gnnscope binary (default: built from this checkout into a
#             temporary folder)
#   CORA      the Cora dataset, relative to the repository's root: a
#             gnn-benchmark .npz (default ../shared/datasets/cora.npz,
#             beside the repository; random per-class splits) or a
#             Planetoid folder such as PyG's Cora/ (its public split)
#   KEEP      a folder to keep every run's JSON in
#   GAS       the GAS flags (default --parts 40 --parts-per-batch 10)
# Needs python3 (standard library only).
set -eu

seeds=${1:-5}
rows=${2:-gcn,gcnii}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cora=${CORA:-../shared/datasets/cora.npz}
gas=${GAS:---parts 40 --parts-per-batch 10}
if [ ! -e "$cora" ]; then
	echo "no Cora dataset at $cora (set CORA)" >&2
	exit 2
fi

# flags_of ROW prints the model flags of a row (empty for an unknown row).
flags_of() {
	case $1 in
	gcn) echo "--model gcn --hidden 16 --lr 0.01 --weight-decay 5e-4 --dropout 0.5 --epochs 200" ;;
	sage | gat | appnp) echo "--model $1 --epochs 200" ;;
	gcnii) echo "--model gcnii" ;;
	esac
}
for row in $(echo "$rows" | tr ',' ' '); do
	if [ -z "$(flags_of "$row")" ]; then
		echo "unknown row $row (gcn, sage, gat, appnp, gcnii)" >&2
		exit 2
	fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gs=${GNNSCOPE:-}
if [ -z "$gs" ]; then
	go build -o "$tmp/gnnscope" .
	gs=$tmp/gnnscope
fi
out=${KEEP:-$tmp/runs}
mkdir -p "$out"

for row in $(echo "$rows" | tr ',' ' '); do
	flags=$(flags_of "$row")
	echo "$flags" >"$out/$row.flags"
	seed=0
	while [ "$seed" -lt "$seeds" ]; do
		for mode in full gas; do
			echo "$row seed $seed: $mode" >&2
			if [ $mode = full ]; then
				extra="--sampler full"
			else
				extra="--sampler gas $gas"
			fi
			# shellcheck disable=SC2086
			"$gs" train --data "$cora" $flags $extra --seed "$seed" --json -q </dev/null >"$out/$row.$mode.$seed.json"
		done
		seed=$((seed + 1))
	done
done

python3 - "$out" "$seeds" "$gas" $(echo "$rows" | tr ',' ' ') <<'EOF'
import json, statistics, sys

out, seeds, gas, rows = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
print(f"Cora, test accuracy, median over seeds 0-{seeds - 1} (min-max); GAS: --sampler gas {gas}")
print()
print("| model | flags | full-batch | GAS | points | GAS staleness mean / max | history error | histories |")
print("|---|---|---|---|---|---|---|---|")
med = {}
for row in rows:
    flags = open(f"{out}/{row}.flags").read().strip()
    runs = {m: [json.load(open(f"{out}/{row}.{m}.{s}.json")) for s in range(seeds)] for m in ("full", "gas")}
    for m, rs in runs.items():
        for s, r in enumerate(rs):
            if r.get("status") != "ok":
                sys.exit(f"{row} {m} seed {s}: status {r.get('status')}: {r.get('error', '')}")
    acc = {m: [r["test_acc"] for r in rs] for m, rs in runs.items()}
    med[row] = {m: statistics.median(a) for m, a in acc.items()}
    g = runs["gas"]
    sm = [r["staleness_mean"] for r in g]
    sx = max(r["staleness_max"] for r in g)
    he = [r["history_rel_err"] for r in g]
    hb = g[0]["history_bytes"]
    cell = lambda m: f"{med[row][m]:.3f} ({min(acc[m]):.3f}-{max(acc[m]):.3f})"
    print(f"| {row} | `{flags}` | {cell('full')} | {cell('gas')} | {100 * (med[row]['gas'] - med[row]['full']):+.1f} "
          f"| {min(sm):.2f}-{max(sm):.2f} / {sx} | {min(he):.2f}-{max(he):.2f} | {hb / 1024:.0f} KiB |")
print()

checks = []
if "gcn" in med:
    m = med["gcn"]
    checks.append((m["gas"] >= 0.80, f"GCN under GAS: median {m['gas']:.3f} (at least 0.80)"))
    checks.append((abs(m["gas"] - m["full"]) <= 0.01 + 1e-9,
                   f"GCN under GAS: {100 * (m['gas'] - m['full']):+.1f} points from full-batch (within 1)"))
if "gcnii" in med:
    m = med["gcnii"]
    checks.append((m["gas"] >= 0.82, f"GCNII under GAS: median {m['gas']:.3f} (at least 0.82)"))
failed = 0
for ok, what in checks:
    print(("PASS " if ok else "FAIL ") + what)
    failed += not ok
sys.exit(1 if failed else 0)
EOF
