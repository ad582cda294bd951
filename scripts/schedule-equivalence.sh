#!/usr/bin/env bash
# schedule-equivalence.sh: one line per schedule with its test accuracy,
# validation loss, best epoch, steps, peak bytes and a digest of every
# epoch's loss, accuracies and batch count. Two builds that print the same
# lines train the same batches to the same weights; diff the output of a
# build before and after a change of the engine. The device peak of a run
# with sampler workers depends on how the workers' gathers interleave with
# training, so that row prints the largest batch peak alone (measured per
# batch, independent of timing).
#
# Usage: scripts/schedule-equivalence.sh [GNNSCOPE_BINARY] > figures.txt
#   CORA=path/to/cora.npz (default ../shared/datasets/cora.npz)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-}"
if [ -z "$bin" ]; then
  bin="$(mktemp -d)/gnnscope"
  go build -o "$bin" .
fi
cora="${CORA:-../shared/datasets/cora.npz}"
if [ ! -f "$cora" ]; then
  echo "schedule-equivalence: $cora not found (set CORA)" >&2
  exit 2
fi
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3

row() {
  local name=$1; shift
  local out
  out=$("$bin" train "$@" --threads 2 --json --history -q --no-cache) || {
    echo "schedule-equivalence: $name failed" >&2; exit 1; }
  printf '%s\n' "$out" | "$py" -c '
import hashlib, json, sys
r = json.load(sys.stdin)
keys = ("epoch", "loss", "train_acc", "val_acc", "val_loss", "test_acc", "batches")
h = hashlib.sha256(json.dumps([[e.get(k) for k in keys] for e in r.get("history", [])]).encode()).hexdigest()[:16]
peak = "" if "--sampler-workers" in sys.argv[2:] else " peak=%d" % r.get("peak_bytes", 0)
print("%-22s status=%s test_acc=%.4f val_loss=%.6f best_epoch=%d steps=%d guard=%d batch_peak=%d%s history=%s" % (
    sys.argv[1], r["status"], r["test_acc"], r.get("val_loss", 0), r.get("best_epoch", 0),
    r.get("steps", 0), r.get("guard_actions", 0), r.get("max_batch_peak_bytes", 0), peak, h))
' "$name" "$@"
}

row cora-gcn-full       --data "$cora" --model gcn  --sampler full --epochs 200 --seed 0
row cora-sage-neighbor  --data "$cora" --model sage --sampler neighbor --epochs 30 --seed 0
row cora-gas-gcn        --data "$cora" --model gcn  --sampler gas --parts 40 --parts-per-batch 10 --epochs 200 --seed 0
row cora-gas-gcnii      --data "$cora" --model gcnii --sampler gas --parts 40 --parts-per-batch 10 --epochs 100 --seed 0
row synth-small-optimized --data synth-small --model sage --hidden 64 --fanout 15,10 --batch-size 1024 \
    --epochs 3 --sampler-workers 2 --prefetch 4 --overlap-eval --seed 0
row synth-small-guarded --data synth-small --model sage --hidden 64 --fanout 15,10 --batch-size 1024 \
    --epochs 2 --mem-budget 16MiB --mem-guard split --seed 0
